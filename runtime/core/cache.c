#include "core/cache.h"
#include "core/atomic_file.h"
#include "core/checksum.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t avk_hash(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t avk_hash_str(const char *s, uint64_t seed) { return avk_hash(s, strlen(s), seed); }

int avk_make_dirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}

int avk_cache_dir(char *out, size_t n)
{
    const char *explicit_dir = getenv("ATTNVK_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (explicit_dir && strcmp(explicit_dir, "off") == 0) return 0;
    if (explicit_dir && *explicit_dir) snprintf(out, n, "%s", explicit_dir);
    else if (xdg && *xdg) snprintf(out, n, "%s/attnvk", xdg);
    else if (home && *home) snprintf(out, n, "%s/.cache/attnvk", home);
    else return 0;
    return avk_make_dirs(out) == 0;
}

int avk_cache_path(const char *kind, uint64_t key, const char *ext, char *out, size_t n)
{
    char dir[900];
    if (!avk_cache_dir(dir, sizeof dir)) return 0;
    snprintf(out, n, "%s/%s-%016llx.%s", dir, kind, (unsigned long long)key, ext);
    return 1;
}

/* Cache file layout, little-endian:
 *    0  8  magic "AVKCACHE"
 *    8  4  format version
 *   12  4  header size (CACHE_HEADER_SIZE)
 *   16  8  key (the one in the file name)
 *   24  8  payload size
 *   32  8  avk_xxh64(payload, seed = key)
 *   40     payload
 * Files from before the header existed fail the magic and are replaced. */
enum { CACHE_HEADER_SIZE = 40, CACHE_FORMAT_VERSION = 1 };
static const char cache_magic[8] = {'A', 'V', 'K', 'C', 'A', 'C', 'H', 'E'};

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

static int read_fully(int fd, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        p += got;
        n -= (size_t)got;
    }
    return 1;
}

/* Whether the header belongs to this key and promises exactly the bytes the file has
 * (checked before anything is allocated). */
static int header_valid(const unsigned char *h, uint64_t key, off_t file_size)
{
    return memcmp(h, cache_magic, sizeof cache_magic) == 0 && get_le(h + 8, 4) == CACHE_FORMAT_VERSION &&
           get_le(h + 12, 4) == CACHE_HEADER_SIZE && get_le(h + 16, 8) == key &&
           get_le(h + 24, 8) == (uint64_t)file_size - CACHE_HEADER_SIZE;
}

/* Removes a file that failed verification, unless another process has meanwhile
 * renamed a fresh one onto the name (then that one is left alone). */
static void discard_bad_file(const char *path, const struct stat *seen)
{
    struct stat now;
    if (stat(path, &now) == 0 && now.st_dev == seen->st_dev && now.st_ino == seen->st_ino) unlink(path);
}

void *avk_cache_load(const char *path, uint64_t key, size_t *size)
{
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL; /* a miss */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* not ours to judge or remove */
        close(fd);
        return NULL;
    }
    unsigned char header[CACHE_HEADER_SIZE];
    unsigned char *payload = NULL;
    size_t n = 0;
    int valid = st.st_size > CACHE_HEADER_SIZE && read_fully(fd, header, sizeof header) &&
                header_valid(header, key, st.st_size);
    if (valid) {
        n = (size_t)st.st_size - CACHE_HEADER_SIZE;
        payload = malloc(n);
        if (!payload) { /* says nothing about the file: keep it */
            close(fd);
            return NULL;
        }
        valid = read_fully(fd, payload, n) && avk_xxh64(payload, n, key) == get_le(header + 32, 8);
    }
    close(fd);
    if (!valid) {
        free(payload);
        discard_bad_file(path, &st);
        return NULL;
    }
    *size = n;
    return payload;
}

int avk_cache_store(const char *path, uint64_t key, const void *data, size_t size)
{
    if (!size) return 0;
    unsigned char header[CACHE_HEADER_SIZE];
    memcpy(header, cache_magic, sizeof cache_magic);
    put_le(header + 8, CACHE_FORMAT_VERSION, 4);
    put_le(header + 12, CACHE_HEADER_SIZE, 4);
    put_le(header + 16, key, 8);
    put_le(header + 24, size, 8);
    put_le(header + 32, avk_xxh64(data, size, key), 8);
    avk_atomic_file af;
    int ok = avk_atomic_open(&af, path) == ATTNVK_OK;
    if (ok) {
        /* a short write sets the stream's error flag, which commit reports */
        (void)fwrite(header, 1, sizeof header, af.f);
        (void)fwrite(data, 1, size, af.f);
        ok = avk_atomic_commit(&af) == ATTNVK_OK;
    }
    if (!ok) avk_clear_error(); /* the run goes on: its last error stays about what failed it */
    return ok;
}
