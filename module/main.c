// SPDX-License-Identifier: GPL-2.0
/*
 * netlat: where a TCP packet spends its time inside a Linux host.
 */
#include <linux/module.h>
#include <linux/log2.h>
#include "netlat.h"
#include "probes.h"

static unsigned int ring_kb = 1024;
module_param(ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "Ring size per CPU in KiB, a power of two (default 1024)");

static ulong probes;
module_param(probes, ulong, 0444);
MODULE_PARM_DESC(probes, "NETLAT_PROBE_* groups enabled at load (default 0: none)");

static bool test_missing;
module_param(test_missing, bool, 0444);
MODULE_PARM_DESC(test_missing, "Also probe a symbol that does not exist (tests: the push group becomes partial)");

static int __init netlat_init(void)
{
	u64 bytes = (u64)ring_kb << 10;
	int err;

	if (!is_power_of_2(bytes) || bytes < NETLAT_RING_BYTES_MIN ||
	    bytes > NETLAT_RING_BYTES_MAX || bytes < PAGE_SIZE) {
		pr_err("ring_kb=%u: need a power of two from %llu to %llu\n",
		       ring_kb, NETLAT_RING_BYTES_MIN >> 10,
		       NETLAT_RING_BYTES_MAX >> 10);
		return -EINVAL;
	}
	err = netlat_dev_init(bytes);
	if (err)
		return err;
	/* Probes write into the rings: registered after, removed before. */
	err = netlat_probes_init(probes, test_missing);
	if (err)
		goto err_dev;
	pr_info("loaded, ABI %d, %u KiB per CPU\n", NETLAT_ABI_VERSION, ring_kb);
	return 0;

err_dev:
	netlat_dev_exit();
	return err;
}

static void __exit netlat_exit(void)
{
	netlat_probes_exit();
	netlat_dev_exit();
}

module_init(netlat_init);
module_exit(netlat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-packet TCP latency tracing");
MODULE_VERSION("0.1");
