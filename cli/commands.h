/*
 * commands.h — the stormsweep subcommands. Each takes the arguments after
 * its name (argv[0] is the command name) and returns the process exit
 * status: 0 success, 1 failure while working, 2 bad usage or input.
 */
#ifndef STORMSWEEP_COMMANDS_H
#define STORMSWEEP_COMMANDS_H

int cmd_sim(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_verify(int argc, char **argv); /* also exits 3: undecided */
int cmd_boundary(int argc, char **argv);
int cmd_refine(int argc, char **argv);     /* analysis/cmd_refine.c */
int cmd_run_refine(int argc, char **argv); /* run, and run --refine */

#endif
