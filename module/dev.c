// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/netlat: read(), write() markers, poll(), mmap() and the ioctls.
 *
 * Locking:
 *  netlat_lock   serialises read() draining with configuration changes;
 *                copy_to_user() under it may take mmap_lock.
 *  netlat_map_lock  excludes mmap() (which runs under mmap_lock) from a
 *                ring swap; taken inside netlat_lock, never the reverse.
 *  Writers take neither: they run with interrupts off and find the rings
 *  through RCU, so a swap waits for them with synchronize_rcu().
 *  flight.c copies rings into the snapshot under netlat_lock, and changes
 *  the snapshot's mapping state under netlat_map_lock.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/timer.h>
#include <linux/irq_work.h>
#include <linux/capability.h>
#include <linux/timekeeping.h>
#include <linux/slab.h>
#include <linux/nospec.h>
#include "netlat.h"
#include "compat.h"
#include "probes.h"

struct netlat_rings __rcu *netlat_rings;
bool netlat_running;
u32 netlat_watermark;
u32 netlat_mode = NETLAT_MODE_STREAM;

static u32 netlat_flush_ms = 50;
DEFINE_MUTEX(netlat_lock);
DEFINE_MUTEX(netlat_map_lock);
atomic_t netlat_nr_maps = ATOMIC_INIT(0);
static struct file *netlat_consumer;	/* cmpxchg'd: the one consuming file */
static unsigned int netlat_read_start;	/* round-robin first CPU of read() */
static DECLARE_WAIT_QUEUE_HEAD(netlat_wq);
static struct timer_list netlat_flush_timer;
static struct irq_work netlat_wake_work;

struct netlat_file {
	bool stream_sent;	/* read() gave the stream header already */
	bool mapped_cons;	/* consumes through mmap, not read() */
	struct netlat_snap_reader snap;	/* under netlat_lock */
};

/* Rings as seen by process context holding netlat_lock or netlat_map_lock. */
struct netlat_rings *netlat_rings_locked(void)
{
	return rcu_dereference_protected(netlat_rings,
					 lockdep_is_held(&netlat_lock) ||
					 lockdep_is_held(&netlat_map_lock));
}

bool netlat_capable(void)
{
	return capable(CAP_NET_ADMIN) || perfmon_capable();
}

/* ---- wakeups: never from the write path itself ---- */

static void netlat_wake_work_fn(struct irq_work *work)
{
	wake_up_interruptible_all(&netlat_wq);
}

bool netlat_readers_waiting(void)
{
	return wq_has_sleeper(&netlat_wq);
}

void netlat_wake_readers(void)
{
	irq_work_queue(&netlat_wake_work);
}

/* Process context only: a snapshot was frozen. */
void netlat_wake_pri(void)
{
	wake_up_interruptible_poll(&netlat_wq, EPOLLPRI);
}

static bool netlat_data_pending(void)
{
	struct netlat_rings *rs;
	bool pending;

	rcu_read_lock();
	rs = rcu_dereference(netlat_rings);
	pending = rs && netlat_rings_pending(rs, 1);
	rcu_read_unlock();
	return pending;
}

static void netlat_arm_flush(void)
{
	u32 ms = READ_ONCE(netlat_flush_ms);

	if (ms && !timer_pending(&netlat_flush_timer))
		mod_timer(&netlat_flush_timer, jiffies + msecs_to_jiffies(ms));
}

static void netlat_flush_timer_fn(struct timer_list *t)
{
	/* Overwrite mode: pollers wait for snapshots, not data. */
	if (READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
		return;
	if (netlat_data_pending())
		wake_up_interruptible_all(&netlat_wq);
	if (wq_has_sleeper(&netlat_wq))
		netlat_arm_flush();
}

/*
 * Sleep until a ring has data. The flush timer is armed only after we are
 * on the queue, so it either sees us and re-arms, or we see it pending.
 */
static int netlat_wait_for_data(void)
{
	DEFINE_WAIT(wait);
	int err = 0;

	for (;;) {
		prepare_to_wait(&netlat_wq, &wait, TASK_INTERRUPTIBLE);
		netlat_arm_flush();
		/* Overwrite mode: read() finds -EBUSY under the lock. */
		if (netlat_data_pending() ||
		    READ_ONCE(netlat_mode) == NETLAT_MODE_OVERWRITE)
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&netlat_wq, &wait);
	return err;
}

/* ---- consumer ownership ---- */

static int netlat_claim_consumer(struct file *file)
{
	struct file *owner = cmpxchg(&netlat_consumer, NULL, file);

	return owner && owner != file ? -EBUSY : 0;
}

/* NETLAT_SNAPSHOT_READ: a file reading snapshots gives up read() of live data. */
void netlat_stop_live_reader(struct file *file)
{
	struct netlat_file *nf = file->private_data;

	if (!READ_ONCE(nf->mapped_cons))
		cmpxchg(&netlat_consumer, file, NULL);
}

/* ---- open / release ---- */

static int netlat_open(struct inode *inode, struct file *file)
{
	struct netlat_file *nf;

	if (!netlat_capable())
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

void netlat_fill_stream_hdr(struct netlat_rec_stream *s,
			    const struct netlat_rings *rs)
{
	u64 mono_before;

	memset(s, 0, sizeof(*s));
	s->abi_version = NETLAT_ABI_VERSION;
	s->nr_cpus = nr_cpu_ids;
	s->clock_id = CLOCK_MONOTONIC;
	s->flags = READ_ONCE(netlat_running) ? NETLAT_STREAM_RUNNING : 0;
	s->ring_bytes = rs->bytes;
	/* The pair must describe one instant: bracket the realtime read. */
	mono_before = ktime_get_mono_fast_ns();
	s->realtime_ns = ktime_get_real_ns();
	s->mono_ns = mono_before + (ktime_get_mono_fast_ns() - mono_before) / 2;
	netlat_init_hdr(&s->hdr, NETLAT_REC_STREAM, sizeof(*s),
			raw_smp_processor_id(), s->mono_ns);
	s->probe_groups = netlat_probes_available();
}

static int netlat_copy_stream_hdr(char __user *buf)
{
	struct netlat_rec_stream s;

	netlat_fill_stream_hdr(&s, netlat_rings_locked());
	return copy_to_user(buf, &s, sizeof(s)) ? -EFAULT : sizeof(s);
}

/*
 * Copy whole records of one ring to @buf. Returns bytes copied or -EFAULT
 * when nothing could be copied.
 */
static ssize_t netlat_drain_ring(struct netlat_rings *rs, struct netlat_ring *r,
				 char __user *buf, size_t room)
{
	u64 prod = smp_load_acquire(&r->prod->prod);
	u64 cons = READ_ONCE(r->cons->cons);
	u64 start = cons;
	size_t copied = 0;
	bool fault = false;

	if (prod - cons > rs->bytes || !IS_ALIGNED(cons, NETLAT_REC_ALIGN)) {
		/* A consumer index from userspace we cannot use: start over. */
		r->resyncs++;
		cons = prod;
	}
	while (cons != prod) {
		const struct netlat_rec_hdr *h = r->data + (cons & rs->mask);
		u32 size = READ_ONCE(h->size);

		if (!netlat_rec_valid(h, size, prod - cons)) {
			r->resyncs++;
			cons = prod;
			break;
		}
		if (size > room - copied)
			break;
		if (copy_to_user(buf + copied, h, size)) {
			fault = true;
			break;
		}
		copied += size;
		cons += size;
	}
	/* The producer may reuse the bytes once it sees this. */
	if (cons != start)
		smp_store_release(&r->cons->cons, cons);
	return fault && !copied ? -EFAULT : copied;
}

static ssize_t netlat_drain(char __user *buf, size_t room)
{
	struct netlat_rings *rs = netlat_rings_locked();
	unsigned int i, cpu, start = netlat_read_start;
	size_t copied = 0;
	ssize_t n;

	/* Rotate the first CPU so one busy CPU cannot starve the others. */
	netlat_read_start = (start + 1) % nr_cpu_ids;
	for (i = 0; i < nr_cpu_ids; i++) {
		cpu = (start + i) % nr_cpu_ids;
		if (!rs->ring[cpu])
			continue;
		n = netlat_drain_ring(rs, rs->ring[cpu], buf + copied,
				      room - copied);
		if (n < 0)
			return copied ? copied : n;
		copied += n;
		if (room - copied < sizeof(struct netlat_rec_hdr))
			break;
	}
	return copied;
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
		n = netlat_drain(buf + copied, count - copied);
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
	struct netlat_writer w;

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

	poll_wait(file, &netlat_wq, wait);
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
	struct netlat_ring *r;
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
	r = rs->ring[cpu];
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
		pages = &r->cons_page;
		nr = 1;
		break;
	case NETLAT_MMAP_DATA:
		err = -EINVAL;
		if (len != PAGE_SIZE + 2 * rs->bytes)
			goto out;
		err = -EPERM;
		if (vma->vm_flags & VM_WRITE)
			goto out;
		vm_flags_clear(vma, VM_MAYWRITE);
		pages = r->map_pages;
		nr = r->nr_map_pages;
		break;
	default:
		err = -EINVAL;
		goto out;
	}
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

/*
 * Size-first argument: shorter than the first published version or larger
 * than a page is -EINVAL; bytes beyond what this kernel knows must be zero.
 */
int netlat_copy_arg(void *karg, size_t ksize, size_t min_size,
			   void __user *uarg, u32 *usize)
{
	u32 size;
	int err;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size < min_size || size > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(karg, ksize, uarg, size);
	if (err == -E2BIG)
		return -EINVAL;
	*usize = size;
	return err;
}

int netlat_copy_out(void __user *uarg, const void *karg, size_t ksize,
			   u32 usize)
{
	return copy_to_user(uarg, karg, min_t(size_t, ksize, usize)) ?
	       -EFAULT : 0;
}

static long netlat_ioc_get_info(void __user *uarg)
{
	struct netlat_rings *rs;
	struct netlat_info info;
	u32 usize;
	int err;

	err = netlat_copy_arg(&info, sizeof(info), NETLAT_INFO_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if (info.flags)
		return -EINVAL;
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
	mutex_unlock(&netlat_lock);
	return netlat_copy_out(uarg, &info, sizeof(info), usize);
}

static long netlat_ioc_get_cpu_stats(void __user *uarg)
{
	struct netlat_cpu_stats st;
	struct netlat_rings *rs;
	struct netlat_ring *r;
	u32 usize;
	int err;

	err = netlat_copy_arg(&st, sizeof(st), NETLAT_CPU_STATS_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if (st.flags || st.reserved || st.cpu >= nr_cpu_ids)
		return -EINVAL;
	st.cpu = array_index_nospec(st.cpu, nr_cpu_ids);
	if (!cpu_possible(st.cpu))
		return -EINVAL;
	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	rs = netlat_rings_locked();
	r = rs->ring[st.cpu];
	st.written = READ_ONCE(r->prod->written);
	st.dropped = READ_ONCE(r->prod->dropped);
	st.prod = smp_load_acquire(&r->prod->prod);
	st.cons = READ_ONCE(r->cons->cons);
	st.resyncs = r->resyncs;
	st.overwritten = READ_ONCE(r->prod->overwritten);
	st.filtered = netlat_filtered(st.cpu);
	mutex_unlock(&netlat_lock);
	return netlat_copy_out(uarg, &st, sizeof(st), usize);
}

/* Stop writers and wait until none is inside netlat_reserve/commit. */
static void netlat_stop_writers(void)
{
	if (!READ_ONCE(netlat_running))
		return;
	WRITE_ONCE(netlat_running, false);
	synchronize_rcu();
}

/*
 * New rings of @bytes in @mode, and a snapshot buffer to match if one
 * exists. Called stopped, under netlat_lock; nothing changes on failure.
 */
static int netlat_resize(u64 bytes, u32 mode)
{
	struct netlat_snapbuf *sb, *old_sb;
	struct netlat_rings *old, *new;
	int err;

	/* Cheap early answer; checked again, under the lock, at the swap. */
	if (atomic_read(&netlat_nr_maps))
		return -EBUSY;
	new = netlat_rings_alloc(bytes);
	if (IS_ERR(new))
		return PTR_ERR(new);
	err = netlat_snap_prepare_resize(bytes, &sb);
	if (err)
		goto err_rings;
	mutex_lock(&netlat_map_lock);
	if (atomic_read(&netlat_nr_maps)) {
		mutex_unlock(&netlat_map_lock);
		err = -EBUSY;
		goto err_snap;
	}
	old = netlat_rings_locked();
	rcu_assign_pointer(netlat_rings, new);
	WRITE_ONCE(netlat_mode, mode);
	old_sb = netlat_snap_swap_buf(sb);
	mutex_unlock(&netlat_map_lock);
	synchronize_rcu();	/* timer and pollers may still look */
	netlat_snapbuf_free(old_sb);
	netlat_rings_free(old);
	return 0;

err_snap:
	netlat_snapbuf_free(sb);
err_rings:
	netlat_rings_free(new);
	return err;
}

/* Same rings, another mode: emptied, counters and sequences reset. */
static int netlat_set_mode(u32 mode)
{
	int err = 0;

	mutex_lock(&netlat_map_lock);
	if (atomic_read(&netlat_nr_maps)) {
		err = -EBUSY;
	} else {
		WRITE_ONCE(netlat_mode, mode);
		netlat_rings_reset(netlat_rings_locked());
	}
	mutex_unlock(&netlat_map_lock);
	return err;
}

static long netlat_ioc_set_config(void __user *uarg)
{
	const u32 known = NETLAT_CONFIG_RING_BYTES | NETLAT_CONFIG_WATERMARK |
			  NETLAT_CONFIG_FLUSH_MS | NETLAT_CONFIG_MODE;
	struct netlat_config cfg;
	bool new_mode;
	u32 usize, mode;
	u64 bytes;
	int err;

	err = netlat_copy_arg(&cfg, sizeof(cfg), NETLAT_CONFIG_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if ((cfg.flags & ~known) || cfg.reserved || cfg.reserved2)
		return -EINVAL;
	if ((cfg.flags & NETLAT_CONFIG_MODE) &&
	    cfg.mode != NETLAT_MODE_STREAM && cfg.mode != NETLAT_MODE_OVERWRITE)
		return -EINVAL;
	if ((cfg.flags & NETLAT_CONFIG_RING_BYTES) &&
	    (!is_power_of_2(cfg.ring_bytes) ||
	     cfg.ring_bytes < NETLAT_RING_BYTES_MIN ||
	     cfg.ring_bytes > NETLAT_RING_BYTES_MAX ||
	     cfg.ring_bytes < PAGE_SIZE))
		return -EINVAL;
	if ((cfg.flags & NETLAT_CONFIG_FLUSH_MS) &&
	    cfg.flush_ms > NETLAT_FLUSH_MS_MAX)
		return -EINVAL;

	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	bytes = netlat_rings_locked()->bytes;
	if (cfg.flags & NETLAT_CONFIG_RING_BYTES)
		bytes = cfg.ring_bytes;
	err = -EINVAL;
	if ((cfg.flags & NETLAT_CONFIG_WATERMARK) &&
	    (!cfg.watermark || cfg.watermark > bytes))
		goto out;
	mode = netlat_mode;
	/* Setting the mode in force changes nothing, even while running. */
	new_mode = (cfg.flags & NETLAT_CONFIG_MODE) && cfg.mode != mode;
	if (new_mode)
		mode = cfg.mode;
	err = -EBUSY;
	if (((cfg.flags & NETLAT_CONFIG_RING_BYTES) || new_mode) &&
	    READ_ONCE(netlat_running))
		goto out;
	err = 0;
	if (cfg.flags & NETLAT_CONFIG_RING_BYTES) {
		err = netlat_resize(bytes, mode);
		if (err)
			goto out;
		if (netlat_watermark > bytes)
			WRITE_ONCE(netlat_watermark, bytes / 4);
	} else if (new_mode) {
		err = netlat_set_mode(mode);
		if (err)
			goto out;
	}
	/* A reader asleep for live data gets its -EBUSY now. */
	if (new_mode)
		wake_up_interruptible_all(&netlat_wq);
	if (cfg.flags & NETLAT_CONFIG_WATERMARK)
		WRITE_ONCE(netlat_watermark, cfg.watermark);
	if (cfg.flags & NETLAT_CONFIG_FLUSH_MS)
		WRITE_ONCE(netlat_flush_ms, cfg.flush_ms);
out:
	mutex_unlock(&netlat_lock);
	return err;
}

static long netlat_ioc_control(unsigned int cmd, void __user *uarg)
{
	struct netlat_control ctl;
	u32 usize;
	int err;

	err = netlat_copy_arg(&ctl, sizeof(ctl), NETLAT_CONTROL_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if (ctl.flags)
		return -EINVAL;

	if (mutex_lock_interruptible(&netlat_lock))
		return -ERESTARTSYS;
	switch (cmd) {
	case NETLAT_IOC_START:
		/* Writers see the reset ring state before they see "running". */
		smp_store_release(&netlat_running, true);
		break;
	case NETLAT_IOC_STOP:
		netlat_stop_writers();
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

	err = netlat_copy_arg(&pr, sizeof(pr), NETLAT_PROBES_SIZE_VER0, uarg,
			      &usize);
	if (err)
		return err;
	if ((pr.flags & ~NETLAT_PROBES_SET) || pr.reserved)
		return -EINVAL;
	if (pr.flags & NETLAT_PROBES_SET) {
		if (!netlat_capable())
			return -EPERM;
		err = netlat_probes_set(pr.enable);
		if (err)
			return err;
	}
	netlat_probes_state(&pr);
	return netlat_copy_out(uarg, &pr, sizeof(pr), usize);
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
		return netlat_ioc_snapshot(file,
				&((struct netlat_file *)file->private_data)->snap,
				uarg);
	case NETLAT_IOC_TRIGGERS:
		return netlat_ioc_triggers(uarg);
	case NETLAT_IOC_FILTERS:
		return netlat_ioc_filters(uarg);
	case NETLAT_IOC_SET_CONFIG:
	case NETLAT_IOC_START:
	case NETLAT_IOC_STOP:
	case NETLAT_IOC_RESET:
		/* The opener was checked; global changes check the caller too. */
		if (!netlat_capable())
			return -EPERM;
		if (cmd == NETLAT_IOC_SET_CONFIG)
			return netlat_ioc_set_config(uarg);
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

int netlat_dev_init(u64 ring_bytes)
{
	struct netlat_rings *rs;
	int err;

	rs = netlat_rings_alloc(ring_bytes);
	if (IS_ERR(rs))
		return PTR_ERR(rs);
	rcu_assign_pointer(netlat_rings, rs);
	netlat_watermark = ring_bytes / 4;
	init_irq_work(&netlat_wake_work, netlat_wake_work_fn);
	timer_setup(&netlat_flush_timer, netlat_flush_timer_fn, 0);
	err = netlat_flight_init();
	if (err)
		goto err_rings;

	err = misc_register(&netlat_misc);
	if (err)
		goto err_flight;
	WRITE_ONCE(netlat_running, true);
	return 0;

err_flight:
	netlat_flight_exit();
err_rings:
	RCU_INIT_POINTER(netlat_rings, NULL);
	netlat_rings_free(rs);
	return err;
}

void netlat_dev_exit(void)
{
	struct netlat_rings *rs;

	misc_deregister(&netlat_misc);
	netlat_stop_writers();
	/* No writer can fire a trigger now; the snapshot work reads the rings. */
	netlat_flight_exit();
	timer_shutdown_sync(&netlat_flush_timer);
	irq_work_sync(&netlat_wake_work);
	rs = rcu_dereference_protected(netlat_rings, true);
	RCU_INIT_POINTER(netlat_rings, NULL);
	netlat_rings_free(rs);
}
