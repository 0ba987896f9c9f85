/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `netlat exporter`: a small single-threaded HTTP/1.1 server for
 * Prometheus (GET /metrics), built on prom.h; HTTPS and basic auth from
 * a web config file (webcfg.h, tls.h).
 */
#ifndef NETLAT_EXPORTER_H
#define NETLAT_EXPORTER_H

#define EXPORTER_LISTEN_DEFAULT	"127.0.0.1:9661"

#define EXPORTER_SYNOPSIS "[--listen ADDR:PORT] [--timeout SECS] [--web.config.file FILE] " \
	"[--device PATH]"
#define EXPORTER_HELP \
	"Serve the packet level's kernel histograms and counters, the ring\n" \
	"counters per CPU and the probe groups as Prometheus metrics on\n" \
	"http://ADDR:PORT/metrics, read from the device at each scrape (no record\n" \
	"is read: it runs beside any reader). OpenMetrics 1.0.0 when the scraper\n" \
	"asks for it, else the text format 0.0.4. Runs until SIGINT/SIGTERM.\n" \
	"  -l, --listen ADDR:PORT  address to listen on (default " EXPORTER_LISTEN_DEFAULT "):\n" \
	"                       an IPv4 address or localhost, [IPV6]:PORT, or :PORT\n" \
	"                       for every IPv4 address; port 0 picks a free one\n" \
	"  -t, --timeout SECS   close a connection whose request has not come in\n" \
	"                       SECS after it was opened (default 10)\n" \
	"  --web.config.file FILE, --web-config FILE\n" \
	"                       TLS and basic auth as node_exporter's web config file\n" \
	"                       says (tls_server_config, basic_auth_users): what to use\n" \
	"                       when listening beyond localhost\n" \
	"  -D, --device PATH    use PATH instead of " NETLAT_DEVICE_PATH "\n"

/* The command: parse the options, serve, return the exit status. */
int exporter_main(int argc, char **argv);

#endif
