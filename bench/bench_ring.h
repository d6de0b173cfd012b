/* `attnvk bench --ring G`: ring attention (attnvk_ring_*) over G ranks on one
 * case. The checked run compares O's sampled rows with the float64
 * reference; the timed runs give the record's samples (wall time, every rank
 * finished); the same schedule without transfers tells how much of the
 * transfer time the computation hid; one device running the whole case and
 * its N/G share give the strong and weak scaling. Never aborts: every
 * outcome is a record. */
#ifndef ATTNVK_BENCH_RING_H
#define ATTNVK_BENCH_RING_H

#include "bench_runner.h"
#include "bench_output.h"
#include "bench_workload.h"
#include "report_buf.h"

/* r initialised by the caller on rank 0's device; rank i runs on
 * targets[rank_target[i]]. w: the case's inputs and reference rows. */
void bench_ring_run(bench_target *targets, const int *rank_target, int ranks, const bench_run_config *cfg,
                    const bench_workload *w, bench_record *r);

/* The case name of a ring record: the case's, then "-ring" and G. */
void bench_ring_case_name(const char *case_name, int ranks, char *out, size_t n);

/* A ring record's summary line (no newline) after a table or Markdown; 0 when r has none. */
int bench_ring_line(strbuf *b, const bench_record *r);

#endif
