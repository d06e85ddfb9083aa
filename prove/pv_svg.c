/* SPDX-License-Identifier: MIT */
/* pv_svg.c: prove svg, the PROVE space-time diagram of a trace as SVG: the
 * command, the passes over the trace, the threads and blocks, the layout. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "pv_svg.h"
#include "util/num.h"

/*
 * The trace is read twice: once to learn the threads, the time span, the
 * blocks, the processes' names and the messages (so that the picture's
 * size and scale are known, and sends can be matched with receives), once
 * to draw; a third time for the losses and control commands if it has
 * any.  Drawing keeps per thread only its stack of open blocks and, per
 * depth, the run of narrow blocks being merged, so memory grows with the
 * trace only by the messages.  Deeper blocks must be painted over their
 * parents, but a child ends (and is drawn) before its parent: each depth is
 * written to a temporary file of its own and the files are copied out in
 * order.  If the trace is standard input and cannot be read twice, it is
 * first copied to a temporary file.
 */

/* ---- index ---- */

/* The value of (k1, k2) in m (pv_ix_type: an array index + 1), 0 if
 * none. */
static size_t
ix_find(const struct hmap *m, uint64_t k1, uint64_t k2)
{
	const struct pv_key k = { k1, k2 };
	const size_t *v = hmap_find(m, &k);

	return v != NULL ? *v : 0;
}

/* Gives (k1, k2) the value v if it has none; returns its value, 0 if out
 * of memory. */
static size_t
ix_add(struct hmap *m, uint64_t k1, uint64_t k2, size_t v)
{
	const struct pv_key k = { k1, k2 };
	size_t *s;
	int added;

	if (m->type == NULL)
		hmap_init(m, &pv_ix_type);
	if ((s = hmap_put(m, &k, &added)) == NULL)
		return 0;
	if (added)
		*s = v;
	return *s;
}

/* ---- threads and blocks ---- */

static int
oom(struct svg *g)
{
	g->what = "out of memory";
	g->eno = 0;
	return -1;
}

struct thr *
svg_thr_find(const struct svg *g, uint32_t node, uint32_t pid,
	     uint32_t tid)
{
	size_t v = ix_find(&g->thx, (uint64_t)node << 32 | pid, tid);

	return v == 0 ? NULL : &g->th[v - 1];
}

static struct thr *
thr_add(struct svg *g, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct thr *t;
	size_t v;

	if ((t = pv_grow(g->th, &g->cth, g->nth, sizeof *t)) == NULL)
		return NULL;
	g->th = t;
	v = ix_add(&g->thx, (uint64_t)node << 32 | pid, tid, g->nth + 1);
	if (v == 0)
		return NULL;
	t = &g->th[v - 1];
	if (v == g->nth + 1) {
		memset(t, 0, sizeof *t);
		t->node = node;
		t->pid = pid;
		t->tid = tid;
		t->seq = g->nth++;
	}
	return t;
}

struct blk *
svg_blk_find(const struct svg *g, int64_t bid, int range)
{
	size_t v = ix_find(&g->bkx, (uint64_t)bid, (uint64_t)range);

	return v == 0 ? NULL : &g->bk[v - 1];
}

static struct blk *
blk_add(struct svg *g, int64_t bid, int range)
{
	struct blk *b;
	size_t v;

	if ((b = pv_grow(g->bk, &g->cbk, g->nbk, sizeof *b)) == NULL)
		return NULL;
	g->bk = b;
	if ((v = ix_add(&g->bkx, (uint64_t)bid, (uint64_t)range,
	    g->nbk + 1)) == 0)
		return NULL;
	b = &g->bk[v - 1];
	if (v == g->nbk + 1) {
		memset(b, 0, sizeof *b);
		b->bid = bid;
		b->range = range;
		g->nbk++;
	}
	return b;
}

/* Gives block (or range) bid the name s[0..n), escaped, in full and for
 * the legend. */
static int
blk_name(struct svg *g, int64_t bid, int range, const char *s, size_t n)
{
	size_t cap = NAME_CUT * 6 + 8, scap = LEGEND_CUT * 6 + 8;
	char *name, *shown;
	struct blk *b;
	struct txt t;

	if ((b = blk_add(g, bid, range)) == NULL)
		return -1;
	if ((name = malloc(cap)) == NULL || (shown = malloc(scap)) == NULL) {
		free(name);
		return -1;
	}
	svg_txt_init(&t, name, cap);
	svg_txt_esc(&t, s, n, NAME_CUT);
	svg_txt_done(&t);
	svg_txt_init(&t, shown, scap);
	svg_txt_esc(&t, s, n, LEGEND_CUT);
	svg_txt_done(&t);
	free(b->name);
	free(b->shown);
	b->name = name;
	b->shown = shown;
	b->nch = t.nch;
	return 0;
}

static int
by_place(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int
by_bid(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	if (x->range != y->range)
		return x->range - y->range;
	return (x->bid > y->bid) - (x->bid < y->bid);
}

/* ---- input ---- */

/* Creates an unnamed temporary file. */
FILE *
svg_tmp_file(struct svg *g)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *f;
	int fd;

	if (dir == NULL || *dir == '\0')
		dir = P_tmpdir;
	if ((size_t)snprintf(path, sizeof path, "%s/prove-svg.XXXXXX", dir) >=
	    sizeof path) {
		errno = ENAMETOOLONG;
		fd = -1;
	} else if ((fd = mkstemp(path)) >= 0)
		unlink(path);
	if (fd < 0 || (f = fdopen(fd, "w+")) == NULL) {
		g->what = "temporary file";
		g->eno = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

/*
 * svg reads the trace twice: standard input that is not a regular file is
 * copied to an unnamed temporary file first, up to this much (a trace
 * larger than that is given by its name; dump and stats read standard
 * input as it comes, and copy nothing).
 */
#define PV_STDIN_MAX	(256ull << 20)

/* Makes standard input a file that can be read again from in_off. */
static int
stdin_seekable(struct svg *g)
{
	char buf[65536];
	struct stat sb;
	uint64_t total = 0;
	ssize_t n;
	FILE *f;

	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (g->in_off = lseek(STDIN_FILENO, 0, SEEK_CUR)) >= 0)
		return 0;
	if ((f = svg_tmp_file(g)) == NULL)
		return -1;
	while ((n = read(STDIN_FILENO, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fwrite(buf, 1, (size_t)n, f) != (size_t)n) {
			g->what = n < 0 ? "standard input" : "temporary file";
			g->eno = errno;
			fclose(f);
			return -1;
		}
		if ((total += (uint64_t)n) > PV_STDIN_MAX) {
			g->what = "standard input: more than 256 MiB (svg "
			    "reads a trace twice, and copies standard input "
			    "for that: give the trace's file name instead)";
			g->eno = 0;
			fclose(f);
			return -1;
		}
	}
	if (fflush(f) != 0 || dup2(fileno(f), STDIN_FILENO) < 0) {
		g->what = "temporary file";
		g->eno = errno;
		fclose(f);
		return -1;
	}
	fclose(f);
	g->in_off = 0;
	return 0;
}

/* Opens the trace for another pass. */
static struct grmtrace *
reopen(struct svg *g)
{
	if (strcmp(g->path, "-") == 0 &&
	    lseek(STDIN_FILENO, g->in_off, SEEK_SET) < 0) {
		fprintf(stderr, "prove: -: %s\n", strerror(errno));
		return NULL;
	}
	return pv_open(g->path);
}

/* ---- pass 1: survey ---- */

/* What the survey keeps of a record: the blocks and ranges used and their
 * names, the processes' ranks and names, the messages. */
static int
survey_mark(struct svg *g, const struct grmtrace_ev *ev, const struct pv_mark *m)
{
	struct blk *b;

	switch (m->kind) {
	case PV_BNAME:
		return blk_name(g, m->id, 0, m->s, m->len);
	case PV_BEGIN:
		if ((b = blk_add(g, m->id, m->range)) == NULL)
			return -1;
		b->used = 1;
		if (m->range && b->name == NULL)
			return blk_name(g, m->id, 1, m->s, m->len);
		return 0;
	case PV_END:
		return 0;
	default:
		return pv_msgs_ev(&g->msgs, ev, m);
	}
}

/* Pass 1: the records, threads, time span, blocks, process names and
 * svg_messages (matched at the end).  Returns 0, -1 on a malformed trace
 * (reported), -2 on another error (in g->what). */
static int
survey(struct svg *g)
{
	struct pv_mark m;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc, row;

	if ((r = reopen(g)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_CONTROL));
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		g->ncontrols += ev->kind == GRMTRACE_CONTROL;
		if (ev->kind != GRMTRACE_RECORD) {
			if (pv_sym_ev(&g->sym, ev) != 0 ||
			    pv_msgs_ev(&g->msgs, ev, NULL) != 0) {
				rc = oom(g);
				break;
			}
			continue;
		}
		g->seen++;
		if (ev->ts < g->sel.from || ev->ts >= g->sel.to)
			continue;
		/* Other rows' records are not drawn, nor counted; their
		 * host's collection phases are drawn. */
		row = pv_sel_row(&g->sel, ev->node, ev->pid, ev->tid);
		if (row && (g->records == 0 || ev->ts < g->first))
			g->first = ev->ts;
		if (row && (g->records == 0 || ev->ts > g->last))
			g->last = ev->ts;
		g->records += row;
		if (pv_mark(&g->names, &g->sym, ev, &m) != 0) {
			rc = oom(g);
			break;
		}
		/* A collection phase is the node's, on no thread line. */
		if (m.kind == PV_CBEGIN || m.kind == PV_CEND) {
			if (svg_phase_mark(g, ev, &m) != 0) {
				rc = oom(g);
				break;
			}
			continue;
		}
		if (!row)
			continue;
		if (thr_add(g, ev->node, ev->pid, ev->tid) == NULL ||
		    survey_mark(g, ev, &m) != 0) {
			rc = oom(g);
			break;
		}
	}
	if (rc == 0 && pv_msgs_match(&g->msgs) != 0)
		rc = oom(g);
	if (rc == -1 && g->what == NULL) {
		pv_fail(g->path, r);
		return -1;
	}
	g->losses = grmtrace_losses(r);
	pv_close(g->path, r);
	return rc == 0 ? 0 : -2;
}

/* ---- layout ---- */

double
svg_xpos(const struct svg *g, uint64_t ts)
{
	uint64_t d = ts > g->first ? ts - g->first : 0;

	if (d > g->span)
		d = g->span;
	return g->left + (double)d * g->plot / (double)g->span;
}

double
svg_bar_h(size_t depth)
{
	double h = BAR_H;

	for (; depth > 0 && h > 2.5; depth--)
		h *= 0.7;
	return h < 2.5 ? 2.5 : h;
}

/*
 * The label of thread t's line, escaped: "name rank R tid T" if its process
 * gave itself a rank, "program pid P tid T" if a #PROC line names it, else
 * "node N pid P tid T".  Its length in characters goes to *nch.
 */
static int
thr_label(struct svg *g, struct thr *t, size_t *nch)
{
	const struct pv_proc *p = pv_proc(&g->msgs, t->node, t->pid);
	size_t cap = LABEL_CUT * 6 + 64;
	struct txt s;

	if ((t->label = malloc(cap)) == NULL)
		return -1;
	svg_txt_init(&s, t->label, cap);
	if (p != NULL && p->has_rank) {
		svg_txt_esc(&s, p->name, p->name_len, LABEL_CUT);
		svg_txt_printf(&s, "%srank %" PRId64 " tid %" PRIu32,
		    s.len > 0 ? " " : "", p->rank, t->tid);
	} else if (p != NULL && p->prog != NULL && p->prog_len > 0) {
		svg_txt_esc(&s, p->prog, p->prog_len, LABEL_CUT);
		svg_txt_printf(&s, " pid %" PRIu32 " tid %" PRIu32, t->pid,
		    t->tid);
	} else
		svg_txt_printf(&s, "node %" PRIu32 " pid %" PRIu32 " tid %"
		    PRIu32, t->node, t->pid, t->tid);
	svg_txt_done(&s);
	*nch = s.nch;
	return 0;
}

/* Sorts threads and blocks, and places everything. */
static int
layout(struct svg *g)
{
	double y = 0, lw;
	size_t i, n, chars = 0;
	char d1[32];
	struct txt s;

	if (g->nth > 0)
		qsort(g->th, g->nth, sizeof *g->th, by_place);
	if (g->nbk > 0)
		qsort(g->bk, g->nbk, sizeof *g->bk, by_bid);
	hmap_free(&g->thx);
	hmap_free(&g->bkx);
	for (i = 0; i < g->nth; i++) {
		if (ix_add(&g->thx, (uint64_t)g->th[i].node << 32 |
		    g->th[i].pid, g->th[i].tid, i + 1) == 0)
			return oom(g);
		if (i == 0 || g->th[i].node != g->th[i - 1].node) {
			g->nnodes++;
			g->nprocs++;
			y += i == 0 ? 0 : NODE_GAP;
		} else if (g->th[i].pid != g->th[i - 1].pid) {
			g->nprocs++;
			y += PROC_GAP;
		}
		g->th[i].y = y + ROW_H / 2;
		y += ROW_H;
		if (thr_label(g, &g->th[i], &n) != 0)
			return oom(g);
		if (n > chars)
			chars = n;
	}
	for (i = 0; i < g->nbk; i++) {
		if (ix_add(&g->bkx, (uint64_t)g->bk[i].bid,
		    (uint64_t)g->bk[i].range, i + 1) == 0)
			return oom(g);
		if (g->bk[i].used)
			g->bk[i].col = (int)(g->nused++ % NPAL);
	}
	lw = (double)chars * CHAR_W + 2 * MARGIN;
	g->left = lw < 100 ? 100 : lw;
	if ((double)g->width - g->left - 2 * MARGIN < 100)
		g->width = (int)(g->left + 2 * MARGIN + 100);
	g->plot = (double)g->width - g->left - 2 * MARGIN;
	g->span = g->last - g->first == 0 ? 1 : g->last - g->first;

	svg_txt_init(&s, g->head, sizeof g->head);
	svg_txt_printf(&s, "grm trace ");
	svg_txt_esc(&s, g->path, strlen(g->path), NAME_CUT);
	svg_txt_done(&s);
	n = (size_t)snprintf(g->info, sizeof g->info, "%zu thread%s in %zu "
	    "process%s on %zu node%s, %" PRIu64 " records over %s; %" PRIu64
	    " events lost", g->nth, g->nth == 1 ? "" : "s", g->nprocs,
	    g->nprocs == 1 ? "" : "es", g->nnodes, g->nnodes == 1 ? "" : "s",
	    g->records, svg_dur(d1, sizeof d1, g->last - g->first), g->losses);
	if (g->msgs.nsnd + g->msgs.nrcv > 0 && n < sizeof g->info)
		n += (size_t)snprintf(g->info + n, sizeof g->info - n, "; %"
		    PRIu64 " messages matched, %zu not matched",
		    g->msgs.matched, g->msgs.nsnd + g->msgs.nrcv -
		    2 * (size_t)g->msgs.matched);
	if (n < sizeof g->info)
		snprintf(g->info + n, sizeof g->info - n, ". Time since the "
		    "first record.");
	g->axis_y = svg_wrap(g, "title", 22, 18, TITLE_W, g->head, 0);
	g->axis_y = svg_wrap(g, "info", g->axis_y, 14, CHAR_W, g->info, 0) + 12;
	g->rows_top = g->axis_y + 14;
	for (i = 0; i < g->nth; i++)
		g->th[i].y += g->rows_top;
	g->rows_end = g->rows_top + (g->nth == 0 ? ROW_H : y);
	return 0;
}

/* ---- pass 2: blocks and events ---- */

/* Pass 2: the blocks, BEE ranges and user events. */
static int
draw(struct svg *g)
{
	struct pv_mark m;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct thr *t;
	struct frame f;
	uint64_t n;
	size_t i, d;
	int rc = 0;

	if ((r = reopen(g)) == NULL)
		return -1;
	/* Only the records the survey saw, should the file have grown. */
	for (n = 0; n < g->seen && (rc = grmtrace_next(r, &ev)) == 1; n++) {
		if (!pv_sel_has(&g->sel, ev->node, ev->pid, ev->tid, ev->ts) ||
		    (t = svg_thr_find(g, ev->node, ev->pid, ev->tid)) == NULL)
			continue;
		if (pv_mark(&g->names, &g->sym, ev, &m) != 0)
			rc = oom(g);
		else if (m.kind == PV_BEGIN)
			rc = svg_push(t, &m, ev->ts) == 0 ? 0 : oom(g);
		else if (m.kind == PV_END)
			rc = svg_block_end(g, t, &m, ev->ts);
		else if (ev->eid >= 0)
			rc = svg_tick(g, t, ev);
		else
			rc = 0;
		if (rc != 0) {
			rc = -2;
			break;
		}
	}
	if (rc == -1) {
		pv_fail(g->path, r);
		return -1;
	}
	pv_close(g->path, r);
	if (rc != 0 && rc != 1)
		return -2;
	for (i = 0; i < g->nth; i++) {
		t = &g->th[i];
		while (t->depth > 0) {
			f = t->st[--t->depth];
			if (svg_block_done(g, t, t->depth, &f, g->last, 1) != 0)
				return -2;
		}
		for (d = 0; d < t->cap; d++)
			if (svg_flush_blocks(g, t, d) != 0)
				return -2;
		if (svg_flush_ticks(g, t) != 0)
			return -2;
	}
	return 0;
}

/* ---- pass 3: losses and control commands ---- */

/*
 * Pass 3, only if the trace has losses or control commands: they are
 * drawn on top of everything, the losses merged like user events.  Lines
 * after a record the survey did not see (the file grew) are not read.
 */
static int
marks(struct svg *g)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	uint64_t n = 0;
	size_t i;
	int rc;

	if (g->losses == 0 && g->ncontrols == 0)
		return 0;
	if ((r = reopen(g)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_LOSS) |
	    GRMTRACE_WANT(GRMTRACE_CONTROL));
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind == GRMTRACE_RECORD) {
			if (++n > g->seen)
				break;
		} else if (ev->ts < g->sel.from || ev->ts >= g->sel.to)
			continue;
		else if (ev->kind == GRMTRACE_LOSS && (g->sel.nspec == 0 ||
		    svg_thr_find(g, ev->node, ev->pid, ev->tid) != NULL))
			svg_add_loss(g, ev);
		else if (ev->kind == GRMTRACE_CONTROL)
			svg_draw_control(g, ev);
	}
	if (rc == -1) {
		pv_fail(g->path, r);
		return -1;
	}
	pv_close(g->path, r);
	for (i = 0; i < g->nth; i++)
		svg_draw_loss(g, &g->th[i], &g->th[i].ls);
	svg_draw_loss(g, NULL, &g->oloss);
	return 0;
}

/* ---- the command ---- */

static void
cleanup(struct svg *g)
{
	size_t i;

	for (i = 0; i <= LAYERS; i++)
		if (g->layer[i] != NULL)
			fclose(g->layer[i]);
	for (i = 0; i < g->nth; i++) {
		free(g->th[i].st);
		free(g->th[i].pd);
		free(g->th[i].label);
	}
	for (i = 0; i < g->nbk; i++) {
		free(g->bk[i].name);
		free(g->bk[i].shown);
	}
	free(g->th);
	free(g->bk);
	free(g->ph);
	hmap_free(&g->thx);
	hmap_free(&g->bkx);
	pv_strs_free(&g->names);
	pv_sym_free(&g->sym);
	pv_msgs_free(&g->msgs);
	pv_sel_free(&g->sel);
}

/* Finishes the output; returns 0, or -1 after a message.  A partial
 * output is left as it is. */
static int
finish(struct svg *g, int ok)
{
	int err;

	if (g->out == NULL)
		return ok ? 0 : -1;
	if (g->out == stdout)
		return pv_flush() == 0 && ok ? 0 : -1;
	err = ferror(g->out);
	if (fclose(g->out) != 0 || err) {
		if (ok)
			fprintf(stderr, "prove: %s: write error: %s\n",
			    g->opath, strerror(errno));
		return -1;
	}
	return ok ? 0 : -1;
}

static int
usage_svg(FILE *f)
{
	fprintf(f, "usage: prove svg FILE [-o OUT.svg] [-w WIDTH] [-t FROM:TO] "
	    "[-r ROWS]\n");
	return f == stdout ? 0 : 2;
}

int
pv_svg(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char msg[NUM_MSG_MAX], expected[64];
	struct svg g;
	uint64_t w;
	int c, r, rc;

	memset(&g, 0, sizeof g);
	g.width = W_DEFAULT;
	g.sel.to = UINT64_MAX;
	while ((r = pv_getopt(argc, argv, "svg", ":o:w:t:r:h", longopts,
	    &c)) > 0) {
		switch (c) {
		case 't':
			if (pv_sel_time(&g.sel, "svg", optarg) != 0)
				goto bad;
			break;
		case 'r':
			if (pv_sel_rows(&g.sel, "svg", optarg) != 0)
				goto bad;
			break;
		case 'o':
			g.opath = optarg;
			break;
		case 'w':
			snprintf(expected, sizeof expected, "a width in pixels "
			    "(%d to %d)", W_MIN, W_MAX);
			if (num_parse_u64(optarg, W_MIN, W_MAX, &w) != 0) {
				fprintf(stderr, "prove svg: %s\n", num_msg(msg,
				    sizeof msg, "-w", optarg, expected));
				goto bad;
			}
			g.width = (int)w;
			break;
		default:
			pv_sel_free(&g.sel);
			return usage_svg(stdout);
		}
	}
	if (r < 0 || optind != argc - 1) {
		pv_sel_free(&g.sel);
		return usage_svg(stderr);
	}
	g.path = argv[optind];
	rc = 0;
	if (strcmp(g.path, "-") == 0 && stdin_seekable(&g) != 0)
		rc = -2;
	if (rc == 0)
		rc = survey(&g);
	if (rc == 0)
		rc = layout(&g) == 0 ? 0 : -2;
	if (rc == 0) {
		if (g.opath == NULL || strcmp(g.opath, "-") == 0)
			g.out = stdout;
		else if ((g.out = fopen(g.opath, "w")) == NULL) {
			fprintf(stderr, "prove: %s: %s\n", g.opath,
			    strerror(errno));
			rc = -1;
		}
	}
	if (rc == 0) {
		svg_header(&g);
		rc = draw(&g);
	}
	if (rc == 0 && svg_layers_out(&g) != 0)
		rc = -2;
	if (rc == 0) {
		if ((rc = svg_bundles(&g)) == 0)
			svg_messages(&g);
		rc = rc < 0 ? -2 : marks(&g);
	}
	if (rc == 0)
		fprintf(g.out, "</svg>\n");
	if (rc == -2)
		fprintf(stderr, "prove: %s%s%s\n",
		    g.what != NULL ? g.what : "error",
		    g.eno != 0 ? ": " : "", g.eno != 0 ? strerror(g.eno) : "");
	cleanup(&g);
	if (finish(&g, rc == 0) != 0)
		return 1;
	return 0;
bad:
	pv_sel_free(&g.sel);
	return 2;
}
