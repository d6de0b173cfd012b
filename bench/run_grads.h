/* `attnvk run --grad-out`: the backward pass's dO in, dQ/dK/dV (and
 * d(sinks)) out, each written atomically as float32 .npy. */
#ifndef ATTNVK_RUN_GRADS_H
#define ATTNVK_RUN_GRADS_H

#include "cmd_args.h"
#include "core/npy.h"

typedef struct run_grads {
    avk_npy d_o;             /* --grad-out, O's shape, rounded to the dtype */
    float *dq, *dk, *dv, *ds;
    double ms;               /* the backward pass's time */
} run_grads;

/* Reads dO and checks it against O's shape (Q's with V's last dimension):
 * 0, or a one-line error naming the file and EXIT_USAGE. t: Q, K, V. */
int run_grads_load(const run_args *a, const attnvk_problem *p, const avk_npy t[3], run_grads *g);
/* Forward (O and LSE into o, lse) and backward on dev: the status of the run. */
attnvk_status run_grads_compute(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                int deterministic, const attnvk_host_inputs *in, run_grads *g, float *o, float *lse,
                                attnvk_kernel_info *info, double *forward_ms);
/* Writes the asked gradients; prints ", backward X ms" and with check each
 * gradient's rel-L2 against the float64 reference. 0, or the exit code. */
int run_grads_finish(const run_args *a, const attnvk_problem *p, const avk_npy t[3], const attnvk_host_inputs *in,
                     run_grads *g);
void run_grads_free(run_grads *g);

#endif
