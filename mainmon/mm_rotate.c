/* SPDX-License-Identifier: MIT */
/* mm_rotate.c: grmctl file NEWNAME: the trace file is completed and closed,
 * and the trace goes on in a new one that a reader can take on its own
 * (hosts, definitions and live processes written again at its start). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

void
mm_rotate_note(struct mm_proc *p, int how, uint64_t ts, const char *name)
{
	if (how != TAPE_PROC_START) {
		p->ended = 1;
		return;
	}
	p->ended = 0;
	p->start_ts = ts;
	snprintf(p->name, sizeof p->name, "%s", name);
}

static int
write_defs(struct tape_w *w, const struct mm_defs *d, uint32_t node,
	   uint32_t pid)
{
	const struct tape_def *e;
	uint32_t it = 0;

	while ((e = hmap_next(&d->map, &it, NULL)) != NULL) {
		if (e->format != NULL && tape_def_scoped(w, node, pid, e->eid,
		    e->cls, e->attr, e->format, strlen(e->format), e->dsc,
		    strlen(e->dsc)) != 0)
			return -1;
	}
	return 0;
}

/* Clock models of each host repeated at the top of a new file. */
#define MM_ROTATE_MODELS	4

/*
 * What a reader of a file that starts now needs of what came before: a
 * #HOST and a #SYNC line per connected LM, every #DEF line the reader of the old file
 * applies now (global, then per process), and a start line per process
 * that has not ended.
 */
static int
write_state(struct mm *mm, struct tape_w *w)
{
	struct mm_conn *c;
	struct mm_node *n;
	struct mm_proc *p;
	unsigned b;

	for (c = mm->conns; c != NULL; c = c->next) {
		uint32_t i = c->book.n > MM_ROTATE_MODELS ?
		    c->book.n - MM_ROTATE_MODELS : 0;

		if (c->state != MM_CONN_READY)
			continue;
		if (tape_host(w, c->node->id, c->clk.model.off0, c->lm_pid,
		    c->node->host) != 0 || mm_tsc_line(w, c) != 0)
			return -1;
		/* The models records still to be written may have been
		 * converted by: the latest few. */
		for (; i < c->book.n; i++)
			if (mm_sync_line(w, c, &c->book.v[i]) != 0)
				return -1;
	}
	if (write_defs(w, &mm->written, 0, 0) != 0 ||
	    mm_plan_write(mm, w, 0) != 0)
		return -1;
	for (n = mm->nodes; n != NULL; n = n->next)
		for (b = 0; b < MM_PROC_BUCKETS; b++)
			for (p = n->procs[b]; p != NULL; p = p->next) {
				if (write_defs(w, &p->scoped, n->id,
				    p->pid) != 0)
					return -1;
				if (p->started != 0 && !p->ended &&
				    tape_proc(w, n->id, p->pid, p->ppid,
				    TAPE_PROC_START, p->start_ts, 0,
				    p->name) != 0)
					return -1;
			}
	return tape_flush(w);
}

void
mm_rotate(struct mm *mm, struct mm_conn *ctl, const char *name)
{
	char text[WIRE_STR_MAX], *path;
	struct tape_w *w;
	uint64_t n, base;
	int e, st = 0;

	if (mm->stopping || mm->out == NULL) {
		mm_ctl_reply(ctl, 1, mm->out == NULL ? "the trace file is "
		    "closed" : "the main monitor is stopping");
		return;
	}
	/* A new file only: an existing one may be a trace (this one, or
	 * an earlier one of this rotation).  Created with O_EXCL, as -o is
	 * (mm_out_open): never through a link, never over a file. */
	if ((path = strdup(name)) == NULL) {
		mm_ctl_reply(ctl, 1, "out of memory");
		return;
	}
	w = tape_open_fmt(name, mm->fmt | mm->tape_flags | TAPE_OPEN_NEW,
	    mm->id, clk_real_ns(), clk_mono_ns());
	if (w == NULL) {
		e = errno;
		snprintf(text, sizeof text, "file %.1000s: cannot create it: "
		    "%s%s", name, strerror(e), e == EEXIST ? " (a new name "
		    "is needed)" : "");
		goto fail;
	}
	if (write_state(mm, w) != 0) {
		e = errno;
		tape_close(w);
		unlink(name);
		snprintf(text, sizeof text, "file %.1000s: cannot write it: %s",
		    name, strerror(e));
		goto fail;
	}
	n = tape_records(mm->out);
	/* Where its pieces end: before the new file's (mm_out_end). */
	base = mm->out_base + tape_end(mm->out);
	if (tape_close(mm->out) != 0) {
		e = errno;
		mm->exit_code = 1;
		st = 1;
		snprintf(text, sizeof text, "file %.1000s: writing to it; %.1000s "
		    "could not be completed: %s", name, mm->out_path,
		    strerror(e));
		log_warn("%s: cannot complete it: %s", mm->out_path,
		    strerror(e));
	} else
		snprintf(text, sizeof text, "file %.1000s: %.1000s closed with "
		    "%llu records; writing to %.1000s", name, mm->out_path,
		    (unsigned long long)n, name);
	mm->out = w;
	mm->out_base = base;
	free(mm->out_path);
	mm->out_path = path;
	mm_out_async(mm);
	mm_order_acks(mm);	/* the old file's, all in it */
	log_debug("%s", text);
	mm_ctl_reply(ctl, st, text);
	return;
fail:
	free(path);
	mm_ctl_reply(ctl, 1, text);
}
