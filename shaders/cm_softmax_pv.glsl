// One key tile's online softmax and P.V for the register-softmax bodies
// (flash_coopmat_rs_body.glsl, flash_decode_mma_body.glsl), included inside
// their key loops once S = Q.K^T is in sacc and the masks are applied. Uses
// the including body's sacc, oacc, m_i, l_i, lane, tile_sh and constants (RT,
// NT, OT: O's column tiles, MS, VS: V's row stride in uvec4, NSTAT,
// RESCALE_LOG2), v_tile, the uvec4 offset of the tile's V rows in tile_sh,
// and s_scale, what S is multiplied by (avk_score_scale(): S stays in raw
// units, score features included: scale log2(e), or c log2(e) on the
// softcap's tanh), and PV_TILE_TERM (optional) a number every score of the
// tile carries beside S (log2 units; undefined at the end). Never compiled alone.
{
    // row max per slot, lazily moved
    float alpha[NSTAT], m_sub[NSTAT];
    bool rescale = false;
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) alpha[x] = NEG_INF; // tile max until reduced
    [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
        [[unroll]] for (uint n = 0u; n < NT; ++n)
            CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                uint x = rt * CM_SLOTS + CM_SLOT(e);
                alpha[x] = max(alpha[x], CM_AT(sacc[rt * NT + n], e));
            }
#ifdef PV_TILE_TERM
    float tile_term = PV_TILE_TERM; // the body's one number a tile, added to every score (log2 units)
#define PV_SCALED_MAX(x) fma(x, s_scale, tile_term)
#else
    const float tile_term = 0.0;
#define PV_SCALED_MAX(x) ((x) * s_scale)
#endif
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) {
        float tmax = PV_SCALED_MAX(CM_ROW_MAX(alpha[x]));
        float m_new = tmax > m_i[x] + RESCALE_LOG2 ? tmax : m_i[x];
        alpha[x] = m_new == m_i[x] ? 1.0 : exp2(m_i[x] - m_new);
        rescale = rescale || (alpha[x] != 1.0 && m_i[x] != NEG_INF); // O is still 0 while m is -inf
        m_sub[x] = (m_new == NEG_INF ? 0.0 : m_new) - tile_term; // all masked so far: every p is 0
        m_i[x] = m_new;
    }
    if (subgroupAny(rescale)) {
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint n = 0u; n < OT; ++n)
                CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e)
                    CM_AT(oacc[rt * OT + n], e) *= alpha[rt * CM_SLOTS + CM_SLOT(e)];
    }

    // P = exp2(S * s_scale - m), in place; this lane's part of the row sums
    float psum[NSTAT];
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) psum[x] = 0.0;
    [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
        [[unroll]] for (uint n = 0u; n < NT; ++n)
            CM_ELEM_LOOP for (uint e = 0u; e < CM_LEN; ++e) {
                uint x = rt * CM_SLOTS + CM_SLOT(e);
                float p = exp2(fma(CM_AT(sacc[rt * NT + n], e), s_scale, -m_sub[x]));
                CM_AT(sacc[rt * NT + n], e) = p;
                psum[x] += p;
            }
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) l_i[x] = l_i[x] * alpha[x] + psum[x];

    // O += P.V, P as f16 A matrices straight from the accumulators
    [[unroll]] for (uint kc = 0u; kc < NT; ++kc) {
        CM_A pa[RT];
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt) pa[rt] = CM_A_FROM_C(sacc[rt * NT + kc]);
        [[unroll]] for (uint n = 0u; n < OT; ++n) {
            CM_B vb;
#ifdef PV_B_OPERAND
            vb = PV_B_OPERAND(kc, n); // the body's own V operand (flash_decode_mma_body.glsl's direct K/V)
#else
            CM_LOAD_ROW(vb, tile_sh, v_tile + kc * MS * VS + n * MS / 8u, VS);
#endif
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt) oacc[rt * OT + n] = CM_MAD(pa[rt], vb, oacc[rt * OT + n]);
        }
    }
}
#undef PV_TILE_TERM
#undef PV_SCALED_MAX
