#include "core/npy.h"
#include "core/atomic_file.h"
#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* What a reader wants: float tensors (converted to float32), int32 index
 * tables (a float would round indices past 2^24) or byte maps (block layouts). */
typedef enum npy_kind { NPY_FLOAT = 0, NPY_INT32, NPY_BYTES } npy_kind;

/* The element types a file may hold, and the kind each belongs to. */
typedef struct npy_dtype {
    const char *descr;
    size_t item_size;
    npy_kind kind;
    attnvk_dtype unpack_as; /* floats: attnvk_unpack converts it to float32 */
} npy_dtype;

static const npy_dtype npy_dtypes[] = {
    {"<f4", 4, NPY_FLOAT, ATTNVK_F32},
    {"<f2", 2, NPY_FLOAT, ATTNVK_F16},
    {"<i4", 4, NPY_INT32, ATTNVK_F32},
    {"|u1", 1, NPY_BYTES, ATTNVK_F32},
    {"|i1", 1, NPY_BYTES, ATTNVK_F32},
};

enum { NPY_MAX_HEADER = 1 << 20, NPY_MAX_ELEMENTS_LOG2 = 40 };

/* A cursor over the header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
 * The grammar is the subset of Python literals that numpy writes and reads back. */
typedef struct npy_parse {
    const char *path;
    npy_kind want;
    const char *what; /* the int32 table's or byte map's name, for errors */
    const char *at, *end; /* the dict text, without the padding and the final newline */
} npy_parse;

static attnvk_status malformed(const npy_parse *ps, const char *what)
{
    return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header: %s", ps->path, what);
}

static void skip_spaces(npy_parse *ps)
{
    while (ps->at < ps->end && (*ps->at == ' ' || *ps->at == '\t')) ++ps->at;
}

static int take(npy_parse *ps, char c)
{
    skip_spaces(ps);
    if (ps->at == ps->end || *ps->at != c) return 0;
    ++ps->at;
    return 1;
}

static int take_word(npy_parse *ps, const char *word)
{
    size_t n = strlen(word);
    skip_spaces(ps);
    if ((size_t)(ps->end - ps->at) < n || memcmp(ps->at, word, n) != 0) return 0;
    ps->at += n;
    return 1;
}

/* A '...' or "..." string into out; 0 when there is none or it does not fit. */
static int take_string(npy_parse *ps, char *out, size_t n)
{
    skip_spaces(ps);
    if (ps->at == ps->end || (*ps->at != '\'' && *ps->at != '"')) return 0;
    char quote = *ps->at++;
    const char *close = memchr(ps->at, quote, (size_t)(ps->end - ps->at));
    if (!close || (size_t)(close - ps->at) >= n || memchr(ps->at, '\\', (size_t)(close - ps->at))) return 0;
    memcpy(out, ps->at, (size_t)(close - ps->at));
    out[close - ps->at] = '\0';
    ps->at = close + 1;
    return 1;
}

static const char *const kind_need[] = {"little-endian float32 '<f4' or float16 '<f2'", "int32 '<i4'",
                                         "uint8 '|u1' or int8 '|i1'"};

static attnvk_status parse_descr(npy_parse *ps, const npy_dtype **dtype)
{
    char descr[32];
    const char *need = kind_need[ps->want];
    if (!take_string(ps, descr, sizeof descr))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "%s: unsupported dtype (descr is not a simple type string; need %s)", ps->path, need);
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof *npy_dtypes; ++i) {
        if (strcmp(descr, npy_dtypes[i].descr) != 0) continue;
        if (npy_dtypes[i].kind == ps->want) {
            *dtype = &npy_dtypes[i];
            return ATTNVK_OK;
        }
        if (ps->want != NPY_FLOAT) break; /* named below */
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "%s: unsupported dtype '%s' for a tensor (%s is only for %s; tensors need float32 '<f4' or "
                        "float16 '<f2')", ps->path, descr, npy_dtypes[i].kind == NPY_INT32 ? "int32" : "uint8/int8",
                        npy_dtypes[i].kind == NPY_INT32 ? "--block-table and --seq-lens" : "--block-layout");
    }
    if (ps->want != NPY_FLOAT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: %s has dtype '%s'; it must be %s", ps->path, ps->what,
                        descr, need);
    return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: unsupported dtype '%s' (need %s)", ps->path, descr, need);
}

static attnvk_status parse_fortran_order(npy_parse *ps)
{
    if (take_word(ps, "False")) return ATTNVK_OK;
    if (take_word(ps, "True"))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: Fortran-order arrays are not supported (save C order)",
                        ps->path);
    return malformed(ps, "fortran_order is neither True nor False");
}

/* (d0, d1, ...): a tuple of non-negative integers; a single element needs its comma, as in Python. */
static attnvk_status parse_shape(npy_parse *ps, avk_npy *out)
{
    if (!take(ps, '(')) return malformed(ps, "shape is not a tuple");
    size_t count = 1;
    int trailing_comma = 0;
    out->ndim = 0;
    while (!take(ps, ')')) {
        skip_spaces(ps);
        if (ps->at == ps->end || !isdigit((unsigned char)*ps->at)) return malformed(ps, "shape holds a non-integer");
        if (out->ndim == AVK_NPY_MAX_DIMS)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: more than %d dimensions", ps->path, AVK_NPY_MAX_DIMS);
        long long d = 0;
        for (; ps->at < ps->end && isdigit((unsigned char)*ps->at); ++ps->at) {
            d = d * 10 + (*ps->at - '0');
            if (d > (1ll << NPY_MAX_ELEMENTS_LOG2))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: bad dimension in shape (over 2^%d)", ps->path,
                                NPY_MAX_ELEMENTS_LOG2);
        }
        out->shape[out->ndim++] = d;
        if (d && count > ((size_t)1 << NPY_MAX_ELEMENTS_LOG2) / (size_t)d)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: array too large (over 2^%d elements)", ps->path,
                            NPY_MAX_ELEMENTS_LOG2);
        count *= (size_t)d;
        trailing_comma = take(ps, ',');
        skip_spaces(ps);
        if (!trailing_comma && (ps->at == ps->end || *ps->at != ')'))
            return malformed(ps, "shape is not a tuple of integers");
    }
    if (out->ndim == 1 && !trailing_comma) return malformed(ps, "shape (n) is not a tuple (numpy writes (n,))");
    out->count = count;
    return ATTNVK_OK;
}

/* The whole dict: exactly the keys descr, fortran_order and shape, once each, in any order. */
static attnvk_status parse_dict(npy_parse *ps, avk_npy *out, const npy_dtype **dtype)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0};
    if (!take(ps, '{')) return malformed(ps, "does not start with '{'");
    while (!take(ps, '}')) {
        char key[32];
        if (!take_string(ps, key, sizeof key)) return malformed(ps, "expected a quoted key");
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]) != 0) ++k;
        if (k == 3) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header: unknown key '%s'", ps->path, key);
        if (seen[k]++) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header: key '%s' twice", ps->path, key);
        if (!take(ps, ':')) return malformed(ps, "expected ':' after a key");
        attnvk_status s = k == 0 ? parse_descr(ps, dtype) : k == 1 ? parse_fortran_order(ps) : parse_shape(ps, out);
        if (s != ATTNVK_OK) return s;
        if (!take(ps, ',')) {
            if (!take(ps, '}')) return malformed(ps, "expected ',' or '}' after a value");
            break;
        }
    }
    skip_spaces(ps);
    if (ps->at != ps->end) return malformed(ps, "text after the closing '}'");
    for (int k = 0; k < 3; ++k)
        if (!seen[k])
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "%s: malformed .npy header: no '%s' (needs descr, fortran_order, shape)", ps->path, keys[k]);
    return ATTNVK_OK;
}

static int read_exactly(FILE *f, void *buf, size_t n) { return fread(buf, 1, n, f) == n; }

static attnvk_status npy_read(const char *path, npy_kind kind, const char *what, avk_npy *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return avk_fail(ATTNVK_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    attnvk_status s = ATTNVK_OK;
    unsigned char pre[12];
    char *header = NULL;
    void *raw = NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        /* the size must be known before anything is allocated: no pipes or devices */
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: not a regular file", path);
        goto done;
    }
    if (!read_exactly(f, pre, 8) || memcmp(pre, npy_magic, 6) != 0) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    int major = pre[6];
    size_t len_bytes = major == 1 ? 2 : 4, header_len = 0;
    if (major < 1 || major > 3) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: unsupported .npy version %d", path, major);
        goto done;
    }
    if (!read_exactly(f, pre + 8, len_bytes)) goto truncated;
    for (size_t i = len_bytes; i-- > 0;) header_len = header_len << 8 | pre[8 + i];
    size_t data_offset = 8 + len_bytes + header_len;
    if (header_len == 0 || header_len > NPY_MAX_HEADER) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header length %zu", path, header_len);
        goto done;
    }
    if ((uint64_t)st.st_size < data_offset) goto truncated;
    header = malloc(header_len);
    if (!header) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: out of host memory", path);
        goto done;
    }
    if (!read_exactly(f, header, header_len)) goto truncated;
    /* The spec: the header ends in '\n' at exactly its declared length (a length that is
     * off, or bytes inserted, would otherwise start the data inside the header text) */
    if (header[header_len - 1] != '\n') {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                     "%s: malformed .npy header: no newline at its declared end (header length %zu)", path, header_len);
        goto done;
    }
    size_t dict_len = header_len - 1;
    while (dict_len && header[dict_len - 1] == ' ') --dict_len; /* the alignment padding */
    npy_parse ps = {.path = path, .want = kind, .what = what, .at = header, .end = header + dict_len};
    const npy_dtype *dtype = NULL;
    s = parse_dict(&ps, out, &dtype);
    if (s != ATTNVK_OK) goto done;
    out->stored_float16 = dtype->kind == NPY_FLOAT && dtype->unpack_as == ATTNVK_F16;
    /* the size is checked before anything that large is allocated */
    uint64_t want = (uint64_t)out->count * dtype->item_size, have = (uint64_t)st.st_size - data_offset;
    if (have < want) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: truncated: %llu of %llu data bytes present", path,
                     (unsigned long long)have, (unsigned long long)want);
        goto done;
    }
    if (have > want) {
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                     "%s: %llu bytes after the data (header + shape account for %llu of %llu bytes)", path,
                     (unsigned long long)(have - want), (unsigned long long)(data_offset + want),
                     (unsigned long long)st.st_size);
        goto done;
    }
    raw = malloc(want + 1);
    if (dtype->kind == NPY_INT32) out->ints = malloc(out->count * sizeof(int32_t) + 1);
    else if (dtype->kind == NPY_BYTES) out->bytes = malloc(out->count + 1);
    else out->data = malloc(out->count * sizeof(float) + 1);
    if (!raw || (!out->data && !out->ints && !out->bytes)) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu elements", path, out->count);
        goto done;
    }
    if (!read_exactly(f, raw, want)) { /* the file shrank since fstat */
        s = avk_fail(ATTNVK_ERROR_IO, "%s: read failed: %s", path, ferror(f) ? strerror(errno) : "file shrank");
        goto done;
    }
    if (dtype->kind == NPY_INT32) memcpy(out->ints, raw, want); /* host is little-endian (x86-64/arm64) */
    else if (dtype->kind == NPY_BYTES) memcpy(out->bytes, raw, want); /* int8 too: only zero or not matters */
    else attnvk_unpack(dtype->unpack_as, raw, out->data, out->count);
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

attnvk_status avk_npy_read(const char *path, avk_npy *out) { return npy_read(path, NPY_FLOAT, NULL, out); }

attnvk_status avk_npy_read_int32(const char *path, const char *what, avk_npy *out)
{
    return npy_read(path, NPY_INT32, what ? what : "an index table", out);
}

attnvk_status avk_npy_read_bytes(const char *path, const char *what, avk_npy *out)
{
    return npy_read(path, NPY_BYTES, what ? what : "a byte map", out);
}

attnvk_status avk_npy_write(const char *path, const float *data, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > AVK_NPY_MAX_DIMS) /* bounds the header below */
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: cannot write %d dimensions", path, ndim);
    /* magic, version 1.0, header length, dict, spaces up to 64-byte alignment, '\n' */
    char header[320];
    memcpy(header, npy_magic, 6);
    header[6] = 1;
    header[7] = 0;
    size_t len = 10;
    len += (size_t)snprintf(header + len, sizeof header - len, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t count = 1;
    for (int i = 0; i < ndim; ++i) {
        len += (size_t)snprintf(header + len, sizeof header - len, "%lld%s", (long long)shape[i],
                                (ndim == 1 || i + 1 < ndim) ? ", " : "");
        count *= (size_t)shape[i];
    }
    len += (size_t)snprintf(header + len, sizeof header - len, "), }");
    size_t padded = (len + 1 + 63) / 64 * 64;
    memset(header + len, ' ', padded - 1 - len);
    header[padded - 1] = '\n';
    header[8] = (char)((padded - 10) & 0xff);
    header[9] = (char)((padded - 10) >> 8);
    /* through a temporary file: a full disk or a crash leaves the previous output intact */
    avk_atomic_file af;
    attnvk_status s = avk_atomic_open(&af, path);
    if (s != ATTNVK_OK) return s;
    (void)fwrite(header, 1, padded, af.f); /* short writes set the error flag: commit reports them */
    (void)fwrite(data, sizeof(float), count, af.f); /* host is little-endian (x86-64/arm64) */
    return avk_atomic_commit(&af);
}

void avk_npy_free(avk_npy *npy)
{
    free(npy->data);
    free(npy->ints);
    free(npy->bytes);
    npy->data = NULL;
    npy->ints = NULL;
    npy->bytes = NULL;
}
