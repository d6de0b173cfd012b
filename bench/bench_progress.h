/* One progress line on stderr, only when stderr is a terminal: records written of
 * the total, an ETA from the records that actually run (those ruled out up front and
 * those skipped on the way take no time and are left out), and what runs now, with
 * its phase and dispatch count so a long record visibly advances. The line is cut to
 * the terminal's width, so clearing it never leaves a wrapped remainder behind. */
#ifndef ATTNVK_BENCH_PROGRESS_H
#define ATTNVK_BENCH_PROGRESS_H

typedef struct bench_progress {
    int enabled;
    int total;            /* records the run writes */
    int to_run;           /* of them, those that may run (the ETA's basis) */
    int done;             /* records written */
    int ran;              /* written records that ran (ok or fail) */
    double ran_s;         /* time those took */
    int current_may_run;  /* the record in progress was counted in to_run */
    double current_start_s, current_fraction;
    char what[160], phase[64];
    double last_draw_s;
    int drawn;            /* a line is on screen */
} bench_progress;

void bench_progress_start(bench_progress *p, int total, int to_run);
/* A record begins; may_run: it was not ruled out up front. Redraws. */
void bench_progress_record(bench_progress *p, const char *what, int may_run);
/* Inside the record: its phase and dispatches done of expected. Redraws at most 10 times a second. */
void bench_progress_within(bench_progress *p, const char *phase, long done, long expected);
/* The record is written; ran: it ran (ok or fail) rather than being skipped. */
void bench_progress_step(bench_progress *p, int ran);
/* Clears the line so a row or message can be printed on a clean line. */
void bench_progress_clear(bench_progress *p);
void bench_progress_finish(bench_progress *p);

#endif
