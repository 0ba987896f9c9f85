/* SPDX-License-Identifier: GPL-2.0 */
/* Run the netlat command from the tests and collect what it printed. */
#ifndef TEST_RUN_H
#define TEST_RUN_H

#include <stdbool.h>
#include <sys/types.h>

struct run {
	int status;	/* exit status, or 128 + signal number */
	bool signalled;
	char *out;	/* stdout, NUL-terminated */
	char *err;	/* stderr, NUL-terminated */
};

/* Files for the output of commands run in the background, under @dir. */
void run_init(const char *dir);

/* Run argv (NULL-terminated) to completion with stdin from /dev/null. */
void run_argv(struct run *r, char *const argv[]);
void run_free(struct run *r);

/* Start argv in the background, stdout and stderr to the given files. */
pid_t spawn_argv(char *const argv[], const char *out_path, const char *err_path);

/*
 * Wait up to @timeout_ms for @pid; on timeout it is killed and the
 * result is flagged as signalled with SIGKILL. Fills status fields only.
 */
void wait_child(struct run *r, pid_t pid, int timeout_ms);

/* The contents of @path, NUL-terminated ("" if unreadable). */
char *read_file(const char *path, size_t *len);

#endif
