/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's web config file, in the format of the Prometheus
 * exporter-toolkit (node_exporter's --web.config.file): TLS and HTTP basic
 * auth. A strict YAML subset: exactly the keys below, one per line.
 *
 *	tls_server_config:
 *	  cert_file: server.crt          # relative to the file's directory
 *	  key_file: server.key
 *	  client_auth_type: RequireAndVerifyClientCert   # default NoClientCert
 *	  client_ca_file: ca.crt
 *	  min_version: TLS12             # TLS10 .. TLS13, default TLS12
 *	basic_auth_users:
 *	  prometheus: $2y$10$...         # bcrypt
 */
#ifndef NETLAT_WEBCFG_H
#define NETLAT_WEBCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum webcfg_client_auth {
	WEBCFG_NO_CLIENT_CERT,
	WEBCFG_REQUEST_CLIENT_CERT,		/* asked for, not verified */
	WEBCFG_REQUIRE_ANY_CLIENT_CERT,		/* required, not verified */
	WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN,
	WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct webcfg_user;

struct webcfg {
	bool tls;		/* tls_server_config given */
	char *cert_file, *key_file, *client_ca_file;	/* resolved paths */
	enum webcfg_client_auth client_auth;
	int min_version;	/* protocol number: 0x0301 TLS 1.0 .. 0x0304 TLS 1.3 */
	struct webcfg_user *users;
	size_t nr_users;	/* 0: no authentication */
	int64_t bcrypt_budget_ns;	/* bcrypt time left: see webcfg_authorize() */
	uint64_t bcrypt_refill_ns;	/* CLOCK_MONOTONIC of its last refill */
};

/*
 * The bcrypt budget: the share of the server's time that password checks
 * may take, and how much of it may be spent at once after a quiet spell.
 * bcrypt runs in the one poll loop: a flood of wrong passwords (each one
 * tens of milliseconds) must not hold a scrape back for long.
 */
#define WEBCFG_BCRYPT_SHARE	4		/* a quarter of each second */
#define WEBCFG_BCRYPT_BURST_NS	250000000LL	/* one second's share */

enum webcfg_auth {
	WEBCFG_AUTH_OK,
	WEBCFG_AUTH_DENIED,	/* 401 */
	WEBCFG_AUTH_BUSY,	/* it needs a bcrypt beyond the budget: 429 */
};

/*
 * Read @path into @cfg. 0, or -1 with one line in @err: "PATH:LINE: why"
 * for what the file says, "PATH: why" when it cannot be read.
 */
int webcfg_load(const char *path, struct webcfg *cfg, char *err, size_t errlen);
void webcfg_free(struct webcfg *cfg);

/*
 * Whether the Authorization header's value (@value, @len bytes; NULL when
 * the request has none) names a user with the right password. OK without
 * users. A known user's password costs one bcrypt, also when wrong or for
 * an unknown user, until it was right once: then the check is a SHA-256
 * digest's (a scrape does not pay bcrypt every time) and never touches
 * the budget. A bcrypt is run only while the budget is not spent (its
 * time is taken from it afterwards), else BUSY with *@retry_s, the whole
 * seconds until it is refilled enough for one.
 */
enum webcfg_auth webcfg_authorize(struct webcfg *cfg, const char *value, size_t len,
				  unsigned int *retry_s);

#endif
