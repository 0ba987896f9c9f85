// SPDX-License-Identifier: GPL-2.0
/* Recursive-descent JSON syntax checker: see json_check.h. */
#include <string.h>
#include "json_check.h"

#define MAX_DEPTH 64

struct parser {
	const char *p, *end;
	int depth;
};

static bool value(struct parser *ps);

static void blanks(struct parser *ps)
{
	while (ps->p < ps->end && strchr(" \t\r\n", *ps->p) && *ps->p)
		ps->p++;
}

static bool eat(struct parser *ps, char c)
{
	blanks(ps);
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

static bool is_digit(struct parser *ps)
{
	return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static bool digits(struct parser *ps)
{
	if (!is_digit(ps))
		return false;
	while (is_digit(ps))
		ps->p++;
	return true;
}

static bool number(struct parser *ps)
{
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0')
		ps->p++;
	else if (!digits(ps))
		return false;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (!digits(ps))
			return false;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!digits(ps))
			return false;
	}
	return true;
}

static bool hex4(struct parser *ps)
{
	int i;

	for (i = 0; i < 4; i++, ps->p++)
		if (ps->p >= ps->end || !strchr("0123456789abcdefABCDEF", *ps->p) || !*ps->p)
			return false;
	return true;
}

static bool string(struct parser *ps)
{
	if (!eat(ps, '"'))
		return false;
	while (ps->p < ps->end) {
		unsigned char c = (unsigned char)*ps->p++;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (ps->p >= ps->end)
			return false;
		c = (unsigned char)*ps->p++;
		if (c == 'u') {
			if (!hex4(ps))
				return false;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return false;
		}
	}
	return false;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

/* Members or elements up to @close; objects have "key": before values. */
static bool sequence(struct parser *ps, char close, bool object)
{
	if (++ps->depth > MAX_DEPTH)
		return false;
	if (eat(ps, close)) {
		ps->depth--;
		return true;
	}
	do {
		if (object && (!string(ps) || !eat(ps, ':')))
			return false;
		if (!value(ps))
			return false;
	} while (eat(ps, ','));
	ps->depth--;
	return eat(ps, close);
}

static bool value(struct parser *ps)
{
	blanks(ps);
	if (ps->p >= ps->end)
		return false;
	switch (*ps->p) {
	case '{':
		ps->p++;
		return sequence(ps, '}', true);
	case '[':
		ps->p++;
		return sequence(ps, ']', false);
	case '"':
		return string(ps);
	case 't':
		return literal(ps, "true");
	case 'f':
		return literal(ps, "false");
	case 'n':
		return literal(ps, "null");
	}
	return number(ps);
}

bool json_valid(const char *s, size_t len)
{
	struct parser ps = { s, s + len, 0 };

	if (!value(&ps))
		return false;
	blanks(&ps);
	return ps.p == ps.end;
}
