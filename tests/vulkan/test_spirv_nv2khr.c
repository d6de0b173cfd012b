/* tools/spirv_nv2khr: the coopmat-nv SPIR-V (as glslang built it) and the
 * embedded coopmat-khr module rewritten from it, checked for structure, since
 * Debian 12's spirv-val (2023.1) does not know SPV_KHR_cooperative_matrix: no
 * NV opcode, capability or extension left; every KHR type has a Use that is a
 * constant 0..2; ids defined once and inside the bound; loads, stores and
 * MulAdds see operands of consistent types (A, B, accumulator; M x K . K x N).
 * A handcrafted module whose one NV type serves as A, B and accumulator shows
 * the split, and bad input to the tool exits 2 with one line.
 * The register-softmax modules and the layout probe, rewritten with --acc-to-a, and a
 * handcrafted S -> f16 P -> A module show the accumulator-to-A element moves.
 * Usage: test_spirv_nv2khr TOOL NV.spv KHR.spv WORKDIR [ACC_TO_A NV_RS.spv KHR_RS.spv ...] */
#include "spirv_nv2khr.h"
#include "test_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int passed, failed;
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (cond) ++passed;                                                                                           \
        else {                                                                                                        \
            ++failed;                                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                               \
            printf(__VA_ARGS__);                                                                                      \
            printf("\n");                                                                                             \
        }                                                                                                             \
    } while (0)

/* ---- an independent reading of the output ---- */

enum { OP_TYPE_INT = 21, OP_TYPE_FLOAT = 22, OP_TYPE_POINTER = 32, OP_CONSTANT = 43, OP_VARIABLE = 59, OP_LOAD = 61,
       OP_STORE = 62, OP_NAME = 5 };

typedef struct module {
    const uint32_t *w;
    size_t n;
    uint32_t bound;
    uint32_t *def; /* id -> word offset of its definition */
    uint32_t *type; /* id -> result type */
} module;

/* Result layout for the opcodes glslang emits here (SPIR-V grammar): no result,
 * a result id only (types, labels, imports), or a type and a result. */
static int result_slot(uint32_t op)
{
    static const uint16_t none[] = {2, 3, 4, 5, 6, 8, 10, 14, 15, 16, 17, 39, 56, 62, 63, 71, 72, 224, 225, 246, 247,
                                    249, 250, 251, 252, 253, 254, 255, 317, 330, 331, 332, 4458, 5360, 5632, 5633};
    for (size_t i = 0; i < sizeof none / sizeof *none; ++i)
        if (none[i] == op) return 0;
    if ((op >= 19 && op <= 38) || op == 4456 || op == 5358 || op == 7 || op == 11 || op == 248) return 1;
    return 2;
}

static int load_module(module *m, const uint32_t *w, size_t n)
{
    memset(m, 0, sizeof *m);
    if (n < 5 || w[0] != SPV_MAGIC) return 0;
    m->w = w, m->n = n, m->bound = w[3];
    m->def = calloc(m->bound, sizeof *m->def);
    m->type = calloc(m->bound, sizeof *m->type);
    int ok = m->def && m->type;
    for (size_t at = 5; ok && at < n; at += w[at] >> 16) {
        uint32_t wc = w[at] >> 16, slot = (uint32_t)result_slot(w[at] & 0xffff);
        if (!wc || at + wc > n) return 0;
        if (!slot) continue;
        uint32_t id = w[at + slot];
        if (!id || id >= m->bound || m->def[id]) {
            CHECK(0, "id %u defined twice or outside the bound %u", id, m->bound);
            return 0;
        }
        m->def[id] = (uint32_t)at;
        if (slot == 2) m->type[id] = w[at + 1];
    }
    return ok;
}

static void free_module(module *m) { free(m->def), free(m->type); }
static uint32_t op_at(const module *m, uint32_t id) { return id < m->bound && m->def[id] ? m->w[m->def[id]] & 0xffff : 0; }
static const uint32_t *ins(const module *m, uint32_t id) { return m->w + m->def[id]; }

/* The value of an OpConstant of a 32-bit int, or -1. */
static long int_constant(const module *m, uint32_t id)
{
    if (op_at(m, id) != OP_CONSTANT) return -1;
    uint32_t t = ins(m, id)[1];
    return op_at(m, t) == OP_TYPE_INT && ins(m, t)[2] == 32 ? (long)ins(m, id)[3] : -1;
}

/* Use of a KHR matrix type, or -1. */
static long use_of(const module *m, uint32_t type)
{
    return op_at(m, type) == SPV_OP_TYPE_COOPMAT_KHR ? int_constant(m, ins(m, type)[6]) : -1;
}

static uint32_t pointee(const module *m, uint32_t ptr_id)
{
    uint32_t t = m->type[ptr_id];
    return op_at(m, t) == OP_TYPE_POINTER ? ins(m, t)[3] : 0;
}

typedef struct khr_counts {
    int types, loads, stores, muladds, use[SPV_USES], use_changes, lengths;
} khr_counts;

static int is_khr_matrix(const module *m, uint32_t type) { return op_at(m, type) == SPV_OP_TYPE_COOPMAT_KHR; }

/* What KHR allows on matrix values besides its own instructions: conversions keep Use,
 * scope and shape; arithmetic, OpPhi and OpSelect see one type; composite access moves
 * one element of the component type. */
static void check_matrix_values(const module *m, const char *what, const uint32_t *i, khr_counts *c)
{
    uint32_t op = i[0] & 0xffff, wc = i[0] >> 16;
    if (op == 52 && wc == 5 && (i[3] == SPV_OP_COOPMAT_LENGTH_KHR || i[3] == SPV_OP_COOPMAT_LENGTH_NV)) {
        /* NVIDIA 580.159's compiler crashed on a KHR spec-constant length: the tool refuses them */
        CHECK(0, "%s: spec-constant length %u left in a KHR module", what, i[2]);
        ++c->lengths;
    }
    if (wc < 3 || !is_khr_matrix(m, i[1])) {
        if (op == 81 && wc >= 4 && is_khr_matrix(m, m->type[i[3]])) /* an element out of a matrix */
            CHECK(wc == 5 && i[1] == ins(m, m->type[i[3]])[2], "%s: OpCompositeExtract %u: not one element", what, i[2]);
        return;
    }
    const uint32_t *t = ins(m, i[1]);
    if ((op >= 109 && op <= 115) || op == 124) {
        const uint32_t *f = is_khr_matrix(m, m->type[i[3]]) ? ins(m, m->type[i[3]]) : NULL;
        CHECK(f && f[3] == t[3] && f[4] == t[4] && f[5] == t[5] && f[6] == t[6],
              "%s: conversion %u changes Use, scope or shape", what, i[2]);
    } else if ((op >= 126 && op <= 136) || op == 245 || op == 169) { /* arithmetic, OpPhi (value, label), OpSelect */
        for (uint32_t k = op == 169 ? 4 : 3; k < wc; k += op == 245 ? 2 : 1)
            CHECK(m->type[i[k]] == i[1], "%s: %u (opcode %u) mixes matrix types", what, i[2], op);
    } else if (op == 82) { /* an element into a matrix */
        CHECK(wc == 6 && m->type[i[3]] == t[2] && m->type[i[4]] == i[1], "%s: OpCompositeInsert %u", what, i[2]);
        c->use_changes += op_at(m, i[4]) == 1; /* the first move starts from OpUndef */
    }
}

static void check_khr(const module *m, const char *what, khr_counts *c)
{
    memset(c, 0, sizeof *c);
    int cap = 0, ext = 0;
    for (size_t at = 5; at < m->n; at += m->w[at] >> 16) {
        const uint32_t *i = m->w + at;
        uint32_t op = i[0] & 0xffff, wc = i[0] >> 16;
        check_matrix_values(m, what, i, c);
        CHECK(op < SPV_OP_TYPE_COOPMAT_NV || op > SPV_OP_COOPMAT_LENGTH_NV, "%s: NV opcode %u left at word %zu", what, op, at);
        if (op == 17) {
            CHECK(i[1] != SPV_CAP_COOPMAT_NV, "%s: CooperativeMatrixNV capability left", what);
            cap |= i[1] == SPV_CAP_COOPMAT_KHR;
        }
        if (op == 10) {
            CHECK(strcmp((const char *)(i + 1), "SPV_NV_cooperative_matrix") != 0, "%s: NV extension left", what);
            ext |= strcmp((const char *)(i + 1), "SPV_KHR_cooperative_matrix") == 0;
        }
        if (op == SPV_OP_TYPE_COOPMAT_KHR) {
            long use = wc == 7 ? use_of(m, i[1]) : -1;
            CHECK(use >= 0 && use < SPV_USES, "%s: KHR matrix type %u without a Use constant 0..2", what, i[1]);
            if (use >= 0 && use < SPV_USES) ++c->use[use];
            ++c->types;
        }
        if (op == SPV_OP_COOPMAT_LOAD_KHR) { /* type, result, pointer, layout, stride */
            ++c->loads;
            long layout = wc >= 6 ? int_constant(m, i[4]) : -1;
            CHECK(use_of(m, i[1]) >= 0 && (layout == 0 || layout == 1) && m->type[i[5]],
                  "%s: load %u: result type, MemoryLayout or Stride wrong", what, i[2]);
        }
        if (op == SPV_OP_COOPMAT_STORE_KHR) { /* pointer, object, layout, stride */
            ++c->stores;
            long layout = wc >= 5 ? int_constant(m, i[3]) : -1;
            CHECK(use_of(m, m->type[i[2]]) >= 0 && (layout == 0 || layout == 1) && m->type[i[4]],
                  "%s: store of %u: object type, MemoryLayout or Stride wrong", what, i[2]);
        }
        if (op == SPV_OP_COOPMAT_MULADD_KHR) { /* type, result, A, B, C */
            ++c->muladds;
            uint32_t ta = m->type[i[3]], tb = m->type[i[4]], tc = m->type[i[5]];
            int uses = use_of(m, ta) == SPV_USE_A && use_of(m, tb) == SPV_USE_B && use_of(m, tc) == SPV_USE_ACC &&
                       i[1] == tc;
            CHECK(uses, "%s: MulAdd %u: operands are not A, B, accumulator (result of C's type)", what, i[2]);
            if (uses) /* M x K . K x N + M x N (rows and columns are ids) */
                CHECK(ins(m, ta)[4] == ins(m, tc)[4] && ins(m, ta)[5] == ins(m, tb)[4] && ins(m, tb)[5] == ins(m, tc)[5],
                      "%s: MulAdd %u: shapes do not chain", what, i[2]);
        }
        /* what flows through memory keeps one type: OpLoad's result is what its pointer points at */
        if (op == OP_LOAD && use_of(m, i[1]) >= 0)
            CHECK(pointee(m, i[3]) == i[1], "%s: OpLoad %u of a matrix through a pointer to another type", what, i[2]);
        if (op == OP_STORE && use_of(m, m->type[i[2]]) >= 0)
            CHECK(pointee(m, i[1]) == m->type[i[2]], "%s: OpStore of matrix %u through a pointer to another type", what, i[2]);
    }
    CHECK(cap && ext, "%s: CooperativeMatrixKHR capability or SPV_KHR_cooperative_matrix missing", what);
}

static uint32_t *read_words(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *w = bytes > 0 ? malloc((size_t)bytes) : NULL;
    if (w && fread(w, 1, (size_t)bytes, f) != (size_t)bytes) free(w), w = NULL;
    fclose(f);
    *n = w ? (size_t)bytes / 4 : 0;
    return w;
}

static int count_op(const uint32_t *w, size_t n, uint32_t want)
{
    int k = 0;
    for (size_t at = 5; at < n && (w[at] >> 16); at += w[at] >> 16) k += (w[at] & 0xffff) == want;
    return k;
}

/* The coopmat-nv module rewritten here, and the embedded coopmat-khr module the build made. */
static void compiled_module(const char *nv_path, const char *khr_path)
{
    size_t n = 0, kn = 0, out_n = 0;
    uint32_t *nv = read_words(nv_path, &n), *built = read_words(khr_path, &kn), *out = NULL;
    CHECK(nv && built, "cannot read %s or %s", nv_path, khr_path);
    if (!nv || !built) return;
    char err[256] = "";
    int rc = avk_spirv_nv2khr(nv, n, &out, &out_n, err, sizeof err);
    CHECK(rc == 0, "coopmat-nv module: %s", err);
    CHECK(rc == 0 && out_n == kn && !memcmp(out, built, kn * 4), "the embedded module differs from a rewrite now");
    module m;
    if (rc == 0 && load_module(&m, out, out_n)) {
        khr_counts c;
        check_khr(&m, "coopmat-khr", &c);
        CHECK(c.loads == count_op(nv, n, SPV_OP_COOPMAT_LOAD_NV) && c.stores == count_op(nv, n, SPV_OP_COOPMAT_STORE_NV) &&
                  c.muladds == count_op(nv, n, SPV_OP_COOPMAT_MULADD_NV),
              "coopmat-khr: %d loads, %d stores, %d MulAdds differ from the NV module's", c.loads, c.stores, c.muladds);
        /* the body's Q/P, K/V and S/O matrices: one NV type each, one Use each */
        CHECK(c.types == 3 && c.use[0] == 1 && c.use[1] == 1 && c.use[2] == 1, "coopmat-khr: %d types (A %d B %d C %d)",
              c.types, c.use[0], c.use[1], c.use[2]);
        printf("coopmat-khr: %zu words, %d KHR types, %d loads, %d stores, %d MulAdds\n", out_n, c.types, c.loads,
               c.stores, c.muladds);
        free_module(&m);
    }
    free(nv), free(built), free(out);
}

/* A register-softmax module (or the layout probe) rewritten by the tool with the
 * build's --acc-to-a and compared with the embedded one; its P = f16(S) became an
 * accumulator conversion and element moves, once per conversion in the NV module;
 * without --acc-to-a the tool refuses it. */
static void rs_module(const char *tool, const char *acc_to_a, const char *nv_path, const char *khr_path, const char *dir)
{
    size_t n = 0, kn = 0, out_n = 0;
    uint32_t *nv = read_words(nv_path, &n), *built = read_words(khr_path, &kn);
    CHECK(nv && built, "cannot read %s or %s", nv_path, khr_path);
    char out[1024], err[1024], cmd[4096];
    snprintf(out, sizeof out, "%s/rs_out.spv", dir);
    snprintf(err, sizeof err, "%s/rs_stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' --acc-to-a '%s' '%s' '%s' 2>'%s'", tool, acc_to_a, nv_path, out, err);
    int st = system(cmd);
    uint32_t *again = read_words(out, &out_n);
    CHECK(st == 0 && again && out_n == kn && built && !memcmp(again, built, kn * 4), "%s: the embedded module differs from a rewrite now",
          khr_path);
    char reason[256] = "";
    uint32_t *refused = NULL;
    size_t refused_n = 0;
    int rc = nv ? avk_spirv_nv2khr(nv, n, &refused, &refused_n, reason, sizeof reason) : -1;
    CHECK(rc != 0 && strstr(reason, "keep the Use"), "%s without acc_to_a: %s", nv_path, rc ? reason : "accepted");
    if (rc == 0) free(refused);
    module m;
    if (nv && built && load_module(&m, built, kn)) {
        khr_counts c;
        check_khr(&m, khr_path, &c);
        int convs = 0; /* NV conversions from an f32 to an f16 matrix: P = f16(S) */
        for (size_t at = 5; at < n && (nv[at] >> 16); at += nv[at] >> 16)
            convs += (nv[at] & 0xffff) == 115;
        CHECK(c.muladds == count_op(nv, n, SPV_OP_COOPMAT_MULADD_NV) && c.use_changes >= 1 && c.use_changes <= convs,
              "%s: %d MulAdds, %d accumulator -> A conversions (of %d)", khr_path, c.muladds, c.use_changes, convs);
        printf("%s: %zu words, %d KHR types (A %d B %d C %d), %d MulAdds, %d P = f16(S) as element moves, %d lengths\n",
               strrchr(khr_path, '/') ? strrchr(khr_path, '/') + 1 : khr_path, kn, c.types, c.use[0], c.use[1], c.use[2],
               c.muladds, c.use_changes, c.lengths);
        free_module(&m);
    }
    free(nv), free(built), free(again);
}

/* ---- a handcrafted NV module: one 16x16 f16 type as A, B and accumulator ---- */

typedef struct asm_buf {
    uint32_t w[512];
    size_t n;
} asm_buf;

static void emit(asm_buf *b, uint32_t op, int count, ...)
{
    va_list ap;
    va_start(ap, count);
    b->w[b->n++] = ((uint32_t)(count + 1) << 16) | op;
    for (int i = 0; i < count; ++i) b->w[b->n++] = va_arg(ap, uint32_t);
    va_end(ap);
}

static void emit_string(asm_buf *b, uint32_t op, uint32_t id, const char *s)
{
    size_t len = strlen(s), words = (len + 4) / 4, at = b->n;
    b->w[b->n++] = (uint32_t)((1 + (id ? 1 : 0) + words) << 16) | op;
    if (id) b->w[b->n++] = id;
    memset(b->w + b->n, 0, words * 4);
    memcpy(b->w + b->n, s, len);
    b->n += words;
    (void)at;
}

enum { VOID = 1, FN, BOOL, FALSE_, TRUE_, UINT, HALF, U0, U3, U16, U256, H0, MAT, PTR_FN_MAT, ARR, PTR_WG_ARR, PTR_WG_H,
       ZERO, SH, MAIN, LABEL, A_VAR, ACC_VAR, P, A, B, A2, C, D, D2, E, F, BOUND };

/* two_roles: %a2 also feeds MulAdd's B (a value, unlike a constant, cannot be split) */
static size_t handcrafted(asm_buf *b, int two_roles)
{
    b->n = 0;
    uint32_t header[5] = {SPV_MAGIC, 0x00010300, 0, BOUND, 0};
    memcpy(b->w, header, sizeof header);
    b->n = 5;
    emit(b, 17, 1, 1);    /* OpCapability Shader */
    emit(b, 17, 1, 9);    /* Float16 */
    emit(b, 17, 1, 5345); /* VulkanMemoryModel */
    emit(b, 17, 1, SPV_CAP_COOPMAT_NV);
    emit_string(b, 10, 0, "SPV_KHR_vulkan_memory_model");
    emit_string(b, 10, 0, "SPV_NV_cooperative_matrix");
    emit(b, 14, 2, 0, 3); /* OpMemoryModel Logical Vulkan */
    b->w[b->n++] = (5u << 16) | 15, b->w[b->n++] = 5, b->w[b->n++] = MAIN, b->w[b->n++] = 0x6e69616d, b->w[b->n++] = 0;
    emit(b, 16, 5, MAIN, 17, 32, 1, 1); /* LocalSize 32 1 1 */
    emit_string(b, OP_NAME, MAT, "mat16");
    emit(b, 19, 1, VOID);
    emit(b, 33, 2, FN, VOID);
    emit(b, 20, 1, BOOL);
    emit(b, 42, 2, BOOL, FALSE_);
    emit(b, 41, 2, BOOL, TRUE_);
    emit(b, OP_TYPE_INT, 3, UINT, 32, 0);
    emit(b, OP_TYPE_FLOAT, 2, HALF, 16);
    emit(b, OP_CONSTANT, 3, UINT, U0, 0);
    emit(b, OP_CONSTANT, 3, UINT, U3, 3);
    emit(b, OP_CONSTANT, 3, UINT, U16, 16);
    emit(b, OP_CONSTANT, 3, UINT, U256, 256);
    emit(b, OP_CONSTANT, 3, HALF, H0, 0);
    emit(b, SPV_OP_TYPE_COOPMAT_NV, 5, MAT, HALF, U3, U16, U16);
    emit(b, OP_TYPE_POINTER, 3, PTR_FN_MAT, 7, MAT); /* Function */
    emit(b, 28, 3, ARR, HALF, U256);
    emit(b, OP_TYPE_POINTER, 3, PTR_WG_ARR, 4, ARR); /* Workgroup */
    emit(b, OP_TYPE_POINTER, 3, PTR_WG_H, 4, HALF);
    emit(b, 44, 3, MAT, ZERO, H0); /* a zero matrix: the first accumulator, and an A operand */
    emit(b, OP_VARIABLE, 3, PTR_WG_ARR, SH, 4);
    emit(b, 54, 4, VOID, MAIN, 0, FN);
    emit(b, 248, 1, LABEL);
    emit(b, OP_VARIABLE, 3, PTR_FN_MAT, A_VAR, 7);
    emit(b, OP_VARIABLE, 3, PTR_FN_MAT, ACC_VAR, 7);
    emit(b, 65, 4, PTR_WG_H, P, SH, U0);
    emit(b, SPV_OP_COOPMAT_LOAD_NV, 5, MAT, A, P, U16, FALSE_);
    emit(b, OP_STORE, 2, A_VAR, A);
    emit(b, SPV_OP_COOPMAT_LOAD_NV, 5, MAT, B, P, U16, TRUE_);
    emit(b, OP_STORE, 2, ACC_VAR, ZERO);
    emit(b, OP_LOAD, 3, MAT, A2, A_VAR);
    emit(b, OP_LOAD, 3, MAT, C, ACC_VAR);
    emit(b, SPV_OP_COOPMAT_MULADD_NV, 5, MAT, D, A2, two_roles ? A2 : B, C);
    emit(b, 129, 4, MAT, D2, D, D); /* OpFAdd */
    emit(b, SPV_OP_COOPMAT_MULADD_NV, 5, MAT, E, ZERO, B, D2);
    emit(b, OP_STORE, 2, ACC_VAR, E);
    emit(b, OP_LOAD, 3, MAT, F, ACC_VAR);
    emit(b, SPV_OP_COOPMAT_STORE_NV, 4, P, F, U16, FALSE_);
    emit(b, 253, 0); /* OpReturn */
    emit(b, 56, 0);  /* OpFunctionEnd */
    return b->n;
}

static void split_module(const char *dir)
{
    static asm_buf b;
    size_t n = handcrafted(&b, 0), out_n = 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/handcrafted_nv.spv", dir); /* kept for spirv-val by hand */
    FILE *f = fopen(path, "wb");
    if (f) fwrite(b.w, 4, n, f), fclose(f);
    uint32_t *out = NULL;
    char err[256] = "";
    int rc = avk_spirv_nv2khr(b.w, n, &out, &out_n, err, sizeof err);
    CHECK(rc == 0, "handcrafted module: %s", err);
    module m;
    if (rc == 0 && load_module(&m, out, out_n)) {
        khr_counts c;
        check_khr(&m, "handcrafted", &c);
        CHECK(c.types == 3 && c.use[0] == 1 && c.use[1] == 1 && c.use[2] == 1, "one NV type -> %d KHR types (A %d B %d C %d)",
              c.types, c.use[0], c.use[1], c.use[2]);
        /* the variables split with their values; the zero constant is copied per Use it is read with */
        uint32_t pa = m.type[A_VAR], pc = m.type[ACC_VAR];
        CHECK(pa != pc && use_of(&m, ins(&m, pa)[3]) == SPV_USE_A && use_of(&m, ins(&m, pc)[3]) == SPV_USE_ACC,
              "the A and accumulator variables do not point at A and accumulator types");
        int zeros = 0, names = 0;
        for (size_t at = 5; at < m.n; at += m.w[at] >> 16) {
            zeros += (m.w[at] & 0xffff) == 44;
            names += (m.w[at] & 0xffff) == OP_NAME && !strcmp((const char *)(m.w + at + 2), "mat16");
        }
        CHECK(zeros == 2 && names == 3, "%d copies of the zero matrix (want 2), %d names of the type (want 3)", zeros, names);
        CHECK(m.bound > BOUND, "new ids past the old bound: %u", m.bound);
        free_module(&m);
    }
    free(out);
    n = handcrafted(&b, 1);
    rc = avk_spirv_nv2khr(b.w, n, &out, &out_n, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "more than one role"), "a value read as A and B: %s", rc ? err : "accepted");
    if (rc == 0) free(out);
}

/* ---- a handcrafted NV module: S = A.B as f32, P = f16(S) the next A (and, asked, S's length as a spec
 * constant, which the tool refuses: its KHR form crashed NVIDIA's compiler) ---- */

enum { V_ = 1, FN_, BOOL_, FALSE__, TRUE__, UINT_, HALF_, FLOAT_, U3_, U16_, U256_, F0_, MAT16, MAT32, ARR_, PTR_ARR_, PTR_H_, ZERO32,
       SH_, LEN_, MAIN_, LABEL_, PH_, A_, B_, S_, P16_, O_, BOUND_ };

static size_t acc_to_a_module(asm_buf *b, int spec_length)
{
    uint32_t header[5] = {SPV_MAGIC, 0x00010300, 0, BOUND_, 0};
    memcpy(b->w, header, sizeof header);
    b->n = 5;
    emit(b, 17, 1, 1), emit(b, 17, 1, 9), emit(b, 17, 1, 5345), emit(b, 17, 1, SPV_CAP_COOPMAT_NV);
    emit_string(b, 10, 0, "SPV_KHR_vulkan_memory_model");
    emit_string(b, 10, 0, "SPV_NV_cooperative_matrix");
    emit(b, 14, 2, 0, 3);
    b->w[b->n++] = (5u << 16) | 15, b->w[b->n++] = 5, b->w[b->n++] = MAIN_, b->w[b->n++] = 0x6e69616d, b->w[b->n++] = 0;
    emit(b, 16, 5, MAIN_, 17, 32, 1, 1);
    emit(b, 19, 1, V_), emit(b, 33, 2, FN_, V_), emit(b, 20, 1, BOOL_), emit(b, 42, 2, BOOL_, FALSE__), emit(b, 41, 2, BOOL_, TRUE__);
    emit(b, OP_TYPE_INT, 3, UINT_, 32, 0), emit(b, OP_TYPE_FLOAT, 2, HALF_, 16), emit(b, OP_TYPE_FLOAT, 2, FLOAT_, 32);
    emit(b, OP_CONSTANT, 3, UINT_, U3_, 3), emit(b, OP_CONSTANT, 3, UINT_, U16_, 16), emit(b, OP_CONSTANT, 3, UINT_, U256_, 256);
    emit(b, OP_CONSTANT, 3, FLOAT_, F0_, 0);
    emit(b, SPV_OP_TYPE_COOPMAT_NV, 5, MAT16, HALF_, U3_, U16_, U16_);
    emit(b, SPV_OP_TYPE_COOPMAT_NV, 5, MAT32, FLOAT_, U3_, U16_, U16_);
    emit(b, 28, 3, ARR_, HALF_, U256_), emit(b, OP_TYPE_POINTER, 3, PTR_ARR_, 4, ARR_), emit(b, OP_TYPE_POINTER, 3, PTR_H_, 4, HALF_);
    emit(b, 44, 3, MAT32, ZERO32, F0_);
    emit(b, OP_VARIABLE, 3, PTR_ARR_, SH_, 4);
    if (spec_length) /* 5 words */
        emit(b, 52, 3, UINT_, LEN_, SPV_OP_COOPMAT_LENGTH_NV), b->w[b->n - 4] += 1u << 16, b->w[b->n++] = MAT32;
    emit(b, 54, 4, V_, MAIN_, 0, FN_), emit(b, 248, 1, LABEL_);
    emit(b, 65, 4, PTR_H_, PH_, SH_, U16_);
    emit(b, SPV_OP_COOPMAT_LOAD_NV, 5, MAT16, A_, PH_, U16_, FALSE__);
    emit(b, SPV_OP_COOPMAT_LOAD_NV, 5, MAT16, B_, PH_, U16_, TRUE__);
    emit(b, SPV_OP_COOPMAT_MULADD_NV, 5, MAT32, S_, A_, B_, ZERO32);
    emit(b, 115, 3, MAT16, P16_, S_); /* OpFConvert: the accumulator becomes the next A */
    emit(b, SPV_OP_COOPMAT_MULADD_NV, 5, MAT32, O_, P16_, B_, S_);
    emit(b, SPV_OP_COOPMAT_STORE_NV, 4, PH_, O_, U16_, FALSE__);
    emit(b, 253, 0), emit(b, 56, 0);
    return b->n;
}

static void acc_to_a_cases(void)
{
    static asm_buf b;
    const uint8_t order[4] = {1, 0, 3, 2};
    avk_nv2khr_options opts = {.acc_to_a_elements = 4, .acc_to_a_order = order};
    size_t n = acc_to_a_module(&b, 1), out_n = 0;
    uint32_t *out = NULL;
    char err[256] = "";
    int rc = avk_spirv_nv2khr_with(b.w, n, &opts, &out, &out_n, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "matrix length"), "a spec-constant length: %s", rc ? err : "accepted");
    if (rc == 0) free(out), out = NULL;
    n = acc_to_a_module(&b, 0);
    rc = avk_spirv_nv2khr(b.w, n, &out, &out_n, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "keep the Use") && strstr(err, "Accumulator"), "f16(S) as A without acc_to_a: %s",
          rc ? err : "accepted");
    if (rc == 0) free(out);
    rc = avk_spirv_nv2khr_with(b.w, n, &opts, &out, &out_n, err, sizeof err);
    CHECK(rc == 0, "f16(S) as A with 4 element moves: %s", err);
    module m;
    if (rc == 0 && load_module(&m, out, out_n)) {
        khr_counts c;
        check_khr(&m, "acc-to-a", &c);
        CHECK(c.types == 4 && c.use[0] == 1 && c.use[1] == 1 && c.use[2] == 2 && c.use_changes == 1 && c.lengths == 0,
              "%d KHR types (A %d B %d C %d: f16 and f32 accumulators), %d moves, %d lengths", c.types, c.use[0], c.use[1],
              c.use[2], c.use_changes, c.lengths);
        /* the moves: A element i from accumulator element order[i], the last one defining P16 */
        int k = 0, in_order = 1;
        uint32_t last = 0;
        for (size_t at = 5; at < m.n; at += m.w[at] >> 16) {
            const uint32_t *i = m.w + at;
            if ((i[0] & 0xffff) == 81 && is_khr_matrix(&m, m.type[i[3]])) in_order &= k < 4 && i[4] == order[k];
            if ((i[0] & 0xffff) == 82) in_order &= i[5] == (uint32_t)k++, last = i[2];
        }
        CHECK(in_order && k == 4 && last == P16_ && use_of(&m, m.type[P16_]) == SPV_USE_A && use_of(&m, m.type[S_]) == SPV_USE_ACC,
              "element moves out of order (%d moves), or P16 is not the A operand they build", k);
        free_module(&m);
    }
    free(out);
}

/* ---- the tool: bad input exits 2 with one line; output goes through a temporary file ---- */

static int run_tool(const char *tool, const char *in, const char *out, const char *errfile)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 2>'%s'", tool, in, out, errfile);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, ch;
    while (f && (ch = fgetc(f)) != EOF) n += ch == '\n';
    if (f) fclose(f);
    return n;
}

/* Words of the module up to the middle of its first instruction of two or more words that starts
 * at or past its middle: a cut there leaves that instruction short (wherever the compiler's output
 * puts the halfway point) */
static size_t mid_instruction_cut(const uint32_t *w, size_t n)
{
    size_t at = 5; /* past the header */
    while (at < n) {
        const size_t len = w[at] >> 16;
        if (len == 0) break;
        if (at >= n / 2 && len >= 2 && at + len <= n) return at + 1;
        at += len;
    }
    return n / 2; /* (a module this test's build never makes) */
}

static void tool_cases(const char *tool, const char *nv_path, const char *dir)
{
    size_t n = 0;
    uint32_t *nv = read_words(nv_path, &n);
    if (!nv) return;
    char in[1024], out[1024], err[1024], tmp[1100];
    snprintf(out, sizeof out, "%s/out.spv", dir);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    struct {
        const char *label;
        const void *data;
        size_t bytes;
    } bad[] = {{"not SPIR-V", "#version 450\nvoid main() {}\n", 28}, {"empty", "", 0},
               {"cut mid-word", nv, n * 4 - 3}, {"cut mid-instruction", nv, mid_instruction_cut(nv, n) * 4}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        snprintf(in, sizeof in, "%s/bad%zu.spv", dir, i);
        FILE *f = fopen(in, "wb");
        if (f) fwrite(bad[i].data, 1, bad[i].bytes, f), fclose(f);
        remove(out);
        int rc = run_tool(tool, in, out, err);
        struct stat st;
        CHECK(rc == 2 && lines_in(err) == 1 && stat(out, &st) != 0 && stat(tmp, &st) != 0,
              "%s: exit %d, %d lines on stderr, output or temporary file left", bad[i].label, rc, lines_in(err));
    }
    struct stat st;
    int rc = run_tool(tool, nv_path, out, err);
    CHECK(rc == 0 && stat(out, &st) == 0 && stat(tmp, &st) != 0, "a good module: exit %d", rc);
    free(nv);
}

int main(int argc, char **argv)
{
    if (argc < 5 || (argc > 5 && (argc - 6) % 2)) {
        fprintf(stderr, "usage: test_spirv_nv2khr TOOL NV.spv KHR.spv WORKDIR [ACC_TO_A NV_RS.spv KHR_RS.spv ...]\n");
        return 2;
    }
    mkdir(argv[4], 0755);
    compiled_module(argv[2], argv[3]);
    for (int i = 6; i + 1 < argc; i += 2) rs_module(argv[1], argv[5], argv[i], argv[i + 1], argv[4]);
    split_module(argv[4]);
    acc_to_a_cases();
    tool_cases(argv[1], argv[2], argv[4]);
    return avk_test_finish(passed, failed);
}
