// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's TLS (see tls.h): OpenSSL's server, configured from the
 * web config file, driven by the exporter's poll() loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls.h"

struct tls_server {
	SSL_CTX *ctx;
};

struct tls_conn {
	SSL *ssl;
	bool failed;	/* a fatal error: no close_notify then */
};

/* Why OpenSSL refused @path (as @what), in @err; NULL for the caller. */
static struct tls_server *refused(SSL_CTX *ctx, char *err, size_t errlen, const char *what,
				  const char *path)
{
	unsigned long e = ERR_peek_last_error();
	const char *reason = e ? ERR_reason_error_string(e) : NULL;
	FILE *f = fopen(path, "r");

	/* the system's reason first: OpenSSL's for a missing file is vague */
	if (!f)
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	else
		snprintf(err, errlen, "%s %s: %s", what, path, reason ? reason : "not accepted by OpenSSL");
	if (f)
		fclose(f);
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return NULL;
}

/* RequestClientCert, RequireAnyClientCert: a certificate is not checked. */
static int accept_any(int ok, X509_STORE_CTX *store)
{
	(void)ok;
	(void)store;
	return 1;
}

struct tls_server *tls_server_new(const struct webcfg *cfg, char *err, size_t errlen)
{
	static const int verify[] = {
		[WEBCFG_NO_CLIENT_CERT] = SSL_VERIFY_NONE,
		[WEBCFG_REQUEST_CLIENT_CERT] = SSL_VERIFY_PEER,
		[WEBCFG_REQUIRE_ANY_CLIENT_CERT] = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
		[WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN] = SSL_VERIFY_PEER,
		[WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT] = SSL_VERIFY_PEER |
							  SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
	};
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	struct tls_server *srv;
	bool mismatch;

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, cfg->min_version)) {
		SSL_CTX_free(ctx);
		snprintf(err, errlen, "TLS: cannot set up OpenSSL");
		return NULL;
	}
	/* the exporter's loop may hand SSL_write a moved buffer's rest */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->cert_file) != 1)
		return refused(ctx, err, errlen, "cert_file", cfg->cert_file);
	ERR_clear_error();
	mismatch = SSL_CTX_use_PrivateKey_file(ctx, cfg->key_file, SSL_FILETYPE_PEM) != 1;
	if (mismatch && ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH)
		return refused(ctx, err, errlen, "key_file", cfg->key_file);
	/* OpenSSL's "key values mismatch" names neither file */
	if (mismatch || SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "key_file %s is not the key of cert_file %s",
			 cfg->key_file, cfg->cert_file);
		ERR_clear_error();
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (cfg->client_ca_file) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->client_ca_file);

		if (!names || SSL_CTX_load_verify_locations(ctx, cfg->client_ca_file, NULL) != 1) {
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			return refused(ctx, err, errlen, "client_ca_file", cfg->client_ca_file);
		}
		/* the CAs the server names to clients choosing a certificate */
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	SSL_CTX_set_verify(ctx, verify[cfg->client_auth],
			   cfg->client_auth == WEBCFG_REQUEST_CLIENT_CERT ||
			   cfg->client_auth == WEBCFG_REQUIRE_ANY_CLIENT_CERT ? accept_any : NULL);
	srv = malloc(sizeof(*srv));
	if (!srv) {
		SSL_CTX_free(ctx);
		snprintf(err, errlen, "TLS: out of memory");
		return NULL;
	}
	srv->ctx = ctx;
	return srv;
}

void tls_server_free(struct tls_server *srv)
{
	if (!srv)
		return;
	SSL_CTX_free(srv->ctx);
	free(srv);
}

struct tls_conn *tls_conn_new(struct tls_server *srv, int fd)
{
	struct tls_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ssl = SSL_new(srv->ctx);
	if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	SSL_set_accept_state(c->ssl);
	return c;
}

void tls_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl);
	free(c);
}

/* What an SSL_read() or SSL_write() that returned @r <= 0 means. */
static ssize_t tls_result(struct tls_conn *c, int r, short *events)
{
	switch (SSL_get_error(c->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		*events = POLLIN;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		*events = POLLOUT;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		/* the reason stays unsaid: a scanner's garbage is not news */
		ERR_clear_error();
		c->failed = true;
		errno = EPROTO;
		return -1;
	}
}

static int io_len(size_t len)
{
	return len > INT_MAX ? INT_MAX : (int)len;
}

ssize_t tls_recv(struct tls_conn *c, void *buf, size_t len, short *events)
{
	int r;

	ERR_clear_error();	/* SSL_get_error() reads the queue */
	r = SSL_read(c->ssl, buf, io_len(len));

	return r > 0 ? r : tls_result(c, r, events);
}

ssize_t tls_send(struct tls_conn *c, const void *buf, size_t len, short *events)
{
	int r;

	ERR_clear_error();
	r = SSL_write(c->ssl, buf, io_len(len));

	return r > 0 ? r : tls_result(c, r, events);
}

void tls_close_notify(struct tls_conn *c)
{
	if (!c->failed && SSL_shutdown(c->ssl) < 0)
		ERR_clear_error();
}
