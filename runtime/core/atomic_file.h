/* Files that are either the old content or the whole new content, never a
 * prefix: written to a temporary file beside the target, fsync'd, renamed. */
#ifndef ATTNVK_ATOMIC_FILE_H
#define ATTNVK_ATOMIC_FILE_H

#include "attnvk/attnvk.h"

#include <stddef.h>
#include <stdio.h>

typedef struct avk_atomic_file {
    FILE *f;         /* write here between open and commit */
    char *path;      /* the target */
    char *tmp_path;  /* <target>.XXXXXX in the same folder (rename stays on one filesystem) */
} avk_atomic_file;

/* Creates the temporary file. ATTNVK_ERROR_IO with "<path>: <reason>" when the folder is not writable. */
attnvk_status avk_atomic_open(avk_atomic_file *af, const char *path);
/* Flushes, fsyncs, closes and renames over the target; on any failure the target is
 * untouched, the temporary file removed, and the error names the path and the reason
 * (a full disk shows as "No space left on device"). */
attnvk_status avk_atomic_commit(avk_atomic_file *af);
/* Drops the temporary file (safe after a failed open or commit, and twice). */
void avk_atomic_abort(avk_atomic_file *af);
/* open + one write + commit. */
attnvk_status avk_atomic_write(const char *path, const void *data, size_t size);
/* Whether a file could be created at path (the folder exists and is writable; an existing
 * target is a regular file we may replace). Tried for real with a temporary file, so
 * read-only mounts and permissions are both caught. ATTNVK_OK or ATTNVK_ERROR_IO with the reason. */
attnvk_status avk_check_writable(const char *path);

#endif
