/* `attnvk run`'s score inputs (run_scores.h). */
#include "run_scores.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>

/* values that are not finite, allowing -inf where a mask may hold it */
static size_t bad_values(const avk_npy *t, int allow_neg_inf)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; ++i)
        if (!isfinite(t->data[i]) && !(allow_neg_inf && isinf(t->data[i]) && t->data[i] < 0)) ++n;
    return n;
}

/* a per-head vector: 1 dimension of H finite values */
static int load_per_head(const char *path, const char *what, const attnvk_problem *p, avk_npy *t)
{
    if (avk_npy_read(path, t) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    if (t->ndim != 1 || t->shape[0] != p->heads)
        return cli_error(EXIT_USAGE, "%s: %s need shape [H] = [%d], got %d dimension(s) of which the first is %lld",
                         path, what, p->heads, t->ndim, (long long)t->shape[0]);
    size_t bad = bad_values(t, 0);
    if (bad) return cli_error(EXIT_USAGE, "%s: %s hold %zu NaN/Inf values; they must be finite", path, what, bad);
    return 0;
}

static int load_mask(const char *path, attnvk_problem *p, avk_npy *t)
{
    if (avk_npy_read(path, t) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    if (t->ndim != 2 && t->ndim != 4)
        return cli_error(EXIT_USAGE, "%s: the mask needs shape [Nq,Nk] or [1|B,1|H,Nq,Nk], got %d dimensions", path,
                         t->ndim);
    const int64_t *s = t->shape + (t->ndim - 2);
    if (s[0] != p->seq_q || s[1] != p->seq_kv)
        return cli_error(EXIT_USAGE, "%s: the mask's last dimensions are [%lld,%lld], the scores' [Nq,Nk] = [%d,%d]",
                         path, (long long)s[0], (long long)s[1], p->seq_q, p->seq_kv);
    size_t bad = bad_values(t, 1);
    if (bad) return cli_error(EXIT_USAGE, "%s: the mask holds %zu NaN/+Inf values (finite values and -inf only)", path, bad);
    p->mask = 1;
    p->mask_batch = t->ndim == 4 ? (int)(t->shape[0] > (1 << 30) ? -1 : t->shape[0]) : 1;
    p->mask_heads = t->ndim == 4 ? (int)(t->shape[1] > (1 << 30) ? -1 : t->shape[1]) : 1;
    p->mask_dtype = t->stored_float16 ? ATTNVK_F16 : ATTNVK_F32;
    if (attnvk_problem_validate(p) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s: %s", path, attnvk_last_error());
    return 0;
}

/* uint8/int8 [rows,cols] (broadcast) or [1|B,1|H,rows,cols] in BQxBK blocks */
static int load_layout(const run_args *a, attnvk_problem *p, avk_npy *t)
{
    const char *path = a->block_layout;
    if (avk_npy_read_bytes(path, "the block layout", t) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    if (t->ndim != 2 && t->ndim != 4)
        return cli_error(EXIT_USAGE, "%s: the block layout needs shape [rows,cols] or [1|B,1|H,rows,cols], got %d "
                         "dimensions", path, t->ndim);
    const long long rows = (p->seq_q + (long long)a->block_q - 1) / a->block_q;
    const long long cols = (p->seq_kv + (long long)a->block_k - 1) / a->block_k;
    const int64_t *s = t->shape + (t->ndim - 2);
    if (s[0] != rows || s[1] != cols)
        return cli_error(EXIT_USAGE, "%s: the block layout's last dimensions are [%lld,%lld]; [Nq,Nk] = [%d,%d] in "
                         "%dx%d blocks needs [%lld,%lld]", path, (long long)s[0], (long long)s[1], p->seq_q,
                         p->seq_kv, a->block_q, a->block_k, rows, cols);
    p->block_sparse = 1;
    p->block_q = a->block_q, p->block_k = a->block_k;
    p->layout_batch = t->ndim == 4 ? (int)(t->shape[0] > (1 << 30) ? -1 : t->shape[0]) : 1;
    p->layout_heads = t->ndim == 4 ? (int)(t->shape[1] > (1 << 30) ? -1 : t->shape[1]) : 1;
    if (attnvk_problem_validate(p) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s: %s", path, attnvk_last_error());
    return 0;
}

int run_load_scores(const run_args *a, attnvk_problem *p, run_scores *s)
{
    int rc = 0;
    if (a->block_layout) rc = load_layout(a, p, &s->layout);
    if (!rc && a->mask) rc = load_mask(a->mask, p, &s->mask);
    if (!rc && a->sinks) rc = load_per_head(a->sinks, "sinks", p, &s->sinks);
    if (!rc && a->alibi_slopes) rc = load_per_head(a->alibi_slopes, "ALiBi slopes", p, &s->slopes);
    if (!rc && a->alibi) {
        s->made_slopes = malloc(sizeof(float) * p->heads);
        if (!s->made_slopes) return cli_error(EXIT_FAILED, "out of host memory");
        attnvk_alibi_slopes(p->heads, s->made_slopes);
    }
    return rc;
}

void run_scores_inputs(const run_scores *s, attnvk_host_inputs *in)
{
    in->mask = s->mask.data;
    in->sinks = s->sinks.data;
    in->alibi_slopes = s->made_slopes ? s->made_slopes : s->slopes.data;
    in->block_layout = s->layout.bytes;
}

void run_scores_free(run_scores *s)
{
    avk_npy_free(&s->mask);
    avk_npy_free(&s->sinks);
    avk_npy_free(&s->slopes);
    avk_npy_free(&s->layout);
    free(s->made_slopes);
}
