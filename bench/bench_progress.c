#include "bench_progress.h"

#include "text_layout.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BAR_WIDTH = 16, DEFAULT_COLUMNS = 80 };
static const double redraw_interval_s = 0.1;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bench_progress_start(bench_progress *p, int total, int to_run)
{
    memset(p, 0, sizeof *p);
    p->enabled = isatty(STDERR_FILENO);
    p->total = total > 0 ? total : 1;
    p->to_run = to_run;
}

static void format_duration(double s, char *out, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(out, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
    else snprintf(out, n, "%lds", t);
}

static void draw(bench_progress *p)
{
    if (!p->enabled) return;
    int columns = text_terminal_columns(STDERR_FILENO);
    int room = (columns > 0 ? columns : DEFAULT_COLUMNS) - 1; /* the last column would wrap on some terminals */
    double fraction = (p->done + p->current_fraction) / p->total;
    char bar[BAR_WIDTH + 1], eta[32] = "?", line[512];
    int filled = (int)(fraction * BAR_WIDTH);
    for (int i = 0; i < BAR_WIDTH; ++i) bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    /* seconds per record that runs: from the finished ones, else from the first one's progress */
    double per_record = p->ran > 0 ? p->ran_s / p->ran
                      : p->current_may_run && p->current_fraction >= 0.1
                            ? (now_s() - p->current_start_s) / p->current_fraction
                            : -1;
    if (per_record >= 0) {
        double left = p->to_run - p->ran - (p->current_may_run ? p->current_fraction : 0);
        format_duration(per_record * (left > 0 ? left : 0), eta, sizeof eta);
    }
    /* the phase first: it changes within a long record, the name does not */
    snprintf(line, sizeof line, "[%s] %d/%d ETA %s  %s%s%s", bar, p->done, p->total, eta, p->phase,
             p->phase[0] ? "  " : "", p->what);
    if (room > 0 && (int)strlen(line) > room) line[room] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->drawn = 1;
    p->last_draw_s = now_s();
}

void bench_progress_record(bench_progress *p, const char *what, int may_run)
{
    snprintf(p->what, sizeof p->what, "%s", what);
    p->phase[0] = '\0';
    p->current_may_run = may_run;
    p->current_start_s = now_s();
    p->current_fraction = 0;
    draw(p);
}

void bench_progress_within(bench_progress *p, const char *phase, long done, long expected)
{
    if (expected > 0) p->current_fraction = (double)done / (double)expected;
    if (p->current_fraction > 1) p->current_fraction = 1;
    if (expected > 1) snprintf(p->phase, sizeof p->phase, "%s %ld/%ld", phase, done, expected);
    else snprintf(p->phase, sizeof p->phase, "%s", phase);
    if (p->enabled && now_s() - p->last_draw_s >= redraw_interval_s) draw(p);
}

void bench_progress_step(bench_progress *p, int ran)
{
    if (p->done < p->total) ++p->done;
    if (ran) {
        ++p->ran;
        p->ran_s += now_s() - p->current_start_s;
    } else if (p->current_may_run && p->to_run > 0) {
        --p->to_run; /* skipped on the way: no longer expected to take time */
    }
    p->current_may_run = 0;
    p->current_fraction = 0;
    p->phase[0] = '\0';
}

void bench_progress_clear(bench_progress *p)
{
    if (!p->enabled || !p->drawn) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->drawn = 0;
}

void bench_progress_finish(bench_progress *p) { bench_progress_clear(p); }
