// SPDX-License-Identifier: GPL-2.0
/*
 * A live patch of tcp_rtx_synack() for the tcp test: the replacement
 * sends the SYN-ACK again as the kernel's does (without its tracepoint,
 * which modules cannot call) and counts its calls in the parameter
 * "calls". Loading it fails if another ftrace user holds the function's
 * site with IPMODIFY.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/livepatch.h>
#include <net/tcp.h>

static atomic_long_t netlat_lp_calls = ATOMIC_LONG_INIT(0);

static int netlat_lp_calls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&netlat_lp_calls));
}

static const struct kernel_param_ops netlat_lp_calls_ops = {
	.get = netlat_lp_calls_get,
};
module_param_cb(calls, &netlat_lp_calls_ops, NULL, 0444);
MODULE_PARM_DESC(calls, "Calls of the patched tcp_rtx_synack()");

static int netlat_lp_rtx_synack(const struct sock *sk,
				struct request_sock *req)
{
	const struct tcp_request_sock_ops *ops = tcp_rsk(req)->af_specific;
	struct flowi fl;
	int err;

	atomic_long_inc(&netlat_lp_calls);
	if (READ_ONCE(sk->sk_txrehash) == SOCK_TXREHASH_ENABLED)
		WRITE_ONCE(tcp_rsk(req)->txhash, net_tx_rndhash());
	err = ops->send_synack(sk, NULL, &fl, req, NULL, TCP_SYNACK_NORMAL,
			       NULL);
	if (err)
		return err;
	TCP_INC_STATS(sock_net(sk), TCP_MIB_RETRANSSEGS);
	NET_INC_STATS(sock_net(sk), LINUX_MIB_TCPSYNRETRANS);
	/* a passive Fast Open socket is no lockless listener */
	if (unlikely(tcp_passive_fastopen(sk)))
		WRITE_ONCE(tcp_sk_rw(sk)->total_retrans,
			   tcp_sk_rw(sk)->total_retrans + 1);
	return 0;
}

static struct klp_func netlat_lp_funcs[] = {
	{ .old_name = "tcp_rtx_synack", .new_func = netlat_lp_rtx_synack },
	{ }
};

static struct klp_object netlat_lp_objs[] = {
	{ .funcs = netlat_lp_funcs },	/* no name: vmlinux */
	{ }
};

static struct klp_patch netlat_lp_patch = {
	.mod = THIS_MODULE,
	.objs = netlat_lp_objs,
};

static int __init netlat_lp_init(void)
{
	return klp_enable_patch(&netlat_lp_patch);
}

static void __exit netlat_lp_exit(void)
{
}

module_init(netlat_lp_init);
module_exit(netlat_lp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("netlat test: a live patch of tcp_rtx_synack");
MODULE_INFO(livepatch, "Y");
