/* SPDX-License-Identifier: MIT */
/* cpus.h: sets of CPUs: a CPU list ("0-3,6") parsed strictly and written
 * back, and the CPUs this host lets a process use (its cgroup's cpuset,
 * else the online CPUs).  For GRM_LM_CPUS and the Local Monitor's place
 * (localmon/lm_cpus.c). */
#ifndef GRM_CPUS_H
#define GRM_CPUS_H

#include <sched.h>
#include <stddef.h>

/* Room for the longest list cpus_format writes of a set of CPU_SETSIZE
 * CPUs (alternate CPUs: "0,2,4,...,1022"). */
#define CPUS_LIST_MAX	4096

/*
 * Parses s, a CPU list: items separated by commas, each a CPU number N or
 * a range N-M with N <= M, decimal, below CPU_SETSIZE; no space, no sign,
 * no empty item.  0 with the set in *set; -1 (and *set emptied) if s is
 * not such a list.  Nothing is printed.
 */
int cpus_parse(const char *s, cpu_set_t *set);

/* Writes set as a CPU list ("0-3,6"; "" for none) into buf (cap > 0,
 * truncated if need be).  Returns buf. */
char *cpus_format(const cpu_set_t *set, char *buf, size_t cap);

/*
 * The CPUs this host allows this process, by its cgroup: cgroup v2's
 * cpuset.cpus.effective of the process's cgroup (/proc/self/cgroup's "0::"
 * line, under /sys/fs/cgroup), else cgroup v1's cpuset.effective_cpus
 * (its "cpuset" line, under /sys/fs/cgroup/cpuset), else the online CPUs
 * (/sys/devices/system/cpu/online), else every CPU below CPU_SETSIZE.
 * Always fills *set with at least one CPU; returns the file it came from
 * (a static string: "" for the last case).
 */
const char *cpus_host(cpu_set_t *set);

#endif /* GRM_CPUS_H */
