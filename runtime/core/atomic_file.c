#include "core/atomic_file.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_printf(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
}

/* The folder holding path, for the fsync that makes the rename durable. */
static void fsync_parent(const char *path)
{
    char *dir = dup_printf(path, "");
    if (!dir) return;
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else strcpy(dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd); /* some filesystems refuse fsync on folders: the rename still happened */
        close(fd);
    }
    free(dir);
}

attnvk_status avk_atomic_open(avk_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    if (!path || !*path) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "empty output path");
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return avk_fail(ATTNVK_ERROR_IO, "%s: not a regular file", path);
    af->path = dup_printf(path, "");
    af->tmp_path = dup_printf(path, ".XXXXXX");
    if (!af->path || !af->tmp_path) {
        avk_atomic_abort(af);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: out of host memory", path);
    }
    int fd = mkstemp(af->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(af->tmp_path);
        af->tmp_path = NULL;
        avk_atomic_abort(af);
        return avk_fail(ATTNVK_ERROR_IO, "%s: cannot create: %s", path, strerror(e));
    }
    /* mkstemp makes 0600; results and outputs are ordinary files (0666 less the umask) */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        int e = errno;
        close(fd);
        avk_atomic_abort(af);
        return avk_fail(ATTNVK_ERROR_IO, "%s: cannot create: %s", path, strerror(e));
    }
    return ATTNVK_OK;
}

attnvk_status avk_atomic_commit(avk_atomic_file *af)
{
    if (!af->f || !af->tmp_path) {
        avk_atomic_abort(af);
        return avk_fail(ATTNVK_ERROR_IO, "atomic file used after failure");
    }
    int ok = !ferror(af->f);
    int e = ok ? 0 : errno ? errno : EIO; /* a failed fwrite left its reason (ENOSPC, EFBIG) in errno */
    if (ok && fflush(af->f) != 0) ok = 0, e = errno;
    if (ok && fsync(fileno(af->f)) != 0) ok = 0, e = errno;
    if (fclose(af->f) != 0 && ok) ok = 0, e = errno;
    af->f = NULL;
    if (ok && rename(af->tmp_path, af->path) != 0) ok = 0, e = errno;
    if (!ok) {
        attnvk_status s = avk_fail(ATTNVK_ERROR_IO, "%s: write failed: %s", af->path, strerror(e ? e : EIO));
        avk_atomic_abort(af);
        return s;
    }
    fsync_parent(af->path);
    free(af->tmp_path);
    af->tmp_path = NULL;
    free(af->path);
    af->path = NULL;
    return ATTNVK_OK;
}

void avk_atomic_abort(avk_atomic_file *af)
{
    if (af->f) fclose(af->f);
    if (af->tmp_path) remove(af->tmp_path);
    free(af->tmp_path);
    free(af->path);
    memset(af, 0, sizeof *af);
}

attnvk_status avk_atomic_write(const char *path, const void *data, size_t size)
{
    avk_atomic_file af;
    attnvk_status s = avk_atomic_open(&af, path);
    if (s != ATTNVK_OK) return s;
    if (size) (void)fwrite(data, 1, size, af.f); /* a short write sets ferror: commit reports it */
    return avk_atomic_commit(&af);
}

attnvk_status avk_check_writable(const char *path)
{
    avk_atomic_file af;
    attnvk_status s = avk_atomic_open(&af, path);
    if (s != ATTNVK_OK) return s;
    avk_atomic_abort(&af);
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
        /* replacing by rename needs only the folder, but a file we may not write is a
         * file its owner meant to keep */
        return avk_fail(ATTNVK_ERROR_IO, "%s: %s", path, strerror(EACCES));
    }
    return ATTNVK_OK;
}
