// SPDX-License-Identifier: GPL-2.0
/*
 * netlat's configuration under memory pressure. The lane's debug kernel
 * has failslab and fail_page_alloc (other kernels skip): a few percent of
 * this thread's slab and page allocations fail, the kernel's own inside
 * the ioctl included, while it changes netlat's configuration a thousand
 * times (rings, keys, filter rules; between them, without failures, the
 * level and the probe groups, whose hooks are checked after each change
 * against the device's report and, every 50 changes, against the
 * kernel's kprobe list and ftrace's enabled functions).
 * Each change either succeeds, with exactly what it asked for, or fails
 * with -ENOMEM and leaves everything as it was. Traffic between two
 * namespaces runs between changes, its bytes counted by the receiver. The
 * lane then checks the kernel log (no WARN), kmemleak and the unload.
 */
#include "netlat_util.h"
#include "netlat_tcp.h"
#include "netlat_filter.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define ADDR_A	"192.0.2.1"
#define ADDR_B	"192.0.2.2"
#define DBG	"/sys/kernel/debug"
#define CHANGES	1000
#define PERCENT	"5"
#define TRAFFIC_EVERY	50
#define GROUPS_BASE (NETLAT_PROBE_TCP_SENDMSG | NETLAT_PROBE_TCP_XMIT | \
		     NETLAT_PROBE_TCP_ACK | NETLAT_PROBE_TCP_DEV)
#define GROUPS_FLIP (NETLAT_PROBE_TCP_RETRANS | NETLAT_PROBE_RX)

static int g_ns_a = -1, g_ns_b = -1;
static char g_skip[128];
static struct netlat_info g_def;

static void __attribute__((constructor)) fault_topology(void)
{
	if (!nl_device_info(&g_def, g_skip, sizeof(g_skip)))
		nl_pair_ns(&g_ns_a, "nfa0", ADDR_A, &g_ns_b, "nfb0", ADDR_B,
			   g_skip, sizeof(g_skip));
}

/*
 * This thread's make-it-fail, open all along: opening it again while
 * allocations fail may fail and leave them failing.
 */
static int g_fail_fd = -1;

static int fail_allocations(bool on)
{
	return pwrite(g_fail_fd, on ? "1" : "0", 1, 0) == 1 ? 0 : -errno;
}

/*
 * The fault attributes, failing PERCENT of what this task allocates; off,
 * each knob is as it was, for the tests after (fail-nth counts every
 * allocation the attributes do not ignore).
 */
static const char *const g_attrs[] = { "failslab", "fail_page_alloc" };
static const char *const g_knobs[][3] = {
	{ "interval", "1" }, { "times", "-1" }, { "space", "0" },
	/* a stack dump per failure would read as trouble */
	{ "verbose", "0" }, { "task-filter", "Y" },
	/* GFP_KERNEL too, not only atomic allocations */
	{ "ignore-gfp-wait", "N" },
	/* vmalloc's pages are __GFP_HIGHMEM */
	{ "ignore-gfp-highmem", "N", "fail_page_alloc" },
	/* the lane leaves both off for fail-nth's sake (init.sh) */
	{ "cache-filter", "N", "failslab" },
	{ "min-order", "1", "fail_page_alloc" },
	{ "probability", PERCENT },
};
static char g_saved[NL_ARRAY_SIZE(g_attrs)][NL_ARRAY_SIZE(g_knobs)][32];

static int faults_arm(bool on)
{
	char path[128];
	unsigned int i, k;
	int ret;

	for (i = 0; i < NL_ARRAY_SIZE(g_attrs); i++) {
		for (k = 0; on && k < NL_ARRAY_SIZE(g_knobs); k++) {
			if (g_knobs[k][2] && strcmp(g_knobs[k][2], g_attrs[i]))
				continue;
			snprintf(path, sizeof(path), DBG "/%s/%s", g_attrs[i],
				 g_knobs[k][0]);
			ret = nl_get_str(path, g_saved[i][k], sizeof(g_saved[i][k]));
			if (ret <= 0)
				return ret ?: -EIO;
			g_saved[i][k][strcspn(g_saved[i][k], "\n")] = 0;
		}
		/* the probability last on, first off */
		for (k = 0; k < NL_ARRAY_SIZE(g_knobs); k++) {
			unsigned int j = on ? k : NL_ARRAY_SIZE(g_knobs) - 1 - k;

			if (!g_saved[i][j][0])
				continue;	/* not this attribute's, or never armed */
			snprintf(path, sizeof(path), DBG "/%s/%s", g_attrs[i],
				 g_knobs[j][0]);
			ret = nl_put_str(path, on ? g_knobs[j][1] : g_saved[i][j], 0);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* What a change may touch, read back from the device. */
struct state {
	struct netlat_info info;
	uint64_t enabled;
	uint32_t key_by;
	uint32_t nr_rules;
	struct netlat_filter_rule rules[2];
};

static int read_state(int fd, struct state *s)
{
	struct netlat_probes pr = { 0 };
	struct netlat_hist h = { 0 };
	int ret;

	memset(s, 0, sizeof(*s));
	ret = nl_get_info(fd, &s->info);
	if (!ret)
		ret = nl_probes(fd, false, 0, &pr);
	if (!ret)
		ret = nl_get_hist(fd, &h, NULL);
	if (!ret)
		ret = nl_filters(fd, 0, s->rules, NL_ARRAY_SIZE(s->rules),
				 sizeof(s->rules[0]), &s->nr_rules);
	s->enabled = pr.enabled;
	s->key_by = h.key_by;
	return ret;
}

/* Every field a change may touch, equal; the first that is not named. */
static const char *state_diff(const struct state *a, const struct state *b)
{
	if (a->info.ring_bytes != b->info.ring_bytes)
		return "ring_bytes";
	if (a->info.watermark != b->info.watermark)
		return "watermark";
	if (a->info.flush_ms != b->info.flush_ms)
		return "flush_ms";
	if (a->info.mode != b->info.mode)
		return "mode";
	if (a->info.level != b->info.level)
		return "level";
	if (a->info.slow_ns != b->info.slow_ns)
		return "slow_ns";
	if (a->info.table_bytes != b->info.table_bytes)
		return "table_bytes";
	if (a->info.sample != b->info.sample)
		return "sample";
	if (a->enabled != b->enabled)
		return "probe groups";
	if (a->key_by != b->key_by)
		return "key_by";
	if (a->nr_rules != b->nr_rules ||
	    memcmp(a->rules, b->rules, a->nr_rules * sizeof(a->rules[0])))
		return "filter rules";
	return NULL;
}

/*
 * Every hook armed exactly when its group is on at this level, as the
 * device reports it and, with @lists, as the kernel's kprobe list and
 * ftrace's enabled functions say (nl_hook_listed_armed()): a change that
 * failed to arm a hook must not have claimed success. The first hook
 * that is not, into @bad.
 */
#define MAX_HOOKS 128
static unsigned int g_listed;	/* hooks checked against the kernel's lists */
static int hooks_as_configured(int fd, const struct state *s, bool lists,
			       char *bad, size_t len)
{
	static struct netlat_hook h[MAX_HOOKS];
	struct netlat_hooks a = {
		.nr = MAX_HOOKS, .entry_size = sizeof(h[0]),
		.entries = (uintptr_t)h,
	};
	bool want, armed;
	unsigned int i;
	int ret, listed;

	bad[0] = 0;
	ret = nl_ioctl(fd, NETLAT_IOC_HOOKS, &a, sizeof(a));
	if (ret)
		return ret;
	if (a.nr > MAX_HOOKS)
		return -E2BIG;
	for (i = 0; i < a.nr; i++) {
		if (h[i].mechanism == NETLAT_HOOK_ABSENT ||
		    h[i].mechanism == NETLAT_HOOK_DEFERRED)
			continue;
		want = (h[i].group & s->enabled) &&
		       (!h[i].levels || (h[i].levels & (1u << s->info.level)));
		armed = h[i].flags & NETLAT_HOOK_ARMED;
		if (want != armed) {
			snprintf(bad, len, "%.64s is %s", h[i].name,
				 armed ? "armed" : "not armed");
			return 0;
		}
		listed = lists ? nl_hook_listed_armed(&h[i], true) : -2;
		g_listed += listed != -2;
		if (listed != -2 && want != (listed == 1)) {
			snprintf(bad, len, "%.64s should be %s: the kernel's lists say %d",
				 h[i].name, want ? "armed" : "not armed", listed);
			return 0;
		}
	}
	return 0;
}

enum change { CH_CONFIG, CH_LEVEL, CH_KEYS, CH_FILTER, CH_PROBES, CH_NR };
static const char *const g_change_name[CH_NR] = {
	"config", "level", "keys", "filter", "probes",
};

/*
 * Change number @i, of kind i % CH_NR, with this task's allocations
 * failing: 0 or -errno. *@want is @cur as the change, if it succeeds,
 * leaves it.
 */
static int change(int fd, unsigned int i, const struct state *cur,
		  struct state *want, uint64_t groups_flip)
{
	struct netlat_config cfg = { 0 };
	struct netlat_filter_rule rule = {
		.groups = NETLAT_PROBE_ALL, .match = NETLAT_MATCH_PORT,
		.port = 9 + i % 7,
	};
	uint64_t enable;
	int ret;

	*want = *cur;
	/*
	 * Not while probes go on or off: the kernel's own kprobe code WARNs
	 * when disarming a kprobe-ftrace runs out of memory (its filter hash
	 * is allocated), whoever asked.
	 */
	ret = fail_allocations(i % CH_NR != CH_LEVEL && i % CH_NR != CH_PROBES);
	if (ret)
		return ret;
	switch (i % CH_NR) {
	case CH_CONFIG:
		/* the rings change only while stopped (outside the faults) */
		cfg.flags = NETLAT_CONFIG_RING_BYTES | NETLAT_CONFIG_WATERMARK |
			    NETLAT_CONFIG_FLUSH_MS | NETLAT_CONFIG_TABLE_BYTES |
			    NETLAT_CONFIG_SAMPLE;
		cfg.ring_bytes = cur->info.ring_bytes == g_def.ring_bytes ?
				 g_def.ring_bytes * 2 : g_def.ring_bytes;
		cfg.watermark = cur->info.watermark == g_def.watermark ?
				4096 : g_def.watermark;
		cfg.flush_ms = cur->info.flush_ms == g_def.flush_ms ?
			       g_def.flush_ms + 1 : g_def.flush_ms;
		cfg.table_bytes = cur->info.table_bytes ==
				  NETLAT_TABLE_BYTES_DEFAULT ?
				  NETLAT_TABLE_BYTES_DEFAULT / 2 :
				  NETLAT_TABLE_BYTES_DEFAULT;
		cfg.sample = cur->info.sample ? 0 : 16;
		want->info.ring_bytes = cfg.ring_bytes;
		want->info.watermark = cfg.watermark;
		want->info.flush_ms = cfg.flush_ms;
		want->info.table_bytes = cfg.table_bytes;
		want->info.sample = cfg.sample;
		ret = nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
		break;
	case CH_LEVEL:
		want->info.level = cur->info.level == NETLAT_LEVEL_PACKETS ?
				   NETLAT_LEVEL_EVENTS : NETLAT_LEVEL_PACKETS;
		ret = nl_set_level(fd, want->info.level, cur->info.slow_ns);
		break;
	case CH_KEYS:
		cfg.flags = NETLAT_CONFIG_KEYS;
		cfg.key_by = cur->key_by ? 0 : NETLAT_KEY_PORT;
		cfg.max_keys = cfg.key_by ? 8 : 0;
		want->key_by = cfg.key_by;
		ret = nl_ioctl(fd, NETLAT_IOC_SET_CONFIG, &cfg, sizeof(cfg));
		break;
	case CH_FILTER:
		want->nr_rules = cur->nr_rules ? 0 : 1;
		want->rules[0] = want->nr_rules ? rule : cur->rules[0];
		ret = nl_set_rules(fd, &rule, want->nr_rules);
		break;
	case CH_PROBES:
		enable = cur->enabled ^ groups_flip;
		want->enabled = enable;
		ret = nl_probes(fd, true, enable, NULL);
		break;
	}
	return fail_allocations(false) ?: ret;
}

/* 64 KiB from A to B: 0 if the receiver read every byte. */
static int traffic(void)
{
	static char buf[64 << 10];
	struct nl_conn c = { .cli = -1, .srv = -1 };
	int ret = -EIO;

	memset(buf, 0x5a, sizeof(buf));
	if (!nl_conn_open(&c, g_ns_a, g_ns_b, ADDR_B, 0) &&
	    !nl_send_all(c.cli, buf, sizeof(buf)) && nl_conn_finish(&c, 60) &&
	    c.rx_bytes == sizeof(buf))
		ret = 0;
	nl_conn_close(&c);
	return ret;
}

FIXTURE(fault) {
	int fd;
};

FIXTURE_SETUP(fault)
{
	self->fd = -1;
	if (g_skip[0])
		SKIP(longjmp(_metadata->env, 1), "%s", g_skip);
	if (access(DBG "/failslab/probability", W_OK) ||
	    access(DBG "/fail_page_alloc/probability", W_OK) ||
	    access("/proc/thread-self/make-it-fail", W_OK))
		SKIP(longjmp(_metadata->env, 1),
		     "no failslab or fail_page_alloc (the lane's debug kernel has them)");
	g_fail_fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, g_fail_fd);
	self->fd = nl_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(fault)
{
	struct netlat_config keys_off = { .flags = NETLAT_CONFIG_KEYS };

	if (self->fd < 0)
		return;
	fail_allocations(false);
	faults_arm(false);
	EXPECT_EQ(0, nl_ioctl(self->fd, NETLAT_IOC_SET_CONFIG, &keys_off,
			      sizeof(keys_off)));
	EXPECT_EQ(0, nl_set_rules(self->fd, NULL, 0));
	EXPECT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_EVENTS, 0));
	EXPECT_EQ(0, nl_set_sample(self->fd, 0));
	EXPECT_EQ(0, nl_set_table_bytes(self->fd, NETLAT_TABLE_BYTES_DEFAULT));
	EXPECT_EQ(0, nl_filters_done(self->fd, &g_def));
	close(self->fd);
	close(g_fail_fd);
}

TEST_F_TIMEOUT(fault, thousand_changes_under_failing_allocations, 1800)
{
	unsigned int i, ok[CH_NR] = { 0 }, failed[CH_NR] = { 0 }, k;
	struct netlat_probes pr;
	struct state cur, want, now;
	uint64_t flip;
	const char *diff;
	char bad[128];
	int ret;

	ASSERT_EQ(0, nl_probes(self->fd, false, 0, &pr));
	if ((pr.available & GROUPS_BASE) != GROUPS_BASE)
		SKIP(return, "the TCP send groups are not all available");
	flip = GROUPS_FLIP & pr.available;
	ASSERT_NE(0ull, flip);
	ASSERT_EQ(0, nl_probes(self->fd, true, GROUPS_BASE, NULL));
	ASSERT_EQ(0, nl_set_level(self->fd, NETLAT_LEVEL_PACKETS, 0));
	ASSERT_EQ(0, traffic());
	ASSERT_EQ(0, faults_arm(true));
	ASSERT_EQ(0, read_state(self->fd, &cur));
	for (i = 0; i < CHANGES; i++) {
		k = i % CH_NR;
		if (k == CH_CONFIG)
			ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_STOP));
		ret = change(self->fd, i, &cur, &want, flip);
		if (k == CH_CONFIG)
			ASSERT_EQ(0, nl_control(self->fd, NETLAT_IOC_START));
		ASSERT_EQ(0, read_state(self->fd, &now));
		if (ret) {
			failed[k]++;
			ASSERT_EQ(-ENOMEM, ret)
				TH_LOG("change %u (%s): %s", i, g_change_name[k],
				       strerror(-ret));
			diff = state_diff(&cur, &now);
			ASSERT_EQ(NULL, diff)
				TH_LOG("change %u (%s) failed, yet its %s changed",
				       i, g_change_name[k], diff);
		} else {
			ok[k]++;
			diff = state_diff(&want, &now);
			ASSERT_EQ(NULL, diff)
				TH_LOG("change %u (%s) succeeded, yet its %s is not what it asked",
				       i, g_change_name[k], diff);
		}
		/* the kernel's own lists too, every TRAFFIC_EVERY changes */
		ASSERT_EQ(0, hooks_as_configured(self->fd, &now,
						 i % TRAFFIC_EVERY == 0, bad,
						 sizeof(bad)));
		ASSERT_EQ(0, bad[0]) TH_LOG("change %u (%s): %s", i,
					    g_change_name[k], bad);
		cur = now;
		if (i % TRAFFIC_EVERY == TRAFFIC_EVERY - 1)
			ASSERT_EQ(0, traffic()) TH_LOG("after change %u", i);
	}
	ASSERT_EQ(0, faults_arm(false));
	for (k = 0; k < CH_NR; k++) {
		TH_LOG("%s: %u succeeded, %u failed cleanly", g_change_name[k],
		       ok[k], failed[k]);
		/* both outcomes seen, or the test did not test */
		EXPECT_LT(0u, ok[k]);
	}
	EXPECT_LT(0u, failed[CH_CONFIG] + failed[CH_KEYS] + failed[CH_FILTER]);
	TH_LOG("%u hooks checked against the kernel's lists", g_listed);
	EXPECT_LT(0u, g_listed);
	ASSERT_EQ(0, traffic());
}

TEST_HARNESS_MAIN
