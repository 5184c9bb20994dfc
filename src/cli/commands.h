/* kestrel's commands: each lives in cmd_<name>.c and is listed in main.c's table. */
#ifndef KESTREL_CLI_COMMANDS_H
#define KESTREL_CLI_COMMANDS_H

struct command {
    const char *name;
    const char *summary;               /* one line for `kestrel --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
};

int cmd_record(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* Prints the version and the build (version.c). */
int cmd_version(void);
#endif
