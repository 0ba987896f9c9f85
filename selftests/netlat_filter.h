/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NETLAT_IOC_FILTERS for the tests: set, read back and the filtered
 * counters. Include netlat_util.h first.
 */
#ifndef NETLAT_FILTER_H
#define NETLAT_FILTER_H

/* NETLAT_IOC_FILTERS; the rules in force (or set) in *@nr_out. */
static inline int nl_filters(int fd, uint32_t flags, void *rules, uint32_t nr,
			     uint32_t rule_size, uint32_t *nr_out)
{
	struct netlat_filters f = {
		.flags = flags,
		.nr_rules = nr,
		.rule_size = rule_size,
		.rules = (uintptr_t)rules,
	};
	int ret = nl_ioctl(fd, NETLAT_IOC_FILTERS, &f, sizeof(f));

	if (!ret && nr_out)
		*nr_out = f.nr_rules;
	return ret;
}

/* Replace the rules with @nr rules at @r (0: none). */
static inline int nl_set_rules(int fd, struct netlat_filter_rule *r,
			       uint32_t nr)
{
	return nl_filters(fd, NETLAT_FILTERS_SET, r, nr, sizeof(*r), NULL);
}

/* Sum of netlat_cpu_stats.filtered over the first @nr_cpus CPUs. */
static inline uint64_t nl_filtered(int fd, unsigned int nr_cpus)
{
	struct netlat_cpu_stats st;
	uint64_t sum = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (!nl_get_stats(fd, cpu, &st))
			sum += st.filtered;
	return sum;
}

/*
 * After a filter test: no rule left behind (cleared, none read back), then
 * nl_restore(). 0, -EEXIST if rules stayed, or -errno.
 */
static inline int nl_filters_done(int fd, const struct netlat_info *def)
{
	uint32_t nr = 1;
	int ret = nl_set_rules(fd, NULL, 0);

	if (!ret)
		ret = nl_filters(fd, 0, NULL, 0, 64, &nr);
	if (!ret && nr)
		ret = -EEXIST;
	return ret ? ret : nl_restore(fd, def);
}

#endif /* NETLAT_FILTER_H */
