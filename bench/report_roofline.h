/* The report's rooflines: per device (API and device) of a run, its cached `attnvk peak`
 * record as a table and a log-log roofline with every record of the device on it. */
#ifndef ATTNVK_REPORT_ROOFLINE_H
#define ATTNVK_REPORT_ROOFLINE_H

#include "report_charts.h"

/* For each device of the run in `group` that has records: the roofline (bandwidth slope from
 * peak.read, the roofs of peak.matrix, fma_f16 and fma_f32, each labelled; x = arithmetic
 * intensity, y = achieved FLOP/s, one marker per implementation), or a line saying that
 * the device has no cached peaks. The peaks table comes first. Returns the charts drawn. */
int report_rooflines(strbuf *o, const results_run *run, const char *group, report_palette *pal);

/* The record's arithmetic intensity (FLOP/B): its roofline's, else throughput / bandwidth. */
double report_intensity(const results_record *r);

#endif
