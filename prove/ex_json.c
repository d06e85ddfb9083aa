/* SPDX-License-Identifier: MIT */
/* ex_json.c: prove export --to json: the Trace Event JSON format that
 * Perfetto and Chrome's trace viewer open (doc/formats.md, "Exports"). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_walk.h"

/*
 * Processes are numbered 1, 2, ... (pid) and threads nprocs + 1, ... (tid)
 * in the order first seen, as grm's pids and tids are per host and may
 * repeat; the names say the real ones.  Blocks, BEE ranges and functions
 * are B/E slices; a matched message is a flow from its send to its
 * receive (a send or receive outside any block is a 1 ns slice of its own,
 * which the flow binds to); unmatched ones, user events, losses and
 * process starts and ends are instant events.  Times are microseconds
 * since the trace's first time, with 3 decimals: exact to the ns.
 */

struct js {
	uint64_t	slices;		/* B/E pairs */
	uint64_t	msl;		/* small message slices */
	uint64_t	flows;		/* s/f pairs */
	uint64_t	instants;
	uint64_t	nprocs;
	int		first;		/* no event written yet */
};

/* Writes s[0..n) as a JSON string: ASCII as is, other bytes as the
 * code point of the same value (U+0080 .. U+00FF), so the text stays
 * valid UTF-8 whatever the trace holds. */
static void
jstr(FILE *f, const char *s, size_t n)
{
	unsigned char c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			break;
	}
	putc('"', f);
	fwrite(s, 1, i, f);
	s += i;
	n -= i;
	for (; n > 0; s++, n--) {
		c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			putc(c, f);
		else
			fprintf(f, "\\u%04x", c);
	}
	putc('"', f);
}

static void
jcstr(FILE *f, const char *s)
{
	jstr(f, s, strlen(s));
}

/* Starts an event: the separator, ph, pid, tid, ts (written without
 * printf: it is most of the work). */
static void
ev_start(struct ex_walk *w, const char *ph, uint64_t pid, uint64_t tid,
	 uint64_t ts)
{
	struct js *j = w->arg;
	char b[160], *p = b;
	size_t n = strlen(ph);

	if (!j->first)
		*p++ = ',';
	j->first = 0;
	memcpy(p, "\n{\"ph\":\"", 8);
	p += 8;
	memcpy(p, ph, n);
	p += n;
	memcpy(p, "\",\"pid\":", 8);
	p = ex_u64(p + 8, pid);
	memcpy(p, ",\"tid\":", 7);
	p = ex_u64(p + 7, tid);
	memcpy(p, ",\"ts\":", 6);
	p = ex_u64(p + 6, ts / 1000);
	*p++ = '.';
	*p++ = (char)('0' + ts / 100 % 10);
	*p++ = (char)('0' + ts / 10 % 10);
	*p++ = (char)('0' + ts % 10);
	fwrite(b, 1, (size_t)(p - b), w->out);
}

static uint64_t
tid_of(const struct ex_walk *w, const struct ex_thr *t)
{
	return ((struct js *)w->arg)->nprocs + t->seq;
}

static void
host_name(FILE *f, const struct ex_host *h)
{
	if (h->name != NULL)
		fputs(h->name, f);
	else
		fprintf(f, "node %" PRIu32, h->node);
}

static int
by_host(const void *a, const void *b)
{
	const struct ex_proc *x = *(struct ex_proc *const *)a;
	const struct ex_proc *y = *(struct ex_proc *const *)b;

	if (x->host->seq != y->host->seq)
		return x->host->seq < y->host->seq ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A process's metadata: its name, its labels and its place (k-th when
 * sorted by host). */
static int
proc_meta(struct ex_walk *w, const struct ex_proc *p, size_t k)
{
	FILE *f = w->out, *m;
	char *name = NULL;
	size_t len = 0;

	/* "LABEL on HOST", built whole to be escaped as one string. */
	if ((m = open_memstream(&name, &len)) == NULL)
		return ex_oom(w);
	fprintf(m, "%s on ", p->label);
	host_name(m, p->host);
	if (strstr(p->label, "pid ") == NULL)
		fprintf(m, " pid %" PRIu32, p->pid);
	if (fclose(m) != 0) {
		free(name);
		return ex_oom(w);
	}
	ev_start(w, "M", p->seq, p->seq, 0);
	fprintf(f, ",\"name\":\"process_name\",\"args\":{\"name\":");
	jstr(f, name, len);
	fprintf(f, "}}");
	free(name);
	ev_start(w, "M", p->seq, p->seq, 0);
	fprintf(f, ",\"name\":\"process_sort_index\",\"args\":"
	    "{\"sort_index\":%zu}}", k);
	ev_start(w, "M", p->seq, p->seq, 0);
	fprintf(f, ",\"name\":\"process_labels\",\"args\":"
	    "{\"labels\":\"node %" PRIu32 " pid %" PRIu32 "\"}}",
	    p->node, p->pid);
	return 0;
}

static int
js_head(struct ex_walk *w)
{
	struct js *j = w->arg;
	struct ex_proc **ps;
	struct ex_thr *t;
	uint32_t it = 0;
	size_t i;
	char b[64];
	FILE *f = w->out;

	j->first = 1;
	j->nprocs = pv_map_n(&w->procs);
	fprintf(f, "{\"traceEvents\":[");
	if ((ps = (struct ex_proc **)pv_map_values(&w->procs)) == NULL)
		return ex_oom(w);
	qsort(ps, j->nprocs, sizeof *ps, by_host);
	for (i = 0; i < j->nprocs; i++)
		if (proc_meta(w, ps[i], i + 1) != 0) {
			free(ps);
			return -1;
		}
	free(ps);
	while ((t = pv_map_next(&w->thrs, &it)) != NULL) {
		snprintf(b, sizeof b, "tid %" PRIu32, t->tid);
		ev_start(w, "M", t->proc->seq, tid_of(w, t), 0);
		fprintf(f, ",\"name\":\"thread_name\",\"args\":{\"name\":");
		jcstr(f, b);
		fprintf(f, "}}");
		ev_start(w, "M", t->proc->seq, tid_of(w, t), 0);
		fprintf(f, ",\"name\":\"thread_sort_index\",\"args\":"
		    "{\"sort_index\":%" PRIu32 "}}", t->seq);
	}
	return 0;
}

/* Writes v in decimal. */
static void
put_i64(FILE *f, int64_t v)
{
	char b[24], *p = b;

	if (v < 0) {
		*p++ = '-';
		p = ex_u64(p, -(uint64_t)v);
	} else
		p = ex_u64(p, (uint64_t)v);
	fwrite(b, 1, (size_t)(p - b), f);
}

static void
slice_name(FILE *f, const struct ex_blk *b)
{
	fputs(b->range ? ",\"cat\":\"range\",\"name\":" :
	    ",\"cat\":\"block\",\"name\":", f);
	jstr(f, b->name, b->len);
	fputs(",\"args\":{\"id\":", f);
	put_i64(f, b->id);
	fputs("}}", f);
}

static int
js_begin(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b, uint64_t ts)
{
	ev_start(w, "B", t->proc->seq, tid_of(w, t), ts);
	slice_name(w->out, b);
	return 0;
}

static int
js_end(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b, uint64_t t0,
       uint64_t ts)
{
	struct js *j = w->arg;

	(void)t0;
	ev_start(w, "E", t->proc->seq, tid_of(w, t), ts);
	slice_name(w->out, b);
	j->slices++;
	return 0;
}

static void
msg_args(FILE *f, const struct pv_msg *m)
{
	fprintf(f, ",\"args\":{\"peer\":%" PRId64 ",\"tag\":%" PRId64
	    ",\"bytes\":%" PRId64 ",\"bound_ns\":%" PRIu64 "}}", m->peer,
	    m->tag, m->bytes, m->bound);
}

static int
js_msg(struct ex_walk *w, struct ex_thr *t, int send, const struct pv_msg *m,
       size_t i, uint64_t ts)
{
	struct js *j = w->arg;
	const char *what = send ? "send" : "receive";
	uint64_t pid = t->proc->seq, tid = tid_of(w, t);

	if (m->match == 0) {
		ev_start(w, "i", pid, tid, ts);
		fprintf(w->out, ",\"s\":\"t\",\"cat\":\"message\",\"name\":"
		    "\"%s (not matched)\"", what);
		msg_args(w->out, m);
		j->instants++;
		return 0;
	}
	if (t->depth == 0) {
		ev_start(w, "X", pid, tid, ts);
		fprintf(w->out, ",\"dur\":0.001,\"cat\":\"message\","
		    "\"name\":\"%s\"", what);
		msg_args(w->out, m);
		j->msl++;
	}
	ev_start(w, send ? "s" : "f", pid, tid, ts);
	fprintf(w->out, ",%s\"cat\":\"message\",\"name\":\"message\","
	    "\"id\":%zu}", send ? "" : "\"bp\":\"e\",",
	    send ? i + 1 : m->match);
	j->flows += send;
	return 0;
}

/* The fields of a record as a JSON array. */
static void
fields(FILE *f, const struct grmtrace_ev *ev)
{
	const struct grmtrace_field *x;
	char b[24];
	unsigned i;

	fputs(",\"args\":{\"eid\":", f);
	put_i64(f, ev->eid);
	fputs(",\"fields\":[", f);
	for (i = 0; i < ev->n; i++) {
		x = &ev->f[i];
		if (i > 0)
			putc(',', f);
		switch (x->type) {
		case GRMTRACE_INT:
			put_i64(f, x->v.i);
			break;
		case GRMTRACE_UINT:
			fwrite(b, 1, (size_t)(ex_u64(b, x->v.u) - b), f);
			break;
		case GRMTRACE_DOUBLE:
			if (isfinite(x->v.d))
				fprintf(f, "%.17g", x->v.d);
			else
				fprintf(f, "\"%g\"", x->v.d);
			break;
		default:
			jstr(f, x->v.s.p, x->v.s.len);
		}
	}
	fprintf(f, "],\"bound_ns\":");
	fwrite(b, 1, (size_t)(ex_u64(b, ev->bound_ns) - b), f);
	fprintf(f, "}}");
}

static int
js_event(struct ex_walk *w, struct ex_thr *t, const struct grmtrace_ev *ev,
	 uint64_t ts)
{
	struct js *j = w->arg;
	char b[32];

	if (t != NULL) {
		ev_start(w, "i", t->proc->seq, tid_of(w, t), ts);
		fprintf(w->out, ",\"s\":\"t\",\"cat\":\"event\",\"name\":");
	} else {
		/* A host's collection phase: for the whole trace. */
		ev_start(w, "i", 0, 0, ts);
		fprintf(w->out, ",\"s\":\"g\",\"cat\":\"collection\","
		    "\"name\":");
	}
	jcstr(w->out, ex_ev_name(ev, b, sizeof b));
	fields(w->out, ev);
	j->instants++;
	return 0;
}

static int
js_proc(struct ex_walk *w, struct ex_proc *p, const struct ex_pev *ev,
	uint64_t ts)
{
	static const char *const how[] = { "process start", "process exit",
	    "process killed", "process exec", "process gone" };
	struct js *j = w->arg;

	if (p == NULL)
		return 0;
	ev_start(w, "i", p->seq, p->seq, ts);
	fprintf(w->out, ",\"s\":\"p\",\"cat\":\"process\",\"name\":\"%s\","
	    "\"args\":{\"program\":", ev->how >= 0 && ev->how <= 4 ?
	    how[ev->how] : "process end");
	jstr(w->out, ev->prog, ev->len);
	fprintf(w->out, ",\"ppid\":%" PRIu32 ",\"%s\":%" PRId32 "}}",
	    ev->ppid, ev->how == GRMTRACE_PROC_KILLED ? "signal" : "status",
	    ev->status);
	j->instants++;
	return 0;
}

static int
js_loss(struct ex_walk *w, struct ex_proc *p, struct ex_thr *t,
	const struct grmtrace_ev *ev, uint64_t ts)
{
	struct js *j = w->arg;

	if (p == NULL)
		return 0;
	ev_start(w, "i", p->seq, t != NULL ? tid_of(w, t) : p->seq, ts);
	fprintf(w->out, ",\"s\":\"%s\",\"cat\":\"loss\",\"name\":\"events "
	    "lost\",\"args\":{\"count\":%" PRIu64 "}}", t != NULL ? "t" : "p",
	    ev->count);
	j->instants++;
	return 0;
}

static int
js_tail(struct ex_walk *w)
{
	struct js *j = w->arg;
	FILE *f = w->out;

	fprintf(f, "\n],\n\"otherData\":{\"source\":\"grm\",\"trace\":");
	jcstr(f, w->x->in);
	if (w->mm != NULL) {
		fprintf(f, ",\"mainmon\":");
		jcstr(f, w->mm);
	}
	/* 64-bit values as strings: a JSON number is a double. */
	fprintf(f, ",\n\"clock\":\"ts is microseconds since time_origin_ns "
	    "of the trace's clock (mainmon's monotonic clock, hosts "
	    "corrected to it)\",\n\"time_origin_ns\":\"%" PRIu64 "\"",
	    w->run.t0);
	if (w->run.have_clock)
		fprintf(f, ",\"clock_realtime_ns\":\"%" PRIu64 "\","
		    "\"clock_monotonic_ns\":\"%" PRIu64 "\","
		    "\"time_origin_realtime_ns\":\"%" PRIu64 "\"",
		    w->run.clk_real, w->run.clk_mono,
		    pv_xrun_epoch(&w->run, w->run.t0));
	fprintf(f, ",\n\"records\":\"%" PRIu64 "\",\"events_lost\":\"%"
	    PRIu64 "\",\"slices\":\"%" PRIu64 "\",\"message_slices\":\"%"
	    PRIu64 "\",\"flows\":\"%" PRIu64 "\",\"instants\":\"%" PRIu64
	    "\"}}\n", w->run.total, w->losses, j->slices, j->msl, j->flows,
	    j->instants);
	return 0;
}

int
ex_json(const struct pv_export *x)
{
	static const struct ex_ops ops = { js_head, js_begin, js_end, js_msg,
	    js_event, js_proc, js_loss, js_tail };
	struct js j;

	memset(&j, 0, sizeof j);
	return ex_walk_run(x, "json", &ops, &j);
}
