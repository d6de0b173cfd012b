/* .npy reader/writer: round trip and every malformed input named in the issue. */
#include "test_util.h"
#include "core/npy.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_raw(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* A v1 header with the given dict, padded to 64 bytes, then `payload` bytes of data. */
static void write_npy(const char *path, const char *dict, size_t payload)
{
    unsigned char buf[4096] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    size_t len = strlen(dict), total = (10 + len + 1 + 63) / 64 * 64;
    buf[8] = (unsigned char)((total - 10) & 0xff);
    buf[9] = (unsigned char)((total - 10) >> 8);
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', total - 11 - len);
    buf[total - 1] = '\n';
    for (size_t i = 0; i < payload; ++i) buf[total + i] = (unsigned char)(i * 7 + 1);
    write_raw(path, buf, total + payload);
}

static int expect_error(const char *path, const char *fragment)
{
    avk_npy t;
    attnvk_status s = avk_npy_read(path, &t);
    int ok = s != ATTNVK_OK && strstr(attnvk_last_error(), fragment) && strstr(attnvk_last_error(), path);
    EXPECT(ok, "%s: expected error containing '%s', got status %d '%s'", path, fragment, s, attnvk_last_error());
    return ok;
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
    return avk_test_finish(passed, 0);
}
