/* SPDX-License-Identifier: MIT */
/* env.h: the one table of the environment variables grm reads (name,
 * type, default, range, meaning), what reads them, and the source of the
 * ENVIRONMENT sections of the man pages (env_man.c). */
#ifndef GRM_ENV_H
#define GRM_ENV_H

#include <stddef.h>
#include <stdint.h>

enum env_id {
	ENV_MM,
	ENV_DEBUG,
	ENV_BLOCK_MS,
	ENV_POLICY,
	ENV_MODE,
	ENV_SIGNALS,
	ENV_LOCALMON,
	ENV_SEGSIZE,
	ENV_CHUNKSIZE,
	ENV_THRESHOLD,
	ENV_SPILL_MAX,
	ENV_LM_LINGER,
	ENV_LM_MM_TIMEOUT,
	ENV_LM_SILENT,
	ENV_PUSH_INTERVAL,
	ENV_HOSTNAME,
	ENV_LM_CPUS,
	ENV_RUNDIR,
	ENV_TMPDIR,
	/* the preload library and grm-run */
	ENV_THREADS,
	ENV_PRELOAD,
	ENV_MAINMON,
	/* function entry and exit (preload/pl_func.c) */
	ENV_FUNCTIONS,
	ENV_MIN_DURATION,
	/* the clock of a Local Monitor's segment (common/util/tsc.h) */
	ENV_CLOCK,
	ENV_TSC_CPUINFO,
	ENV_MM_LINK,
	ENV_COUNT
};

enum env_type {
	ENV_T_TEXT,		/* any string */
	ENV_T_FLAG,		/* set, not empty, not starting with 0 */
	ENV_T_CHOICE,		/* one of `choices`: its index */
	ENV_T_INT,		/* a decimal integer */
	ENV_T_SIZE,		/* bytes, K, M or G after */
	ENV_T_PERCENT,		/* a decimal integer, % after */
	ENV_T_SECONDS,		/* a decimal number */
	ENV_T_CPUS		/* a CPU list: 0-3,6 (util/cpus.h) */
};

struct env_var {
	const char	*name;
	enum env_type	type;
	const char	*def;		/* default, as text; NULL: none */
	const char	*choices;	/* ENV_T_CHOICE: "a b c" */
	double		min, max;	/* numbers */
	const char	*expected;	/* for num_msg: "a percentage (1 to
					   99)" */
	const char	*meaning;	/* roff, for the man pages */
};

extern const struct env_var env_vars[ENV_COUNT];

/* The variable's value, NULL if unset or empty. */
const char *env_get(enum env_id id);

/* ENV_T_FLAG: whether it is set, not empty, and not starting with 0. */
int env_flag(enum env_id id);

/*
 * The value of a number variable (its default if unset or empty), in *v:
 * 0, or -1 if it is not one of its type and range (*v is then the
 * default).  ENV_T_SECONDS: env_seconds.  Never prints: the caller says
 * why with env_msg.
 */
int env_u64(enum env_id id, uint64_t *v);
int env_seconds(enum env_id id, double *v);

/* ENV_T_CHOICE: the index of its value in `choices` (of the default if
 * unset or empty); -1 if it is none of them (*ix is then the default's). */
int env_choice(enum env_id id, int *ix);

/* "NAME=VALUE: not EXPECTED" (num_msg's shape) for a value that did not
 * parse; returns buf. */
const char *env_msg(enum env_id id, char *buf, size_t cap);

/*
 * Checks variables ids[0..n), or every variable of the table if ids is
 * NULL, before anything is made: 0 if each is unset, empty, or a value of
 * its type and range; else -1, with the first bad one's message (env_msg's
 * "NAME=VALUE: not EXPECTED") in msg.  A bad value is refused, never
 * replaced by the default: localmon exits, a traced process runs untraced.
 * Text and flag variables take any value.  Never prints.
 */
int env_check(const enum env_id *ids, size_t n, char *msg, size_t cap);

#endif /* GRM_ENV_H */
