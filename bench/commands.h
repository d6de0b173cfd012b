/* Every subcommand of `attnvk`; main.c lists them. */
#ifndef ATTNVK_COMMANDS_H
#define ATTNVK_COMMANDS_H

int cmd_devices(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
