/* Hopper (sm_90a) warpgroup-MMA primitives shared by the forward
 * (attn_sm90.h) and the backward (attn_bwd_sm90.h): the fence, commit and
 * wait of wgmma's async groups, the generic-to-async proxy fence, register
 * pins, and the shared-memory matrix descriptor of the 128-byte-swizzled
 * layout both kernels keep their tiles in. */
#ifndef ATTNVK_SM90_COMMON_H
#define ATTNVK_SM90_COMMON_H

AVK_DEVICE void avk_wgmma_fence(void) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
AVK_DEVICE void avk_wgmma_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
AVK_DEVICE void avk_wgmma_wait_all(void) { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

/* cp.async writes through the generic proxy, wgmma reads through the async one. */
AVK_DEVICE void avk_fence_proxy_async(void) { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/* Pins registers at this point of the program: the compiler does not know that
 * an issued wgmma writes its accumulators only by the wait. */
template <int N>
AVK_DEVICE void avk_reg_fence(float *r)
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

/* wgmma shared-memory matrix descriptor (PTX ISA), 128-byte swizzle: start
 * address, leading and stride byte offsets, all in 16-byte units. */
AVK_DEVICE avk_u64 avk_desc_sw128(avk_u32 addr, avk_u32 lbo, avk_u32 sbo)
{
    return (avk_u64)((addr & 0x3ffffu) >> 4) | (avk_u64)((lbo >> 4) & 0x3fffu) << 16 |
           (avk_u64)((sbo >> 4) & 0x3fffu) << 32 | 1ull << 62;
}

/* waits until at most N committed wgmma groups are still in flight */
template <int N>
AVK_DEVICE void avk_wgmma_wait(void) { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

/* dst (global) += src (shared), bytes a multiple of 16 on 16-byte-aligned ends, by the async
 * proxy (TMA's reduction); the issuing thread's bulk groups: commit, then wait until at most N
 * are still reading their shared source (.read) or still in flight at all. */
AVK_DEVICE void avk_bulk_reduce_add_f32(void *dst, avk_u32 src, avk_u32 bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst), "r"(src),
                 "r"(bytes)
                 : "memory");
}
AVK_DEVICE void avk_bulk_commit(void) { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
AVK_DEVICE void avk_bulk_wait_read(void) { asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory"); }
template <int N>
AVK_DEVICE void avk_bulk_wait(void) { asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory"); }

#if AVK_SOFTCAP_IN_Q
/* AVK_SOFTCAP_Q_PRESCALE (attn_scores.h): a Q tile of ROWS x D_ (128-byte swizzle) times f, each
 * of the NT_ consumer threads over the 16-byte chunks its own cp.async copies wrote
 * (avk_load_tile's order), so its own wait suffices */
template <int ROWS, int D_, int NT_>
AVK_DEVICE void avk_scale_q_tile(unsigned char *tile, float f)
{
    enum { CH = D_ / 8 };
#pragma unroll 4
    for (int j = 0; j < (ROWS * CH + NT_ - 1) / NT_; ++j) {
        const int c = threadIdx.x + j * NT_;
        if ((ROWS * CH) % NT_ != 0 && c >= ROWS * CH) break;
        avk_u32 *q = (avk_u32 *)(tile + avk_tile_offset<ROWS, D_, true>(c / CH, c % CH));
#pragma unroll
        for (int e = 0; e < 4; ++e)
            q[e] = (avk_u32)avk_f32_to_f16(avk_f16_to_f32((avk_u16)(q[e] & 0xffffu)) * f) |
                   (avk_u32)avk_f32_to_f16(avk_f16_to_f32((avk_u16)(q[e] >> 16)) * f) << 16;
    }
}
#endif

#endif
