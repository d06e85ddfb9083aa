/* SPDX-License-Identifier: MIT */
/* ex_paje.c: prove export --to paje: a Paje trace file, which ViTE and
 * PajeNG open (doc/formats.md, "Exports"). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_walk.h"

/*
 * Containers host -> process -> thread, all created at time 0 and
 * destroyed at the trace's end; blocks, BEE ranges and functions are
 * states pushed and popped on their thread (a value each, with a colour of
 * its own); a matched message is a link from its send's thread to its
 * receive's; user events, unmatched messages, losses, process starts and
 * ends and collection phases are events.  Times are seconds since the
 * trace's first time, with 9 decimals; Paje wants them in order, so a time
 * before the previous one (a late record) is moved to it, and said.
 */

/* The event definitions: lines below start with their ids, 0 .. 11. */
static const char header[] =
	"%EventDef PajeDefineContainerType 0\n"
	"%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineStateType 1\n"
	"%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineEventType 2\n"
	"%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineLinkType 3\n"
	"%\tAlias string\n%\tType string\n%\tStartContainerType string\n"
	"%\tEndContainerType string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineEntityValue 4\n"
	"%\tAlias string\n%\tType string\n%\tName string\n%\tColor color\n"
	"%EndEventDef\n"
	"%EventDef PajeCreateContainer 5\n"
	"%\tTime date\n%\tAlias string\n%\tType string\n%\tContainer string\n"
	"%\tName string\n%\tInfo string\n%EndEventDef\n"
	"%EventDef PajeDestroyContainer 6\n"
	"%\tTime date\n%\tType string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajePushState 7\n"
	"%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
	"%EndEventDef\n"
	"%EventDef PajePopState 8\n"
	"%\tTime date\n%\tType string\n%\tContainer string\n%EndEventDef\n"
	"%EventDef PajeNewEvent 9\n"
	"%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
	"%\tFields string\n%EndEventDef\n"
	"%EventDef PajeStartLink 10\n"
	"%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
	"%\tStartContainer string\n%\tKey string\n%\tFields string\n"
	"%EndEventDef\n"
	"%EventDef PajeEndLink 11\n"
	"%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
	"%\tEndContainer string\n%\tKey string\n%EndEventDef\n";

/* Types: containers H, P, T; states S (on T); events E (user, on T), U
 * (unmatched message, on T), LT and LP (losses, on T or P), PE (process,
 * on P), C (collection, on H); links M (T to T). */
static const char types[] =
	"0 H 0 \"host\"\n0 P H \"process\"\n0 T P \"thread\"\n"
	"1 S T \"block\"\n2 E T \"event\"\n2 U T \"unmatched message\"\n"
	"2 LT T \"loss\"\n2 LP P \"loss\"\n2 PE P \"process\"\n"
	"2 C H \"collection\"\n3 M 0 T T \"message\"\n"
	"4 m M \"message\" \"0.3 0.3 0.3\"\n"
	"4 us U \"send\" \"0.9 0.1 0.1\"\n4 ur U \"receive\" \"0.9 0.1 0.1\"\n"
	"4 lt LT \"events lost\" \"1 0 0\"\n4 lp LP \"events lost\" \"1 0 0\"\n"
	"4 p0 PE \"start\" \"0 0.6 0\"\n4 p1 PE \"exit\" \"0 0 0.8\"\n"
	"4 p2 PE \"killed\" \"1 0 0\"\n4 p3 PE \"exec\" \"0.5 0 0.5\"\n"
	"4 p4 PE \"gone\" \"0.5 0.5 0.5\"\n"
	"4 c7 C \"collection begin\" \"0.5 0.5 0.5\"\n"
	"4 c8 C \"collection end\" \"0.5 0.5 0.5\"\n";

struct pj {
	struct pv_strs	evn;		/* names of user events: value e<id> */
	uint64_t	last;		/* latest time written */
	uint64_t	states;
	uint64_t	links;
	uint64_t	events;
};

#define NAME_MAX_PJ	200	/* bytes of a name kept */

/* A Paje string: printable ASCII but '"' and '\' as is, other bytes as
 * \xHH (Paje has no escapes), at most max bytes (pstr: NAME_MAX_PJ). */
static void
pstr_max(FILE *f, const char *s, size_t n, size_t max)
{
	unsigned char c;

	if (n > max)
		n = max;
	putc('"', f);
	for (; n > 0; s++, n--) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			putc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	putc('"', f);
}

static void
pstr(FILE *f, const char *s, size_t n)
{
	pstr_max(f, s, n, NAME_MAX_PJ);
}

/* A distinct, light enough colour for value k (1, 2, ...): hues apart by
 * the golden angle. */
static void
colour(FILE *f, uint64_t k)
{
	double h = fmod((double)k * 0.618033988749895, 1.0) * 6, s = 0.55,
	    v = 0.92, c = v * s, x = c * (1 - fabs(fmod(h, 2) - 1)), m = v - c;
	double r = 0, g = 0, b = 0;

	switch ((int)h) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	fprintf(f, "\"%.3f %.3f %.3f\"", r + m, g + m, b + m);
}

/* A record's fields as one Paje string, as a text trace has them (a
 * string's quotes and bytes escaped by pstr), at most FIELDS_MAX bytes. */
#define FIELDS_MAX	512

static void
fields(FILE *f, const struct grmtrace_ev *ev)
{
	char b[FIELDS_MAX];
	size_t n = 0;
	unsigned i;
	int k;

	b[0] = '\0';
	for (i = 0; i < ev->n && n < sizeof b; i++) {
		const struct grmtrace_field *x = &ev->f[i];
		const char *sep = i > 0 ? " " : "";

		switch (x->type) {
		case GRMTRACE_INT:
			k = snprintf(b + n, sizeof b - n, "%s%" PRId64, sep,
			    x->v.i);
			break;
		case GRMTRACE_UINT:
			k = snprintf(b + n, sizeof b - n, "%s%" PRIu64, sep,
			    x->v.u);
			break;
		case GRMTRACE_DOUBLE:
			k = snprintf(b + n, sizeof b - n, "%s%.17g", sep,
			    x->v.d);
			break;
		default:
			k = snprintf(b + n, sizeof b - n, "%s%.*s", sep,
			    (int)x->v.s.len, x->v.s.p);
			/* a NUL in the string ends what is kept of it */
			if (k > 0)
				k = (int)strnlen(b + n, sizeof b - n);
		}
		if (k < 0)
			break;
		n += (size_t)k;
	}
	if (n > sizeof b - 1)
		n = sizeof b - 1;
	pstr_max(f, b, n, sizeof b);
}

/* The time field: ts, or the latest written if it is earlier. */
static const char *
when(struct ex_walk *w, char *buf, size_t n, uint64_t ts)
{
	struct pj *p = w->arg;

	if (ts < p->last) {
		w->backwards++;
		ts = p->last;
	}
	p->last = ts;
	return ex_time(buf, n, ts, 0);
}

static int
pj_head(struct ex_walk *w)
{
	struct ex_host *h;
	struct ex_proc *p;
	struct ex_thr *t;
	struct ex_blk *b;
	uint32_t it = 0;
	char name[32], clk[160];
	FILE *f = w->out;

	/* Paje has no place for a trace's metadata: the time origin is in
	 * every host's Info (an extra field ViTE and PajeNG accept). */
	if (w->run.have_clock)
		snprintf(clk, sizeof clk, "time in s since %" PRIu64 " ns of "
		    "the trace clock (real time %" PRIu64 " ns)", w->run.t0,
		    pv_xrun_epoch(&w->run, w->run.t0));
	else
		snprintf(clk, sizeof clk, "time in s since %" PRIu64 " ns of "
		    "the trace clock", w->run.t0);
	fprintf(f, "%s%s", header, types);
	while ((b = pv_map_next(&w->blks, &it)) != NULL) {
		if (b->seq == 0)
			continue;
		fprintf(f, "4 b%" PRIu32 " S ", b->seq);
		pstr(f, b->name, b->len);
		putc(' ', f);
		colour(f, b->seq);
		putc('\n', f);
	}
	it = 0;
	while ((h = pv_map_next(&w->hosts, &it)) != NULL) {
		fprintf(f, "5 0.000000000 h%" PRIu32 " H 0 ", h->seq);
		if (h->name != NULL)
			pstr(f, h->name, strlen(h->name));
		else {
			snprintf(name, sizeof name, "node %" PRIu32, h->node);
			pstr(f, name, strlen(name));
		}
		putc(' ', f);
		pstr(f, clk, strlen(clk));
		putc('\n', f);
	}
	it = 0;
	while ((p = pv_map_next(&w->procs, &it)) != NULL) {
		fprintf(f, "5 0.000000000 p%" PRIu32 " P h%" PRIu32 " ", p->seq,
		    p->host->seq);
		pstr(f, p->label, strlen(p->label));
		fprintf(f, " \"node %" PRIu32 " pid %" PRIu32 "\"\n", p->node,
		    p->pid);
	}
	it = 0;
	while ((t = pv_map_next(&w->thrs, &it)) != NULL)
		fprintf(f, "5 0.000000000 t%" PRIu32 " T p%" PRIu32 " \"tid %"
		    PRIu32 "\" \"node %" PRIu32 " pid %" PRIu32 " tid %" PRIu32
		    "\"\n", t->seq, t->proc->seq, t->tid, t->node, t->pid,
		    t->tid);
	return 0;
}

static int
pj_begin(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b, uint64_t ts)
{
	char tb[32];

	fprintf(w->out, "7 %s S t%" PRIu32 " b%" PRIu32 "\n",
	    when(w, tb, sizeof tb, ts), t->seq, b->seq);
	return 0;
}

static int
pj_end(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b, uint64_t t0,
       uint64_t ts)
{
	struct pj *p = w->arg;
	char tb[32];

	(void)b;
	(void)t0;
	fprintf(w->out, "8 %s S t%" PRIu32 "\n", when(w, tb, sizeof tb, ts),
	    t->seq);
	p->states++;
	return 0;
}

static int
pj_msg(struct ex_walk *w, struct ex_thr *t, int send, const struct pv_msg *m,
       size_t i, uint64_t ts)
{
	struct pj *p = w->arg;
	char tb[32];

	if (m->match == 0) {
		fprintf(w->out, "9 %s U t%" PRIu32 " u%c \"peer %" PRId64
		    " tag %" PRId64 " bytes %" PRId64 "\"\n",
		    when(w, tb, sizeof tb, ts), t->seq, send ? 's' : 'r',
		    m->peer, m->tag, m->bytes);
		p->events++;
		return 0;
	}
	/* A link's key: its send's index. */
	fprintf(w->out, "%d %s M 0 m t%" PRIu32 " k%zu", send ? 10 : 11,
	    when(w, tb, sizeof tb, ts), t->seq, send ? i : m->match - 1);
	if (send)
		fprintf(w->out, " \"tag %" PRId64 " bytes %" PRId64 "\"",
		    m->tag, m->bytes);
	putc('\n', w->out);
	p->links += send;
	return 0;
}

static int
pj_event(struct ex_walk *w, struct ex_thr *t, const struct grmtrace_ev *ev,
	 uint64_t ts)
{
	struct pj *p = w->arg;
	const struct ex_host *h;
	const char *name;
	char tb[32], nb[32];
	uint64_t id;
	size_t n;

	if (t == NULL) {
		if ((h = pv_map_find(&w->hosts, ev->node, 0)) == NULL)
			return 0;
		fprintf(w->out, "9 %s C h%" PRIu32 " c%d ",
		    when(w, tb, sizeof tb, ts), h->seq, -ev->eid);
		fields(w->out, ev);
		putc('\n', w->out);
		p->events++;
		return 0;
	}
	name = ex_ev_name(ev, nb, sizeof nb);
	n = p->evn.n;
	if ((id = pv_str_id(&p->evn, name, strlen(name))) == 0)
		return ex_oom(w);
	if (p->evn.n > n) {
		fprintf(w->out, "4 e%" PRIu64 " E ", id);
		pstr(w->out, name, strlen(name));
		putc(' ', w->out);
		colour(w->out, id + 1000);
		putc('\n', w->out);
	}
	fprintf(w->out, "9 %s E t%" PRIu32 " e%" PRIu64 " ",
	    when(w, tb, sizeof tb, ts), t->seq, id);
	fields(w->out, ev);
	putc('\n', w->out);
	p->events++;
	return 0;
}

static int
pj_proc(struct ex_walk *w, struct ex_proc *pr, const struct ex_pev *ev,
	uint64_t ts)
{
	struct pj *p = w->arg;
	char tb[32], b[300];
	size_t n;

	if (pr == NULL)
		return 0;
	fprintf(w->out, "9 %s PE p%" PRIu32 " p%d ",
	    when(w, tb, sizeof tb, ts), pr->seq,
	    ev->how >= 0 && ev->how <= 4 ? ev->how : 4);
	n = (size_t)snprintf(b, sizeof b, "%s %" PRId32 " ppid %" PRIu32
	    " %.*s", ev->how == GRMTRACE_PROC_KILLED ? "signal" : "status",
	    ev->status, ev->ppid, (int)(ev->len < 200 ? ev->len : 200),
	    ev->prog);
	pstr(w->out, b, strnlen(b, n < sizeof b ? n : sizeof b - 1));
	putc('\n', w->out);
	p->events++;
	return 0;
}

static int
pj_loss(struct ex_walk *w, struct ex_proc *pr, struct ex_thr *t,
	const struct grmtrace_ev *ev, uint64_t ts)
{
	struct pj *p = w->arg;
	char tb[32];

	if (pr == NULL)
		return 0;
	if (t != NULL)
		fprintf(w->out, "9 %s LT t%" PRIu32 " lt \"%" PRIu64
		    "\"\n", when(w, tb, sizeof tb, ts), t->seq, ev->count);
	else
		fprintf(w->out, "9 %s LP p%" PRIu32 " lp \"%" PRIu64
		    "\"\n", when(w, tb, sizeof tb, ts), pr->seq, ev->count);
	p->events++;
	return 0;
}

static int
pj_tail(struct ex_walk *w)
{
	struct ex_host *h;
	struct ex_proc *pr;
	struct ex_thr *t;
	uint32_t it = 0;
	char tb[32];

	when(w, tb, sizeof tb, pv_xrun_rel(&w->run, w->run.t1));
	while ((t = pv_map_next(&w->thrs, &it)) != NULL)
		fprintf(w->out, "6 %s T t%" PRIu32 "\n", tb, t->seq);
	it = 0;
	while ((pr = pv_map_next(&w->procs, &it)) != NULL)
		fprintf(w->out, "6 %s P p%" PRIu32 "\n", tb, pr->seq);
	it = 0;
	while ((h = pv_map_next(&w->hosts, &it)) != NULL)
		fprintf(w->out, "6 %s H h%" PRIu32 "\n", tb, h->seq);
	return 0;
}

int
ex_paje(const struct pv_export *x)
{
	static const struct ex_ops ops = { pj_head, pj_begin, pj_end, pj_msg,
	    pj_event, pj_proc, pj_loss, pj_tail };
	struct pj p;
	int rc;

	memset(&p, 0, sizeof p);
	rc = ex_walk_run(x, "paje", &ops, &p);
	pv_strs_free(&p.evn);
	return rc;
}
