/* Kernel cache file format (core/cache.h): a payload comes back only when its
 * header and checksum verify; anything else is a miss that removes the file.
 *
 *   test_cache                 the unit tests (in the current folder)
 *   test_cache --verify FILE   exit 0 when FILE (named <kind>-<16 hex key>.<ext>) verifies;
 *                              used by test_cache_recovery.sh on caches the drivers filled */
#include "test_util.h"
#include "core/cache.h"
#include "core/checksum.h"
#include "core/error.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER = 40 };
static const char dir[] = "cache_unit";

static int verify_file(const char *path)
{
    const char *dash = strrchr(path, '-');
    char *end = NULL;
    uint64_t key = dash ? strtoull(dash + 1, &end, 16) : 0;
    if (!dash || end != dash + 17 || *end != '.') {
        fprintf(stderr, "%s: not named <kind>-<16 hex key>.<ext>\n", path);
        return 1;
    }
    size_t size = 0;
    void *payload = avk_cache_load(path, key, &size);
    printf("%s: %s (%zu payload bytes)\n", path, payload ? "valid" : "INVALID", size);
    free(payload);
    return payload ? 0 : 1;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

/* Files in the test folder other than `except` (temporaries left behind would show here). */
static int other_files(const char *except)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && (!except || strcmp(e->d_name, except) != 0)) ++n;
    closedir(d);
    return n;
}

/* Loading `bytes` from a file must miss and remove the file. */
static int expect_rejected(const char *path, uint64_t key, const void *bytes, size_t n, const char *what)
{
    write_bytes(path, bytes, n);
    size_t size = 123;
    void *got = avk_cache_load(path, key, &size);
    int ok = !got && size == 0 && access(path, F_OK) != 0;
    EXPECT(ok, "%s: loaded=%d size=%zu file still there=%d", what, got != NULL, size, access(path, F_OK) == 0);
    free(got);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--verify") == 0) return verify_file(argv[2]);
    int passed = 0;

    /* XXH64 reference values (libxxhash 0.8.1 / xxhsum -H1) */
    unsigned char ramp[101];
    for (int i = 0; i < 101; ++i) ramp[i] = (unsigned char)(i * 7 + 1);
    EXPECT(avk_xxh64("", 0, 0) == 0xef46db3751d8e999ull, "xxh64 of nothing");
    EXPECT(avk_xxh64("abc", 3, 0) == 0x44bc2cf5ad770999ull, "xxh64 abc");
    EXPECT(avk_xxh64("abc", 3, 1) == 0xbea9ca8199328908ull, "xxh64 abc seed 1");
    EXPECT(avk_xxh64("Nobody inspects the spammish repetition", 39, 0) == 0xfbcea83c8a378bf1ull, "xxh64 39 bytes");
    EXPECT(avk_xxh64(ramp, 101, 0) == 0x6bf452176f29bc13ull, "xxh64 101 bytes");
    EXPECT(avk_xxh64(ramp, 101, 0x6174746e766bull) == 0x28d30b96ff4936d8ull, "xxh64 101 bytes seeded");
    passed += avk_test_failures == 0;

    if (system("rm -rf cache_unit && mkdir cache_unit") != 0) return avk_test_finish(passed, 1);
    const uint64_t key = 0x0123456789abcdefull;
    const char *path = "cache_unit/ocl-0123456789abcdef.bin";
    unsigned char payload[64];
    for (int i = 0; i < 64; ++i) payload[i] = (unsigned char)(i * 37 + 5);

    /* round trip: header + payload, written atomically (no temporary left beside it) */
    EXPECT(avk_cache_store(path, key, payload, sizeof payload), "store: %s", attnvk_last_error());
    EXPECT(file_size(path) == HEADER + (long)sizeof payload, "file size %ld", file_size(path));
    EXPECT(other_files("ocl-0123456789abcdef.bin") == 0, "temporary files left: %d", other_files("ocl-0123456789abcdef.bin"));
    size_t size = 0;
    unsigned char *back = avk_cache_load(path, key, &size);
    EXPECT(back && size == sizeof payload && memcmp(back, payload, size) == 0, "payload back");
    passed += back != NULL;
    unsigned char good[HEADER + 64];
    FILE *f = fopen(path, "rb");
    EXPECT(f && fread(good, 1, sizeof good, f) == sizeof good, "read the stored file");
    if (f) fclose(f);
    EXPECT(memcmp(good, "AVKCACHE", 8) == 0, "magic");
    free(back);

    /* every truncation, from empty to one byte short */
    int all = 1;
    for (size_t n = 0; n < sizeof good; ++n) all &= expect_rejected(path, key, good, n, "truncated");
    passed += all;
    /* one more byte than the header promises */
    unsigned char longer[sizeof good + 1];
    memcpy(longer, good, sizeof good);
    longer[sizeof good] = 0;
    passed += expect_rejected(path, key, longer, sizeof longer, "trailing byte");
    /* a flipped bit anywhere: magic, version, sizes, key, checksum, payload */
    all = 1;
    for (size_t i = 0; i < sizeof good; ++i)
        for (int bit = 0; bit < 8; bit += 3) {
            unsigned char bad[sizeof good];
            memcpy(bad, good, sizeof good);
            bad[i] ^= (unsigned char)(1u << bit);
            char what[64];
            snprintf(what, sizeof what, "bit %d of byte %zu flipped", bit, i);
            all &= expect_rejected(path, key, bad, sizeof bad, what);
        }
    passed += all;
    /* another key's file renamed onto this name */
    passed += expect_rejected(path, key ^ 1, good, sizeof good, "another key");
    /* a cache from before the header: the bare payload */
    passed += expect_rejected(path, key, payload, sizeof payload, "old format without header");

    /* a miss creates nothing; a folder where the file should be is left alone */
    EXPECT(!avk_cache_load(path, key, &size) && access(path, F_OK) != 0, "missing file");
    EXPECT(mkdir(path, 0755) == 0 && !avk_cache_load(path, key, &size) && access(path, F_OK) == 0,
           "a folder at the path is neither loaded nor removed");
    rmdir(path);
    /* an unwritable place: store fails without leaving an error behind for the caller */
    avk_clear_error();
    EXPECT(!avk_cache_store("cache_unit/no-such-folder/x-0000000000000001.bin", 1, payload, sizeof payload) &&
               attnvk_last_error()[0] == '\0',
           "failed store: last error '%s'", attnvk_last_error());
    /* storing over a corrupted file replaces it */
    write_bytes(path, "garbage", 7);
    EXPECT(avk_cache_store(path, key, payload, sizeof payload), "store over garbage");
    back = avk_cache_load(path, key, &size);
    EXPECT(back && size == sizeof payload && memcmp(back, payload, size) == 0, "fresh file after garbage");
    passed += back != NULL;
    free(back);
    EXPECT(verify_file(path) == 0, "--verify accepts a stored file");
    EXPECT(other_files("ocl-0123456789abcdef.bin") == 0, "temporary files left at the end");
    return avk_test_finish(passed, 0);
}
