/* The persistent forms of the Hopper forward (attn_sm90.h's AVK_PERSISTENT, included after its
 * tile enum): how a CTA takes the grid's blocks, and AVK_FWD_BLOCKS(), the kernel's walk over
 * them (it names the kernel's locals: p, tm_k, tm_v, smem_raw, raw, aQ0, ring, wg and the
 * queue's addresses). */
/* AVK_PERSISTENT (wgmma-ws; the host's ATTNVK_CUDA_PERSISTENT): a CTA an SM, each taking blocks
 * of the one-CTA-a-block grid (avk_locate_item) until none is left, so what a CTA does once
 * (barriers, the ring's fill) is done once an SM: the producer loads the next block's K and V
 * while the consumers finish this one's, and the consumers fetch the next block's Q into a second
 * buffer while this one's tiles run. The ring's stages and phases count on across blocks
 * (avk_ring_pos). 1: the blocks dealt in rounds (avk_round_item; even for causal's known
 * lengths); 2: taken from a counter in memory as CTAs come free (avk_take_block; a block
 * layout's rows differ in length). Both ran correct and 5-17% slower than one CTA a block on the
 * H100 (bench/results/hopper-2026-12-07-s37), and 1 still 1-5% slower at D=64 on 192x96 tiles,
 * where ptxas spills 20 bytes against 88-176 before (s38h): not the spills, then. */
#ifndef AVK_PERSISTENT
#define AVK_PERSISTENT 0
#endif
static_assert(!AVK_PERSISTENT || AVK_WS, "AVK_PERSISTENT needs the warp-specialized kernel (AVK_WGMMA=2)");
enum { Q_BUFFERS = 1 + (AVK_PERSISTENT != 0), QUEUE = 4 /* AVK_PERSISTENT=2: blocks taken ahead */ };

#if AVK_PERSISTENT == 2
/* The next block from the launch's counter (p.sched), or -1. Each CTA starts on blockIdx.x and
 * takes until it is refused once, so a launch takes items times in all: the last take (v =
 * items - 1) puts the counter back to 0 for the next launch on the stream. */
AVK_DEVICE int avk_take_block(const avk_attn_params &p)
{
    unsigned int *counter = (unsigned int *)p.sched;
    const unsigned int v = atomicAdd(counter, 1u);
    if (v == p.items - 1u) atomicExch(counter, 0u);
    const unsigned int item = gridDim.x + v;
    return item < p.items ? (int)item : -1;
}
#endif

/* The block a persistent CTA takes in its round-th turn, or -1: the rounds deal the blocks (longest
 * first where causal, avk_locate_at's order) to the CTAs forth and back, so that no CTA takes the
 * longest of every round */
AVK_DEVICE int avk_round_item(int round, int items)
{
    const int g = (int)gridDim.x, c = (int)blockIdx.x, item = round * g + ((round & 1) ? g - 1 - c : c);
    return item < items ? item : -1;
}

/* A CTA's progress over its blocks: the ring's stages used so far (a stage and its phase follow
 * from the count) and the blocks done (which Q buffer a block takes). */
struct avk_ring_pos {
    int uses, blocks;
#if AVK_TIMELINE
    int item;                /* the block's record (the grid's linear block) */
    unsigned long long tl_c; /* clock64 when the block began (the kernel's entry, or the last block's end) */
#endif
};
#if AVK_TIMELINE
#define AVK_TL_ITEM(i) (ring.item = (i))
#else
#define AVK_TL_ITEM(i) ((void)0)
#endif

#if AVK_PERSISTENT == 2
#define AVK_SLOT(j) (((volatile int *)slot_ptr)[(j) % QUEUE])
#define AVK_PUBLISH(j, item)                                                                                      \
    do {                                                                                                          \
        if ((j) >= QUEUE) avk_mbar_wait(queue_empty + 8u * ((j) % QUEUE), (((j) / QUEUE) - 1) & 1);              \
        AVK_SLOT(j) = (item);                                                                                     \
        avk_mbar_arrive(queue_full + 8u * ((j) % QUEUE));                                                         \
    } while (0)
    /* the producer's warp takes the blocks (its lane 0 publishes block j + 1 before it loads block j's
     * tiles, so the consumers know the next block's Q); the consumers take them off the queue */
#define AVK_FWD_BLOCKS()                                                                                          \
    if (wg == WGS) {                                                                                              \
        const bool head = threadIdx.x % 32 == 0;                                                                  \
        int cur = (int)blockIdx.x;                                                                                \
        if (head) AVK_PUBLISH(0, cur);                                                                            \
        for (int j = 0; cur >= 0; ++j) {                                                                          \
            const int next = __shfl_sync(0xffffffffu, head ? avk_take_block(p) : 0, 0);                          \
            if (head) AVK_PUBLISH(j + 1, next);                                                                   \
            AVK_TL_ITEM(cur);                                                                                     \
            avk_fwd_block(p, avk_locate_item(p, BR, BC, cur), &tm_k, &tm_v, smem_raw, raw, aQ0, ring, next);      \
            cur = next;                                                                                           \
        }                                                                                                         \
    } else {                                                                                                      \
        for (int j = 0;; ++j) {                                                                                   \
            avk_mbar_wait(queue_full + 8u * (j % QUEUE), (j / QUEUE) & 1);                                        \
            const int cur = AVK_SLOT(j);                                                                          \
            if (cur < 0) break;                                                                                   \
            AVK_TL_ITEM(cur);                                                                                     \
            avk_mbar_wait(queue_full + 8u * ((j + 1) % QUEUE), ((j + 1) / QUEUE) & 1);                            \
            const int next = AVK_SLOT(j + 1);                                                                     \
            avk_fwd_block(p, avk_locate_item(p, BR, BC, cur), &tm_k, &tm_v, smem_raw, raw, aQ0, ring, next);      \
            avk_syncwarp();                                                                                       \
            if (threadIdx.x % 32 == 0) avk_mbar_arrive(queue_empty + 8u * (j % QUEUE));                           \
        }                                                                                                         \
    }
#elif AVK_PERSISTENT
#define AVK_FWD_BLOCKS()                                                                                          \
    for (int round = 0; round * (int)gridDim.x < (int)p.items; ++round) {                                         \
        const int item = avk_round_item(round, (int)p.items);                                                     \
        if (item < 0) continue;                                                                                   \
        AVK_TL_ITEM(item);                                                                                        \
        avk_fwd_block(p, avk_locate_item(p, BR, BC, item), &tm_k, &tm_v, smem_raw, raw, aQ0, ring,               \
                      avk_round_item(round + 1, (int)p.items));                                                    \
    }
#elif AVK_WS
#if AVK_MASK_TMA
#define AVK_FWD_BLOCKS() avk_fwd_block(p, avk_locate(p, BR, BC), &tm_k, &tm_v, &tm_m, smem_raw, raw, aQ0, ring, -1)
#else
#define AVK_FWD_BLOCKS() avk_fwd_block(p, avk_locate(p, BR, BC), &tm_k, &tm_v, smem_raw, raw, aQ0, ring, -1)
#endif
#else
#define AVK_FWD_BLOCKS() avk_fwd_block(p, avk_locate(p, BR, BC), smem_raw, raw, aQ0, ring, -1)
#endif
