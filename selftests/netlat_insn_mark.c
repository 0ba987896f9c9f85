// SPDX-License-Identifier: GPL-2.0
/*
 * netlat_insn_mark: execute the instruction-count marker once (see
 * netlat_insn.h), to window any workload by hand in a VM that runs under
 * tests/insn/insn_plugin.so:
 *
 *   netlat_insn_mark; <workload>; netlat_insn_mark
 *
 * closes two windows; the plugin's out= file then has the workload as the
 * second of them (W lines are numbered from the VM's boot). Without the
 * plugin it does nothing.
 */
#include "netlat_insn.h"

int main(void)
{
	nl_insn_mark();
	return 0;
}
