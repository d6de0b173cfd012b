#include "bench_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

enum { BAR_WIDTH = 24 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bench_progress_start(bench_progress *p, int total)
{
    p->enabled = isatty(STDERR_FILENO);
    p->total = total > 0 ? total : 1;
    p->done = 0;
    p->start_s = now_s();
    p->drawn = 0;
}

static void format_duration(double s, char *out, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(out, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
    else snprintf(out, n, "%lds", t);
}

void bench_progress_update(bench_progress *p, const char *what)
{
    if (!p->enabled) return;
    char bar[BAR_WIDTH + 1], eta[32] = "?";
    int filled = p->done * BAR_WIDTH / p->total;
    for (int i = 0; i < BAR_WIDTH; ++i) bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    double elapsed = now_s() - p->start_s;
    if (p->done > 0) format_duration(elapsed / p->done * (p->total - p->done), eta, sizeof eta);
    fprintf(stderr, "\r\033[K[%s] %d/%d ETA %s  %.60s", bar, p->done, p->total, eta, what);
    fflush(stderr);
    p->drawn = 1;
}

void bench_progress_step(bench_progress *p)
{
    if (p->done < p->total) ++p->done;
}

void bench_progress_clear(bench_progress *p)
{
    if (!p->enabled || !p->drawn) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->drawn = 0;
}

void bench_progress_finish(bench_progress *p) { bench_progress_clear(p); }
