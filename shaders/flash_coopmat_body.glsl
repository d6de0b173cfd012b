// FlashAttention-2 forward on matrix units, written once against the CM_*
// macros that flash_coopmat_nv.comp / flash_coopmat_emu.comp define (coopmat-khr
// is coopmat-nv's SPIR-V rewritten, docs/spirv-nv2khr.md). It only
// loads, stores and multiplies whole cooperative matrices, so it does not
// depend on how an implementation spreads their elements over invocations.
//
// Workgroup: NSG subgroups, each owning RS = BR / NSG query rows (RT = RS/MM
// row tiles). Per key tile of BC keys:
//   1. K and V (f16) go global -> registers (prefetched during the previous
//      tile) -> shared memory, rows padded by 16 bytes against bank conflicts;
//   2. S = Q.K^T in f32 accumulators (Q stays in registers as A matrices);
//   3. S is staged through shared memory; LPR lanes per row apply scale and
//      masks, update the row max lazily (only when it grows by more than
//      RESCALE_LOG2, so O is rarely rescaled), write P = exp2(S - m) in f16
//      over S;
//   4. O += P.V in f32 accumulators.
// S, P and (at the end) O share one staging area per subgroup, so K, V and the
// staging fit 48 KiB; at the end O goes through it BC columns at a time, where
// each lane divides its row by the row sum and writes it out. Q and K rows
// are DKP wide, V and O rows DVP (flash_coopmat_common.glsl: Dk and Dv with
// zero columns up to the matrix grain).
#extension GL_KHR_shader_subgroup_shuffle : require
#include "flash_coopmat_common.glsl"

layout(constant_id = 5) const uint MM = 16;   // matrix unit shape: M x K times K x N
layout(constant_id = 6) const uint MN = 16;
layout(constant_id = 7) const uint MK = 16;
layout(constant_id = 8) const uint KV_STAGES = 1; // 2: double-buffered K/V, one barrier per tile
layout(constant_id = 9) const uint S_CHAINS = 1;  // 2: S sums even/odd head-dim steps apart (more MMAs in flight)

const uint RT = RS / MM;                  // row tiles per subgroup
const uint LPR = SUBGROUP_SIZE / RS;      // lanes per row in the softmax pass
const uint CPL = BC / LPR;                // S columns per lane
const uint D8 = D / 8, DV8 = DV / 8;      // uvec4 (8 halves) of a K, V row in memory
const uint KP8 = DKP / 8, VP8 = DVP / 8;  // ... and in shared memory (zero columns included)
const uint KS = KP8 + 1;                  // padded K row, uvec4 (bank spread)
const uint VS = VP8 + 1;                  // padded V row
const uint SSW = (BC + 4) / 4;            // padded S/P/O staging row, uvec4 (4 floats or 8 halves)
const uint QC = DKP % 32 == 0 ? 32 : 16;  // Q columns staged per pass
const uint QSW = QC / 8 + 1;
const uint KTILE = BC * KS;               // uvec4 per K tile
const uint V_OFF = KTILE;                 // stage s: K at s * STAGE_WORDS, V after it
const uint STAGE_WORDS = KTILE + BC * VS;
const uint S_OFF = STAGE_WORDS * KV_STAGES;
const uint LOOP_WORDS = S_OFF + BR * SSW;
const uint Q_WORDS = BR * QSW;
const uint SH_WORDS = LOOP_WORDS > Q_WORDS ? LOOP_WORDS : Q_WORDS;
const uint LPT = (BC * KP8 + WG - 1) / WG;  // uvec4 per thread per K tile
const uint LPTV = (BC * VP8 + WG - 1) / WG; // ... per V tile
const uint KT = DKP / MK;                 // Q.K k-steps
const uint OT = DVP / MN;                 // O column tiles
const float RESCALE_LOG2 = 8.0;

layout(binding = 0) readonly buffer QB { uvec4 q_data[]; };
layout(binding = 1) readonly buffer KB { uvec4 k_data[]; };
layout(binding = 2) readonly buffer VB { uvec4 v_data[]; };
layout(binding = 3) writeonly buffer OB { uvec4 o_data[]; };
layout(binding = 4) writeonly buffer LB { float lse_data[]; };
layout(binding = 5) writeonly buffer WOB { vec4 ws_o[]; };
layout(binding = 6) writeonly buffer WMB { vec2 ws_ml[]; };

// K | V | per-subgroup staging of S (f32), then P (f16) in place, and O at the end;
// Q passes through the start of it before the loop.
shared uvec4 tile_sh[SH_WORDS];

uvec4 k_pre[LPT], v_pre[LPTV];

// Chunk x of this thread of the K (values false) or V tile of keys j0 ..:
// zero past the keys and in the zero columns.
uvec4 kv_chunk(uint j0, Work w, uint x, bool values)
{
    uint p8 = values ? VP8 : KP8, n8 = values ? DV8 : D8;
    uint e = gl_LocalInvocationID.x + x * WG;
    uint c = e / p8, d8 = e % p8;
    uint j = j0 + c;
    bool ok = e < BC * p8 && j < w.kv_hi && d8 < n8;
    uint idx = ok ? avk_kv_row(w.b, w.g, j) * n8 + d8 : 0u;
    return ok ? (values ? v_data[idx] : k_data[idx]) : uvec4(0u);
}

void prefetch(uint j0, Work w)
{
    if (KP8 == VP8 && D8 == DV8) { // K and V rows alike: one row lookup serves both
        [[unroll]] for (uint x = 0u; x < LPT; ++x) {
            uint e = gl_LocalInvocationID.x + x * WG;
            uint c = e / KP8, d8 = e % KP8;
            uint j = j0 + c;
            bool ok = e < BC * KP8 && j < w.kv_hi && d8 < D8;
            uint idx = ok ? avk_kv_row(w.b, w.g, j) * D8 + d8 : 0u;
            k_pre[x] = ok ? k_data[idx] : uvec4(0u);
            v_pre[x] = ok ? v_data[idx] : uvec4(0u);
        }
        return;
    }
    [[unroll]] for (uint x = 0u; x < LPT; ++x) k_pre[x] = kv_chunk(j0, w, x, false);
    [[unroll]] for (uint x = 0u; x < LPTV; ++x) v_pre[x] = kv_chunk(j0, w, x, true);
}

void commit_prefetch(uint base)
{
    [[unroll]] for (uint x = 0u; x < LPT; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e < BC * KP8) tile_sh[base + (e / KP8) * KS + e % KP8] = k_pre[x];
    }
    [[unroll]] for (uint x = 0u; x < LPTV; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG;
        if (e < BC * VP8) tile_sh[base + V_OFF + (e / VP8) * VS + e % VP8] = v_pre[x];
    }
}

void subgroup_sync()
{
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

float lanes_max(float x)
{
    [[unroll]] for (uint m = 1u; m < LPR; m <<= 1u) x = max(x, subgroupShuffleXor(x, m));
    return x;
}

float lanes_sum(float x)
{
    [[unroll]] for (uint m = 1u; m < LPR; m <<= 1u) x += subgroupShuffleXor(x, m);
    return x;
}

void main()
{
    Work w = flash_work(BR, BC);
    uint tid = gl_LocalInvocationID.x;
    uint sg = tid / SUBGROUP_SIZE;
    uint lane = tid % SUBGROUP_SIZE;
    uint lr = lane / LPR, part = lane % LPR;   // softmax pass: row and column slice
    uint row = w.i0 + sg * RS + lr;
    bool row_ok = row < avk_q_end();
    uint row_begin = flash_row_begin(w, row), row_end = row_ok ? avk_key_end(w.len, row) : 0u;
    int block_limit = flash_row_limit(w, w.i0); // the block's first row sees the fewest keys
    uint block_begin = flash_block_begin(w, BR); // ... and its last row's window starts last
    float s_scale = avk_score_scale();            // S stays in raw units, score features included
    uint s_base = S_OFF + sg * RS * SSW;      // this subgroup's staging rows
    uint my_row = s_base + lr * SSW;

    // Q: global -> shared (QC columns per pass, zero columns past D) -> A matrices in registers
    CM_A qm[RT * KT];
    [[unroll]] for (uint c0 = 0u; c0 < DKP; c0 += QC) {
        for (uint e = tid; e < BR * (QC / 8u); e += WG) {
            uint rr = e / (QC / 8u), d8 = e % (QC / 8u);
            uint i = w.i0 + rr;
            bool ok = i < avk_q_end() && c0 + d8 * 8u < D;
            tile_sh[rr * QSW + d8] = ok ? q_data[(w.q_base + i * pc.q_ss + c0) / 8u + d8] : uvec4(0u);
        }
        barrier();
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint k = 0u; k < QC / MK; ++k)
                CM_LOAD_ROW(qm[rt * KT + c0 / MK + k], tile_sh, (sg * RS + rt * MM) * QSW + k * MK / 8u, QSW);
        barrier();
    }

    CM_C oacc[RT * OT];
    [[unroll]] for (uint x = 0u; x < RT * OT; ++x) oacc[x] = CM_C_ZERO;
    float m_i = NEG_INF, l_i = 0.0;

    if (w.ntiles > 0u) prefetch(w.kv_lo, w);
    if (KV_STAGES > 1u && w.ntiles > 0u) {
        barrier(); // Q passes are done with the shared memory
        commit_prefetch(0u);
        if (w.ntiles > 1u) prefetch(w.kv_lo + BC, w);
    }
    for (uint tile = 0u; tile < w.ntiles; ++tile) {
        uint j0 = w.kv_lo + tile * BC;
        uint kv = (tile % KV_STAGES) * STAGE_WORDS; // this tile's K; V at kv + V_OFF
        if (KV_STAGES > 1u) {
            barrier(); // tile's K/V are in place; everyone is done with the other stage
            if (tile + 1u < w.ntiles) commit_prefetch(((tile + 1u) % KV_STAGES) * STAGE_WORDS);
            if (tile + 2u < w.ntiles) prefetch(j0 + 2u * BC, w);
        } else {
            barrier(); // Q reads / previous tile's K, V reads are done
            commit_prefetch(0u);
            if (tile + 1u < w.ntiles) prefetch(j0 + BC, w); // in flight across the barrier
            barrier();
        }

        // S = Q.K^T, one BC-wide strip per row tile, staged to shared memory
        [[unroll]] for (uint n = 0u; n < BC / MN; ++n) {
            CM_C sacc[RT * S_CHAINS];
            [[unroll]] for (uint x = 0u; x < RT * S_CHAINS; ++x) sacc[x] = CM_C_ZERO;
            [[unroll]] for (uint k = 0u; k < KT; ++k) {
                CM_B kb;
                CM_LOAD_COL(kb, tile_sh, kv + n * MN * KS + k * MK / 8u, KS);
                uint chain = (k % S_CHAINS) * RT;
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    sacc[chain + rt] = CM_MAD(qm[rt * KT + k], kb, sacc[chain + rt]);
            }
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt) {
                if (S_CHAINS > 1u) sacc[rt] = CM_ADD(sacc[rt], sacc[RT + rt]);
                CM_STORE_ROW(sacc[rt], tile_sh, s_base + rt * MM * SSW + n * MN / 4u, SSW);
            }
        }
        subgroup_sync();

        // online softmax: this lane owns row lr, columns [part*CPL, +CPL); raw
        // scores, the scale folded into exp2's argument; masks on edge tiles only
        float sv[CPL];
        [[unroll]] for (uint c = 0u; c < CPL; c += 4u) {
            vec4 s4 = uintBitsToFloat(tile_sh[my_row + (part * CPL + c) / 4u]);
            sv[c] = s4.x;
            sv[c + 1u] = s4.y;
            sv[c + 2u] = s4.z;
            sv[c + 3u] = s4.w;
        }
        bool edge = j0 + BC > w.kv_hi || int(j0 + BC - 1u) > block_limit || j0 < block_begin;
        if (AVK_SCORES == 0u) {
            if (edge) {
                [[unroll]] for (uint c = 0u; c < CPL; ++c)
                    sv[c] = flash_score_elem(sv[c], w, j0 + part * CPL + c, row_begin, row_end);
            }
        } else {
            // score features in raw units, each one uniform branch and a straight run over
            // the lane's CPL keys; the row's inputs are cheap expressions, not held registers
            uint jl = j0 + part * CPL; // this lane's first key
            if (avk_softcap() > 0.0) {
                float cap_in = avk_softcap_raw_in();
                [[unroll]] for (uint c = 0u; c < CPL; ++c) sv[c] = avk_softcap_tanh(sv[c] * cap_in);
            }
            if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) {
                float slope = alibi_slopes[w.h] * avk_raw_unit();
                float rel = float(int(jl) - avk_row_pos(w.len, row)); // j - i' of the first key
                [[unroll]] for (uint c = 0u; c < CPL; ++c) sv[c] = fma(slope, rel + float(c), sv[c]);
            }
            if ((avk_flags() & AVK_FLAG_MASK) != 0u) {
                float unit = avk_raw_unit();
                uint m0 = avk_mask_row(w.b, w.h, min(row, avk_q_end() - 1u)); // padding rows read a real row
                if (CPL % 2u == 0u && j0 + BC <= w.kv_hi && avk_mask_pairs(j0)) { // jl - j0 even
                    [[unroll]] for (uint c = 0u; c < CPL; c += 2u) {
                        vec2 mv = avk_mask_pair(m0 + jl + c);
                        sv[c] = fma(mv.x, unit, sv[c]);
                        sv[c + 1u] = fma(mv.y, unit, sv[c + 1u]);
                    }
                } else if ((avk_flags() & AVK_FLAG_MASK_F16) != 0u) { // keys past the end read the last one
                    [[unroll]] for (uint c = 0u; c < CPL; ++c) sv[c] = fma(avk_mask_f16(m0 + min(jl + c, w.kv_hi - 1u)), unit, sv[c]);
                } else {
                    [[unroll]] for (uint c = 0u; c < CPL; ++c) sv[c] = fma(avk_mask_f32(m0 + min(jl + c, w.kv_hi - 1u)), unit, sv[c]);
                }
            }
            if (edge) { // keys the row does not see: -inf, as a select
                uint end = min(row_end, w.kv_hi);
                [[unroll]] for (uint c = 0u; c < CPL; ++c) sv[c] = jl + c < row_begin || jl + c >= end ? NEG_INF : sv[c];
            }
        }
        float tmax = sv[0];
        [[unroll]] for (uint c = 1u; c < CPL; ++c) tmax = max(tmax, sv[c]);
        tmax = lanes_max(tmax) * s_scale;
        float m_new = tmax > m_i + RESCALE_LOG2 ? tmax : m_i;
        float alpha = m_new == m_i ? 1.0 : exp2(m_i - m_new);
        bool rescale = alpha != 1.0 && l_i > 0.0;
        float m_sub = m_new == NEG_INF ? 0.0 : m_new; // all masked so far: every p is 0
        subgroup_sync(); // S is in registers now: the staging rows are free

        if (subgroupAny(rescale)) {
            // rare (the max grew past the threshold): rescale O rows through the staging rows
            [[unroll]] for (uint n0 = 0u; n0 < OT; n0 += BC / MN) {
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    [[unroll]] for (uint n = 0u; n < BC / MN; ++n)
                        if (n0 + n < OT)
                            CM_STORE_ROW(oacc[rt * OT + n0 + n], tile_sh, s_base + rt * MM * SSW + n * MN / 4u, SSW);
                subgroup_sync();
                [[unroll]] for (uint c = 0u; c < CPL; c += 4u) {
                    uint idx = my_row + (part * CPL + c) / 4u;
                    tile_sh[idx] = floatBitsToUint(uintBitsToFloat(tile_sh[idx]) * alpha);
                }
                subgroup_sync();
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    [[unroll]] for (uint n = 0u; n < BC / MN; ++n)
                        if (n0 + n < OT)
                            CM_LOAD_ROW(oacc[rt * OT + n0 + n], tile_sh, s_base + rt * MM * SSW + n * MN / 4u, SSW);
                subgroup_sync();
            }
        }

        // P = exp2(S - m) in f16, written over this subgroup's staging rows
        float psum = 0.0;
        [[unroll]] for (uint c = 0u; c < CPL; c += 8u) {
            float p[8];
            [[unroll]] for (uint x = 0u; x < 8u; ++x) {
                p[x] = exp2(fma(sv[c + x], s_scale, -m_sub));
                psum += p[x];
            }
            tile_sh[my_row + (part * CPL + c) / 8u] =
                uvec4(packHalf2x16(vec2(p[0], p[1])), packHalf2x16(vec2(p[2], p[3])),
                      packHalf2x16(vec2(p[4], p[5])), packHalf2x16(vec2(p[6], p[7])));
        }
        l_i = l_i * alpha + lanes_sum(psum);
        m_i = m_new;
        subgroup_sync();

        // O += P.V
        [[unroll]] for (uint kc = 0u; kc < BC / MK; ++kc) {
            CM_A pm[RT];
            [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                CM_LOAD_ROW(pm[rt], tile_sh, s_base + rt * MM * SSW + kc * MK / 8u, SSW);
            [[unroll]] for (uint n = 0u; n < OT; ++n) {
                CM_B vb;
                CM_LOAD_ROW(vb, tile_sh, kv + V_OFF + kc * MK * VS + n * MN / 8u, VS);
                [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
                    oacc[rt * OT + n] = CM_MAD(pm[rt], vb, oacc[rt * OT + n]);
            }
        }
    }

    // epilogue: O / l through shared memory, BC columns at a time
    bool split = (pc.flags & AVK_FLAG_SPLIT) != 0u;
    float keep = 1.0;
    if (!split && (avk_flags() & AVK_FLAG_SINKS) != 0u) {
        // the sink joins the denominator (split partials leave it to the merge)
        float sink = avk_sink_log2(w.h), mx = max(m_i, sink);
        keep = m_i == NEG_INF ? 0.0 : exp2(m_i - mx);
        l_i = l_i * keep + exp2(sink - mx);
        m_i = mx;
    }
    float inv_l = l_i > 0.0 ? keep / l_i : 0.0;
    uint wrow = split ? flash_ws_row(w.split, w.b, w.h, row) : 0u;
    uint o_row = avk_o_from_q(w.q_base + row * pc.q_ss, D, DV); // O's row: Dv values
    [[unroll]] for (uint n0 = 0u; n0 < OT; n0 += BC / MN) {
        subgroup_sync();
        [[unroll]] for (uint rt = 0u; rt < RT; ++rt)
            [[unroll]] for (uint n = 0u; n < BC / MN; ++n)
                if (n0 + n < OT)
                    CM_STORE_ROW(oacc[rt * OT + n0 + n], tile_sh, s_base + rt * MM * SSW + n * MN / 4u, SSW);
        subgroup_sync();
        [[unroll]] for (uint c = 0u; c < CPL; c += 8u) {
            uint col = n0 * MN + part * CPL + c;
            if (!row_ok || col >= DV) continue; // zero columns are not O's
            uint idx = my_row + (part * CPL + c) / 4u;
            vec4 lo = uintBitsToFloat(tile_sh[idx]) * inv_l, hi = uintBitsToFloat(tile_sh[idx + 1u]) * inv_l;
            float o[8] = float[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
            if (split) {
                ws_o[wrow * (DV / 4u) + col / 4u] = vec4(o[0], o[1], o[2], o[3]);
                ws_o[wrow * (DV / 4u) + col / 4u + 1u] = vec4(o[4], o[5], o[6], o[7]);
            } else {
                o_data[(o_row + col) / 8u] =
                    uvec4(packHalf2x16(vec2(o[0], o[1])), packHalf2x16(vec2(o[2], o[3])),
                          packHalf2x16(vec2(o[4], o[5])), packHalf2x16(vec2(o[6], o[7])));
            }
        }
    }
    if (!row_ok || part != 0u) return;
    if (split) ws_ml[wrow] = vec2(m_i, l_i);
    else if ((pc.flags & AVK_FLAG_WRITE_LSE) != 0u)
        lse_data[flash_lse_index(w.b, w.h, row)] = l_i > 0.0 ? (m_i + log2(l_i)) * LN2 : NEG_INF;
}
