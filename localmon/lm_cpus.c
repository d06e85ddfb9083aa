/* SPDX-License-Identifier: MIT */
/* lm_cpus.c: where the Local Monitor runs: the CPUs GRM_LM_CPUS names,
 * else, for an LM a traced process started, the CPUs the host allows less
 * those that process was pinned to, so that the LM does not compete with
 * a pinned writer (doc/ARCHITECTURE.md, "The Local Monitor's CPUs"). */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "lm.h"
#include "util/cpus.h"
#include "util/env.h"
#include "util/log.h"

int
lm_cpus_place(const struct lm_conf *c)
{
	cpu_set_t host, mine, want, both;
	const char *v = env_get(ENV_LM_CPUS), *src;
	char a[CPUS_LIST_MAX], b[CPUS_LIST_MAX], h[CPUS_LIST_MAX];
	int i;

	src = cpus_host(&host);
	if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
		if (v != NULL) {
			log_msg(GRM_LOG_FATAL, "GRM_LM_CPUS=%s: "
			    "sched_getaffinity: %s", v, strerror(errno));
			return -1;
		}
		log_warn("sched_getaffinity: %s; staying where it runs",
		    strerror(errno));
		return 0;
	}
	if (v != NULL) {
		/* Its syntax was checked with the environment (lm_conf.c). */
		(void)cpus_parse(v, &want);
		CPU_AND(&both, &want, &host);
		if (!CPU_EQUAL(&both, &want)) {
			log_msg(GRM_LOG_FATAL, "GRM_LM_CPUS=%s: not CPUs this "
			    "host allows (%s%s%s)", v, cpus_format(&host, a,
			    sizeof a), *src != '\0' ? ", from " : "", src);
			return -1;
		}
	} else if (c->spawned && c->successor == 0) {
		/* Inherited from the traced process that started it: the
		 * host's CPUs less those, or all of them if none is left. */
		CPU_ZERO(&want);
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET((size_t)i, &host) &&
			    !CPU_ISSET((size_t)i, &mine))
				CPU_SET((size_t)i, &want);
		CPU_AND(&both, &host, &mine);
		if (CPU_EQUAL(&both, &host))
			return 0;	/* not pinned */
		if (CPU_COUNT(&want) == 0)
			want = host;
	} else {
		return 0;	/* started by hand, or a successor: stays */
	}
	if (CPU_EQUAL(&want, &mine))
		return 0;
	if (sched_setaffinity(0, sizeof want, &want) != 0) {
		if (v != NULL) {
			log_msg(GRM_LOG_FATAL, "GRM_LM_CPUS=%s: "
			    "sched_setaffinity: %s", v, strerror(errno));
			return -1;
		}
		log_warn("cannot move to CPUs %s: sched_setaffinity: %s; "
		    "staying on %s", cpus_format(&want, a, sizeof a),
		    strerror(errno), cpus_format(&mine, b, sizeof b));
		return 0;
	}
	log_debug("runs on CPUs %s (was %s; the host allows %s)",
	    cpus_format(&want, a, sizeof a), cpus_format(&mine, b, sizeof b),
	    cpus_format(&host, h, sizeof h));
	return 0;
}

char *
lm_cpus_now(char *buf, size_t cap)
{
	cpu_set_t mine;

	if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
		buf[0] = '\0';
		return buf;
	}
	return cpus_format(&mine, buf, cap);
}
