// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
/*
 * Names of the kernel's numbered values (enum skb_drop_reason), from a
 * tracepoint format's __print_symbolic() table or a capture's notes (see
 * libnetlat.h). Needs libc only: the selftests compile it in too.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libnetlat.h"

struct netlat_name {
	uint32_t value;
	char name[NETLAT_NAME_MAX];
};

struct netlat_names {
	struct netlat_name *v;
	size_t n, cap;
};

struct netlat_names *netlat_names_new(void)
{
	return calloc(1, sizeof(struct netlat_names));
}

void netlat_names_free(struct netlat_names *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

void netlat_names_clear(struct netlat_names *t)
{
	t->n = 0;
}

size_t netlat_names_count(const struct netlat_names *t)
{
	return t ? t->n : 0;
}

int netlat_names_add(struct netlat_names *t, uint32_t value, const char *name, size_t len)
{
	size_t i;

	if (!len || len >= NETLAT_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < t->n && t->v[i].value != value; i++)
		;
	if (i == t->n) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct netlat_name *nv = realloc(t->v, cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			t->v = nv;
			t->cap = cap;
		}
		t->n++;
	}
	/* a later name for the same value replaces the earlier one */
	t->v[i].value = value;
	memcpy(t->v[i].name, name, len);
	t->v[i].name[len] = 0;
	return 0;
}

const char *netlat_names_get(const struct netlat_names *t, uint32_t value)
{
	size_t i;

	for (i = 0; t && i < t->n; i++)
		if (t->v[i].value == value)
			return t->v[i].name;
	return NULL;
}

long netlat_names_find(const struct netlat_names *t, const char *name)
{
	size_t i;

	for (i = 0; t && i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return (long)t->v[i].value;
	return -1;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/*
 * The table of "__print_symbolic(REC->FIELD, { V, "NAME" }, ...)": each
 * entry a braced number and string. Ends at the call's closing
 * parenthesis; an entry that is not a number and a string (an enum the
 * kernel did not resolve) is skipped.
 */
int netlat_names_parse_symbolic(struct netlat_names *t, const char *fmt, const char *field)
{
	char want[96];
	const char *p;
	int found = 0, r;

	snprintf(want, sizeof(want), "__print_symbolic(REC->%s,", field);
	p = strstr(fmt, want);
	if (!p)
		return -ENOENT;
	p += strlen(want);
	for (;;) {
		const char *name, *end;
		unsigned long v;
		char *num_end;

		p = skip_space(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '{')
			break;		/* ')' or anything else: the table ends */
		p = skip_space(p + 1);
		v = strtoul(p, &num_end, 0);
		end = strchr(p, '}');
		if (!end)
			break;
		p = skip_space(num_end);
		if (num_end == end || *p != ',' || v > UINT32_MAX) {
			p = end + 1;
			continue;
		}
		p = skip_space(p + 1);
		if (*p != '"') {
			p = end + 1;
			continue;
		}
		name = p + 1;
		p = strchr(name, '"');
		if (!p || p > end)
			break;
		r = netlat_names_add(t, (uint32_t)v, name, (size_t)(p - name));
		if (r == -ENOMEM)
			return r;
		found += !r;
		p = end + 1;
	}
	return found ? found : -ENOENT;
}

int netlat_names_load_drop_reasons(struct netlat_names *t)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/skb/kfree_skb/format",
		"/sys/kernel/debug/tracing/events/skb/kfree_skb/format",
	};
	static char buf[1 << 16];
	unsigned int i;
	int err = -ENOENT;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		size_t n = 0;
		ssize_t r = 0;

		if (fd < 0) {
			if (errno != ENOENT)
				err = -errno;
			continue;
		}
		/* tracefs hands a format out in pieces */
		while (n < sizeof(buf) - 1 &&
		       (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
		if (r < 0)
			continue;
		buf[n] = 0;
		r = netlat_names_parse_symbolic(t, buf, "reason");
		if (r >= 0 || r == -ENOMEM)
			return (int)r;
	}
	return err;
}

/* The record of @kind at @out with @len bytes of text: its size. */
static size_t note_record(unsigned char *out, unsigned int kind, const char *text, size_t len)
{
	struct netlat_rec_note *n = (void *)out;
	size_t size = (sizeof(*n) + len + NETLAT_REC_ALIGN - 1) & ~(size_t)(NETLAT_REC_ALIGN - 1);

	memset(out, 0, size);
	n->hdr.size = (uint16_t)size;
	n->hdr.type = NETLAT_REC_NOTE;
	n->hdr.magic = NETLAT_REC_MAGIC;
	n->hdr.version = NETLAT_ABI_VERSION;
	n->kind = (uint16_t)kind;
	n->version = 1;
	n->len = (uint32_t)len;
	memcpy(n->text, text, len);
	return size;
}

#define NOTE_TEXT_MAX	(NETLAT_REC_MAX_SIZE - sizeof(struct netlat_rec_note))

size_t netlat_note_text(void *buf, size_t room, unsigned int kind, const char *text)
{
	size_t len = strlen(text);

	if (len > NOTE_TEXT_MAX)
		len = NOTE_TEXT_MAX;
	if (room < NETLAT_REC_MAX_SIZE)
		return 0;
	return note_record(buf, kind, text, len);
}

size_t netlat_names_notes(const struct netlat_names *t, unsigned int kind, void *buf,
			  size_t room)
{
	char text[NOTE_TEXT_MAX], line[NETLAT_NAME_MAX + 16];
	unsigned char *out = buf;
	size_t used = 0, len = 0, i;

	for (i = 0; i <= t->n; i++) {
		size_t l = 0;

		if (i < t->n)
			l = (size_t)snprintf(line, sizeof(line), "%u %s\n", t->v[i].value,
					     t->v[i].name);
		/* a record of whole lines: flush when the next one does not fit */
		if (len && (i == t->n || len + l > sizeof(text))) {
			if (used + NETLAT_REC_MAX_SIZE > room)
				return 0;
			used += note_record(out + used, kind, text, len);
			len = 0;
		}
		memcpy(text + len, line, l);
		len += l;
	}
	return used;
}

int netlat_names_add_note(struct netlat_names *t, const struct netlat_rec_note *n)
{
	const char *p = (const char *)n->text, *end = p + n->len;
	int added = 0, r;

	if (n->version != 1)
		return 0;	/* a text this library predates */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp = memchr(p, ' ', (size_t)((nl ? nl : end) - p));
		char *num_end;
		unsigned long v;

		if (!nl)
			break;		/* lines are whole */
		v = strtoul(p, &num_end, 10);
		if (sp && num_end == sp && num_end != p && v <= UINT32_MAX) {
			r = netlat_names_add(t, (uint32_t)v, sp + 1, (size_t)(nl - sp - 1));
			if (r == -ENOMEM)
				return r;
			added += !r;
		}
		p = nl + 1;
	}
	return added;
}

int netlat_names_feed(struct netlat_names *t, const struct netlat_rec_hdr *rec, bool device)
{
	const struct netlat_rec_note *n = (const void *)rec;

	if (rec->type == NETLAT_REC_STREAM) {
		netlat_names_clear(t);
		/* a device's records are numbered by the kernel running here */
		return device ? netlat_names_load_drop_reasons(t) : 0;
	}
	if (rec->type == NETLAT_REC_NOTE && n->kind == NETLAT_NOTE_DROP_REASONS)
		return netlat_names_add_note(t, n);
	return 0;
}
