#include "core/cache.h"

#include <errno.h>
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

static int make_dirs(const char *path)
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
    return make_dirs(out) == 0;
}

int avk_cache_path(const char *kind, uint64_t key, const char *ext, char *out, size_t n)
{
    char dir[900];
    if (!avk_cache_dir(dir, sizeof dir)) return 0;
    snprintf(out, n, "%s/%s-%016llx.%s", dir, kind, (unsigned long long)key, ext);
    return 1;
}

void *avk_cache_load(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *data = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len > 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)len);
        if (data && fread(data, 1, (size_t)len, f) != (size_t)len) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    if (data) *size = (size_t)len;
    return data;
}

int avk_cache_store(const char *path, const void *data, size_t size)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return 0;
    int ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) remove(tmp);
    return ok;
}
