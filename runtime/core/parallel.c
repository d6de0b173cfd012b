/* A persistent pool: worker threads start on the first call that needs them
 * (grown when avk_cpu_threads() asks for more later), sleep between jobs,
 * and are joined at exit. One job runs at a time; the caller and the woken
 * workers claim its slices from a shared counter. */
#include "core/parallel.h"
#include "core/reference.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { MAX_THREADS = 256 };

typedef struct job {
    void (*fn)(void *ctx, size_t begin, size_t end);
    void *ctx;
    size_t n, align, slices;
    atomic_size_t next; /* the next slice to claim */
} job;

static struct {
    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t wake, idle; /* a job was posted; busy fell to 0 */
    job *current;              /* open for claiming, else NULL */
    unsigned long generation;  /* counts posted jobs */
    int busy;                  /* workers holding `current` */
    int stop;
    int nworkers;
    pthread_t workers[MAX_THREADS];
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

/* One job at a time; a second caller that finds it taken runs its loop inline. */
static pthread_mutex_t submit = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
/* Set on pool threads, and on a caller while it runs slices: a nested call runs inline. */
static _Thread_local int in_task;

static void slice_bounds(const job *j, size_t t, size_t *begin, size_t *end)
{
    *begin = j->n * t / j->slices / j->align * j->align;
    *end = t + 1 == j->slices ? j->n : j->n * (t + 1) / j->slices / j->align * j->align;
}

static void run_slices(job *j)
{
    for (size_t t; (t = atomic_fetch_add(&j->next, 1)) < j->slices;) {
        size_t begin, end;
        slice_bounds(j, t, &begin, &end);
        if (begin < end) j->fn(j->ctx, begin, end);
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    in_task = 1;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    seen = pool.generation;
    for (;;) {
        while (!pool.stop && (pool.current == NULL || seen == pool.generation))
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stop) break;
        seen = pool.generation;
        job *j = pool.current;
        ++pool.busy;
        pthread_mutex_unlock(&pool.lock);
        run_slices(j);
        pthread_mutex_lock(&pool.lock);
        if (--pool.busy == 0) pthread_cond_signal(&pool.idle);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* At exit: wake every worker with stop and join it (not from a pool thread,
 * which would wait for itself; a job still running elsewhere finishes first). */
static void pool_shutdown(void)
{
    if (in_task) return;
    pthread_mutex_lock(&pool.lock);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.wake);
    int n = pool.nworkers;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < n; ++i) pthread_join(pool.workers[i], NULL);
    pthread_mutex_lock(&pool.lock);
    pool.nworkers = 0;
    pthread_mutex_unlock(&pool.lock);
}

/* After fork the child has none of the parent's workers: it starts its own. */
static void pool_after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.idle, NULL);
    pthread_mutex_init(&submit, NULL);
    pool.current = NULL;
    pool.busy = 0;
    pool.stop = 0;
    pool.nworkers = 0;
    in_task = 0;
}

static void register_exit(void)
{
    atexit(pool_shutdown);
    pthread_atfork(NULL, NULL, pool_after_fork_child);
}

/* Workers up to `want` (the caller is one more thread); with the submit lock held.
 * A worker that cannot start leaves fewer threads: the slices still all run. */
static void grow(int want)
{
    pthread_once(&exit_once, register_exit);
    if (want > MAX_THREADS - 1) want = MAX_THREADS - 1;
    pthread_mutex_lock(&pool.lock);
    int stopped = pool.stop;
    pthread_mutex_unlock(&pool.lock);
    if (stopped) return; /* exiting: the caller runs the job alone */
    while (pool.nworkers < want) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0) break;
        pthread_mutex_lock(&pool.lock);
        pool.workers[pool.nworkers++] = t;
        pthread_mutex_unlock(&pool.lock);
    }
}

void avk_parallel_for(size_t n, size_t min_items, size_t align, void (*fn)(void *ctx, size_t begin, size_t end),
                      void *ctx)
{
    if (n == 0) return;
    if (align < 1) align = 1;
    if (min_items < 1) min_items = 1;
    /* a job too small to split never asks for the thread count (sysconf reads /sys per call) */
    size_t threads = n / min_items >= 2 ? (size_t)avk_cpu_threads() : 1; /* 1..256 */
    if (threads > n / min_items) threads = n / min_items ? n / min_items : 1;
    if (threads == 1 || in_task || pthread_mutex_trylock(&submit) != 0) {
        /* one slice, a nested call, or another thread's job running: inline */
        int outer = in_task;
        in_task = 1;
        fn(ctx, 0, n);
        in_task = outer;
        return;
    }
    grow((int)threads - 1);
    job j = {.fn = fn, .ctx = ctx, .n = n, .align = align, .slices = threads};
    atomic_init(&j.next, 0);
    pthread_mutex_lock(&pool.lock);
    int helpers = pool.nworkers;
    if (helpers > 0) {
        pool.current = &j;
        ++pool.generation;
        if ((size_t)helpers >= threads - 1) pthread_cond_broadcast(&pool.wake);
        else
            for (size_t t = 1; t < threads; ++t) pthread_cond_signal(&pool.wake);
    }
    pthread_mutex_unlock(&pool.lock);
    in_task = 1;
    run_slices(&j);
    in_task = 0;
    /* every slice is claimed: close the job to late workers, wait for those holding it */
    pthread_mutex_lock(&pool.lock);
    pool.current = NULL;
    while (pool.busy > 0) pthread_cond_wait(&pool.idle, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&submit);
}
