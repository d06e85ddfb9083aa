/* SPDX-License-Identifier: MIT */
/* tr_schema.h: the one table of the trace file's meta lines (doc/formats.md
 * 1.3): keyword, field kinds and field names, used by every writer and
 * every reader. */
#ifndef GRM_TR_SCHEMA_H
#define GRM_TR_SCHEMA_H

#include <stddef.h>

/*
 * The meta line types, in the order of the public kinds of <grm/trace.h>
 * (GRMTRACE_MM ... GRMTRACE_PLAN_FIRE), which have the same values; 0 is a
 * record line.  TR_M_HEADER, the first line, is not returned by readers.
 */
enum tr_m {
	TR_M_MM = 1,
	TR_M_CLOCK,
	TR_M_HOST,
	TR_M_SYNC,
	TR_M_ORDER,
	TR_M_CAUSAL,
	TR_M_DEF,
	TR_M_PROC,
	TR_M_LOSS,
	TR_M_STATS_COUNT,
	TR_M_STATS_RANGE,
	TR_M_CONTROL,
	TR_M_COLLECT,
	TR_M_END,
	TR_M_GIVENUP,
	TR_M_LATE,
	TR_M_MISSING,
	TR_M_PLAN_ADD,		/* #PLAN add: a monitoring plan's rule */
	TR_M_PLAN_DEL,		/* #PLAN del: removed */
	TR_M_TSC,		/* #TSC: a host's TSC calibration */
	TR_M_CLOCKSTEP,		/* #CLOCKSTEP: a host's clock stepped */
	TR_M_PLAN_FIRE,		/* #PLAN fire: a rule fired */
	TR_M_HEADER,		/* #GRM-TRACE <version> */
	TR_M_N
};

#define TR_FIELDS_MAX	12	/* most fields of a meta line */
#define TR_SYNC_FIELDS	12	/* of a #SYNC line with its model number */

/*
 * One meta line type.  kinds has one letter per field: U u32, u u64, b u8
 * (written as u64 where the format has no u8), i i32, I i64, d double,
 * t token, s string, and = the literal word `word` (a token), which tells
 * lines of one keyword apart (#STATS count, #STATS range).  The last nopt
 * fields may be left out (the scope of #DEF).  names[i] names field i as
 * doc/formats.md does.
 */
struct tr_schema {
	const char	*key;
	const char	*word;
	const char	*kinds;
	unsigned	nopt;
	const char	*names[TR_FIELDS_MAX];
};

extern const struct tr_schema tr_schema[TR_M_N];

/* The words of a #PROC line's how field, by TAPE_PROC_* (tape.h). */
extern const char *const tr_proc_words[5];

/* The TR_M_* of keyword key[0..n) and word (NULL: the first entry of the
 * keyword); 0 if unknown. */
int tr_schema_find(const char *key, size_t n);
/* The entry of the same keyword as m (anywhere in the table) whose word
 * is w[0..n), or 0. */
int tr_schema_word(int m, const char *w, size_t n);
/* The index of the = field of m, or -1. */
int tr_schema_wordpos(int m);
/* The TAPE_PROC_* of a #PROC line's word s[0..n), or -1. */
int tr_proc_word(const char *s, size_t n);

#endif /* GRM_TR_SCHEMA_H */
