/* SPDX-License-Identifier: MIT */
/* plan.h: the monitoring plan language (doc/plans.md): a rule "when
 * TRIGGER [in SCOPE] do ACTION, ... [once|N times] [interval D]" parsed
 * into a fixed-size structure, printed back canonically. */
#ifndef GRM_PLAN_H
#define GRM_PLAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Limits: plans come from users and over the wire (hostile input).  A
 * structure holds no pointer: its strings are (offset, length) in its own
 * pool, which a rule's text bounds, so a parsed rule owns nothing.
 */
#define PLAN_RULE_MAX		1024	/* bytes of one rule's text */
#define PLAN_FILE_MAX		(64 * 1024)	/* bytes of a plan file */
#define PLAN_RULES_MAX		64	/* rules in a plan (file or mainmon) */
#define PLAN_PREDS_MAX		8	/* "where" comparisons, and-ed */
#define PLAN_ACTS_MAX		8	/* actions of one rule */
#define PLAN_TARGETS_MAX	16	/* types or classes of enable/disable */
#define PLAN_STR_MAX		255	/* bytes of a string or a name */
#define PLAN_FIELDS_MAX		16	/* $1..$16 (REC_ARGS_MAX) */
#define PLAN_DUR_MAX	(30ull * 86400 * 1000000000)	/* 30 days, ns */
#define PLAN_RATE_MAX		1000000000000ull	/* events/s */
#define PLAN_TIMES_MAX		1000000	/* "N times" */

/* A string of the rule's pool. */
struct plan_str {
	uint16_t	off, len;
};

enum plan_op { PLAN_EQ, PLAN_NE, PLAN_LT, PLAN_LE, PLAN_GT, PLAN_GE };

/* One comparison "$field op value": the writer's table row (plans.md,
 * "Compiling a predicate"). */
struct plan_pred {
	uint8_t		field;		/* 1..PLAN_FIELDS_MAX */
	uint8_t		op;		/* enum plan_op */
	uint8_t		is_str;		/* value is str (EQ or NE only) */
	int64_t		num;
	struct plan_str	str;
};

enum plan_when {
	PLAN_W_EVENT = 1,	/* event EID [where PRED and ...] */
	PLAN_W_BLOCK,		/* block NAME longer DURATION */
	PLAN_W_RATE,		/* rate EID > RATE */
	PLAN_W_ABNORMAL,	/* abnormal end: signal, abort, exit != 0 */
	PLAN_W_LOSS,		/* loss */
	PLAN_W_AT,		/* at HH:MM[:SS] */
	PLAN_W_EVERY		/* every DURATION */
};

struct plan_trig {
	uint8_t		kind;		/* enum plan_when */
	uint8_t		npred;
	int32_t		eid;		/* EVENT, RATE */
	struct plan_pred pred[PLAN_PREDS_MAX];
	struct plan_str	name;		/* BLOCK */
	uint64_t	ns;		/* BLOCK, EVERY */
	uint64_t	rate;		/* RATE: events per second */
	uint32_t	at;		/* AT: seconds after midnight */
};

/* Which processes a rule watches: every set item must match. */
enum { PLAN_S_HOST = 1, PLAN_S_PROCESS = 2, PLAN_S_RANK = 4,
	PLAN_S_PID = 8, PLAN_S_THREAD = 16 };
struct plan_scope {
	uint8_t		has;		/* PLAN_S_* */
	struct plan_str	host, process;
	uint32_t	rank, pid, thread;
};

enum plan_do {
	PLAN_D_SNAPSHOT = 1,	/* snapshot [before D] [after D] */
	PLAN_D_ENABLE,		/* enable TARGET... [for D | until TRIG] */
	PLAN_D_DISABLE,		/* the same */
	PLAN_D_MARK,		/* mark [STRING] */
	PLAN_D_STOP,		/* stop the process */
	PLAN_D_CONTINUE,	/* continue it */
	PLAN_D_EXEC,		/* exec STRING (mainmon --allow-exec) */
	PLAN_D_ROTATE		/* rotate */
};

/* An event type (is_class 0: value is an eid) or a class (1: 0..254). */
struct plan_target {
	uint8_t		is_class;
	int32_t		value;
};

struct plan_act {
	uint8_t		kind;		/* enum plan_do */
	uint8_t		ntgt;
	uint8_t		until;		/* ENABLE/DISABLE: until the rule's
					   until trigger */
	struct plan_target tgt[PLAN_TARGETS_MAX];
	uint64_t	before, after;	/* SNAPSHOT, ns */
	uint64_t	for_ns;		/* ENABLE/DISABLE: 0 for ever */
	struct plan_str	str;		/* MARK (may be empty), EXEC */
};

struct plan_rule {
	struct plan_trig when;
	struct plan_scope scope;
	uint8_t		nact;
	uint8_t		has_until;
	struct plan_act	act[PLAN_ACTS_MAX];
	struct plan_trig until;		/* one per rule */
	uint32_t	times;		/* 0: every time */
	uint64_t	interval;	/* ns between firings, 0: none */
	uint16_t	pool_len;
	char		pool[PLAN_RULE_MAX];
};

/* Where a parse failed: 1-based line and byte column, and why. */
struct plan_err {
	unsigned	line, col;
	char		msg[160];
};

/*
 * Parses one rule from text[0..len) (no newline in it; a trailing
 * comment is allowed; at most PLAN_RULE_MAX bytes, and so is its
 * canonical form, plan_print's).  0, or -1 with *e filled.  Never
 * allocates.
 */
int plan_parse_rule(const char *text, size_t len, struct plan_rule *r,
		    struct plan_err *e);

/*
 * Parses a plan file: one rule per line, blank lines and "# comments"
 * skipped (add must not parse a plan file itself: the rule it is given
 * is the parser's).  Calls add(rule, line, arg) for each rule in order; add
 * returning non-zero stops with that error (e->msg set by add, e->line
 * set here).  0, or -1 with *e filled.  At most PLAN_RULES_MAX rules and
 * PLAN_FILE_MAX bytes.
 */
int plan_parse_file(const char *text, size_t len,
		    int (*add)(const struct plan_rule *, unsigned, void *,
			       struct plan_err *),
		    void *arg, struct plan_err *e);

/*
 * Reads plan file path (a regular file, at most PLAN_FILE_MAX bytes) and
 * parses it as plan_parse_file does; a rule with exec is refused unless
 * allow_exec.  0; -1 with the error in why as plan_err_format gives it;
 * -2 when the file cannot be read ("PATH: reason" in why).
 */
int plan_load(const char *path, int allow_exec,
	      int (*add)(const struct plan_rule *, unsigned, void *,
			 struct plan_err *),
	      void *arg, char *why, size_t cap);

/*
 * Prints r canonically into buf (always NUL-terminated when cap > 0).
 * Returns the length it needs (as snprintf); a rule printed is at most a
 * few times PLAN_RULE_MAX long (PLAN_PRINT_MAX fits any).
 */
#define PLAN_PRINT_MAX	8192
size_t plan_print(const struct plan_rule *r, char *buf, size_t cap);

/* 1 if a and b say the same (pool offsets aside), else 0. */
int plan_equal(const struct plan_rule *a, const struct plan_rule *b);

/* 1 if one of r's actions is exec. */
int plan_has_exec(const struct plan_rule *r);

/*
 * The error as a user sees it:
 *   plan: LINE:COL: MSG          (where NULL: a rule)
 *   WHERE:LINE:COL: MSG          (where: the file's name)
 *     the line
 *     ^
 * src is the whole text given (the line is found in it), NULL for the
 * first line only.  Returns what snprintf would.
 */
size_t plan_err_format(const struct plan_err *e, const char *where,
		       const char *src, size_t len, char *buf, size_t cap);

#endif /* GRM_PLAN_H */
