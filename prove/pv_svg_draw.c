/* SPDX-License-Identifier: MIT */
/* pv_svg_draw.c: prove svg: the marks: blocks and ranges (merged when
 * narrow, one layer file per depth), user events, losses, control commands
 * and messages. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv_idx.h"
#include "pv_svg.h"

/* ---- blocks ---- */

static FILE *
layer(struct svg *g, size_t i)
{
	if (i == 0)
		return g->out;
	if (g->layer[i] == NULL)
		g->layer[i] = svg_tmp_file(g);
	return g->layer[i];
}

static FILE *
depth_layer(struct svg *g, size_t depth)
{
	return layer(g, depth < LAYERS ? depth : LAYERS - 1);
}

/* Draws a block, or a run of merged ones, of thread t at depth d. */
static int
draw_blocks(struct svg *g, const struct thr *t, size_t d,
	    const struct pend *p, int open)
{
	const struct blk *b = svg_blk_find(g, p->bid, p->range);
	char name[48], d1[32], a1[32], a2[32];
	const char *nm = b != NULL ? b->name : NULL;
	double h = svg_bar_h(d), w = p->x1 - p->x0;
	FILE *f;

	if ((f = depth_layer(g, d)) == NULL)
		return -1;
	if (w < MERGE_PX)
		w = MERGE_PX;
	if (nm == NULL) {
		snprintf(name, sizeof name, "block %" PRId64, p->bid);
		nm = name;
	}
	if (b == NULL || !b->used)
		fprintf(f, "<rect class=\"%s busy\"", p->n > 1 ? "m" : "b");
	else if (p->n > 1 && p->mixed)
		fprintf(f, "<rect class=\"m busy\"");
	else
		fprintf(f, "<rect class=\"%s c%d\"", p->n > 1 ? "m" :
		    w >= 4 ? "b s" : "b", b->col);
	fprintf(f, " x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">"
	    "<title>", p->x0, t->y - h / 2, w, h);
	if (p->n == 1)
		fprintf(f, "%s: %s from %s%s", nm,
		    svg_dur(d1, sizeof d1, p->sum),
		    svg_at(a1, sizeof a1, g, p->t0),
		    open ? ", still open at the end of the trace" : "");
	else if (!p->mixed)
		fprintf(f, "%" PRIu64 " \xc3\x97 %s, merged: %s busy from %s "
		    "to %s", p->n, nm, svg_dur(d1, sizeof d1, p->sum),
		    svg_at(a1, sizeof a1, g, p->t0),
		    svg_at(a2, sizeof a2, g, p->t1));
	else
		fprintf(f, "%" PRIu64 " blocks of several kinds, merged: %s "
		    "busy from %s to %s", p->n, svg_dur(d1, sizeof d1, p->sum),
		    svg_at(a1, sizeof a1, g, p->t0),
		    svg_at(a2, sizeof a2, g, p->t1));
	fprintf(f, "</title></rect>\n");
	return 0;
}

int
svg_flush_blocks(struct svg *g, struct thr *t, size_t d)
{
	struct pend *p = &t->pd[d];
	int rc;

	if (p->n == 0)
		return 0;
	rc = draw_blocks(g, t, d, p, 0);
	p->n = 0;
	return rc;
}

/* A block (or range) f of t at depth d ended at t1: drawn, or merged with
 * its narrow neighbours at that depth. */
int
svg_block_done(struct svg *g, struct thr *t, size_t d,
	       const struct frame *f, uint64_t t1, int open)
{
	struct pend *p = &t->pd[d], one;
	uint64_t t0 = f->start, ns = t1 > t0 ? t1 - t0 : 0;

	one = (struct pend){ svg_xpos(g, t0), svg_xpos(g, t1), t0, t1, ns, 1,
	    f->bid, f->range, 0 };
	if (one.x1 - one.x0 < MERGE_PX && !open) {
		if (p->n > 0 && one.x0 >= p->x0 &&
		    one.x0 - p->x1 < MERGE_PX) {
			if (one.x1 > p->x1)
				p->x1 = one.x1;
			if (t1 > p->t1)
				p->t1 = t1;
			p->sum = ns > UINT64_MAX - p->sum ? UINT64_MAX :
			    p->sum + ns;
			p->mixed |= p->bid != f->bid || p->range != f->range;
			p->n++;
			return 0;
		}
		if (svg_flush_blocks(g, t, d) != 0)
			return -1;
		*p = one;
		return 0;
	}
	if (svg_flush_blocks(g, t, d) != 0)
		return -1;
	return draw_blocks(g, t, d, &one, open);
}

int
svg_push(struct thr *t, const struct pv_mark *m, uint64_t ts)
{
	struct frame *st;
	struct pend *pd;
	size_t n;

	if (t->depth == t->cap) {
		n = t->cap == 0 ? 8 : t->cap * 2;
		if ((st = realloc(t->st, n * sizeof *st)) == NULL)
			return -1;
		t->st = st;
		if ((pd = realloc(t->pd, n * sizeof *pd)) == NULL)
			return -1;
		memset(pd + t->cap, 0, (n - t->cap) * sizeof *pd);
		t->pd = pd;
		t->cap = n;
	}
	t->st[t->depth++] = (struct frame){ m->id, m->range, ts };
	return 0;
}

/* Ends block (or range) m of t as the time profiler does: the innermost
 * open one with that id and those above it end; with none open, nothing. */
int
svg_block_end(struct svg *g, struct thr *t, const struct pv_mark *m,
	      uint64_t ts)
{
	struct frame f;
	size_t i;

	for (i = t->depth; i > 0 && (t->st[i - 1].bid != m->id ||
	    t->st[i - 1].range != m->range); i--)
		continue;
	while (i > 0 && t->depth >= i) {
		f = t->st[--t->depth];
		if (svg_block_done(g, t, t->depth, &f, ts, 0) != 0)
			return -1;
	}
	return 0;
}

/* ---- user events ---- */

int
svg_flush_ticks(struct svg *g, struct thr *t)
{
	struct pend *p = &t->tk;
	char a1[32], a2[32];
	FILE *f;

	if (p->n == 0)
		return 0;
	if ((f = layer(g, LAYERS)) == NULL)
		return -1;
	fprintf(f, "<rect class=\"ev\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
	    "height=\"6\"><title>", p->x0 - 0.5, t->y - BAR_H / 2 - 7,
	    p->x1 - p->x0 + 1);
	if (p->n > 1)
		fprintf(f, "%" PRIu64 " events from %s to %s, merged; the "
		    "first: ", p->n, svg_at(a1, sizeof a1, g, p->t0),
		    svg_at(a2, sizeof a2, g, p->t1));
	fprintf(f, "%s</title></rect>\n", t->title);
	p->n = 0;
	return 0;
}

/* A user event: a tick above the thread's line, or merged into the run
 * of ticks before it. */
int
svg_tick(struct svg *g, struct thr *t, const struct grmtrace_ev *ev)
{
	const struct grmtrace_def *def = ev->def;
	struct pend *p = &t->tk;
	double x = svg_xpos(g, ev->ts);
	const char *dsc;
	struct txt s;
	char a1[32];
	unsigned i;

	if (p->n > 0 && x >= p->x0 && x - p->x1 < MERGE_PX) {
		if (x > p->x1)
			p->x1 = x;
		p->t1 = ev->ts;
		p->n++;
		return 0;
	}
	if (svg_flush_ticks(g, t) != 0)
		return -1;
	*p = (struct pend){ x, x, ev->ts, ev->ts, 0, 1, 0, 0, 0 };
	svg_txt_init(&s, t->title, sizeof t->title);
	svg_txt_printf(&s, "eid %" PRId32, ev->eid);
	dsc = def->description[0] != '\0' ? def->description : def->format;
	if (dsc[0] != '\0') {
		svg_txt_printf(&s, " (");
		svg_txt_esc(&s, dsc, strlen(dsc), NAME_CUT);
		svg_txt_printf(&s, ")");
	}
	svg_txt_printf(&s, " at %s", svg_at(a1, sizeof a1, g, ev->ts));
	for (i = 0; i < ev->n; i++) {
		svg_txt_printf(&s, i == 0 ? ": " : ", ");
		switch (ev->f[i].type) {
		case GRMTRACE_INT:
			svg_txt_printf(&s, "%" PRId64, ev->f[i].v.i);
			break;
		case GRMTRACE_UINT:
			svg_txt_printf(&s, def->conv[i] == 'p' ?
			    "0x%" PRIx64 : "%" PRIu64, ev->f[i].v.u);
			break;
		case GRMTRACE_DOUBLE:
			svg_txt_printf(&s, "%.10g", ev->f[i].v.d);
			break;
		default:
			svg_txt_printf(&s, "&quot;");
			svg_txt_esc(&s, ev->f[i].v.s.p, ev->f[i].v.s.len,
			    TITLE_MAX);
			svg_txt_printf(&s, "&quot;");
		}
	}
	svg_txt_done(&s);
	return 0;
}

/* ---- losses and control commands ---- */

int
svg_draw_loss(struct svg *g, const struct thr *t, struct pend *p)
{
	double x = (p->x0 + p->x1) / 2;
	double y = t != NULL ? t->y - BAR_H / 2 - 1 : g->axis_y;
	char a1[32], a2[32];

	if (p->n == 0)
		return 0;
	fprintf(g->out, "<path class=\"loss\" d=\"M%.2f %.2fh10l-5 9z\">"
	    "<title>%" PRIu64 " events lost", x - 5, y - 9, p->sum);
	if (p->n == 1)
		fprintf(g->out, " just before %s",
		    svg_at(a1, sizeof a1, g, p->t0));
	else
		fprintf(g->out, " (%" PRIu64 " losses) from %s to %s", p->n,
		    svg_at(a1, sizeof a1, g, p->t0),
		    svg_at(a2, sizeof a2, g, p->t1));
	if (t == NULL)
		fprintf(g->out, " by threads with no records");
	fprintf(g->out, "</title></path>\n");
	p->n = 0;
	return 0;
}

void
svg_add_loss(struct svg *g, const struct grmtrace_ev *ev)
{
	struct thr *t = svg_thr_find(g, ev->node, ev->pid, ev->tid);
	struct pend *p = t != NULL ? &t->ls : &g->oloss;
	double x = svg_xpos(g, ev->ts);

	if (p->n > 0 && x >= p->x0 && x - p->x1 < MERGE_PX) {
		p->x1 = x;
		p->t1 = ev->ts;
		p->sum = ev->count > UINT64_MAX - p->sum ? UINT64_MAX :
		    p->sum + ev->count;
		p->n++;
		return;
	}
	svg_draw_loss(g, t, p);
	*p = (struct pend){ x, x, ev->ts, ev->ts, ev->count, 1, 0, 0, 0 };
}

/* A control command: a dashed line across the threads. */
void
svg_draw_control(struct svg *g, const struct grmtrace_ev *ev)
{
	char cmd[NAME_CUT * 6 + 8], a1[32];
	double x = svg_xpos(g, ev->ts);
	struct txt s;

	svg_txt_init(&s, cmd, sizeof cmd);
	svg_txt_esc(&s, ev->str, ev->str_len, NAME_CUT);
	svg_txt_done(&s);
	fprintf(g->out, "<line class=\"ctl\" x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\"><title>control command &quot;%s&quot; "
	    "in effect from %s</title></line>\n", x, g->rows_top, x,
	    g->rows_end, cmd, svg_at(a1, sizeof a1, g, ev->ts));
}

/* ---- collection phases ---- */

int
svg_phase_mark(struct svg *g, const struct grmtrace_ev *ev,
	       const struct pv_mark *m)
{
	struct phase *p = NULL;
	size_t i;

	/* The node's phase under way, if any: several LMs of a node each
	 * stop theirs; the phase lasts from the first begin to the last
	 * end. */
	for (i = g->nph; i > 0; i--)
		if (g->ph[i - 1].node == ev->node) {
			if (g->ph[i - 1].depth > 0)
				p = &g->ph[i - 1];
			break;
		}
	if (m->kind == PV_CEND) {
		if (p != NULL && --p->depth == 0)
			p->t1 = ev->ts;
		return 0;
	}
	if (p != NULL) {
		p->depth++;
		return 0;
	}
	if ((p = pv_grow(g->ph, &g->cph, g->nph, sizeof *p)) == NULL)
		return -1;
	g->ph = p;
	g->ph[g->nph++] = (struct phase){ ev->node, m->id, ev->ts, 0, 1 };
	return 0;
}

void
svg_phases(struct svg *g)
{
	const struct phase *p;
	double x0, x1, y0, y1;
	char a1[32], d1[32];
	size_t i, j;
	uint64_t t1;

	for (i = 0; i < g->nph; i++) {
		p = &g->ph[i];
		y0 = y1 = -1;
		for (j = 0; j < g->nth; j++) {
			if (g->th[j].node != p->node)
				continue;
			if (y0 < 0)
				y0 = g->th[j].y - ROW_H / 2;
			y1 = g->th[j].y + ROW_H / 2;
		}
		if (y0 < 0)
			continue;	/* no thread of that node is drawn */
		t1 = p->t1 != 0 ? p->t1 : g->last;
		x0 = svg_xpos(g, p->t0);
		x1 = svg_xpos(g, t1 > p->t0 ? t1 : p->t0);
		fprintf(g->out, "<rect class=\"coll\" x=\"%.2f\" y=\"%.2f\" "
		    "width=\"%.2f\" height=\"%.2f\"><title>node %" PRIu32
		    ": processes stopped for collection %" PRId64 " at %s, "
		    "for %s%s</title></rect>\n", x0, y0,
		    x1 - x0 > 1 ? x1 - x0 : 1, y1 - y0, p->node, p->round,
		    svg_at(a1, sizeof a1, g, p->t0),
		    svg_sdur(d1, sizeof d1, p->t0, t1),
		    p->t1 != 0 ? "" : " (no end in the trace)");
	}
}

/* ---- messages ---- */

/* Says who sent or received m: its rank, or that it has none. */
static void
who(FILE *f, const struct pv_msg *m)
{
	if (m->has_rank)
		fprintf(f, "rank %" PRId64, m->rank);
	else
		fprintf(f, "node %" PRIu32 " pid %" PRIu32 " (no rank)",
		    m->node, m->pid);
}

/* An unmatched send (a stub leaving the line) or receive (arriving). */
static void
draw_stub(struct svg *g, const struct thr *t, const struct pv_msg *m,
	  int send)
{
	double x = svg_xpos(g, m->ts), y = t->y;
	char a1[32];

	fprintf(g->out, "<line class=\"stub\" x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\"><title>message ", send ? x : x - 8,
	    send ? y : y - 8, send ? x + 8 : x, send ? y - 8 : y);
	if (send) {
		fprintf(g->out, "from ");
		who(g->out, m);
		fprintf(g->out, " to rank %" PRId64, m->peer);
	} else {
		fprintf(g->out, "from rank %" PRId64 " to ", m->peer);
		who(g->out, m);
	}
	fprintf(g->out, ", tag %" PRId64 ", %" PRId64 " bytes, %s at %s: no "
	    "matching %s</title></line>\n", m->tag, m->bytes,
	    send ? "sent" : "received", svg_at(a1, sizeof a1, g, m->ts),
	    send ? "receive" : "send");
}

/* An arrow from each matched send to its receive (unless arrows is 0), a
 * stub for each message not matched; on top of the blocks and user
 * events. */
static void
messages(struct svg *g, int arrows)
{
	const struct pv_msgs *ms = &g->msgs;
	const struct pv_msg *s, *r;
	const struct thr *ts, *tr;
	char a1[32], a2[32], d1[32];
	size_t i;
	int unsure;

	for (i = 0; i < ms->nsnd; i++) {
		s = &ms->snd[i];
		if ((ts = svg_thr_find(g, s->node, s->pid, s->tid)) == NULL)
			continue;
		if (s->match == 0) {
			draw_stub(g, ts, s, 1);
			continue;
		}
		if (!arrows)
			continue;
		r = &ms->rcv[s->match - 1];
		if ((tr = svg_thr_find(g, r->node, r->pid, r->tid)) == NULL)
			continue;
		/* Dashed: a latency less than the clocks' bounds, its
		 * order is not certain. */
		unsure = r->ts < s->ts || r->ts - s->ts < s->bound + r->bound;
		fprintf(g->out, "<line class=\"msg\"%s x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"%s marker-end=\"url(#arrow)\">"
		    "<title>message from rank %" PRId64 " to rank %" PRId64
		    ", tag %" PRId64 ", %" PRId64 " bytes", unsure ?
		    " data-unsure=\"1\"" : "", svg_xpos(g, s->ts), ts->y, svg_xpos(g, r->ts), tr->y,
		    unsure ? " stroke-dasharray=\"4 3\"" : "", s->rank, r->rank,
		    s->tag, s->bytes);
		if (r->bytes != s->bytes)
			fprintf(g->out, " (%" PRId64 " received)", r->bytes);
		fprintf(g->out, ": sent at %s, received at %s, latency %s"
		    "%s</title></line>\n", svg_at(a1, sizeof a1, g, s->ts),
		    svg_at(a2, sizeof a2, g, r->ts),
		    svg_sdur(d1, sizeof d1, s->ts, r->ts), unsure ? ", less "
		    "than the clocks' bounds: order not certain" : "");
	}
	for (i = 0; i < ms->nrcv; i++) {
		r = &ms->rcv[i];
		if (r->match == 0 &&
		    (tr = svg_thr_find(g, r->node, r->pid, r->tid)) != NULL)
			draw_stub(g, tr, r, 0);
	}
}

void
svg_messages(struct svg *g)
{
	messages(g, 1);
}

/* Who a row is, in a bundle's title. */
static void
row_who(FILE *f, const struct pv_idx *x, const struct pv_row *w)
{
	const struct pv_proc *p = pv_proc(&x->msgs, w->node, w->pid);

	if (p != NULL && p->has_rank)
		fprintf(f, "rank %" PRId64, p->rank);
	else
		fprintf(f, "node %" PRIu32 " pid %" PRIu32, w->node, w->pid);
}

int
svg_bundles(struct svg *g)
{
	const struct thr *ts, *tr;
	const struct pv_row *ws, *wr;
	struct pv_bundle *b = NULL;
	struct pv_idx x;
	struct pv_q q;
	uint64_t drawn = 0;
	size_t i, n, stride, lines = 0;
	int trunc = 0;
	double k;

	if ((double)g->msgs.matched * MSG_PX <= g->plot ||
	    strcmp(g->path, "-") == 0)
		return 0;
	memset(&x, 0, sizeof x);
	if (pv_idx_build(&x, g->path) != 0) {
		g->what = "cannot index the trace to bundle its messages";
		return -1;
	}
	q = (struct pv_q){ g->first, g->last + 1,
	    g->plot >= 2 * BUNDLE_PX ? (unsigned)(g->plot / BUNDLE_PX) : 1, 0,
	    x.nrow };
	if (pv_idx_arrows(&x, &q, 1, &b, &n, &stride, &trunc) != 0) {
		pv_idx_free(&x);
		g->what = "out of memory";
		return -1;
	}
	k = g->plot / q.width;
	for (i = 0; i < n; i++) {
		ws = &x.row[b[i].rs];
		wr = &x.row[b[i].rr];
		/* Both ends drawn: rows and range selected. */
		if (b[i].xs < 0 || b[i].xs > (long)q.width || b[i].xr < 0 ||
		    b[i].xr > (long)q.width ||
		    (ts = svg_thr_find(g, ws->node, ws->pid, ws->tid)) == NULL ||
		    (tr = svg_thr_find(g, wr->node, wr->pid, wr->tid)) == NULL)
			continue;
		fprintf(g->out, "<line class=\"msg\" data-n=\"%" PRIu64 "\" "
		    "x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
		    "stroke-width=\"%.2f\" stroke-opacity=\"%.2f\"%s "
		    "marker-end=\"url(#arrow)\"><title>%" PRIu64 " message%s "
		    "from ", b[i].n, g->left + (double)b[i].xs * k, ts->y,
		    g->left + (double)b[i].xr * k, tr->y,
		    b[i].n > 1 ? 1 + log2((double)b[i].n) / 2 : 1.0,
		    b[i].n > 1 ? 0.9 : 0.5,
		    pv_arrow_unsure(&x.arrow[b[i].first]) ?
		    " stroke-dasharray=\"4 3\"" : "", b[i].n,
		    b[i].n > 1 ? "s" : "");
		row_who(g->out, &x, ws);
		fprintf(g->out, " to ");
		row_who(g->out, &x, wr);
		fprintf(g->out, "</title></line>\n");
		drawn += b[i].n;
		lines++;
	}
	fprintf(g->out, "<text class=\"info\" x=\"%.2f\" y=\"%.2f\">%" PRIu64
	    " messages in %zu lines: those that would overlap bundled%s"
	    "</text>\n", g->left, g->height - 4, drawn, lines,
	    stride > 1 || trunc ? " (sampled)" : "");
	free(b);
	pv_idx_free(&x);
	messages(g, 0);
	return 1;
}

/* ---- layers ---- */

/* Copies the deeper layers and the user events into the output. */
int
svg_layers_out(struct svg *g)
{
	char buf[65536];
	size_t i, n;
	FILE *f;

	for (i = 1; i <= LAYERS; i++) {
		if ((f = g->layer[i]) == NULL)
			continue;
		if (fflush(f) != 0 || ferror(f) || fseek(f, 0, SEEK_SET) != 0)
			goto fail;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, n, g->out);
		if (ferror(f))
			goto fail;
		fclose(f);
		g->layer[i] = NULL;
	}
	return 0;
fail:
	g->what = "temporary file";
	g->eno = errno;
	return -1;
}
