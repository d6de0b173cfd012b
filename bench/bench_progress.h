/* A one-line progress bar with ETA on stderr, only when stderr is a terminal. */
#ifndef ATTNVK_BENCH_PROGRESS_H
#define ATTNVK_BENCH_PROGRESS_H

typedef struct bench_progress {
    int enabled;
    int total, done;
    double start_s;
    int drawn;   /* a bar is on screen */
} bench_progress;

void bench_progress_start(bench_progress *p, int total);
/* Redraws with what is running now. */
void bench_progress_update(bench_progress *p, const char *what);
void bench_progress_step(bench_progress *p);
/* Clears the bar so a message can be printed on a clean line. */
void bench_progress_clear(bench_progress *p);
void bench_progress_finish(bench_progress *p);

#endif
