/* SPDX-License-Identifier: MIT */
/* interp.c: a BEE event interpreter (Init, Every, Final: BEE manual,
 * sections 2 and 7) as a program on the trace reader, <grm/trace.h>: it
 * counts the records of each event type and of each process, and the
 * number and mean time of each block (GMI blocks, ids of -1 and -2).
 *
 *	interp FILE	(a grm trace of any format, or a BEE event file)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <grm/trace.h>

#define TYPES_MAX	1024	/* event types counted, at most */
#define DEPTH_MAX	64	/* open blocks per thread, at most */

/* An open block of a thread. */
struct open {
	int64_t		id;
	uint64_t	ts;
};

struct thread {
	uint32_t	node, pid, tid;
	int		depth;
	struct open	stack[DEPTH_MAX];
};

/* What the interpreter keeps between calls. */
struct state {
	struct grmtrace	*t;
	uint64_t	records;
	size_t		ntypes;
	struct { int32_t eid; uint64_t n; } type[TYPES_MAX];
	size_t		nthreads;
	struct thread	*thread;
	size_t		nblocks;
	struct { int64_t id; uint64_t n, ns; } *block;
};

/* Init: called once, before the first event. */
static void
init(struct state *s, struct grmtrace *t)
{
	*s = (struct state){ .t = t };
}

static struct thread *
thread_of(struct state *s, const struct grmtrace_ev *ev)
{
	struct thread *th;
	size_t i;

	for (i = 0; i < s->nthreads; i++) {
		th = &s->thread[i];
		if (th->node == ev->node && th->pid == ev->pid &&
		    th->tid == ev->tid)
			return th;
	}
	th = realloc(s->thread, (s->nthreads + 1) * sizeof *th);
	if (th == NULL)
		return NULL;
	s->thread = th;
	th = &th[s->nthreads++];
	*th = (struct thread){ ev->node, ev->pid, ev->tid, 0, { { 0, 0 } } };
	return th;
}

/* A block ends: its time goes to its id. */
static void
block_time(struct state *s, int64_t id, uint64_t ns)
{
	size_t i;
	void *b;

	for (i = 0; i < s->nblocks && s->block[i].id != id; i++)
		;
	if (i == s->nblocks) {
		if ((b = realloc(s->block, (i + 1) * sizeof *s->block)) ==
		    NULL)
			return;
		s->block = b;
		s->block[s->nblocks++].id = id;
		s->block[i].n = s->block[i].ns = 0;
	}
	s->block[i].n++;
	s->block[i].ns += ns;
}

/* Every: called for each record. */
static void
every(struct state *s, const struct grmtrace_ev *ev)
{
	struct thread *th;
	size_t i;

	s->records++;
	for (i = 0; i < s->ntypes && s->type[i].eid != ev->eid; i++)
		;
	if (i == s->ntypes && i < TYPES_MAX)
		s->type[s->ntypes++].eid = ev->eid;
	if (i < TYPES_MAX)
		s->type[i].n++;
	if ((ev->eid != GRMTRACE_EID_BLOCK_BEGIN &&
	    ev->eid != GRMTRACE_EID_BLOCK_END) || ev->n < 1 ||
	    ev->f[0].type != GRMTRACE_INT || (th = thread_of(s, ev)) == NULL)
		return;
	if (ev->eid == GRMTRACE_EID_BLOCK_BEGIN && th->depth < DEPTH_MAX)
		th->stack[th->depth++] = (struct open){ ev->f[0].v.i, ev->ts };
	else if (ev->eid == GRMTRACE_EID_BLOCK_END && th->depth > 0 &&
	    th->stack[th->depth - 1].id == ev->f[0].v.i) {
		th->depth--;
		block_time(s, ev->f[0].v.i, ev->ts - th->stack[th->depth].ts);
	}
}

/* Final: called once, at the end; prints what was found. */
static void
final(struct state *s)
{
	const struct grmtrace_proc *p;
	const struct grmtrace_def *d;
	size_t i;

	printf("records %" PRIu64 ", losses %" PRIu64 "\n", s->records,
	    grmtrace_losses(s->t));
	for (i = 0; i < s->ntypes; i++) {
		d = grmtrace_def(s->t, s->type[i].eid);
		printf("type %" PRId32 " %" PRIu64 "%s%s\n", s->type[i].eid,
		    s->type[i].n, d != NULL && *d->description != '\0' ?
		    " " : "", d != NULL ? d->description : "");
	}
	for (i = 0; (p = grmtrace_proc_at(s->t, i)) != NULL; i++)
		printf("process %" PRIu32 " %" PRIu32 " %" PRIu64 " %s\n",
		    p->node, p->pid, p->records, p->name);
	for (i = 0; i < s->nblocks; i++)
		printf("block %" PRId64 " %" PRIu64 " mean %" PRIu64 " ns\n",
		    s->block[i].id, s->block[i].n,
		    s->block[i].ns / s->block[i].n);
}

int
main(int argc, char **argv)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	struct state s;
	char err[512];
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: interp FILE\n");
		return 2;
	}
	if ((t = grmtrace_open(argv[1], err, sizeof err)) == NULL) {
		fprintf(stderr, "interp: %s\n", err);
		return 1;
	}
	grmtrace_select(t, 0);	/* records only: processes are kept */
	init(&s, t);
	while ((rc = grmtrace_next(t, &ev)) == 1)
		every(&s, ev);
	if (rc < 0)
		fprintf(stderr, "interp: %s: %s\n", argv[1], grmtrace_error(t));
	else
		final(&s);
	free(s.thread);
	free(s.block);
	grmtrace_close(t);
	return rc < 0;
}
