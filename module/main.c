// SPDX-License-Identifier: GPL-2.0
/*
 * netlat: where a TCP packet spends its time inside a Linux host.
 */
#include <linux/module.h>
#include <linux/log2.h>
#include <linux/netlat.h>
#include "ring.h"
#include "flight.h"
#include "dev.h"
#include "probes.h"
#include "filter.h"
#include "pkt.h"
#include "hist.h"
#include "keys.h"
#include "tcp.h"
#include "rx.h"
#include "virtio.h"

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
	err = netlat_hist_init();
	if (err)
		return err;
	err = netlat_rings_init(bytes);
	if (err)
		goto err_hist;
	err = netlat_flight_init();
	if (err)
		goto err_rings;
	/* Probes write into the rings: registered after, removed before. */
	netlat_pkt_init();
	err = netlat_probes_init(test_missing);
	if (err)
		goto err_flight;
	err = netlat_tcp_init();
	if (err)
		goto err_probes;
	err = netlat_rx_init();
	if (err)
		goto err_tcp;
	/* without virtio_net's family netlat still traces TCP */
	if (netlat_virtio_init())
		pr_warn("virtio_net probes unavailable\n");
	err = netlat_probes_set(probes & netlat_probes_available());
	if (err)
		goto err_families;
	/* last: no one can open the device before the rest is ready */
	err = netlat_dev_init();
	if (err)
		goto err_families;
	pr_info("loaded, ABI %d, %u KiB per CPU\n", NETLAT_ABI_VERSION, ring_kb);
	return 0;

err_families:
	netlat_virtio_exit();
	netlat_rx_exit();
err_tcp:
	netlat_tcp_exit();
err_probes:
	netlat_probes_exit();
	netlat_keys_exit();
	netlat_filter_exit();
err_flight:
	netlat_flight_exit();
err_rings:
	netlat_rings_exit();
err_hist:
	netlat_hist_exit();
	return err;
}

/* init's steps undone in reverse, as its error path does */
static void __exit netlat_exit(void)
{
	netlat_dev_exit();
	netlat_virtio_exit();
	netlat_rx_exit();
	netlat_tcp_exit();
	netlat_probes_exit();
	/* no handler adds to a key's histograms any more */
	netlat_keys_exit();
	/* no handler reads the filter rules any more */
	netlat_filter_exit();
	netlat_flight_exit();
	netlat_rings_exit();
	netlat_hist_exit();
}

module_init(netlat_init);
module_exit(netlat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-packet TCP latency tracing");
MODULE_VERSION(NETLAT_VERSION);
