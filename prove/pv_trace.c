/* SPDX-License-Identifier: MIT */
/* pv_trace.c: prove trace, BEE's tracer (seed 001 section 7.4.6): the
 * records that match filters of time, host, process, thread and event,
 * printed as prove dump prints them, as they are read. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv.h"
#include "util/num.h"

/* One item of a filter: what it names, and whether it excludes ("!"). */
enum tf_kind {
	TF_NODE,	/* host: node number */
	TF_HOST,	/* host: host name */
	TF_PID,		/* process: pid */
	TF_RANK,	/* process: rank (rank:N) */
	TF_PNAME,	/* process: program or rank name */
	TF_TID,		/* thread */
	TF_EID,		/* event: id */
	TF_ENAME	/* event: its definition's description */
};

struct tf_item {
	enum tf_kind	kind;
	int		neg;
	int64_t		v;
	const char	*name;	/* in argv */
};

/* The items of one option (host, process, thread or event): a record
 * passes if it matches one of the items without "!" (or there are none)
 * and none of those with. */
struct tf_dim {
	struct tf_item	*v;
	size_t		n;
	size_t		cap;
	int		incl;	/* items without "!" */
};

enum { D_HOST, D_PROC, D_THREAD, D_EVENT, D_N };

/* What a pre-pass found of each process (node, pid): a process filter by
 * name or rank names it by anything it was called in the whole trace. */
struct tf_hit {
	int	in;
	int	out;
};

struct tf {
	struct tf_dim	d[D_N];
	int		has_from, has_to;
	uint64_t	from, to;	/* ns after the first record */
	int		by_name;	/* a process item by name or rank */
	int		prepassed;
	struct pv_map	hits;		/* (node, pid) -> struct tf_hit */
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove trace FILE [-t FROM:TO] [-H HOST] "
	    "[-p PROCESS] [-T THREAD] [-e EVENT]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nPrints the records that match every filter given, one a "
	    "line, as prove dump\ndoes (ts node pid tid eid fields).\n\n"
	    "  -t FROM:TO  records from FROM (included) to TO (not), times "
	    "after the\n              trace's first record: a number of "
	    "seconds, or with a unit\n              ns, us, ms or s "
	    "(1.5, 200ms); either may be left out\n"
	    "  -H HOST     a node number or a host name\n"
	    "  -p PROCESS  a pid, rank:N (the rank a process named itself "
	    "with), or a\n              name (its program's, or the name it "
	    "gave with its rank)\n"
	    "  -T THREAD   a thread id\n"
	    "  -e EVENT    an event id or name (its definition's "
	    "description)\n\n"
	    "-H, -p, -T and -e may be repeated and take comma lists; an "
	    "item starting\nwith ! excludes.  A record passes a filter if "
	    "it matches one of its items\nwithout ! (if any) and none with.\n");
}

/* Adds the items of arg (a comma list) to dimension dim. */
static int
add_items(struct tf *t, int dim, const char *opt, char *arg)
{
	struct tf_dim *d = &t->d[dim];
	struct tf_item it;
	char *s, *save = NULL, *end;
	uint64_t u;
	long long ll;
	size_t len = strlen(arg);

	if (len == 0 || arg[0] == ',' || arg[len - 1] == ',' ||
	    strstr(arg, ",,") != NULL) {
		fprintf(stderr, "prove trace: %s '%s': an empty item\n", opt,
		    arg);
		return -1;
	}
	for (s = strtok_r(arg, ",", &save); s != NULL;
	    s = strtok_r(NULL, ",", &save)) {
		memset(&it, 0, sizeof it);
		if ((it.neg = s[0] == '!'))
			s++;
		if (*s == '\0') {
			fprintf(stderr, "prove trace: %s: '!' names nothing\n",
			    opt);
			return -1;
		}
		if (dim == D_HOST) {
			it.kind = num_parse_u64(s, 0, UINT32_MAX, &u) == 0 ?
			    TF_NODE : TF_HOST;
			it.v = (int64_t)u;
		} else if (dim == D_PROC) {
			if (strncmp(s, "rank:", 5) == 0) {
				it.kind = TF_RANK;
				ll = strtoll(s + 5, &end, 10);
				if (s[5] == '\0' || *end != '\0') {
					fprintf(stderr, "prove trace: %s "
					    "'%s': not rank:N (N a number)\n",
					    opt, s);
					return -1;
				}
				it.v = ll;
			} else if (num_parse_u64(s, 0, UINT32_MAX, &u) == 0) {
				it.kind = TF_PID;
				it.v = (int64_t)u;
			} else if (s[0] >= '0' && s[0] <= '9') {
				fprintf(stderr, "prove trace: %s '%s': not a "
				    "pid (0 to 4294967295)\n", opt, s);
				return -1;
			} else
				it.kind = TF_PNAME;
			if (it.kind != TF_PID)
				t->by_name = 1;
		} else if (dim == D_THREAD) {
			if (num_parse_u64(s, 0, UINT32_MAX, &u) != 0) {
				fprintf(stderr, "prove trace: %s '%s': not a "
				    "thread id (0 to 4294967295)\n", opt, s);
				return -1;
			}
			it.kind = TF_TID;
			it.v = (int64_t)u;
		} else {
			ll = strtoll(s, &end, 10);
			if (*end == '\0' && ll >= INT32_MIN &&
			    ll <= INT32_MAX) {
				it.kind = TF_EID;
				it.v = ll;
			} else if ((s[0] >= '0' && s[0] <= '9') ||
			    (s[0] == '-' && s[1] >= '0' && s[1] <= '9')) {
				fprintf(stderr, "prove trace: %s '%s': not an "
				    "event id (a 32-bit integer)\n", opt, s);
				return -1;
			} else
				it.kind = TF_ENAME;
		}
		it.name = s;
		if (d->n == d->cap &&
		    (d->v = pv_grow(d->v, &d->cap, d->n, sizeof *d->v)) ==
		    NULL) {
			fprintf(stderr, "prove trace: out of memory\n");
			return -1;
		}
		d->v[d->n++] = it;
		d->incl += !it.neg;
	}
	return 0;
}

/* -t FROM:TO. */
static int
set_times(struct tf *t, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char buf[64];
	size_t n;

	if (colon == NULL || strchr(colon + 1, ':') != NULL) {
		fprintf(stderr, "prove trace: -t '%s': not FROM:TO\n", arg);
		return -1;
	}
	n = (size_t)(colon - arg);
	if (n >= sizeof buf)
		n = sizeof buf - 1;
	memcpy(buf, arg, n);
	buf[n] = '\0';
	if ((t->has_from = n > 0) && pv_dur_parse(buf, &t->from) != 0) {
		fprintf(stderr, "prove trace: -t: bad time '%s' (a number, "
		    "with ns, us, ms or s after it if not seconds)\n", buf);
		return -1;
	}
	if ((t->has_to = colon[1] != '\0') &&
	    pv_dur_parse(colon + 1, &t->to) != 0) {
		fprintf(stderr, "prove trace: -t: bad time '%s' (a number, "
		    "with ns, us, ms or s after it if not seconds)\n",
		    colon + 1);
		return -1;
	}
	if (t->has_from && t->has_to && t->to <= t->from) {
		fprintf(stderr, "prove trace: -t '%s': TO is not after FROM\n",
		    arg);
		return -1;
	}
	return 0;
}

static int
name_is(const char *a, const char *name)
{
	return a != NULL && strcmp(a, name) == 0;
}

/* Whether item it matches ev (as the reader knows it so far). */
static int
item_match(const struct tf_item *it, struct grmtrace *r,
	   const struct grmtrace_ev *ev)
{
	const struct grmtrace_host *h;
	const struct grmtrace_proc *p;

	switch (it->kind) {
	case TF_NODE:
		return ev->node == (uint64_t)it->v;
	case TF_HOST:
		h = grmtrace_host(r, ev->node);
		return h != NULL && name_is(h->hostname, it->name);
	case TF_PID:
		return ev->pid == (uint64_t)it->v;
	case TF_RANK:
		p = grmtrace_proc(r, ev->node, ev->pid);
		return p != NULL && p->has_rank && p->rank == it->v;
	case TF_PNAME:
		p = grmtrace_proc(r, ev->node, ev->pid);
		return p != NULL && (name_is(p->name, it->name) ||
		    name_is(p->rank_name, it->name));
	case TF_TID:
		return ev->tid == (uint64_t)it->v;
	case TF_EID:
		return ev->eid == it->v;
	case TF_ENAME:
		return ev->def != NULL &&
		    name_is(ev->def->description, it->name);
	}
	return 0;
}

/* Whether ev matches an item of d with (neg) or without "!". */
static void
dim_hits(const struct tf_dim *d, struct grmtrace *r,
	 const struct grmtrace_ev *ev, struct tf_hit *h)
{
	size_t i;

	h->in = h->out = 0;
	for (i = 0; i < d->n; i++)
		if (item_match(&d->v[i], r, ev)) {
			if (d->v[i].neg)
				h->out = 1;
			else
				h->in = 1;
		}
}

static int
dim_pass(const struct tf_dim *d, const struct tf_hit *h)
{
	return (d->incl == 0 || h->in) && !h->out;
}

/*
 * The pre-pass of a process filter by name or rank: what each process
 * was called anywhere in the trace.  Returns 0, 1 if path cannot be read
 * twice (standard input: names are then matched as known so far), or -1.
 */
static int
prepass(struct tf *t, const char *path)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct tf_hit h, *k;
	int rc;

	if (strcmp(path, "-") == 0)
		return 1;
	if ((r = pv_open(path)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC));
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		dim_hits(&t->d[D_PROC], r, ev, &h);
		if ((k = pv_map_get(&t->hits, ev->node, ev->pid, sizeof *k)) ==
		    NULL) {
			grmtrace_close(r);
			fprintf(stderr, "prove trace: out of memory\n");
			return -1;
		}
		k->in |= h.in;
		k->out |= h.out;
	}
	if (rc < 0) {
		pv_fail(path, r);
		return -1;
	}
	grmtrace_close(r);
	t->prepassed = 1;
	return 0;
}

static int
record_pass(struct tf *t, struct grmtrace *r, const struct grmtrace_ev *ev,
	    uint64_t t0)
{
	const struct tf_hit none = { 0, 0 }, *k;
	struct tf_hit h;
	uint64_t d = ev->ts > t0 ? ev->ts - t0 : 0;

	if ((t->has_from && (ev->ts < t0 || d < t->from)) ||
	    (t->has_to && d >= t->to))
		return 0;
	dim_hits(&t->d[D_HOST], r, ev, &h);
	if (!dim_pass(&t->d[D_HOST], &h))
		return 0;
	if (t->prepassed) {
		k = pv_map_find(&t->hits, ev->node, ev->pid);
		if (!dim_pass(&t->d[D_PROC], k != NULL ? k : &none))
			return 0;
	} else {
		dim_hits(&t->d[D_PROC], r, ev, &h);
		if (!dim_pass(&t->d[D_PROC], &h))
			return 0;
	}
	dim_hits(&t->d[D_THREAD], r, ev, &h);
	if (!dim_pass(&t->d[D_THREAD], &h))
		return 0;
	dim_hits(&t->d[D_EVENT], r, ev, &h);
	return dim_pass(&t->d[D_EVENT], &h);
}

static void
tf_free(struct tf *t)
{
	int i;

	for (i = 0; i < D_N; i++)
		free(t->d[i].v);
	pv_map_free(&t->hits, NULL);
}

int
pv_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "host", required_argument, NULL, 'H' },
		{ "process", required_argument, NULL, 'p' },
		{ "thread", required_argument, NULL, 'T' },
		{ "event", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct grmtrace_ev *ev;
	struct grmtrace *r = NULL;
	struct tf t;
	const char *path;
	uint64_t t0 = 0;
	int c, rc, first = 1, status = 2;

	memset(&t, 0, sizeof t);
	while ((rc = pv_getopt(argc, argv, "trace", ":t:H:p:T:e:h", longopts,
	    &c)) > 0) {
		switch (c) {
		case 'h':
			help();
			tf_free(&t);
			return pv_flush();
		case 't':
			rc = set_times(&t, optarg);
			break;
		case 'H':
			rc = add_items(&t, D_HOST, "-H", optarg);
			break;
		case 'p':
			rc = add_items(&t, D_PROC, "-p", optarg);
			break;
		case 'T':
			rc = add_items(&t, D_THREAD, "-T", optarg);
			break;
		case 'e':
			rc = add_items(&t, D_EVENT, "-e", optarg);
			break;
		}
		if (rc != 0)
			goto out;
	}
	if (rc < 0 || optind != argc - 1) {
		usage(stderr);
		goto out;
	}
	path = argv[optind];
	status = 1;
	if (t.by_name && prepass(&t, path) < 0)
		goto out;
	if ((r = pv_open(path)) == NULL)
		goto out;
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (first) {
			t0 = ev->ts;
			first = 0;
		}
		if (record_pass(&t, r, ev, t0))
			pv_dump_line(ev);
	}
	if (rc < 0) {
		status = pv_fail(path, r);
		r = NULL;
		goto out;
	}
	pv_close(path, r);
	r = NULL;
	status = pv_flush();
out:
	grmtrace_close(r);
	tf_free(&t);
	return status;
}
