// The score features of one key tile for the register-softmax bodies
// (flash_coopmat_rs_body.glsl, flash_decode_mma_body.glsl) in pipelines built
// with AVK_SCORES: included inside their key loops once S = Q.K^T is in sacc.
// S stays in raw units (q.k): the softcap leaves tanh(scale q.k / c), and ALiBi
// and the mask are added in the units of the softmax's one fused multiply-add
// by s_scale = avk_score_scale() (flash_common.glsl: avk_raw_unit,
// avk_softcap_raw_in, avk_softcap_tanh): scale log2(e), or c log2(e). Each feature is one uniform branch
// per tile and, inside it, a straight (unrolled) run over the lane's elements;
// the rows' inputs are cheap expressions of the including body (no loads, no
// divisions in the loop), and visibility (-inf) is a select on edge tiles only.
//
// Elements are slot-major: element e of a lane's part of a C matrix is in slot
// e / EPS, column CM_COL(lane, e % EPS) (EPS = CM_LEN / CM_SLOTS), and
// CM_COL(lane, c) is even for even c (so f16 mask pairs share a word).
//
// ALiBi: slope * (j - i') = slope * (j - p0) - slope * (i' - p0). The first
// term depends on the key only (one value per column, shared by the rows, then
// one fused multiply-add per element); the second is a row's constant, which
// the softmax ignores: the body takes it out of its row max at the end
// (m -= slope * log2(e) * (i' - p0)), before sinks, LSE and split partials.
//
// Uses the including body's sacc, lane, RT, NT, MS and:
//   SCORE_J0          the tile's first key (column 0 of sacc)
//   SCORE_KV_HI       the keys' end (w.kv_hi): mask reads are clamped below it
//   SCORE_EDGE        uniform: the tile crosses some row's bounds
//   SCORE_P0          int: the i' ALiBi's key term is taken from
//   SCORE_SLOPE(x)    ALiBi slope of row slot x (rt * CM_SLOTS + s) in raw units
//   SCORE_MASK_ROW(x) the mask's element offset of row slot x (a real row's for padding)
//   SCORE_BOUNDS(x)   uvec2: keys [begin, end) row slot x sees, end <= SCORE_KV_HI
//                     (0 for padding rows); evaluated on edge tiles only
//   SCORE_Q_SCALED    (optional, default false) the body's Q already carries the
//                     softcap's input scale (avk_softcap_raw_in)
//   SCORE_ALIBI_IN_S  (optional, default false) S's products hold ALiBi's key term already
//   SCORE_MASK_TILE(x, col), SCORE_MASK_TILED (optional): where the body staged the tile's f16
//                     mask (SCORE_MASK_TILED, uniform), vec2 of row slot x's columns col, col + 1
// It undefines those at its end (SCORE_ROW, if the body has one, stays).
// Never compiled alone.
#ifndef SCORE_Q_SCALED
#define SCORE_Q_SCALED false
#endif
{
    const uint EPS = CM_LEN / CM_SLOTS;
    if (avk_softcap() > 0.0) {
        float cap_in = SCORE_Q_SCALED ? 1.0 : avk_softcap_raw_in();
#ifdef CM_F16_MATH
        if (AVK_SOFTCAP_FORM == 2u) { // tanh of f16 pairs (flash_common.glsl: half the special-function work)
            [[unroll]] for (uint x = 0u; x < RT * NT; ++x)
                CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; e += 2u) {
                    vec2 y = vec2(CM_AT(sacc[x], e), CM_AT(sacc[x], e + 1u));
                    // Q scaled: nothing to multiply, and the clamp on the f16 pair (two ops, not four)
                    vec2 t = SCORE_Q_SCALED ? vec2(tanh(clamp(f16vec2(y), float16_t(-15.0), float16_t(15.0))))
                                            : vec2(tanh(f16vec2(clamp(y * cap_in, -15.0, 15.0))));
                    CM_AT(sacc[x], e) = t.x;
                    CM_AT(sacc[x], e + 1u) = t.y;
                }
        } else
#endif
        [[unroll]] for (uint x = 0u; x < RT * NT; ++x)
            CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e)
                CM_AT(sacc[x], e) = avk_softcap_tanh(CM_AT(sacc[x], e) * cap_in);
    }
#ifndef SCORE_ALIBI_IN_S
#define SCORE_ALIBI_IN_S false
#endif
    if ((avk_flags() & AVK_FLAG_ALIBI) != 0u && !SCORE_ALIBI_IN_S) { // SCORE_ALIBI_IN_S: the body's products added it
        int p0 = SCORE_P0;
        [[unroll]] for (uint n = 0u; n < NT; ++n)
            CM_ELEM_LOOP for (uint c = 0u; c < EPS; ++c) {
                float dj = float(int(SCORE_J0 + n * MS + CM_COL(lane, c)) - p0); // the column's j - p0
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    CM_ELEM_LOOP for (uint s = 0u; s < CM_SLOTS; ++s) {
                        uint e = s * EPS + c;
                        CM_AT(sacc[rt * NT + n], e) = fma(SCORE_SLOPE(rt * CM_SLOTS + s), dj, CM_AT(sacc[rt * NT + n], e));
                    }
            }
    }
    if ((avk_flags() & AVK_FLAG_MASK) != 0u) {
        float unit = avk_raw_unit();
#ifdef SCORE_MASK_TILE
        if (SCORE_MASK_TILED) { // the body's staged tile: pairs, keys past the row zeros (dropped)
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                CM_ELEM_LOOP for (uint s = 0u; s < CM_SLOTS; ++s)
                    [[unroll]] for (uint n = 0u; n < NT; ++n)
                        CM_ELEM_LOOP for (uint c = 0u; c < EPS; c += 2u) {
                            vec2 mv = SCORE_MASK_TILE(rt * CM_SLOTS + s, n * MS + CM_COL(lane, c));
                            uint e = s * EPS + c;
                            CM_AT(sacc[rt * NT + n], e) = fma(mv.x, unit, CM_AT(sacc[rt * NT + n], e));
                            CM_AT(sacc[rt * NT + n], e + 1u) = fma(mv.y, unit, CM_AT(sacc[rt * NT + n], e + 1u));
                        }
        } else
#endif
        if (SCORE_J0 + NT * MS <= SCORE_KV_HI && avk_mask_pairs(SCORE_J0)) {
            // f16 pairs, all inside the rows: one word per two elements
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                CM_ELEM_LOOP for (uint s = 0u; s < CM_SLOTS; ++s) {
                    uint m0 = SCORE_MASK_ROW(rt * CM_SLOTS + s) + SCORE_J0;
                    [[unroll]] for (uint n = 0u; n < NT; ++n)
                        CM_ELEM_LOOP for (uint c = 0u; c < EPS; c += 2u) {
                            vec2 mv = avk_mask_pair(m0 + n * MS + CM_COL(lane, c));
                            uint e = s * EPS + c;
                            CM_AT(sacc[rt * NT + n], e) = fma(mv.x, unit, CM_AT(sacc[rt * NT + n], e));
                            CM_AT(sacc[rt * NT + n], e + 1u) = fma(mv.y, unit, CM_AT(sacc[rt * NT + n], e + 1u));
                        }
                }
        } else {
            // keys past the end are read at the last one (their scores become -inf on this edge tile)
            uint last = SCORE_KV_HI - 1u;
            bool f16 = (avk_flags() & AVK_FLAG_MASK_F16) != 0u;
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                CM_ELEM_LOOP for (uint s = 0u; s < CM_SLOTS; ++s) {
                    uint m0 = SCORE_MASK_ROW(rt * CM_SLOTS + s);
                    if (f16) {
                        [[unroll]] for (uint n = 0u; n < NT; ++n)
                            CM_ELEM_LOOP for (uint c = 0u; c < EPS; ++c) {
                                uint e = s * EPS + c, j = min(SCORE_J0 + n * MS + CM_COL(lane, c), last);
                                CM_AT(sacc[rt * NT + n], e) = fma(avk_mask_f16(m0 + j), unit, CM_AT(sacc[rt * NT + n], e));
                            }
                    } else {
                        [[unroll]] for (uint n = 0u; n < NT; ++n)
                            CM_ELEM_LOOP for (uint c = 0u; c < EPS; ++c) {
                                uint e = s * EPS + c, j = min(SCORE_J0 + n * MS + CM_COL(lane, c), last);
                                CM_AT(sacc[rt * NT + n], e) = fma(avk_mask_f32(m0 + j), unit, CM_AT(sacc[rt * NT + n], e));
                            }
                    }
                }
        }
    }
    if (SCORE_EDGE) { // keys a row does not see: -inf, as a select
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            CM_ELEM_LOOP for (uint s = 0u; s < CM_SLOTS; ++s) {
                uvec2 be = SCORE_BOUNDS(rt * CM_SLOTS + s);
                [[unroll]] for (uint n = 0u; n < NT; ++n)
                    CM_ELEM_LOOP for (uint c = 0u; c < EPS; ++c) {
                        uint e = s * EPS + c, j = SCORE_J0 + n * MS + CM_COL(lane, c);
                        CM_AT(sacc[rt * NT + n], e) = j < be.x || j >= be.y ? NEG_INF : CM_AT(sacc[rt * NT + n], e);
                    }
            }
    }
}
#undef SCORE_J0
#undef SCORE_KV_HI
#undef SCORE_EDGE
#undef SCORE_P0
#undef SCORE_SLOPE
#undef SCORE_MASK_ROW
#undef SCORE_BOUNDS
#undef SCORE_Q_SCALED
#undef SCORE_MASK_TILE
#undef SCORE_ALIBI_IN_S
#undef SCORE_MASK_TILED
