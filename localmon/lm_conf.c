/* SPDX-License-Identifier: MIT */
/* lm_conf.c: localmon's options and environment, read into one struct and
 * every value checked before the LM makes anything. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lm.h"
#include "rec/rec.h"
#include "util/env.h"
#include "util/log.h"
#include "util/num.h"
#include "util/sha256.h"

/* GRM_POLICY's choices (util/env.c) are the segment's policies. */
_Static_assert(SEG_POLICY_BLOCK == 0 && SEG_POLICY_DISCARD == 1 &&
    SEG_POLICY_OVERWRITE == 2, "GRM_POLICY's choices");

static void
usage(FILE *f)
{
	fprintf(f, "usage: localmon [-d] [--linger SECONDS] "
	    "[--mm HOST:PORT:TOKEN|@IDFILE]\n"
	    "(without --mm, the identifier is taken from GRM_MM)\n");
}

/* Logs msg, a bad value's message; returns 1, localmon's exit status. */
static int
lm_conf_bad(const char *msg)
{
	log_msg(GRM_LOG_FATAL, "%s", msg);
	return 1;
}

/* The checks the table cannot make: a chunk a multiple of 8, a segment
 * that holds two chunks and that this host's memory holds.  0 or 1. */
static int
lm_conf_sizes(const struct lm_conf *c)
{
	char msg[NUM_MSG_MAX], what[96];
	const char *s;
	uint64_t mem;
	long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);

	if (c->chunksize % REC_ALIGN != 0)
		return lm_conf_bad(env_msg(ENV_CHUNKSIZE, msg, sizeof msg));
	s = env_get(ENV_SEGSIZE) != NULL ? env_get(ENV_SEGSIZE) :
	    env_vars[ENV_SEGSIZE].def;
	if (c->segsize < seg_size_for(2, (uint32_t)c->chunksize)) {
		snprintf(what, sizeof what, "a size that holds two chunks "
		    "(%zu bytes or more)", seg_size_for(2,
		    (uint32_t)c->chunksize));
		return lm_conf_bad(num_msg(msg, sizeof msg, "GRM_SEGSIZE", s,
		    what));
	}
	mem = pages > 0 && pg > 0 ? (uint64_t)pages * (uint64_t)pg : 0;
	if (mem > 0 && c->segsize > mem) {
		snprintf(what, sizeof what, "a size this host's memory holds "
		    "(%lluM or less)", (unsigned long long)(mem >> 20));
		return lm_conf_bad(num_msg(msg, sizeof msg, "GRM_SEGSIZE", s,
		    what));
	}
	return 0;
}

int
lm_conf_read(struct lm_conf *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mm", required_argument, NULL, 'm' },
		{ "lock-fd", required_argument, NULL, 'L' },
		{ "spawned", no_argument, NULL, 'S' },
		{ "successor", required_argument, NULL, 'G' },
		{ "linger", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *why, *idarg = NULL, *linger = NULL;
	char idline[MMID_MAX], msg[NUM_MSG_MAX];
	uint64_t u;
	int o;

	memset(c, 0, sizeof *c);
	c->lockfd = -1;
	while ((o = getopt_long(argc, argv, "dm:l:h", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			c->debug = 1;
			break;
		case 'm':
			idarg = optarg;
			break;
		case 'L':
			if (num_parse_u64(optarg, 0, INT_MAX, &u) != 0)
				return lm_conf_bad(num_msg(msg, sizeof msg,
				    "--lock-fd", optarg, "a descriptor"));
			c->lockfd = (int)u;
			break;
		case 'S':
			c->spawned = 1;
			break;
		case 'G':
			if (num_parse_u64(optarg, 0, LM_SUCCESSOR_MAX, &u) != 0)
				return lm_conf_bad(num_msg(msg, sizeof msg,
				    "--successor", optarg, "a count of "
				    "successors"));
			c->successor = (unsigned)u;
			break;
		case 'l':
			linger = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (idarg == NULL)
		idarg = env_get(ENV_MM);
	if (idarg == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (linger != NULL && num_parse_double(linger, 0, 86400,
	    &c->linger) != 0)
		return lm_conf_bad(num_msg(msg, sizeof msg, "--linger",
		    linger, "a number of seconds (0 to 86400)"));
	/* Every variable of the table, not only ours: a bad setting of the
	 * job is refused here as in the traced processes. */
	if (env_check(NULL, 0, msg, sizeof msg) != 0)
		return lm_conf_bad(msg);
	if (linger == NULL)
		(void)env_seconds(ENV_LM_LINGER, &c->linger);
	(void)env_seconds(ENV_LM_MM_TIMEOUT, &c->mm_timeout);
	(void)env_u64(ENV_SEGSIZE, &c->segsize);
	(void)env_u64(ENV_CHUNKSIZE, &c->chunksize);
	(void)env_u64(ENV_THRESHOLD, &c->threshold);
	(void)env_u64(ENV_SPILL_MAX, &c->spill_max);
	(void)env_u64(ENV_LM_SILENT, &c->silent_s);
	(void)env_seconds(ENV_PUSH_INTERVAL, &c->push_s);
	(void)env_choice(ENV_POLICY, &c->policy);
	(void)env_choice(ENV_CLOCK, &c->clock);
	if (lm_conf_sizes(c) != 0)
		return 1;
	/* The token is never written anywhere: messages show HOST:PORT. */
	if (mmid_read(idarg, idline, sizeof idline, &why) != 0) {
		log_msg(GRM_LOG_FATAL, "%s: %s", idarg, why);
		return 1;
	}
	o = mmid_parse(idline, &c->mmid, &why);
	hmac_wipe(idline, sizeof idline);
	if (o != 0) {
		log_msg(GRM_LOG_FATAL, "main monitor identifier: %s", why);
		return 1;
	}
	return -1;
}

