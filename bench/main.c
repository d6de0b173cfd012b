/* `attnvk`: devices, peak, run, bench, check, tune, compare, report. */
#include "cli.h"
#include "commands.h"

#include <string.h>

static const cli_command commands[] = {
    {"devices", cmd_devices, "list every device of every API (--json)"},
    {"peak", cmd_peak, "measure each device's bandwidth, FMA and matrix-unit peaks (cached)"},
    {"run", cmd_run, "attention on .npy inputs through one API"},
    {"bench", cmd_bench, "time every implementation on identical, checked workloads"},
    {"check", cmd_check, "correctness sweep over every API, device and implementation"},
    {"tune", cmd_tune, "find each device's fastest checked kernel configurations (tuning file)"},
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
    fprintf(f, "  %-9s %s\n", "version", "version, git commit and the APIs this binary was built with");
    fprintf(f, "\n'attnvk COMMAND --help' (or 'attnvk help COMMAND') describes a command;\n"
               "'attnvk help env' lists the environment variables attnvk reads.\n");
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; ++i)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

/* attnvk help [env | COMMAND] */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc > 3) return cli_error(EXIT_USAGE, "help takes one topic, got %d", argc - 2);
    if (strcmp(argv[2], "env") == 0) {
        cli_print_env_help(stdout);
        return EXIT_OK;
    }
    const cli_command *c = find_command(argv[2]);
    if (!c) {
        char topics[256] = "env";
        for (size_t i = 0; i < sizeof commands / sizeof *commands; ++i)
            snprintf(topics + strlen(topics), sizeof topics - strlen(topics), ", %s", commands[i].name);
        return cli_error(EXIT_USAGE, "help: unknown topic '%s' (%s)", argv[2], topics);
    }
    char *sub[] = {argv[2], "--help", NULL};
    return c->run(2, sub);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)
        return help(argc, argv);
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        if (argc > 2) return cli_error(EXIT_USAGE, "%s takes no arguments", argv[1]);
        char text[256];
        cli_version_text(text, sizeof text);
        puts(text);
        return EXIT_OK;
    }
    const cli_command *c = find_command(argv[1]);
    if (c) return c->run(argc - 1, argv + 1);
    return cli_error(EXIT_USAGE, "unknown command '%s' (see attnvk --help)", argv[1]);
}
