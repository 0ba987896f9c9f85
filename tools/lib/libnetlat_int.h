/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* libnetlat internals shared by its source files; not installed. */
#ifndef LIBNETLAT_INT_H
#define LIBNETLAT_INT_H

#include <stdbool.h>
#include <stddef.h>

struct netlat_source;

/* write() all @len bytes, retrying after signals: 0 or -errno. */
int netlat__write_all(int fd, const void *p, size_t len);
/* @src's final error @err, its message from @fmt: returns -@err. */
int netlat__fail(struct netlat_source *src, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* @buf (NETLAT_ERRBUF_SIZE): why @path (a device) failed with @err. */
void netlat__format_dev_error(char *buf, const char *path, int err);
/* A whole record is buffered: netlat_next() will not read(). */
bool netlat__record_buffered(const struct netlat_source *src);

#endif
