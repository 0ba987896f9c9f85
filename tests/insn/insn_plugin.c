// SPDX-License-Identifier: GPL-2.0
/*
 * insn_plugin: a QEMU TCG plugin that counts the guest's instructions, for
 * make bench. Wall time under TCG moves by +-20% between rounds; the
 * number of instructions a transfer takes moves by ~2%, so the cost netlat
 * adds per packet is read from this count.
 *
 * Every translated block gets inline adds of its instruction count and
 * of one execution: exact under single-threaded TCG (-accel
 * tcg,thread=single), racy under MTTCG. Counters: one per kernel block
 * start address (the host names them from the guest's kallsyms and module
 * sections: a block at a function's first byte counts its calls), one for
 * all of user space. Debian's System.map is a stub and its vmlinuz has no
 * symbols, so naming is left to the host.
 *
 * Windows: the guest executes a marker from user space, "xchg %bx,%bx"
 * (66 87 db) or "xchg %cx,%cx" (66 87 c9), no-ops on any x86 CPU; the
 * N-th marker closes window N and the plugin appends what it counted in it
 * to out=:
 *   W <n> <kernel insns> <user insns>
 *   A <hexaddr> <insns> <executions>     (after %bx's only)
 * with only the counters that moved. %cx's closes a window the guest does
 * not measure (the setup between two measured ones): its totals only.
 * The guest says which window was what.
 *
 * Built against declarations of the few API functions it uses (QEMU's
 * plugin API version 1, as QEMU 7.2 has it), not against a copy of QEMU's
 * header; qemu checks the version it exports.
 *
 * usage: qemu-system-x86_64 -plugin insn_plugin.so,out=FILE ...
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU's plugin API, version 1: what this plugin calls ---- */

#define PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

PLUGIN_EXPORT int qemu_plugin_version = 1;

/* ---- counters ---- */

/* x86-64: the upper half of the address space is the kernel's */
#define KERNEL_START	0xffff800000000000ULL

struct counter {
	uint64_t insns, calls;
	uint64_t last_insns, last_calls;	/* at the last window */
};

/* kernel blocks by start address (open addressing) */
struct block {
	uint64_t vaddr;
	struct counter c;
};
#define BLOCK_CHUNK	4096
static struct block **block_tab;	/* pointers: the blocks never move */
static size_t block_cap, block_n;

static struct counter user;
static FILE *out;
static uint64_t windows;

static void die(const char *msg)
{
	fprintf(stderr, "insn_plugin: %s\n", msg);
	exit(1);
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void block_grow(void);

static struct counter *block_counter(uint64_t vaddr)
{
	static struct block *chunk;
	static size_t chunk_used = BLOCK_CHUNK;
	size_t i;

	if (2 * (block_n + 1) > block_cap)
		block_grow();
	for (i = hash64(vaddr) & (block_cap - 1); block_tab[i];
	     i = (i + 1) & (block_cap - 1))
		if (block_tab[i]->vaddr == vaddr)
			return &block_tab[i]->c;
	if (chunk_used == BLOCK_CHUNK) {
		chunk = calloc(BLOCK_CHUNK, sizeof(*chunk));
		if (!chunk)
			die("out of memory");
		chunk_used = 0;
	}
	block_tab[i] = &chunk[chunk_used++];
	block_tab[i]->vaddr = vaddr;
	block_n++;
	return &block_tab[i]->c;
}

static void block_grow(void)
{
	struct block **old = block_tab;
	size_t i, j, old_cap = block_cap;

	block_cap = block_cap ? 2 * block_cap : 1 << 14;
	block_tab = calloc(block_cap, sizeof(*block_tab));
	if (!block_tab)
		die("out of memory");
	for (i = 0; i < old_cap; i++) {
		if (!old[i])
			continue;
		for (j = hash64(old[i]->vaddr) & (block_cap - 1); block_tab[j];
		     j = (j + 1) & (block_cap - 1))
			;
		block_tab[j] = old[i];
	}
	free(old);
}

/* What counter @c gained since the last window, remembered as seen. */
static bool counter_delta(struct counter *c, uint64_t *insns, uint64_t *calls)
{
	*insns = c->insns - c->last_insns;
	*calls = c->calls - c->last_calls;
	c->last_insns = c->insns;
	c->last_calls = c->calls;
	return *insns || *calls;
}

static void window_close(unsigned int vcpu, void *udata)
{
	uint64_t kernel = 0, insns, calls;
	bool detail = udata != NULL;
	size_t i;
	long pos;

	(void)vcpu;
	windows++;
	/* the totals first: written over once the details are out */
	pos = ftell(out);
	fprintf(out, "W %" PRIu64 " %20" PRIu64 " %20" PRIu64 "\n", windows,
		(uint64_t)0, (uint64_t)0);
	for (i = 0; i < block_cap; i++)
		if (block_tab[i] &&
		    counter_delta(&block_tab[i]->c, &insns, &calls)) {
			kernel += insns;
			if (detail)
				fprintf(out, "A %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
					block_tab[i]->vaddr, insns, calls);
		}
	counter_delta(&user, &insns, &calls);
	fseek(out, pos, SEEK_SET);
	fprintf(out, "W %" PRIu64 " %20" PRIu64 " %20" PRIu64 "\n", windows,
		kernel, insns);
	fseek(out, 0, SEEK_END);
	fflush(out);
}

/* 0: no marker; 1: xchg %bx,%bx (details); 2: xchg %cx,%cx (totals) */
static int marker_kind(const struct qemu_plugin_insn *insn)
{
	const unsigned char *b = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != 3 || b[0] != 0x66 || b[1] != 0x87)
		return 0;
	return b[2] == 0xdb ? 1 : b[2] == 0xc9 ? 2 : 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct counter *c;

	(void)id;
	if (vaddr < KERNEL_START) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
			QEMU_PLUGIN_INLINE_ADD_U64, &user.insns, n);
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
			int kind = marker_kind(insn);

			/* udata non-NULL: write the details */
			if (kind)
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					window_close, QEMU_PLUGIN_CB_NO_REGS,
					kind == 1 ? (void *)&user : NULL);
		}
		return;
	}
	c = block_counter(vaddr);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &c->insns, n);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &c->calls, 1);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fclose(out);
}

PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				      const struct qemu_info_t *info,
				      int argc, char **argv)
{
	const char *out_path = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else {
			qemu_plugin_outs("insn_plugin: unknown argument\n");
			return -1;
		}
	}
	if (!out_path) {
		qemu_plugin_outs("insn_plugin: out=FILE is required\n");
		return -1;
	}
	out = fopen(out_path, "w");
	if (!out) {
		qemu_plugin_outs("insn_plugin: cannot open out=\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
