/* A record's place on its device's measured roofline (bench_roofline.c). */
#ifndef ATTNVK_BENCH_ROOFLINE_H
#define ATTNVK_BENCH_ROOFLINE_H

#include "bench_record.h"
#include "bench_targets.h"

/* Fills r's arithmetic intensity, and with the device's cached peaks its bound,
 * compute roof, attainable TFLOP/s and roofline fraction (after r->tflops). */
void bench_roofline(const bench_target *t, bench_record *r);

#endif
