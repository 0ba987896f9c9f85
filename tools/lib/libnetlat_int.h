/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* libnetlat internals shared by its source files; not installed. */
#ifndef LIBNETLAT_INT_H
#define LIBNETLAT_INT_H

#include <stddef.h>

/* write() all @len bytes, retrying after signals: 0 or -errno. */
int netlat__write_all(int fd, const void *p, size_t len);

#endif
