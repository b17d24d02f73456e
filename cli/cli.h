/* Subcommands of the tasklens binary. Each returns the process exit code:
 * 0 done, 1 an input failed (or --strict saw a rejected line), 2 usage. */
#ifndef TL_CLI_H
#define TL_CLI_H

#define TL_EXIT_OK 0
#define TL_EXIT_INPUT 1
#define TL_EXIT_USAGE 2

int tl_cmd_summary(int argc, char **argv);
int tl_cmd_lines(int argc, char **argv);
int tl_cmd_records(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_check(int argc, char **argv);
int tl_cmd_lsst_summary(int argc, char **argv);
int tl_cmd_dasf_balance(int argc, char **argv);
int tl_cmd_advise(int argc, char **argv);
int tl_cmd_plan(int argc, char **argv);
int tl_cmd_path(int argc, char **argv);
int tl_cmd_energy(int argc, char **argv);
int tl_cmd_report(int argc, char **argv);
int tl_cmd_top(int argc, char **argv);

#endif
