/* SPDX-License-Identifier: MIT */
/* mm_ctl.c: grmctl's commands, runtime control of what processes record
 * (enable, disable, filter), and the statistics of statistics mode. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

static const struct {
	const char	*name;
	unsigned	cls;
} class_names[] = {
	{ "procedure", REC_CLASS_PROCEDURE },
	{ "event", REC_CLASS_EVENT },
	{ "string", REC_CLASS_STRING },
	{ "message", REC_CLASS_MESSAGE },
	{ "user", REC_CLASS_USER },
};

/*
 * Parses the argument of enable/disable: a class name, "class:N", an
 * event id, or "all".  Sets *cls (0..254) or *eid; returns 1 for a class,
 * 2 for an event id, 3 for all, or -1.
 */
static int
parse_target(const char *arg, unsigned *cls, int32_t *eid)
{
	char *end;
	long v;
	size_t i;

	if (strcmp(arg, "all") == 0)
		return 3;
	for (i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
		if (strcmp(arg, class_names[i].name) == 0) {
			*cls = class_names[i].cls;
			return 1;
		}
	if (strncmp(arg, "class:", 6) == 0) {
		errno = 0;
		v = strtol(arg + 6, &end, 10);
		if (errno != 0 || end == arg + 6 || *end != '\0' || v < 0 ||
		    v > 254)
			return -1;
		*cls = (unsigned)v;
		return 1;
	}
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < -REC_EID_BIAS ||
	    v >= (long)REC_EID_BITS - REC_EID_BIAS)
		return -1;
	*eid = (int32_t)v;
	return 2;
}

void
mm_set_bit(uint32_t *w, uint32_t b, int on)
{
	if (on)
		w[b / 32] |= 1u << (b % 32);
	else
		w[b / 32] &= ~(1u << (b % 32));
}

/* enable/disable ARG: changes mm->ctl; returns 0, or -1 with *why. */
static int
ctl_switch(struct mm *mm, const char *arg, int enable, const char **why)
{
	unsigned cls = 0;
	int32_t eid = 0;

	switch (parse_target(arg, &cls, &eid)) {
	case 1:
		mm_set_bit(mm->ctl.cls_off, cls, !enable);
		return 0;
	case 2:
		mm_set_bit(mm->ctl.eid_off, REC_EID_BIT(eid), !enable);
		return 0;
	case 3:
		if (!enable) {
			*why = "\"disable all\" is not a thing: use stop, or "
			    "disable classes";
			return -1;
		}
		memset(mm->ctl.cls_off, 0, sizeof mm->ctl.cls_off);
		memset(mm->ctl.eid_off, 0, sizeof mm->ctl.eid_off);
		mm->ctl.filter[0] = '\0';
		return 0;
	}
	*why = "expected a class (procedure, event, string, message, user, "
	    "class:N), an event id, or all";
	return -1;
}

void
mm_command(struct mm *mm, struct mm_conn *ctl, const char *line)
{
	char verb[32], text[WIRE_STR_MAX];
	const char *arg, *why = NULL;
	size_t vl;

	vl = strcspn(line, " ");
	if (vl >= sizeof verb)
		vl = sizeof verb - 1;
	memcpy(verb, line, vl);
	verb[vl] = '\0';
	arg = line + strcspn(line, " ");
	while (*arg == ' ')
		arg++;
	if (strcmp(verb, "snapshot") == 0 && *arg == '\0')
		mm_round(mm, ctl, MM_SNAPSHOT, NULL);
	else if (strcmp(verb, "live") == 0 && *arg == '\0')
		mm_round(mm, ctl, MM_SNAPSHOT, "live");
	else if (strcmp(verb, "stop") == 0 && *arg == '\0')
		mm_round(mm, ctl, MM_STOP, NULL);
	else if (strcmp(verb, "stats") == 0 && *arg == '\0')
		mm_round(mm, ctl, MM_STATS, NULL);
	else if (strcmp(verb, "probe") == 0 && *arg == '\0')
		mm_round(mm, ctl, MM_PROBE, NULL);
	else if (strcmp(verb, "status") == 0 && *arg == '\0')
		mm_status(mm, ctl);
	else if ((strcmp(verb, "enable") == 0 ||
	    strcmp(verb, "disable") == 0) && *arg != '\0') {
		if (ctl_switch(mm, arg, verb[0] == 'e', &why) != 0) {
			snprintf(text, sizeof text, "%s %.100s: %s", verb, arg,
			    why);
			mm_ctl_reply(ctl, 1, text);
			return;
		}
		mm_round(mm, ctl, MM_CONTROL, line);
	} else if (strcmp(verb, "filter") == 0) {
		if (strlen(arg) >= sizeof mm->ctl.filter) {
			snprintf(text, sizeof text, "filter: longer than %zu "
			    "bytes", sizeof mm->ctl.filter - 1);
			mm_ctl_reply(ctl, 1, text);
			return;
		}
		snprintf(mm->ctl.filter, sizeof mm->ctl.filter, "%s", arg);
		mm_round(mm, ctl, MM_CONTROL, line);
	} else if (strcmp(verb, "file") == 0 && *arg != '\0')
		mm_rotate(mm, ctl, arg);
	else if (strcmp(verb, "plan") == 0)
		mm_plan_command(mm, ctl, arg);
	else {
		snprintf(text, sizeof text, "unknown command \"%.100s\" "
		    "(snapshot, live, stop, status, stats, probe, enable X, "
		    "disable X, filter [SUBSTRING], file NEWNAME, plan add "
		    "RULE|list|del N)", line);
		mm_ctl_reply(ctl, 1, text);
	}
}

/* ---- statistics ---- */

/* What a statistics record is kept by: no padding (hmap compares the
 * bytes). */
struct stat_key {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	kind;
	int32_t		eid;
	uint32_t	zero;
	int64_t		key;
};

/* The hash the table always had: the same order of a process's threads
 * in the merge (stats_merged). */
static uint32_t
stat_hash(const void *key)
{
	struct stat_key k;
	uint64_t h = 1469598103934665603ull;

	memcpy(&k, key, sizeof k);
	h = (h ^ k.node) * 1099511628211ull;
	h = (h ^ k.pid) * 1099511628211ull;
	h = (h ^ k.tid) * 1099511628211ull;
	h = (h ^ k.kind) * 1099511628211ull;
	h = (h ^ (uint32_t)k.eid) * 1099511628211ull;
	h = (h ^ (uint64_t)k.key) * 1099511628211ull;
	return (uint32_t)(h ^ h >> 32);
}

static const struct hmap_type stats_type = {
	sizeof(struct stat_key), sizeof(struct mm_stat), 256, stat_hash
};

void
mm_stats_put(struct mm *mm, uint32_t node, uint32_t pid, uint32_t tid,
	     const struct rec_stats *st)
{
	struct hmap *s = &mm->stats.map;
	struct stat_key k = { node, pid, tid, st->kind, st->eid, 0, st->key };
	struct mm_stat *e;
	int added;

	if (s->type == NULL)
		hmap_init(s, &stats_type);
	if ((e = hmap_put(s, &k, &added)) == NULL) {
		log_warn("statistics: out of memory");
		return;
	}
	if (added) {
		e->node = node;
		e->pid = pid;
		e->tid = tid;
		e->kind = st->kind;
		e->eid = st->eid;
		e->key = st->key;
	}
	/* Each record holds the thread's totals so far: keep the latest. */
	if (st->r.count >= e->r.count)
		e->r = st->r;
}

void
mm_stats_free(struct mm *mm)
{
	struct mm_bname *b, *next;

	hmap_free(&mm->stats.map);
	for (b = mm->bnames; b != NULL; b = next) {
		next = b->next;
		free(b->name);
		free(b);
	}
	mm->bnames = NULL;
	mm->nbnames = 0;
}

#define MM_BNAMES_MAX	4096

void
mm_block_name(struct mm *mm, int32_t bid, const char *name, size_t len)
{
	struct mm_bname *b;

	for (b = mm->bnames; b != NULL; b = b->next)
		if (b->bid == bid)
			break;
	if (b == NULL) {
		if (mm->nbnames == MM_BNAMES_MAX ||
		    (b = calloc(1, sizeof *b)) == NULL)
			return;
		b->bid = bid;
		b->next = mm->bnames;
		mm->bnames = b;
		mm->nbnames++;
	}
	free(b->name);
	b->name = strndup(name, len);
}

static const char *
block_name(struct mm *mm, int64_t bid)
{
	struct mm_bname *b;

	for (b = mm->bnames; b != NULL; b = b->next)
		if (b->bid == bid && b->name != NULL)
			return b->name;
	return "";
}

static int
stat_cmp(const void *a, const void *b)
{
	const struct mm_stat *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->eid != y->eid)
		return x->eid < y->eid ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return 0;
}

/* Merges b into a (Chan et al.'s pairwise update of mean and m2). */
static void
range_merge(struct rec_range *a, const struct rec_range *b)
{
	double delta, n;

	if (b->count == 0)
		return;
	if (a->count == 0) {
		*a = *b;
		return;
	}
	n = (double)a->count + (double)b->count;
	delta = b->mean - a->mean;
	a->mean += delta * (double)b->count / n;
	a->m2 += b->m2 + delta * delta * (double)a->count *
	    (double)b->count / n;
	a->count += b->count;
	a->total += b->total;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
}

/*
 * The statistics merged over each process's threads, sorted, in a new
 * array of *n entries (tid 0); NULL if there are none or no memory.
 */
static struct mm_stat *
stats_merged(struct mm *mm, uint32_t *n)
{
	const struct mm_stat *e;
	struct mm_stat *v;
	uint32_t i, j, k, it = 0;

	*n = 0;
	if (hmap_count(&mm->stats.map) == 0 || (v = malloc(sizeof *v *
	    hmap_count(&mm->stats.map))) == NULL)
		return NULL;
	for (j = 0; (e = hmap_next(&mm->stats.map, &it, NULL)) != NULL; )
		v[j++] = *e;
	qsort(v, j, sizeof *v, stat_cmp);
	for (i = 0, k = 0; i < j; i++) {
		if (k > 0 && stat_cmp(&v[k - 1], &v[i]) == 0) {
			range_merge(&v[k - 1].r, &v[i].r);
			continue;
		}
		v[k] = v[i];
		v[k].tid = 0;
		k++;
	}
	*n = k;
	return v;
}

int
mm_stats_write(struct mm *mm)
{
	struct mm_stat *v, *e;
	uint32_t n, i;
	int r = 0;

	v = stats_merged(mm, &n);
	/* Each process's totals once, at the end: as deltas from nothing,
	 * they are what a reader adds up (formats.md). */
	for (i = 0; i < n && r == 0; i++) {
		e = &v[i];
		if (e->kind == REC_STATS_COUNT)
			r = tape_stats_count(mm->out, e->node, e->pid, e->eid,
			    e->r.count);
		else
			r = tape_stats_range(mm->out, e->node, e->pid, e->eid,
			    e->key, e->r.count, e->r.total, e->r.min,
			    e->r.max, e->r.mean, e->r.m2);
	}
	free(v);
	return r;
}

static const char *
type_name(struct mm *mm, int32_t eid)
{
	const struct tape_def *d;
	uint32_t i;

	for (i = 0; i < REC_NPREDEF; i++)
		if (rec_predef[i].eid == eid)
			return rec_predef[i].dsc;
	d = hmap_find(&mm->written.map, &eid);
	return d != NULL && d->format != NULL ? d->dsc : "";
}

size_t
mm_stats_text(struct mm *mm, char *buf, size_t cap)
{
	struct mm_stat *v, *e;
	uint32_t n, i, node = 0, pid = 0;
	size_t len = 0;
	double sd;

	buf[0] = '\0';
	v = stats_merged(mm, &n);
	if (v == NULL)
		return (size_t)snprintf(buf, cap, "no statistics (no process "
		    "runs with GRM_MODE=stats)\n");
#define OUT(...) do { if (len < cap) len += (size_t)snprintf(buf + len, \
    cap - len, __VA_ARGS__); } while (0)
	for (i = 0; i < n; i++) {
		e = &v[i];
		if (i == 0 || e->node != node || e->pid != pid) {
			node = e->node;
			pid = e->pid;
			OUT("node %u pid %u\n", node, pid);
		}
		if (e->kind == REC_STATS_COUNT) {
			if (e->eid == REC_EID_BLOCK_BEGIN ||
			    e->eid == REC_EID_BLOCK_END)
				continue;	/* blocks: see their ranges */
			OUT("  count %d %llu %s\n", e->eid,
			    (unsigned long long)e->r.count,
			    type_name(mm, e->eid));
			continue;
		}
		sd = e->r.count > 0 ? sqrt(e->r.m2 / (double)e->r.count) : 0;
		OUT("  range %d %lld: n %llu total %llu min %llu max %llu "
		    "mean %.1f sd %.1f ns %s\n", e->eid, (long long)e->key,
		    (unsigned long long)e->r.count,
		    (unsigned long long)e->r.total,
		    (unsigned long long)e->r.min,
		    (unsigned long long)e->r.max, e->r.mean, sd,
		    e->eid == REC_EID_BLOCK_BEGIN ? block_name(mm, e->key) :
		    type_name(mm, e->eid));
	}
#undef OUT
	free(v);
	if (len >= cap && cap > 16)
		memcpy(buf + cap - 16, "\n(truncated)\n", 14);
	return len;
}
