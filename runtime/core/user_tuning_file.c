/* The tuning file's format (core/user_tuning.h). Written by one function and
 * read back by a strict reader of exactly that layout: the first line carries
 * the checksum of everything after it, so any edit or truncation is caught
 * before a field is parsed, and the reader never has to guess. */
#include "core/user_tuning.h"

#include "core/atomic_file.h"
#include "core/checksum.h"
#include "core/error.h"
#include "core/split_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char format_name[] = "attnvk-tuning-1";
enum { MAX_FILE_BYTES = 1 << 20, MAX_ENTRIES = 4096 };

void avk_tuned_set_class(avk_tuned_entry *e, const attnvk_problem *p)
{
    e->dtype = p->dtype;
    e->decode = avk_is_decode(p); /* what the tables key on */
    e->head_dim = p->head_dim;
    e->head_dim_v = attnvk_problem_head_dim_v(p);
    e->kv_format = p->kv_format;
}

int avk_tuned_same_class(const avk_tuned_entry *a, const avk_tuned_entry *b)
{
    return a->dtype == b->dtype && a->decode == b->decode && a->head_dim == b->head_dim &&
           a->head_dim_v == b->head_dim_v && a->kv_format == b->kv_format;
}

void avk_tuned_class_text(const avk_tuned_entry *e, char *out, size_t n)
{
    char dv[16] = "", kv[24] = "";
    if (e->head_dim_v != e->head_dim) snprintf(dv, sizeof dv, "/%d", e->head_dim_v);
    if (e->kv_format != ATTNVK_KV_DTYPE) snprintf(kv, sizeof kv, " kv %s", attnvk_kv_format_name(e->kv_format));
    snprintf(out, n, "%s %s D=%d%s%s", attnvk_dtype_name(e->dtype), e->decode ? "decode" : "prefill", e->head_dim, dv, kv);
}

void avk_tuned_as_tuning(const avk_tuned_entry *e, avk_tuning *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = (int)e->dtype;
    out->head_dim_min = out->head_dim_max = e->head_dim;
    out->decode = e->decode;
    out->variant = e->variant;
    out->tile_br = e->tile_br;
    out->tile_bc = e->tile_bc;
    out->workgroup_size = e->workgroup_size;
    memcpy(out->extra, e->extra, sizeof out->extra);
}

void avk_tuned_set_config(avk_tuned_entry *e, const avk_tuning *t)
{
    snprintf(e->variant, sizeof e->variant, "%s", t->variant ? t->variant : "");
    e->tile_br = t->tile_br;
    e->tile_bc = t->tile_bc;
    e->workgroup_size = t->workgroup_size;
    memcpy(e->extra, t->extra, sizeof e->extra);
}

void avk_tuning_file_identity(const attnvk_device_info *info, avk_tuning_file *f)
{
    snprintf(f->api, sizeof f->api, "%s", attnvk_api_name(info->api));
    snprintf(f->device, sizeof f->device, "%s", info->name);
    f->uuid[0] = '\0';
    if (info->has_uuid)
        for (int i = 0; i < ATTNVK_UUID_SIZE; ++i) snprintf(f->uuid + 2 * i, 3, "%02x", info->uuid[i]);
    snprintf(f->driver_version, sizeof f->driver_version, "%s", info->driver_version);
    snprintf(f->attnvk_version, sizeof f->attnvk_version, "%s", ATTNVK_VERSION_STRING);
}

const char *avk_tuning_file_mismatch(const avk_tuning_file *f, const attnvk_device_info *info, char *buf, size_t n)
{
    avk_tuning_file want;
    memset(&want, 0, sizeof want);
    avk_tuning_file_identity(info, &want);
    const char *what = NULL, *had = NULL, *is = NULL;
    if (strcmp(f->api, want.api)) what = "API", had = f->api, is = want.api;
    else if (strcmp(f->device, want.device)) what = "device", had = f->device, is = want.device;
    else if (strcmp(f->uuid, want.uuid)) what = "device UUID", had = f->uuid, is = want.uuid;
    else if (strcmp(f->driver_version, want.driver_version)) what = "driver", had = f->driver_version, is = want.driver_version;
    else if (strcmp(f->attnvk_version, want.attnvk_version)) what = "attnvk version", had = f->attnvk_version, is = want.attnvk_version;
    if (!what) return NULL;
    snprintf(buf, n, "made for %s %s, this is %s (run attnvk tune again)", what, had, is);
    return buf;
}

/* ---- writing ---- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static void put_entry(FILE *f, const avk_tuned_entry *e)
{
    fputs("  {\"dtype\": ", f);
    put_string(f, attnvk_dtype_name(e->dtype));
    fprintf(f, ", \"decode\": %d, \"head_dim\": %d, \"head_dim_v\": %d, \"kv_format\": ", e->decode, e->head_dim,
            e->head_dim_v);
    put_string(f, attnvk_kv_format_name(e->kv_format));
    fputs(", \"variant\": ", f);
    put_string(f, e->variant);
    fprintf(f, ", \"tile_br\": %d, \"tile_bc\": %d, \"workgroup_size\": %d, \"extra\": [%d, %d, %d, %d], \"split_kv\": %d",
            e->tile_br, e->tile_bc, e->workgroup_size, e->extra[0], e->extra[1], e->extra[2], e->extra[3], e->split_kv);
    fprintf(f, ", \"median_ms\": %.6g, \"baseline_ms\": %.6g, \"case\": ", e->median_ms, e->baseline_ms);
    put_string(f, e->case_name);
    fputc('}', f);
}

attnvk_status avk_tuning_file_write(const char *path, const avk_tuning_file *t)
{
    char *body = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&body, &size);
    if (!m) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    fputs(" \"format\": ", m);
    put_string(m, format_name);
    const char *keys[] = {"api", "device", "uuid", "driver_version", "attnvk_version"};
    const char *values[] = {t->api, t->device, t->uuid, t->driver_version, t->attnvk_version};
    for (int i = 0; i < 5; ++i) {
        fprintf(m, ",\n \"%s\": ", keys[i]);
        put_string(m, values[i]);
    }
    fputs(",\n \"entries\": [\n", m);
    for (int i = 0; i < t->count; ++i) {
        put_entry(m, &t->entries[i]);
        fputs(i + 1 < t->count ? ",\n" : "\n", m);
    }
    fputs(" ]}\n", m);
    if (fclose(m) != 0 || !body) {
        free(body);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    avk_atomic_file af;
    attnvk_status s = avk_atomic_open(&af, path);
    if (s == ATTNVK_OK) {
        fprintf(af.f, "{\"checksum\": \"xxh64:%016llx\",\n", (unsigned long long)avk_xxh64(body, size, 0));
        (void)fwrite(body, 1, size, af.f); /* a short write fails the commit */
        s = avk_atomic_commit(&af);
    }
    free(body);
    return s;
}

/* ---- reading: exactly the layout above ---- */

typedef struct cursor {
    const char *p, *end;
    int ok;
} cursor;

static void expect(cursor *c, const char *text)
{
    size_t n = strlen(text);
    if (c->ok && (size_t)(c->end - c->p) >= n && memcmp(c->p, text, n) == 0) c->p += n;
    else c->ok = 0;
}

static void read_string(cursor *c, char *out, size_t n)
{
    size_t len = 0;
    expect(c, "\"");
    while (c->ok && c->p < c->end && *c->p != '"') {
        char ch = *c->p++;
        if (ch == '\\') {
            if (c->p >= c->end) break;
            ch = *c->p++;
            if (ch == 'u') {
                unsigned v = 0;
                if (c->end - c->p < 4 || sscanf(c->p, "%4x", &v) != 1 || v >= 0x80) c->ok = 0;
                c->p += 4;
                ch = (char)v;
            } else if (ch != '"' && ch != '\\') {
                c->ok = 0;
            }
        }
        if (len + 1 >= n) c->ok = 0; /* longer than any field this build writes */
        else out[len++] = ch;
    }
    if (n) out[len < n ? len : n - 1] = '\0';
    expect(c, "\"");
}

static double read_number(cursor *c)
{
    char buf[48];
    size_t len = 0;
    while (c->p < c->end && len + 1 < sizeof buf && strchr("0123456789+-.eEinfaINFA", *c->p)) buf[len++] = *c->p++;
    buf[len] = '\0';
    char *stop;
    double v = strtod(buf, &stop);
    if (!len || *stop) c->ok = 0;
    return v;
}

static int read_int(cursor *c, int lo, int hi)
{
    double v = read_number(c);
    if (!(v >= lo && v <= hi) || v != (int)v) c->ok = 0;
    return c->ok ? (int)v : 0;
}

static void read_entry(cursor *c, avk_tuned_entry *e)
{
    char name[32];
    memset(e, 0, sizeof *e);
    expect(c, "  {\"dtype\": ");
    read_string(c, name, sizeof name);
    if (c->ok && !attnvk_dtype_from_name(name, &e->dtype)) c->ok = 0;
    expect(c, ", \"decode\": ");
    e->decode = read_int(c, 0, 1);
    expect(c, ", \"head_dim\": ");
    e->head_dim = read_int(c, 1, 1 << 16);
    expect(c, ", \"head_dim_v\": ");
    e->head_dim_v = read_int(c, 1, 1 << 16);
    expect(c, ", \"kv_format\": ");
    read_string(c, name, sizeof name);
    if (c->ok && !attnvk_kv_format_from_name(name, &e->kv_format)) c->ok = 0;
    expect(c, ", \"variant\": ");
    read_string(c, e->variant, sizeof e->variant);
    expect(c, ", \"tile_br\": ");
    e->tile_br = read_int(c, 0, 4096);
    expect(c, ", \"tile_bc\": ");
    e->tile_bc = read_int(c, 0, 4096);
    expect(c, ", \"workgroup_size\": ");
    e->workgroup_size = read_int(c, 0, 4096);
    expect(c, ", \"extra\": [");
    for (int i = 0; i < 4; ++i) {
        if (i) expect(c, ", ");
        e->extra[i] = read_int(c, -(1 << 20), 1 << 20);
    }
    expect(c, "], \"split_kv\": ");
    e->split_kv = read_int(c, 0, 4096);
    expect(c, ", \"median_ms\": ");
    e->median_ms = read_number(c);
    expect(c, ", \"baseline_ms\": ");
    e->baseline_ms = read_number(c);
    expect(c, ", \"case\": ");
    read_string(c, e->case_name, sizeof e->case_name);
    expect(c, "}");
    if (c->ok && !e->variant[0]) c->ok = 0;
}

static attnvk_status parse_body(cursor *c, avk_tuning_file *t)
{
    char format[32];
    expect(c, " \"format\": ");
    read_string(c, format, sizeof format);
    if (c->ok && strcmp(format, format_name) != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "format '%s', this build reads %s", format, format_name);
    char *fields[] = {t->api, t->device, t->uuid, t->driver_version, t->attnvk_version};
    const size_t sizes[] = {sizeof t->api, sizeof t->device, sizeof t->uuid, sizeof t->driver_version,
                            sizeof t->attnvk_version};
    const char *keys[] = {",\n \"api\": ", ",\n \"device\": ", ",\n \"uuid\": ", ",\n \"driver_version\": ",
                          ",\n \"attnvk_version\": "};
    for (int i = 0; i < 5; ++i) {
        expect(c, keys[i]);
        read_string(c, fields[i], sizes[i]);
    }
    expect(c, ",\n \"entries\": [\n");
    while (c->ok && c->end - c->p > 3 && memcmp(c->p, "  {", 3) == 0) { /* entry lines; " ]}" ends them */
        if (t->count == MAX_ENTRIES) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "more than %d entries", MAX_ENTRIES);
        avk_tuned_entry *grown = realloc(t->entries, sizeof *grown * (size_t)(t->count + 1));
        if (!grown) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
        t->entries = grown;
        read_entry(c, &t->entries[t->count++]);
        if (c->ok && c->p < c->end && *c->p == ',') expect(c, ",\n");
        else expect(c, "\n");
    }
    expect(c, " ]}\n");
    if (!c->ok || c->p != c->end) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "not the layout attnvk writes");
    return ATTNVK_OK;
}

attnvk_status avk_tuning_file_read(const char *path, avk_tuning_file *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return avk_fail(ATTNVK_ERROR_IO, "%s: cannot open", path);
    char *data = malloc(MAX_FILE_BYTES + 1);
    size_t n = data ? fread(data, 1, MAX_FILE_BYTES + 1, f) : 0;
    fclose(f);
    if (!data) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = ATTNVK_OK;
    unsigned long long sum = 0;
    int used = 0;
    char *body = n <= MAX_FILE_BYTES ? memchr(data, '\n', n) : NULL;
    if (!body) s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: empty, truncated or too large", path);
    else if (sscanf(data, "{\"checksum\": \"xxh64:%16llx\",%n", &sum, &used) != 1 || data + used != body)
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: no checksum line", path);
    else if (avk_xxh64(body + 1, (size_t)(data + n - body - 1), 0) != sum)
        s = avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: checksum mismatch (edited or damaged)", path);
    if (s == ATTNVK_OK) {
        cursor c = {body + 1, data + n, 1};
        s = parse_body(&c, t);
        if (s != ATTNVK_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", attnvk_last_error());
            s = avk_fail(s, "%s: %s", path, why);
        }
    }
    free(data);
    if (s != ATTNVK_OK) avk_tuning_file_free(t);
    return s;
}

void avk_tuning_file_free(avk_tuning_file *t)
{
    free(t->entries);
    t->entries = NULL;
    t->count = 0;
}
