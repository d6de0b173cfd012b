/* `attnvk`: devices, run, bench, check, compare, report. */
#include "cli.h"
#include "commands.h"

#include <string.h>

static const cli_command commands[] = {
    {"devices", cmd_devices, "list every device of every API (--json)"},
    {"run", cmd_run, "attention on .npy inputs through one API"},
    {"bench", cmd_bench, "time every implementation on identical, checked workloads"},
    {"check", cmd_check, "correctness sweep over every API, device and implementation"},
    {"compare", cmd_compare, "regressions between two runs (files or stored runs)"},
    {"history", cmd_history, "stored runs: list, --import, --check"},
    {"report", cmd_report, "self-contained HTML report with SVG charts"},
};

static void usage(FILE *f)
{
    fprintf(f, "attnvk %s — flash attention across Vulkan, OpenCL, CUDA and HIP\nusage: attnvk COMMAND [options]\n\n",
            ATTNVK_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; ++i)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'attnvk COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("attnvk %s\n", ATTNVK_VERSION_STRING);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; ++i)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    return cli_error(EXIT_USAGE, "unknown command '%s' (see attnvk --help)", argv[1]);
}
