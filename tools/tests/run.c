// SPDX-License-Identifier: GPL-2.0
/* Process helpers for the CLI tests: see run.h. */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "run.h"

static char out_path[4096], err_path[4096];

void run_init(const char *dir)
{
	snprintf(out_path, sizeof(out_path), "%s/run.out", dir);
	snprintf(err_path, sizeof(err_path), "%s/run.err", dir);
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 4096, got;
	char *buf = malloc(cap);

	if (!buf)
		exit(2);
	while (f && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				exit(2);
		}
	}
	if (f)
		fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void redirect(int fd, const char *path, int flags)
{
	int new_fd = open(path, flags, 0644);

	if (new_fd < 0 || dup2(new_fd, fd) < 0)
		_exit(127);
	close(new_fd);
}

pid_t spawn_argv(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* a test that dies leaves no server running (netlat exporter) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
	redirect(STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC);
	redirect(STDERR_FILENO, err, O_WRONLY | O_CREAT | O_TRUNC);
	execv(argv[0], argv);
	_exit(127);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void wait_child(struct run *r, pid_t pid, int timeout_ms)
{
	int status = 0, waited = 0;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		sleep_ms(5);
		waited += 5;
	}
	r->signalled = WIFSIGNALED(status);
	r->status = r->signalled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

void run_argv(struct run *r, char *const argv[])
{
	memset(r, 0, sizeof(*r));
	wait_child(r, spawn_argv(argv, out_path, err_path), 30000);
	r->out = read_file(out_path, NULL);
	r->err = read_file(err_path, NULL);
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}
