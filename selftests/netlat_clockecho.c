// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's side of the two-VM join test's clock probe (not a test):
 * for each byte the host writes to the serial port, answer "BYTE NS\n"
 * with this VM's CLOCK_MONOTONIC when it was read. The host's writes and
 * reads around it bound this clock against the host's.
 *
 *   netlat_clockecho /dev/ttyS2
 */
#include <fcntl.h>
#include <stdio.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct termios t;
	unsigned char c;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: netlat_clockecho TTY\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || tcgetattr(fd, &t)) {
		perror(argv[1]);
		return 1;
	}
	cfmakeraw(&t);
	if (tcsetattr(fd, TCSANOW, &t)) {
		perror("tcsetattr");
		return 1;
	}
	while (read(fd, &c, 1) == 1) {
		struct timespec ts;
		char line[64];
		int n;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = snprintf(line, sizeof(line), "%u %llu\n", c,
			     (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
		if (write(fd, line, n) != n)
			return 1;
	}
	return 0;
}
