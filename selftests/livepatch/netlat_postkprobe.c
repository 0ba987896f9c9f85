// SPDX-License-Identifier: GPL-2.0
/*
 * Kprobes with post handlers on the retransmit functions netlat hooks,
 * for the tcp test: on an ftrace site such a kprobe needs IPMODIFY, so
 * loading fails (-EBUSY) while another user holds it. The hits are
 * counted in the parameter "hits"; a function this kernel lacks is left
 * out.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/kprobes.h>

static const char *const netlat_pk_syms[] = {
	"tcp_retransmit_timer", "tcp_send_loss_probe", "tcp_retransmit_skb",
	"__tcp_retransmit_skb", "tcp_rtx_synack",
};

static struct kprobe netlat_pk[ARRAY_SIZE(netlat_pk_syms)];
static bool netlat_pk_on[ARRAY_SIZE(netlat_pk_syms)];
static atomic_long_t netlat_pk_hits = ATOMIC_LONG_INIT(0);

static int netlat_pk_hits_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&netlat_pk_hits));
}

static const struct kernel_param_ops netlat_pk_hits_ops = {
	.get = netlat_pk_hits_get,
};
module_param_cb(hits, &netlat_pk_hits_ops, NULL, 0444);
MODULE_PARM_DESC(hits, "Post handler runs");

static int netlat_pk_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static void netlat_pk_post(struct kprobe *p, struct pt_regs *regs,
			   unsigned long flags)
{
	atomic_long_inc(&netlat_pk_hits);
}

static void netlat_pk_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(netlat_pk); i++)
		if (netlat_pk_on[i])
			unregister_kprobe(&netlat_pk[i]);
}

static int __init netlat_pk_init(void)
{
	unsigned int i, n = 0;
	int err;

	for (i = 0; i < ARRAY_SIZE(netlat_pk); i++) {
		netlat_pk[i].symbol_name = netlat_pk_syms[i];
		netlat_pk[i].pre_handler = netlat_pk_pre;
		netlat_pk[i].post_handler = netlat_pk_post;
		err = register_kprobe(&netlat_pk[i]);
		if (err == -ENOENT || err == -EINVAL)
			continue;	/* not in this kernel */
		if (err) {
			pr_err("%s: %d\n", netlat_pk_syms[i], err);
			netlat_pk_exit();
			return err;
		}
		netlat_pk_on[i] = true;
		n++;
	}
	return n ? 0 : -ENOENT;
}

module_init(netlat_pk_init);
module_exit(netlat_pk_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("netlat test: kprobes with post handlers on TCP retransmits");
