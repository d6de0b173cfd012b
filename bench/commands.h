/* Every subcommand of `attnvk`; main.c lists them. */
#ifndef ATTNVK_COMMANDS_H
#define ATTNVK_COMMANDS_H

#include <stddef.h>

int cmd_devices(int argc, char **argv);
int cmd_peak(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_tune(int argc, char **argv);

/* cmd_peak.c's pieces `attnvk devices` reuses for the cached peaks (core/peak.h):
 * the JSON object of a record, and "copy 1.2 GB/s, f32 FMA 45.0 GFLOP/s, ...". */
struct cJSON;
struct avk_peak;
struct cJSON *cli_peak_json(const struct avk_peak *p);
void cli_peak_summary(const struct avk_peak *p, char *out, size_t n);

#endif
