/* `attnvk bench --cold`: the time to the first correct result on an empty kernel
 * cache and on a warm one, per (case, device, implementation), and what the cold
 * start left in the caches.
 *
 * Drivers read their cache settings once, when they load, and keep compiled code in
 * memory, so each start is a fresh process: the bench runs its own binary
 * (/proc/self/exe) with the same command line plus the hidden --cold-child, in an
 * environment whose every kernel cache points into an empty temporary folder
 * (attnvk's ATTNVK_CACHE_DIR, XDG_CACHE_HOME, Mesa's, PoCL's, CUDA's JIT cache,
 * NVIDIA's shader cache, AMD comgr's). The child builds the case's inputs and
 * reference (not timed), loads the APIs, opens the device, prepares the kernel,
 * uploads, runs the checked dispatch on a NaN-poisoned output and checks it, then
 * closes the device (Vulkan writes its pipeline cache then) and prints one line of
 * JSON. The cold start runs on the empty folder; the bytes in it afterwards are the
 * cache; the warm start is a second fresh process on that folder. The folder is
 * removed after each unit.
 *
 * The result is part of the record (cold_start.h): bench_record.cold_start, written
 * with the record's JSON (bench_output.c); results_record.cold_start, read back by
 * results_file.c and judged by results_compare.c (results_compare.h). */
#ifndef ATTNVK_BENCH_COLD_H
#define ATTNVK_BENCH_COLD_H

#include "bench_options.h"
#include "bench_record.h"
#include "cold_start.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- the bench (attnvk_cli) ---- */

/* One unit to measure: the bench command line as cmd_bench got it (argv[0] is
 * "bench"), the case by index and name, the device by API and index, the
 * implementation by name. on_phase (may be NULL) hears "cold start" / "warm start". */
typedef struct bench_cold_unit {
    int argc;
    char **argv;
    int case_index;
    const char *case_name;
    attnvk_api api;
    int device_index;
    const char *implementation;
    int runs;
    void (*on_phase)(void *ctx, const char *phase, long done, long expected);
    void *ctx;
} bench_cold_unit;

/* Fills out (out->present is always set; error says what went wrong). */
void bench_cold_measure(const bench_cold_unit *u, bench_cold_result *out);

/* The hidden --cold-child: one start of o->cold_child ("CASE:API:DEVICE:IMPL:NAME")
 * over cases; prints the result line; the exit status. */
int bench_cold_child(const bench_options *o, const bench_case *cases, int ncases);

/* The cold-start table of the records with a cold_start, after the bench's table (f: table
 * or md; others add nothing), in bench_text.c. */
struct bench_results;
struct strbuf;
void bench_cold_table(struct strbuf *b, const struct bench_results *res, bench_format f);

#endif
