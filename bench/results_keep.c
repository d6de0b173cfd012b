/* Results that could not be stored in the history: kept as a results file, so a long
 * bench run is never lost to a database problem at its very end. */
#include "results_file.h"

#include "core/atomic_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int results_keep_unsaved(const char *json, char *path, size_t n)
{
    char name[96], stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime_r(&t, &tm));
    snprintf(name, sizeof name, "attnvk-unsaved-%s-%ld.json", stamp, (long)getpid());
    /* the current folder first (where the person who ran the bench looks), then $TMPDIR */
    const char *tmpdir = getenv("TMPDIR");
    char cwd[1024];
    const char *folders[] = {getcwd(cwd, sizeof cwd) ? cwd : ".", tmpdir && tmpdir[0] == '/' ? tmpdir : "/tmp"};
    for (size_t i = 0; i < sizeof folders / sizeof *folders; ++i) {
        if ((size_t)snprintf(path, n, "%s/%s", folders[i], name) >= n) continue;
        if (avk_atomic_write(path, json, strlen(json)) == ATTNVK_OK) return 0;
    }
    snprintf(path, n, "%s", attnvk_last_error());
    return -1;
}
