// SPDX-License-Identifier: GPL-2.0
/*
 * NETLAT_IOC_SET_CONFIG, all or nothing: every field is checked, then
 * everything the new configuration needs is allocated (the keys, the
 * rings and their snapshot buffer, both packet tables), and only then is
 * anything changed, by steps that cannot fail. A failure at any point
 * leaves the configuration in force whole.
 */
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/netlat.h>
#include "config.h"
#include "ring.h"
#include "flight.h"
#include "keys.h"
#include "probes.h"
#include "tracktbl.h"
#include "rxtrack.h"
#include "sktbl.h"
#include "uarg.h"

/* A configuration to be: what it sets, and the memory it will use. */
struct netlat_config_next {
	const struct netlat_config *cfg;
	u64 ring_bytes;
	u64 table_bytes;
	u64 slow_ns;
	u32 level;
	u32 mode;
	bool new_mode;
	struct netlat_keys *keys;	/* NETLAT_CONFIG_KEYS: to install */
	struct netlat_rings *rings;	/* NETLAT_CONFIG_RING_BYTES: new */
	struct netlat_snapbuf *snapbuf;	/* their snapshot buffer, or NULL */
	struct netlat_skt_next tx, rx;	/* the packet tables */
};

/*
 * Every field on its own, before anything is looked at or allocated (the
 * flags when the argument was copied in).
 */
static int netlat_config_check(const struct netlat_config *cfg, u32 usize)
{
	if (cfg->reserved || cfg->reserved2 || cfg->reserved3)
		return -EINVAL;
	if (cfg->flags & NETLAT_CONFIG_ACKS ?
	    usize < offsetofend(struct netlat_config, acks) || cfg->acks > 1 :
	    cfg->acks)
		return -EINVAL;
	if (cfg->flags & NETLAT_CONFIG_SAMPLE ?
	    usize < offsetofend(struct netlat_config, sample) ||
	    cfg->sample > NETLAT_SAMPLE_MAX ||
	    (cfg->sample && !is_power_of_2(cfg->sample)) : cfg->sample)
		return -EINVAL;
	if ((cfg->flags & NETLAT_CONFIG_LEVEL) &&
	    cfg->level != NETLAT_LEVEL_EVENTS &&
	    cfg->level != NETLAT_LEVEL_PACKETS)
		return -EINVAL;
	if ((cfg->flags & NETLAT_CONFIG_MODE) &&
	    cfg->mode != NETLAT_MODE_STREAM &&
	    cfg->mode != NETLAT_MODE_OVERWRITE)
		return -EINVAL;
	if ((cfg->flags & NETLAT_CONFIG_RING_BYTES) &&
	    (!is_power_of_2(cfg->ring_bytes) ||
	     cfg->ring_bytes < NETLAT_RING_BYTES_MIN ||
	     cfg->ring_bytes > NETLAT_RING_BYTES_MAX ||
	     cfg->ring_bytes < PAGE_SIZE))
		return -EINVAL;
	if ((cfg->flags & NETLAT_CONFIG_FLUSH_MS) &&
	    cfg->flush_ms > NETLAT_FLUSH_MS_MAX)
		return -EINVAL;
	/* a caller too old to have the field cannot mean it */
	if ((cfg->flags & NETLAT_CONFIG_TABLE_BYTES) &&
	    (usize < offsetofend(struct netlat_config, table_bytes) ||
	     cfg->table_bytes < NETLAT_TABLE_BYTES_MIN ||
	     cfg->table_bytes > NETLAT_TABLE_BYTES_MAX))
		return -EINVAL;
	if ((cfg->flags & NETLAT_CONFIG_KEYS) &&
	    (usize < offsetofend(struct netlat_config, max_keys) ||
	     (cfg->key_by & ~NETLAT_KEY_ALL) ||
	     cfg->max_keys > NETLAT_MAX_KEYS_MAX))
		return -EINVAL;
	return 0;
}

/*
 * Under netlat_lock: the values in force where @n->cfg leaves them, and
 * whether they can change now.
 */
static int netlat_config_resolve(struct netlat_config_next *n)
{
	const struct netlat_config *cfg = n->cfg;

	lockdep_assert_held(&netlat_lock);
	n->ring_bytes = cfg->flags & NETLAT_CONFIG_RING_BYTES ?
			cfg->ring_bytes : netlat_rings_locked()->bytes;
	if ((cfg->flags & NETLAT_CONFIG_WATERMARK) &&
	    (!cfg->watermark || cfg->watermark > n->ring_bytes))
		return -EINVAL;
	n->table_bytes = cfg->flags & NETLAT_CONFIG_TABLE_BYTES ?
			 cfg->table_bytes : READ_ONCE(netlat_table_bytes);
	/*
	 * A replace holds the old tables and the new together: a budget of
	 * at most a quarter of RAM keeps that within half, as the rings are.
	 */
	if ((n->table_bytes >> PAGE_SHIFT) > totalram_pages() / 4)
		return -ENOMEM;
	n->level = cfg->flags & NETLAT_CONFIG_LEVEL ?
		   cfg->level : READ_ONCE(netlat_track_level);
	n->slow_ns = cfg->flags & NETLAT_CONFIG_SLOW_NS ?
		     cfg->slow_ns : netlat_track_slow_ns();
	/* Setting the mode in force changes nothing, even while running. */
	n->mode = netlat_mode;
	n->new_mode = (cfg->flags & NETLAT_CONFIG_MODE) && cfg->mode != n->mode;
	if (n->new_mode)
		n->mode = cfg->mode;
	if ((cfg->flags & NETLAT_CONFIG_RING_BYTES) || n->new_mode) {
		if (READ_ONCE(netlat_running))
			return -EBUSY;
		/* cheap early answer; the commit checks again, locked */
		if (atomic_read(&netlat_nr_maps))
			return -EBUSY;
	}
	return 0;
}

/*
 * Under netlat_lock: the new rings and snapshot buffer, then both tables
 * (their homes locked from here to the commit). Nothing is in force yet;
 * on failure nothing is held.
 */
static int netlat_config_prepare(struct netlat_config_next *n)
{
	int err;

	if (n->cfg->flags & NETLAT_CONFIG_RING_BYTES) {
		n->rings = netlat_rings_alloc(n->ring_bytes);
		if (IS_ERR(n->rings)) {
			err = PTR_ERR(n->rings);
			n->rings = NULL;
			return err;
		}
		err = netlat_snap_prepare_resize(n->ring_bytes, &n->snapbuf);
		if (err)
			goto err_rings;
	}
	err = netlat_track_prepare(n->level, n->table_bytes, &n->tx);
	if (err)
		goto err_snapbuf;
	err = netlat_rxtrack_prepare(n->level, n->table_bytes, &n->rx);
	if (err)
		goto err_tx;
	return 0;

err_tx:
	netlat_skt_home_abort(&n->tx);
err_snapbuf:
	netlat_snapbuf_free(n->snapbuf);
	n->snapbuf = NULL;
err_rings:
	netlat_rings_free(n->rings);
	n->rings = NULL;
	return err;
}

static void netlat_config_abort(struct netlat_config_next *n)
{
	netlat_skt_home_abort(&n->rx);
	netlat_skt_home_abort(&n->tx);
	netlat_snapbuf_free(n->snapbuf);
	netlat_rings_free(n->rings);
}

/*
 * The rings first: a mapping made since the early check refuses them,
 * and nothing has changed yet. -EBUSY then; from here on nothing fails.
 */
static int netlat_config_commit_rings(struct netlat_config_next *n)
{
	struct netlat_snapbuf *old_sb = NULL;
	struct netlat_rings *old = NULL;

	if (!n->rings && !n->new_mode)
		return 0;
	mutex_lock(&netlat_map_lock);
	if (atomic_read(&netlat_nr_maps)) {
		mutex_unlock(&netlat_map_lock);
		return -EBUSY;
	}
	if (n->rings) {
		old = netlat_rings_replace(n->rings, n->mode);
		old_sb = netlat_snap_swap_buf(n->snapbuf);
	} else {
		netlat_rings_set_mode_locked(n->mode);
	}
	mutex_unlock(&netlat_map_lock);
	if (old) {
		synchronize_rcu();	/* timer and pollers may still look */
		netlat_snapbuf_free(old_sb);
		netlat_rings_free(old);
		if (netlat_watermark > n->ring_bytes)
			WRITE_ONCE(netlat_watermark, n->ring_bytes / 4);
	}
	/* A reader asleep for live data gets its -EBUSY now. */
	if (n->new_mode)
		netlat_wake_all();
	return 0;
}

/* Under netlat_lock, prepared, the rings in force: the rest, infallibly. */
static void netlat_config_commit(struct netlat_config_next *n)
{
	const struct netlat_config *cfg = n->cfg;

	if (cfg->flags & NETLAT_CONFIG_WATERMARK)
		WRITE_ONCE(netlat_watermark, cfg->watermark);
	if (cfg->flags & NETLAT_CONFIG_FLUSH_MS)
		WRITE_ONCE(netlat_flush_ms, cfg->flush_ms);
	/* both homes locked: a group going on next builds within it */
	WRITE_ONCE(netlat_table_bytes, n->table_bytes);
	netlat_track_commit(n->level, n->slow_ns, &n->tx);
	netlat_rxtrack_commit(n->level, &n->rx);
	if (cfg->flags & NETLAT_CONFIG_SAMPLE)
		netlat_track_set_sample(cfg->sample);
	if (cfg->flags & NETLAT_CONFIG_ACKS)
		netlat_track_set_acks(cfg->acks);
	if (cfg->flags & NETLAT_CONFIG_KEYS) {
		netlat_keys_install(n->keys);
		n->keys = NULL;
	}
}

static int netlat_config_set(const struct netlat_config *cfg, u32 usize)
{
	struct netlat_config_next n = { .cfg = cfg };
	u32 level_in_force;
	int err;

	err = netlat_config_check(cfg, usize);
	if (err)
		return err;
	/* the keys' memory outside the lock: their table can be large */
	if (cfg->flags & NETLAT_CONFIG_KEYS) {
		n.keys = netlat_keys_prepare(cfg->key_by, cfg->max_keys);
		if (IS_ERR(n.keys))
			return PTR_ERR(n.keys);
	}
	if (mutex_lock_interruptible(&netlat_lock)) {
		err = -ERESTARTSYS;
		goto out_keys;
	}
	level_in_force = READ_ONCE(netlat_track_level);
	err = netlat_config_resolve(&n);
	if (err)
		goto out_unlock;
	/* before the tables' locks: the registry's is taken before them */
	if (cfg->flags & NETLAT_CONFIG_LEVEL) {
		err = netlat_probes_level_begin(n.level);
		if (err)
			goto out_unlock;
	}
	err = netlat_config_prepare(&n);
	if (err)
		goto out_level;
	err = netlat_config_commit_rings(&n);
	if (err) {
		netlat_config_abort(&n);
		goto out_level;
	}
	netlat_config_commit(&n);
	level_in_force = n.level;
out_level:
	if (cfg->flags & NETLAT_CONFIG_LEVEL)
		netlat_probes_level_end(level_in_force);
out_unlock:
	mutex_unlock(&netlat_lock);
out_keys:
	netlat_keys_discard(n.keys);
	return err;
}

long netlat_config_ioc(void __user *uarg)
{
	const u32 known = NETLAT_CONFIG_RING_BYTES | NETLAT_CONFIG_WATERMARK |
			  NETLAT_CONFIG_FLUSH_MS | NETLAT_CONFIG_MODE |
			  NETLAT_CONFIG_LEVEL | NETLAT_CONFIG_SLOW_NS |
			  NETLAT_CONFIG_TABLE_BYTES | NETLAT_CONFIG_KEYS |
			  NETLAT_CONFIG_SAMPLE | NETLAT_CONFIG_ACKS;
	struct netlat_config cfg;
	u32 usize;
	int err;

	err = netlat_get_arg(cfg, NETLAT_CONFIG_SIZE_VER0, known, uarg, &usize);
	return err ?: netlat_config_set(&cfg, usize);
}
