/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's TLS (OpenSSL), on non-blocking sockets: every call
 * returns at once, and when it cannot go on says which poll() event it
 * waits for, so that a slow handshake holds its own connection only.
 */
#ifndef NETLAT_TLS_H
#define NETLAT_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "webcfg.h"

struct tls_server;
struct tls_conn;

/*
 * The certificate, key and client CAs of @cfg loaded and checked; NULL
 * with one line in @err (naming the file and the reason).
 */
struct tls_server *tls_server_new(const struct webcfg *cfg, char *err, size_t errlen);
void tls_server_free(struct tls_server *srv);

/* TLS on the accepted socket @fd (the handshake comes with the first read); NULL: no memory. */
struct tls_conn *tls_conn_new(struct tls_server *srv, int fd);
/* Frees the connection, not the socket. */
void tls_conn_free(struct tls_conn *c);

/*
 * Like recv() and send(): bytes, 0 at the peer's close, or -1 with errno
 * EAGAIN (then *@events is what to poll for: POLLIN or POLLOUT) or EPROTO
 * (a failed handshake, a protocol error: close the connection).
 */
ssize_t tls_recv(struct tls_conn *c, void *buf, size_t len, short *events);
ssize_t tls_send(struct tls_conn *c, const void *buf, size_t len, short *events);

/* Send close_notify, once, without waiting for the peer's. */
void tls_close_notify(struct tls_conn *c);

#endif
