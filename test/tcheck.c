/* SPDX-License-Identifier: MIT */
/* tcheck.c: what the end-to-end tests ask of a trace, by name, on the
 * public reader (<grm/trace.h>), instead of awk programs that read prove
 * dump's columns by number.
 *
 *	tcheck [-c] FILE [+ [-c] FILE...] [KIND] [COND...] QUERY
 *
 * KIND is "record" (the default) or a meta line's keyword ("#PROC",
 * "#LOSS", "#HOST", "#STATS count", "#STATS range"...): the lines the
 * query looks at.  A COND is KEY=V, KEY!=V, KEY<V, KEY<=V, KEY>V or
 * KEY>=V; a line passes if every COND holds.  Values are integers, or
 * strings compared with string fields.  Keys:
 *
 *	ts node pid tid eid	a record's header
 *	f0 .. f15		its fields
 *	nf			its number of fields
 *	model bound		the clock model that converted it (#SYNC
 *				number) and its error bound, ns
 *	fields			all of them as a text trace has them:
 *				'4 10 5 "v4"'
 *	description format class attr
 *				of the definition it is read with
 *	count how lm_pid ...	a meta line's field names, as
 *				grmtrace_field_name gives them
 *	line			any line's line (text) or frame (binary)
 *				number in its file
 *
 * FILE + FILE2 reads FILE2 after FILE, as one trace (a trace continued in
 * the next file); "order" reads the first only.  -c: the file after it
 * may end in the middle of a line or frame, as a writer killed while
 * writing leaves it (grmtrace_warning); its lines before that one count.
 * Without -c, such a file is an error.  QUERY is one of:
 *
 *	count		the number of lines that pass
 *	distinct KEY	the number of distinct values of KEY among them
 *	threads		the number of distinct threads (node, pid, tid)
 *	sum KEY, min KEY, max KEY
 *	values KEY...	each line's values, one line each, in file order
 *	seqs KEY N THREADS
 *			each thread's values of KEY are 0 .. N-1, once each
 *			and in order, and THREADS threads have lines
 *	rising KEY	each thread's values of KEY only go up
 *	dups KEY	the number of lines whose (thread, KEY) came before
 *	order		records in time order, #ORDER counts no late record,
 *			and every host has a clock model (#SYNC)
 *	causal		"matched M raw_before R before B moved N beyond X":
 *			messages matched by tcheck itself, received before
 *			sent in the file's times and in the times the
 *			reader corrected (grmtrace_causal), records moved
 *			(none by more than its bound, or it fails) and
 *			violations the reader says are beyond the bounds;
 *			the first file only
 *
 * Every query but causal reads the file's own times (grmtrace_raw_times).
 *
 * Prints the answer (or nothing, for seqs and order) and exits 0; exits 1
 * with a message naming what is wrong if a check fails, 2 for a bad
 * command or a trace that cannot be read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grm/trace.h>

#include "util/hmap.h"

#define CONDS_MAX	16
#define FILES_MAX	8
#define KEYS_MAX	8

/* A value of a key: a number (integers as int64 or uint64, doubles) or
 * a string. */
struct val {
	int		is_str;
	int		is_dbl;
	int64_t		i;
	double		d;
	const char	*s;
	size_t		len;
};

struct cond {
	char		*key;		/* owned */
	char		op[3];
	const char	*want;
};

static const char *path;

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tcheck: %s: ", path != NULL ? path : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static struct val
of_field(const struct grmtrace_field *f)
{
	struct val v = { 0 };

	switch (f->type) {
	case GRMTRACE_INT:
		v.i = f->v.i;
		break;
	case GRMTRACE_UINT:
		v.i = (int64_t)f->v.u;
		break;
	case GRMTRACE_DOUBLE:
		v.is_dbl = 1;
		v.d = f->v.d;
		break;
	default:
		v.is_str = 1;
		v.s = f->v.s.p;
		v.len = f->v.s.len;
		break;
	}
	return v;
}

/* ev's fields as a record line of the text format has them, in a
 * buffer valid until the next call; NULL if out of memory. */
static const char *
all_fields(const struct grmtrace_ev *ev, size_t *len)
{
	static char *buf;
	static size_t size;
	FILE *f;
	unsigned i;
	int bad = 0;

	free(buf);
	buf = NULL;
	if ((f = open_memstream(&buf, &size)) == NULL)
		return NULL;
	for (i = 0; i < ev->n; i++)
		if ((i > 0 && fputc(' ', f) == EOF) ||
		    grmtrace_fput_field(f, &ev->f[i]) != 0)
			bad = 1;
	if (fclose(f) != 0 || bad)
		return NULL;
	*len = size;
	return buf;
}

/* The value of key in ev; 0, or -1 if ev has no such key. */
static int
get(const struct grmtrace_ev *ev, const char *key, struct val *v)
{
	const char *name;
	unsigned i;
	char *end;

	memset(v, 0, sizeof *v);
	if (strcmp(key, "line") == 0) {
		v->i = (int64_t)ev->where;
		return 0;
	}
	if (ev->kind == GRMTRACE_RECORD) {
		if (strcmp(key, "ts") == 0)
			v->i = (int64_t)ev->ts;
		else if (strcmp(key, "node") == 0)
			v->i = ev->node;
		else if (strcmp(key, "pid") == 0)
			v->i = ev->pid;
		else if (strcmp(key, "tid") == 0)
			v->i = ev->tid;
		else if (strcmp(key, "eid") == 0)
			v->i = ev->eid;
		else if (strcmp(key, "nf") == 0)
			v->i = ev->n;
		else if (strcmp(key, "model") == 0)
			v->i = ev->sync_model;
		else if (strcmp(key, "bound") == 0)
			v->i = (int64_t)ev->bound_ns;
		else if (strcmp(key, "fields") == 0) {
			v->is_str = 1;
			if ((v->s = all_fields(ev, &v->len)) == NULL)
				die(2, "out of memory");
		} else if (ev->def == NULL && (strcmp(key, "description") == 0 ||
		    strcmp(key, "format") == 0 || strcmp(key, "class") == 0 ||
		    strcmp(key, "attr") == 0))
			return -1;
		else if (strcmp(key, "description") == 0 ||
		    strcmp(key, "format") == 0) {
			v->is_str = 1;
			v->s = key[0] == 'd' ? ev->def->description :
			    ev->def->format;
			v->len = strlen(v->s);
		} else if (strcmp(key, "class") == 0)
			v->i = ev->def->cls;
		else if (strcmp(key, "attr") == 0)
			v->i = ev->def->attr;
		else if (key[0] == 'f' && key[1] >= '0' && key[1] <= '9') {
			i = (unsigned)strtoul(key + 1, &end, 10);
			if (*end != '\0' || i >= ev->n)
				return -1;
			*v = of_field(&ev->f[i]);
		} else
			return -1;
		return 0;
	}
	for (i = 0; i < ev->n; i++) {
		name = grmtrace_field_name(ev->kind, i);
		if (name != NULL && strcmp(name, key) == 0) {
			*v = of_field(&ev->f[i]);
			return 0;
		}
	}
	if (strcmp(key, "tid") == 0 && ev->kind == GRMTRACE_LOSS) {
		v->i = ev->tid;
		return 0;
	}
	return -1;
}

/* -1, 0 or 1 as v is below, equal to or above the text want; 2 if they
 * cannot be compared. */
static int
cmp(const struct val *v, const char *want)
{
	char *end;
	double d;
	long long n;
	size_t wl;
	int c;

	if (v->is_str) {
		wl = strlen(want);
		c = memcmp(v->s, want, v->len < wl ? v->len : wl);
		if (c == 0)
			c = (v->len > wl) - (v->len < wl);
		return (c > 0) - (c < 0);
	}
	errno = 0;
	if (v->is_dbl) {
		d = strtod(want, &end);
		if (*end != '\0' || end == want)
			return 2;
		return (v->d > d) - (v->d < d);
	}
	n = strtoll(want, &end, 0);
	if (*end != '\0' || end == want || errno != 0)
		return 2;
	return (v->i > n) - (v->i < n);
}

static int
passes(const struct grmtrace_ev *ev, const struct cond *c, int nc)
{
	struct val v;
	int i, r;

	for (i = 0; i < nc; i++) {
		if (get(ev, c[i].key, &v) != 0)
			return 0;
		r = cmp(&v, c[i].want);
		if (r == 2)
			die(2, "%s: \"%s\" is not a number", c[i].key,
			    c[i].want);
		if (!((strcmp(c[i].op, "=") == 0 && r == 0) ||
		    (strcmp(c[i].op, "!=") == 0 && r != 0) ||
		    (strcmp(c[i].op, "<") == 0 && r < 0) ||
		    (strcmp(c[i].op, "<=") == 0 && r <= 0) ||
		    (strcmp(c[i].op, ">") == 0 && r > 0) ||
		    (strcmp(c[i].op, ">=") == 0 && r >= 0)))
			return 0;
	}
	return 1;
}

static int
parse_cond(const char *a, struct cond *c)
{
	static const char *const ops[] = { "!=", "<=", ">=", "=", "<", ">" };
	const char *p;
	size_t i, k;
	char *key;

	for (p = a; *p != '\0'; p++)
		for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
			k = strlen(ops[i]);
			if (strncmp(p, ops[i], k) != 0 || p == a)
				continue;
			if ((key = strndup(a, (size_t)(p - a))) == NULL)
				die(2, "out of memory");
			c->key = key;
			memcpy(c->op, ops[i], k + 1);
			c->want = p + k;
			return 0;
		}
	return -1;
}

/* ---- the queries that remember: a set of values, per thread ---- */

struct key {
	uint32_t	node, pid, tid, pad;
	int64_t		v;
};

struct seq {
	int64_t		next;
	uint64_t	n;
};

static const struct hmap_type key_type = { sizeof(struct key),
	sizeof(struct seq), 64, NULL };

/* A string value as a number for the sets: its hash (FNV-1a); equal
 * strings give equal numbers, and the tests' strings do not collide. */
static int64_t
as_num(const struct val *v)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	if (!v->is_str)
		return v->is_dbl ? (int64_t)v->d : v->i;
	for (i = 0; i < v->len; i++)
		h = (h ^ (unsigned char)v->s[i]) * 1099511628211ull;
	return (int64_t)h;
}

static void
put_val(const struct val *v)
{
	if (v->is_str)
		printf("%.*s", (int)v->len, v->s);
	else if (v->is_dbl)
		printf("%.17g", v->d);
	else
		printf("%" PRId64, v->i);
}

/* Records in time order, #ORDER late 0, a #SYNC for every host. */
static int
check_order(struct grmtrace *t)
{
	const struct grmtrace_ev *ev;
	const struct grmtrace_host *h;
	uint64_t prev = 0, late = 0;
	int rc, order = 0;
	size_t i;

	while ((rc = grmtrace_next(t, &ev)) == 1) {
		if (ev->kind == GRMTRACE_ORDER) {
			order = 1;
			late = ev->f[0].v.u;
		}
		if (ev->kind != GRMTRACE_RECORD)
			continue;
		if (ev->ts < prev)
			die(1, "line %" PRIu64 ": time %" PRIu64 " after %"
			    PRIu64, ev->where, ev->ts, prev);
		prev = ev->ts;
	}
	if (rc < 0)
		die(2, "%s", grmtrace_error(t));
	if (!order)
		die(1, "no #ORDER line");
	if (late != 0)
		die(1, "#ORDER: %" PRIu64 " records written late", late);
	for (i = 0; (h = grmtrace_host_at(t, i)) != NULL; i++)
		if (!h->synced)
			die(1, "host %" PRIu32 " has no #SYNC", h->node);
	return 0;
}

/* ---- causal: no message received before it was sent ---- */

/* A send or receive waiting for its other end: its times, the file's and
 * the reader's. */
struct c_end {
	uint64_t	raw;
	uint64_t	ts;
};

/* The ends of one (sender rank, receiver rank, tag) waiting: sends or
 * receives, never both; the k-th send meets the k-th receive. */
struct c_queue {
	int		sends;
	size_t		head, n, cap;
	struct c_end	*v;
};

struct c_key {
	int64_t		src, dst, tag;
};

struct c_rank_key {
	uint32_t	node, pid;
};

static const struct hmap_type c_queue_type = {
	sizeof(struct c_key), sizeof(struct c_queue), 64, NULL
};
static const struct hmap_type c_rank_type = {
	sizeof(struct c_rank_key), sizeof(int64_t), 64, NULL
};

/*
 * Reads t with the reader's correction and matches sends with receives
 * itself: prints "matched M raw_before R before B moved N beyond X"
 * (receives before their send in the file's times and in the reader's,
 * records the reader moved, violations it says are beyond the bounds).
 * Fails if a record was moved by more than its bound.
 */
static int
check_causal(struct grmtrace *t)
{
	const struct grmtrace_causal *gc;
	const struct grmtrace_ev *ev;
	struct hmap ranks, qs;
	struct c_queue *q;
	struct c_end e, s, r;
	struct c_key k;
	struct c_rank_key rk;
	uint64_t matched = 0, raw_before = 0, before = 0, moved = 0;
	int64_t *rank;
	uint32_t it = 0;
	int rc, send;

	hmap_init(&ranks, &c_rank_type);
	hmap_init(&qs, &c_queue_type);
	while ((rc = grmtrace_next(t, &ev)) == 1) {
		if (ev->kind != GRMTRACE_RECORD)
			continue;
		if (ev->ts != ev->raw_ts) {
			moved++;
			if (ev->ts - ev->raw_ts > ev->bound_ns)
				die(1, "line %" PRIu64 ": moved by %" PRIu64
				    " ns, beyond its bound %" PRIu64, ev->where,
				    ev->ts - ev->raw_ts, ev->bound_ns);
		}
		rk = (struct c_rank_key){ ev->node, ev->pid };
		if (ev->eid == GRMTRACE_EID_PROC_NAME && ev->n >= 1 &&
		    ev->f[0].type == GRMTRACE_INT) {
			if ((rank = hmap_put(&ranks, &rk, NULL)) == NULL)
				die(2, "out of memory");
			*rank = ev->f[0].v.i;
			continue;
		}
		if ((ev->eid != GRMTRACE_EID_MSG_SEND &&
		    ev->eid != GRMTRACE_EID_MSG_RECV) || ev->n < 2 ||
		    ev->f[0].type != GRMTRACE_INT ||
		    ev->f[1].type != GRMTRACE_INT ||
		    (rank = hmap_find(&ranks, &rk)) == NULL)
			continue;
		send = ev->eid == GRMTRACE_EID_MSG_SEND;
		k = send ? (struct c_key){ *rank, ev->f[0].v.i, ev->f[1].v.i } :
		    (struct c_key){ ev->f[0].v.i, *rank, ev->f[1].v.i };
		if ((q = hmap_put(&qs, &k, NULL)) == NULL)
			die(2, "out of memory");
		e = (struct c_end){ ev->raw_ts, ev->ts };
		if (q->n > 0 && q->sends != send) {
			s = send ? e : q->v[q->head];
			r = send ? q->v[q->head] : e;
			q->head++;
			q->n--;
			matched++;
			raw_before += r.raw < s.raw;
			before += r.ts < s.ts;
			continue;
		}
		if (q->head + q->n == q->cap) {
			if (q->head > 0)
				memmove(q->v, q->v + q->head,
				    q->n * sizeof *q->v);
			q->head = 0;
			if (q->n == q->cap) {
				q->cap = q->cap ? 2 * q->cap : 16;
				if ((q->v = realloc(q->v, q->cap *
				    sizeof *q->v)) == NULL)
					die(2, "out of memory");
			}
		}
		q->v[q->head + q->n++] = e;
		q->sends = send;
	}
	if (rc < 0)
		die(2, "%s", grmtrace_error(t));
	if ((gc = grmtrace_causal(t, 0)) == NULL || !gc->corrected)
		die(1, "the reader did not correct the times");
	printf("matched %" PRIu64 " raw_before %" PRIu64 " before %" PRIu64
	    " moved %" PRIu64 " beyond %" PRIu64 "\n", matched, raw_before,
	    before, moved, gc->beyond);
	while ((q = hmap_next(&qs, &it, NULL)) != NULL)
		free(q->v);
	hmap_free(&qs);
	hmap_free(&ranks);
	return 0;
}

/* Whether lines of kind can have key: a typo is an error, not a line
 * that never passes. */
static int
known_key(int kind, const char *key)
{
	static const char *const rec[] = { "ts", "node", "pid", "tid", "eid",
		"nf", "model", "bound", "fields", "description", "format",
		"class", "attr" };
	const char *name;
	unsigned i;

	if (strcmp(key, "line") == 0)
		return 1;
	if (kind == GRMTRACE_RECORD) {
		for (i = 0; i < sizeof rec / sizeof rec[0]; i++)
			if (strcmp(key, rec[i]) == 0)
				return 1;
		return key[0] == 'f' && key[1] >= '0' && key[1] <= '9' &&
		    strspn(key + 1, "0123456789") == strlen(key + 1);
	}
	for (i = 0; (name = grmtrace_field_name(kind, i)) != NULL; i++)
		if (strcmp(name, key) == 0)
			return 1;
	return 0;
}

static int
kind_of(const char *s)
{
	int k;

	if (strcmp(s, "#STATS count") == 0)
		return GRMTRACE_STATS_COUNT;
	if (strcmp(s, "#STATS range") == 0)
		return GRMTRACE_STATS_RANGE;
	if (strcmp(s, "#PLAN add") == 0)
		return GRMTRACE_PLAN_ADD;
	if (strcmp(s, "#PLAN del") == 0)
		return GRMTRACE_PLAN_DEL;
	if (strcmp(s, "#PLAN fire") == 0)
		return GRMTRACE_PLAN_FIRE;
	for (k = 0; k < GRMTRACE_NKINDS; k++)
		if (strcmp(s, grmtrace_kind_name(k)) == 0)
			return k;
	return -1;
}

/* What a query has seen so far, over every file. */
struct state {
	const char	*q;
	const char	*keys[KEYS_MAX];
	int		nkeys;
	int64_t		want_n, want_threads;
	uint64_t	n, dups, threads;
	int64_t		acc;
	int		have;
	struct hmap	set;
};

static int
is(const struct state *st, const char *q)
{
	return strcmp(st->q, q) == 0;
}

/* Adds ev, a line that passes, to what st has seen; dies if a check
 * fails. */
static void
see(struct state *st, const struct grmtrace_ev *ev)
{
	struct key k;
	struct seq *s;
	struct val v;
	int added, j;

	st->n++;
	if (is(st, "values")) {
		for (j = 0; j < st->nkeys; j++) {
			if (get(ev, st->keys[j], &v) != 0)
				die(1, "line %" PRIu64 ": no %s", ev->where,
				    st->keys[j]);
			if (j > 0)
				putchar(' ');
			put_val(&v);
		}
		putchar('\n');
		return;
	}
	if (st->nkeys > 0 && get(ev, st->keys[0], &v) != 0)
		die(1, "line %" PRIu64 ": no %s", ev->where, st->keys[0]);
	if (is(st, "count"))
		return;
	if (is(st, "sum") || is(st, "min") || is(st, "max")) {
		if (st->q[0] == 's')
			st->acc += as_num(&v);
		else if (!st->have || (st->q[1] == 'i' && as_num(&v) < st->acc) ||
		    (st->q[1] == 'a' && as_num(&v) > st->acc))
			st->acc = as_num(&v);
		st->have = 1;
		return;
	}
	memset(&k, 0, sizeof k);
	if (!is(st, "distinct")) {
		k.node = ev->node;
		k.pid = ev->pid;
		k.tid = ev->tid;
	}
	k.v = is(st, "dups") ? as_num(&v) : 0;
	if (is(st, "distinct"))
		k.v = as_num(&v);
	if ((s = hmap_put(&st->set, &k, &added)) == NULL)
		die(2, "out of memory");
	if (is(st, "dups") && !added)
		st->dups++;
	if (added)
		st->threads++;
	if (is(st, "rising")) {
		if (!added && as_num(&v) <= s->next)
			die(1, "thread %" PRIu32 "/%" PRIu32 "/%" PRIu32
			    ", line %" PRIu64 ": %s %" PRId64 " after %" PRId64,
			    ev->node, ev->pid, ev->tid, ev->where, st->keys[0],
			    as_num(&v), s->next);
		s->next = as_num(&v);
	}
	if (is(st, "seqs")) {
		if (as_num(&v) != s->next)
			die(1, "thread %" PRIu32 "/%" PRIu32 "/%" PRIu32
			    ", line %" PRIu64 ": %s %" PRId64
			    ", expected %" PRId64, ev->node, ev->pid,
			    ev->tid, ev->where, st->keys[0], as_num(&v),
			    s->next);
		s->next++;
	}
}

/* Prints st's answer, or dies if a check fails. */
static void
answer(struct state *st)
{
	const struct key *kk;
	struct seq *s;
	uint32_t it;

	if (is(st, "count"))
		printf("%" PRIu64 "\n", st->n);
	else if (is(st, "distinct"))
		printf("%" PRIu32 "\n", hmap_count(&st->set));
	else if (is(st, "threads"))
		printf("%" PRIu64 "\n", st->threads);
	else if (is(st, "dups"))
		printf("%" PRIu64 "\n", st->dups);
	else if (is(st, "sum") || is(st, "min") || is(st, "max")) {
		if (!st->have && st->q[0] != 's')
			die(1, "no line passes, no %s", st->q);
		printf("%" PRId64 "\n", st->acc);
	} else if (is(st, "seqs")) {
		if ((int64_t)st->threads != st->want_threads)
			die(1, "%" PRIu64 " threads, want %" PRId64,
			    st->threads, st->want_threads);
		it = 0;
		while ((s = hmap_next(&st->set, &it, NULL)) != NULL) {
			kk = hmap_key(&st->set, s);
			if (s->next != st->want_n)
				die(1, "thread %" PRIu32 "/%" PRIu32 "/%" PRIu32
				    ": %" PRId64 " lines, want %" PRId64,
				    kk->node, kk->pid, kk->tid, s->next,
				    st->want_n);
		}
	}
}

int
main(int argc, char **argv)
{
	struct cond c[CONDS_MAX];
	const char *files[FILES_MAX];
	int cut[FILES_MAX];
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	struct state st;
	int i, j, nc = 0, nf, kind = GRMTRACE_RECORD, rc;
	char err[256];

	if (argc < 3) {
		fprintf(stderr, "usage: tcheck [-c] FILE [+ [-c] FILE...] [KIND] "
		    "[COND...] QUERY\n");
		return 2;
	}
	memset(&st, 0, sizeof st);
	i = 1;
	for (nf = 0; nf == 0 || (i + 1 < argc && strcmp(argv[i], "+") == 0);
	    nf++) {
		if (nf == FILES_MAX)
			die(2, "more than %d files", FILES_MAX);
		i += nf > 0;
		if ((cut[nf] = strcmp(argv[i], "-c") == 0))
			i++;
		if (i >= argc)
			die(2, "no query");
		path = files[nf] = argv[i++];
	}
	if (i < argc && (argv[i][0] == '#' || strcmp(argv[i], "record") == 0)) {
		if ((kind = kind_of(argv[i])) < 0)
			die(2, "%s: no such kind of line", argv[i]);
		i++;
	}
	while (i < argc && (strpbrk(argv[i], "=<>") != NULL)) {
		if (nc == CONDS_MAX || parse_cond(argv[i], &c[nc]) != 0)
			die(2, "%s: not a condition", argv[i]);
		nc++;
		i++;
	}
	if (i >= argc)
		die(2, "no query");
	st.q = argv[i++];
	if (is(&st, "seqs")) {
		if (argc - i != 3)
			die(2, "usage: seqs KEY N THREADS");
		st.want_n = strtoll(argv[i + 1], NULL, 10);
		st.want_threads = strtoll(argv[i + 2], NULL, 10);
		argc = i + 1;
	} else if (is(&st, "values")) {
		if (argc - i < 1 || argc - i > KEYS_MAX)
			die(2, "usage: values KEY...");
	} else if (is(&st, "distinct") || is(&st, "sum") || is(&st, "min") ||
	    is(&st, "max") || is(&st, "dups") || is(&st, "rising")) {
		if (argc - i != 1)
			die(2, "usage: %s KEY", st.q);
	} else if (!is(&st, "count") && !is(&st, "threads") &&
	    !is(&st, "order") && !is(&st, "causal"))
		die(2, "%s: no such query", st.q);
	else if (argc != i)
		die(2, "%s takes no argument", st.q);
	for (; i < argc; i++)
		st.keys[st.nkeys++] = argv[i];

	for (j = 0; j < nc; j++)
		if (!known_key(kind, c[j].key))
			die(2, "%s: lines of kind %s have no such key", c[j].key,
			    grmtrace_kind_name(kind));
	for (j = 0; j < st.nkeys; j++)
		if (!known_key(kind, st.keys[j]))
			die(2, "%s: lines of kind %s have no such key",
			    st.keys[j], grmtrace_kind_name(kind));
	hmap_init(&st.set, &key_type);
	for (j = 0; j < nf; j++) {
		path = files[j];
		if ((t = grmtrace_open(path, err, sizeof err)) == NULL)
			die(2, "%s", err);
		if (is(&st, "causal")) {
			check_causal(t);
			grmtrace_close(t);
			break;
		}
		/* Every other query is of the file's own times. */
		(void)grmtrace_raw_times(t, 1);
		if (is(&st, "order")) {
			check_order(t);
			grmtrace_close(t);
			break;
		}
		while ((rc = grmtrace_next(t, &ev)) == 1) {
			if (ev->kind == kind && passes(ev, c, nc))
				see(&st, ev);
		}
		if (rc < 0)
			die(2, "%s", grmtrace_error(t));
		/* A cut last line or frame (grmtrace_warning): only
		 * where the test expects one. */
		if (!cut[j] && grmtrace_warning(t) != NULL)
			die(2, "%s: %s", path, grmtrace_warning(t));
		grmtrace_close(t);
	}
	if (!is(&st, "order") && !is(&st, "causal"))
		answer(&st);
	hmap_free(&st.set);
	for (j = 0; j < nc; j++)
		free(c[j].key);
	return fflush(stdout) == 0 ? 0 : 2;
}
