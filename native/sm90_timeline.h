/* A per-CTA timeline of the Hopper forward: a diagnostic build (AVK_TIMELINE=1, through
 * ATTNVK_CUDA_DEFINES; the host's ATTNVK_CUDA_TIMELINE=path writes the last launch's records,
 * tools/h100/timeline.py reads them). Thread 0 notes its SM's clock at the block's phases, so
 * what a CTA costs once (prologue, the first tile's ramp, the epilogue, the gap before the
 * SM's next CTA) reads apart from what its tiles cost. One record a block of the launch's grid
 * (x fastest; a persistent kernel's items alike), AVK_TL_WORDS words:
 *   0: SM id << 32 | the ring's tiles the block passed;  1: %globaltimer as it began (ns);
 *   2: clock64 at the kernel's entry (a persistent CTA's later blocks: the last block's end);  3: Q in shared memory;  4: the first S landed;  5: the key loop done;
 *   6: every consumer warpgroup done (the epilogue's sync);  7: O stored;
 *   cycles spent waiting, 8: for K's tiles, 9: for V's, 10: for the ping-pong's turn (thread 0),
 *   11: the producer for free stages;  12: O staged in shared memory (its stores next);
 *   13: the block's consumer path began (Q's copies next);  14: the producer issued the first K;
 *   15: unused. */
#ifndef AVK_TIMELINE
#define AVK_TIMELINE 0
#endif
#if AVK_TIMELINE
enum { AVK_TL_MAX = 65536, AVK_TL_WORDS = 16 };
__device__ unsigned long long avk_timeline[AVK_TL_MAX * AVK_TL_WORDS];

AVK_DEVICE void avk_tl_mark(int item, int word, unsigned long long value)
{
    if (item >= 0 && item < AVK_TL_MAX) avk_timeline[(unsigned long long)item * AVK_TL_WORDS + word] = value;
}

/* the block's first words; began: the clock when it began (the kernel's entry, or the last block's end) */
AVK_DEVICE void avk_tl_begin(int item, unsigned long long began)
{
    unsigned sm;
    unsigned long long ns;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    avk_tl_mark(item, 0, (unsigned long long)sm << 32);
    avk_tl_mark(item, 1, ns);
    avk_tl_mark(item, 2, began);
}
/* (the kernel's entry) the record of a CTA of the grid: its linear block */
#define AVK_TL_ENTRY()                                                             \
    do {                                                                           \
        ring.item = (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)); \
        ring.tl_c = clock64();                                                     \
    } while (0)
#define AVK_TL_BEGIN()                                             \
    do {                                                           \
        if (threadIdx.x == 0) avk_tl_begin(ring.item, ring.tl_c);  \
    } while (0)
#define AVK_TL_MARK(word)                                                   \
    do {                                                                    \
        if (threadIdx.x == 0) avk_tl_mark(ring.item, word, clock64());      \
    } while (0)
#define AVK_TL_MARK_BY(thread, word)                                      \
    do {                                                                  \
        if (threadIdx.x == (thread)) avk_tl_mark(ring.item, word, clock64()); \
    } while (0)
#define AVK_TL_TILES(n)                                                                                \
    do {                                                                                               \
        if (threadIdx.x == 0 && ring.item >= 0 && ring.item < AVK_TL_MAX)                              \
            avk_timeline[(unsigned long long)ring.item * AVK_TL_WORDS] |= (unsigned)(n);               \
    } while (0)
#define AVK_TL_END()                   \
    do {                               \
        AVK_TL_MARK(7);                \
        ring.tl_c = clock64();         \
    } while (0)
/* waits timed into tl_wait[k] (words 8 + k); the thread's own sum is stored by AVK_TL_WAITS_STORE */
#define AVK_TL_WAITS() unsigned long long tl_wait[4] = {0, 0, 0, 0}
#define AVK_TL_TIMED(k, ...)                            \
    do {                                                \
        const unsigned long long c_ = clock64();        \
        __VA_ARGS__;                                    \
        tl_wait[k] += clock64() - c_;                   \
    } while (0)
#define AVK_TL_WAITED(k) (&tl_wait[k]) /* where a helper adds the cycles it waited */
#define AVK_TL_WAITS_STORE(thread, k0, k1)                                                   \
    do {                                                                                     \
        if (threadIdx.x == (thread))                                                         \
            for (int k_ = (k0); k_ <= (k1); ++k_) avk_tl_mark(ring.item, 8 + k_, tl_wait[k_]); \
    } while (0)
#else
#define AVK_TL_WAITS() ((void)0)
#define AVK_TL_TIMED(k, ...) \
    do {                     \
        __VA_ARGS__;         \
    } while (0)
#define AVK_TL_WAITS_STORE(thread, k0, k1) ((void)0)
#define AVK_TL_WAITED(k) ((unsigned long long *)nullptr)
#define AVK_TL_ENTRY() ((void)0)
#define AVK_TL_BEGIN() ((void)0)
#define AVK_TL_MARK(word) ((void)0)
#define AVK_TL_MARK_BY(thread, word) ((void)0)
#define AVK_TL_TILES(n) ((void)0)
#define AVK_TL_END() ((void)0)
#endif
