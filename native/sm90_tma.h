/* The warp-specialized Hopper forward's (attn_sm90.h's AVK_WS) primitives: tensor-memory
 * accelerator loads through the host's tensor maps, mbarrier arrivals, the producer's tile
 * slots, and the register budgets' setmaxnreg. */
#ifndef ATTNVK_SM90_TMA_H
#define ATTNVK_SM90_TMA_H

/* a CUtensorMap (the driver's opaque 128-byte descriptor), passed by value */
struct __align__(64) avk_tmap {
    unsigned long long bits[16];
};

/* box {64 columns, BC keys, 1, 1} at column c, key k, kv head g, batch b; rows past the
 * tensor's keys land as zeros. The CTA's own shared address is a cluster address. */
AVK_DEVICE void avk_tma_load(avk_u32 smem, const avk_tmap *map, int c, int k, int g, int b, avk_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(smem),
                 "l"((unsigned long long)map), "r"(c), "r"(k), "r"(g), "r"(b), "r"(bar)
                 : "memory");
}

/* AVK_MASK_TMA: box {64 keys, BR rows} of the mask's rows (a 2-D map {Nk, rows}) at key k, row r;
 * past the tensor's rows or keys the box lands as zeros */
AVK_DEVICE void avk_tma_load_2d(avk_u32 smem, const avk_tmap *map, int k, int r, avk_u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem),
                 "l"((unsigned long long)map), "r"(k), "r"(r), "r"(bar)
                 : "memory");
}

AVK_DEVICE void avk_mbar_arrive(avk_u32 bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* AVK_TILE_SLOTS: the tile in a stage's slot once the stage's full barrier completed the phase, or
 * end where the slot says -1 (the producer's walk is over); waited (the timeline build's, else
 * null): the clock cycles the wait took are added there */
AVK_DEVICE int avk_tile_slot_next(avk_u32 full, int parity, const volatile int *slot, int end, unsigned long long *waited)
{
    const unsigned long long c = waited ? clock64() : 0ull;
    avk_mbar_wait(full, (avk_u32)parity);
    if (waited) *waited += clock64() - c;
    const int t = *slot;
    return t < 0 ? end : t;
}

template <int R>
AVK_DEVICE void avk_setmaxnreg_dec(void) { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R)); }
template <int R>
AVK_DEVICE void avk_setmaxnreg_inc(void) { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R)); }

#endif
