/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the netlat sub-commands share: messages, option parsing, stop
 * signals and the device. Exit status: 0 success (also when stopped by
 * SIGINT/SIGTERM), 1 runtime error, 2 bad arguments (EXIT_USAGE).
 */
#ifndef NETLAT_CLI_H
#define NETLAT_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_USAGE	2

/* Rows of a struct option table, for getopt_long() to return @val. */
#define OPTION_ARG(name, val)	{ name, required_argument, NULL, val }
#define OPTION_FLAG(name, val)	{ name, no_argument, NULL, val }
#define HELP_OPTION		OPTION_FLAG("help", 'h')
#define DEVICE_OPTION		OPTION_ARG("device", 'D')

/* How often a blocked wait wakes up to notice a stop request or deadline. */
#define TICK_MS		200

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
	const char *help;
};

/* The command running: its synopsis goes with usage errors. */
extern const struct command *current_command;

/* "netlat: MESSAGE" on stderr. */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A bad argument: say why, show the synopsis, return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void print_synopsis(FILE *f, const struct command *c);
int command_help(void);

/* getopt_long() with the error handling every command shares. */
int next_option(int argc, char **argv, const char *shortopts,
		const struct option *longopts);
int bad_option(char **argv);

bool parse_u64(const char *s, uint64_t *out);
bool parse_seconds(const char *s, double *out);
/* A byte count with an optional binary K/M/G suffix. */
bool parse_size(const char *s, uint64_t *out);

/* Set by SIGINT and SIGTERM once catch_stop_signals() ran. */
extern volatile sig_atomic_t stop_requested;
/* No SA_RESTART: a signal interrupts a blocking read() or poll(). */
void catch_stop_signals(void);

uint64_t monotonic_ns(void);

/* A descriptor of the device for ioctls, or -1 with the reason printed. */
int open_device(const char *path);

/* Print why the ioctl @what (@request, or 0) failed on @path; returns 1. */
int ioctl_failed(const char *path, const char *what, int err);
int ioctl_failed_req(const char *path, const char *what, unsigned long request,
		     int err);

/*
 * The options every device command has, and the unknown ones: --device
 * (-1: taken), --help (0), else a usage error (EXIT_USAGE).
 */
int device_option(int c, char **argv, const char **path);

/*
 * After the options: no arguments may remain, then the device @path is
 * opened into *@fd (if @fd). -1 to go on, else the exit status.
 */
int device_args_done(int argc, const char *path, int *fd);

/* The [--device PATH] of a device command: -1 to go on, else the exit status. */
int parse_device_args(int argc, char **argv, const char **path);

/* fflush(stdout) and report an error: 0 or 1. */
int finish_stdout(void);

/*
 * Write @path (- for stdout) with @emit (0, or nonzero for out of memory).
 * A regular file is written as PATH.tmp, then renamed, so a failure leaves
 * no half file; anything else (a FIFO) in place. 0 or 1 (printed).
 */
int write_output(const char *path, int (*emit)(void *arg, FILE *f), void *arg);

#endif
