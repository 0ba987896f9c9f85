// SPDX-License-Identifier: GPL-2.0
/*
 * The web config file (see webcfg.h). A line-by-line parser of the YAML
 * its users write for these keys: two levels of block mappings whose
 * values are plain or quoted strings. Anything else (an unknown key, a
 * flow mapping, a tab, a third level) is an error with its line rather
 * than a guess: a file that configures TLS or passwords must mean what it
 * says. Basic auth checks bcrypt hashes with libxcrypt.
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "cli.h"
#include "webcfg.h"

#define BCRYPT_LEN	60
#define FILE_MAX	(1 << 20)	/* a web config file is a few lines */

struct webcfg_user {
	char *name, *hash;
	bool ok;	/* digest is that of a password that was right */
	unsigned char digest[SHA256_DIGEST_LENGTH];
};

/* tls_server_config's keys, in the order of struct parser's tls[] */
enum { TLS_CERT, TLS_KEY, TLS_AUTH, TLS_CA, TLS_MIN, TLS_KEYS };
static const char *const tls_keys[TLS_KEYS] = {
	"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
};

static const char *const auth_types[] = {
	[WEBCFG_NO_CLIENT_CERT] = "NoClientCert",
	[WEBCFG_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[WEBCFG_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

struct parser {
	const char *path;
	unsigned int line;
	char *err;
	size_t errlen;
	struct webcfg *cfg;
	unsigned int tls_line;		/* of tls_server_config:, 0 if none */
	char *tls[TLS_KEYS];		/* the values as written */
	unsigned int tls_lines[TLS_KEYS];
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->path, p->line);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();	/* a few bytes at start: nothing sensible to do */
	return d;
}

/* A quoted string at *@sp ('' or \" \\ \/ escapes) into *@out. */
static int quoted(struct parser *p, char **sp, char **out)
{
	char *s = *sp, q = *s++, *o;

	o = *out = xstrdup(s);
	for (;; s++) {
		if (!*s) {
			free(*out);
			*out = NULL;
			return fail(p, "a %s-quoted string without its end", q == '"' ? "double" : "single");
		}
		if (*s == q && q == '\'' && s[1] == '\'') {
			s++;
		} else if (*s == q) {
			break;
		} else if (q == '"' && *s == '\\') {
			if (!s[1] || !strchr("\"\\/", s[1])) {
				free(*out);
				*out = NULL;
				return fail(p, "escape \\%c in a double-quoted string: only \\\" \\\\ \\/",
					    s[1] ? s[1] : ' ');
			}
			s++;
		}
		*o++ = *s;
	}
	*o = 0;
	*sp = s + 1;
	return 0;
}

/*
 * A string at *@sp, plain or quoted, into *@out (malloc'ed); *@sp after
 * it. A plain key ends at ": " or a final ':', a plain value at the end
 * or a comment (" #"), without its trailing blanks.
 */
static int scalar(struct parser *p, char **sp, bool key, char **out)
{
	char *s = *sp, *end;

	if (*s == '"' || *s == '\'')
		return quoted(p, sp, out);
	if (strchr("{}[]&*!|>%@`?", *s) || (*s == '-' && (s[1] == ' ' || !s[1])))
		return fail(p, "YAML's '%c' is not supported here: one KEY: VALUE per line, "
			    "the value plain or quoted", *s);
	for (end = s; *end; end++) {
		if (*end == '#' && end > s && end[-1] == ' ')
			break;
		if (*end == ':' && (end[1] == ' ' || !end[1])) {
			if (key)
				break;
			return fail(p, "': ' in a value: quote it");
		}
	}
	*sp = end;
	while (end > s && end[-1] == ' ')
		end--;
	*out = strndup(s, (size_t)(end - s));
	if (!*out)
		abort();
	return 0;
}

static bool is_bcrypt(const char *h)
{
	return strlen(h) == BCRYPT_LEN && h[0] == '$' && h[1] == '2' &&
	       (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') && h[3] == '$';
}

/* One "KEY: VALUE" of basic_auth_users. */
static int user_entry(struct parser *p, char *name, char *hash)
{
	struct webcfg *cfg = p->cfg;
	struct webcfg_user *u;
	size_t i;

	for (i = 0; i < cfg->nr_users; i++)
		if (!strcmp(cfg->users[i].name, name))
			return fail(p, "user '%s' given twice", name);
	if (!is_bcrypt(hash))
		return fail(p, "user '%s': not a bcrypt hash ($2a$, $2b$ or $2y$, %d characters)",
			    name, BCRYPT_LEN);
	u = realloc(cfg->users, (cfg->nr_users + 1) * sizeof(*u));
	if (!u)
		abort();
	cfg->users = u;
	u += cfg->nr_users++;
	memset(u, 0, sizeof(*u));
	u->name = xstrdup(name);
	u->hash = xstrdup(hash);
	return 0;
}

/* One "KEY: VALUE" of tls_server_config. */
static int tls_entry(struct parser *p, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < TLS_KEYS && strcmp(key, tls_keys[i]); i++)
		;
	if (i == TLS_KEYS)
		return fail(p, "unknown key '%s' in tls_server_config (netlat knows cert_file, "
			    "key_file, client_auth_type, client_ca_file, min_version)", key);
	if (p->tls[i])
		return fail(p, "'%s' given twice", key);
	p->tls[i] = xstrdup(value);
	p->tls_lines[i] = p->line;
	return 0;
}

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

/* A top-level key: the section its indented lines fill. */
static int section(struct parser *p, const char *key, const char *value, enum section *sec,
		   bool seen[3])
{
	if (!strcmp(key, "tls_server_config"))
		*sec = SEC_TLS;
	else if (!strcmp(key, "basic_auth_users"))
		*sec = SEC_USERS;
	else
		return fail(p, "unknown key '%s' (netlat knows tls_server_config and "
			    "basic_auth_users)", key);
	if (seen[*sec])
		return fail(p, "'%s' given twice", key);
	seen[*sec] = true;
	if (value)
		return fail(p, "%s: its keys go on the lines below, indented", key);
	if (*sec == SEC_TLS)
		p->tls_line = p->line;
	return 0;
}

/* @text, NUL-terminated, line by line. */
static int parse(struct parser *p, char *text)
{
	enum section sec = SEC_NONE;
	bool seen[3] = { false }, started = false;
	size_t indent, sec_indent = 0, len;
	char *line, *next, *s, *key, *value;
	int r;

	for (line = text, p->line = 1; line; line = next, p->line++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[len - 1] = 0;
		for (s = line; *s == ' '; s++)
			;
		if (*s == '\t')
			return fail(p, "a tab in the indentation: YAML wants spaces");
		if (!*s || *s == '#')
			continue;
		/* a document start marker may open the file */
		if (!started && s == line && !strncmp(s, "---", 3) && (!s[3] || s[3] == ' ')) {
			for (s += 3; *s == ' '; s++)
				;
			started = true;
			if (!*s || *s == '#')
				continue;
			return fail(p, "text after '---'");
		}
		started = true;
		indent = (size_t)(s - line);
		if (scalar(p, &s, true, &key))
			return -1;
		value = NULL;
		if (*s != ':') {
			r = fail(p, "want KEY: VALUE");
			goto next_line;
		}
		for (s++; *s == ' '; s++)
			;
		if (*s && *s != '#') {
			if (scalar(p, &s, false, &value)) {
				r = -1;
				goto next_line;
			}
			for (; *s == ' '; s++)
				;
			if (*s && *s != '#') {
				r = fail(p, "text after the value");
				goto next_line;
			}
		}
		if (!indent) {
			r = section(p, key, value, &sec, seen);
			sec_indent = 0;
		} else if (sec == SEC_NONE) {
			r = fail(p, "an indented line before any section");
		} else if (sec_indent && indent != sec_indent) {
			r = fail(p, "indented %zu spaces, the keys above it %zu: netlat reads "
				 "two levels only", indent, sec_indent);
		} else if (!value) {
			r = fail(p, "'%s' has no value", key);
		} else {
			sec_indent = indent;
			r = sec == SEC_TLS ? tls_entry(p, key, value) : user_entry(p, key, value);
		}
next_line:
		free(key);
		free(value);
		if (r)
			return r;
	}
	return 0;
}

/* @name relative to the config file's directory, as the exporter-toolkit does. */
static char *resolve(const char *cfg_path, const char *name)
{
	const char *slash = strrchr(cfg_path, '/');
	char *out;

	if (name[0] == '/' || !slash)
		return xstrdup(name);
	if (asprintf(&out, "%.*s/%s", (int)(slash - cfg_path), cfg_path, name) < 0)
		abort();
	return out;
}

/* What tls_server_config says, checked as a whole. */
static int tls_check(struct parser *p)
{
	struct webcfg *cfg = p->cfg;
	static const char *const versions[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	size_t i;

	cfg->tls = true;
	cfg->min_version = 0x0303;
	for (i = TLS_CERT; i <= TLS_KEY; i++) {
		p->line = p->tls_line;
		if (!p->tls[i])
			return fail(p, "tls_server_config has no %s", tls_keys[i]);
	}
	cfg->cert_file = resolve(p->path, p->tls[TLS_CERT]);
	cfg->key_file = resolve(p->path, p->tls[TLS_KEY]);
	if (p->tls[TLS_AUTH]) {
		p->line = p->tls_lines[TLS_AUTH];
		for (i = 0; i < sizeof(auth_types) / sizeof(auth_types[0]); i++)
			if (!strcmp(p->tls[TLS_AUTH], auth_types[i]))
				break;
		if (i == sizeof(auth_types) / sizeof(auth_types[0]))
			return fail(p, "client_auth_type '%s': want NoClientCert, RequestClientCert, "
				    "RequireAnyClientCert, VerifyClientCertIfGiven or "
				    "RequireAndVerifyClientCert", p->tls[TLS_AUTH]);
		cfg->client_auth = (enum webcfg_client_auth)i;
	}
	if (p->tls[TLS_CA]) {
		p->line = p->tls_lines[TLS_CA];
		if (cfg->client_auth < WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN)
			return fail(p, "client_ca_file, but client_auth_type %s verifies no "
				    "client certificate", auth_types[cfg->client_auth]);
		cfg->client_ca_file = resolve(p->path, p->tls[TLS_CA]);
	} else if (cfg->client_auth >= WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN) {
		p->line = p->tls_lines[TLS_AUTH];
		return fail(p, "client_auth_type %s needs client_ca_file",
			    auth_types[cfg->client_auth]);
	}
	if (p->tls[TLS_MIN]) {
		p->line = p->tls_lines[TLS_MIN];
		for (i = 0; i < 4 && strcmp(p->tls[TLS_MIN], versions[i]); i++)
			;
		if (i == 4)
			return fail(p, "min_version '%s': want TLS10, TLS11, TLS12 or TLS13",
				    p->tls[TLS_MIN]);
		cfg->min_version = 0x0301 + (int)i;
	}
	return 0;
}

int webcfg_load(const char *path, struct webcfg *cfg, char *err, size_t errlen)
{
	struct parser p = { .path = path, .err = err, .errlen = errlen, .cfg = cfg };
	FILE *f = fopen(path, "r");
	char *text;
	size_t len, i;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(FILE_MAX + 1);
	if (!text)
		abort();
	len = fread(text, 1, FILE_MAX + 1, f);
	r = ferror(f) ? errno : 0;
	fclose(f);
	if (r || len > FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path, r ? strerror(r) : "larger than 1 MiB");
		free(text);
		return -1;
	}
	text[len] = 0;
	r = memchr(text, 0, len) ? (snprintf(err, errlen, "%s: a NUL byte: not a text file",
					     path), -1) : parse(&p, text);
	if (!r && p.tls_line)
		r = tls_check(&p);
	for (i = 0; i < TLS_KEYS; i++)
		free(p.tls[i]);
	free(text);
	if (r)
		webcfg_free(cfg);
	return r;
}

void webcfg_free(struct webcfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nr_users; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].hash);
	}
	free(cfg->users);
	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->client_ca_file);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- basic auth ------------------------------------------------------------ */

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 (padding optional) into @out; its length, or -1. */
static long b64_decode(const char *s, size_t len, char *out, size_t room)
{
	uint32_t acc = 0;
	size_t n = 0, bits = 0, i;
	int v;

	while (len && s[len - 1] == '=')
		len--;
	for (i = 0; i < len; i++) {
		v = b64_value(s[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == room)
				return -1;
			out[n++] = (char)(acc >> bits);
		}
	}
	return (long)n;
}

/*
 * The budget as of now: a quarter of the time since the last refill is
 * added, up to the burst. It starts full.
 */
static void budget_refill(struct webcfg *cfg, uint64_t now)
{
	uint64_t add = (now - cfg->bcrypt_refill_ns) / WEBCFG_BCRYPT_SHARE;

	if (!cfg->bcrypt_refill_ns || add >= (uint64_t)WEBCFG_BCRYPT_BURST_NS)
		cfg->bcrypt_budget_ns = WEBCFG_BCRYPT_BURST_NS;
	else if (cfg->bcrypt_budget_ns + (int64_t)add > WEBCFG_BCRYPT_BURST_NS)
		cfg->bcrypt_budget_ns = WEBCFG_BCRYPT_BURST_NS;
	else
		cfg->bcrypt_budget_ns += (int64_t)add;
	cfg->bcrypt_refill_ns = now;
}

/* Whole seconds until the spent budget is positive again (at least 1). */
static unsigned int budget_retry_s(const struct webcfg *cfg)
{
	uint64_t wait_ns = (uint64_t)(1 - cfg->bcrypt_budget_ns) * WEBCFG_BCRYPT_SHARE;

	return (unsigned int)(wait_ns / 1000000000ULL) + 1;
}

/*
 * "user:password" of a Basic Authorization header's value into @creds
 * (NUL-terminated, the ':' made a NUL); the password, or NULL.
 */
static char *basic_creds(const char *value, size_t len, char *creds, size_t room)
{
	char *colon;
	long n;

	while (len && (*value == ' ' || *value == '\t'))
		value++, len--;
	while (len && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len < 6 || strncasecmp(value, "Basic ", 6))
		return NULL;
	for (value += 6, len -= 6; len && *value == ' '; value++, len--)
		;
	n = b64_decode(value, len, creds, room - 1);
	if (n < 0 || memchr(creds, 0, (size_t)n))
		return NULL;	/* crypt() would stop at a NUL: "pw\0x" is not "pw" */
	creds[n] = 0;
	colon = strchr(creds, ':');
	if (!colon)
		return NULL;
	*colon = 0;
	return colon + 1;
}

/*
 * bcrypt @pass against @u's hash (a known user's for an unknown one: the
 * time tells nothing), timed and charged to the budget.
 */
static bool bcrypt_check(struct webcfg *cfg, struct webcfg_user *u, const char *pass)
{
	static struct crypt_data cd;	/* 32 KiB: not on the stack */
	const char *hash = u ? u->hash : cfg->users[0].hash, *out;
	uint64_t t0 = monotonic_ns();
	bool ok;

	out = crypt_rn(pass, hash, &cd, sizeof(cd));
	ok = u && out && strlen(out) == BCRYPT_LEN && !CRYPTO_memcmp(out, hash, BCRYPT_LEN);
	OPENSSL_cleanse(&cd, sizeof(cd));
	cfg->bcrypt_budget_ns -= (int64_t)(monotonic_ns() - t0);
	return ok;
}

enum webcfg_auth webcfg_authorize(struct webcfg *cfg, const char *value, size_t len,
				  unsigned int *retry_s)
{
	unsigned char digest[SHA256_DIGEST_LENGTH];
	struct webcfg_user *u = NULL;
	enum webcfg_auth r = WEBCFG_AUTH_DENIED;
	char creds[4096], *pass;
	size_t i;

	if (!cfg->nr_users)
		return WEBCFG_AUTH_OK;
	pass = value ? basic_creds(value, len, creds, sizeof(creds)) : NULL;
	if (!pass)
		goto out;
	for (i = 0; i < cfg->nr_users && !u; i++)
		if (!strcmp(cfg->users[i].name, creds))
			u = &cfg->users[i];
	SHA256((const unsigned char *)pass, strlen(pass), digest);
	/* the remembered password: no bcrypt, so the budget is not asked */
	if (u && u->ok && !CRYPTO_memcmp(digest, u->digest, sizeof(digest))) {
		r = WEBCFG_AUTH_OK;
		goto out;
	}
	budget_refill(cfg, monotonic_ns());
	if (cfg->bcrypt_budget_ns <= 0) {
		*retry_s = budget_retry_s(cfg);
		r = WEBCFG_AUTH_BUSY;
		goto out;
	}
	if (bcrypt_check(cfg, u, pass)) {
		memcpy(u->digest, digest, sizeof(digest));
		u->ok = true;
		r = WEBCFG_AUTH_OK;
	}
out:
	OPENSSL_cleanse(creds, sizeof(creds));
	return r;
}
