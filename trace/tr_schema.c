/* SPDX-License-Identifier: MIT */
/* tr_schema.c: the meta line table (tr_schema.h), the one place a meta
 * line's fields are written down for code. */
#include <string.h>

#include "tr_schema.h"

const struct tr_schema tr_schema[TR_M_N] = {
	[TR_M_MM] = { "#MM", NULL, "t", 0, { "id" } },
	[TR_M_CLOCK] = { "#CLOCK", NULL, "uu", 0,
	    { "realtime_ns", "monotonic_ns" } },
	[TR_M_HOST] = { "#HOST", NULL, "UIUt", 0,
	    { "node", "offset_ns", "lm_pid", "hostname" } },
	[TR_M_SYNC] = { "#SYNC", NULL, "UuIIuuUUuuuu", 5,
	    { "node", "at_ns", "offset_ns", "drift_ppb", "error_ns", "rtt_ns",
	    "samples", "model", "from_ns", "lo_ns", "hi_ns", "allow_ppb" } },
	[TR_M_ORDER] = { "#ORDER", NULL, "uuuu", 0,
	    { "late", "clamped", "forced", "held_max" } },
	[TR_M_CAUSAL] = { "#CAUSAL", NULL, "uuuuu", 1,
	    { "matched", "violations", "worst_ns", "unchecked", "beyond" } },
	[TR_M_DEF] = { "#DEF", NULL, "ibbssUU", 2,
	    { "eid", "class", "attr", "format", "description", "node",
	    "pid" } },
	[TR_M_PROC] = { "#PROC", NULL, "UUUtuis", 0,
	    { "node", "pid", "ppid", "how", "ts", "status", "name" } },
	[TR_M_LOSS] = { "#LOSS", NULL, "UUUuu", 0,
	    { "node", "pid", "tid", "count", "ts" } },
	[TR_M_STATS_COUNT] = { "#STATS", "count", "UU=iu", 0,
	    { "node", "pid", "kind", "eid", "n" } },
	[TR_M_STATS_RANGE] = { "#STATS", "range", "UU=iIuuuudd", 0,
	    { "node", "pid", "kind", "eid", "key", "n", "total_ns", "min_ns",
	    "max_ns", "mean_ns", "m2" } },
	[TR_M_CONTROL] = { "#CONTROL", NULL, "us", 0, { "ts", "command" } },
	[TR_M_COLLECT] = { "#COLLECT", NULL, "Uuu", 0,
	    { "n", "ts", "records" } },
	[TR_M_END] = { "#END", NULL, "u", 0, { "records" } },
	[TR_M_GIVENUP] = { "#GIVENUP", NULL, "Uut", 0,
	    { "node", "ts", "why" } },
	[TR_M_LATE] = { "#LATE", NULL, "Uu", 0, { "node", "count" } },
	[TR_M_MISSING] = { "#MISSING", NULL, "UuuuU", 0,
	    { "node", "ts", "held_bytes", "spilled_bytes", "known" } },
	[TR_M_PLAN_ADD] = { "#PLAN", "add", "=Uus", 0,
	    { "what", "n", "ts", "rule" } },
	[TR_M_PLAN_DEL] = { "#PLAN", "del", "=Uu", 0, { "what", "n", "ts" } },
	[TR_M_TSC] = { "#TSC", NULL, "Uuuuuuu", 0,
	    { "node", "tick0", "ns0", "mult", "error_ns", "span_ns",
	    "rate_ppb" } },
	[TR_M_CLOCKSTEP] = { "#CLOCKSTEP", NULL, "UuIuu", 0,
	    { "node", "ts", "step_ns", "host_lo_ns", "host_hi_ns" } },
	[TR_M_PLAN_FIRE] = { "#PLAN", "fire", "=UuuUUUiuus", 0,
	    { "what", "n", "ts", "k", "node", "pid", "tid", "eid", "missed",
	    "acted", "text" } },
	[TR_M_HEADER] = { "#GRM-TRACE", NULL, "u", 0, { "version" } },
};

const char *const tr_proc_words[5] = { "start", "exit", "killed", "exec",
	"gone" };

static int
same(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

int
tr_schema_find(const char *key, size_t n)
{
	int m;

	for (m = 1; m < TR_M_N; m++)
		if (same(key, n, tr_schema[m].key))
			return m;
	return 0;
}

int
tr_schema_word(int m, const char *w, size_t n)
{
	int k;

	/* The entries of a keyword need not be next to each other: kinds
	 * are added at the end (#PLAN fire came after #TSC). */
	for (k = 1; k < TR_M_N; k++)
		if (strcmp(tr_schema[k].key, tr_schema[m].key) == 0 &&
		    tr_schema[k].word != NULL && same(w, n, tr_schema[k].word))
			return k;
	return 0;
}

int
tr_schema_wordpos(int m)
{
	const char *e = strchr(tr_schema[m].kinds, '=');

	return e != NULL ? (int)(e - tr_schema[m].kinds) : -1;
}

int
tr_proc_word(const char *s, size_t n)
{
	int how;

	for (how = 0; how < 5; how++)
		if (same(s, n, tr_proc_words[how]))
			return how;
	return -1;
}
