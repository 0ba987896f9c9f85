/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Instruction-count windows for the benches (make bench, tests/insn/).
 *
 * Under make bench, QEMU runs tests/insn/insn_plugin.so, which counts the
 * guest's instructions; the N-th execution of a marker instruction (xchg
 * of a register with itself, a no-op on any x86 CPU, so a bench runs the
 * same without the plugin) closes the plugin's window N: nl_insn_begin()
 * the one before a measurement (totals only), nl_insn_mark() the measured
 * one (counts by address too). The guest prints
 * what window N was ("NETLAT-INSN w=N ..."), and the host joins both after
 * the VM is off (tests/insn/insn_report.c). Only one process of the VM may
 * execute markers, or the numbers part.
 */
#ifndef NETLAT_INSN_H
#define NETLAT_INSN_H

#include <stdio.h>
#include <string.h>

/* markers this process executed: the plugin's window number */
static unsigned int nl_insn_marks;

/* xchg %bx,%bx: close the measured window */
static inline unsigned int nl_insn_mark(void)
{
	__asm__ __volatile__(".byte 0x66, 0x87, 0xdb" ::: "memory");
	return ++nl_insn_marks;
}

/* xchg %cx,%cx: close the window before a measured one */
static inline unsigned int nl_insn_begin(void)
{
	__asm__ __volatile__(".byte 0x66, 0x87, 0xc9" ::: "memory");
	return ++nl_insn_marks;
}

/*
 * Print the sections of module @name whose code may run, so the host can
 * name the addresses the plugin counted there: "NETLAT-INSN-MOD w=<the
 * next window> <name> <file> <section> <address>". Every load prints its
 * own (a reload may move the module).
 */
static inline void nl_insn_module(const char *name, const char *file)
{
	static const char *const secs[] = {
		".text", ".text.unlikely", ".text.hot", ".noinstr.text",
		".exit.text", ".static_call.text",
	};
	char path[256], addr[64];
	unsigned int i;

	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/module/%s/sections/%s",
			 name, secs[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(addr, sizeof(addr), f))
			printf("NETLAT-INSN-MOD w=%u %s %s %s %s", nl_insn_marks + 1,
			       name, file, secs[i], addr);
		fclose(f);
	}
}

/*
 * The kernel image's functions, for the host to name what the plugin
 * counted ("NETLAT-KSYM <address> <name>", kallsyms' order): Debian's
 * System.map is a stub and KASLR moves the image at every boot. Modules
 * are named from their sections (nl_insn_module()).
 */
static inline void nl_insn_kallsyms(void)
{
	char line[512], addr[32], type[8], name[256], mod[128];
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%31s %7s %255s %127s", addr, type, name, mod);

		if (n != 3)
			continue;	/* a module's: named from its sections */
		/* __pfx_: the padding before a function, not executed */
		if (!strncmp(name, "__pfx_", 6))
			continue;
		if (strchr("tTwW", type[0]) || !strcmp(name, "_etext"))
			printf("NETLAT-KSYM %s %s\n", addr, name);
	}
	if (f)
		fclose(f);
}

/* nl_insn_module() of every loaded module; @name's file is @file. */
static inline void nl_insn_modules(const char *name, const char *file)
{
	char line[512], mod[128];
	FILE *f = fopen("/proc/modules", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s", mod) == 1)
			nl_insn_module(mod, strcmp(mod, name) ? mod : file);
	if (f)
		fclose(f);
}

#endif /* NETLAT_INSN_H */
