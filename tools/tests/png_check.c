// SPDX-License-Identifier: GPL-2.0
/*
 * Decode a PNG far enough to tell a blank screenshot from a drawn one:
 * 8-bit RGB or RGBA, not interlaced (what Chromium writes). The inflate
 * follows RFC 1951 in the manner of zlib's puff.c: small and slow.
 */
#include <stdlib.h>
#include <string.h>

#include "png_check.h"
#include "run.h"

struct inflate {
	const unsigned char *in;
	size_t len, pos;
	uint32_t buf;
	int cnt;
	unsigned char *out;
	size_t olen, ocap;
	int err;
};

static int bits(struct inflate *s, int need)
{
	uint32_t v = s->buf;

	while (s->cnt < need) {
		if (s->pos >= s->len) {
			s->err = 1;
			return 0;
		}
		v |= (uint32_t)s->in[s->pos++] << s->cnt;
		s->cnt += 8;
	}
	s->buf = need < 32 ? v >> need : 0;
	s->cnt -= need;
	return (int)(v & ((1U << need) - 1));
}

static void put(struct inflate *s, unsigned char c)
{
	if (s->olen == s->ocap) {
		s->err = 1;
		return;
	}
	s->out[s->olen++] = c;
}

struct huff {
	short count[16];
	short symbol[288];
};

static void construct(struct huff *h, const short *length, int n)
{
	short offs[16];
	int len, sym;

	memset(h->count, 0, sizeof(h->count));
	for (sym = 0; sym < n; sym++)
		h->count[length[sym]]++;
	offs[1] = 0;
	for (len = 1; len < 15; len++)
		offs[len + 1] = offs[len] + h->count[len];
	for (sym = 0; sym < n; sym++)
		if (length[sym])
			h->symbol[offs[length[sym]]++] = (short)sym;
}

static int decode(struct inflate *s, const struct huff *h)
{
	int code = 0, first = 0, index = 0, len, count;

	for (len = 1; len <= 15 && !s->err; len++) {
		code |= bits(s, 1);
		count = h->count[len];
		if (code - count < first)
			return h->symbol[index + (code - first)];
		index += count;
		first = (first + count) << 1;
		code <<= 1;
	}
	s->err = 1;
	return -1;
}

static void codes(struct inflate *s, const struct huff *lc, const struct huff *dc)
{
	static const short lbase[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
		31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
	static const short lext[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3,
		3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
	static const short dbase[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
		193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289,
		16385, 24577 };
	static const short dext[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
		8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
	int sym, len;
	size_t dist;

	while (!s->err) {
		sym = decode(s, lc);
		if (sym < 256) {
			if (sym >= 0)
				put(s, (unsigned char)sym);
			continue;
		}
		if (sym == 256)
			return;
		sym -= 257;
		if (sym >= 29) {
			s->err = 1;
			return;
		}
		len = lbase[sym] + bits(s, lext[sym]);
		sym = decode(s, dc);
		if (sym < 0 || sym >= 30) {
			s->err = 1;
			return;
		}
		dist = (size_t)(dbase[sym] + bits(s, dext[sym]));
		if (dist > s->olen) {
			s->err = 1;
			return;
		}
		while (len-- && !s->err)
			put(s, s->out[s->olen - dist]);
	}
}

static void fixed(struct inflate *s)
{
	struct huff lc, dc;
	short l[288];
	int i;

	for (i = 0; i < 288; i++)
		l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	construct(&lc, l, 288);
	for (i = 0; i < 30; i++)
		l[i] = 5;
	construct(&dc, l, 30);
	codes(s, &lc, &dc);
}

static void dynamic(struct inflate *s)
{
	static const short order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13,
		2, 14, 1, 15 };
	int nlen = bits(s, 5) + 257, ndist = bits(s, 5) + 1, ncode = bits(s, 4) + 4;
	short l[320] = { 0 };
	struct huff lc, dc;
	int i, sym, len, n;

	if (nlen > 286 || ndist > 30)
		s->err = 1;
	for (i = 0; i < ncode; i++)
		l[order[i]] = (short)bits(s, 3);
	construct(&lc, l, 19);
	for (i = 0; i < nlen + ndist && !s->err;) {
		sym = decode(s, &lc);
		if (sym < 0)
			return;
		if (sym < 16) {
			l[i++] = (short)sym;
			continue;
		}
		len = 0;
		if (sym == 16) {
			if (!i) {
				s->err = 1;
				return;
			}
			len = l[i - 1];
			n = 3 + bits(s, 2);
		} else {
			n = sym == 17 ? 3 + bits(s, 3) : 11 + bits(s, 7);
		}
		if (i + n > nlen + ndist) {
			s->err = 1;
			return;
		}
		while (n--)
			l[i++] = (short)len;
	}
	construct(&lc, l, nlen);
	construct(&dc, l + nlen, ndist);
	codes(s, &lc, &dc);
}

static void stored(struct inflate *s)
{
	size_t n;

	s->buf = 0;
	s->cnt = 0;
	if (s->pos + 4 > s->len) {
		s->err = 1;
		return;
	}
	n = s->in[s->pos] | (size_t)s->in[s->pos + 1] << 8;
	s->pos += 4;
	if (s->pos + n > s->len) {
		s->err = 1;
		return;
	}
	while (n-- && !s->err)
		put(s, s->in[s->pos++]);
}

/* zlib stream @in into exactly @ocap bytes at @out: 0 or -1. */
static int zinflate(const unsigned char *in, size_t len, unsigned char *out, size_t ocap)
{
	struct inflate s = { .in = in, .len = len, .pos = 2, .out = out, .ocap = ocap };
	int last, type;

	if (len < 2 || (in[0] & 0x0f) != 8)
		return -1;
	do {
		last = bits(&s, 1);
		type = bits(&s, 2);
		if (type == 0)
			stored(&s);
		else if (type == 1)
			fixed(&s);
		else if (type == 2)
			dynamic(&s);
		else
			s.err = 1;
	} while (!last && !s.err);
	return s.err || s.olen != ocap ? -1 : 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo the per-row filters in place: 0 or -1. */
static int unfilter(unsigned char *d, uint32_t w, uint32_t h, unsigned int bpp)
{
	size_t stride = (size_t)w * bpp, y, i;
	unsigned char *prev = NULL;

	for (y = 0; y < h; y++) {
		unsigned char *row = d + y * (stride + 1) + 1;
		int type = row[-1];

		for (i = 0; i < stride; i++) {
			int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0;
			int c = prev && i >= bpp ? prev[i - bpp] : 0;

			switch (type) {
			case 0: break;
			case 1: row[i] = (unsigned char)(row[i] + a); break;
			case 2: row[i] = (unsigned char)(row[i] + b); break;
			case 3: row[i] = (unsigned char)(row[i] + (a + b) / 2); break;
			case 4: row[i] = (unsigned char)(row[i] + paeth(a, b, c)); break;
			default: return -1;
			}
		}
		prev = row;
	}
	return 0;
}

#define MAX_COLOURS	4096

int png_check(const char *path, struct png_stats *st)
{
	size_t len, pos = 8, zlen = 0, n, i, y;
	unsigned char *png = (unsigned char *)read_file(path, &len), *z = NULL, *d = NULL;
	uint32_t colours[MAX_COLOURS];
	unsigned int bpp = 0;
	int r = -1;

	memset(st, 0, sizeof(*st));
	if (len < 33 || memcmp(png, "\x89PNG\r\n\x1a\n", 8))
		goto out;
	while (pos + 12 <= len) {
		uint32_t clen = be32(png + pos);
		const unsigned char *type = png + pos + 4, *data = png + pos + 8;

		if (clen > len - pos - 12)
			goto out;
		if (!memcmp(type, "IHDR", 4) && clen >= 13) {
			st->width = be32(data);
			st->height = be32(data + 4);
			if (data[8] != 8 || data[12] != 0 || (data[9] != 2 && data[9] != 6))
				goto out;	/* not 8-bit RGB(A), or interlaced */
			bpp = data[9] == 6 ? 4 : 3;
		} else if (!memcmp(type, "IDAT", 4)) {
			unsigned char *nz = realloc(z, zlen + clen + 1);

			if (!nz)
				goto out;
			z = nz;
			memcpy(z + zlen, data, clen);
			zlen += clen;
		}
		pos += 12 + clen;
	}
	if (!bpp || !st->width || !st->height || st->width > 20000 || st->height > 40000)
		goto out;
	n = (size_t)st->height * ((size_t)st->width * bpp + 1);
	d = malloc(n);
	if (!d || zinflate(z, zlen, d, n) || unfilter(d, st->width, st->height, bpp))
		goto out;
	for (y = 0; y < st->height; y++) {
		const unsigned char *row = d + y * ((size_t)st->width * bpp + 1) + 1;

		for (i = 0; i < st->width; i++) {
			const unsigned char *p = row + i * bpp;
			uint32_t rgb = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
			size_t k;

			if (p[0] < 0xf0 || p[1] < 0xf0 || p[2] < 0xf0)
				st->inked++;
			for (k = 0; k < st->colours && colours[k] != rgb; k++)
				;
			if (k == st->colours && st->colours < MAX_COLOURS)
				colours[st->colours++] = rgb;
		}
	}
	r = 0;
out:
	free(d);
	free(z);
	free(png);
	return r;
}
