/* .npy reader/writer: round trip and every malformed input named in the issue. */
#include "test_util.h"
#include "core/npy.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void write_raw(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* A v1 file in buf (4096 bytes): the dict padded to 64 bytes and ended by '\n', then
 * `payload` bytes of data. Returns the file's length. */
static size_t build_npy(unsigned char *buf, const char *dict, size_t payload)
{
    static const unsigned char pre[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    memcpy(buf, pre, 8);
    size_t len = strlen(dict), total = (10 + len + 1 + 63) / 64 * 64;
    buf[8] = (unsigned char)((total - 10) & 0xff);
    buf[9] = (unsigned char)((total - 10) >> 8);
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', total - 11 - len);
    buf[total - 1] = '\n';
    for (size_t i = 0; i < payload; ++i) buf[total + i] = (unsigned char)(i * 7 + 1);
    return total + payload;
}

static void write_npy(const char *path, const char *dict, size_t payload)
{
    unsigned char buf[4096];
    write_raw(path, buf, build_npy(buf, dict, payload));
}

static int expect_error(const char *path, const char *fragment)
{
    avk_npy t;
    attnvk_status s = avk_npy_read(path, &t);
    int ok = s != ATTNVK_OK && strstr(attnvk_last_error(), fragment) && strstr(attnvk_last_error(), path);
    EXPECT(ok, "%s: expected error containing '%s', got status %d '%s'", path, fragment, s, attnvk_last_error());
    return ok;
}

/* Mutants of a valid file that the old reader took as (wrong) data: the header must end
 * in '\n' at its declared length, the dict must be well formed, and header + data must
 * be the whole file. */
static int header_mutants(void)
{
    int passed = 0;
    static const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 7, 16), }";
    unsigned char buf[4096], mut[4096];
    size_t n = build_npy(buf, dict, 7 * 16 * 4), newline = n - 7 * 16 * 4 - 1;
    write_raw("valid.npy", buf, n);
    avk_npy t;
    EXPECT(avk_npy_read("valid.npy", &t) == ATTNVK_OK, "valid: %s", attnvk_last_error());
    avk_npy_free(&t);

    /* header_len 64 (bytes 8-9): the header ends right after the shape tuple, the data
     * would start 54 bytes early inside the padding */
    memcpy(mut, buf, n);
    mut[8] = 64;
    mut[9] = 0;
    write_raw("short-header-len.npy", mut, n);
    passed += expect_error("short-header-len.npy", "no newline at its declared end");
    /* header_len one short: ends on the last padding space */
    memcpy(mut, buf, n);
    --mut[8];
    write_raw("header-len-minus-1.npy", mut, n);
    passed += expect_error("header-len-minus-1.npy", "no newline");
    /* header_len one long: the newline is inside, the first data byte ends the header */
    memcpy(mut, buf, n);
    ++mut[8];
    write_raw("header-len-plus-1.npy", mut, n);
    passed += expect_error("header-len-plus-1.npy", "no newline");
    /* two bytes inserted into the dict, header_len unchanged */
    memcpy(mut, buf, 20);
    memcpy(mut + 20, "  ", 2);
    memcpy(mut + 22, buf + 20, n - 20);
    write_raw("inserted-bytes.npy", mut, n + 2);
    passed += expect_error("inserted-bytes.npy", "no newline");
    /* the newline replaced by a space */
    memcpy(mut, buf, n);
    mut[newline] = ' ';
    write_raw("no-newline.npy", mut, n);
    passed += expect_error("no-newline.npy", "no newline");
    /* four bytes more than header + shape account for */
    memcpy(mut, buf, n);
    memset(mut + n, 0, 4);
    write_raw("trailing-bytes.npy", mut, n + 4);
    passed += expect_error("trailing-bytes.npy", "4 bytes after the data");

    /* dicts that are not well formed */
    static const struct { const char *name, *dict, *error; } dicts[] = {
        {"no-open-brace.npy", "'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "does not start with '{'"},
        {"no-close-brace.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "expected a quoted key"},
        {"text-after-dict.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", "after the closing '}'"},
        {"unknown-key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unknown key 'x'"},
        {"twice.npy", "{'descr': '<f4', 'shape': (2,), 'fortran_order': False, 'shape': (2,)}", "'shape' twice"},
        {"no-comma.npy", "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
        {"shape-int.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "not a tuple"},
        {"shape-open.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, }", "non-integer"},
        {"descr-list.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", "unsupported dtype"},
        {"order-0.npy", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "neither True nor False"},
    };
    for (size_t i = 0; i < sizeof dicts / sizeof *dicts; ++i) {
        write_npy(dicts[i].name, dicts[i].dict, 8);
        passed += expect_error(dicts[i].name, dicts[i].error);
    }
    /* what numpy also accepts still reads: double quotes, no spaces, any key order, no
     * trailing comma, a 0-d array */
    static const char *const fine[] = {
        "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,)}",
        "{'shape': (1, 2), 'fortran_order': False, 'descr': '<f4'}",
    };
    for (size_t i = 0; i < 2; ++i) {
        write_npy("fine.npy", fine[i], 8);
        EXPECT(avk_npy_read("fine.npy", &t) == ATTNVK_OK && t.count == 2, "%s: %s", fine[i], attnvk_last_error());
        avk_npy_free(&t);
        ++passed;
    }
    write_npy("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4);
    EXPECT(avk_npy_read("scalar.npy", &t) == ATTNVK_OK && t.ndim == 0 && t.count == 1, "0-d: %s", attnvk_last_error());
    avk_npy_free(&t);
    return passed + 1;
}

/* Headers claiming 2^33..2^40 elements in a small file fail on the size check, before
 * anything that large is allocated: with the address space capped at 2 GiB an
 * allocation first would fail as "out of host memory" instead. (Sanitizers reserve
 * terabytes of address space, so there the cap is left off; ASan would abort on the
 * allocation itself.) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static int huge_shapes(void)
{
    int passed = 0;
    static const struct { const char *name, *shape, *error; } cases[] = {
        {"claims-2^33.npy", "(8589934592,)", "truncated: 16 of 34359738368 data bytes"},
        {"claims-2^40.npy", "(1048576, 1048576)", "truncated: 16 of 4398046511104 data bytes"},
        {"claims-2^40-f16.npy", "(1024, 1024, 1024, 1024)", "truncated: 16 of 2199023255552 data bytes"},
    };
#ifndef UNDER_SANITIZER
    struct rlimit saved, capped;
    int have_cap = getrlimit(RLIMIT_AS, &saved) == 0;
    capped = saved;
    capped.rlim_cur = (rlim_t)2 << 30;
    if (have_cap && (saved.rlim_cur == RLIM_INFINITY || saved.rlim_cur > capped.rlim_cur))
        have_cap = setrlimit(RLIMIT_AS, &capped) == 0;
#endif
    for (int i = 0; i < 3; ++i) {
        char dict[160];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", i == 2 ? "<f2" : "<f4",
                 cases[i].shape);
        write_npy(cases[i].name, dict, 16);
        passed += expect_error(cases[i].name, cases[i].error);
    }
#ifndef UNDER_SANITIZER
    if (have_cap) setrlimit(RLIMIT_AS, &saved);
#endif
    write_npy("claims-over-2^40.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1048577, 1048576), }", 16);
    passed += expect_error("claims-over-2^40.npy", "array too large");
    return passed;
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    for (int ca = 0, cb = 0; same && ca != EOF;) {
        ca = fgetc(fa);
        cb = fgetc(fb);
        same = ca == cb;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* Files in the current folder whose name starts with prefix (temporaries are <target>.XXXXXX). */
static int files_starting(const char *prefix)
{
    DIR *d = opendir(".");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* A write that fails part-way (here: the file size limit, as a full disk would) leaves
 * the previous file byte-for-byte and no temporary; the error names the file. */
static int write_failure_keeps_old_file(void)
{
    int passed = 0;
    float data[4096];
    for (int i = 0; i < 4096; ++i) data[i] = (float)i;
    int64_t small = 16, big = 4096;
    EXPECT(avk_npy_write("keep.npy", data, 1, &small) == ATTNVK_OK, "first write: %s", attnvk_last_error());
    EXPECT(avk_npy_write("keep-copy.npy", data, 1, &small) == ATTNVK_OK, "copy: %s", attnvk_last_error());
    struct rlimit saved, capped;
    EXPECT(getrlimit(RLIMIT_FSIZE, &saved) == 0, "getrlimit");
    capped = saved;
    capped.rlim_cur = 4096; /* the 16 KiB array does not fit */
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    int capped_ok = setrlimit(RLIMIT_FSIZE, &capped) == 0;
    attnvk_status s = avk_npy_write("keep.npy", data, 1, &big);
    if (capped_ok) setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old_handler);
    EXPECT(capped_ok, "setrlimit(RLIMIT_FSIZE)");
    passed += capped_ok;
    EXPECT(s == ATTNVK_ERROR_IO && strstr(attnvk_last_error(), "keep.npy: write failed: File too large"),
           "status %d '%s'", s, attnvk_last_error());
    passed += s == ATTNVK_ERROR_IO;
    EXPECT(same_file("keep.npy", "keep-copy.npy"), "the old keep.npy is intact");
    passed += same_file("keep.npy", "keep-copy.npy");
    EXPECT(files_starting("keep.npy") == 1, "temporary files left: %d", files_starting("keep.npy") - 1);
    passed += files_starting("keep.npy") == 1;
    /* an unwritable destination changes nothing either */
    EXPECT(avk_npy_write("no-such-dir/o.npy", data, 1, &small) == ATTNVK_ERROR_IO &&
               strstr(attnvk_last_error(), "no-such-dir/o.npy: cannot create"),
           "missing folder: '%s'", attnvk_last_error());
    return passed + 1;
}

int main(void)
{
    int passed = 0;
    /* round trip f32 */
    float data[2 * 3 * 4 * 5];
    attnvk_fill_random(data, 120, 7);
    int64_t shape[4] = {2, 3, 4, 5};
    EXPECT(avk_npy_write("rt.npy", data, 4, shape) == ATTNVK_OK, "write: %s", attnvk_last_error());
    avk_npy t;
    EXPECT(avk_npy_read("rt.npy", &t) == ATTNVK_OK, "read: %s", attnvk_last_error());
    EXPECT(t.ndim == 4 && t.shape[0] == 2 && t.shape[3] == 5 && t.count == 120, "shape back");
    EXPECT(t.data && memcmp(t.data, data, sizeof data) == 0, "data back bit-exact");
    avk_npy_free(&t);
    ++passed;

    /* float16 input, version 2 header */
    {
        unsigned char buf[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
        const char *dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
        size_t len = strlen(dict), total = (12 + len + 1 + 63) / 64 * 64;
        buf[8] = (unsigned char)(total - 12);
        memcpy(buf + 12, dict, len);
        memset(buf + 12 + len, ' ', total - 13 - len);
        buf[total - 1] = '\n';
        uint16_t h[3] = {0x3c00, 0xc000, 0x3800}; /* 1, -2, 0.5 */
        memcpy(buf + total, h, 6);
        write_raw("f16.npy", buf, total + 6);
        EXPECT(avk_npy_read("f16.npy", &t) == ATTNVK_OK, "f16 read: %s", attnvk_last_error());
        EXPECT(t.stored_float16 && t.count == 3 && t.data[0] == 1.0f && t.data[1] == -2.0f && t.data[2] == 0.5f,
               "f16 values");
        avk_npy_free(&t);
        ++passed;
    }

    passed += expect_error("missing-file.npy", "cannot open");
    passed += expect_error("/dev/null", "not a regular file"); /* no size to check first */
    write_raw("bad-magic.npy", "PK\x03\x04hello world", 15);
    passed += expect_error("bad-magic.npy", "not a .npy file");
    write_raw("short.npy", "\x93NUMPY\x01\x00\x50", 9);
    passed += expect_error("short.npy", "truncated");
    write_npy("header-cut.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0);
    EXPECT(truncate("header-cut.npy", 30) == 0, "cut the file inside its header");
    passed += expect_error("header-cut.npy", "truncated");
    write_npy("data-cut.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20);
    passed += expect_error("data-cut.npy", "truncated");
    write_npy("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16);
    passed += expect_error("f8.npy", "unsupported dtype '<f8'");
    write_npy("i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8);
    passed += expect_error("i4.npy", "unsupported dtype");
    { /* block layouts: uint8 and int8 as stored, only through avk_npy_read_bytes */
        static const char *const byte_types[] = {"|u1", "|i1"};
        for (int b = 0; b < 2; ++b) {
            char dict[96], name[16];
            unsigned char buf[4096]; /* build_npy's size */
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }", byte_types[b]);
            snprintf(name, sizeof name, "bytes%c.npy", "01"[b]);
            size_t total = build_npy(buf, dict, 0);
            const unsigned char values[6] = {0, 1, 255, 7, 0, 128};
            memcpy(buf + total, values, 6);
            write_raw(name, buf, total + 6);
            avk_npy t;
            EXPECT(avk_npy_read_bytes(name, "the block layout", &t) == ATTNVK_OK, "%s read: %s", byte_types[b],
                   attnvk_last_error());
            EXPECT(t.ndim == 2 && t.count == 6 && t.bytes && !t.data && memcmp(t.bytes, values, 6) == 0, "%s values",
                   byte_types[b]);
            avk_npy_free(&t);
            passed += expect_error(name, "unsupported dtype"); /* not a tensor */
        }
        avk_npy t;
        EXPECT(avk_npy_read_bytes("f8.npy", "the block layout", &t) != ATTNVK_OK &&
                   strstr(attnvk_last_error(), "the block layout has dtype '<f8'; it must be uint8 '|u1' or int8 '|i1'"),
               "a float64 layout: %s", attnvk_last_error());
        passed += 3;
    }
    write_npy("be.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
    passed += expect_error("be.npy", "unsupported dtype '>f4'");
    write_npy("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
    passed += expect_error("fortran.npy", "Fortran");
    write_npy("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", 8);
    passed += expect_error("noshape.npy", "malformed");
    write_npy("badshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8);
    passed += expect_error("badshape.npy", "malformed");
    write_npy("version9.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
    {
        FILE *f = fopen("version9.npy", "r+b");
        fseek(f, 6, SEEK_SET);
        fputc(9, f);
        fclose(f);
    }
    passed += expect_error("version9.npy", "version 9");
    passed += header_mutants();
    passed += huge_shapes();
    passed += write_failure_keeps_old_file();
    return avk_test_finish(passed, 0);
}
