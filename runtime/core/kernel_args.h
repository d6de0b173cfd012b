/* The host side of the kernel contract (runtime/contract/kernel_args.def):
 * the C struct every backend fills the same way, and the policies that
 * decide its values (GQA packing, splits), so backends supply numbers only. */
#ifndef ATTNVK_KERNEL_ARGS_H
#define ATTNVK_KERNEL_ARGS_H

#include "attnvk/attnvk.h"
#include "contract/kernel_flags.h"

#include <stdint.h>

typedef uint32_t U32;
typedef int32_t I32;
typedef float F32;

typedef struct avk_kernel_args {
#define AVK_ARG(type, name) type name;
#include "contract/kernel_args.def"
#undef AVK_ARG
} avk_kernel_args;

/* Query heads a workgroup serves together: all of a kv head's group for a
 * decode shape (each K/V byte then leaves memory once per kv head), else 1.
 * max_rows caps pack * Nq where a kernel's row tile is small (0: no cap);
 * the result always divides group. */
int avk_gqa_pack(const attnvk_problem *p, int q_count, int max_rows);

/* Row units of one (b, grid y): pack * q_count packed rows, in blocks of br. */
static inline int64_t avk_row_blocks(int pack, int q_count, int br) { return ((int64_t)pack * q_count + br - 1) / br; }

/* Everything but the split fields; flags from the problem and write_lse. */
void avk_kernel_args_fill(avk_kernel_args *a, const attnvk_problem *p, int q_begin, int q_count, int pack,
                          int write_lse);
/* Dilated problems as strided views (AVK_FLAG_DILATED_VIEW; kernel_flags.h says
 * how the kernels enumerate them). A backend whose forward body has them calls
 * avk_kernel_args_dilated_view after avk_kernel_args_fill, and dispatches grid x
 * avk_dilated_view_blocks (its dispatch runs every query row: q_begin 0, q_count
 * Nq). avk_kernel_args_span and _split then plan over the views. */
void avk_kernel_args_dilated_view(avk_kernel_args *a, const attnvk_problem *p);
int64_t avk_dilated_view_blocks(const attnvk_problem *p, int br);
/* A dispatch of rows [q_begin, q_begin + q_count): a view takes all Nq rows at once, else a
 * one-line INVALID_ARGUMENT (every backend that runs views asks this before it dispatches). */
attnvk_status avk_dilated_view_rows(const avk_kernel_args *a, const attnvk_problem *p, int q_begin, int q_count);
/* Grid x of a dispatch of q_count rows: row blocks, or a dilated view's blocks. */
int64_t avk_grid_row_blocks(const avk_kernel_args *a, const attnvk_problem *p, int q_count, int br);

/* Keys one row block of br packed rows may see, what split-KV divides: the
 * whole cache (seq_kv) without a left window; with one, the block's queries
 * (at most br / pack + 2), window_left, the keys right of its last query
 * (none when causal, window_right, else the cache) and one tile for the
 * first tile's rounding down, and with bottom-right alignment at most
 * Nq + window_left + tile (the rows end at the sequence's end); never more
 * than seq_kv. The kernels count the splits from the block's first visible
 * tile (avk_locate, flash_work): split s reads tiles first + s *
 * split_keys / tile onwards, so every split lands inside the window. tile
 * is the split granule (a multiple of the kernels' key tile). From the
 * filled arguments, so it sees the flags the kernels see. */
int64_t avk_kernel_args_span(const avk_kernel_args *a, int br, int tile);

/* Plans split-KV for a kernel with key tile bc and row tile br on a device of
 * compute_units, each running `resident` of its workgroups at once (0 or 1
 * when unknown; whole_waves: see avk_split_request; requested: --split-kv, N splits of the span) over
 * avk_kernel_args_span's keys and sets splits, split_keys and the split flag. Returns the split count. */
int avk_kernel_args_split(avk_kernel_args *a, const attnvk_problem *p, int br, int bc, int compute_units,
                          int resident, int whole_waves, int requested);

#endif
