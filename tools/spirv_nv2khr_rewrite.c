/* SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix (docs/spirv-nv2khr.md).
 *
 * An NV matrix type has no Use; a KHR one has (A, B or accumulator). Which Use
 * a value needs follows from where it flows: into OpCooperativeMatrixMulAdd's
 * A, B or C (its result is an accumulator). Values that must share one type
 * (a load and the variable it reads, the operands of an OpFAdd, a phi and its
 * inputs...) are joined with union-find; each class takes the Use its MulAdds
 * ask for (accumulator when none ask). Each NV type, and each type built on it
 * (arrays, pointers), becomes one KHR type per Use its values need; constants
 * are copied once per Use they are read with. The id-and-opcode layout of the
 * instructions is taken from the SPIR-V specification's grammar, for the
 * instructions glslang emits around cooperative matrices; anything else that
 * touches a matrix is refused with a reason rather than guessed at. */
#include "spirv_nv2khr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Core opcodes this file looks at (SPIR-V specification, section 3.52). */
enum {
    OP_UNDEF = 1, OP_NAME = 5, OP_MEMBER_NAME = 6, OP_EXTENSION = 10, OP_CAPABILITY = 17,
    OP_TYPE_INT = 21, OP_TYPE_ARRAY = 28, OP_TYPE_RUNTIME_ARRAY = 29, OP_TYPE_STRUCT = 30, OP_TYPE_POINTER = 32,
    OP_TYPE_FUNCTION = 33, OP_CONSTANT_TRUE = 41, OP_CONSTANT_FALSE = 42, OP_CONSTANT = 43, OP_CONSTANT_COMPOSITE = 44,
    OP_CONSTANT_NULL = 46, OP_SPEC_CONSTANT_COMPOSITE = 51, OP_SPEC_CONSTANT_OP = 52, OP_FUNCTION = 54,
    OP_FUNCTION_PARAMETER = 55, OP_FUNCTION_CALL = 57, OP_VARIABLE = 59, OP_LOAD = 61, OP_STORE = 62,
    OP_COPY_MEMORY = 63, OP_ACCESS_CHAIN = 65, OP_IN_BOUNDS_ACCESS_CHAIN = 66, OP_PTR_ACCESS_CHAIN = 67,
    OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 70, OP_DECORATE = 71, OP_MEMBER_DECORATE = 72, OP_COMPOSITE_CONSTRUCT = 80,
    OP_COMPOSITE_EXTRACT = 81, OP_COMPOSITE_INSERT = 82, OP_COPY_OBJECT = 83, OP_SELECT = 169, OP_PHI = 245,
    OP_RETURN_VALUE = 254, OP_DECORATE_ID = 332, OP_COPY_LOGICAL = 400, OP_DECORATE_STRING = 5632,
    OP_MEMBER_DECORATE_STRING = 5633,
};

/* Instructions without a result id (the grammar's list, the ones a compute
 * shader may hold); every other opcode has one, after a result type unless
 * listed in has_no_result_type. */
static int has_no_result(uint32_t op)
{
    static const uint16_t ops[] = {0,   2,   3,   4,   5,   6,   8,   10,  14,  15,  16,  17,  39,  56,  62,  63,  64,
                                   71,  72,  74,  75,  99,  218, 219, 220, 221, 224, 225, 228, 246, 247, 249, 250, 251,
                                   252, 253, 254, 255, 256, 257, 260, 297, 298, 301, 302, 317, 318, 329, 330, 331, 332,
                                   4416, 4445, 4446, 4448, 4449, 4458, 4473, 4474, 4475, 4476, 5294, 5295, 5299, 5360,
                                   5364, 5365, 5380, 5630, 5632, 5633};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i)
        if (ops[i] == op) return 1;
    return 0;
}

static int is_type_op(uint32_t op)
{
    return (op >= 19 && op <= 38) || op == 322 || op == 327 || op == 4456 || op == 4472 || op == 5341 ||
           op == SPV_OP_TYPE_COOPMAT_NV;
}

static int has_no_result_type(uint32_t op) { return is_type_op(op) || op == 7 || op == 11 || op == 73 || op == 248; }

/* Element-wise arithmetic the extensions allow on matrices: result and matrix
 * operands share one type, hence one Use. */
static int is_elementwise(uint32_t op) { return (op >= 126 && op <= 136) || op == 143; }

/* Conversions (OpConvertFToU .. OpFConvert, OpBitcast): KHR wants result and
 * operand of one Use; NV code may turn an accumulator into an A operand, which
 * the rewriter lowers to element moves (avk_nv2khr_options). */
static int is_conversion(uint32_t op) { return (op >= 109 && op <= 115) || op == 124; }

typedef struct rewriter {
    const uint32_t *w;
    size_t n;
    uint32_t bound, new_bound;
    uint32_t *def_at;   /* id -> word offset of its defining instruction (0: none) */
    uint32_t *type_of;  /* id -> result type (0: none) */
    uint32_t *cm_in;    /* type id -> the NV matrix type it is built on (0: none) */
    uint8_t *is_const;  /* id -> a matrix constant (copied per Use) */
    int32_t *node_of;   /* value id -> union-find node (-1: none) */
    int32_t *site;      /* word offset -> node of a constant read there (-1: none) */
    int32_t *parent;    /* union-find over nodes */
    uint8_t *roles;     /* node -> Use bits asked for (1 << SPV_USE_*) */
    uint32_t *node_id;  /* node -> the id it stands for (error messages) */
    int nodes, node_cap;
    uint32_t *holders;  /* word offsets of matrix types, types built on them and matrix constants, in order */
    int holder_count;
    uint8_t *need;      /* type or constant id -> Use bits to emit it with */
    uint32_t (*clone)[SPV_USES]; /* type or constant id -> its id for each Use */
    uint32_t int_const[3];       /* new 32-bit int constants 0, 1, 2 (Use and MemoryLayout values) */
    uint32_t *convs;             /* word offsets of conversions yielding a matrix */
    uint8_t *use_change;         /* per conversion: accumulator in, A or B out (moved element by element) */
    int conv_count;
    const avk_nv2khr_options *opts;
    uint32_t *out;
    size_t out_n, out_cap;
    char *err;
    size_t err_size;
} rewriter;

static int fail(rewriter *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->err_size, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t op_of(const rewriter *r, size_t at) { return r->w[at] & 0xffffu; }
static uint32_t wc_of(const rewriter *r, size_t at) { return r->w[at] >> 16; }
static int is_cm_value(const rewriter *r, uint32_t id) { return id < r->bound && r->type_of[id] && r->cm_in[r->type_of[id]]; }
/* The id a type or a constant instruction defines. */
static uint32_t holder_id(const rewriter *r, size_t at) { return r->w[at + (is_type_op(op_of(r, at)) ? 1 : 2)]; }

/* ---- union-find over the values that hold matrices ---- */

static int new_node(rewriter *r, uint32_t id)
{
    if (r->nodes == r->node_cap) {
        int cap = r->node_cap ? 2 * r->node_cap : 256;
        int32_t *p = realloc(r->parent, (size_t)cap * sizeof *p);
        if (p) r->parent = p;
        uint8_t *ro = realloc(r->roles, (size_t)cap);
        if (ro) r->roles = ro;
        uint32_t *ids = realloc(r->node_id, (size_t)cap * sizeof *ids);
        if (ids) r->node_id = ids;
        if (!p || !ro || !ids) return -1;
        r->node_cap = cap;
    }
    r->parent[r->nodes] = r->nodes;
    r->roles[r->nodes] = 0;
    r->node_id[r->nodes] = id;
    return r->nodes++;
}

static int find(rewriter *r, int x)
{
    while (r->parent[x] != x) x = r->parent[x] = r->parent[r->parent[x]];
    return x;
}

static void unite(rewriter *r, int a, int b)
{
    if (a < 0 || b < 0) return;
    a = find(r, a), b = find(r, b);
    if (a != b) r->parent[b] = a;
}

static int node_for_id(rewriter *r, uint32_t id)
{
    if (r->node_of[id] < 0) r->node_of[id] = new_node(r, id);
    return r->node_of[id];
}

/* The node of the operand at word offset at: a site of its own for a matrix
 * constant, the value's node for a matrix value, -1 for anything else. */
static int operand_node(rewriter *r, size_t at)
{
    uint32_t id = r->w[at];
    if (id >= r->bound) return -1;
    if (r->is_const[id]) {
        if (r->site[at] < 0) r->site[at] = new_node(r, id);
        return r->site[at];
    }
    return is_cm_value(r, id) ? node_for_id(r, id) : -1;
}

static int ask(rewriter *r, int node, int use)
{
    if (node < 0) return fail(r, "a cooperative-matrix operand is not a matrix value");
    r->roles[node] |= (uint8_t)(1u << use);
    return 0;
}

/* ---- pass 1: definitions, and which types hold NV matrices ---- */

static int scan_definitions(rewriter *r)
{
    for (size_t at = 5; at < r->n; at += wc_of(r, at)) {
        uint32_t op = op_of(r, at), wc = wc_of(r, at);
        if (wc == 0 || at + wc > r->n)
            return fail(r, "truncated: the instruction at word %zu (opcode %u) runs past the end", at, op);
        if (op == SPV_OP_TYPE_COOPMAT_KHR || (op == OP_CAPABILITY && wc > 1 && r->w[at + 1] == SPV_CAP_COOPMAT_KHR))
            return fail(r, "the module already uses SPV_KHR_cooperative_matrix");
        if (has_no_result(op)) continue;
        int typed = !has_no_result_type(op);
        if (wc < 2u + (unsigned)typed) return fail(r, "malformed instruction at word %zu (opcode %u)", at, op);
        uint32_t id = r->w[at + 1 + typed];
        if (id == 0 || id >= r->bound) return fail(r, "id %u at word %zu is outside the bound %u", id, at, r->bound);
        if (r->def_at[id]) return fail(r, "id %u is defined twice", id);
        r->def_at[id] = (uint32_t)at;
        if (typed) r->type_of[id] = r->w[at + 1];
        /* components are declared before the types built on them */
        uint32_t cm = 0;
        if (op == SPV_OP_TYPE_COOPMAT_NV) {
            if (wc != 6) return fail(r, "OpTypeCooperativeMatrixNV %u has %u words, not 6", id, wc);
            cm = id;
        } else if ((op == OP_TYPE_ARRAY || op == OP_TYPE_RUNTIME_ARRAY) && wc >= 3 && r->w[at + 2] < r->bound) {
            cm = r->cm_in[r->w[at + 2]];
        } else if (op == OP_TYPE_POINTER && wc >= 4 && r->w[at + 3] < r->bound) {
            cm = r->cm_in[r->w[at + 3]];
        } else if (op == OP_TYPE_STRUCT || op == OP_TYPE_FUNCTION) {
            for (uint32_t k = 2; k < wc; ++k)
                if (r->w[at + k] < r->bound && r->cm_in[r->w[at + k]])
                    return fail(r, "%s %u holds a cooperative matrix: not handled",
                                op == OP_TYPE_STRUCT ? "struct" : "function type", id);
        }
        r->cm_in[id] = cm;
        int constant = op == OP_UNDEF || op == OP_CONSTANT_COMPOSITE || op == OP_CONSTANT_NULL ||
                       op == OP_SPEC_CONSTANT_COMPOSITE;
        if (typed && r->w[at + 1] < r->bound && r->cm_in[r->w[at + 1]]) {
            if (constant && r->cm_in[r->w[at + 1]] != r->w[at + 1])
                return fail(r, "constant %u: a composite of cooperative matrices is not handled", id);
            if (op == OP_SPEC_CONSTANT_OP) return fail(r, "OpSpecConstantOp %u yields a cooperative matrix: not handled", id);
            r->is_const[id] = (uint8_t)constant;
        }
        if (cm || r->is_const[id]) r->holders[r->holder_count++] = (uint32_t)at;
        /* glslang makes NV's m.length() a spec constant; its KHR twin crashed the H100's driver
         * (580.159.04) inside vkCreateComputePipelines, so a KHR module must not carry one */
        if (op == OP_SPEC_CONSTANT_OP && wc > 3 && r->w[at + 3] == SPV_OP_COOPMAT_LENGTH_NV)
            return fail(r, "OpSpecConstantOp %u takes a matrix length (m.length()): NVIDIA's compiler crashes on its KHR form; "
                           "use a constant length", id);
    }
    return 0;
}

/* ---- pass 2: which values share a type, and the Uses MulAdds ask for ---- */

static int join_values(rewriter *r)
{
    for (size_t at = 5; at < r->n; at += wc_of(r, at)) {
        uint32_t op = op_of(r, at), wc = wc_of(r, at);
        int typed = !has_no_result(op) && !has_no_result_type(op);
        uint32_t result = typed ? r->w[at + 2] : 0;
        int res = typed && is_cm_value(r, result) && !r->is_const[result] ? node_for_id(r, result) : -1;
        switch (op) {
        case OP_LOAD:
            unite(r, res, operand_node(r, at + 3));
            break;
        case OP_STORE:
        case OP_COPY_MEMORY:
            unite(r, operand_node(r, at + 1), operand_node(r, at + 2));
            break;
        case OP_ACCESS_CHAIN:
        case OP_IN_BOUNDS_ACCESS_CHAIN:
        case OP_PTR_ACCESS_CHAIN:
        case OP_IN_BOUNDS_PTR_ACCESS_CHAIN:
        case OP_COMPOSITE_EXTRACT:
        case OP_COPY_OBJECT:
        case OP_COPY_LOGICAL:
            if (res >= 0) unite(r, res, operand_node(r, at + 3)); /* a chain down to one element leaves the matrix */
            break;
        case OP_COMPOSITE_INSERT:
            unite(r, res, operand_node(r, at + 3));
            unite(r, res, operand_node(r, at + 4));
            break;
        case OP_PHI:
            for (uint32_t k = 3; k + 1 < wc; k += 2) unite(r, res, operand_node(r, at + k));
            break;
        case OP_SELECT:
            if (wc >= 6) unite(r, res, operand_node(r, at + 4)), unite(r, res, operand_node(r, at + 5));
            break;
        case OP_COMPOSITE_CONSTRUCT: /* a matrix from one scalar, or an array of matrices */
            for (uint32_t k = 3; k < wc; ++k) unite(r, res, operand_node(r, at + k));
            break;
        case OP_VARIABLE:
            if (wc > 4) unite(r, res, operand_node(r, at + 4));
            break;
        case SPV_OP_COOPMAT_LOAD_NV:
            if (wc < 6) return fail(r, "OpCooperativeMatrixLoadNV at word %zu is too short", at);
            break;
        case SPV_OP_COOPMAT_STORE_NV:
            if (wc < 5 || operand_node(r, at + 2) < 0) return fail(r, "OpCooperativeMatrixStoreNV at word %zu: bad operands", at);
            break;
        case SPV_OP_COOPMAT_MULADD_NV:
            if (wc != 6) return fail(r, "OpCooperativeMatrixMulAddNV at word %zu has %u words, not 6", at, wc);
            if (ask(r, operand_node(r, at + 3), SPV_USE_A) || ask(r, operand_node(r, at + 4), SPV_USE_B) ||
                ask(r, operand_node(r, at + 5), SPV_USE_ACC) || ask(r, res, SPV_USE_ACC))
                return -1;
            unite(r, res, operand_node(r, at + 5));
            break;
        case SPV_OP_COOPMAT_LENGTH_NV:
            break;
        case OP_FUNCTION:
        case OP_FUNCTION_PARAMETER:
        case OP_FUNCTION_CALL:
            if (res >= 0) return fail(r, "cooperative matrix %u crosses a function boundary: not handled", result);
            break;
        case OP_RETURN_VALUE:
            if (operand_node(r, at + 1) >= 0) return fail(r, "a function returns a cooperative matrix: not handled");
            break;
        default:
            if (is_conversion(op) && res >= 0) {
                if (wc != 4 || operand_node(r, at + 3) < 0) return fail(r, "conversion %u of a non-matrix to a matrix", result);
                r->convs[r->conv_count++] = (uint32_t)at; /* Uses meet in plan_conversions */
            } else if (is_elementwise(op)) {
                for (uint32_t k = 3; k < wc; ++k) unite(r, res, operand_node(r, at + k));
            } else if (res >= 0) {
                return fail(r, "opcode %u yields cooperative matrix %u: not handled", op, result);
            }
        }
    }
    return 0;
}

static const char *use_names(unsigned bits)
{
    static const char *names[8] = {"", " MatrixA", " MatrixB", " MatrixA MatrixB", " Accumulator", " MatrixA Accumulator",
                                   " MatrixB Accumulator", " MatrixA MatrixB Accumulator"};
    return names[bits & 7];
}

static int single_use(unsigned bits) { return bits == 1 ? SPV_USE_A : bits == 2 ? SPV_USE_B : SPV_USE_ACC; }

/* The Use of a node's class; -1 (with the reason) when it is asked for two. */
static int use_of_node(rewriter *r, int node)
{
    unsigned bits = r->roles[find(r, node)];
    if (bits & (bits - 1))
        return fail(r, "value %u flows into more than one role (%s): a value cannot be split", r->node_id[node],
                    use_names(bits));
    return single_use(bits);
}

/* ---- which (type or constant, Use) pairs exist, and their ids ---- */

/* A converted class no MulAdd reads keeps the Use of what it was converted
 * from (never the other way: a matrix only converted into an A operand, like the
 * layout probe's, stays the accumulator it was loaded as). Then each conversion
 * keeps its Use, or turns an accumulator into an A or B operand, which needs the
 * element moves and an accumulator copy of its result type. */
static int plan_conversions(rewriter *r)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < r->conv_count; ++i) {
            int res = find(r, r->node_of[r->w[r->convs[i] + 2]]), src = find(r, operand_node(r, r->convs[i] + 3));
            if (!r->roles[res] && r->roles[src]) r->roles[res] = r->roles[src], changed = 1;
        }
    }
    for (int i = 0; i < r->conv_count; ++i) {
        size_t at = r->convs[i];
        uint32_t result = r->w[at + 2];
        int to = use_of_node(r, r->node_of[result]), from = use_of_node(r, operand_node(r, at + 3));
        if (to < 0 || from < 0) return -1;
        if (to == from) continue;
        if (from != SPV_USE_ACC || !r->opts->acc_to_a_elements)
            return fail(r, "conversion %u turns a matrix of Use%s into one of Use%s: SPV_KHR_cooperative_matrix conversions keep the "
                        "Use%s", result, use_names(1u << from), use_names(1u << to),
                        from == SPV_USE_ACC ? " (acc_to_a_elements lowers it to element moves)" : "");
        r->use_change[i] = 1;
        r->need[r->w[at + 1]] |= 1u << SPV_USE_ACC; /* the same-Use conversion's result */
    }
    return 0;
}

static int plan_clones(rewriter *r)
{
    for (int x = 0; x < r->nodes; ++x) r->roles[find(r, x)] |= r->roles[x];
    if (plan_conversions(r)) return -1;
    for (uint32_t id = 1; id < r->bound; ++id) {
        if (r->node_of[id] < 0) continue;
        int use = use_of_node(r, r->node_of[id]);
        if (use < 0) return -1;
        r->need[r->type_of[id]] |= (uint8_t)(1u << use);
    }
    for (size_t at = 5; at < r->n; ++at) /* every operand word a constant is read at */
        if (r->site[at] >= 0) {
            int use = use_of_node(r, r->site[at]);
            if (use < 0) return -1;
            r->need[r->w[at]] |= (uint8_t)(1u << use);
        }
    /* a matrix's length is asked of a type: it must have one Use */
    for (size_t at = 5; at < r->n; at += wc_of(r, at))
        if (op_of(r, at) == SPV_OP_COOPMAT_LENGTH_NV) {
            uint32_t t = wc_of(r, at) == 4 ? r->w[at + 3] : 0;
            if (t >= r->bound || r->cm_in[t] != t) return fail(r, "OpCooperativeMatrixLengthNV at word %zu: not a matrix type", at);
            if (r->need[t] & (r->need[t] - 1))
                return fail(r, "OpCooperativeMatrixLengthNV of type %u, which serves several roles (%s)", t, use_names(r->need[t]));
        }
    /* unread constants and types still get emitted (as accumulators); a constant's
     * or a type's Uses reach the types it is built on, which come before it */
    for (int i = r->holder_count - 1; i >= 0; --i) {
        size_t at = r->holders[i];
        uint32_t op = op_of(r, at), id = holder_id(r, at);
        if (!r->need[id]) r->need[id] = 1u << SPV_USE_ACC;
        if (!is_type_op(op)) r->need[r->w[at + 1]] |= r->need[id];
        if (op == OP_TYPE_ARRAY || op == OP_TYPE_RUNTIME_ARRAY) r->need[r->w[at + 2]] |= r->need[id];
        if (op == OP_TYPE_POINTER) r->need[r->w[at + 3]] |= r->need[id];
    }
    r->new_bound = r->bound;
    for (uint32_t id = 1; id < r->bound; ++id) {
        int first = 1;
        for (int u = 0; u < SPV_USES; ++u)
            if (r->need[id] & (1u << u)) {
                r->clone[id][u] = first ? id : r->new_bound++;
                first = 0;
            }
    }
    return 0;
}

/* ---- pass 3: emit ---- */

static int emit(rewriter *r, const uint32_t *words, size_t count)
{
    if (r->out_n + count > r->out_cap) {
        size_t cap = (r->out_n + count) * 2;
        uint32_t *p = realloc(r->out, cap * sizeof *p);
        if (!p) return fail(r, "out of memory");
        r->out = p;
        r->out_cap = cap;
    }
    memcpy(r->out + r->out_n, words, count * sizeof *words);
    r->out_n += count;
    return 0;
}

static int emit_string_op(rewriter *r, uint32_t op, const char *s)
{
    uint32_t words[16] = {0};
    size_t len = strlen(s), n = 1 + (len + 4) / 4;
    memcpy(words + 1, s, len);
    words[0] = (uint32_t)(n << 16) | op;
    return emit(r, words, n);
}

static int string_is(const rewriter *r, size_t at, const char *s)
{
    size_t len = strlen(s), bytes = (wc_of(r, at) - 1) * 4;
    return bytes >= len + 1 && memcmp(r->w + at + 1, s, len + 1) == 0;
}

/* The int constants 0..2 the KHR types' Use and the loads' and stores' MemoryLayout
 * read, declared with the type of the first matrix type's Rows (a 32-bit int). */
static int emit_int_constants(rewriter *r, size_t first_matrix_type)
{
    uint32_t rows = r->w[first_matrix_type + 4], int_type = rows < r->bound ? r->type_of[rows] : 0;
    size_t it = int_type ? r->def_at[int_type] : 0;
    if (!it || op_of(r, it) != OP_TYPE_INT || r->w[it + 2] != 32)
        return fail(r, "the Rows of matrix type %u is not a 32-bit integer constant", r->w[first_matrix_type + 1]);
    for (uint32_t v = 0; v < 3; ++v) {
        r->int_const[v] = r->new_bound++;
        uint32_t c[4] = {(4u << 16) | OP_CONSTANT, int_type, r->int_const[v], v};
        if (emit(r, c, 4)) return -1;
    }
    return 0;
}

/* NV's ColumnMajor is a bool constant; KHR's MemoryLayout an int (RowMajorKHR 0, ColumnMajorKHR 1). */
static int layout_of(rewriter *r, uint32_t column_major, uint32_t *layout)
{
    size_t at = column_major < r->bound ? r->def_at[column_major] : 0;
    if (!at || (op_of(r, at) != OP_CONSTANT_TRUE && op_of(r, at) != OP_CONSTANT_FALSE))
        return fail(r, "ColumnMajor %u is not OpConstantTrue/False", column_major);
    *layout = r->int_const[op_of(r, at) == OP_CONSTANT_TRUE ? 1 : 0];
    return 0;
}

/* Cooperative Matrix Operands for an integer MulAdd: NV took signedness from the types. */
static uint32_t signed_operands(const rewriter *r, const uint32_t *mm)
{
    uint32_t bits = 0, ids[3] = {mm[3], mm[4], mm[5]}; /* A, B, C; then the result type */
    for (int i = 0; i < 4; ++i) {
        uint32_t t = i < 3 ? r->type_of[ids[i]] : mm[1];
        size_t tat = r->def_at[r->cm_in[t]], cat = r->def_at[r->w[tat + 2]];
        if (op_of(r, cat) == OP_TYPE_INT && r->w[cat + 3] == 1) bits |= 1u << i; /* Matrix{A,B,C,Result}SignedComponentsKHR */
    }
    return bits;
}

/* An accumulator converted into an A (or B) operand: the conversion into an
 * accumulator of the result's component type, then its elements moved one by
 * one into an undefined A matrix (KHR treats a matrix as a composite). */
static int emit_use_change(rewriter *r, size_t at, int to)
{
    uint32_t nv_type = r->w[at + 1], result = r->w[at + 2], component = r->w[r->def_at[nv_type] + 2];
    uint32_t to_type = r->clone[nv_type][to], acc_type = r->clone[nv_type][SPV_USE_ACC];
    uint32_t converted = r->new_bound++, prev = r->new_bound++;
    uint32_t conv[4] = {(4u << 16) | op_of(r, at), acc_type, converted, r->w[at + 3]};
    uint32_t undef[3] = {(3u << 16) | OP_UNDEF, to_type, prev};
    if (emit(r, conv, 4) || emit(r, undef, 3)) return -1;
    uint32_t count = r->opts->acc_to_a_elements;
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t elem = r->new_bound++, next = i + 1 == count ? result : r->new_bound++;
        uint32_t from = r->opts->acc_to_a_order ? r->opts->acc_to_a_order[i] : i;
        uint32_t extract[5] = {(5u << 16) | OP_COMPOSITE_EXTRACT, component, elem, converted, from};
        uint32_t insert[6] = {(6u << 16) | OP_COMPOSITE_INSERT, to_type, next, elem, prev, i};
        if (emit(r, extract, 5) || emit(r, insert, 6)) return -1;
        prev = next;
    }
    return 0;
}

/* One instruction, retyped where it holds a matrix, NV opcodes turned into KHR ones. */
static int emit_rewritten(rewriter *r, size_t at)
{
    uint32_t op = op_of(r, at), wc = wc_of(r, at), in[64], *buf = wc <= 64 ? in : malloc(wc * sizeof *buf);
    if (!buf) return fail(r, "out of memory");
    memcpy(buf, r->w + at, wc * sizeof *buf);
    for (uint32_t k = 1; k < wc; ++k)
        if (r->site[at + k] >= 0) buf[k] = r->clone[buf[k]][use_of_node(r, r->site[at + k])];
    int typed = !has_no_result(op) && !has_no_result_type(op);
    if (typed && r->node_of[buf[2]] >= 0) buf[1] = r->clone[buf[1]][use_of_node(r, r->node_of[buf[2]])];
    int s = 0;
    uint32_t layout = 0;
    switch (op) {
    case SPV_OP_COOPMAT_LOAD_NV: /* type, result, pointer, stride, column-major -> ..., pointer, layout, stride */
        if ((s = layout_of(r, buf[5], &layout)) == 0) {
            buf[0] = (wc << 16) | SPV_OP_COOPMAT_LOAD_KHR;
            buf[5] = buf[4];
            buf[4] = layout;
        }
        break;
    case SPV_OP_COOPMAT_STORE_NV: /* pointer, object, stride, column-major -> pointer, object, layout, stride */
        if ((s = layout_of(r, buf[4], &layout)) == 0) {
            buf[0] = (wc << 16) | SPV_OP_COOPMAT_STORE_KHR;
            buf[4] = buf[3];
            buf[3] = layout;
        }
        break;
    case SPV_OP_COOPMAT_MULADD_NV: {
        uint32_t operands = signed_operands(r, r->w + at);
        buf[0] = ((operands ? 7u : 6u) << 16) | SPV_OP_COOPMAT_MULADD_KHR;
        buf[6] = operands;
        wc = operands ? 7 : 6;
        break;
    }
    case SPV_OP_COOPMAT_LENGTH_NV:
        buf[0] = (wc << 16) | SPV_OP_COOPMAT_LENGTH_KHR;
        buf[3] = r->clone[buf[3]][single_use(r->need[buf[3]])];
        break;
    }
    if (s == 0) s = emit(r, buf, wc);
    if (buf != in) free(buf);
    return s;
}

/* A matrix type, a type built on one, or a matrix constant: one copy per Use. */
static int emit_clones(rewriter *r, size_t at)
{
    uint32_t op = op_of(r, at), wc = wc_of(r, at), id = holder_id(r, at);
    for (int u = 0; u < SPV_USES; ++u) {
        if (!(r->need[id] & (1u << u))) continue;
        uint32_t buf[8];
        if (wc > 8) return fail(r, "instruction %u is too long to copy per Use", id);
        memcpy(buf, r->w + at, wc * sizeof *buf);
        if (op == SPV_OP_TYPE_COOPMAT_NV) { /* component, scope, rows, columns + Use */
            buf[0] = (7u << 16) | SPV_OP_TYPE_COOPMAT_KHR;
            buf[1] = r->clone[id][u];
            buf[6] = r->int_const[u];
            if (emit(r, buf, 7)) return -1;
            continue;
        }
        if (op == OP_TYPE_ARRAY || op == OP_TYPE_RUNTIME_ARRAY) buf[1] = r->clone[id][u], buf[2] = r->clone[buf[2]][u];
        else if (op == OP_TYPE_POINTER) buf[1] = r->clone[id][u], buf[3] = r->clone[buf[3]][u];
        else buf[1] = r->clone[buf[1]][u], buf[2] = r->clone[id][u]; /* constants */
        if (emit(r, buf, wc)) return -1;
    }
    return 0;
}

static int is_decoration(uint32_t op)
{
    return op == OP_NAME || op == OP_MEMBER_NAME || op == OP_DECORATE || op == OP_MEMBER_DECORATE || op == OP_DECORATE_ID ||
           op == OP_DECORATE_STRING || op == OP_MEMBER_DECORATE_STRING;
}

static int converts_use(const rewriter *r, size_t at)
{
    for (int i = 0; i < r->conv_count; ++i)
        if (r->convs[i] == at) return r->use_change[i];
    return 0;
}

static int emit_module(rewriter *r)
{
    uint32_t header[5] = {SPV_MAGIC, r->w[1], r->w[2], 0, r->w[4]};
    if (emit(r, header, 5)) return -1;
    int constants_done = 0;
    for (size_t at = 5; at < r->n; at += wc_of(r, at)) {
        uint32_t op = op_of(r, at), wc = wc_of(r, at);
        if (op == OP_CAPABILITY && r->w[at + 1] == SPV_CAP_COOPMAT_NV) {
            uint32_t cap[2] = {(2u << 16) | OP_CAPABILITY, SPV_CAP_COOPMAT_KHR};
            if (emit(r, cap, 2)) return -1;
        } else if (op == OP_EXTENSION && string_is(r, at, "SPV_NV_cooperative_matrix")) {
            if (emit_string_op(r, OP_EXTENSION, "SPV_KHR_cooperative_matrix")) return -1;
        } else if (is_decoration(op) && wc > 1 && r->w[at + 1] < r->bound && r->need[r->w[at + 1]]) {
            uint32_t target = r->w[at + 1];
            for (int u = 0; u < SPV_USES; ++u)
                if (r->need[target] & (1u << u)) { /* the decoration, once per copy of its target */
                    if (emit(r, r->w + at, wc)) return -1;
                    r->out[r->out_n - wc + 1] = r->clone[target][u];
                }
        } else if (is_type_op(op) && r->cm_in[r->w[at + 1]]) {
            if (!constants_done && emit_int_constants(r, at)) return -1;
            constants_done = 1;
            if (emit_clones(r, at)) return -1;
        } else if (!has_no_result(op) && !has_no_result_type(op) && r->is_const[r->w[at + 2]]) {
            if (emit_clones(r, at)) return -1;
        } else if (is_conversion(op) && !has_no_result(op) && r->node_of[r->w[at + 2]] >= 0 && converts_use(r, at)) {
            if (emit_use_change(r, at, use_of_node(r, r->node_of[r->w[at + 2]]))) return -1;
        } else if (emit_rewritten(r, at)) {
            return -1;
        }
    }
    r->out[3] = r->new_bound;
    return 0;
}

int avk_spirv_nv2khr(const uint32_t *in, size_t n, uint32_t **out, size_t *out_n, char *err, size_t err_size)
{
    avk_nv2khr_options none = {0};
    return avk_spirv_nv2khr_with(in, n, &none, out, out_n, err, err_size);
}

int avk_spirv_nv2khr_with(const uint32_t *in, size_t n, const avk_nv2khr_options *opts, uint32_t **out, size_t *out_n,
                          char *err, size_t err_size)
{
    rewriter r = {.w = in, .n = n, .err = err, .err_size = err_size, .opts = opts};
    *out = NULL;
    *out_n = 0;
    if (n < 5) return fail(&r, "truncated: %zu words, shorter than the SPIR-V header", n);
    if (in[0] != SPV_MAGIC) return fail(&r, "not SPIR-V (magic 0x%08x)", in[0]);
    if (opts->acc_to_a_elements > SPV_ACC_TO_A_MAX) return fail(&r, "acc_to_a_elements above %d", SPV_ACC_TO_A_MAX);
    r.bound = in[3];
    if (r.bound == 0 || r.bound > (1u << 24)) return fail(&r, "implausible id bound %u", r.bound);
    r.def_at = calloc(r.bound, sizeof *r.def_at);
    r.type_of = calloc(r.bound, sizeof *r.type_of);
    r.cm_in = calloc(r.bound, sizeof *r.cm_in);
    r.is_const = calloc(r.bound, 1);
    r.need = calloc(r.bound, 1);
    r.clone = calloc(r.bound, sizeof *r.clone);
    r.node_of = malloc(r.bound * sizeof *r.node_of);
    r.site = malloc(n * sizeof *r.site);
    r.holders = malloc(n * sizeof *r.holders);
    r.convs = malloc(n * sizeof *r.convs);
    r.use_change = calloc(n, 1);
    int s = -1;
    if (!r.holders || !r.convs || !r.use_change || !r.def_at || !r.type_of || !r.cm_in || !r.is_const || !r.need || !r.clone || !r.node_of || !r.site) {
        fail(&r, "out of memory");
    } else {
        memset(r.node_of, 0xff, r.bound * sizeof *r.node_of);
        memset(r.site, 0xff, n * sizeof *r.site);
        s = scan_definitions(&r);
        if (s == 0) s = join_values(&r);
        if (s == 0) s = plan_clones(&r);
        if (s == 0) s = emit_module(&r);
    }
    free(r.def_at), free(r.type_of), free(r.cm_in), free(r.is_const), free(r.need), free(r.clone);
    free(r.node_of), free(r.site), free(r.holders), free(r.parent), free(r.roles), free(r.node_id), free(r.convs),
        free(r.use_change);
    if (s != 0) {
        free(r.out);
        return -1;
    }
    *out = r.out;
    *out_n = r.out_n;
    return 0;
}
