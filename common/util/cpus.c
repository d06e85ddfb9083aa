/* SPDX-License-Identifier: MIT */
/* cpus.c: CPU lists and the CPUs this host allows (cpus.h). */
#include <stdio.h>
#include <string.h>

#include "util/cpus.h"

/* A number below CPU_SETSIZE at *p, its end in *end; -1 if none. */
static long
cpu_number(const char *p, const char **end)
{
	long v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v >= CPU_SETSIZE)
			return -1;
	}
	*end = p;
	return v;
}

int
cpus_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;
	long a, b, i;

	CPU_ZERO(set);
	if (s == NULL || *s == '\0')
		return -1;
	for (;;) {
		if ((a = cpu_number(p, &p)) < 0)
			goto bad;
		b = a;
		if (*p == '-' && (b = cpu_number(p + 1, &p)) < a)
			goto bad;
		for (i = a; i <= b; i++)
			CPU_SET((size_t)i, set);
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			goto bad;
	}
bad:
	CPU_ZERO(set);
	return -1;
}

char *
cpus_format(const cpu_set_t *set, char *buf, size_t cap)
{
	size_t len = 0;
	int i, j, n;

	buf[0] = '\0';
	for (i = 0; i < CPU_SETSIZE; i = j) {
		if (!CPU_ISSET((size_t)i, set)) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < CPU_SETSIZE && CPU_ISSET((size_t)j, set);
		    j++)
			;
		n = j - 1 == i ? snprintf(buf + len, cap - len, "%s%d",
		    len > 0 ? "," : "", i) : snprintf(buf + len, cap - len,
		    "%s%d-%d", len > 0 ? "," : "", i, j - 1);
		if (n < 0 || (size_t)n >= cap - len) {
			buf[len] = '\0';
			break;
		}
		len += (size_t)n;
	}
	return buf;
}

/* Reads file path's first line, a CPU list, into *set; 0 or -1 (also for
 * an empty list). */
static int
read_list(const char *path, cpu_set_t *set)
{
	char line[CPUS_LIST_MAX];
	FILE *f = fopen(path, "re");
	int ok;

	if (f == NULL)
		return -1;
	ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	line[strcspn(line, "\n")] = '\0';
	return cpus_parse(line, set);
}

/* The path of this process's cgroup for controller (NULL: cgroup v2's
 * "0::" line) from /proc/self/cgroup, into buf; 0 or -1. */
static int
cgroup_path(const char *controller, char *buf, size_t cap)
{
	char line[4096], *c, *p, *tok, *save;
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;

	if (f == NULL)
		return -1;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		/* ID:CONTROLLERS:PATH */
		if ((c = strchr(line, ':')) == NULL ||
		    (p = strchr(c + 1, ':')) == NULL)
			continue;
		*p++ = '\0';
		c++;
		if (controller == NULL) {
			found = strcmp(line, "0") == 0 && *c == '\0';
		} else {
			for (tok = strtok_r(c, ",", &save); tok != NULL &&
			    !found; tok = strtok_r(NULL, ",", &save))
				found = strcmp(tok, controller) == 0;
		}
		if (found && snprintf(buf, cap, "%s", p) >= (int)cap)
			found = 0;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Reads FILE in the cgroup folder root + cg, or in the nearest of its
 * parents that has it (a cgroup whose cpuset is not its own has none);
 * 0 with its path in path, or -1. */
static int
cgroup_list(const char *root, char *cg, const char *file, char *path,
	    size_t cap, cpu_set_t *set)
{
	char *slash;

	for (;;) {
		snprintf(path, cap, "%s%s%s%s", root, cg,
		    cg[strlen(cg) - 1] == '/' ? "" : "/", file);
		if (read_list(path, set) == 0)
			return 0;
		if ((slash = strrchr(cg, '/')) == NULL || slash == cg)
			break;
		*slash = '\0';
	}
	if (strcmp(cg, "/") == 0)
		return -1;
	snprintf(path, cap, "%s/%s", root, file);
	return read_list(path, set);
}

const char *
cpus_host(cpu_set_t *set)
{
	static char path[4200];
	char cg[4096];
	int i;

	if (cgroup_path(NULL, cg, sizeof cg) == 0 && cg[0] == '/' &&
	    cgroup_list("/sys/fs/cgroup", cg, "cpuset.cpus.effective", path,
	    sizeof path, set) == 0)
		return path;
	if (cgroup_path("cpuset", cg, sizeof cg) == 0 && cg[0] == '/' &&
	    cgroup_list("/sys/fs/cgroup/cpuset", cg, "cpuset.effective_cpus",
	    path, sizeof path, set) == 0)
		return path;
	snprintf(path, sizeof path, "/sys/devices/system/cpu/online");
	if (read_list(path, set) == 0)
		return path;
	CPU_ZERO(set);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET((size_t)i, set);
	return "";
}
