// SPDX-License-Identifier: GPL-2.0
/*
 * insn_report: make bench's instruction figures, from the counts of
 * insn_plugin.c and the labels the guest printed (selftests/netlat_insn.h).
 *
 * For each series (gso, virtio, 1seg, rx tcp, rx udp) and mode (unloaded,
 * idle, events, filtered, flight, packets, slow, keptout, sampled (the
 * packet level with netlat_config.sample 16), bpftrace, and
 * base-* for NETLAT_BENCH_BASE's module):
 *  - guest kernel and user instructions per data segment, the median over
 *    the rounds and their range;
 *  - what the mode adds per segment against the module unloaded in the
 *    same round (each round pairs them), median and range, also as a
 *    percentage of the unloaded figure; the packet level's, the hooks'
 *    (keptout) and the sampled packet level's against their budgets
 *    (sampled: 3%, 1% in the server series);
 *  - where the added instructions go: netlat.ko, the probe mechanism
 *    (kprobe, ftrace, kretprobe return, tracepoint iterators, trampolines
 *    and BPF programs), the rest of the kernel; the kernel functions that
 *    grew most;
 *  - per hook: hits per segment (calls of its netlat handler, counted by
 *    the plugin) and the handler's own instructions per hit, the
 *    mechanism's per hit by kind, netlat's shared code per hit; the kind
 *    shown is the mechanism the kernel gave the hook where the console
 *    has the bench's "bench: hooks" lines (NETLAT_IOC_HOOKS), else the
 *    probe table's.
 * The split is by function, not by call graph: a helper shared by hooks
 * (the ring, the table) is reported once, not charged to a hook.
 *
 * usage: insn_report -c console.log -p plugin.out [-H hooks.txt]
 *                    [-o file=objdump-t.txt ...] [-b budget%] [-B hooks-budget%]
 *                    [-t rows]
 *   hooks.txt: "kind hook handler" lines (kind: kprobe, kretprobe,
 *   kretprobe-ret, tracepoint); objdump-t.txt: `objdump -t` of the module
 *   the guest named <file> (NETLAT-INSN-MOD lines).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUNDS	16
#define MAX_WINDOWS	20000

static void __attribute__((noreturn)) die(const char *msg, const char *arg)
{
	fprintf(stderr, "insn_report: %s%s%s\n", msg, arg ? ": " : "",
		arg ? arg : "");
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory", NULL);
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory", NULL);
	return p;
}

/* ---- names: every function (or address class) gets a dense id ---- */

enum cls {
	C_REST,		/* the rest of the kernel */
	C_NETLAT,	/* netlat.ko */
	C_KPROBE,	/* kprobe entry: int3 or ftrace handler, aggregation */
	C_FTRACE,	/* ftrace's own functions */
	C_TRAMP,	/* module area, no module: ftrace/kprobe trampolines, BPF JIT */
	C_KRETPROBE,	/* kretprobe/rethook: entry bookkeeping and return */
	C_TRACEPOINT,	/* tracepoint iterators */
	C_BPF,		/* BPF runtime: bpf_*, maps */
	NR_CLS
};

static const char *const cls_names[NR_CLS] = {
	"rest of the kernel", "netlat.ko", "kprobe", "ftrace",
	"trampolines/BPF JIT", "kretprobe return", "tracepoint iterators",
	"BPF runtime",
};

struct name {
	char *s;
	enum cls cls;
	int hook;		/* index in hooks[], or -1 */
};

static struct name *names;
static size_t nr_names, cap_names;
static size_t *name_tab, name_tab_cap;

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static enum cls classify(const char *s);

static int hook_of(const char *s);

static size_t name_id(const char *s)
{
	size_t i;

	if (2 * (nr_names + 1) > name_tab_cap) {
		size_t ncap = name_tab_cap ? 2 * name_tab_cap : 1 << 16, j, k;
		size_t *nt = xcalloc(ncap, sizeof(*nt));

		for (j = 0; j < name_tab_cap; j++) {
			if (!name_tab[j])
				continue;
			for (k = str_hash(names[name_tab[j] - 1].s) & (ncap - 1);
			     nt[k]; k = (k + 1) & (ncap - 1))
				;
			nt[k] = name_tab[j];
		}
		free(name_tab);
		name_tab = nt;
		name_tab_cap = ncap;
	}
	for (i = str_hash(s) & (name_tab_cap - 1); name_tab[i];
	     i = (i + 1) & (name_tab_cap - 1))
		if (!strcmp(names[name_tab[i] - 1].s, s))
			return name_tab[i] - 1;
	if (nr_names == cap_names) {
		cap_names = cap_names ? 2 * cap_names : 4096;
		names = realloc(names, cap_names * sizeof(*names));
		if (!names)
			die("out of memory", NULL);
	}
	names[nr_names].s = xstrdup(s);
	names[nr_names].cls = classify(s);
	names[nr_names].hook = hook_of(s);
	name_tab[i] = ++nr_names;
	return nr_names - 1;
}

/* The probe mechanism's functions in the kernel image, by name. */
static const struct {
	enum cls cls;
	const char *re;
} mech_res[] = {
	{ C_KRETPROBE, "^(rethook_|arch_rethook_|__rethook|kretprobe_|__kretprobe|"
		       "pre_handler_kretprobe|objpool_|freelist_)" },
	{ C_KPROBE, "^(kprobe_|kprobes_|__kprobe|get_kprobe|aggr_|opt_pre_handler|"
		    "optimized_callback|setup_singlestep|skip_singlestep|exc_int3|"
		    "asm_exc_int3|do_int3|poke_int3_handler|within_kprobe|"
		    "arch_within_kprobe|is_kprobe)" },
	{ C_FTRACE, "^(ftrace_|__ftrace_|arch_ftrace_|return_to_handler|"
		    "fprobe_|__fprobe|fgraph_|function_graph_|prepare_ftrace_return)" },
	{ C_TRACEPOINT, "^(__traceiter_|__probestub_|tp_stub_func)" },
	{ C_BPF, "^(bpf_|__bpf_|trace_call_bpf|htab_|__htab_|pcpu_freelist|"
		 "array_map_|percpu_array_|lookup_elem_raw|lookup_nulls_elem_raw|"
		 "alloc_htab_elem|free_htab_elem)" },
};
static regex_t mech_re[sizeof(mech_res) / sizeof(mech_res[0])];

static enum cls classify(const char *s)
{
	size_t i;

	if (!strncmp(s, "netlat:", 7))
		return C_NETLAT;
	if (!strcmp(s, "[trampoline/JIT]"))
		return C_TRAMP;
	if (strchr(s, ':') || s[0] == '[')
		return C_REST;
	for (i = 0; i < sizeof(mech_res) / sizeof(mech_res[0]); i++)
		if (!regexec(&mech_re[i], s, 0, NULL, 0))
			return mech_res[i].cls;
	return C_REST;
}

/* ---- hooks: netlat's handlers, from the module's probe tables ---- */

enum hook_kind { H_KPROBE, H_KRETPROBE, H_KRETPROBE_RET, H_TRACEPOINT, NR_HK };
static const char *const hk_names[NR_HK] = {
	"kprobe", "kretprobe", "kretprobe-ret", "tracepoint",
};

struct hook {
	enum hook_kind kind;
	char *hook, *handler;	/* handler: "netlat:<fn>" */
};
static struct hook hooks[256];
static unsigned int nr_hooks;

/*
 * The mechanism the kernel gave each hook, from the console's "bench:
 * hooks <kernel>: <hook> <groups> <mechanism> ..." lines (NETLAT_IOC_HOOKS):
 * the per-hook table shows it instead of the table's kind.
 */
struct hook_path {
	char *hook, *mech;
};
static struct hook_path paths[256];
static unsigned int nr_paths;

/* Does mechanism @mech serve a handler of kind @k? */
static bool path_serves(const char *mech, enum hook_kind k)
{
	static const char *const entry[] = { "ftrace", "kprobe-ftrace", "kprobe" };
	static const char *const ret[] = { "fprobe", "wrapped", "kretprobe" };
	const char *const *set = k == H_KPROBE ? entry :
				 k == H_TRACEPOINT ? NULL : ret;
	unsigned int i;

	if (!set)
		return !strcmp(mech, "tracepoint");
	for (i = 0; i < 3; i++)
		if (!strcmp(mech, set[i]))
			return true;
	return false;
}

/*
 * The mechanism of @hook for a handler of kind @k:
 * a function can have an entry hook at one level and a return probe at
 * another (tcp_sendmsg_locked).
 */
static const char *path_of(const char *hook, enum hook_kind k)
{
	unsigned int i;

	for (i = 0; i < nr_paths; i++)
		if (!strcmp(paths[i].hook, hook) &&
		    path_serves(paths[i].mech, k))
			return paths[i].mech;
	return NULL;
}

static void path_add(const char *line)
{
	char hook[200], groups[64], mech[32];
	const char *p = strstr(line, "bench: hooks ");

	/* past "bench: hooks <kernel>" */
	p = p ? strstr(p + strlen("bench: hooks "), ": ") : NULL;
	if (!p || nr_paths >= 256 ||
	    sscanf(p + 2, "%199s %63s %31s", hook, groups, mech) != 3 ||
	    !strcmp(hook, "hook"))
		return;
	paths[nr_paths].hook = xstrdup(hook);
	paths[nr_paths].mech = xstrdup(mech);
	nr_paths++;
}

static int hook_of(const char *s)
{
	unsigned int i;

	for (i = 0; i < nr_hooks; i++)
		if (!strcmp(hooks[i].handler, s))
			return (int)i;
	return -1;
}

static void hooks_load(const char *path)
{
	char line[512], kind[32], hook[200], fn[200];
	FILE *f = fopen(path, "r");
	unsigned int k;

	if (!f)
		die("cannot open", path);
	while (fgets(line, sizeof(line), f) && nr_hooks < 256) {
		if (sscanf(line, "%31s %199s %199s", kind, hook, fn) != 3)
			continue;
		for (k = 0; k < NR_HK && strcmp(hk_names[k], kind); k++)
			;
		if (k == NR_HK)
			continue;
		snprintf(line, sizeof(line), "netlat:%s", fn);
		if (hook_of(line) >= 0)
			continue;	/* one handler, one hook row */
		hooks[nr_hooks].kind = k;
		hooks[nr_hooks].hook = xstrdup(hook);
		hooks[nr_hooks].handler = xstrdup(line);
		nr_hooks++;
	}
	fclose(f);
}

/* ---- modules: the functions of each .ko, placed where the guest said ---- */

struct ksym {
	char *sec;
	uint64_t off, size;
	char *name;
};
struct kofile {
	char *file;
	struct ksym *syms;
	size_t n;
};
static struct kofile kofiles[64];
static unsigned int nr_kofiles;

static void kofile_load(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char line[1024], sec[128], name[512];
	unsigned long long off, size;
	struct kofile *k;
	size_t cap = 0;
	FILE *f;

	if (!eq || nr_kofiles == 64)
		die("bad -o", arg);
	k = &kofiles[nr_kofiles++];
	k->file = xstrdup(arg);
	k->file[eq - arg] = 0;
	f = fopen(eq + 1, "r");
	if (!f)
		die("cannot open", eq + 1);
	/* objdump -t: "0000000000000120 l     F .text	00000000000000a3 name" */
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 17;

		if (strlen(line) < 26 || sscanf(line, "%llx", &off) != 1)
			continue;
		if (p[6] != 'F')
			continue;
		if (sscanf(p + 8, "%127s %llx %511s", sec, &size, name) != 3)
			continue;
		if (k->n == cap) {
			cap = cap ? 2 * cap : 256;
			k->syms = realloc(k->syms, cap * sizeof(*k->syms));
			if (!k->syms)
				die("out of memory", NULL);
		}
		k->syms[k->n].sec = xstrdup(sec);
		k->syms[k->n].off = off;
		k->syms[k->n].size = size;
		k->syms[k->n].name = xstrdup(name);
		k->n++;
	}
	fclose(f);
}

static struct kofile *kofile_find(const char *file)
{
	unsigned int i;

	for (i = 0; i < nr_kofiles; i++)
		if (!strcmp(kofiles[i].file, file))
			return &kofiles[i];
	return NULL;
}

/* A module section placed by a load the guest printed. */
struct placed {
	unsigned int from_w;	/* valid from this window on */
	char *mod, *file, *sec;
	uint64_t addr, end;	/* end: past its last function, if known */
	struct kofile *ko;
};
static struct placed placed[4096];
static unsigned int nr_placed;

/* x86-64's module area (MODULES_VADDR..MODULES_END) */
#define MODULES_START	0xffffffffa0000000ULL
#define MODULES_END	0xffffffffff000000ULL

static void place(unsigned int w, const char *mod, const char *file,
		  const char *sec, uint64_t addr)
{
	struct placed *p;
	size_t i;

	if (nr_placed == 4096)
		die("too many module sections", NULL);
	p = &placed[nr_placed++];
	p->from_w = w;
	p->mod = xstrdup(mod);
	p->file = xstrdup(file);
	p->sec = xstrdup(sec);
	p->addr = addr;
	p->ko = kofile_find(file);
	p->end = addr;
	for (i = 0; p->ko && i < p->ko->n; i++)
		if (!strcmp(p->ko->syms[i].sec, sec) &&
		    addr + p->ko->syms[i].off + p->ko->syms[i].size > p->end)
			p->end = addr + p->ko->syms[i].off + p->ko->syms[i].size;
}

/* The kernel image's functions, from the guest's kallsyms (NETLAT-KSYM). */
static struct {
	uint64_t *addr;
	size_t *id;
	size_t n, cap;
	uint64_t end;	/* _etext */
} ksyms;

static void ksym_add(uint64_t a, const char *name)
{
	if (!strcmp(name, "_etext"))
		ksyms.end = a;
	if (ksyms.n == ksyms.cap) {
		ksyms.cap = ksyms.cap ? 2 * ksyms.cap : 1 << 16;
		ksyms.addr = realloc(ksyms.addr, ksyms.cap * sizeof(*ksyms.addr));
		ksyms.id = realloc(ksyms.id, ksyms.cap * sizeof(*ksyms.id));
		if (!ksyms.addr || !ksyms.id)
			die("out of memory", NULL);
	}
	if (ksyms.n && a < ksyms.addr[ksyms.n - 1])
		die("kallsyms not sorted by address", name);
	ksyms.addr[ksyms.n] = a;
	ksyms.id[ksyms.n] = name_id(name);
	ksyms.n++;
}

/* The image function holding @a, or -1. */
static long ksym_find(uint64_t a)
{
	size_t lo = 0, hi = ksyms.n;

	if (!ksyms.n || a < ksyms.addr[0] || a >= ksyms.end)
		return -1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms.addr[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo;
}

/*
 * The name of kernel address @a in window @w; *@start: @a is the
 * function's first byte (a block there counts its calls).
 */
static size_t addr_name(unsigned int w, uint64_t a, bool *start)
{
	char buf[700];
	long ks = ksym_find(a);
	int i;
	size_t j;

	*start = false;
	if (ks >= 0) {
		*start = ksyms.addr[ks] == a;
		return ksyms.id[ks];
	}

	/* the newest placement of each module section that covers @a */
	for (i = (int)nr_placed - 1; i >= 0; i--) {
		struct placed *p = &placed[i];
		bool newer = false;
		int k;

		if (p->from_w > w || a < p->addr || a >= p->end)
			continue;
		for (k = i + 1; k < (int)nr_placed; k++)
			if (placed[k].from_w <= w &&
			    !strcmp(placed[k].mod, p->mod) &&
			    !strcmp(placed[k].sec, p->sec))
				newer = true;
		if (newer)
			continue;
		for (j = 0; j < p->ko->n; j++) {
			struct ksym *s = &p->ko->syms[j];

			if (!strcmp(s->sec, p->sec) && a >= p->addr + s->off &&
			    a < p->addr + s->off + s->size) {
				*start = a == p->addr + s->off;
				snprintf(buf, sizeof(buf), "%s:%s", p->mod, s->name);
				return name_id(buf);
			}
		}
		snprintf(buf, sizeof(buf), "%s:?", p->mod);
		return name_id(buf);
	}
	if (a >= MODULES_START && a < MODULES_END) {
		*start = true;	/* a trampoline's calls: its entries */
		return name_id("[trampoline/JIT]");
	}
	return name_id("[kernel, outside the image]");
}

/* ---- windows and what each was ---- */

struct label {
	char *series, *mode;
	unsigned int round;
	uint64_t segs;
	double mbps;
};
static struct label *labels;	/* by window number */

/* A series and mode over its rounds. */
struct group {
	char *series, *mode;
	unsigned int n;			/* rounds seen */
	uint64_t segs[MAX_ROUNDS], kernel[MAX_ROUNDS], user[MAX_ROUNDS];
	uint64_t cls[MAX_ROUNDS][NR_CLS];
	double mbps[MAX_ROUNDS];
	unsigned int round[MAX_ROUNDS];
	/* over every round: each name's instructions and calls */
	uint64_t *insns, *calls;
	size_t cap;
	uint64_t all_segs;
};
static struct group groups[256];
static unsigned int nr_groups;

static struct group *group_of(const char *series, const char *mode)
{
	unsigned int i;

	for (i = 0; i < nr_groups; i++)
		if (!strcmp(groups[i].series, series) &&
		    !strcmp(groups[i].mode, mode))
			return &groups[i];
	if (nr_groups == 256)
		die("too many series and modes", NULL);
	groups[nr_groups].series = xstrdup(series);
	groups[nr_groups].mode = xstrdup(mode);
	return &groups[nr_groups++];
}

static void group_add_name(struct group *g, size_t id, uint64_t insns,
			   uint64_t calls)
{
	if (id >= g->cap) {
		size_t ncap = g->cap ? g->cap : 1024;

		while (ncap <= id)
			ncap *= 2;
		g->insns = realloc(g->insns, ncap * sizeof(*g->insns));
		g->calls = realloc(g->calls, ncap * sizeof(*g->calls));
		if (!g->insns || !g->calls)
			die("out of memory", NULL);
		memset(g->insns + g->cap, 0, (ncap - g->cap) * sizeof(*g->insns));
		memset(g->calls + g->cap, 0, (ncap - g->cap) * sizeof(*g->calls));
		g->cap = ncap;
	}
	g->insns[id] += insns;
	g->calls[id] += calls;
}

static uint64_t g_insns(const struct group *g, size_t id)
{
	return id < g->cap ? g->insns[id] : 0;
}

static uint64_t g_calls(const struct group *g, size_t id)
{
	return id < g->cap ? g->calls[id] : 0;
}

/* "NETLAT-INSN w=.. series=.. mode=.. round=.. segs=.. mbps=.." and -MOD */
static void console_load(const char *path)
{
	char line[2048], series[64], mode[64], mod[128], file[512], sec[128];
	unsigned long long segs, addr;
	unsigned int w, round;
	double mbps;
	FILE *f = fopen(path, "r");
	char *p, *s, *m;

	if (!f)
		die("cannot open", path);
	labels = xcalloc(MAX_WINDOWS + 1, sizeof(*labels));
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "bench: hooks ")) {
			path_add(line);
			continue;
		}
		if ((p = strstr(line, "NETLAT-KSYM "))) {
			if (sscanf(p, "NETLAT-KSYM %llx %511s", &addr, file) == 2)
				ksym_add(addr, file);
			continue;
		}
		if ((p = strstr(line, "NETLAT-INSN-MOD "))) {
			if (sscanf(p, "NETLAT-INSN-MOD w=%u %127s %511s %127s %llx",
				   &w, mod, file, sec, &addr) == 5)
				place(w, mod, file, sec, addr);
			continue;
		}
		p = strstr(line, "NETLAT-INSN ");
		/* a series' name may hold a space ("rx tcp"): up to " mode=" */
		s = p ? strstr(p, " series=") : NULL;
		m = s ? strstr(s, " mode=") : NULL;
		if (!m || sscanf(p, "NETLAT-INSN w=%u", &w) != 1 || !w ||
		    w > MAX_WINDOWS ||
		    sscanf(m, " mode=%63s round=%u segs=%llu mbps=%lf", mode,
			   &round, &segs, &mbps) != 4)
			continue;
		snprintf(series, sizeof(series), "%.*s", (int)(m - s - 8), s + 8);
		labels[w].series = xstrdup(series);
		labels[w].mode = xstrdup(mode);
		labels[w].round = round;
		labels[w].segs = segs;
		labels[w].mbps = mbps;
	}
	fclose(f);
}

/* Window @w of the plugin's output, into its group if it was labelled. */
static void plugin_load(const char *path)
{
	char line[1024];
	unsigned long long a, b, c;
	struct group *g = NULL;
	bool start;
	unsigned int w = 0, r = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot open", path);
	while (fgets(line, sizeof(line), f)) {
		size_t id;

		if (line[0] == 'W') {
			g = NULL;
			if (sscanf(line, "W %u %llu %llu", &w, &a, &b) != 3 ||
			    w > MAX_WINDOWS || !labels[w].series)
				continue;
			g = group_of(labels[w].series, labels[w].mode);
			if (g->n == MAX_ROUNDS) {
				g = NULL;
				continue;
			}
			r = g->n++;
			g->segs[r] = labels[w].segs;
			g->mbps[r] = labels[w].mbps;
			g->round[r] = labels[w].round;
			g->kernel[r] = a;
			g->user[r] = b;
			g->all_segs += labels[w].segs;
			continue;
		}
		if (!g)
			continue;
		if (line[0] != 'A' ||
		    sscanf(line, "A %llx %llu %llu", &a, &b, &c) != 3)
			continue;
		id = addr_name(w, a, &start);
		g->cls[r][names[id].cls] += b;
		group_add_name(g, id, b, start ? c : 0);
	}
	fclose(f);
}

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3 {
	double med, lo, hi;
};

static struct stat3 stat_of(const double *v, unsigned int n)
{
	double s[MAX_ROUNDS];
	struct stat3 r = { 0, 0, 0 };

	if (!n)
		return r;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	r.lo = s[0];
	r.hi = s[n - 1];
	return r;
}

static double per(uint64_t x, uint64_t segs)
{
	return segs ? (double)x / (double)segs : 0;
}

/* The round of @g numbered @round, or -1. */
static int round_idx(const struct group *g, unsigned int round)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (g->round[i] == round)
			return (int)i;
	return -1;
}

/*
 * @g's added kernel instructions per segment against @u, round by round
 * (rounds without an unloaded pair are left out): absolute and in percent
 * of the unloaded figure. Returns the rounds paired.
 */
static unsigned int paired(const struct group *g, const struct group *u,
			   double *add, double *pct, double *tput)
{
	unsigned int i, n = 0;

	for (i = 0; i < g->n; i++) {
		int j = round_idx(u, g->round[i]);
		double base;

		if (j < 0 || !g->segs[i] || !u->segs[j])
			continue;
		base = per(u->kernel[j], u->segs[j]);
		add[n] = per(g->kernel[i], g->segs[i]) - base;
		pct[n] = base > 0 ? 100 * add[n] / base : 0;
		tput[n] = u->mbps[j] > 0 ? g->mbps[i] / u->mbps[j] : 0;
		n++;
	}
	return n;
}

static double budget = 3.0, hooks_budget = 1.5;
/* #36: --sample 16 within 3% per segment, 1% per request of a server */
static double sampled_budget = 3.0, sampled_server_budget = 1.0;

static const char *const mode_order[] = {
	"unloaded", "idle", "events", "filtered", "flight", "packets", "slow",
	"keptout", "sampled", "bpftrace", "base-idle", "base-events", "base-filtered",
	"base-packets", "base-slow",
};
#define NR_MODE_ORDER	(sizeof(mode_order) / sizeof(mode_order[0]))

static void series_table(const char *series)
{
	struct group *u = group_of(series, "unloaded");
	double v[MAX_ROUNDS], add[MAX_ROUNDS], pct[MAX_ROUNDS], tp[MAX_ROUNDS];
	unsigned int m, i, n;

	if (!u->n)
		return;
	for (i = 0; i < u->n; i++)
		v[i] = per(u->kernel[i], u->segs[i]);
	{
		struct stat3 s = stat_of(v, u->n);

		printf("bench: insn %s baseline (module unloaded): %.0f kernel instructions per data segment (median of %u rounds, range %.0f..%.0f)",
		       series, s.med, u->n, s.lo, s.hi);
		for (i = 0; i < u->n; i++)
			v[i] = per(u->user[i], u->segs[i]);
		s = stat_of(v, u->n);
		printf(", %.0f user\n", s.med);
	}
	printf("bench: insn %s %-13s %9s %21s %8s %17s %8s\n", series, "mode",
	       "kernel/seg", "added/seg [range]", "added%", "[range %]",
	       "tput");
	for (m = 0; m < NR_MODE_ORDER; m++) {
		struct group *g = group_of(series, mode_order[m]);
		struct stat3 k, a, p, t;

		if (!g->n || g == u)
			continue;
		for (i = 0; i < g->n; i++)
			v[i] = per(g->kernel[i], g->segs[i]);
		k = stat_of(v, g->n);
		n = paired(g, u, add, pct, tp);
		a = stat_of(add, n);
		p = stat_of(pct, n);
		t = stat_of(tp, n);
		printf("bench: insn %s %-13s %9.0f %+7.0f [%+.0f..%+.0f] %+7.2f%% [%+.1f..%+.1f] %8.3f\n",
		       series, mode_order[m], k.med, a.med, a.lo, a.hi, p.med,
		       p.lo, p.hi, t.med);
	}
	/*
	 * Where user space does much of the work (a server and its clients:
	 * the server series), what an owner pays is the whole machine's work
	 * per unit, kernel and user, against the module unloaded.
	 */
	for (i = 0; i < u->n; i++)
		v[i] = per(u->user[i], u->segs[i]);
	{
		double umed = stat_of(v, u->n).med;

		for (i = 0; i < u->n; i++)
			v[i] = per(u->kernel[i], u->segs[i]);
		if (umed * 10 < stat_of(v, u->n).med)
			goto no_machine;
		for (i = 0; i < u->n; i++)
			v[i] = per(u->kernel[i] + u->user[i], u->segs[i]);
		printf("bench: insn %s whole machine (kernel + user) per unit: unloaded %.0f (median)\n",
		       series, stat_of(v, u->n).med);
	}
	for (m = 0; m < NR_MODE_ORDER; m++) {
		struct group *g = group_of(series, mode_order[m]);
		struct stat3 a, p;

		if (!g->n || g == u)
			continue;
		for (i = n = 0; i < g->n; i++) {
			int j = round_idx(u, g->round[i]);
			double base;

			if (j < 0 || !g->segs[i] || !u->segs[j])
				continue;
			base = per(u->kernel[j] + u->user[j], u->segs[j]);
			add[n] = per(g->kernel[i] + g->user[i], g->segs[i]) - base;
			pct[n] = base > 0 ? 100 * add[n] / base : 0;
			n++;
		}
		a = stat_of(add, n);
		p = stat_of(pct, n);
		printf("bench: insn %s whole machine %-13s %+7.0f [%+.0f..%+.0f] %+7.2f%% [%+.1f..%+.1f]\n",
		       series, mode_order[m], a.med, a.lo, a.hi, p.med, p.lo,
		       p.hi);
	}
no_machine:
	/* NETLAT_BENCH_BASE: this tree's modes against that module's, round by round */
	for (m = 0; m < NR_MODE_ORDER; m++) {
		struct group *b, *g;
		struct stat3 a;
		double base;

		if (strncmp(mode_order[m], "base-", 5))
			continue;
		b = group_of(series, mode_order[m]);
		g = group_of(series, mode_order[m] + 5);
		if (!b->n || !g->n)
			continue;
		n = paired(g, b, add, pct, tp);
		a = stat_of(add, n);
		for (i = 0; i < u->n; i++)
			v[i] = per(u->kernel[i], u->segs[i]);
		base = stat_of(v, u->n).med;
		printf("bench: insn %s this tree against NETLAT_BENCH_BASE, %s: %+.0f per segment [%+.0f..%+.0f] (%+.2f%% of the baseline), throughput ratio %.3f\n",
		       series, mode_order[m] + 5, a.med, a.lo, a.hi,
		       base > 0 ? 100 * a.med / base : 0, stat_of(tp, n).med);
	}
	for (m = 0; m < 3; m++) {
		static const char *const modes[] = {
			"packets", "keptout", "sampled",
		};
		static const char *const what[] = {
			"the packet level", "the hooks alone (keptout)",
			"the packet level sampled (--sample 16)",
		};
		double lim = m == 0 ? budget : m == 1 ? hooks_budget :
			     !strcmp(series, "server") ? sampled_server_budget :
			     sampled_budget;
		struct group *g = group_of(series, modes[m]);
		struct stat3 p;

		if (!g->n)
			continue;
		n = paired(g, u, add, pct, tp);
		p = stat_of(pct, n);
		printf("bench: insn %s budget: %s adds %+.2f%% of the baseline's kernel instructions per segment (range %+.1f..%+.1f%%), budget %.1f%%: %s\n",
		       series, what[m], p.med, p.lo, p.hi, lim,
		       p.med <= lim ? "within" : "OVER");
	}
}

/* The @cap largest values offered, largest first. */
/* -t: rows of the "grew" and netlat.ko lists (0: 8 and 10) */
static unsigned int top_rows;

struct top {
	unsigned int n, cap;
	double v[64];
	size_t id[64];
};

static void top_offer(struct top *t, double v, size_t id)
{
	unsigned int i;

	if (t->n == t->cap && v <= t->v[t->n - 1])
		return;
	if (t->n < t->cap)
		t->n++;
	for (i = t->n - 1; i > 0 && t->v[i - 1] < v; i--) {
		t->v[i] = t->v[i - 1];
		t->id[i] = t->id[i - 1];
	}
	t->v[i] = v;
	t->id[i] = id;
}

/* What @g adds per segment, by class, against @u (sums over the rounds). */
static void where_table(const char *series, const char *mode)
{
	struct group *u = group_of(series, "unloaded"), *g = group_of(series, mode);
	uint64_t gs[NR_CLS] = { 0 }, us[NR_CLS] = { 0 }, gseg = 0, useg = 0;
	double tot = 0, d[NR_CLS];
	struct top top = { .cap = top_rows ? top_rows : 8 };
	unsigned int i, c;
	size_t id;

	if (!g->n || !u->n)
		return;
	for (i = 0; i < g->n; i++) {
		for (c = 0; c < NR_CLS; c++)
			gs[c] += g->cls[i][c];
		gseg += g->segs[i];
	}
	for (i = 0; i < u->n; i++) {
		for (c = 0; c < NR_CLS; c++)
			us[c] += u->cls[i][c];
		useg += u->segs[i];
	}
	printf("bench: insn %s %s where the added instructions go (per segment, all rounds):",
	       series, mode);
	for (c = 0; c < NR_CLS; c++) {
		d[c] = per(gs[c], gseg) - per(us[c], useg);
		tot += d[c];
	}
	for (c = 0; c < NR_CLS; c++)
		if (d[c] > 0.5 || d[c] < -0.5)
			printf(" %s %+.0f,", cls_names[c], d[c]);
	printf(" total %+.0f\n", tot);
	/* the kernel functions that grew most (netlat's own are below) */
	for (id = 0; id < nr_names; id++) {
		double a;

		if (names[id].cls == C_NETLAT)
			continue;
		a = per(g_insns(g, id), gseg) - per(g_insns(u, id), useg);
		if (a >= 1)
			top_offer(&top, a, id);
	}
	for (i = 0; i < top.n; i++)
		printf("bench: insn %s %s   grew: %-40s %+8.1f per segment (%s)\n",
		       series, mode, names[top.id[i]].s, top.v[i],
		       cls_names[names[top.id[i]].cls]);
}

/*
 * Per hook: hits per segment (its handler's calls), the handler's own
 * instructions per hit, the mechanism's per hit of its kind, and the two
 * per segment; then netlat's shared code and heaviest functions.
 */
static void hook_table(const char *series, const char *mode)
{
	struct group *g = group_of(series, mode);
	uint64_t hits[NR_HK] = { 0 }, mech[NR_CLS] = { 0 }, shared = 0, all = 0;
	double mech_hit[NR_HK];
	struct top rows = { .cap = 64 }, top = { .cap = top_rows ? top_rows : 10 };
	uint64_t entries, all_hits;
	unsigned int i;
	size_t id;

	if (!g->n)
		return;
	for (id = 0; id < nr_names; id++) {
		if (names[id].cls != C_NETLAT) {
			if (names[id].cls != C_REST)
				mech[names[id].cls] += g_insns(g, id);
			continue;
		}
		all += g_insns(g, id);
		if (names[id].hook < 0) {
			shared += g_insns(g, id);
			continue;
		}
		hits[hooks[names[id].hook].kind] += g_calls(g, id);
		if (g_calls(g, id))
			top_offer(&rows, per(g_calls(g, id), g->all_segs), id);
	}
	entries = hits[H_KPROBE] + hits[H_KRETPROBE];
	all_hits = entries + hits[H_TRACEPOINT] + hits[H_KRETPROBE_RET];
	/* a kretprobe's entry is a kprobe's; its bookkeeping is the return's */
	mech_hit[H_KPROBE] = mech_hit[H_KRETPROBE] =
		per(mech[C_KPROBE] + mech[C_FTRACE] + mech[C_TRAMP], entries);
	mech_hit[H_KRETPROBE_RET] = per(mech[C_KRETPROBE], hits[H_KRETPROBE_RET]);
	mech_hit[H_TRACEPOINT] = per(mech[C_TRACEPOINT], hits[H_TRACEPOINT]);
	printf("bench: insn %s %s per hook: %-28s %-24s %-13s %8s %8s %8s %8s\n",
	       series, mode, "hook", "handler", "kind", "hits/seg", "own/hit",
	       "mech/hit", "per seg");
	for (i = 0; i < rows.n; i++) {
		const struct hook *h;
		const char *path;
		char kind[40];

		id = rows.id[i];
		h = &hooks[names[id].hook];
		path = path_of(h->hook, h->kind);
		if (path)
			snprintf(kind, sizeof(kind), "%s%s", path,
				 h->kind == H_KRETPROBE_RET ? "-ret" : "");
		else
			snprintf(kind, sizeof(kind), "%s", hk_names[h->kind]);
		printf("bench: insn %s %s per hook: %-28.28s %-24.24s %-13s %8.3f %8.1f %8.1f %8.1f\n",
		       series, mode, h->hook, h->handler + 7, kind,
		       rows.v[i], per(g_insns(g, id), g_calls(g, id)),
		       mech_hit[h->kind],
		       per(g_insns(g, id), g->all_segs) + rows.v[i] * mech_hit[h->kind]);
	}
	printf("bench: insn %s %s mechanism per hit: kprobe entry (kprobe, ftrace, trampolines) %.1f over %.3f hits/seg; kretprobe return (with its entry's bookkeeping) %.1f over %.3f; tracepoint iterators %.1f over %.3f\n",
	       series, mode, mech_hit[H_KPROBE], per(entries, g->all_segs),
	       mech_hit[H_KRETPROBE_RET], per(hits[H_KRETPROBE_RET], g->all_segs),
	       mech_hit[H_TRACEPOINT], per(hits[H_TRACEPOINT], g->all_segs));
	printf("bench: insn %s %s netlat.ko: %.1f instructions per segment, %.1f of them outside the handlers (shared: ring, filters, tables), %.1f per hit\n",
	       series, mode, per(all, g->all_segs), per(shared, g->all_segs),
	       per(shared, all_hits));
	for (id = 0; id < nr_names; id++)
		if (names[id].cls == C_NETLAT &&
		    per(g_insns(g, id), g->all_segs) >= 0.5)
			top_offer(&top, per(g_insns(g, id), g->all_segs), id);
	for (i = 0; i < top.n; i++)
		printf("bench: insn %s %s   netlat.ko: %-40s %8.1f per segment, %.3f calls/seg\n",
		       series, mode, names[top.id[i]].s + 7, top.v[i],
		       per(g_calls(g, top.id[i]), g->all_segs));
}

int main(int argc, char **argv)
{
	const char *console = NULL, *plugin = NULL;
	const char *series_seen[32];
	unsigned int i, j, ns = 0;
	int opt;

	for (i = 0; i < sizeof(mech_res) / sizeof(mech_res[0]); i++)
		if (regcomp(&mech_re[i], mech_res[i].re, REG_EXTENDED | REG_NOSUB))
			die("bad regex", mech_res[i].re);
	while ((opt = getopt(argc, argv, "c:p:H:o:b:B:t:")) != -1) {
		switch (opt) {
		case 'c':
			console = optarg;
			break;
		case 'p':
			plugin = optarg;
			break;
		case 'H':
			hooks_load(optarg);
			break;
		case 'o':
			kofile_load(optarg);
			break;
		case 'b':
			budget = strtod(optarg, NULL);
			break;
		case 'B':
			hooks_budget = strtod(optarg, NULL);
			break;
		case 't':
			top_rows = strtoul(optarg, NULL, 10);
			if (top_rows < 1 || top_rows > 64)
				die("-t takes 1 to 64 rows", optarg);
			break;
		default:
			fprintf(stderr, "usage: insn_report -c console.log -p plugin.out [-H hooks] [-o file=objdump-t ...] [-b budget%%] [-B hooks-budget%%] [-t rows]\n");
			return 2;
		}
	}
	if (!console || !plugin) {
		fprintf(stderr, "insn_report: -c and -p are required\n");
		return 2;
	}
	console_load(console);
	plugin_load(plugin);
	for (i = 0; i < nr_groups; i++) {
		for (j = 0; j < ns && strcmp(series_seen[j], groups[i].series); j++)
			;
		if (j == ns && ns < 32)
			series_seen[ns++] = groups[i].series;
	}
	if (!ns) {
		printf("bench: insn: no labelled instruction windows (was the plugin loaded?)\n");
		return 1;
	}
	printf("bench: insn: guest instructions counted by tests/insn/insn_plugin.so (single-threaded TCG: exact); per data segment of the series' MIB counter; 'added' pairs each mode with the module unloaded in the same round; median [range] over the rounds; tput: throughput over unloaded, median of the rounds' ratios\n");
	for (i = 0; i < ns; i++) {
		static const char *const detail[] = {
			"events", "packets", "slow", "keptout", "sampled",
			"bpftrace",
		};

		series_table(series_seen[i]);
		for (j = 0; j < sizeof(detail) / sizeof(detail[0]); j++) {
			where_table(series_seen[i], detail[j]);
			if (strcmp(detail[j], "bpftrace"))
				hook_table(series_seen[i], detail[j]);
		}
	}
	return 0;
}
