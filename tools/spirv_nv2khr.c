/* Build-time tool: spirv_nv2khr [--acc-to-a N[:I0,I1,..]] IN.spv OUT.spv
 * rewrites a module compiled against SPV_NV_cooperative_matrix into
 * SPV_KHR_cooperative_matrix (spirv_nv2khr_rewrite.c, docs/spirv-nv2khr.md).
 * --acc-to-a: accumulators converted into A operands become N element moves
 * per lane, A element i from accumulator element Ii (default i). Bad input: one line on
 * stderr, exit 2; an I/O failure: exit 1. OUT is written to a temporary file
 * and renamed, so a failed run never leaves a half-written module behind. */
#include "spirv_nv2khr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_file(const char *path, uint32_t **words, size_t *count, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, bytes = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + bytes, 1, cap - bytes, f)) > 0;) {
        bytes += got;
        if (bytes == cap) {
            unsigned char *grown = realloc(buf, cap * 2);
            if (!grown) free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (!buf || read_error) {
        free(buf);
        snprintf(err, err_size, "cannot read %s", path);
        return 1;
    }
    if (bytes % 4) {
        free(buf);
        snprintf(err, err_size, "truncated: %zu bytes is not a whole number of SPIR-V words", bytes);
        return 2;
    }
    *words = (uint32_t *)(void *)buf; /* malloc's alignment suits words */
    *count = bytes / 4;
    /* a module written with the other byte order reads as the swapped magic */
    if (*count && (*words)[0] == 0x03022307u)
        for (size_t i = 0; i < *count; ++i) {
            uint32_t v = (*words)[i];
            (*words)[i] = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
        }
    return 0;
}

static int write_file(const char *path, const uint32_t *words, size_t count, char *err, size_t err_size)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        snprintf(err, err_size, "output path too long");
        return 1;
    }
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(words, 4, count, f) == count;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

/* "N" or "N:I0,I1,...,I(N-1)"; 0 on success. */
static int parse_acc_to_a(const char *s, avk_nv2khr_options *o, uint8_t *order)
{
    char *end;
    unsigned long n = strtoul(s, &end, 10);
    if (n == 0 || n > SPV_ACC_TO_A_MAX) return -1;
    o->acc_to_a_elements = (uint32_t)n;
    if (*end == '\0') return 0;
    if (*end != ':') return -1;
    for (unsigned long i = 0; i < n; ++i) {
        unsigned long v = strtoul(end + 1, &end, 10);
        if (v >= n || *end != (i + 1 == n ? '\0' : ',')) return -1;
        order[i] = (uint8_t)v;
    }
    o->acc_to_a_order = order;
    return 0;
}

int main(int argc, char **argv)
{
    avk_nv2khr_options opts = {0};
    uint8_t order[SPV_ACC_TO_A_MAX];
    if (argc == 5 && !strcmp(argv[1], "--acc-to-a") && parse_acc_to_a(argv[2], &opts, order) == 0) argv += 2, argc -= 2;
    if (argc != 3) {
        fprintf(stderr, "usage: spirv_nv2khr [--acc-to-a N[:I0,I1,..]] IN.spv OUT.spv\n");
        return 2;
    }
    char err[256] = "";
    uint32_t *in = NULL, *out = NULL;
    size_t n = 0, out_n = 0;
    int rc = read_file(argv[1], &in, &n, err, sizeof err);
    if (rc == 0 && avk_spirv_nv2khr_with(in, n, &opts, &out, &out_n, err, sizeof err) != 0) rc = 2;
    if (rc == 0) rc = write_file(argv[2], out, out_n, err, sizeof err);
    if (rc != 0) fprintf(stderr, "spirv_nv2khr: %s: %s\n", argv[1], err);
    free(in);
    free(out);
    return rc;
}
