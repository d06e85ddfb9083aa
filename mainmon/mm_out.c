/* SPDX-License-Identifier: MIT */
/* mm_out.c: turning LM batches into trace file lines: event definitions
 * per node, clock correction, record decoding. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "mm.h"
#include "net/loop.h"
#include "net/wire.h"
#include "rec/dense.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

/* The hash the table always had: the same order of #DEF lines in a new
 * file (mm_rotate.c). */
static uint32_t
eid_hash(const void *key)
{
	int32_t eid;

	memcpy(&eid, key, sizeof eid);
	return (uint32_t)eid * 2654435761u;
}

static const struct hmap_type defs_type = {
	sizeof(int32_t), sizeof(struct tape_def), 64, eid_hash
};
/* A process's: most define and use a few types (and there may be many
 * processes at a time). */
static const struct hmap_type proc_defs_type = {
	sizeof(int32_t), sizeof(struct tape_def), 8, eid_hash
};

/* Counts every change to any table of definitions and to what resolve
 * looks at (a process made, its image or its parent set): while it
 * stays, resolve answers as it did and writes nothing (out_lazy keeps
 * its answer). */
static uint64_t defs_gen;

static struct tape_def *
defs_find(struct mm_defs *d, int32_t eid)
{
	return hmap_find(&d->map, &eid);
}

/* The slot for eid, new (format NULL) if absent; NULL if out of memory. */
static struct tape_def *
defs_slot(struct mm_defs *d, int32_t eid)
{
	struct tape_def *e;

	if (d->map.type == NULL)
		hmap_init(&d->map, &defs_type);
	if ((e = hmap_put(&d->map, &eid, NULL)) != NULL)
		e->eid = eid;
	return e;
}

void
mm_defs_free(struct mm_defs *d)
{
	struct tape_def *e;
	uint32_t it = 0;

	defs_gen++;
	while ((e = hmap_next(&d->map, &it, NULL)) != NULL) {
		free(e->format);
		free(e->dsc);
	}
	hmap_free(&d->map);
	memset(d, 0, sizeof *d);
}

/*
 * Records definition (eid, format, dsc) in table d; returns 1 if it is new
 * or changed, 0 if known and the same, -1 if it cannot be used.
 */
static int
defs_put(struct mm_defs *d, int32_t eid, uint8_t cls, uint8_t attr,
	 const char *format, size_t flen, const char *dsc, size_t dlen)
{
	struct tape_def *e;
	struct rec_fmt fmt;
	char *f, *ds;

	defs_gen++;
	f = strndup(format, flen);
	ds = strndup(dsc, dlen);
	if (f == NULL || ds == NULL || rec_parse_format(f, &fmt) != 0) {
		free(f);
		free(ds);
		return -1;
	}
	e = defs_slot(d, eid);
	if (e == NULL) {
		free(f);
		free(ds);
		return -1;
	}
	if (e->format != NULL && strcmp(e->format, f) == 0 &&
	    strcmp(e->dsc, ds) == 0 && e->cls == cls && e->attr == attr) {
		free(f);
		free(ds);
		return 0;
	}
	free(e->format);
	free(e->dsc);
	e->format = f;
	e->dsc = ds;
	e->cls = cls;
	e->attr = attr;
	e->fmt = fmt;
	return 1;
}

/* Writes the global #DEF of eid if the file has none yet: the first
 * definition seen is every process's unless one says otherwise. */
static int
define_global(struct mm *mm, int32_t eid, uint8_t cls, uint8_t attr,
	      const char *format, size_t flen, const char *dsc, size_t dlen)
{
	if (defs_find(&mm->written, eid) != NULL)
		return 0;
	if (defs_put(&mm->written, eid, cls, attr, format, flen, dsc,
	    dlen) < 0)
		return -1;
	return tape_def(mm->out, eid, cls, attr, format, flen, dsc, dlen);
}

/* Makes eid's definition known for node n and the process image whose
 * definitions are pd (either may be NULL), and gives the file a global one
 * if it has none. */
static int
define(struct mm *mm, struct mm_node *n, struct mm_defs *pd, int32_t eid,
       uint8_t cls, uint8_t attr, const char *format, size_t flen,
       const char *dsc, size_t dlen)
{
	if (n != NULL &&
	    defs_put(&n->defs, eid, cls, attr, format, flen, dsc, dlen) < 0)
		return -1;
	if (pd != NULL &&
	    defs_put(pd, eid, cls, attr, format, flen, dsc, dlen) < 0)
		return -1;
	return define_global(mm, eid, cls, attr, format, flen, dsc, dlen);
}

static struct mm_proc *
proc_get(struct mm_node *n, uint32_t pid, int create)
{
	struct mm_proc **b = &n->procs[pid % MM_PROC_BUCKETS], *p;

	for (p = *b; p != NULL; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || (p = calloc(1, sizeof *p)) == NULL)
		return NULL;
	defs_gen++;
	hmap_init(&p->own.map, &proc_defs_type);
	hmap_init(&p->old_own.map, &proc_defs_type);
	hmap_init(&p->resolved.map, &proc_defs_type);
	hmap_init(&p->scoped.map, &proc_defs_type);
	p->pid = pid;
	p->next = *b;
	*b = p;
	return p;
}

/* Its definitions but the scoped ones (what a reader applies). */
static void
proc_slim(struct mm_proc *p)
{
	mm_defs_free(&p->own);
	mm_defs_free(&p->old_own);
	mm_defs_free(&p->resolved);
}

static void
proc_free(struct mm_proc *p)
{
	proc_slim(p);
	mm_defs_free(&p->scoped);
	free(p);
}

void
mm_node_free(struct mm_node *n)
{
	struct mm_proc *p, *next;
	unsigned i;

	for (i = 0; i < MM_PROC_BUCKETS; i++)
		for (p = n->procs[i]; p != NULL; p = next) {
			next = p->next;
			proc_free(p);
		}
	mm_defs_free(&n->defs);
	free(n);
}

/* Arms *ev (made on first use, with cb) to fire in tv, unless it is
 * armed already. */
static void
timer_arm(struct mm *mm, struct loop_ev **ev, void (*cb)(void *arg),
	  uint64_t ns)
{
	if (*ev == NULL && mm->base != NULL)
		*ev = loop_timer(mm->base, cb, mm);
	if (*ev != NULL)
		loop_arm_idle(*ev, ns);
}

/* ---- the processes that ended: freed once done with ---- */

/* An ended process is kept this long at least: a child it forked may
 * start (make its first call) after it ended, and decode with its types
 * (resolve). */
#define PROC_GRACE_NS	(5 * 1000000000ull)
#define SWEEP_NS	1000000000ull	/* between sweeps */

/* Marks the processes of n with records held: in the merge, or in a
 * batch not taken yet. */
static void
procs_busy(struct mm *mm, struct mm_node *n)
{
	const struct mm_order *o = &mm->order;
	const struct mm_piece *pc;
	const struct mm_conn *c;
	struct mm_proc *p;
	uint32_t i;

	for (i = 0; i < o->nheap; i++)
		if (o->heap[i]->node == n->id &&
		    (p = proc_get(n, o->heap[i]->pid, 0)) != NULL)
			p->busy = 1;
	for (c = mm->conns; c != NULL; c = c->next)
		for (pc = c->node == n ? c->batch : NULL; pc != NULL;
		    pc = pc->next)
			if ((p = proc_get(n, pc->pid, 0)) != NULL)
				p->busy = 1;
}

/*
 * Frees n's processes that ended, whose last records came (the end of
 * the collection of their end line) and are written, that ended at least
 * PROC_GRACE_NS ago, and that no process known descends from (its own
 * children first, then it).  Returns how many ended ones are left.
 */
static uint32_t
procs_sweep_node(struct mm *mm, struct mm_node *n, uint64_t now)
{
	struct mm_proc **pp, *p, *q;
	uint32_t left = 0, *pid = NULL, *np;
	size_t npid = 0, cpid = 0;
	unsigned b;
	int freed;

	for (b = 0; b < MM_PROC_BUCKETS; b++)
		for (p = n->procs[b]; p != NULL; p = p->next)
			p->busy = 0, p->nchild = 0;
	procs_busy(mm, n);
	for (b = 0; b < MM_PROC_BUCKETS; b++)
		for (q = n->procs[b]; q != NULL; q = q->next)
			if (q->ppid != q->pid &&
			    (p = proc_get(n, q->ppid, 0)) != NULL)
				p->nchild++;
	do {
		freed = 0;
		for (b = 0; b < MM_PROC_BUCKETS; b++)
			for (pp = &n->procs[b]; (p = *pp) != NULL;) {
				if (p->gone != MM_GONE_IN || p->busy ||
				    p->nchild > 0 ||
				    now - p->gone_ns < PROC_GRACE_NS) {
					pp = &p->next;
					continue;
				}
				if (p->ppid != p->pid &&
				    (q = proc_get(n, p->ppid, 0)) != NULL &&
				    q->nchild > 0)
					q->nchild--;
				n->ngone--;
				mm->procs_freed++;
				freed = 1;
				if (npid == cpid && (np = realloc(pid,
				    (cpid * 2 + 64) * sizeof *pid)) != NULL)
					pid = np, cpid = cpid * 2 + 64;
				if (npid < cpid)	/* else kept */
					pid[npid++] = p->pid;
				p->gone = MM_GONE_NO;	/* ended (p->ended) */
				if (hmap_count(&p->scoped.map) > 0) {
					proc_slim(p);
					pp = &p->next;
					continue;
				}
				*pp = p->next;
				proc_free(p);
			}
	} while (freed);
	/* Their threads' streams are empty (not busy): no record of theirs
	 * is to come (an LM's copy sent again is dropped by its marks). */
	mm_order_forget(mm, n->id, pid, npid);
	free(pid);
	for (b = 0; b < MM_PROC_BUCKETS; b++)
		for (p = n->procs[b]; p != NULL; p = p->next)
			left += p->gone == MM_GONE_IN;
	return left;
}

static void
procs_sweep_cb(void *arg)
{
	struct mm *mm = arg;
	struct mm_node *n;
	uint64_t now = clk_mono_ns();
	uint32_t left = 0;

	for (n = mm->nodes; n != NULL; n = n->next)
		if (n->ngone > 0)
			left += procs_sweep_node(mm, n, now);
	log_debug("processes freed: %llu; ended, not yet: %u; threads "
	    "followed: %u", (unsigned long long)mm->procs_freed, left,
	    hmap_count(&mm->order.streams));
	if (left > 0)
		timer_arm(mm, &mm->procs_ev, procs_sweep_cb, SWEEP_NS);
}

/* A collection of c is in: the processes of its node that ended before it
 * have all their records here now (the LM sends ends before the
 * collection's data); they are freed when done with. */
static void
procs_collected(struct mm *mm, struct mm_conn *c)
{
	struct mm_node *n = c->node;
	struct mm_proc *p;
	unsigned b;
	int any = 0;

	if (n == NULL || n->ngone == 0)
		return;
	for (b = 0; b < MM_PROC_BUCKETS; b++)
		for (p = n->procs[b]; p != NULL; p = p->next)
			if (p->gone == MM_GONE_ENDED) {
				p->gone = MM_GONE_IN;
				any = 1;
			}
	if (any)
		timer_arm(mm, &mm->procs_ev, procs_sweep_cb, SWEEP_NS);
}

/* Forgets the image before exec's definitions once a newer one exists. */
static void
proc_new_image(struct mm_proc *p, uint32_t session)
{
	mm_defs_free(&p->old_own);
	p->old_own = p->own;
	hmap_init(&p->own.map, &proc_defs_type);
	mm_defs_free(&p->resolved);
	hmap_init(&p->resolved.map, &proc_defs_type);
	p->old_session = p->session;
	p->session = session;
}

/*
 * The definitions of process pid's image of LM session `session`: the
 * current image's, or the one before its last exec (whose last records
 * can come in the same batch as the new image's).
 */
static struct mm_defs *
proc_defs(struct mm_proc *p, uint32_t session)
{
	if (p->session == 0) {
		p->session = session;
		defs_gen++;
	} else if (session > p->session)
		proc_new_image(p, session);
	if (session != p->session && session == p->old_session)
		return &p->old_own;
	return &p->own;
}

/*
 * The definition a record of (node, pid, session) with eid is decoded
 * with, or NULL.  It is looked for in the image's own definitions, its
 * ancestors', then the node's, and the file is made to agree: a scoped
 * #DEF line if what a reader would apply (the last scoped line for the
 * process, else the global one) differs.  Answers for the current image
 * are cached.
 */
static const struct tape_def *
resolve(struct mm *mm, struct mm_node *n, uint32_t pid, uint32_t session,
	int32_t eid)
{
	const struct tape_def *d = NULL, *g;
	struct mm_defs *mine;
	struct mm_proc *p, *q;
	int depth, cur;

	if ((p = proc_get(n, pid, 1)) == NULL)
		return NULL;
	mine = proc_defs(p, session);
	cur = mine == &p->own;
	if (cur && (d = defs_find(&p->resolved, eid)) != NULL)
		return d;
	d = defs_find(mine, eid);
	for (q = p, depth = 0; q != NULL && d == NULL && depth < 64;
	    q = q->ppid != q->pid ? proc_get(n, q->ppid, 0) : NULL, depth++)
		if (q != p)
			d = defs_find(&q->own, eid);
	if (d == NULL && (d = defs_find(&n->defs, eid)) == NULL)
		return NULL;
	if (define_global(mm, eid, d->cls, d->attr, d->format,
	    strlen(d->format), d->dsc, strlen(d->dsc)) != 0)
		return NULL;
	g = defs_find(&p->scoped, eid);
	if (g == NULL)
		g = defs_find(&mm->written, eid);
	if (strcmp(g->format, d->format) != 0) {
		if (tape_def_scoped(mm->out, n->id, pid, eid, d->cls, d->attr,
		    d->format, strlen(d->format), d->dsc,
		    strlen(d->dsc)) != 0 ||
		    defs_put(&p->scoped, eid, d->cls, d->attr, d->format,
		    strlen(d->format), d->dsc, strlen(d->dsc)) < 0)
			return NULL;
	}
	if (!cur)
		return d;
	if (defs_put(&p->resolved, eid, d->cls, d->attr, d->format,
	    strlen(d->format), d->dsc, strlen(d->dsc)) < 0)
		return NULL;
	return defs_find(&p->resolved, eid);
}

static void
define_predefined(struct mm *mm, struct mm_node *n)
{
	const struct rec_predef *pd;
	size_t i;

	for (i = 0; i < REC_NPREDEF; i++) {
		pd = &rec_predef[i];
		define(mm, n, NULL, pd->eid, pd->cls, pd->attr, pd->format,
		    strlen(pd->format), pd->dsc, strlen(pd->dsc));
	}
}

int
mm_out_open(struct mm *mm, const char *path)
{
	mm->out = tape_open_fmt(path, mm->fmt | mm->tape_flags | TAPE_OPEN_NEW,
	    mm->id, clk_real_ns(), clk_mono_ns());
	if (mm->out == NULL)
		return -1;
	define_predefined(mm, NULL);
	if (mm_plan_write(mm, mm->out, 0) != 0 || tape_flush(mm->out) != 0)
		return -1;
	mm_out_async(mm);
	return 0;
}

/* tape-w has written what it was handed: that is acknowledged, what waits
 * handed to it, and the records it held back written (mm_out_full). */
static void
out_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mm *mm = arg;
	uint64_t v;

	(void)what;
	(void)read(fd, &v, sizeof v);
	if (mm->out != NULL && mm_order_advance(mm, 0) != 0)
		log_warn("cannot write %s: %s", mm->out_path,
		    strerror(errno));
}

void
mm_out_async(struct mm *mm)
{
	int fd;

	if (mm->out_wake == NULL) {
		if ((fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
			goto mine;
		mm->out_wake = event_new(mm->base, fd, EV_READ | EV_PERSIST,
		    out_wake_cb, mm);
		if (mm->out_wake == NULL || event_add(mm->out_wake, NULL)) {
			if (mm->out_wake != NULL)
				event_free(mm->out_wake);
			mm->out_wake = NULL;
			close(fd);
			goto mine;
		}
	}
	if (tape_async(mm->out, event_get_fd(mm->out_wake)) == 0)
		return;
mine:
	log_warn("%s: written by the main loop itself (no thread for it: "
	    "%s)", mm->out_path, strerror(errno));
}

uint64_t
mm_out_end(const struct mm *mm)
{
	return mm->out != NULL ? mm->out_base + tape_end(mm->out) :
	    UINT64_MAX;
}

int
mm_out_full(const struct mm *mm)
{
	return mm->out != NULL && tape_full(mm->out);
}

uint64_t
mm_out_done(const struct mm *mm)
{
	return mm->out != NULL ? mm->out_base + tape_written(mm->out) :
	    UINT64_MAX;
}

void
mm_node_init_defs(struct mm *mm, struct mm_node *n)
{
	define_predefined(mm, n);
}

/* A definition record at off in pc: known from now on for its process
 * image and node. */
static void
define_record(struct mm *mm, struct mm_conn *c, const struct mm_piece *pc,
	      uint32_t off, const struct rec_hdr *h)
{
	struct rec_define d;
	struct mm_proc *p;

	p = proc_get(c->node, pc->pid, 1);
	if (rec_parse_define(pc->rec + off, h->len, &d) != 0 ||
	    p == NULL || define(mm, c->node, proc_defs(p, pc->session),
	    d.eid, d.cls, d.attr, d.format, d.format_len, d.dsc,
	    d.dsc_len) != 0)
		log_warn("%s: process %u: bad definition of event %d",
		    c->node->host, pc->pid, h->eid);
}

/* A meta record other than a definition: a loss or statistics. */
static int
meta_record(struct mm *mm, struct mm_node *node, const struct mm_piece *pc,
	    uint32_t off, uint64_t ts)
{
	const unsigned char *r = pc->rec + off;
	struct rec_stats st;
	struct rec_hdr h;
	uint64_t n, who = 0;
	uint32_t pid = pc->pid, tid = pc->tid;

	memcpy(&h, r, sizeof h);
	if (h.attr == REC_ATTR_STATS) {
		if (rec_parse_stats(r, h.len, &st) == 0)
			mm_stats_put(mm, node->id, pc->pid, pc->tid, &st);
		return 0;
	}
	if (h.attr != REC_ATTR_LOSS || h.len < sizeof h + 8)
		return 0;
	memcpy(&n, r + sizeof h, 8);
	/* Overwritten data: the loss is that of the chunk's own thread. */
	if (h.len >= sizeof h + 16)
		memcpy(&who, r + sizeof h + 8, 8);
	if (who != 0) {
		pid = (uint32_t)(who >> 32);
		tid = (uint32_t)who;
	}
	mm->losses += n;
	if (tape_loss(mm->out, node->id, pid, tid, n, ts) != 0)
		return -1;
	mm_plan_loss(mm, node, pid, tid, ts);
	return 0;
}

/* ---- a file that cannot be written (a full disk) ---- */

#define OUT_WAIT_MIN_MS	100
#define OUT_WAIT_MAX_MS	1000
/* Written again: said once writes have worked this long (at the edge of
 * a full disk, one works and the next fails). */
#define OUT_QUIET_NS	1000000000ull

static void
out_retry_cb(void *arg)
{
	struct mm *mm = arg;

	/* Writes what it can, the held buffer first (mm_out_stalled). */
	if (mm_order_advance(mm, 0) != 0)
		mm->exit_code = 1;
	if (mm->out_failed_ns != 0)
		mm_out_stalled(mm);	/* arms the timer again */
}

/* Looks again in ms (a try, or whether writes went on working). */
static void
out_arm(struct mm *mm, uint32_t ms)
{
	timer_arm(mm, &mm->out_retry, out_retry_cb, ms * 1000000ull);
}

/* A try failed: the next in out_wait_ms, doubled each time to a second. */
static void
out_later(struct mm *mm, uint64_t now)
{
	mm->out_ok_ns = 0;
	mm->out_try_ns = now + mm->out_wait_ms * 1000000ull;
	out_arm(mm, mm->out_wait_ms);
	mm->out_wait_ms = mm->out_wait_ms * 2 > OUT_WAIT_MAX_MS ?
	    OUT_WAIT_MAX_MS : mm->out_wait_ms * 2;
}

int
mm_out_stalled(struct mm *mm)
{
	uint64_t now;
	int e;

	if (mm->out == NULL)
		return 0;
	if ((e = tape_error(mm->out)) == 0 && mm->out_failed_ns == 0)
		return 0;
	now = clk_mono_ns();
	if (mm->out_failed_ns == 0) {
		log_warn("cannot write %s: %s (what is not written is kept, "
		    "and tried again every second)", mm->out_path,
		    strerror(e));
		mm->out_failed_ns = now;
		mm->out_wait_ms = OUT_WAIT_MIN_MS;
		out_later(mm, now);
		return 1;
	}
	if (e != 0) {
		/* Not before the next try, unless mainmon stops. */
		if (now < mm->out_try_ns && !mm->stopping && !mm->stopped)
			return 1;
		if (tape_write_out(mm->out) != 0) {
			out_later(mm, now);
			return 1;
		}
		mm->out_ok_ns = now;
	}
	if (mm->out_ok_ns == 0)
		mm->out_ok_ns = now;
	if (now - mm->out_ok_ns < OUT_QUIET_NS) {
		out_arm(mm, (uint32_t)((OUT_QUIET_NS - (now - mm->out_ok_ns)) /
		    1000000 + 1));
		return 0;
	}
	log_warn("%s: written again, after %.1f s of write errors",
	    mm->out_path, (double)(mm->out_ok_ns - mm->out_failed_ns) / 1e9);
	mm->out_failed_ns = mm->out_ok_ns = 0;
	mm_round_disk_ok(mm);
	return 0;
}

int
mm_out_write_out(struct mm *mm)
{
	int stalled = mm_out_stalled(mm);

	if (mm->out == NULL)
		return 0;
	if (!stalled && tape_write_out(mm->out) == 0)
		return 0;
	if (!stalled && (tape_error(mm->out) == 0 || !mm_out_stalled(mm)))
		return -1;
	/* Tried again (mm_out_stalled), a stop's final collection too: it
	 * waits for the disk (mm_round.c). */
	return 1;
}

const char *
mm_out_status(const struct mm *mm, char *buf, size_t n)
{
	int e = mm->out != NULL ? tape_error(mm->out) : 0;

	if (n == 0)
		return buf;
	buf[0] = '\0';
	if (mm->out_failed_ns != 0 && e != 0)
		snprintf(buf, n, "cannot write since %.1f s: %s",
		    (double)(clk_mono_ns() - mm->out_failed_ns) / 1e9,
		    strerror(e));
	return buf;
}

void
mm_out_finish(struct mm *mm)
{
	loop_ev_free(mm->out_retry);
	mm->out_retry = NULL;
	if (mm->out_wake != NULL) {
		int fd = event_get_fd(mm->out_wake);

		event_free(mm->out_wake);
		close(fd);
		mm->out_wake = NULL;
	}
	loop_ev_free(mm->procs_ev);
	mm->procs_ev = NULL;
}

const char *
mm_proc_name(struct mm_node *n, uint32_t pid)
{
	const struct mm_proc *p = proc_get(n, pid, 0);

	return p != NULL ? p->name : NULL;
}

/* Writes a #CONTROL line: cmd took effect everywhere at ts (MM time). */
int
mm_out_control(struct mm *mm, uint64_t ts, const char *cmd)
{
	return tape_control(mm->out, ts, cmd, strlen(cmd));
}

/* Bytes a record of format fmt needs when it holds no string (each
 * field is 8 bytes), or 0 if it holds one. */
static uint32_t
fixed_len(const struct rec_fmt *fmt)
{
	unsigned i;

	for (i = 0; i < fmt->n; i++)
		if (fmt->kind[i] == REC_K_STR)
			return 0;
	return (uint32_t)(sizeof(struct rec_hdr) + 8u * fmt->n);
}

/* TAPE_SRC_ALIKE if pc's run is canonical and its records in (from, to)
 * all moved by as much as the one before each (admit: none of them is a
 * break), with TAPE_SRC_ONE if they are all of one length. */
static int
moved_alike(const struct mm_piece *pc, uint32_t from, uint32_t to)
{
	uint32_t i;

	if (!(pc->canon & REC_DENSE_CANON) || pc->nbrk > MM_BRK_MAX)
		return 0;
	for (i = 0; i < pc->nbrk; i++)
		if (pc->brk[i] > from && pc->brk[i] < to)
			return 0;
	return TAPE_SRC_ALIKE |
	    (pc->canon & REC_DENSE_ONE ? TAPE_SRC_ONE : 0);
}

/* Binary: pc's records [from, to), as they came, in one piece; its D
 * frames copied from the run the records came in where their times moved
 * together (tape_piece_from), encoded again where not; the sidecar told
 * where its stretches of one kind of record are. */
static int
put_run(struct mm *mm, struct mm_piece *pc, uint32_t from, uint32_t to)
{
	struct tape_stretch st = { pc->seg, pc->info.nseg, from,
		(pc->canon & REC_DENSE_ONE) != 0 };
	const struct tape_stretch *stp;
	ssize_t sk = 0;
	size_t used;
	int r;

	if (mm->fmt != TAPE_FMT_BIN || to <= from)
		return 0;
	/* Known for pieces decoded here (in time order: admit). */
	stp = st.one || (st.at != NULL && !pc->undec) ? &st : NULL;
	/* Records not written in between (meta, malformed): skipped. */
	if (pc->dense != NULL && from != pc->dmark &&
	    (from < pc->dmark || (sk = rec_dense_skip(pc->dense + pc->dpos,
	    pc->dlen - pc->dpos, from - pc->dmark)) < 0))
		pc->dense = NULL;
	if (pc->dense == NULL)
		return tape_piece_stretch(mm->out, pc->node->id, pc->pid,
		    pc->tid, pc->rec + from, to - from, NULL, 0, 0, stp,
		    NULL);
	pc->dpos += (uint32_t)sk;
	r = tape_piece_stretch(mm->out, pc->node->id, pc->pid, pc->tid,
	    pc->rec + from, to - from, pc->dense + pc->dpos,
	    pc->dlen - pc->dpos, moved_alike(pc, from, to), stp, &used);
	if (r != 0 || used == SIZE_MAX) {
		pc->dense = NULL;
		return r;
	}
	pc->dpos += (uint32_t)used;
	pc->dmark = to;
	return 0;
}

/* The time of the record at off. */
static inline uint64_t
ts_at(const unsigned char *d, uint32_t off)
{
	uint64_t ts;

	memcpy(&ts, d + off + offsetof(struct rec_hdr, ts), sizeof ts);
	return ts;
}

/*
 * In a piece of records all of length l (REC_DENSE_ONE), their times not
 * decreasing (admit), from the record at off on, up to len: the offset of
 * the first whose time is at least w (len if none).
 */
static uint32_t
first_at(const unsigned char *d, uint32_t off, uint32_t len, uint32_t l,
	 uint64_t w)
{
	uint32_t lo = 0, hi = (len - off) / l, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ts_at(d, off + mid * l) < w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return off + lo * l;
}

/* The end of the stretch of records of one header (short, of one
 * length) the record at off is in (REC_DENSE_ONE: the piece), or off if
 * not known. */
static uint32_t
stretch_end(const struct mm_piece *pc, uint32_t off)
{
	uint32_t lo = 0, hi = pc->info.nseg, mid;

	if (pc->canon & REC_DENSE_ONE)
		return pc->len;
	if (pc->seg == NULL || pc->undec)
		return off;
	/* The first beginning after off. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc->seg[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pc->info.nseg ? pc->seg[lo] : pc->len;
}

/* Says that pc's record of event eid is not written: def (NULL: none)
 * is not its type. */
static void
bad_record(const struct mm_piece *pc, int32_t eid,
	   const struct tape_def *def)
{
	log_warn("%s: process %u: record of event %d %s", pc->node->host,
	    pc->pid, eid, def == NULL ? "without definition" :
	    "does not match its format");
}

/* A lazy piece's steps, as rec_dense_frame takes them. */
static void
lazy_shift(const struct mm_piece *pc, struct rec_dense_shift *sh)
{
	memset(sh, 0, sizeof *sh);
	sh->n = pc->lz_n;
	sh->upto = pc->lz_upto;
	sh->by = pc->lz_by;
}

/* The record of a lazy piece at dense[sp], the one before it at time
 * prev (in the run): its time in the run; in *h its header (not its
 * time), in *sl its bytes in the run. */
static inline uint64_t
lazy_hdr(const unsigned char *s, uint64_t prev, struct rec_hdr *h,
	 uint32_t *sl)
{
	uint32_t w;
	int32_t d;

	memcpy(&w, s, 4);
	if (w & 2) {
		memcpy(h, s + 4, sizeof *h);
		*sl = 4 + (uint32_t)h->len;
		return h->ts;
	}
	h->len = (uint16_t)(16 + 8 * ((w >> 2) & 15));
	h->cls = (uint8_t)((w >> 6) & 15);
	h->attr = (uint8_t)((w >> 10) & 15);
	h->eid = (int32_t)(w >> 14) - REC_EID_BIAS;
	*sl = h->len / 2;
	memcpy(&d, s + 4, 4);
	return prev + (uint64_t)(int64_t)d;
}

uint64_t
mm_out_lazy_ts(const struct mm_piece *pc)
{
	struct rec_dense_shift sh;
	struct rec_hdr h;
	uint64_t t;
	uint32_t sl;

	lazy_shift(pc, &sh);
	t = lazy_hdr(pc->dense + pc->dpos, pc->lz_prev, &h, &sl);
	return t + sh.by[rec_dense_step(&sh, t)];
}

/* A lazy piece's records from decoded offset from (at dense[sp], the
 * one before at time prev) to offset to, from the run; its stretches
 * from si on (those before begin at or before sp). */
static int
put_lazy(struct mm *mm, struct mm_piece *pc, uint32_t from, uint32_t to,
	 uint32_t sp, uint64_t prev, const struct rec_dense_shift *sh,
	 uint32_t si)
{
	struct rec_dense_segs sg;
	size_t sused;
	uint64_t last;

	if (to <= from)
		return 0;
	/* Past the last stretch's beginning, that stretch is passed still:
	 * none at all would read as "not known" and walk the tail. */
	if (si > 0 && si == pc->info.nseg)
		si--;
	sg = (struct rec_dense_segs){ pc->st != NULL ? pc->st + si : NULL,
		pc->info.nseg - si, pc->dlen, pc->info.last, sp };
	return tape_piece_dense(mm->out, pc->node->id, pc->pid, pc->tid,
	    pc->dense + sp, pc->dlen - sp, prev, sh, pc->st != NULL ? &sg :
	    NULL, to - from, &sused, &last);
}

/*
 * mm_out_piece of a lazy piece: what it does for the records decoded,
 * done from the run (a record decoded only where its type is checked,
 * into a local).  No record is meta (admit_run).
 */
static int
out_lazy(struct mm *mm, struct mm_piece *pc, uint64_t w)
{
	struct rec_field f[REC_ARGS_MAX];
	const struct tape_def *def = NULL;
	struct mm_node *n = pc->node;
	const unsigned char *s = pc->dense;
	struct rec_dense_shift sh;
	unsigned char r[REC_MAX];
	struct rec_hdr h;
	uint64_t out_ts = mm->order.out_ts, late = 0, prev = pc->lz_prev;
	uint64_t t, ts, lim, shift, rprev = prev;
	uint32_t off, sp = pc->dpos, run = pc->pos, rsp = sp, fixed = 0, sl;
	uint32_t len = pc->len, k, si = pc->lz_si, si0 = si, end, m;
	struct rec_dense_segs sg = { pc->st, pc->info.nseg, pc->dlen,
		pc->info.last, 0 };
	uint64_t te;
	int32_t eid = 0;

	lazy_shift(pc, &sh);
	k = rec_dense_step(&sh, prev);
	shift = sh.by[k];
	lim = k + 1 < sh.n ? sh.upto[k] : UINT64_MAX;
	for (off = pc->pos; off < len; off += h.len, sp += sl, prev = t) {
		t = lazy_hdr(s + sp, prev, &h, &sl);
		if (t > lim) {
			k = rec_dense_step(&sh, t);
			shift = sh.by[k];
			lim = k + 1 < sh.n ? sh.upto[k] : UINT64_MAX;
		}
		ts = t + shift;
		if (ts >= w)
			break;
		if (ts < out_ts)
			late++;
		else
			out_ts = ts;
		/* Of the type of the record before, no string, no
		 * causality: the length says it matches.  So do the others
		 * of its stretch (short, of one header): taken whole if all
		 * are before w, in one step, and this one is not late. */
		if (fixed != 0 && h.eid == eid && h.len >= fixed &&
		    h.cls != REC_CLASS_META) {
			if (pc->st != NULL && 2 * sl == h.len &&
			    out_ts == ts) {
				end = rec_dense_seg_end(&sg, &si, sp, &te);
				m = (end - sp) / sl;
				if (m >= 2 && te <= lim && te + shift < w) {
					off += (m - 1) * h.len;
					sp += (m - 1) * sl;
					t = te;
					out_ts = te + shift;
				}
			}
			continue;
		}
		mm->order.out_ts = out_ts;
		mm->order.late += late;
		late = 0;
		/* resolve's answer for the call before, if no definition
		 * changed since. */
		if (def == NULL && pc->lz_def != NULL &&
		    pc->lz_gen == defs_gen && h.eid == pc->lz_def->eid)
			def = pc->lz_def;
		else if (def == NULL || h.eid != def->eid)
			def = resolve(mm, n, pc->pid, pc->session, h.eid);
		/* The first record of this call, of the type the last one
		 * written was checked against: taken as the loop takes the
		 * others of its type (def is what resolve answers now). */
		if (off == pc->pos && def != NULL && def == pc->lz_def &&
		    h.eid >= 0 && h.cls != REC_CLASS_META &&
		    (fixed = fixed_len(&def->fmt)) != 0 && h.len >= fixed) {
			eid = def->eid;
			out_ts = mm->order.out_ts;
			continue;
		}
		fixed = 0;
		(void)rec_dense_one(s + sp, prev, shift, r, &t);
		if (def == NULL || rec_decode(r, h.len, &def->fmt, f) != 0) {
			bad_record(pc, h.eid, def);
			def = NULL;
			if (put_lazy(mm, pc, run, off, rsp, rprev, &sh, si0) != 0)
				return -1;
			run = off + h.len;
			rsp = sp + sl;
			rprev = t;
			continue;
		}
		eid = def->eid;
		if (h.eid < 0)
			mm_causal_record(mm, n->id, pc->pid, ts, h.eid, f,
			    def->fmt.n);
		else
			fixed = fixed_len(&def->fmt);
		out_ts = mm->order.out_ts;
	}
	mm->order.out_ts = out_ts;
	mm->order.late += late;
	pc->lz_def = fixed != 0 ? def : NULL;
	pc->lz_gen = defs_gen;
	if (put_lazy(mm, pc, run, off, rsp, rprev, &sh, si0) != 0)
		return -1;
	pc->pos = off;
	pc->dpos = sp;
	pc->lz_prev = prev;
	pc->lz_si = si;
	return 0;
}

/*
 * mm_out_pair: two lazy pieces whose records interleave in time (two
 * threads taking turns, the merge's slices a record or a few long),
 * merged record by record straight into the open D frame instead of a
 * slice at a time (out_lazy, a frame's piece and the sidecar's per
 * slice).  A record goes so only where out_lazy would pass it without a
 * look: short, of the type its piece's last record was checked against,
 * no string in it, not a block's, not late.
 */
struct lane {
	struct mm_piece	*pc;
	const unsigned char *s;
	struct rec_dense_shift sh;
	uint64_t	prev, t, ts, lim, shift;
	uint32_t	off, sp, sl, k, len, w, fixed;
	int32_t		eid;
	int		ok;	/* its next record can go so */
	uint32_t	nsum;	/* records not summed yet, the last at tsum */
	uint64_t	tsum;
};

/* n 4-byte slots from s to d: a loop the compiler keeps inline (a
 * memcpy of a length it does not know is a call, per record). */
static inline void
copy_slots(char *d, const unsigned char *s, uint32_t n)
{
	uint32_t i, v;

	for (i = 0; i < n; i++) {
		memcpy(&v, s + 4 * i, 4);
		memcpy(d + 4 * i, &v, 4);
	}
}

/* The records of the lanes counted and not yet summed, summed. */
static void
lanes_sum(struct tape_w *out, struct lane *ln)
{
	struct lane *l;

	for (l = ln; l < ln + 2; l++)
		if (l->nsum > 0) {
			tape_sum_count(out, l->pc->node->id, l->pc->pid,
			    l->pc->tid, l->nsum, l->tsum);
			l->nsum = 0;
		}
}

/* The lane's next record: its time, and whether it can go so (not the
 * piece's last: the slow way ends a piece). */
static void
lane_peek(struct lane *l)
{
	uint32_t w, n;
	int32_t d;

	l->ok = 0;
	if (l->off >= l->len)
		return;
	memcpy(&w, l->s + l->sp, 4);
	if (w & 2)
		return;		/* long */
	n = (w >> 2) & 15;
	memcpy(&d, l->s + l->sp + 4, 4);
	l->t = l->prev + (uint64_t)(int64_t)d;
	if (l->t > l->lim) {
		l->k = rec_dense_step(&l->sh, l->t);
		l->shift = l->sh.by[l->k];
		l->lim = l->k + 1 < l->sh.n ? l->sh.upto[l->k] : UINT64_MAX;
	}
	l->ts = l->t + l->shift;
	l->w = w;
	l->sl = 8 + 4 * n;	/* decoded, twice that */
	/* (A meta record is long.) */
	l->ok = (int32_t)(w >> 14) - REC_EID_BIAS == l->eid &&
	    2 * l->sl >= l->fixed && l->off + 2 * l->sl < l->len;
}

static int
lane_init(struct lane *l, struct mm_piece *pc)
{
	const struct tape_def *def = pc->lz_def;

	if (!pc->lazy || def == NULL || pc->lz_gen != defs_gen ||
	    def->eid < 0 || (l->fixed = fixed_len(&def->fmt)) == 0)
		return -1;
	l->pc = pc;
	l->s = pc->dense;
	l->eid = def->eid;
	l->nsum = 0;
	lazy_shift(pc, &l->sh);
	l->prev = pc->lz_prev;
	l->k = rec_dense_step(&l->sh, l->prev);
	l->shift = l->sh.by[l->k];
	l->lim = l->k + 1 < l->sh.n ? l->sh.upto[l->k] : UINT64_MAX;
	l->off = pc->pos;
	l->sp = pc->dpos;
	l->len = pc->len;
	lane_peek(l);
	return l->ok ? 0 : -1;
}

uint64_t
mm_out_pair(struct mm *mm, struct mm_piece *a, struct mm_piece *b,
	    uint64_t w)
{
	struct lane ln[2], *c, *cur = NULL;
	uint64_t out_ts = mm->order.out_ts, fprev = 0, foff = 0, n = 0;
	uint64_t blo, bw;
	char *d = NULL, *lim = NULL, *e;
	struct mm_piece *p;
	int64_t delta;
	uint32_t v;

	if (mm->out == NULL || lane_init(&ln[0], a) != 0 ||
	    lane_init(&ln[1], b) != 0)
		return 0;
	/* The sidecar: records in the bucket of the last summed are
	 * counted per lane, and summed together (lanes_sum). */
	tape_sum_bucket(mm->out, &blo, &bw);
	for (;;) {
		/* The earlier; a tie goes on with the lane that wrote. */
		c = ln[1].ts < ln[0].ts || (ln[1].ts == ln[0].ts &&
		    cur == &ln[1]) ? &ln[1] : &ln[0];
		if (!c->ok || c->ts >= w || c->ts < out_ts)
			break;
		e = d;
		if (cur == NULL) {
			e = d = tape_dense_at(mm->out, c->pc->node->id,
			    c->pc->pid, c->pc->tid, &lim, &fprev, &foff);
			if (d == NULL)
				break;
		} else if (c != cur) {
			if (lim - d < REC_DENSE_SW_MAX + (ptrdiff_t)c->sl)
				break;
			p = cur->pc;
			e += rec_dense_sw_put(e, p->node->id, p->pid, p->tid,
			    c->pc->node->id, c->pc->pid, c->pc->tid);
		}
		delta = (int64_t)(c->ts - fprev);
		if (lim - e < (ptrdiff_t)c->sl || delta < INT32_MIN ||
		    delta > INT32_MAX)
			break;
		d = e;
		cur = c;
		/* As the encoder writes it: the word, the delta from the
		 * frame's record before, the slots as they came. */
		memcpy(d, &c->w, 4);
		v = (uint32_t)(int32_t)delta;
		memcpy(d + 4, &v, 4);
		copy_slots(d + 8, c->s + c->sp + 8, (c->sl - 8) / 4);
		d += c->sl;
		fprev = c->ts;
		out_ts = c->ts;
		if (c->ts - blo < bw) {
			c->nsum++;
			c->tsum = c->ts;
		} else {
			lanes_sum(mm->out, ln);
			tape_sum(mm->out, foff, c->ts, c->pc->node->id,
			    c->pc->pid, c->pc->tid, c->eid);
			tape_sum_bucket(mm->out, &blo, &bw);
		}
		c->off += 2 * c->sl;
		c->sp += c->sl;
		c->prev = c->t;
		n++;
		lane_peek(c);
	}
	lanes_sum(mm->out, ln);
	if (cur != NULL)
		tape_dense_put(mm->out, d, n, cur->pc->node->id, cur->pc->pid,
		    cur->pc->tid, fprev);
	for (c = ln; c < ln + 2; c++) {
		c->pc->pos = c->off;
		c->pc->dpos = c->sp;
		c->pc->lz_prev = c->prev;
	}
	mm->order.out_ts = out_ts;
	return n;
}

/*
 * Pass 2, in time order (mm_order.c): the records of pc from pc->pos on,
 * up to time w (exclusive).  Timestamps are already mainmon's.  Binary:
 * the records go as they came, each checked against its type, in runs.
 */
int
mm_out_piece(struct mm *mm, struct mm_piece *pc, uint64_t w)
{
	struct rec_field f[REC_ARGS_MAX];
	const struct tape_def *def = NULL;
	struct mm_node *n = pc->node;
	const unsigned char *d = pc->rec;
	struct rec_hdr h;
	uint64_t out_ts = mm->order.out_ts, late = 0;
	uint32_t off, run = pc->pos, fixed = 0, len = pc->len, end, send;
	uint32_t steps = 0;
	int32_t eid = 0;
	int bin = mm->fmt == TAPE_FMT_BIN;

	if (pc->lazy)
		return out_lazy(mm, pc, w);
	for (off = pc->pos; off < len; off += h.len) {
		memcpy(&h, d + off, sizeof h);
		/* MM_PIECE_STEPS at most a call: a text line costs a
		 * microsecond, a piece can hold a whole collection of a
		 * thread, and the caller looks at the fire links between
		 * two calls (mm_plan_poll). */
		if (h.ts >= w || ++steps > MM_PIECE_STEPS)
			break;
		/* One record written: late if a later one was written
		 * before it (kept in locals: this loop runs per record). */
		if (h.ts < out_ts)
			late++;
		else
			out_ts = h.ts;
		/* The type of the record before, with no string and no
		 * causality to check: the length says it matches.  In a
		 * piece of one kind of record, or a stretch of them, so do
		 * all the others: those before w found by their times (not
		 * decreasing; the late ones, before out_ts, first). */
		if (fixed != 0 && h.eid == eid && h.len >= fixed &&
		    h.cls != REC_CLASS_META) {
			if ((send = stretch_end(pc, off)) > off + h.len) {
				end = first_at(d, off + h.len, send, h.len, w);
				late += (first_at(d, off + h.len, end, h.len,
				    out_ts) - off - h.len) / h.len;
				if (end > off + h.len &&
				    ts_at(d, end - h.len) > out_ts)
					out_ts = ts_at(d, end - h.len);
				off = end - h.len;
			}
			continue;
		}
		mm->order.out_ts = out_ts;
		mm->order.late += late;
		late = 0;
		if (h.cls == REC_CLASS_META) {
			/* In order: the records before it first. */
			if (put_run(mm, pc, run, off) != 0)
				return -1;
			run = off + h.len;
			if (meta_record(mm, n, pc, off, h.ts) != 0)
				return -1;
			out_ts = mm->order.out_ts;
			continue;
		}
		/* Valid until the next resolve (which may move it).  A
		 * record of the type of the one before takes its definition:
		 * nothing in between changes what resolve would answer. */
		if (def == NULL || h.eid != def->eid)
			def = resolve(mm, n, pc->pid, pc->session, h.eid);
		fixed = 0;
		if (def == NULL ||
		    rec_decode(d + off, h.len, &def->fmt, f) != 0) {
			bad_record(pc, h.eid, def);
			def = NULL;
			if (put_run(mm, pc, run, off) != 0)
				return -1;
			run = off + h.len;
			continue;
		}
		eid = def->eid;
		if (h.eid < 0)
			mm_causal_record(mm, n->id, pc->pid, h.ts, h.eid, f,
			    def->fmt.n);
		else if (bin)
			fixed = fixed_len(&def->fmt);
		if (!bin && tape_record(mm->out, h.ts, n->id, pc->pid,
		    pc->tid, h.eid, f, def->fmt.n) != 0)
			return -1;
		out_ts = mm->order.out_ts;
	}
	mm->order.out_ts = out_ts;
	mm->order.late += late;
	pc->pos = off;
	return put_run(mm, pc, run, off);
}

/*
 * A piece not decoded yet whose conversion is a shift, or a few, for the
 * whole run: decoded with them, in one pass, and 1 returned; 0 if its
 * records must be looked at one by one (admit's loop).  So when the run's
 * times do not go back (rec_dense_info.mono), no host clock needs
 * converting first (TSC), every time from the first to the last converts
 * by the newest model in at most ADMIT_STEPS shifts (the rounding of the
 * model's rate steps by a nanosecond now and then: mm_sync_memo_steps),
 * times stay in order, nothing is clamped (after the stream's last,
 * not after now, none within the model's error below the LM's floor),
 * and no record is a definition or a block name.
 */
#define ADMIT_STEPS	32
static int
admit_run(struct mm_conn *c, struct mm_piece *pc, struct mm_stream *s,
	  struct mm_sync_memo *memo, uint64_t now)
{
	const struct rec_dense_info *in = &pc->info;
	struct rec_dense_shift sh;
	uint64_t upto[ADMIT_STEPS], by[ADMIT_STEPS], t0, t1, err;
	uint32_t n;

	if (!pc->undec || !in->mono || c->tsc || in->nmeta != 0 ||
	    in->nrec == 0 ||
	    (in->pre & (1ull << REC_EID_BIT(REC_EID_BLOCK_NAME))) != 0 ||
	    (n = mm_sync_memo_steps(memo, &c->book, &c->clk.model, in->first,
	    in->last, upto, by, ADMIT_STEPS)) == 0)
		return 0;
	t0 = in->first + by[0];
	t1 = in->last + by[n - 1];
	err = memo->u != NULL ? memo->u->md.err : c->clk.model.err;
	if (t1 > now || t0 < s->last_ts || (t0 < c->floor &&
	    (c->floor < err || t1 >= c->floor - err)))
		return 0;
	/* A binary file's canonical run: never decoded (out_lazy). */
	if (c->mm->fmt == TAPE_FMT_BIN && pc->dense != NULL &&
	    (pc->canon & REC_DENSE_CANON) && n <= MM_LAZY_STEPS) {
		pc->lazy = 1;
		pc->lz_n = (uint8_t)n;
		pc->lz_def = NULL;
		pc->lz_si = 0;
		memcpy(pc->lz_upto, upto, n * sizeof *upto);
		memcpy(pc->lz_by, by, n * sizeof *by);
		memcpy(&pc->lz_prev, pc->dense, sizeof pc->lz_prev);
		pc->dpos = REC_DENSE_BASE;
	} else {
		sh.n = n;
		sh.upto = upto;
		sh.by = by;
		sh.brk = pc->brk;
		sh.brk_max = MM_BRK_MAX;
		mm_piece_decode(pc, &sh);
		pc->nbrk = (uint8_t)sh.nbrk;
	}
	s->last_ts = t1;
	if (t1 > c->node->sync_high)
		c->node->sync_high = t1;
	c->records += in->nrec;
	return 1;
}

/*
 * Pass 1, as the batch is taken: a piece's definitions are recorded, its
 * timestamps put on mainmon's clock, none before its stream's last
 * (s->last_ts), and block names noted (grmctl stats wants them whatever
 * the order).  One pass over the records, the decoding's (admit_run)
 * where they need no look one by one.
 */
static void
admit(struct mm *mm, struct mm_conn *c, struct mm_piece *pc,
      struct mm_stream *s)
{
	struct rec_field f[REC_ARGS_MAX];
	const struct mm_sync_used *u;
	const struct tape_def *def;
	struct mm_sync_memo memo;
	struct rec_hdr h;
	uint64_t ts, now = clk_mono_ns(), clamped = 0, records = 0, err;
	uint64_t floor = c->floor, last = s->last_ts;
	uint64_t high = c->node->sync_high, shift, pshift = 0;
	uint32_t off, nbrk = 0;

	/* Nothing below publishes a model, or reads the stream's last time
	 * or the node's highest (kept in locals: this loop runs per
	 * record). */
	mm_sync_memo_init(&memo, &c->book, &c->clk.model);
	if (admit_run(c, pc, s, &memo, now))
		return;
	mm_piece_decode(pc, NULL);
	for (off = 0; off < pc->len; off += h.len) {
		memcpy(&h, pc->rec + off, sizeof h);
		ts = mm_sync_conv_memo(&memo, &c->book, &c->clk.model,
		    mm_host_ns(c, h.ts), &u);
		err = u != NULL ? u->md.err : c->clk.model.err;
		/* Committed before it was sent: a later time is a scribbled
		 * timestamp or a model off by its error.  Left as it is, it
		 * would hold its collection's acknowledgement until then. */
		if (ts > now) {
			ts = now;
			clamped++;
		}
		/* The LM said nothing older would come: a refitted clock
		 * model may say otherwise, by its error at most. */
		if (ts < floor && floor - ts <= err) {
			ts = floor;
			clamped++;
		}
		/* A thread's records stay in its order even if a refitted
		 * clock model puts one a little before the previous. */
		if (ts < last) {
			ts = last;
			clamped++;
		}
		last = ts;
		/* A model published from now on converts only later ones. */
		if (ts > high)
			high = ts;
		memcpy(pc->rec + off + offsetof(struct rec_hdr, ts), &ts,
		    sizeof ts);
		/* Where the records' deltas changed (put_run). */
		shift = ts - h.ts;
		if (shift != pshift && off > 0 && nbrk <= MM_BRK_MAX) {
			if (nbrk < MM_BRK_MAX)
				pc->brk[nbrk] = off;
			nbrk++;
		}
		pshift = shift;
		if (h.cls == REC_CLASS_META) {
			if (h.attr == REC_ATTR_DESCRIPTOR)
				define_record(mm, c, pc, off, &h);
			continue;
		}
		records++;
		if (h.eid == REC_EID_BLOCK_NAME &&
		    (def = resolve(mm, c->node, pc->pid, pc->session,
		    h.eid)) != NULL && def->fmt.n == 2 &&
		    rec_decode(pc->rec + off, h.len, &def->fmt, f) == 0 &&
		    f[0].kind == REC_K_INT && f[1].kind == REC_K_STR)
			mm_block_name(mm, (int32_t)f[0].v.i, f[1].v.s.p,
			    f[1].v.s.len);
	}
	pc->nbrk = (uint8_t)nbrk;
	s->last_ts = last;
	c->node->sync_high = high;
	mm->order.clamped += clamped;
	c->records += records;
}

int
mm_out_batch(struct mm *mm, struct mm_conn *c, uint32_t round,
	     uint64_t below)
{
	struct mm_piece *pc, *next, *pn;
	struct mm_stream *s;
	struct mm_ack *a;
	int r = 0, hseg, hst;

	if ((a = calloc(1, sizeof *a)) == NULL)
		return -1;
	a->c = c;
	a->round = round;
	*c->acks_tail = a;
	c->acks_tail = &a->next;
	/* Each piece is written after every piece of the batch is taken,
	 * so every definition in the batch is known before any record of
	 * it is written. */
	for (pc = c->batch; pc != NULL; pc = next) {
		next = pc->next;
		pc->node = c->node;
		pc->ack = a;
		/* Sent again by an LM not sure it was written: dropped. */
		if (r != 0 || mm_dedup(mm, c, pc) != 0) {
			free(pc);
			continue;
		}
		if ((s = mm_order_stream(mm, pc)) == NULL) {
			free(pc);
			r = -1;
			continue;
		}
		admit(mm, c, pc, s);
		/* A text file needs the run no more: what is held is the
		 * records, as -m counts them. */
		if (mm->fmt != TAPE_FMT_BIN && pc->rlen != 0) {
			memmove(pc->data, pc->rec, pc->len);
			pc->seg = NULL;
			pc->st = NULL;
			pc->rlen = 0;
			if ((pn = realloc(pc, sizeof *pc + pc->len)) != NULL)
				pc = pn;
			pc->rec = pc->data;
		}
		/* Nor a lazy piece its records' room, never written (what
		 * it has is known before: its pointers are into the block
		 * realloc may move). */
		hseg = pc->seg != NULL;
		hst = pc->st != NULL;
		if (pc->lazy && (pn = realloc(pc, sizeof *pc + pc->roff)) !=
		    NULL) {
			pc = pn;
			(void)mm_piece_place(pc, hseg, hst, 1);
		}
		mm_order_add(mm, s, pc);
		mm_plan_poll(mm);
	}
	c->batch = NULL;
	c->batch_tail = &c->batch;
	c->batch_bytes = 0;
	if (r != 0)
		return -1;
	procs_collected(mm, c);
	/* An LM delivering its spill file (mainmon was away) cannot say:
	 * its records are written as they come, and whatever of them is
	 * older than what is written already is late. */
	if (below == WIRE_BELOW_REPLAY) {
		if (c->order != MM_ORD_OUT)
			c->order = MM_ORD_REPLAY;
	} else if (below != WIRE_BELOW_NONE) {
		/* Followed again: mm_on_done. */
		/* Nothing older is left with the LM (it allowed for a
		 * writer between reading its clock and committing). */
		c->scan = mm_conv(c, below);
		if (c->scan > c->wm)
			c->wm = c->scan;
		c->floor = c->wm;
	}
	/* A file that cannot be written now is not an error of the LM's:
	 * what it sent waits (mm_out_stalled). */
	r = mm_order_advance(mm, 0);
	if (r != 0)
		log_warn("cannot write %s: %s", mm->out_path,
		    strerror(errno));
	return r;
}

int
mm_out_proc(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint32_t pid, ppid, what, status, session;
	struct mm_proc *p;
	int how;
	uint64_t ts;
	char name[WIRE_STR_MAX + 1];

	pid = wire_get_u32(msg);
	ppid = wire_get_u32(msg);
	what = wire_get_u32(msg);
	status = wire_get_u32(msg);
	ts = wire_get_u64(msg);
	wire_get_str(msg, name, sizeof name);
	session = wire_get_u32(msg);
	if (!wire_rd_end(msg) || session == 0 ||
	    what < WIRE_PROC_START || what > WIRE_PROC_RESUME)
		return -1;
	p = proc_get(c->node, pid, what == WIRE_PROC_START ||
	    what == WIRE_PROC_RESUME);
	/* Attached again to an LM that adopted its segment: written only
	 * if this mainmon never heard of it. */
	if (what == WIRE_PROC_RESUME) {
		if (p == NULL || p->session >= session)
			return 0;
		what = WIRE_PROC_START;
	}
	/* A start already written (from a RESUME, or sent again from a
	 * spill file). */
	if (what == WIRE_PROC_START && p != NULL && p->started == session)
		return 0;
	/* An end already written for this image: sent again by an LM that
	 * lost the connection before the acknowledgement. */
	if (what != WIRE_PROC_START && p != NULL && p->ended &&
	    p->session == session)
		return 0;
	/* A new process (or image, after exec) starts with no types but
	 * those it inherits. */
	if (what == WIRE_PROC_START && p != NULL) {
		if (p->session != 0 && session > p->session)
			proc_new_image(p, session);
		else if (p->session == 0)
			p->session = session;
		p->ppid = ppid;
		defs_gen++;	/* its ancestors, whose types it inherits */
	}
	if (p != NULL && ppid == 0)
		ppid = p->ppid;	/* an orphan's end: the LM did not know */
	if (what == WIRE_PROC_START && p != NULL)
		p->started = session;
	how = what == WIRE_PROC_START ? TAPE_PROC_START :
	    what == WIRE_PROC_EXIT ? TAPE_PROC_EXIT :
	    what == WIRE_PROC_KILLED ? TAPE_PROC_KILLED :
	    what == WIRE_PROC_EXEC ? TAPE_PROC_EXEC : TAPE_PROC_GONE;
	ts = mm_conv(c, ts);
	if (p != NULL)
		mm_rotate_note(p, how, ts, name);
	/* Ended (an exec goes on as the new image): freed when done with
	 * (procs_collected); started again (its pid reused): kept. */
	if (p != NULL && how == TAPE_PROC_START && p->gone != MM_GONE_NO) {
		p->gone = MM_GONE_NO;
		c->node->ngone--;
	} else if (p != NULL && how != TAPE_PROC_START &&
	    how != TAPE_PROC_EXEC && p->gone == MM_GONE_NO) {
		p->gone = MM_GONE_ENDED;
		p->gone_ns = clk_mono_ns();
		c->node->ngone++;
	}
	/* A file that cannot be written is not the LM's fault: said, and
	 * the connection kept (a PROC sent again would be taken for the one
	 * already noted above). */
	if (tape_proc(mm->out, c->node->id, pid, ppid, how, ts,
	    (int32_t)status, name) != 0)
		log_warn("cannot write %s: %s (a #PROC line of process %u)",
		    mm->out_path, strerror(errno), pid);
	if (how == TAPE_PROC_KILLED || how == TAPE_PROC_EXIT)
		mm_plan_proc_end(mm, c->node, pid, how == TAPE_PROC_KILLED,
		    (int32_t)status, ts, name[0] != '\0' ? name : NULL);
	return 0;
}
