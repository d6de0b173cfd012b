/* libFuzzer: the command-line parsers. The input is NUL-separated arguments for
 * `attnvk bench` (the largest option set), and its first byte also routes one
 * argument to each shared value parser (integers with k/m suffixes, doubles,
 * tiles, lists, API lists). */
#include "bench_options.h"
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 48 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "bench";
    for (size_t i = 0; i <= size && argc <= MAX_ARGS; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    argv[argc] = NULL;

    bench_options o;
    bench_parse_options(argc, argv, &o);

    const char *arg = argc > 1 ? argv[1] : "";
    long l, list[8];
    double d;
    int br, bc;
    unsigned mask;
    int all;
    cli_parse_int(arg, -(1l << 40), 1l << 40, &l);
    cli_parse_int(arg, 1, 1l << 30, &l);
    cli_parse_double(arg, 1e-30, 1e30, &d);
    cli_parse_tile(arg, &br, &bc);
    cli_parse_int_list(arg, 1, 1l << 24, list, 8);
    bench_parse_api_list(arg, &mask, &all);
    free(buf);
    return 0;
}
