/* SPDX-License-Identifier: MIT */
/* ex_otf2.c: prove export --to otf2: the trace as an OTF2 archive, written
 * with the OTF2 library (Vampir, Scalasca, ViTE read it): the command,
 * pass 1 and the archive's files (ex_otf2.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_otf2.h"

/*
 * Two passes over the trace.  Pass 1 learns the threads (one OTF2
 * location each), processes (location groups), hosts (system tree nodes),
 * processes' ranks, the first time stamp and the wall-clock epoch, and
 * matches message sends with receives as they stream (ex_msgs, with
 * pairs: which matched ones are not MPI messages).  Pass 2 writes the
 * events; definitions met on the way (regions, metric classes) are kept
 * and written with the others at the end, as the global definitions may
 * come after the events.
 *
 * Memory grows with threads, processes, hosts, definitions (regions,
 * metric classes, strings) and open blocks, and with the message channels
 * and the messages in flight (ex_msg.h: 24 bytes per send not yet
 * received, and per receive before its send, in pass 1; 8 bytes per send
 * not yet received in pass 2; plus one entry per matched message that is
 * not an MPI one); never with the other records nor with the messages,
 * but for traces whose messages must be kept to be matched (ex_msgs.keep:
 * pv_msgs, about 90 bytes each).  The OTF2 library
 * buffers at most two chunks (2 MiB) per location (chunk_alloc).
 *
 * Mapping (doc/formats.md, "OTF2"): locations are numbered 0 .. n-1: first
 * the first thread of each ranked process, in rank order (so that the
 * communicator's rank i is location i, which ViTE needs), then the other
 * threads, process by process.  Blocks, BEE ranges, functions and
 * collection phases are regions (enter and leave); a matched message
 * between ranked processes is an MPI send and receive on one communicator
 * of the ranked processes, with its tag and length; every other record is
 * a metric of a class per event type (its numeric fields; string fields
 * are left out and counted); #LOSS lines are an "events lost" metric and
 * process ends (#PROC exit, killed, gone) a metric too, written last.
 * Time stamps are nanoseconds from the trace's first record; the clock properties carry
 * its wall-clock time (realtimeTimestamp), also in the GRM::EPOCH_NS
 * property.  A time stamp earlier than the previous one of its location
 * (clock corrections, late records) is raised to it and counted.
 */

int
ox_oom(void)
{
	fprintf(stderr, "prove: export: otf2: out of memory\n");
	return -1;
}

/* The OTF2 string ref of s[0..n) (ids start at 1, refs at 0). */
int
ox_sref(struct ox *o, const char *s, size_t n, uint32_t *ref)
{
	uint64_t id = pv_str_id(&o->strs, s, n);

	if (id == 0)
		return ox_oom();
	*ref = (uint32_t)(id - 1);
	return 0;
}

int
ox_sref_f(struct ox *o, uint32_t *ref, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return ox_sref(o, buf, (size_t)n < sizeof buf ? (size_t)n :
	    sizeof buf - 1, ref);
}

/* ---- pass 1 ---- */

static struct proc *
proc_get(struct ox *o, uint32_t node, uint32_t pid)
{
	struct proc *p, **np;

	if ((p = pv_map_find(&o->px, node, pid)) != NULL)
		return p;
	if ((p = pv_map_get(&o->px, node, pid, sizeof *p)) == NULL)
		return NULL;
	p->node = node;
	p->pid = pid;
	p->seen = o->npr;
	if ((np = realloc(o->pr, (o->npr + 1) * sizeof *np)) == NULL)
		return NULL;
	o->pr = np;
	o->pr[o->npr++] = p;
	return p;
}

static struct thr *
thr_get(struct ox *o, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct thr *t, **nt;
	struct proc *p;
	size_t *hv;
	uint32_t *nh;

	if ((t = pv_map_find(&o->thx, (uint64_t)node << 32 | pid, tid)) !=
	    NULL)
		return t;
	if ((p = proc_get(o, node, pid)) == NULL ||
	    (t = pv_map_get(&o->thx, (uint64_t)node << 32 | pid, tid,
	    sizeof *t)) == NULL ||
	    (nt = realloc(o->th, (o->nth + 1) * sizeof *nt)) == NULL)
		return NULL;
	o->th = nt;
	t->node = node;
	t->pid = pid;
	t->tid = tid;
	o->th[o->nth++] = t;
	if ((hv = pv_map_find(&o->hx, node, 0)) == NULL) {
		if ((nh = pv_grow(o->hosts, &o->chost, o->nhost,
		    sizeof *nh)) == NULL ||
		    (hv = pv_map_get(&o->hx, node, 0, sizeof *hv)) == NULL)
			return NULL;
		o->hosts = nh;
		o->hosts[o->nhost++] = node;
		*hv = o->nhost;
	}
	p->host = *hv;
	return t;
}

int
ox_survey(struct ox *o, struct grmtrace *r)
{
	const struct grmtrace_ev *ev;
	struct pv_mark m;
	int rc;

	pv_xrun_pass(&o->run, 1);
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		pv_xrun_time(&o->run, ev);
		if (ev->kind == GRMTRACE_CLOCK)
			continue;
		if (ev->kind == GRMTRACE_LOSS) {
			if (thr_get(o, ev->node, ev->pid, ev->tid) == NULL)
				return -2;
			continue;
		}
		if (ev->kind != GRMTRACE_RECORD) {
			if (pv_sym_ev(&o->sym, ev) != 0 ||
			    pv_msgs_ev(&o->msgs, ev, NULL) != 0)
				return -2;
			continue;
		}
		pv_xrun_record(&o->run);
		if (thr_get(o, ev->node, ev->pid, ev->tid) == NULL ||
		    pv_mark(&o->names, &o->sym, ev, &m) != 0 ||
		    (m.kind == PV_SEND || m.kind == PV_RECV ?
		    ex_msgs_ev(&o->xm, &o->msgs, ev, &m) :
		    pv_msgs_ev(&o->msgs, ev, &m)) != 0)
			return -2;
	}
	pv_xrun_done(&o->run);
	if (rc == 0 && ex_msgs_plan(&o->xm, &o->msgs) != 0)
		return -2;
	return rc;
}

static int
by_rank(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a;
	const struct proc *y = *(const struct proc *const *)b;

	if (x->holder != y->holder)
		return y->holder - x->holder;
	if (x->holder)
		return pv_cmp(x->rank, y->rank);	/* distinct */
	return (x->seen > y->seen) - (x->seen < y->seen);
}

static int
cmp_i64(const void *a, const void *b)
{
	return pv_cmp(*(const int64_t *)a, *(const int64_t *)b);
}

/* The comm index of rank, or -1. */
int64_t
ox_rank_ix(const struct ox *o, int64_t rank)
{
	const int64_t *p = bsearch(&rank, o->ranks, o->nranks,
	    sizeof *o->ranks, cmp_i64);

	return p == NULL ? -1 : p - o->ranks;
}

static int
msg_ok(const struct ox *o, const struct pv_msg *s,
       const struct pv_msg *r)
{
	const struct proc *ps = pv_map_find(&o->px, s->node, s->pid);
	const struct proc *pr = pv_map_find(&o->px, r->node, r->pid);

	/* A receive before its send (a clock error beyond its bound) is
	 * no MPI message either: ViTE aborts on a receive from a location
	 * with no event yet. */
	return ps != NULL && pr != NULL && ps->holder && pr->holder &&
	    s->tid == ps->mtid && r->tid == pr->mtid &&
	    s->tag >= 0 && s->tag <= (int64_t)UINT32_MAX && r->ts >= s->ts;
}

/* Each process's first thread with a message: its rank's location. */
static void
msg_threads(struct ox *o, const struct pv_msg *v, size_t n)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < n; i++)
		if ((p = pv_map_find(&o->px, v[i].node, v[i].pid)) != NULL &&
		    (!p->has_mtid || v[i].seq < p->mseq)) {
			p->has_mtid = 1;
			p->mtid = v[i].tid;
			p->mseq = v[i].seq;
		}
}

/* Ranks, the order of the locations, the messages written as MPI ones. */
int
ox_plan(struct ox *o)
{
	const struct pv_proc *pp;
	struct proc **ord;
	struct thr *t;
	uint64_t loc = 0;
	size_t i, j;

	if ((o->ranks = malloc((o->npr + 1) * sizeof *o->ranks)) == NULL ||
	    (ord = malloc((o->npr + 1) * sizeof *ord)) == NULL)
		return ox_oom();
	/* The first process seen with a rank holds it. */
	for (i = 0; i < o->npr; i++) {
		pp = pv_proc(&o->msgs, o->pr[i]->node, o->pr[i]->pid);
		if (pp == NULL || !pp->has_rank || o->pr[i]->pid == 0)
			continue;
		o->pr[i]->rank = pp->rank;
		for (j = 0; j < o->nranks && o->ranks[j] != pp->rank; j++)
			continue;
		if (j < o->nranks)
			continue;
		o->ranks[o->nranks++] = pp->rank;
		o->pr[i]->holder = 1;
	}
	qsort(o->ranks, o->nranks, sizeof *o->ranks, cmp_i64);
	/* The holders in rank order, then the others as first met. */
	memcpy(ord, o->pr, o->npr * sizeof *ord);
	qsort(ord, o->npr, sizeof *ord, by_rank);
	/* Location ids: the holders' message threads (else their first),
	 * then the others.  ViTE takes rank i for location i, and draws a
	 * message from any other location of a rank wrong (or crashes). */
	if (o->xm.keep) {
		msg_threads(o, o->msgs.snd, o->msgs.nsnd);
		msg_threads(o, o->msgs.rcv, o->msgs.nrcv);
	} else
		for (i = 0; i < o->npr; i++)
			o->pr[i]->has_mtid = ex_msgs_mtid(&o->xm,
			    o->pr[i]->node, o->pr[i]->pid, &o->pr[i]->mtid);
	for (i = 0; i < o->nth; i++)
		o->th[i]->loc = UINT64_MAX;
	for (i = 0; i < o->npr && ord[i]->holder; i++)
		for (j = 0; j < o->nth; j++) {
			t = o->th[j];
			if (t->node == ord[i]->node && t->pid == ord[i]->pid &&
			    (!ord[i]->has_mtid || t->tid == ord[i]->mtid)) {
				t->loc = loc++;
				ord[i]->first = j + 1;
				break;
			}
		}
	for (i = 0; i < o->npr; i++)
		for (j = 0; j < o->nth; j++) {
			t = o->th[j];
			if (t->node != ord[i]->node || t->pid != ord[i]->pid)
				continue;
			if (ord[i]->first == 0)
				ord[i]->first = j + 1;
			if (t->loc == UINT64_MAX)
				t->loc = loc++;
		}
	free(ord);
	/* Threads by location id. */
	{
		struct thr **byloc = malloc((o->nth + 1) * sizeof *byloc);

		if (byloc == NULL)
			return ox_oom();
		for (i = 0; i < o->nth; i++)
			byloc[o->th[i]->loc] = o->th[i];
		free(o->th);
		o->th = byloc;
	}
	if (!o->xm.keep) {
		o->epoch = pv_xrun_epoch(&o->run, o->run.t0);
		return 0;
	}
	if (pv_msgs_match(&o->msgs) != 0 ||
	    (o->sok = calloc(o->msgs.nsnd + 1, 1)) == NULL ||
	    (o->rok = calloc(o->msgs.nrcv + 1, 1)) == NULL)
		return ox_oom();
	for (i = 0; i < o->msgs.nsnd; i++) {
		const struct pv_msg *s = &o->msgs.snd[i];

		if (s->match == 0 ||
		    !msg_ok(o, s, &o->msgs.rcv[s->match - 1]))
			continue;
		o->sok[i] = 1;
		o->rok[s->match - 1] = 1;
	}
	/* What pass 2 needs of the messages: sok, rok, and the peers. */
	o->epoch = pv_xrun_epoch(&o->run, o->run.t0);
	return 0;
}

/* ---- the command ---- */

static OTF2_FlushType
pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
	  bool final)
{
	(void)ud;
	(void)ft;
	(void)loc;
	(void)cd;
	(void)final;
	return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cb = { pre_flush, NULL };

/*
 * The chunks of one OTF2 buffer.  Left to itself the library keeps every
 * chunk of a location's events until the end; refusing a third chunk of
 * events makes it flush the buffer to its file and free its chunks, so
 * each location holds at most two (2 MiB).  Definitions are not bounded
 * (they grow with definitions).
 */
#define EVT_CHUNKS	2

struct chunks {
	void		**v;
	size_t		n;
	size_t		cap;
};

static void *
chunk_alloc(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd,
	    uint64_t size)
{
	struct chunks *c = *pbd;
	void **nv, *m;

	(void)ud;
	(void)loc;
	if (c == NULL && (c = *pbd = calloc(1, sizeof *c)) == NULL)
		return NULL;
	if (ft == OTF2_FILETYPE_EVENTS && c->n >= EVT_CHUNKS)
		return NULL;
	if ((nv = pv_grow(c->v, &c->cap, c->n, sizeof *nv)) == NULL)
		return NULL;
	c->v = nv;
	if ((m = malloc(size)) == NULL)
		return NULL;
	c->v[c->n++] = m;
	return m;
}

static void
chunk_free_all(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd,
	       bool final)
{
	struct chunks *c = *pbd;

	(void)ud;
	(void)ft;
	(void)loc;
	if (c == NULL)
		return;
	while (c->n > 0)
		free(c->v[--c->n]);
	if (final) {
		free(c->v);
		free(c);
		*pbd = NULL;
	}
}

static const OTF2_MemoryCallbacks memory_cb = { chunk_alloc,
    chunk_free_all };


static void
say_lost(const struct ox *o)
{
	const char *p = "prove: export: otf2:";

	pv_xrun_say(&o->run);
	if (o->unmatched_end > 0)
		fprintf(stderr, "%s %" PRIu64 " block ends with no block of "
		    "their id open left out\n", p, o->unmatched_end);
	if (o->closed_by > 0)
		fprintf(stderr, "%s %" PRIu64 " blocks not ended closed by the "
		    "end of one enclosing them\n", p, o->closed_by);
	if (o->unclosed > 0)
		fprintf(stderr, "%s %" PRIu64 " blocks still open at the end "
		    "closed at their thread's last event\n", p, o->unclosed);
	if (o->msg_metric > 0)
		fprintf(stderr, "%s %" PRIu64 " message records written as "
		    "metrics (not matched, not between ranked processes, not of "
		    "the rank's messages' thread, a tag out of 0 .. 2^32-1, or "
		    "received before sent)\n", p,
		    o->msg_metric);
	if (o->strfields > 0)
		fprintf(stderr, "%s %" PRIu64 " user events with string fields "
		    "written as metrics without them\n", p, o->strfields);
	if (o->noloc > 0)
		fprintf(stderr, "%s %" PRIu64 " #LOSS lines of threads "
		    "and processes with no records left out\n", p, o->noloc);
	if (o->losses > 0)
		fprintf(stderr, "%s the trace lost %" PRIu64 " events (#LOSS, "
		    "written as \"events lost\" metrics)\n", p, o->losses);
}

static void
thr_free(void *v)
{
	free(((struct thr *)v)->st);
}

static void
ox_free(struct ox *o)
{
	pv_strs_free(&o->strs);
	pv_strs_free(&o->names);
	pv_sym_free(&o->sym);
	pv_msgs_free(&o->msgs);
	ex_msgs_free(&o->xm);
	pv_map_free(&o->thx, thr_free);
	pv_map_free(&o->px, NULL);
	pv_map_free(&o->hx, NULL);
	pv_map_free(&o->bnames, NULL);
	pv_map_free(&o->rx, NULL);
	pv_map_free(&o->mx, NULL);
	free(o->th);
	free(o->pr);
	free(o->hosts);
	free(o->ranks);
	free(o->sok);
	free(o->rok);
}

/* Pass 2 and the archive's files, into folder dir. */
static int
write_archive(struct ox *o, const char *dir)
{
	struct grmtrace *r;
	OTF2_ErrorCode e;
	char num[32];
	size_t i;
	int rc;

	if ((o->ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
	    1 << 20, 4 << 20, OTF2_SUBSTRATE_POSIX,
	    OTF2_COMPRESSION_NONE)) == NULL) {
		fprintf(stderr, "prove: export: otf2: %s: cannot create the "
		    "archive\n", dir);
		return -1;
	}
	CK(OTF2_Archive_SetFlushCallbacks(o->ar, &flush_cb, NULL));
	CK(OTF2_Archive_SetMemoryCallbacks(o->ar, &memory_cb, NULL));
	CK(OTF2_Archive_SetSerialCollectiveCallbacks(o->ar));
	CK(OTF2_Archive_SetCreator(o->ar, "grm prove export"));
	CK(OTF2_Archive_SetDescription(o->ar, o->x->in));
	snprintf(num, sizeof num, "%" PRIu64, o->epoch);
	CK(OTF2_Archive_SetProperty(o->ar, "GRM::EPOCH_NS", num, true));
	CK(OTF2_Archive_OpenEvtFiles(o->ar));
	if ((r = pv_export_open(o->x)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	o->tmax = 0;
	pv_xrun_pass(&o->run, 2);
	rc = ox_write_events(o, r);
	if (rc == -1) {
		pv_fail(o->x->in, r);
		return -1;
	}
	if (rc == 0 && (ox_close_open(o) != 0 || ox_proc_ends(o, r) != 0))
		rc = -2;
	/* Every location gets an event writer (and its local definitions),
	 * even one with no event left. */
	for (i = 0; rc == 0 && i < o->nth; i++)
		if (ox_writer(o, o->th[i]) != 0)
			rc = -2;
	/* The definitions name hosts from r. */
	if (rc == 0 && ox_write_defs(o, r) != 0)
		rc = -2;
	pv_close(o->x->in, r);
	if (rc != 0)
		return -1;
	pv_xrun_done(&o->run);
	for (i = 0; i < o->nth; i++)
		CK(OTF2_Archive_CloseEvtWriter(o->ar, o->th[i]->w));
	CK(OTF2_Archive_CloseEvtFiles(o->ar));
	CK(OTF2_Archive_OpenDefFiles(o->ar));
	for (i = 0; i < o->nth; i++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar,
		    o->th[i]->loc);

		if (dw == NULL) {
			fprintf(stderr, "prove: export: otf2: no local "
			    "definition writer\n");
			return -1;
		}
		CK(OTF2_Archive_CloseDefWriter(o->ar, dw));
	}
	CK(OTF2_Archive_CloseDefFiles(o->ar));
	/* The events lost, in all (the #LOSS lines' sum), for tools that
	 * look at the anchor file only. */
	snprintf(num, sizeof num, "%" PRIu64, o->losses);
	CK(OTF2_Archive_SetProperty(o->ar, "GRM::EVENTS_LOST", num, true));
	e = OTF2_Archive_Close(o->ar);
	o->ar = NULL;
	if (e != OTF2_SUCCESS)
		return ox_fail("closing the archive", e);
	return 0;
}

int
ex_otf2(const struct pv_export *x)
{
	struct ox o;
	struct grmtrace *r;
	char tmp[4096];
	int rc;

	memset(&o, 0, sizeof o);
	o.x = x;
	o.xm.pairs = 1;
	pv_xrun_init(&o.run, x, "otf2");
	if ((r = pv_export_open(x)) == NULL)
		return 1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS) | GRMTRACE_WANT(GRMTRACE_CLOCK));
	rc = ox_survey(&o, r);
	if (rc == -1) {
		ox_free(&o);
		return pv_fail(x->in, r);
	}
	grmtrace_close(r);
	if (rc == 0 && o.xm.keep) {
		if ((r = pv_export_open(x)) == NULL) {
			ox_free(&o);
			return 1;
		}
		if ((rc = ex_msgs_keep(&o.xm, &o.msgs, &o.names, &o.sym, r,
		    o.run.total)) == -1) {
			ox_free(&o);
			return pv_fail(x->in, r);
		}
		grmtrace_close(r);
		if (rc == -3)
			rc = 0;	/* pass 2 says it */
	}
	if (rc != 0) {
		ox_oom();
		ox_free(&o);
		return 1;
	}
	/* Pass 2 reads the load map again from the start. */
	pv_sym_free(&o.sym);
	pv_strs_free(&o.names);
	if (ox_plan(&o) != 0 || pv_export_dir_open(x, tmp, sizeof tmp) != 0) {
		ox_free(&o);
		return 1;
	}
	if (write_archive(&o, tmp) != 0) {
		if (o.ar != NULL)
			OTF2_Archive_Close(o.ar);
		pv_export_dir_abort(tmp);
		ox_free(&o);
		return 1;
	}
	say_lost(&o);
	ox_free(&o);
	return pv_export_dir_commit(x, tmp) == 0 ? 0 : 1;
}

