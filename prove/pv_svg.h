/* SPDX-License-Identifier: MIT */
/* pv_svg.h: what the files of prove svg share: sizes, the picture's state,
 * and their functions. */
#ifndef GRM_PV_SVG_H
#define GRM_PV_SVG_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pv.h"

#define W_DEFAULT	1200

#define W_MIN		400

#define W_MAX		100000

#define MERGE_PX	0.5	/* narrower blocks and closer ticks merge */

#define LAYERS		8	/* depths painted in order; deeper ones share
				   the last */

#define TITLE_MAX	512	/* bytes kept of the title of a tick */

#define NAME_CUT	200	/* characters kept of a block name */

#define LEGEND_CUT	32	/* characters of a name shown in the legend */

#define LEGEND_MAX	64	/* blocks listed in the legend */

#define LABEL_CUT	32	/* characters of a process name in a label */

#define NPAL		12

#define CHAR_W		6.7	/* width of a character at 11 px, roughly */

#define MARGIN		12.0

#define TITLE_W		9.0	/* same, in the title's 15 px bold */

#define ROW_H		30.0

#define BAR_H		16.0

#define PROC_GAP	8.0

#define NODE_GAP	20.0

/* A string of XML text being built in a buffer of fixed size. */
struct txt {
	char		*b;
	size_t		len;
	size_t		cap;	/* room is kept for an ellipsis and the NUL */
	size_t		nch;	/* characters, roughly */
	int		cut;
};

struct frame {
	int64_t		bid;		/* block id, or a BEE range's name id */
	int		range;
	uint64_t	start;
};

/* A block, or a run of merged blocks, ticks or losses, not drawn yet. */
struct pend {
	double		x0;
	double		x1;
	uint64_t	t0;
	uint64_t	t1;
	uint64_t	sum;	/* ns the blocks took, or events lost */
	uint64_t	n;	/* how many; 0: nothing pending */
	int64_t		bid;
	int		range;
	int		mixed;	/* blocks of several ids */
};

struct thr {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	seq;		/* order of first record */
	double		y;		/* its line */
	struct frame	*st;		/* open blocks */
	struct pend	*pd;		/* per depth */
	size_t		depth;
	size_t		cap;
	struct pend	tk;		/* user events */
	struct pend	ls;		/* losses */
	char		*label;		/* escaped */
	char		title[TITLE_MAX];	/* of the first event of tk */
};

/* A block id, or a BEE range (bid: the id of its name in names). */
struct blk {
	int64_t		bid;
	int		range;
	int		used;		/* has a begin */
	int		col;
	char		*name;		/* escaped; NULL: none */
	char		*shown;		/* escaped, for the legend */
	size_t		nch;		/* characters of shown */
};

/* A node's collection phase (global scheme): its processes stopped. */
struct phase {
	uint32_t	node;
	int64_t		round;
	uint64_t	t0;
	uint64_t	t1;		/* 0: no end seen */
	uint64_t	depth;		/* begins not ended (LMs of the node) */
};

struct svg {
	const char	*path;
	const char	*opath;
	FILE		*out;
	FILE		*layer[LAYERS + 1];	/* [LAYERS]: user events */
	off_t		in_off;		/* where standard input starts */
	int		width;
	double		left;		/* x of the time origin */
	double		plot;		/* px of the time axis */
	double		axis_y;		/* the time axis */
	double		rows_top;
	double		rows_end;
	double		height;
	uint64_t	records;
	uint64_t	first;
	uint64_t	last;
	uint64_t	span;
	uint64_t	losses;
	struct thr	*th;
	size_t		nth;
	size_t		cth;
	struct hmap	thx;
	struct blk	*bk;
	size_t		nbk;
	size_t		cbk;
	struct hmap	bkx;
	struct pv_strs	names;		/* of BEE ranges */
	struct pv_sym	sym;		/* function names */
	struct pv_msgs	msgs;
	size_t		ncontrols;	/* #CONTROL lines */
	struct phase	*ph;
	size_t		nph;
	size_t		cph;
	size_t		nprocs;
	size_t		nnodes;
	size_t		nused;
	struct pend	oloss;		/* losses of threads with no line */
	const char	*what;		/* of an error: "out of memory", ... */
	char		head[NAME_CUT * 6 + 32];	/* title, escaped */
	char		info[320];
	int		eno;
	/* -t and -r: the records drawn; seen: those read (drawn or not) */
	struct pv_sel	sel;
	uint64_t	seen;
};

/* ---- pv_svg.c: the command, the passes over the trace, the layout ---- */

struct thr *svg_thr_find(const struct svg *g, uint32_t node, uint32_t pid,
			 uint32_t tid);
struct blk *svg_blk_find(const struct svg *g, int64_t bid, int range);
/* An unnamed temporary file; NULL (g->what, g->eno say why) on error. */
FILE *svg_tmp_file(struct svg *g);
/* The x of time ts, and the height of a bar at a depth. */
double svg_xpos(const struct svg *g, uint64_t ts);
double svg_bar_h(size_t depth);

/* ---- pv_svg_txt.c: text ---- */

void svg_txt_init(struct txt *t, char *b, size_t cap);
void svg_txt_done(struct txt *t);
void svg_txt_printf(struct txt *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void svg_txt_esc(struct txt *t, const char *s, size_t n, size_t max);
const char *svg_dur(char *buf, size_t n, uint64_t ns);
const char *svg_sdur(char *buf, size_t n, uint64_t from, uint64_t to);
const char *svg_at(char *buf, size_t n, const struct svg *g, uint64_t ts);

/* ---- pv_svg_draw.c: the marks; each returns 0, or -1 (g->what) ---- */

int svg_push(struct thr *t, const struct pv_mark *m, uint64_t ts);
int svg_block_end(struct svg *g, struct thr *t, const struct pv_mark *m,
		  uint64_t ts);
int svg_block_done(struct svg *g, struct thr *t, size_t d,
		   const struct frame *f, uint64_t t1, int open);
int svg_flush_blocks(struct svg *g, struct thr *t, size_t d);
int svg_tick(struct svg *g, struct thr *t, const struct grmtrace_ev *ev);
int svg_flush_ticks(struct svg *g, struct thr *t);
void svg_add_loss(struct svg *g, const struct grmtrace_ev *ev);
int svg_draw_loss(struct svg *g, const struct thr *t, struct pend *p);
void svg_draw_control(struct svg *g, const struct grmtrace_ev *ev);
/* Notes a collection phase's begin or end (pass 1). */
int svg_phase_mark(struct svg *g, const struct grmtrace_ev *ev,
		   const struct pv_mark *m);
/* Shades every collection phase over its node's lines. */
void svg_phases(struct svg *g);
void svg_messages(struct svg *g);
/* Messages beyond one per MSG_PX pixels of the time axis are drawn as
 * prove serve draws them: bundles of arrows from its index's level of
 * detail (pv_idx_arrows) at columns of BUNDLE_PX pixels, one line for
 * those that would overlap.  Returns
 * 1 if it drew them, 0 if there are few enough to draw each (or the trace
 * is standard input, which cannot be read again), -1 on an error (in
 * g->what). */
#define MSG_PX	2
#define BUNDLE_PX	8	/* a bundle's columns, in pixels */
int svg_bundles(struct svg *g);
int svg_layers_out(struct svg *g);

/* ---- pv_svg_pic.c: the picture around the marks ---- */

double svg_wrap(const struct svg *g, const char *cls, double y, double lh,
		double cw, const char *s, int draw_it);
void svg_header(struct svg *g);

#endif /* GRM_PV_SVG_H */
