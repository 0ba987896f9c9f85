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
};

/*
 * Read @path into @cfg. 0, or -1 with one line in @err: "PATH:LINE: why"
 * for what the file says, "PATH: why" when it cannot be read.
 */
int webcfg_load(const char *path, struct webcfg *cfg, char *err, size_t errlen);
void webcfg_free(struct webcfg *cfg);

/*
 * Whether the Authorization header's value (@value, @len bytes; NULL when
 * the request has none) names a user with the right password. True
 * without users. A known user's password costs one bcrypt, also when
 * wrong or for an unknown user, until it was right once: then the check
 * is a SHA-256 digest's (a scrape does not pay bcrypt every time).
 */
bool webcfg_authorized(struct webcfg *cfg, const char *value, size_t len);

#endif
