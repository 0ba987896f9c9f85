// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/netlat: the file operations and the ioctl dispatch. The rings,
 * their locks and wakeups are ring.c's (Documentation/design.rst); this
 * file knows which file consumes and what each ioctl does with the units
 * below it.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/nospec.h>
#include "dev.h"
#include "config.h"
#include "ring.h"
#include "record.h"
#include "flight.h"
#include "probes.h"
#include "filter.h"
#include "hist.h"
#include "keys.h"
#include "tracktbl.h"
#include "rxtrack.h"
#include "sktbl.h"
#include "uarg.h"
#include "compat.h"

static struct file *netlat_consumer;	/* cmpxchg'd: the one consuming file */

struct netlat_file {
	bool stream_sent;	/* read() gave the stream header already */
	bool mapped_cons;	/* consumes through mmap, not read() */
	struct netlat_snap_reader snap;	/* under netlat_lock */
};

/* ---- consumer ownership ---- */

static int netlat_claim_consumer(struct file *file)
{
	struct file *owner = cmpxchg(&netlat_consumer, NULL, file);

	return owner && owner != file ? -EBUSY : 0;
}

/* NETLAT_SNAPSHOT_READ: a file reading snapshots gives up read() of live data. */
static void netlat_stop_live_reader(struct file *file)
{
	struct netlat_file *nf = file->private_data;

	if (!READ_ONCE(nf->mapped_cons))
		cmpxchg(&netlat_consumer, file, NULL);
}

/* ---- open / release ---- */

static int netlat_open(struct inode *inode, struct file *file)
{
	struct netlat_file *nf;

	if (!netlat_may_read())
		return -EPERM;
	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf)
		return -ENOMEM;
	file->private_data = nf;
	return stream_open(inode, file);
}

static int netlat_release(struct inode *inode, struct file *file)
{
	cmpxchg(&netlat_consumer, file, NULL);
	kfree(file->private_data);
	return 0;
}

/* ---- read ---- */

static int netlat_copy_stream_hdr(char __user *buf)
{
	struct netlat_rec_stream s;

	netlat_fill_stream_hdr(&s, netlat_rings_locked(),
			       netlat_probes_available());
	return copy_to_user(buf, &s, sizeof(s)) ? -EFAULT : sizeof(s);
}

static ssize_t netlat_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	struct netlat_file *nf = file->private_data;
	ssize_t copied, n;
	int err;

	if (READ_ONCE(nf->snap.active)) {
		if (mutex_lock_interruptible(&netlat_lock))
			return -ERESTARTSYS;
		n = netlat_snap_read(&nf->snap, buf, count);
		mutex_unlock(&netlat_lock);
		return n;
	}
	if (count < NETLAT_REC_MAX_SIZE)
		return -EINVAL;
	/* Overwrite mode has no live stream: snapshots only. */
	if (READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
		return -EBUSY;
	err = netlat_claim_consumer(file);
	if (err)
		return err;

	for (;;) {
		if (mutex_lock_interruptible(&netlat_lock))
			return -ERESTARTSYS;
		/* Checked again: the mode may have changed, or READ came in. */
		if (netlat_mode == NETLAT_MODE_OVERWRITE || nf->snap.active) {
			mutex_unlock(&netlat_lock);
			return -EBUSY;
		}
		copied = 0;
		if (!nf->stream_sent) {
			copied = netlat_copy_stream_hdr(buf);
			if (copied < 0) {
				mutex_unlock(&netlat_lock);
				return copied;
			}
			WRITE_ONCE(nf->stream_sent, true);
		}
		n = netlat_rings_drain(buf + copied, count - copied);
		mutex_unlock(&netlat_lock);
		if (n < 0)
			return copied ? copied : n;
		copied += n;
		if (copied)
			return copied;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = netlat_wait_for_data();
		if (err)
			return err;
	}
}

/* ---- write: user markers ---- */

static ssize_t netlat_write(struct file *file, const char __user *buf,
			    size_t count, loff_t *ppos)
{
	u8 data[NETLAT_MARKER_MAX];
	struct netlat_rec_marker *m;
	struct netlat_writer w __uninitialized;

	if (!count)
		return 0;
	if (count > NETLAT_MARKER_MAX)
		return -EINVAL;
	/* Copy first: the ring is written with interrupts off. */
	if (copy_from_user(data, buf, count))
		return -EFAULT;
	m = netlat_reserve(&w, NETLAT_REC_MARKER, sizeof(*m) + count);
	if (!m)
		return count;	/* stopped, or dropped and counted */
	m->pid = task_tgid_nr(current);
	m->tid = task_pid_nr(current);
	m->len = count;
	m->reserved = 0;
	memcpy(m->data, data, count);
	netlat_commit(&w);
	return count;
}

/* ---- poll ---- */

static __poll_t netlat_poll(struct file *file, poll_table *wait)
{
	struct netlat_file *nf = file->private_data;
	struct file *owner = READ_ONCE(netlat_consumer);
	__poll_t pri;

	netlat_poll_wait(file, wait);
	/* Queued before the check: a freeze after it wakes us (EPOLLPRI). */
	smp_mb();
	pri = netlat_snap_frozen() ? EPOLLPRI : 0;
	/* A snapshot reader's read() never blocks. */
	if (READ_ONCE(nf->snap.active))
		return pri | EPOLLIN | EPOLLRDNORM;
	/* Overwrite mode: live data is never readable, only snapshots. */
	if (READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
		return pri;
	/* Another file consumes: nothing here will ever be readable. */
	if (owner && owner != file)
		return pri | EPOLLERR;
	if (!READ_ONCE(nf->stream_sent) && !READ_ONCE(nf->mapped_cons))
		return pri | EPOLLIN | EPOLLRDNORM;
	/* On the queue before arming: see netlat_wait_for_data(). */
	netlat_arm_flush();
	return pri | (netlat_data_pending() ? EPOLLIN | EPOLLRDNORM : 0);
}

/* ---- mmap ---- */

static void netlat_vm_open(struct vm_area_struct *vma)
{
	atomic_inc(&netlat_nr_maps);
}

static void netlat_vm_close(struct vm_area_struct *vma)
{
	atomic_dec(&netlat_nr_maps);
}

static const struct vm_operations_struct netlat_vm_ops = {
	.open = netlat_vm_open,
	.close = netlat_vm_close,
};

static int netlat_mmap(struct file *file, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 cpu = off >> NETLAT_MMAP_CPU_SHIFT;
	u64 area = off & ((1ULL << NETLAT_MMAP_CPU_SHIFT) - 1);
	struct netlat_rings *rs;
	struct page **pages;
	unsigned long nr;
	int err;

	/* VM_MAYSHARE: MAP_SHARED of an O_RDONLY file has no VM_SHARED */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	cpu = array_index_nospec(cpu, nr_cpu_ids);
	if (!cpu_possible(cpu))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	mutex_lock(&netlat_map_lock);
	rs = netlat_rings_locked();
	switch (area) {
	case NETLAT_MMAP_SNAPSHOT:
		err = -EINVAL;
		if (cpu)
			goto out;
		err = -EPERM;
		if (vma->vm_flags & VM_WRITE)
			goto out;
		vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
		vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
		/* Counts itself in netlat_nr_maps and sets its own vm_ops. */
		err = netlat_snap_mmap(vma, len);
		goto out;
	case NETLAT_MMAP_CONS:
		err = -EINVAL;
		if (len != PAGE_SIZE)
			goto out;
		/* The kernel moves the consumer index in overwrite mode. */
		err = -EBUSY;
		if (netlat_mode == NETLAT_MODE_OVERWRITE)
			goto out;
		err = netlat_claim_consumer(file);
		if (err)
			goto out;
		WRITE_ONCE(((struct netlat_file *)file->private_data)->mapped_cons,
			   true);
		break;
	case NETLAT_MMAP_DATA:
		err = -EINVAL;
		if (len != PAGE_SIZE + 2 * rs->bytes)
			goto out;
		err = -EPERM;
		if (vma->vm_flags & VM_WRITE)
			goto out;
		vm_flags_clear(vma, VM_MAYWRITE);
		break;
	default:
		err = -EINVAL;
		goto out;
	}
	err = netlat_ring_pages(rs, cpu, area, &pages, &nr);
	if (err)
		goto out;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	err = vm_map_pages_zero(vma, pages, nr);
	if (!err) {
		/* Only a mapping that exists is counted, and closed. */
		vma->vm_ops = &netlat_vm_ops;
		atomic_inc(&netlat_nr_maps);
	}
out:
	mutex_unlock(&netlat_map_lock);
	return err;
}

/* ---- ioctls ---- */

static long netlat_ioc_get_info(void __user *uarg)
{
	struct netlat_rings *rs;
	struct netlat_info info;
	u32 usize;
	int err;

	err = netlat_get_arg_resv(info, NETLAT_INFO_SIZE_VER0, 0, reserved, uarg,
				  &usize);
	if (err)
		return err;
	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	rs = netlat_rings_locked();
	info.abi_version = NETLAT_ABI_VERSION;
	info.rec_hdr_size = sizeof(struct netlat_rec_hdr);
	info.nr_cpus = nr_cpu_ids;
	info.page_size = PAGE_SIZE;
	info.ring_bytes = rs->bytes;
	info.mem_bytes = rs->mem_bytes + netlat_snap_mem_bytes();
	info.probe_groups = netlat_probes_available();
	info.probe_groups_enabled = READ_ONCE(netlat_probes_on);
	info.state = (READ_ONCE(netlat_running) ? NETLAT_STATE_RUNNING : 0) |
		     (READ_ONCE(netlat_consumer) ? NETLAT_STATE_CONSUMER : 0);
	info.watermark = netlat_watermark;
	info.flush_ms = netlat_flush_ms;
	info.max_record = NETLAT_REC_MAX_SIZE;
	info.mode = netlat_mode;
	info.level = READ_ONCE(netlat_track_level);
	info.pkt_mem_bytes = netlat_track_capacity(&info.pkt_flows,
						   &info.pkt_pkts);
	info.slow_ns = netlat_track_slow_ns();
	info.sample = netlat_track_sample();
	info.acks = READ_ONCE(netlat_track_acks);
	info.rx_mem_bytes = netlat_rxtrack_capacity(&info.rx_flows,
						    &info.rx_pkts);
	info.table_bytes = READ_ONCE(netlat_table_bytes);
	mutex_unlock(&netlat_lock);
	return netlat_copy_out(uarg, &info, sizeof(info), usize);
}

static long netlat_ioc_get_cpu_stats(void __user *uarg)
{
	struct netlat_cpu_stats st;
	u32 usize;
	int err;

	err = netlat_get_arg_resv(st, NETLAT_CPU_STATS_SIZE_VER0, 0, reserved,
				  uarg, &usize);
	if (err)
		return err;
	if (st.cpu >= nr_cpu_ids)
		return -EINVAL;
	st.cpu = array_index_nospec(st.cpu, nr_cpu_ids);
	if (!cpu_possible(st.cpu))
		return -EINVAL;
	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	netlat_ring_stats(netlat_rings_locked(), st.cpu, &st);
	st.filtered = netlat_filtered(st.cpu);
	mutex_unlock(&netlat_lock);
	return netlat_copy_out(uarg, &st, sizeof(st), usize);
}

static long netlat_ioc_control(unsigned int cmd, void __user *uarg)
{
	struct netlat_control ctl;
	u32 usize;
	int err;

	err = netlat_get_arg(ctl, NETLAT_CONTROL_SIZE_VER0, 0, uarg, &usize);
	if (err)
		return err;

	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	switch (cmd) {
	case NETLAT_IOC_START:
		netlat_rings_start();
		break;
	case NETLAT_IOC_STOP:
		netlat_rings_stop();
		break;
	case NETLAT_IOC_RESET:
		/* A mapped consumer would keep a stale index: see uapi. */
		if (READ_ONCE(netlat_running) || atomic_read(&netlat_nr_maps)) {
			err = -EBUSY;
			break;
		}
		netlat_rings_reset(netlat_rings_locked());
		break;
	}
	mutex_unlock(&netlat_lock);
	return err;
}

static long netlat_ioc_probes(void __user *uarg)
{
	struct netlat_probes pr;
	u32 usize;
	int err;

	err = netlat_get_arg_resv(pr, NETLAT_PROBES_SIZE_VER0, NETLAT_PROBES_SET,
				  reserved, uarg, &usize);
	if (err)
		return err;
	if (pr.flags & NETLAT_PROBES_SET) {
		if (!netlat_may_trace())
			return -EPERM;
		err = netlat_probes_set(pr.enable);
		if (err)
			return err;
	}
	netlat_probes_state(&pr);
	return netlat_copy_out(uarg, &pr, sizeof(pr), usize);
}

static long netlat_ioc_snapshot_file(struct file *file, void __user *uarg)
{
	struct netlat_file *nf = file->private_data;
	long err = netlat_ioc_snapshot(&nf->snap, uarg);

	if (!err && READ_ONCE(nf->snap.active))
		netlat_stop_live_reader(file);
	return err;
}

static long netlat_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case NETLAT_IOC_GET_INFO:
		return netlat_ioc_get_info(uarg);
	case NETLAT_IOC_GET_CPU_STATS:
		return netlat_ioc_get_cpu_stats(uarg);
	case NETLAT_IOC_PROBES:
		return netlat_ioc_probes(uarg);
	case NETLAT_IOC_SNAPSHOT:
		return netlat_ioc_snapshot_file(file, uarg);
	case NETLAT_IOC_TRIGGERS:
		return netlat_ioc_triggers(uarg);
	case NETLAT_IOC_FILTERS:
		return netlat_ioc_filters(uarg);
	case NETLAT_IOC_HIST:
		return netlat_ioc_hist(uarg, netlat_track_flows(),
				       netlat_rxtrack_flows());
	case NETLAT_IOC_FLOWS:
		return netlat_track_ioc_flows(uarg);
	case NETLAT_IOC_HOOKS:
		return netlat_probes_ioc_hooks(uarg);
	case NETLAT_IOC_SET_CONFIG:
	case NETLAT_IOC_START:
	case NETLAT_IOC_STOP:
	case NETLAT_IOC_RESET:
		/* The opener was checked; global changes check the caller too. */
		if (!netlat_may_trace())
			return -EPERM;
		if (cmd == NETLAT_IOC_SET_CONFIG)
			return netlat_config_ioc(uarg);
		return netlat_ioc_control(cmd, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations netlat_fops = {
	.owner = THIS_MODULE,
	.open = netlat_open,
	.release = netlat_release,
	.read = netlat_read,
	.write = netlat_write,
	.poll = netlat_poll,
	.mmap = netlat_mmap,
	.unlocked_ioctl = netlat_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice netlat_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "netlat",
	.fops = &netlat_fops,
	.mode = 0600,
};

int netlat_dev_init(void)
{
	return misc_register(&netlat_misc);
}

void netlat_dev_exit(void)
{
	misc_deregister(&netlat_misc);
}
