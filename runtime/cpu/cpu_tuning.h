/* The CPU device's tuning table: the flash kernel's key tile and query rows per
 * work item, looked up like every GPU table (core/tuning.h) so `attnvk tune`
 * can search and override them. */
#ifndef ATTNVK_CPU_TUNING_H
#define ATTNVK_CPU_TUNING_H

#include "attnvk/attnvk.h"
#include "core/tuning.h"

/* The flash kernel's tiles for p: the explicit entry (core/tuning.h) when one is
 * installed, else the table's; UNSUPPORTED with the reason for an explicit entry
 * the kernel cannot run. */
attnvk_status avk_cpu_pick_tiles(const attnvk_problem *p, int *rows, int *tile_bc);
/* `attnvk tune`'s candidates (backend.h's tuning_candidates). */
int avk_cpu_tuning_candidates(const attnvk_problem *p, avk_tuning *out, int max);

#endif
