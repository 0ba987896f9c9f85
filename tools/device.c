// SPDX-License-Identifier: GPL-2.0
/*
 * The device commands: "netlat info", "start", "stop", "reset", "config"
 * and "probes", each an ioctl of the device with its arguments parsed and
 * its answer printed.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libnetlat.h"
#include "pktstat.h"
#include "cli.h"
#include "hooks.h"
#include "output.h"
#include "device.h"

static void add_cpu_stats(struct netlat_cpu_stats *total, const struct netlat_cpu_stats *st)
{
	total->written += st->written;
	total->dropped += st->dropped;
	total->prod += st->prod;
	total->cons += st->cons;
	total->resyncs += st->resyncs;
	total->overwritten += st->overwritten;
	total->filtered += st->filtered;
}

/* The sent packets whose stages the packet level joins. */
static const char *sample_text(const struct netlat_info *info)
{
	static char buf[64];

	if (info->sample <= 1)
		return "every packet joined";
	snprintf(buf, sizeof(buf), "TCP packets sampled every %u KiB",
		 info->sample * NETLAT_SAMPLE_UNIT / 1024);
	return buf;
}

static void print_info(const char *path, const struct netlat_info *info)
{
	printf("device        %s\n", path);
	printf("abi version   %u\n", info->abi_version);
	printf("tracing       %s%s\n", info->state & NETLAT_STATE_RUNNING ? "running" : "stopped",
	       info->state & NETLAT_STATE_CONSUMER ? ", a reader is consuming" : "");
	printf("cpus          %u\n", info->nr_cpus);
	printf("ring bytes    %llu per cpu\n", (unsigned long long)info->ring_bytes);
	printf("ring mode     %s\n", ring_mode_name(info->mode));
	printf("level         %s", info->level == NETLAT_LEVEL_PACKETS ? "packets" : "events");
	if (info->level == NETLAT_LEVEL_PACKETS)
		printf(" (records for packets from %llu ns; %s; table %llu bytes, %u sockets, %u packets in flight)",
		       (unsigned long long)info->slow_ns, sample_text(info),
		       (unsigned long long)info->pkt_mem_bytes, info->pkt_flows,
		       info->pkt_pkts);
	putchar('\n');
	if (info->acks)
		printf("acks          a record of each pure ACK sent\n");
	if (info->rx_flows)
		printf("rx table      %llu bytes (%u sockets, %u packets queued; while rx is on)\n",
		       (unsigned long long)info->rx_mem_bytes, info->rx_flows,
		       info->rx_pkts);
	if (info->table_bytes)
		printf("table budget  %llu bytes\n", (unsigned long long)info->table_bytes);
	printf("memory        %llu bytes\n", (unsigned long long)info->mem_bytes);
	printf("watermark     %u bytes\n", info->watermark);
	printf("flush         %u ms%s\n", info->flush_ms, info->flush_ms ? "" : " (off)");
	printf("page size     %u\n", info->page_size);
	printf("max record    %u bytes\n", info->max_record);
	printf("probe groups  0x%llx available, 0x%llx enabled\n",
	       (unsigned long long)info->probe_groups,
	       (unsigned long long)info->probe_groups_enabled);
}

/* pending = prod - cons: bytes waiting in the ring. */
static void print_cpu_stats_row(const char *label, const struct netlat_cpu_stats *st)
{
	printf("%-6s %12llu %12llu %12llu %12llu %12llu %8llu %12llu %12llu\n", label,
	       (unsigned long long)st->written, (unsigned long long)st->dropped,
	       (unsigned long long)st->prod, (unsigned long long)st->cons,
	       (unsigned long long)(st->prod - st->cons),
	       (unsigned long long)st->resyncs, (unsigned long long)st->overwritten,
	       (unsigned long long)st->filtered);
}

static int print_cpu_table(int fd, const char *path, unsigned int nr_cpus)
{
	struct netlat_cpu_stats st, total = { 0 };
	unsigned int cpu;
	char label[16];
	int r;

	printf("\n%-6s %12s %12s %12s %12s %12s %8s %12s %12s\n", "cpu", "written",
	       "dropped", "prod", "cons", "pending", "resyncs", "overwritten", "filtered");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		r = netlat_get_cpu_stats(fd, cpu, &st);
		if (r == -EINVAL)	/* not a possible CPU: it has no ring */
			continue;
		if (r < 0)
			return ioctl_failed(path, "GET_CPU_STATS", -r);
		snprintf(label, sizeof(label), "%u", cpu);
		print_cpu_stats_row(label, &st);
		add_cpu_stats(&total, &st);
	}
	print_cpu_stats_row("total", &total);
	return 0;
}

/* The histograms by key, if the kernel keeps them (a module without: no). */
static void print_keys_info(int fd)
{
	static const char *const fields[] = { "port", "netns", "cgroup" };
	struct netlat_stage_hist st[NETLAT_NR_STAGES];
	struct netlat_hist h;
	unsigned int i;

	if (pktstat_read_key(fd, 0, &h, st) || !h.key_by)
		return;
	printf("keys          by");
	for (i = 0; i < 3; i++)
		if (h.key_by & (1U << i))
			printf("%s%s", h.key_by & ((1U << i) - 1) ? "," : " ", fields[i]);
	printf(", %u at most, %llu bytes; %llu evicted, %llu sockets folded\n",
	       h.max_keys, (unsigned long long)h.keys_mem_bytes,
	       (unsigned long long)h.keys_evicted, (unsigned long long)h.keys_folded);
}

static int show_info(int fd, const char *path)
{
	struct netlat_info info;
	int r;

	r = netlat_get_info(fd, &info);
	if (r < 0)
		return ioctl_failed(path, "GET_INFO", -r);
	if (info.abi_version != NETLAT_ABI_VERSION) {
		error("%s: unsupported ABI version %u (this tool reads version %d)",
		      path, info.abi_version, NETLAT_ABI_VERSION);
		return 1;
	}
	print_info(path, &info);
	print_keys_info(fd);
	return print_cpu_table(fd, path, info.nr_cpus) || finish_stdout();
}

int cmd_info(int argc, char **argv)
{
	const char *path = NETLAT_DEVICE_PATH;
	int fd, status;

	status = parse_device_args(argc, argv, &path);
	if (status >= 0)
		return status;
	fd = open_device(path);
	if (fd < 0)
		return 1;
	status = show_info(fd, path);
	close(fd);
	return status;
}

static int run_ioctl(const char *path, int (*op)(int fd), const char *what)
{
	int fd = open_device(path), r;

	if (fd < 0)
		return 1;
	r = op(fd);
	close(fd);
	return r < 0 ? ioctl_failed(path, what, -r) : 0;
}

static int control_command(int argc, char **argv, int (*op)(int fd), const char *what)
{
	const char *path = NETLAT_DEVICE_PATH;
	int status = parse_device_args(argc, argv, &path);

	return status >= 0 ? status : run_ioctl(path, op, what);
}

int cmd_start(int argc, char **argv)
{
	return control_command(argc, argv, netlat_start, "START");
}

int cmd_stop(int argc, char **argv)
{
	return control_command(argc, argv, netlat_stop, "STOP");
}

int cmd_reset(int argc, char **argv)
{
	return control_command(argc, argv, netlat_reset, "RESET");
}

/* The settings of "netlat config", for run_ioctl()'s plain callback. */
static struct netlat_config new_config;

static int apply_config(int fd)
{
	return netlat_set_config(fd, &new_config);
}

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_ARG("ring-bytes", 'r'),
		OPTION_ARG("watermark", 'w'),
		OPTION_ARG("flush-ms", 'f'),
		OPTION_ARG("mode", 'm'),
		OPTION_ARG("level", 'l'),
		OPTION_ARG("slow", 's'),
		OPTION_ARG("sample", 'S'),
		OPTION_ARG("acks", 'A'),
		OPTION_ARG("table-bytes", 'T'),
		OPTION_ARG("by", 'b'),
		OPTION_ARG("keys", 'k'),
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct netlat_config *cfg = &new_config;
	uint64_t v;
	int c;

	while ((c = next_option(argc, argv, "r:w:f:m:l:s:S:A:T:b:k:D:h", opts)) != -1) {
		switch (c) {
		case 'r':
			if (!parse_size(optarg, &v))
				return usage_error("bad ring size '%s'", optarg);
			cfg->ring_bytes = v;
			cfg->flags |= NETLAT_CONFIG_RING_BYTES;
			break;
		case 'w':
			if (!parse_size(optarg, &v) || v > UINT32_MAX)
				return usage_error("bad watermark '%s'", optarg);
			cfg->watermark = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_WATERMARK;
			break;
		case 'f':
			if (!parse_u64(optarg, &v) || v > NETLAT_FLUSH_MS_MAX)
				return usage_error("bad flush period '%s'", optarg);
			cfg->flush_ms = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_FLUSH_MS;
			break;
		case 'm':
			if (!strcmp(optarg, "stream"))
				cfg->mode = NETLAT_MODE_STREAM;
			else if (!strcmp(optarg, "overwrite"))
				cfg->mode = NETLAT_MODE_OVERWRITE;
			else
				return usage_error("bad mode '%s': stream or overwrite", optarg);
			cfg->flags |= NETLAT_CONFIG_MODE;
			break;
		case 'l':
			if (!strcmp(optarg, "events"))
				cfg->level = NETLAT_LEVEL_EVENTS;
			else if (!strcmp(optarg, "packets"))
				cfg->level = NETLAT_LEVEL_PACKETS;
			else
				return usage_error("bad level '%s': events or packets", optarg);
			cfg->flags |= NETLAT_CONFIG_LEVEL;
			break;
		case 's':
			if (netlat_parse_duration(optarg, &v))
				return usage_error("bad duration '%s': a number and ns, us, ms or s",
						   optarg);
			cfg->slow_ns = v;
			cfg->flags |= NETLAT_CONFIG_SLOW_NS;
			break;
		case 'S':
			if (!parse_u64(optarg, &v) || v > NETLAT_SAMPLE_MAX ||
			    (v & (v - 1)))
				return usage_error("bad --sample '%s': 0, 1 or a power of two up to %u",
						   optarg, NETLAT_SAMPLE_MAX);
			cfg->sample = (uint32_t)v;
			cfg->flags |= NETLAT_CONFIG_SAMPLE;
			break;
		case 'A':
			if (!strcmp(optarg, "on"))
				cfg->acks = 1;
			else if (strcmp(optarg, "off"))
				return usage_error("bad --acks '%s': on or off", optarg);
			cfg->flags |= NETLAT_CONFIG_ACKS;
			break;
		case 'T':
			if (!parse_size(optarg, &v) || v < NETLAT_TABLE_BYTES_MIN ||
			    v > NETLAT_TABLE_BYTES_MAX)
				return usage_error("bad table budget '%s': 64K to 1G", optarg);
			cfg->table_bytes = v;
			cfg->flags |= NETLAT_CONFIG_TABLE_BYTES;
			break;
		case 'b':
			if (pktstat_parse_by(optarg, &cfg->key_by))
				return usage_error("bad --by '%s': port, netns, cgroup (comma-separated) or none",
						   optarg);
			cfg->flags |= NETLAT_CONFIG_KEYS;
			break;
		case 'k':
			if (!parse_u64(optarg, &v) || !v || v > NETLAT_MAX_KEYS_MAX)
				return usage_error("bad --keys '%s': 1 to %u", optarg,
						   NETLAT_MAX_KEYS_MAX);
			cfg->max_keys = (uint32_t)v;
			break;
		case 'D':
			path = optarg;
			break;
		case 'h':
			return command_help();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("too many arguments");
	if (cfg->max_keys && !(cfg->flags & NETLAT_CONFIG_KEYS))
		return usage_error("--keys goes with --by");
	if (!cfg->flags)
		return usage_error("nothing to set");
	return run_ioctl(path, apply_config, "SET_CONFIG");
}

static void print_probe_mask(const char *label, uint64_t m)
{
	unsigned int i;
	bool any = false;

	printf("%-10s", label);
	for (i = 0; i < 64; i++) {
		const char *n;

		if (!(m & (1ULL << i)))
			continue;
		n = netlat_probe_name(1ULL << i);
		if (n)
			printf("%s%s", any ? "," : " ", n);
		else
			printf("%sbit%u", any ? "," : " ", i);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

/* Which groups' probes missed hits (nmissed by group). */
static void print_group_missed(const struct netlat_probes *pr)
{
	unsigned int i;
	bool any = false;

	printf("%-10s", "missed in");
	for (i = 0; i < 64; i++) {
		const char *n = netlat_probe_name(1ULL << i);

		if (!pr->group_missed[i])
			continue;
		if (n)
			printf("%s%s=%llu", any ? "," : " ", n,
			       (unsigned long long)pr->group_missed[i]);
		else
			printf("%sbit%u=%llu", any ? "," : " ", i,
			       (unsigned long long)pr->group_missed[i]);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

int cmd_probes(int argc, char **argv)
{
	static const struct option opts[] = {
		OPTION_ARG("enable", 'e'),
		OPTION_FLAG("hooks", 'H'),
		DEVICE_OPTION,
		HELP_OPTION,
		{ 0 }
	};
	const char *path = NETLAT_DEVICE_PATH;
	struct netlat_probes pr;
	uint64_t enable = 0;
	bool set = false, all = false, hooks = false;
	int c, fd, r;

	while ((c = next_option(argc, argv, "e:HD:h", opts)) != -1) {
		switch (c) {
		case 'H':
			hooks = true;
			break;
		case 'e':
			if (netlat_parse_probes(optarg, &enable))
				return usage_error("bad probe groups '%s'", optarg);
			all = netlat_probes_spec_all(optarg);
			set = true;
			break;
		default:
			r = device_option(c, argv, &path);
			if (r >= 0)
				return r;
		}
	}
	r = device_args_done(argc, path, &fd);
	if (r >= 0)
		return r;
	/* "all": what this kernel has, and the groups waiting for a module */
	r = all ? netlat_probes(fd, false, 0, &pr) : 0;
	if (!r && all)
		enable &= pr.available | pr.deferred;
	if (!r)
		r = netlat_probes(fd, set, enable, &pr);
	if (r < 0) {
		close(fd);
		return ioctl_failed(path, "PROBES", -r);
	}
	if (hooks) {
		r = hooks_print(fd, path);
		close(fd);
		return r;
	}
	close(fd);
	print_probe_mask("available", pr.available);
	print_probe_mask("partial", pr.partial);
	print_probe_mask("enabled", pr.enabled);
	print_probe_mask("deferred", pr.deferred);
	print_probe_mask("waiting", pr.enabled & pr.deferred);
	printf("%-10s %llu\n", "nmissed", (unsigned long long)pr.nmissed);
	print_group_missed(&pr);
	return 0;
}
