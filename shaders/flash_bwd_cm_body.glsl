// The backward's dK/dV (BWD_DKDV) and dQ passes on matrix units, written once
// against the CM_* macros that flash_bwd_cm_nv.comp / flash_bwd_cm_emu.comp
// define (coopmat-khr's build is the NV SPIR-V rewritten). Only whole
// matrices are loaded, stored and multiplied, so any element layout works.
//
// Both passes have one shape. A workgroup keeps KEEP = NSG * MS rows (dK/dV:
// keys of one kv head, K and V; dQ: query rows of one head, Q and dO) as A
// matrices in registers, one MS-row strip per subgroup, and streams tiles of
// STREAM rows of the other side (Q and dO over the group's query heads; K and
// V) through shared memory. Per tile each subgroup
//   1. multiplies its strip by the tile: X1 = kept X . stream X^T (S, or S^T
//      for dK/dV) and X2 = kept Y . stream Y^T (dP or dP^T), staged in f32;
//   2. turns them into P and dS element by element (bwd_p_ds: the contract's
//      masks and score mods), written back in f16 over the staging;
//   3. accumulates dX += dS . stream X (dK += dS^T Q, dQ += dS K) and, for
//      dK/dV, dV += P^T . dO, in f32 accumulators.
// REG_SCORES (a specialization constant) skips the staging: P and dS are
// computed in the accumulators, each lane on the elements it holds, and
// converted in place to f16 A operands (as flash_coopmat_rs_body.glsl's P), so
// steps 1-3 run per MS columns with no shared-memory round trip or sync.
// Every subgroup owns what it writes (no atomics): runs are bit-identical.
// BWD_DQ_ATOMIC (a dK/dV build, not deterministic) adds dQ there too, so no dQ
// pass recomputes S and dP: per tile, once every strip's dS is staged, the
// subgroups split dQ's tile += dS . kept K (K kept whole in shared memory) and
// add it by f32 atomics to a zeroed workspace in Q's element order, which
// flash_bwd_dq_cast.comp then turns into f16.
// Head dims are multiples of MS (runtime/vulkan/vk_backward.c picks this body
// only then, and only for f16).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require

#include "flash_bwd_common.glsl"

#ifdef BWD_DQ_ATOMIC
#extension GL_EXT_shader_atomic_float : require
// binding 9 (the forward's K/V scales) is free in the backward, which reads a plain K/V
layout(binding = 9) buffer DqAccB { float dq_acc[]; };
#endif

#ifndef BWD_CM_UNROLL
#define BWD_CM_UNROLL [[unroll]] // loops over matrices (the emulation keeps them rolled)
#endif

layout(constant_id = 0) const uint NSG = 4;          // subgroups per workgroup, MS kept rows each
layout(constant_id = 1) const uint STREAM = 16;      // rows of each streamed tile
layout(constant_id = 4) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 5) const uint MS = 16;          // matrix shape: MS x MS times MS x MS
layout(constant_id = 6) const uint STAGES = 1;       // 2: streamed tiles double-buffered, one barrier a tile
// 1 (BWD_DQ_ATOMIC only, where K stays in shared memory for dQ): step 1 reads K's A matrices
// from there per tile instead of holding them in registers, 8 a subgroup at D=128, which leaves
// room for dQ's product beside the dK and dV accumulators
layout(constant_id = 7) const uint KEPT_X_SHARED = 0;
// 1: S and dP stay in their accumulators, P and dS are computed there (element positions from
// the CM_SLOT_ROW / CM_COL layout macros: the host sets this only where its probe saw that layout)
// and converted in place to the A operands of dX and dV; nothing goes through the staging
layout(constant_id = 8) const uint REG_SCORES = 0;
// MS-row strips a subgroup keeps (more than one with REG_SCORES only): each streamed matrix a
// subgroup loads from shared memory serves all of its strips
layout(constant_id = 9) const uint STRIPS = 1;

const uint KEEP = NSG * MS * STRIPS;
const uint D8 = D / 8u, DV8 = DV / 8u;               // uvec4 (8 halves) of an X, Y row
const uint XS = D8 + 1u, YS = DV8 + 1u;              // padded rows in shared memory (bank spread)
const uint XT = D / MS, YT = DV / MS, ST = STREAM / MS;
const uint LPR = SUBGROUP_SIZE / MS;                 // lanes per staged row
const uint CPL = STREAM / LPR;                       // staged columns per lane (a multiple of 8)
const uint SSW = (STREAM + 4u) / 4u;                 // padded staging row, uvec4 (4 floats or 8 halves)
const uint Y_OFF = STREAM * XS;                      // (stream X | stream Y) x STAGES | S-P staging | dP-dS staging
const uint STAGE_WORDS = Y_OFF + STREAM * YS;
const uint S_OFF = STAGE_WORDS * STAGES;
const uint DP_OFF = S_OFF + KEEP * SSW;
const uint LOOP_WORDS = DP_OFF + KEEP * SSW;
const uint KEPT_WORDS = KEEP * (XS > YS ? XS : YS);  // the kept rows pass through before the loop
#ifdef BWD_DQ_ATOMIC
const uint KX_OFF = LOOP_WORDS > KEPT_WORDS ? LOOP_WORDS : KEPT_WORDS; // the kept K rows, B operands of dQ
const uint SH_WORDS = KX_OFF + KEEP * XS;
#else
const uint SH_WORDS = LOOP_WORDS > KEPT_WORDS ? LOOP_WORDS : KEPT_WORDS;
#endif

layout(binding = 0) readonly buffer QB { uvec4 q_data[]; };
layout(binding = 1) readonly buffer KB { uvec4 k_data[]; };
layout(binding = 2) readonly buffer VB { uvec4 v_data[]; };
layout(binding = 3) readonly buffer DOB { uvec4 do_data[]; };
layout(binding = 4) readonly buffer StatB { vec2 stats[]; }; // (LSE log2, D_i) per row: flash_bwd_pre.comp
layout(binding = 5) writeonly buffer DXB { uvec4 dx_data[]; }; // dK or dQ
layout(binding = 6) writeonly buffer DVB { uvec4 dv_data[]; };

shared uvec4 tile_sh[SH_WORDS];
shared vec2 stat_sh[STREAM * STAGES]; // dK/dV: the streamed query rows' (LSE log2, D_i), a set per stage

// Chunk d8 of query row i of (b, h): Q (values false) or dO; zero past Nq.
uvec4 query_chunk(uint b, uint h, uint i, uint d8, bool values)
{
    if (i >= pc.seq_q) return uvec4(0u);
    uint q = avk_q_offset(b, uvec2(h, i));
    return values ? do_data[avk_o_from_q(q, D, DV) / 8u + d8] : q_data[q / 8u + d8];
}

// Chunk d8 of key j of (b, kv head g): K (values false) or V; zero past the
// sequence's keys, whose rows may hold anything (dS . K would carry a NaN).
uvec4 key_chunk(uint b, uint g, uint len, uint j, uint d8, bool values)
{
    if (j >= len) return uvec4(0u);
    return values ? v_data[avk_kv_row(b, g, j) * DV8 + d8] : k_data[avk_kv_row(b, g, j) * D8 + d8];
}

#ifdef BWD_DKDV
#define KEPT_CHUNK(r, d8, values) key_chunk(b, g, len, k0 + (r), d8, values)
#define STREAM_CHUNK(r, d8, values) query_chunk(b, hq, r0 + (r), d8, values)
#else
#define KEPT_CHUNK(r, d8, values) query_chunk(b, h, i0 + (r), d8, values)
#define STREAM_CHUNK(r, d8, values) key_chunk(b, g, len, r0 + (r), d8, values)
#endif

// A streamed tile goes global -> registers (issued before the previous tile's
// matrix work) -> shared memory: PF chunks per thread, X rows first.
const uint XC = STREAM * D8, YC = STREAM * DV8;
const uint PF = (XC + YC + WG - 1u) / WG;
const uint PS = (STREAM + WG - 1u) / WG; // dK/dV: the rows' statistics
uvec4 pre[PF];
vec2 pre_stat[PS];

// the tile of rows r0 .. of query head hq (dK/dV) or of keys r0 .. (dQ)
void fetch(uint b, uint g, uint len, uint hq, uint r0)
{
    BWD_CM_UNROLL for (uint x = 0u; x < PF; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG, ey = e - XC;
        pre[x] = e < XC ? STREAM_CHUNK(e / D8, e % D8, false) : e < XC + YC ? STREAM_CHUNK(ey / DV8, ey % DV8, true) : uvec4(0u);
    }
#ifdef BWD_DKDV
    BWD_CM_UNROLL for (uint x = 0u; x < PS; ++x) {
        uint r = gl_LocalInvocationID.x + x * WG;
        pre_stat[x] = r < STREAM && r0 + r < pc.seq_q ? stats[bwd_row(b, hq, r0 + r)] : vec2(POS_INF, 0.0);
    }
#endif
}

// into stage `stage` (its X rows from stage * STAGE_WORDS)
void commit_fetch(uint stage)
{
    uint base = stage * STAGE_WORDS;
    BWD_CM_UNROLL for (uint x = 0u; x < PF; ++x) {
        uint e = gl_LocalInvocationID.x + x * WG, ey = e - XC;
        if (e < XC) tile_sh[base + (e / D8) * XS + e % D8] = pre[x];
        else if (e < XC + YC) tile_sh[base + Y_OFF + (ey / DV8) * YS + ey % DV8] = pre[x];
    }
#ifdef BWD_DKDV
    BWD_CM_UNROLL for (uint x = 0u; x < PS; ++x) {
        uint r = gl_LocalInvocationID.x + x * WG;
        if (r < STREAM) stat_sh[stage * STREAM + r] = pre_stat[x];
    }
#endif
}

void subgroup_sync()
{
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

uvec4 pack8(float v[CPL], uint c)
{
    return uvec4(packHalf2x16(vec2(v[c], v[c + 1u])), packHalf2x16(vec2(v[c + 2u], v[c + 3u])),
                 packHalf2x16(vec2(v[c + 4u], v[c + 5u])), packHalf2x16(vec2(v[c + 6u], v[c + 7u])));
}

// This lane's CPL columns of its staged row (columns from col0 of the
// strip), scaled, as f16 into row `at` (uvec4 index of the row's first
// column) of an output with `width` columns; columns past width are padding.
void write_staged(uint staged, uint col0, uint width, float scale, bool row_ok, uint at, bool to_dv)
{
    [[unroll]] for (uint c = 0u; c < CPL; c += 8u) {
        uint col = col0 + c;
        if (!row_ok || col >= width) continue;
        vec4 lo = uintBitsToFloat(tile_sh[staged + c / 4u]) * scale;
        vec4 hi = uintBitsToFloat(tile_sh[staged + c / 4u + 1u]) * scale;
        uvec4 v = uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
        if (to_dv) dv_data[at + col / 8u] = v;
        else dx_data[at + col / 8u] = v;
    }
}

#ifdef BWD_DQ_ATOMIC
// dQ's rows r0 .. r0 + STREAM of head hq += scale * dS . K over the block's keys: its
// ST x XT matrices split over the subgroups, each an MS-key step at a time (dS^T staged
// key-major: loaded column-major as dS), then through the subgroup's own staging (its P is
// used) into dq_acc by atomics, a row's MS columns by consecutive lanes
void dq_add(uint b, uint hq, uint r0, uint sg, uint lane, uint strip, float scale)
{
    for (uint o = sg; o < ST * XT; o += NSG) {
        uint m = o / XT, n = o % XT;
        CM_C acc = CM_C_ZERO;
        BWD_CM_UNROLL for (uint kc = 0u; kc < KEEP / MS; ++kc) {
            CM_A dsa;
            CM_B kb;
            CM_LOAD_COL(dsa, tile_sh, DP_OFF + kc * MS * SSW + m * MS / 8u, SSW);
            CM_LOAD_ROW(kb, tile_sh, KX_OFF + kc * MS * XS + n * MS / 8u, XS);
            acc = CM_MAD(dsa, kb, acc);
        }
        CM_STORE_ROW(acc, tile_sh, S_OFF + strip * SSW, SSW);
        subgroup_sync();
        for (uint e = lane; e < MS * MS; e += SUBGROUP_SIZE) {
            uint r = e / MS, c = e % MS, i = r0 + m * MS + r;
            float x = uintBitsToFloat(tile_sh[S_OFF + (strip + r) * SSW + c / 4u][c % 4u]);
            if (i < pc.seq_q) atomicAdd(dq_acc[avk_q_offset(b, uvec2(hq, i)) + n * MS + c], scale * x);
        }
        subgroup_sync(); // the staging is read before the next matrix goes over it
    }
}
#endif

void main()
{
    uint tid = gl_LocalInvocationID.x;
    uint sg = tid / SUBGROUP_SIZE, lane = tid % SUBGROUP_SIZE;
    uint lr = lane / LPR, part = lane % LPR; // the staged row and column slice this lane turns into P and dS
    uint strip = sg * MS * STRIPS;           // this subgroup's first kept row, from the block's first
#ifdef BWD_DKDV
    uint k0 = gl_WorkGroupID.x * KEEP, g = gl_WorkGroupID.y, b = gl_WorkGroupID.z, h = g * pc.group, i0 = 0u;
#else
    uint i0 = gl_WorkGroupID.x * KEEP, h = gl_WorkGroupID.y, b = gl_WorkGroupID.z, g = h / pc.group, k0 = 0u;
#endif
    uint len = avk_seq_len(b);
    float s_pre = avk_score_pre(), scale = pc.scale_log2 * LN2;

    // the kept rows: global -> shared -> A matrices in registers, X then Y
    CM_A xm[XT * STRIPS], ym[YT * STRIPS]; // strip s's k-th at s * XT + k
#ifdef BWD_DQ_ATOMIC
    const uint kx = KX_OFF; // K stays there for dQ
#else
    const uint kx = 0u;
#endif
    for (uint e = tid; e < KEEP * D8; e += WG) tile_sh[kx + (e / D8) * XS + e % D8] = KEPT_CHUNK(e / D8, e % D8, false);
    barrier();
    if (KEPT_X_SHARED == 0u)
        BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) BWD_CM_UNROLL for (uint k = 0u; k < XT; ++k)
            CM_LOAD_ROW(xm[s * XT + k], tile_sh, kx + (strip + s * MS) * XS + k * MS / 8u, XS);
    barrier();
    for (uint e = tid; e < KEEP * DV8; e += WG) tile_sh[(e / DV8) * YS + e % DV8] = KEPT_CHUNK(e / DV8, e % DV8, true);
    barrier();
    BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) BWD_CM_UNROLL for (uint k = 0u; k < YT; ++k)
        CM_LOAD_ROW(ym[s * YT + k], tile_sh, (strip + s * MS) * YS + k * MS / 8u, YS);

    CM_C dx[XT * STRIPS]; // dK or dQ
    BWD_CM_UNROLL for (uint n = 0u; n < XT * STRIPS; ++n) dx[n] = CM_C_ZERO;
#ifdef BWD_DKDV
    CM_C dv[YT * STRIPS];
    BWD_CM_UNROLL for (uint n = 0u; n < YT * STRIPS; ++n) dv[n] = CM_C_ZERO;
    uint kept_row = k0 + strip + lr; // the key of this lane's staged row
    // the query tiles that see some of the block's keys, one run of them (visible ranges
    // only grow with i), for each query head of the group
    uint first = 0u, last;
    while (first < pc.seq_q && bwd_disjoint(len, first, min(first + STREAM, pc.seq_q), k0, k0 + KEEP)) first += STREAM;
    for (last = first; last < pc.seq_q && !bwd_disjoint(len, last, min(last + STREAM, pc.seq_q), k0, k0 + KEEP);)
        last += STREAM;
    uint per_head = (last - first) / STREAM, ntiles = per_head * pc.group;
#else
    uint kept_row = i0 + strip + lr; // the query row of this lane's staged row
    vec2 row_stat = kept_row < pc.seq_q ? stats[bwd_row(b, h, kept_row)] : vec2(POS_INF, 0.0);
    vec2 slot_stat[CM_SLOTS * STRIPS]; // REG_SCORES: the rows this lane's accumulator elements are in
    [[unroll]] for (uint sl = 0u; sl < CM_SLOTS * STRIPS; ++sl) {
        uint i = i0 + strip + (sl / CM_SLOTS) * MS + CM_SLOT_ROW(lane, sl % CM_SLOTS);
        slot_stat[sl] = i < pc.seq_q ? stats[bwd_row(b, h, i)] : vec2(POS_INF, 0.0);
    }
    uint k_end = avk_key_end(len, min(i0 + KEEP, pc.seq_q) - 1u); // the keys some row of the block sees
    uint first = avk_key_begin(len, i0) / STREAM * STREAM, per_head = k_end > first ? (k_end - first + STREAM - 1u) / STREAM : 0u;
    uint ntiles = per_head;
#endif
    uint s_row = S_OFF + (strip + lr) * SSW + part * CPL / 4u, dp_row = DP_OFF + (strip + lr) * SSW + part * CPL / 4u;

    // tile t: query head h + t / per_head (dK/dV; dQ: h), its rows or keys from r0
    if (ntiles > 0u) fetch(b, g, len, h, first);
    if (STAGES > 1u && ntiles > 0u) {
        barrier(); // the kept rows' pass is done with the shared memory
        commit_fetch(0u);
        if (ntiles > 1u) fetch(b, g, len, h + 1u / per_head, first + (1u % per_head) * STREAM);
    }
    for (uint t = 0u; t < ntiles; ++t) {
        uint hq = h + t / per_head, r0 = first + (t % per_head) * STREAM;
#ifdef BWD_DKDV
        i0 = r0;
#else
        k0 = r0;
#endif
        uint cur = (t % STAGES) * STAGE_WORDS, cur_stat = (t % STAGES) * STREAM; // this tile's stage
        if (STAGES > 1u) {
            barrier(); // tile t is in place; everyone is done with the other stage (tile t - 1)
            if (t + 1u < ntiles) commit_fetch((t + 1u) % STAGES);
            if (t + 2u < ntiles) fetch(b, g, len, h + (t + 2u) / per_head, first + ((t + 2u) % per_head) * STREAM);
        } else {
            barrier(); // the previous tile (or the kept rows' pass) is consumed
            commit_fetch(0u);
            if (t + 1u < ntiles) fetch(b, g, len, h + (t + 1u) / per_head, first + ((t + 1u) % per_head) * STREAM); // in flight across the work
            barrier();
        }
        float slope = (avk_flags() & AVK_FLAG_ALIBI) != 0u ? alibi_slopes[hq] : 0.0;
        // 1. X1 and X2 of this subgroup's strip, MS columns at a time: staged in f32, or (REG_SCORES)
        // turned into P and dS where they are and used at once (steps 2 and 3 for those columns)
        BWD_CM_UNROLL for (uint n = 0u; n < ST; ++n) {
            CM_C x1[STRIPS], x2[STRIPS];
            BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) {
                x1[s] = CM_C_ZERO;
                x2[s] = CM_C_ZERO;
            }
            BWD_CM_UNROLL for (uint k = 0u; k < XT; ++k) {
                CM_B xb;
                CM_LOAD_COL(xb, tile_sh, cur + n * MS * XS + k * MS / 8u, XS);
                BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) {
#ifdef BWD_DQ_ATOMIC
                    if (KEPT_X_SHARED != 0u) {
                        CM_A xa;
                        CM_LOAD_ROW(xa, tile_sh, KX_OFF + (strip + s * MS) * XS + k * MS / 8u, XS);
                        x1[s] = CM_MAD(xa, xb, x1[s]);
                    } else
#endif
                        x1[s] = CM_MAD(xm[s * XT + k], xb, x1[s]);
                }
            }
            BWD_CM_UNROLL for (uint k = 0u; k < YT; ++k) {
                CM_B yb;
                CM_LOAD_COL(yb, tile_sh, cur + Y_OFF + n * MS * YS + k * MS / 8u, YS);
                BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) x2[s] = CM_MAD(ym[s * YT + k], yb, x2[s]);
            }
            if (REG_SCORES == 0u) { // one strip (the host's rule)
                CM_STORE_ROW(x1[0], tile_sh, S_OFF + strip * SSW + n * MS / 4u, SSW);
                CM_STORE_ROW(x2[0], tile_sh, DP_OFF + strip * SSW + n * MS / 4u, SSW);
                continue;
            }
            // each element's row (kept) and column (streamed) from the accumulator layout, a row
            // (slot) at a time: the emulation's 64 elements as 8 loop trips (lavapipe stops an
            // invocation's loops after 65535 trips in all)
            CM_A dsm[STRIPS];
#ifdef BWD_DKDV
            CM_A pm[STRIPS];
#endif
            BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) {
                BWD_CM_UNROLL for (uint sl = 0u; sl < CM_SLOTS; ++sl) [[unroll]] for (uint q = 0u; q < CM_LEN / CM_SLOTS; ++q) {
                    uint e = sl * (CM_LEN / CM_SLOTS) + q;
                    uint row = strip + s * MS + CM_SLOT_ROW(lane, sl), col = n * MS + CM_COL(lane, e);
#ifdef BWD_DKDV
                    vec2 pd = bwd_p_ds(CM_AT(x1[s], e), CM_AT(x2[s], e), stat_sh[cur_stat + col], b, hq, len, i0 + col, k0 + row, s_pre, slope);
#else
                    vec2 pd = bwd_p_ds(CM_AT(x1[s], e), CM_AT(x2[s], e), slot_stat[s * CM_SLOTS + sl], b, hq, len, i0 + row, k0 + col, s_pre, slope);
#endif
                    CM_AT(x1[s], e) = pd.x;
                    CM_AT(x2[s], e) = pd.y;
                }
                dsm[s] = CM_A_FROM_C(x2[s]);
#ifdef BWD_DKDV
                pm[s] = CM_A_FROM_C(x1[s]);
#endif
#ifdef BWD_DQ_ATOMIC
                CM_STORE_ROW(dsm[s], tile_sh, DP_OFF + (strip + s * MS) * SSW + n * MS / 8u, SSW); // dS^T in f16 for dq_add
#endif
            }
            BWD_CM_UNROLL for (uint m = 0u; m < XT; ++m) {
                CM_B xb;
                CM_LOAD_ROW(xb, tile_sh, cur + n * MS * XS + m * MS / 8u, XS);
                BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) dx[s * XT + m] = CM_MAD(dsm[s], xb, dx[s * XT + m]);
            }
#ifdef BWD_DKDV
            BWD_CM_UNROLL for (uint m = 0u; m < YT; ++m) {
                CM_B yb;
                CM_LOAD_ROW(yb, tile_sh, cur + Y_OFF + n * MS * YS + m * MS / 8u, YS);
                BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) dv[s * YT + m] = CM_MAD(pm[s], yb, dv[s * YT + m]);
            }
#endif
        }
        if (REG_SCORES == 0u) {
            subgroup_sync();

            // 2. P and dS of this lane's columns, back over the staging in f16
            float pv[CPL], dsv[CPL];
            [[unroll]] for (uint c = 0u; c < CPL; ++c) {
                uint col = part * CPL + c;
                float x = uintBitsToFloat(tile_sh[s_row + c / 4u][c % 4u]);
                float dp = uintBitsToFloat(tile_sh[dp_row + c / 4u][c % 4u]);
#ifdef BWD_DKDV
                vec2 pd = bwd_p_ds(x, dp, stat_sh[cur_stat + col], b, hq, len, i0 + col, kept_row, s_pre, slope);
#else
                vec2 pd = bwd_p_ds(x, dp, row_stat, b, hq, len, kept_row, k0 + col, s_pre, slope);
#endif
                pv[c] = pd.x;
                dsv[c] = pd.y;
            }
            subgroup_sync(); // the row's f32 values are read: its f16 halves go over them
            uint p_row = S_OFF + (strip + lr) * SSW + part * CPL / 8u, ds_row = DP_OFF + (strip + lr) * SSW + part * CPL / 8u;
            [[unroll]] for (uint c = 0u; c < CPL; c += 8u) {
                tile_sh[p_row + c / 8u] = pack8(pv, c);
                tile_sh[ds_row + c / 8u] = pack8(dsv, c);
            }
            subgroup_sync();

            // 3. dX += dS . stream X; dV += P^T . dO
            BWD_CM_UNROLL for (uint kc = 0u; kc < ST; ++kc) {
                CM_A dsm;
                CM_LOAD_ROW(dsm, tile_sh, DP_OFF + strip * SSW + kc * MS / 8u, SSW);
                BWD_CM_UNROLL for (uint n = 0u; n < XT; ++n) {
                    CM_B xb;
                    CM_LOAD_ROW(xb, tile_sh, cur + kc * MS * XS + n * MS / 8u, XS);
                    dx[n] = CM_MAD(dsm, xb, dx[n]);
                }
#ifdef BWD_DKDV
                CM_A pm;
                CM_LOAD_ROW(pm, tile_sh, S_OFF + strip * SSW + kc * MS / 8u, SSW);
                BWD_CM_UNROLL for (uint n = 0u; n < YT; ++n) {
                    CM_B yb;
                    CM_LOAD_ROW(yb, tile_sh, cur + Y_OFF + kc * MS * YS + n * MS / 8u, YS);
                    dv[n] = CM_MAD(pm, yb, dv[n]);
                }
#endif
            }
        }
#ifdef BWD_DQ_ATOMIC
        barrier(); // every strip's dS is staged (the next tile's barrier keeps it until all have read it)
        dq_add(b, hq, r0, sg, lane, strip, scale);
#endif
    }

    // the gradients through each subgroup's staging, STREAM columns at a time, a strip at a time
    uint staged = S_OFF + (strip + lr) * SSW + part * CPL / 4u;
    BWD_CM_UNROLL for (uint s = 0u; s < STRIPS; ++s) {
#ifdef BWD_DKDV
        uint row = kept_row + s * MS;
        bool row_ok = row < pc.seq_kv;
        uint x_at = row_ok ? avk_kv_row(b, g, row) * D8 : 0u, v_at = row_ok ? avk_kv_row(b, g, row) * DV8 : 0u;
#else
        uint row = kept_row + s * MS;
        bool row_ok = row < pc.seq_q;
        uint x_at = row_ok ? avk_q_offset(b, uvec2(h, row)) / 8u : 0u;
#endif
        BWD_CM_UNROLL for (uint n0 = 0u; n0 < XT; n0 += ST) {
            subgroup_sync();
            BWD_CM_UNROLL for (uint n = 0u; n < ST; ++n)
                if (n0 + n < XT) CM_STORE_ROW(dx[s * XT + n0 + n], tile_sh, S_OFF + strip * SSW + n * MS / 4u, SSW);
            subgroup_sync();
            write_staged(staged, n0 * MS + part * CPL, D, scale, row_ok, x_at, false);
        }
#ifdef BWD_DKDV
        BWD_CM_UNROLL for (uint n0 = 0u; n0 < YT; n0 += ST) {
            subgroup_sync();
            BWD_CM_UNROLL for (uint n = 0u; n < ST; ++n)
                if (n0 + n < YT) CM_STORE_ROW(dv[s * YT + n0 + n], tile_sh, S_OFF + strip * SSW + n * MS / 4u, SSW);
            subgroup_sync();
            write_staged(staged, n0 * MS + part * CPL, DV, 1.0, row_ok, v_at, true);
        }
#endif
    }
}
