/* pv_svg.c: prove svg, the PROVE space-time diagram of a trace as SVG. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "pv.h"

/*
 * The trace is read twice: once to learn the threads, the time span and
 * the blocks (so that the picture's size and scale are known), once to
 * draw.  Drawing keeps per thread only its stack of open blocks and, per
 * depth, the run of narrow blocks being merged, so memory does not grow
 * with the trace.  Deeper blocks must be painted over their parents, but a
 * child ends (and is drawn) before its parent: each depth is written to a
 * temporary file of its own and the files are copied out in order.  If the
 * trace is standard input and cannot be read twice, it is first copied to
 * a temporary file.
 */

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

static const char *const palette[NPAL] = {
	"#3a6fb0", "#e8802a", "#3d9a4a", "#9b4fa3", "#d4b020", "#2fa6a8",
	"#d0688a", "#8a6642", "#86b43c", "#5a5f9c", "#e0a890", "#7fb8e0",
};

/* A string of XML text being built in a buffer of fixed size. */
struct txt {
	char		*b;
	size_t		len;
	size_t		cap;	/* room is kept for an ellipsis and the NUL */
	size_t		nch;	/* characters, roughly */
	int		cut;
};

/* An open-addressing index from two 64-bit keys to an array index + 1. */
struct ixs {
	uint64_t	k1;
	uint64_t	k2;
	size_t		v;
};

struct ix {
	struct ixs	*s;
	size_t		cap;
	size_t		n;
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
	struct ix	thx;
	struct blk	*bk;
	size_t		nbk;
	size_t		cbk;
	struct ix	bkx;
	struct pv_strs	names;		/* of BEE ranges */
	struct pv_msgs	msgs;
	size_t		ncontrols;	/* #CONTROL lines */
	size_t		nprocs;
	size_t		nnodes;
	size_t		nused;
	struct pend	oloss;		/* losses of threads with no line */
	const char	*what;		/* of an error: "out of memory", ... */
	char		head[NAME_CUT * 6 + 32];	/* title, escaped */
	char		info[320];
	int		eno;
};

/* ---- text ---- */

static void
txt_init(struct txt *t, char *b, size_t cap)
{
	t->b = b;
	t->cap = cap;
	t->len = 0;
	t->nch = 0;
	t->cut = 0;
	b[0] = '\0';
}

static int
txt_put(struct txt *t, const char *s, size_t n, size_t nch)
{
	if (t->cut || t->len + n + 4 > t->cap) {
		t->cut = 1;
		return -1;
	}
	memcpy(t->b + t->len, s, n);
	t->len += n;
	t->nch += nch;
	t->b[t->len] = '\0';
	return 0;
}

/* Ends t, with an ellipsis if something did not fit. */
static void
txt_done(struct txt *t)
{
	if (t->cut) {
		memcpy(t->b + t->len, "\xe2\x80\xa6", 4);
		t->len += 3;
		t->nch++;
	}
}

static void txt_printf(struct txt *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends text that needs no escaping. */
static void
txt_printf(struct txt *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	txt_put(t, buf, (size_t)n, (size_t)n);
}

/* Length of the UTF-8 sequence of an XML character at s, or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t k, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return k;
}

/*
 * Appends user data s[0..n) escaped for XML text and attribute values, at
 * most max characters (then an ellipsis): & < > " ' as references, bytes
 * below 0x20 and 0x7f dropped, bytes that are not UTF-8 as U+FFFD.
 */
static void
txt_esc(struct txt *t, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *e = p + n;
	const char *rep;
	size_t k, shown = 0;

	while (p < e) {
		k = 1;
		switch (*p) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				p++;
				continue;
			}
			rep = NULL;
			if (*p >= 0x80 &&
			    (k = utf8_len(p, (size_t)(e - p))) == 0) {
				rep = "\xef\xbf\xbd";
				k = 1;
			}
		}
		if (shown == max) {
			txt_put(t, "\xe2\x80\xa6", 3, 1);
			return;
		}
		if (rep != NULL ? txt_put(t, rep, strlen(rep), 1) :
		    txt_put(t, (const char *)p, k, 1))
			return;
		shown++;
		p += k;
	}
}

/* A duration, 4 significant digits and a unit. */
static const char *
dur(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.4g \xc2\xb5s", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.4g ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.4g s", (double)ns / 1e9);
	return buf;
}

/* A time since the first record, in seconds to the ns. */
static const char *
at(char *buf, size_t n, const struct svg *g, uint64_t ts)
{
	uint64_t d = ts > g->first ? ts - g->first : 0;

	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64 " s", d / 1000000000,
	    d % 1000000000);
	return buf;
}

/* ---- index ---- */

static size_t
ix_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ b;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (size_t)x;
}

static struct ixs *
ix_probe(const struct ix *m, uint64_t k1, uint64_t k2)
{
	size_t j = ix_hash(k1, k2) & (m->cap - 1);

	while (m->s[j].v != 0 && (m->s[j].k1 != k1 || m->s[j].k2 != k2))
		j = (j + 1) & (m->cap - 1);
	return &m->s[j];
}

/* The value of (k1, k2), 0 if none. */
static size_t
ix_find(const struct ix *m, uint64_t k1, uint64_t k2)
{
	return m->cap == 0 ? 0 : ix_probe(m, k1, k2)->v;
}

/* Gives (k1, k2) the value v if it has none; returns its value, 0 if out
 * of memory. */
static size_t
ix_add(struct ix *m, uint64_t k1, uint64_t k2, size_t v)
{
	struct ixs *old = m->s, *s;
	size_t i, ocap = m->cap;

	if ((m->n + 1) * 2 > m->cap) {
		m->cap = ocap == 0 ? 64 : ocap * 2;
		if ((m->s = calloc(m->cap, sizeof *m->s)) == NULL) {
			m->s = old;
			m->cap = ocap;
			return 0;
		}
		for (i = 0; i < ocap; i++)
			if (old[i].v != 0)
				*ix_probe(m, old[i].k1, old[i].k2) = old[i];
		free(old);
	}
	s = ix_probe(m, k1, k2);
	if (s->v == 0) {
		s->k1 = k1;
		s->k2 = k2;
		s->v = v;
		m->n++;
	}
	return s->v;
}

static void
ix_clear(struct ix *m)
{
	free(m->s);
	memset(m, 0, sizeof *m);
}

/* ---- threads and blocks ---- */

static int
oom(struct svg *g)
{
	g->what = "out of memory";
	g->eno = 0;
	return -1;
}

static struct thr *
thr_find(const struct svg *g, uint32_t node, uint32_t pid, uint32_t tid)
{
	size_t v = ix_find(&g->thx, (uint64_t)node << 32 | pid, tid);

	return v == 0 ? NULL : &g->th[v - 1];
}

static struct thr *
thr_add(struct svg *g, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct thr *t;
	size_t v, n;

	if (g->nth == g->cth) {
		n = g->cth == 0 ? 16 : g->cth * 2;
		if ((t = realloc(g->th, n * sizeof *t)) == NULL)
			return NULL;
		g->th = t;
		g->cth = n;
	}
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

static struct blk *
blk_find(const struct svg *g, int64_t bid, int range)
{
	size_t v = ix_find(&g->bkx, (uint64_t)bid, (uint64_t)range);

	return v == 0 ? NULL : &g->bk[v - 1];
}

static struct blk *
blk_add(struct svg *g, int64_t bid, int range)
{
	struct blk *b;
	size_t v, n;

	if (g->nbk == g->cbk) {
		n = g->cbk == 0 ? 16 : g->cbk * 2;
		if ((b = realloc(g->bk, n * sizeof *b)) == NULL)
			return NULL;
		g->bk = b;
		g->cbk = n;
	}
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
	txt_init(&t, name, cap);
	txt_esc(&t, s, n, NAME_CUT);
	txt_done(&t);
	txt_init(&t, shown, scap);
	txt_esc(&t, s, n, LEGEND_CUT);
	txt_done(&t);
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
static FILE *
tmp_file(struct svg *g)
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

/* Makes standard input a file that can be read again from in_off. */
static int
stdin_seekable(struct svg *g)
{
	char buf[65536];
	struct stat sb;
	ssize_t n;
	FILE *f;

	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (g->in_off = lseek(STDIN_FILENO, 0, SEEK_CUR)) >= 0)
		return 0;
	if ((f = tmp_file(g)) == NULL)
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
static struct tape_r *
reopen(struct svg *g)
{
	if (strcmp(g->path, "-") == 0 &&
	    lseek(STDIN_FILENO, g->in_off, SEEK_SET) < 0) {
		fprintf(stderr, "prove: -: %s\n", strerror(errno));
		return NULL;
	}
	return pv_open(g->path);
}

/* What the survey keeps of a record: the blocks and ranges used and their
 * names, the processes' ranks and names, the messages. */
static int
survey_mark(struct svg *g, const struct tape_ev *ev, const struct pv_mark *m)
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
 * messages (matched at the end).  Returns 0, -1 on a malformed trace
 * (reported), -2 on another error (in g->what). */
static int
survey(struct svg *g)
{
	struct pv_mark m;
	struct tape_ev ev;
	struct tape_r *r;
	int rc;

	if ((r = reopen(g)) == NULL)
		return -1;
	tape_rwant(r, TAPE_WANT(TAPE_PROC) | TAPE_WANT(TAPE_CONTROL));
	while ((rc = tape_next(r, &ev)) == 1) {
		g->ncontrols += ev.kind == TAPE_CONTROL;
		if (ev.kind != TAPE_RECORD) {
			if (pv_msgs_ev(&g->msgs, &ev, NULL) != 0) {
				rc = oom(g);
				break;
			}
			continue;
		}
		if (g->records == 0 || ev.ts < g->first)
			g->first = ev.ts;
		if (g->records == 0 || ev.ts > g->last)
			g->last = ev.ts;
		g->records++;
		if (thr_add(g, ev.node, ev.pid, ev.tid) == NULL ||
		    pv_mark(&g->names, &ev, &m) != 0 ||
		    survey_mark(g, &ev, &m) != 0) {
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
	g->losses = tape_rlosses(r);
	tape_rclose(r);
	return rc == 0 ? 0 : -2;
}

/* ---- layout ---- */

static double
xpos(const struct svg *g, uint64_t ts)
{
	uint64_t d = ts > g->first ? ts - g->first : 0;

	if (d > g->span)
		d = g->span;
	return g->left + (double)d * g->plot / (double)g->span;
}

static double
bar_h(size_t depth)
{
	double h = BAR_H;

	for (; depth > 0 && h > 2.5; depth--)
		h *= 0.7;
	return h < 2.5 ? 2.5 : h;
}

/*
 * Text s (escaped already) of class cls at baseline y, in lines of lh px
 * that fit the picture's width with characters of about cw px; breaks at
 * spaces only.  Draws it if draw_it.  Returns the baseline after it.
 */
static double
wrap(const struct svg *g, const char *cls, double y, double lh, double cw,
     const char *s, int draw_it)
{
	size_t max = (size_t)(((double)g->width - 2 * MARGIN) / cw);
	size_t i, n, ch, brk, sp;

	while (*s != '\0') {
		n = strlen(s);
		brk = n;
		for (i = ch = sp = 0; i < n; i++) {
			if (s[i] == ' ')
				sp = i;
			if (((unsigned char)s[i] & 0xc0) != 0x80)
				ch++;
			if (ch > max && sp > 0) {
				brk = sp;
				break;
			}
		}
		if (draw_it)
			fprintf(g->out, "<text class=\"%s\" x=\"%.2f\" "
			    "y=\"%.2f\">%.*s</text>\n", cls, MARGIN, y, (int)brk,
			    s);
		y += lh;
		for (s += brk; *s == ' '; s++)
			continue;
	}
	return y;
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
	txt_init(&s, t->label, cap);
	if (p != NULL && p->has_rank) {
		txt_esc(&s, p->name, p->name_len, LABEL_CUT);
		txt_printf(&s, "%srank %" PRId64 " tid %" PRIu32,
		    s.len > 0 ? " " : "", p->rank, t->tid);
	} else if (p != NULL && p->prog != NULL && p->prog_len > 0) {
		txt_esc(&s, p->prog, p->prog_len, LABEL_CUT);
		txt_printf(&s, " pid %" PRIu32 " tid %" PRIu32, t->pid,
		    t->tid);
	} else
		txt_printf(&s, "node %" PRIu32 " pid %" PRIu32 " tid %" PRIu32,
		    t->node, t->pid, t->tid);
	txt_done(&s);
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
	ix_clear(&g->thx);
	ix_clear(&g->bkx);
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

	txt_init(&s, g->head, sizeof g->head);
	txt_printf(&s, "grm trace ");
	txt_esc(&s, g->path, strlen(g->path), NAME_CUT);
	txt_done(&s);
	n = (size_t)snprintf(g->info, sizeof g->info, "%zu thread%s in %zu "
	    "process%s on %zu node%s, %" PRIu64 " records over %s; %" PRIu64
	    " events lost", g->nth, g->nth == 1 ? "" : "s", g->nprocs,
	    g->nprocs == 1 ? "" : "es", g->nnodes, g->nnodes == 1 ? "" : "s",
	    g->records, dur(d1, sizeof d1, g->last - g->first), g->losses);
	if (g->msgs.nsnd + g->msgs.nrcv > 0 && n < sizeof g->info)
		n += (size_t)snprintf(g->info + n, sizeof g->info - n, "; %"
		    PRIu64 " messages matched, %zu not matched",
		    g->msgs.matched, g->msgs.nsnd + g->msgs.nrcv -
		    2 * (size_t)g->msgs.matched);
	if (n < sizeof g->info)
		snprintf(g->info + n, sizeof g->info - n, ". Time since the "
		    "first record.");
	g->axis_y = wrap(g, "title", 22, 18, TITLE_W, g->head, 0);
	g->axis_y = wrap(g, "info", g->axis_y, 14, CHAR_W, g->info, 0) + 12;
	g->rows_top = g->axis_y + 14;
	for (i = 0; i < g->nth; i++)
		g->th[i].y += g->rows_top;
	g->rows_end = g->rows_top + (g->nth == 0 ? ROW_H : y);
	return 0;
}

/* ---- drawing ---- */

static FILE *
layer(struct svg *g, size_t i)
{
	if (i == 0)
		return g->out;
	if (g->layer[i] == NULL)
		g->layer[i] = tmp_file(g);
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
	const struct blk *b = blk_find(g, p->bid, p->range);
	char name[48], d1[32], a1[32], a2[32];
	const char *nm = b != NULL ? b->name : NULL;
	double h = bar_h(d), w = p->x1 - p->x0;
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
		fprintf(f, "%s: %s from %s%s", nm, dur(d1, sizeof d1, p->sum),
		    at(a1, sizeof a1, g, p->t0),
		    open ? ", still open at the end of the trace" : "");
	else if (!p->mixed)
		fprintf(f, "%" PRIu64 " \xc3\x97 %s, merged: %s busy from %s "
		    "to %s", p->n, nm, dur(d1, sizeof d1, p->sum),
		    at(a1, sizeof a1, g, p->t0), at(a2, sizeof a2, g, p->t1));
	else
		fprintf(f, "%" PRIu64 " blocks of several kinds, merged: %s "
		    "busy from %s to %s", p->n, dur(d1, sizeof d1, p->sum),
		    at(a1, sizeof a1, g, p->t0), at(a2, sizeof a2, g, p->t1));
	fprintf(f, "</title></rect>\n");
	return 0;
}

static int
flush_blocks(struct svg *g, struct thr *t, size_t d)
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
static int
block_done(struct svg *g, struct thr *t, size_t d, const struct frame *f,
	   uint64_t t1, int open)
{
	struct pend *p = &t->pd[d], one;
	uint64_t t0 = f->start, ns = t1 > t0 ? t1 - t0 : 0;

	one = (struct pend){ xpos(g, t0), xpos(g, t1), t0, t1, ns, 1,
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
		if (flush_blocks(g, t, d) != 0)
			return -1;
		*p = one;
		return 0;
	}
	if (flush_blocks(g, t, d) != 0)
		return -1;
	return draw_blocks(g, t, d, &one, open);
}

static int
push(struct thr *t, const struct pv_mark *m, uint64_t ts)
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
static int
block_end(struct svg *g, struct thr *t, const struct pv_mark *m, uint64_t ts)
{
	struct frame f;
	size_t i;

	for (i = t->depth; i > 0 && (t->st[i - 1].bid != m->id ||
	    t->st[i - 1].range != m->range); i--)
		continue;
	while (i > 0 && t->depth >= i) {
		f = t->st[--t->depth];
		if (block_done(g, t, t->depth, &f, ts, 0) != 0)
			return -1;
	}
	return 0;
}

static int
flush_ticks(struct svg *g, struct thr *t)
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
		    "first: ", p->n, at(a1, sizeof a1, g, p->t0),
		    at(a2, sizeof a2, g, p->t1));
	fprintf(f, "%s</title></rect>\n", t->title);
	p->n = 0;
	return 0;
}

/* A user event: a tick above the thread's line, or merged into the run
 * of ticks before it. */
static int
tick(struct svg *g, struct thr *t, const struct tape_ev *ev)
{
	const struct tape_def *def = ev->def;
	struct pend *p = &t->tk;
	double x = xpos(g, ev->ts);
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
	if (flush_ticks(g, t) != 0)
		return -1;
	*p = (struct pend){ x, x, ev->ts, ev->ts, 0, 1, 0, 0, 0 };
	txt_init(&s, t->title, sizeof t->title);
	txt_printf(&s, "eid %" PRId32, ev->eid);
	dsc = def->dsc[0] != '\0' ? def->dsc : def->format;
	if (dsc[0] != '\0') {
		txt_printf(&s, " (");
		txt_esc(&s, dsc, strlen(dsc), NAME_CUT);
		txt_printf(&s, ")");
	}
	txt_printf(&s, " at %s", at(a1, sizeof a1, g, ev->ts));
	for (i = 0; i < ev->n; i++) {
		txt_printf(&s, i == 0 ? ": " : ", ");
		switch (ev->f[i].kind) {
		case REC_K_INT:
			txt_printf(&s, "%" PRId64, ev->f[i].v.i);
			break;
		case REC_K_UINT:
			txt_printf(&s, def->fmt.va[i] == REC_VA_VOIDP ?
			    "0x%" PRIx64 : "%" PRIu64, ev->f[i].v.u);
			break;
		case REC_K_DOUBLE:
			txt_printf(&s, "%.10g", ev->f[i].v.d);
			break;
		default:
			txt_printf(&s, "&quot;");
			txt_esc(&s, ev->f[i].v.s.p, ev->f[i].v.s.len,
			    TITLE_MAX);
			txt_printf(&s, "&quot;");
		}
	}
	txt_done(&s);
	return 0;
}

/* Pass 2: the blocks, BEE ranges and user events. */
static int
draw(struct svg *g)
{
	struct pv_mark m;
	struct tape_ev ev;
	struct tape_r *r;
	struct thr *t;
	struct frame f;
	uint64_t n;
	size_t i, d;
	int rc = 0;

	if ((r = reopen(g)) == NULL)
		return -1;
	/* Only the records the survey saw, should the file have grown. */
	for (n = 0; n < g->records && (rc = tape_next(r, &ev)) == 1; n++) {
		if ((t = thr_find(g, ev.node, ev.pid, ev.tid)) == NULL)
			continue;
		if (pv_mark(&g->names, &ev, &m) != 0)
			rc = oom(g);
		else if (m.kind == PV_BEGIN)
			rc = push(t, &m, ev.ts) == 0 ? 0 : oom(g);
		else if (m.kind == PV_END)
			rc = block_end(g, t, &m, ev.ts);
		else if (ev.eid >= 0)
			rc = tick(g, t, &ev);
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
	tape_rclose(r);
	if (rc != 0 && rc != 1)
		return -2;
	for (i = 0; i < g->nth; i++) {
		t = &g->th[i];
		while (t->depth > 0) {
			f = t->st[--t->depth];
			if (block_done(g, t, t->depth, &f, g->last, 1) != 0)
				return -2;
		}
		for (d = 0; d < t->cap; d++)
			if (flush_blocks(g, t, d) != 0)
				return -2;
		if (flush_ticks(g, t) != 0)
			return -2;
	}
	return 0;
}

/* ---- losses ---- */

static int
draw_loss(struct svg *g, const struct thr *t, struct pend *p)
{
	double x = (p->x0 + p->x1) / 2;
	double y = t != NULL ? t->y - BAR_H / 2 - 1 : g->axis_y;
	char a1[32], a2[32];

	if (p->n == 0)
		return 0;
	fprintf(g->out, "<path class=\"loss\" d=\"M%.2f %.2fh10l-5 9z\">"
	    "<title>%" PRIu64 " events lost", x - 5, y - 9, p->sum);
	if (p->n == 1)
		fprintf(g->out, " just before %s", at(a1, sizeof a1, g, p->t0));
	else
		fprintf(g->out, " (%" PRIu64 " losses) from %s to %s", p->n,
		    at(a1, sizeof a1, g, p->t0), at(a2, sizeof a2, g, p->t1));
	if (t == NULL)
		fprintf(g->out, " by threads with no records");
	fprintf(g->out, "</title></path>\n");
	p->n = 0;
	return 0;
}

static void
add_loss(struct svg *g, const struct tape_ev *ev)
{
	struct thr *t = thr_find(g, ev->node, ev->pid, ev->tid);
	struct pend *p = t != NULL ? &t->ls : &g->oloss;
	double x = xpos(g, ev->ts);

	if (p->n > 0 && x >= p->x0 && x - p->x1 < MERGE_PX) {
		p->x1 = x;
		p->t1 = ev->ts;
		p->sum = ev->count > UINT64_MAX - p->sum ? UINT64_MAX :
		    p->sum + ev->count;
		p->n++;
		return;
	}
	draw_loss(g, t, p);
	*p = (struct pend){ x, x, ev->ts, ev->ts, ev->count, 1, 0, 0, 0 };
}

/* A control command: a dashed line across the threads. */
static void
draw_control(struct svg *g, const struct tape_ev *ev)
{
	char cmd[NAME_CUT * 6 + 8], a1[32];
	double x = xpos(g, ev->ts);
	struct txt s;

	txt_init(&s, cmd, sizeof cmd);
	txt_esc(&s, ev->str, ev->str_len, NAME_CUT);
	txt_done(&s);
	fprintf(g->out, "<line class=\"ctl\" x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\"><title>control command &quot;%s&quot; "
	    "in effect from %s</title></line>\n", x, g->rows_top, x,
	    g->rows_end, cmd, at(a1, sizeof a1, g, ev->ts));
}

/*
 * Pass 3, only if the trace has losses or control commands: they are
 * drawn on top of everything, the losses merged like user events.  Lines
 * after a record the survey did not see (the file grew) are not read.
 */
static int
marks(struct svg *g)
{
	struct tape_ev ev;
	struct tape_r *r;
	uint64_t n = 0;
	size_t i;
	int rc;

	if (g->losses == 0 && g->ncontrols == 0)
		return 0;
	if ((r = reopen(g)) == NULL)
		return -1;
	tape_rwant(r, TAPE_WANT(TAPE_LOSS) | TAPE_WANT(TAPE_CONTROL));
	while ((rc = tape_next(r, &ev)) == 1) {
		if (ev.kind == TAPE_LOSS)
			add_loss(g, &ev);
		else if (ev.kind == TAPE_CONTROL)
			draw_control(g, &ev);
		else if (++n > g->records)
			break;
	}
	if (rc == -1) {
		pv_fail(g->path, r);
		return -1;
	}
	tape_rclose(r);
	for (i = 0; i < g->nth; i++)
		draw_loss(g, &g->th[i], &g->th[i].ls);
	draw_loss(g, NULL, &g->oloss);
	return 0;
}

/* ---- messages ---- */

/* A signed duration. */
static const char *
sdur(char *buf, size_t n, uint64_t from, uint64_t to)
{
	if (to >= from)
		return dur(buf, n, to - from);
	buf[0] = '-';
	dur(buf + 1, n - 1, from - to);
	return buf;
}

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
	double x = xpos(g, m->ts), y = t->y;
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
	    send ? "sent" : "received", at(a1, sizeof a1, g, m->ts),
	    send ? "receive" : "send");
}

/* An arrow from each matched send to its receive, a stub for each
 * message not matched; on top of the blocks and user events. */
static void
messages(struct svg *g)
{
	const struct pv_msgs *ms = &g->msgs;
	const struct pv_msg *s, *r;
	const struct thr *ts, *tr;
	char a1[32], a2[32], d1[32];
	size_t i;

	for (i = 0; i < ms->nsnd; i++) {
		s = &ms->snd[i];
		if ((ts = thr_find(g, s->node, s->pid, s->tid)) == NULL)
			continue;
		if (s->match == 0) {
			draw_stub(g, ts, s, 1);
			continue;
		}
		r = &ms->rcv[s->match - 1];
		if ((tr = thr_find(g, r->node, r->pid, r->tid)) == NULL)
			continue;
		fprintf(g->out, "<line class=\"msg\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\" marker-end=\"url(#arrow)\">"
		    "<title>message from rank %" PRId64 " to rank %" PRId64
		    ", tag %" PRId64 ", %" PRId64 " bytes", xpos(g, s->ts),
		    ts->y, xpos(g, r->ts), tr->y, s->rank, r->rank, s->tag,
		    s->bytes);
		if (r->bytes != s->bytes)
			fprintf(g->out, " (%" PRId64 " received)", r->bytes);
		fprintf(g->out, ": sent at %s, received at %s, latency %s"
		    "</title></line>\n", at(a1, sizeof a1, g, s->ts),
		    at(a2, sizeof a2, g, r->ts),
		    sdur(d1, sizeof d1, s->ts, r->ts));
	}
	for (i = 0; i < ms->nrcv; i++) {
		r = &ms->rcv[i];
		if (r->match == 0 &&
		    (tr = thr_find(g, r->node, r->pid, r->tid)) != NULL)
			draw_stub(g, tr, r, 0);
	}
}

/* ---- the picture ---- */

/* The ns between ticks of the time scale: 1, 2 or 5 times a power of 10,
 * about every 110 px. */
static uint64_t
scale_step(const struct svg *g)
{
	double want = (double)g->span * 110 / g->plot;
	static const unsigned k[3] = { 1, 2, 5 };
	uint64_t m;
	int i;

	for (m = 1; m <= UINT64_MAX / 50; m *= 10)
		for (i = 0; i < 3; i++)
			if ((double)(m * k[i]) >= want)
				return m * k[i];
	return m;
}

static void
scale(struct svg *g)
{
	static const struct {
		uint64_t	ns;
		const char	*name;
	} units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "\xc2\xb5s" },
		{ 1, "ns" },
	};
	uint64_t step = scale_step(g), v;
	size_t u = 0;
	double x;

	while (u < 3 && step * 10 < units[u].ns)
		u++;
	fprintf(g->out, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
	    "x2=\"%.2f\" y2=\"%.2f\"/>\n", g->left, g->axis_y, g->left + g->plot,
	    g->axis_y);
	for (v = 0; v <= g->span; v += step) {
		x = xpos(g, g->first + v);
		fprintf(g->out, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, g->axis_y, x, g->rows_end);
		fprintf(g->out, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, g->axis_y - 5, x, g->axis_y);
		if (v == 0)
			fprintf(g->out, "<text class=\"axis\" x=\"%.2f\" "
			    "y=\"%.2f\">0</text>\n", x, g->axis_y - 8);
		else
			fprintf(g->out, "<text class=\"axis\" x=\"%.2f\" "
			    "y=\"%.2f\">%.10g %s</text>\n", x, g->axis_y - 8,
			    (double)v / (double)units[u].ns, units[u].name);
		if (v > UINT64_MAX - step)
			break;
	}
}

/* The thread lines, with a band behind every other process. */
static void
rows(struct svg *g)
{
	size_t i, j, band = 0;
	const struct thr *t;

	for (i = 0; i < g->nth; i = j) {
		for (j = i + 1; j < g->nth && g->th[j].node == g->th[i].node &&
		    g->th[j].pid == g->th[i].pid; j++)
			continue;
		if (i > 0 && g->th[i].node != g->th[i - 1].node)
			fprintf(g->out, "<line class=\"node\" x1=\"0\" "
			    "y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>\n",
			    g->th[i].y - ROW_H / 2 - NODE_GAP / 2, g->width,
			    g->th[i].y - ROW_H / 2 - NODE_GAP / 2);
		if (band++ % 2 == 0)
			fprintf(g->out, "<rect class=\"band\" x=\"0\" "
			    "y=\"%.2f\" width=\"%d\" height=\"%.2f\"/>\n",
			    g->th[i].y - ROW_H / 2 - 2, g->width,
			    g->th[j - 1].y - g->th[i].y + ROW_H + 4);
	}
	for (i = 0; i < g->nth; i++) {
		t = &g->th[i];
		fprintf(g->out, "<line class=\"thr\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", g->left, t->y,
		    g->left + g->plot, t->y);
		fprintf(g->out, "<text class=\"thread\" x=\"%.2f\" y=\"%.2f\">"
		    "%s<title>node %" PRIu32 " pid %" PRIu32 " tid %" PRIu32
		    "</title></text>\n", g->left - MARGIN, t->y + 4, t->label,
		    t->node, t->pid, t->tid);
	}
	if (g->nth == 0)
		fprintf(g->out, "<text x=\"%.2f\" y=\"%.2f\">no records"
		    "</text>\n", g->left, g->rows_top + ROW_H / 2);
}

/* The legend's entries after the blocks. */
enum { L_MIXED, L_EVENT, L_LOSS, L_MSG, L_STUB, L_CTL, L_MORE, L_EXTRA };

/* Whether extra entry k of the legend is shown. */
static int
shown_extra(const struct svg *g, size_t k, size_t shown)
{
	size_t unmatched = g->msgs.nsnd + g->msgs.nrcv -
	    2 * (size_t)g->msgs.matched;

	switch (k) {
	case L_LOSS:
		return g->losses > 0;
	case L_MSG:
		return g->msgs.matched > 0;
	case L_STUB:
		return unmatched > 0;
	case L_CTL:
		return g->ncontrols > 0;
	case L_MORE:
		return shown > LEGEND_MAX;
	default:
		return 1;
	}
}

/* The colours of the blocks and the other marks, in columns. */
static double
legend(struct svg *g, int draw_it)
{
	static const char *const extra[L_EXTRA] = {
		"merged blocks of several kinds", "user event(s)",
		"events lost", "message, from send to receive",
		"message not matched", "control command", "more blocks",
	};
	double colw, y0 = g->rows_end + 30, x, y;
	size_t i, k, n = 0, cols, chars = 30, shown = 0;
	char name[48], note[200];

	for (i = 0; i < g->nbk; i++)
		if (g->bk[i].used && shown++ < LEGEND_MAX &&
		    g->bk[i].name != NULL && g->bk[i].nch > chars)
			chars = g->bk[i].nch;
	colw = 28 + (double)chars * CHAR_W;
	cols = (size_t)(((double)g->width - 2 * MARGIN) / colw);
	if (cols == 0)
		cols = 1;
	if (draw_it)
		fprintf(g->out, "<text class=\"head\" x=\"%.2f\" y=\"%.2f\">"
		    "Legend</text>\n", MARGIN, y0);
	y0 += 20;
	for (k = 0; k < g->nbk + L_EXTRA; k++) {
		if (k < g->nbk ? !g->bk[k].used || n >= LEGEND_MAX :
		    !shown_extra(g, k - g->nbk, shown))
			continue;
		x = MARGIN + (double)(n % cols) * colw;
		y = y0 + (double)(n / cols) * 20;
		n++;
		if (!draw_it)
			continue;
		if (k < g->nbk) {
			snprintf(name, sizeof name, "block %" PRId64,
			    g->bk[k].bid);
			fprintf(g->out, "<rect class=\"b s c%d\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"18\" height=\"12\"/>\n"
			    "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">%s"
			    "</text>\n", g->bk[k].col, x, y - 10, x + 24, y,
			    g->bk[k].shown != NULL ? g->bk[k].shown : name);
			continue;
		}
		switch (k - g->nbk) {
		case L_MIXED:
			fprintf(g->out, "<rect class=\"m s busy\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"18\" height=\"12\"/>\n", x,
			    y - 10);
			break;
		case L_EVENT:
			fprintf(g->out, "<rect class=\"ev\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"1\" height=\"6\"/>\n"
			    "<rect class=\"ev\" x=\"%.2f\" y=\"%.2f\" "
			    "width=\"1\" height=\"6\"/>\n"
			    "<rect class=\"ev\" x=\"%.2f\" y=\"%.2f\" "
			    "width=\"5\" height=\"6\"/>\n", x + 1, y - 8,
			    x + 5, y - 8, x + 10, y - 8);
			break;
		case L_LOSS:
			fprintf(g->out, "<path class=\"loss\" d=\"M%.2f %.2f"
			    "h10l-5 9z\"/>\n", x + 4, y - 10);
			break;
		case L_MSG:
			fprintf(g->out, "<line class=\"msg key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			    "marker-end=\"url(#arrow)\"/>\n", x, y - 10, x + 18,
			    y - 1);
			break;
		case L_STUB:
			fprintf(g->out, "<line class=\"stub key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x + 5,
			    y - 1, x + 13, y - 9);
			break;
		case L_CTL:
			fprintf(g->out, "<line class=\"ctl key\" x1=\"%.2f\" "
			    "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x + 9,
			    y - 12, x + 9, y + 2);
			break;
		default:
			fprintf(g->out, "<text class=\"legend\" x=\"%.2f\" "
			    "y=\"%.2f\">\xe2\x80\xa6 and %zu more blocks"
			    "</text>\n", x, y, shown - LEGEND_MAX);
			continue;
		}
		fprintf(g->out, "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">"
		    "%s</text>\n", x + 24, y, extra[k - g->nbk]);
	}
	y = y0 + (double)((n + cols - 1) / cols) * 20 + 6;
	snprintf(note, sizeof note, "Blocks narrower than %.1f px and events "
	    "closer than %.1f px are merged: the picture summarizes the trace "
	    "at this resolution. Hover over a mark for details.", MERGE_PX,
	    MERGE_PX);
	return wrap(g, "note", y, 14, CHAR_W, note, draw_it);
}

static const char style[] =
    "<style type=\"text/css\"><![CDATA[\n"
    "text{font-family:\"DejaVu Sans\",Verdana,Arial,sans-serif;"
    "font-size:11px;fill:#222}\n"
    "text.title{font-size:15px;font-weight:bold}\n"
    "text.head{font-size:12px;font-weight:bold}\n"
    "text.thread{font-family:\"DejaVu Sans Mono\",Menlo,Consolas,"
    "monospace;text-anchor:end}\n"
    "text.axis{font-size:10px;text-anchor:middle;fill:#444}\n"
    "text.note,text.info{fill:#555}\n"
    "line.axis{stroke:#444;stroke-width:1}\n"
    "line.grid{stroke:#ddd;stroke-width:0.5}\n"
    "line.thr{stroke:#999;stroke-width:0.75}\n"
    "line.node{stroke:#888;stroke-width:1;stroke-dasharray:6,4}\n"
    "rect.band{fill:#f2f4f7}\n"
    "rect.s{stroke:#000;stroke-opacity:0.4;stroke-width:0.5}\n"
    "rect.busy{fill:#9a9a9a}\n"
    "rect.ev{fill:#1a1a1a}\n"
    "path.loss{fill:#e00000;stroke:#600;stroke-width:0.5}\n"
    "line.msg{stroke:#b01818;stroke-width:1}\n"
    "line.stub{stroke:#b01818;stroke-width:1.5;"
    "stroke-dasharray:2,1.5}\n"
    "path.head{fill:#b01818}\n"
    "line.ctl{stroke:#2a7a2a;stroke-width:1;stroke-dasharray:5,3}\n";

static void
header(struct svg *g)
{
	double y;
	int i;

	g->height = legend(g, 0);
	fprintf(g->out, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d "
	    "%.0f\">\n", g->width, g->height, g->width, g->height);
	fputs(style, g->out);
	for (i = 0; i < NPAL; i++)
		fprintf(g->out, ".c%d{fill:%s}\n", i, palette[i]);
	fprintf(g->out, "]]></style>\n");
	fprintf(g->out, "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" "
	    "refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
	    "orient=\"auto\"><path class=\"head\" d=\"M0 0L10 5L0 10z\"/>"
	    "</marker></defs>\n");
	fprintf(g->out, "<title>%s</title>\n", g->head);
	fprintf(g->out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" "
	    "fill=\"#fff\"/>\n", g->width, g->height);
	y = wrap(g, "title", 22, 18, TITLE_W, g->head, 1);
	wrap(g, "info", y, 14, CHAR_W, g->info, 1);
	rows(g);
	scale(g);
	legend(g, 1);
}

/* Copies the deeper layers and the user events into the output. */
static int
layers_out(struct svg *g)
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
	ix_clear(&g->thx);
	ix_clear(&g->bkx);
	pv_strs_free(&g->names);
	pv_msgs_free(&g->msgs);
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
usage_svg(void)
{
	fprintf(stderr, "usage: prove svg FILE [-o OUT.svg] [-w WIDTH]\n");
	return 2;
}

int
pv_svg(int argc, char **argv)
{
	struct svg g;
	char *end;
	long w;
	int i, rc;

	memset(&g, 0, sizeof g);
	g.width = W_DEFAULT;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			g.opath = argv[++i];
		else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) {
			errno = 0;
			w = strtol(argv[++i], &end, 10);
			if (errno != 0 || end == argv[i] || *end != '\0' ||
			    w < W_MIN || w > W_MAX) {
				fprintf(stderr, "prove: -w: the width is %d to "
				    "%d pixels\n", W_MIN, W_MAX);
				return 2;
			}
			g.width = (int)w;
		} else if (g.path == NULL &&
		    (argv[i][0] != '-' || argv[i][1] == '\0'))
			g.path = argv[i];
		else
			return usage_svg();
	}
	if (g.path == NULL)
		return usage_svg();
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
		header(&g);
		rc = draw(&g);
	}
	if (rc == 0 && layers_out(&g) != 0)
		rc = -2;
	if (rc == 0) {
		messages(&g);
		rc = marks(&g);
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
}
