/* SPDX-License-Identifier: GPL-2.0 */
/* A strict JSON syntax checker (RFC 8259), enough to test our output. */
#ifndef TEST_JSON_CHECK_H
#define TEST_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* True if s[0, len) is exactly one JSON value, surrounding blanks allowed. */
bool json_valid(const char *s, size_t len);

#endif
