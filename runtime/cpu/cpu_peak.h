/* The host's f32 FMA throughput: independent FMA chains on the widest vector
 * unit the CPU runs (cpu_simd.h's tables), on every thread at once. */
#ifndef ATTNVK_CPU_PEAK_H
#define ATTNVK_CPU_PEAK_H

#include "attnvk/attnvk.h"

/* GFLOP/s (an FMA is 2 FLOPs) of avk_cpu_threads() threads, each running
 * independent vector FMA chains; the best of 3 runs of about 40 ms (well
 * under a second in all). ATTNVK_CPU_ISA picks a narrower unit. */
attnvk_status avk_host_fma_peak(double *f32_gflops);

#endif
