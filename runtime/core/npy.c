#include "core/npy.h"
#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Finds 'key': in the header dict and returns a pointer past the colon. */
static const char *dict_value(const char *header, const char *key)
{
    char quoted[64];
    for (int q = 0; q < 2; ++q) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *at = strstr(header, quoted);
        if (!at) continue;
        at += strlen(quoted);
        while (isspace((unsigned char)*at)) ++at;
        if (*at != ':') return NULL;
        ++at;
        while (isspace((unsigned char)*at)) ++at;
        return at;
    }
    return NULL;
}

static attnvk_status parse_header(const char *path, const char *h, avk_npy *out)
{
    const char *descr = dict_value(h, "descr");
    const char *order = dict_value(h, "fortran_order");
    const char *shape = dict_value(h, "shape");
    if (!descr || !order || !shape)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (needs descr, fortran_order, shape)", path);
    char dt[16] = "";
    if (*descr != '\'' && *descr != '"')
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (descr)", path);
    size_t n = strcspn(descr + 1, "'\"");
    if (n >= sizeof dt) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (descr)", path);
    memcpy(dt, descr + 1, n);
    if (strcmp(dt, "<f4") == 0) out->stored_float16 = 0;
    else if (strcmp(dt, "<f2") == 0) out->stored_float16 = 1;
    else
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "%s: unsupported dtype '%s' (need little-endian float32 '<f4' or float16 '<f2')", path, dt);
    if (strncmp(order, "True", 4) == 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: Fortran-order arrays are not supported (save C order)", path);
    if (strncmp(order, "False", 5) != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (fortran_order)", path);
    if (*shape != '(') return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (shape)", path);
    const char *c = shape + 1;
    out->ndim = 0;
    size_t count = 1;
    for (;;) {
        while (isspace((unsigned char)*c)) ++c;
        if (*c == ')') break;
        if (!isdigit((unsigned char)*c))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (shape)", path);
        if (out->ndim == AVK_NPY_MAX_DIMS)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: more than %d dimensions", path, AVK_NPY_MAX_DIMS);
        errno = 0;
        char *end;
        long long d = strtoll(c, &end, 10);
        if (errno || d < 0 || d > (1ll << 40))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: bad dimension in shape", path);
        out->shape[out->ndim++] = d;
        if (d && count > ((size_t)1 << 40) / (size_t)d)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: array too large", path);
        count *= (size_t)d;
        c = end;
        while (isspace((unsigned char)*c)) ++c;
        if (*c == ',') ++c;
        else if (*c != ')') return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header (shape)", path);
    }
    out->count = count;
    return ATTNVK_OK;
}

attnvk_status avk_npy_read(const char *path, avk_npy *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return avk_fail(ATTNVK_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    attnvk_status s = ATTNVK_OK;
    unsigned char pre[12];
    char *header = NULL;
    void *raw = NULL;
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, npy_magic, 6) != 0) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    int major = pre[6];
    size_t header_len;
    if (major == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) goto truncated;
        header_len = pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 8, 1, 4, f) != 4) goto truncated;
        header_len = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: unsupported .npy version %d", path, major);
        goto done;
    }
    if (header_len == 0 || header_len > (1u << 20)) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header length %zu", path, header_len);
        goto done;
    }
    header = malloc(header_len + 1);
    if (!header) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: out of host memory", path);
        goto done;
    }
    if (fread(header, 1, header_len, f) != header_len) goto truncated;
    header[header_len] = '\0';
    s = parse_header(path, header, out);
    if (s != ATTNVK_OK) goto done;
    size_t es = out->stored_float16 ? 2 : 4;
    raw = malloc(out->count * es + 1);
    out->data = malloc(out->count * sizeof(float) + 1);
    if (!raw || !out->data) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu elements", path, out->count);
        goto done;
    }
    size_t got = fread(raw, es, out->count, f);
    if (got != out->count) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: truncated: %zu of %zu elements present", path, got, out->count);
        goto done;
    }
    attnvk_unpack(out->stored_float16 ? ATTNVK_F16 : ATTNVK_F32, raw, out->data, out->count);
    goto done;
truncated:
    s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: truncated .npy header", path);
done:
    fclose(f);
    free(header);
    free(raw);
    if (s != ATTNVK_OK) avk_npy_free(out);
    return s;
}

attnvk_status avk_npy_write(const char *path, const float *data, int ndim, const int64_t *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t count = 1;
    for (int i = 0; i < ndim; ++i) {
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%lld%s", (long long)shape[i],
                        (ndim == 1 || i + 1 < ndim) ? ", " : "");
        count *= (size_t)shape[i];
    }
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    /* pad with spaces so the data starts 64-byte aligned, end with newline */
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    unsigned char pre[10];
    memcpy(pre, npy_magic, 6);
    pre[6] = 1;
    pre[7] = 0;
    size_t hl = padded - 10;
    pre[8] = (unsigned char)(hl & 0xff);
    pre[9] = (unsigned char)(hl >> 8);
    FILE *f = fopen(path, "wb");
    if (!f) return avk_fail(ATTNVK_ERROR_IO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = total - 1; ok && i < padded - 1; ++i) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    ok = ok && fwrite(data, sizeof(float), count, f) == count; /* host is little-endian (x86-64/arm64) */
    ok = (fclose(f) == 0) && ok;
    return ok ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_IO, "%s: write failed: %s", path, strerror(errno));
}

void avk_npy_free(avk_npy *npy)
{
    free(npy->data);
    npy->data = NULL;
}
