/* SPDX-License-Identifier: MIT */
/* tr_int.h: the inside of the trace library: the writer and reader state,
 * the table of functions each format implements (one file per format and
 * role: tr_text_[rw].c, tr_bin_[rw].c, tr_bee_[rw].c), and the helpers the
 * formats call (tokenizer, input, definitions, meta lines).  Formats call
 * helpers, the front ends (tape_w.c, tr_read.c) call formats through their
 * table; nothing calls back. */
#ifndef GRM_TR_INT_H
#define GRM_TR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "util/hmap.h"

#include "tape.h"
#include "tr_read.h"
#include "tr_fmt.h"
#include "tr_schema.h"

/* ---- writer ---- */

#define TW_BUF		(1u << 20)	/* the buffer, as long as writes work */

struct tape_w;

/*
 * What one format writes (doc/formats.md sections 1, 3, 4).  meta writes a
 * meta line m (TR_M_*, the header, #DEF, #PROC and #END included) with its
 * n fields v[] in schema order (the = field's value is the schema's word);
 * the callers have checked the arguments.  piece is NULL where the format
 * has no pieces; its src, if not NULL, is tape_piece_from's.  Each returns 0, or -1 with errno set.
 */
struct tr_wops {
	int	(*open)(struct tape_w *w);
	int	(*meta)(struct tape_w *w, int m, const struct rec_field *v,
		    unsigned n);
	int	(*record)(struct tape_w *w, uint64_t ts, uint32_t node,
		    uint32_t pid, uint32_t tid, int32_t eid,
		    const struct rec_field *f, unsigned n);
	int	(*piece)(struct tape_w *w, uint32_t node, uint32_t pid,
		    uint32_t tid, const void *recs, size_t len,
		    const void *src, size_t slen, int same,
		    const struct tape_stretch *st, size_t *sused);
	void	(*free)(struct tape_w *w);
	/* How many of the first n bytes of w->buf (at file offset w->out)
	 * are whole units: after a write that went in part, the file is
	 * cut back to there.  NULL: the units are lines. */
	size_t	(*whole)(const struct tape_w *w, size_t n);
};

extern const struct tr_wops tr_text_wops, tr_bin_wops, tr_bee_wops;

struct tw_wb;
struct tw_wt;

struct tape_w {
	int		fd;
	const struct tr_wops *ops;
	int		ferr;		/* errno of a failed tw_begin */
	uint64_t	records;
	uint64_t	out;		/* bytes written to the file */
	uint64_t	wb;		/* ... whose writeback has started */
	struct tw_wb	*wbt;		/* the thread that starts it */
	int		wbt_none;	/* it could not be started */
	/* tape_async: the thread that writes (tape-w), the bytes handed
	 * to it and not yet seen written (at file offset out - fly), and
	 * a buffer for the next hand-off (or NULL), of spare_cap bytes: TW_BUF,
	 * or up to TW_SPARE_MAX if one grew. */
	struct tw_wt	*wt;
	int		handed;		/* tape-w has a hand-off (bytes,
					   a sidecar, or both) not taken back */
	size_t		fly;
	uint64_t	fly_ns;		/* when handed (CLOCK_MONOTONIC) */
	char		*spare;
	size_t		spare_cap;
	size_t		len;
	void		*priv;		/* the format's own state */
	/* A write failed (ENOSPC, EIO...): the file was cut back to `out`
	 * (whole lines or frames), buf keeps all that was not written and
	 * grows until a write works again (tape_error). */
	int		werr;		/* its errno, 0 if writes work */
	int		cut;		/* the cut back is still to be done */
	size_t		cap;		/* buf's size: TW_BUF, or more */
	char		*buf;
	/* The summary sidecar (binary format, tr_sum.h): NULL if none is
	 * written; path the trace's; sum_ns when it was last written. */
	struct tr_sum	*sum;
	char		*path;
	uint64_t	sum_ns;
	uint64_t	sum_records;	/* records it had then */
	/* The binary format's last D frame, while it ends buf and is not
	 * written (dfr_open): more records of its process join it, after a
	 * thread switch if another thread's (doc/formats.md 3).  Where it
	 * starts in buf, its process, the thread of its last record and
	 * that record's time. */
	int		dfr_open;
	size_t		dfr;
	uint32_t	dfr_node, dfr_pid, dfr_tid;
	uint64_t	dfr_last;
};

/* Binary format: the next frame read is the one at file offset off (a
 * frame's start, from a summary sidecar); what was read before is kept
 * (definitions, hosts).  0, or -1 (EINVAL: not a binary file one can
 * seek in, or failed). */
int tr_bin_at(struct tape_r *r, uint64_t off);

/* Feeds one record of the frame at file offset foff to w's summary, if
 * it has one (dropped, not to be written, if memory runs out). */
void tw_sum(struct tape_w *w, uint64_t foff, uint64_t ts, uint32_t node,
	    uint32_t pid, uint32_t tid, int32_t eid, int64_t arg);
/* The same for the records of a piece (len bytes at recs, off bytes
 * into what st (may be NULL) describes). */
void tw_sum_piece(struct tape_w *w, uint64_t foff, uint32_t node,
		  uint32_t pid, uint32_t tid, const void *recs, size_t len,
		  const struct tape_stretch *st, size_t off);
/* The same for the records of a dense run (sum_dense). */
void tw_sum_dense(struct tape_w *w, uint64_t foff, uint32_t node,
		  uint32_t pid, uint32_t tid, const void *src, size_t slen,
		  uint64_t prev, const struct rec_dense_shift *sh,
		  const struct rec_dense_segs *sg);
/* tape_dense_at's and tape_dense_put's work (tr_bin_w.c). */
char *tr_bin_dense_at(struct tape_w *w, uint32_t node, uint32_t pid,
		      uint32_t tid, char **lim, uint64_t *prev,
		      uint64_t *foff);
void tr_bin_dense_put(struct tape_w *w, char *end, size_t nrec,
		      uint32_t node, uint32_t pid, uint32_t tid,
		      uint64_t last);
/* tape_piece_dense's work (tr_bin_w.c). */
int tr_bin_piece_dense(struct tape_w *w, uint32_t node, uint32_t pid,
		       uint32_t tid, const void *src, size_t slen,
		       uint64_t prev, const struct rec_dense_shift *sh,
		       const struct rec_dense_segs *sg, size_t len,
		       size_t *sused, uint64_t *last);

/* Makes room for one line (at most TAPE_LINE_MAX bytes and its LF) and
 * returns where it starts; *lim is as far as it may go.  A buffer that
 * cannot be written out grows (tape_error says so); NULL (ENOMEM) if it
 * cannot grow. */
char *tw_begin(struct tape_w *w, const char **lim);
/* Ends the line begun at w->buf + w->len at d with a LF; d NULL: the line
 * did not fit (EMSGSIZE) or tw_begin failed.  Returns 0 or -1. */
int tw_end(struct tape_w *w, char *d);
/* Commits w->buf[w->len..d) as written (a frame); d NULL as tw_end. */
int tw_commit(struct tape_w *w, char *d);

/* Write " <v>" if it fits before lim (and d is not NULL), else NULL. */
char *tw_u(char *d, const char *lim, uint64_t v);
char *tw_i(char *d, const char *lim, int64_t v);
char *tw_d(char *d, const char *lim, double v);

/* A string writer of a text format: " <s[0..len)>" or NULL. */
typedef char *tw_str_fn(char *d, const char *lim, const char *s,
			size_t len);
/*
 * The fields of meta line m as text, each after a blank: numbers in
 * decimal, tokens with tok, strings with str, the = word with tok.
 */
char *tw_fields(char *d, const char *lim, int m, const struct rec_field *v,
		unsigned n, tw_str_fn *tok, tw_str_fn *str);

/* tr_text_w.c, for the stdio helpers: " <value>" of one field, " \"...\"". */
char *tr_text_field(char *d, const char *lim, const struct rec_field *f);
char *tr_text_quote(char *d, const char *lim, const char *s, size_t len);

/* BEE Ascii (doc/formats.md, section 4): the commands of BEE's event
 * protocol (BEE manual, 9.8.1) and grm's extension, and grm's version. */
enum {
	TR_BEE_INIT = 0,
	TR_BEE_EVERY = 1,
	TR_BEE_FINAL = 2,
	TR_BEE_REGISTRATION = 3,
	TR_BEE_DEATH = 4,
	TR_BEE_DESCRIPTOR = 7,
	TR_BEE_GRM = 100		/* a grm meta line */
};
#define TR_BEE_GRM_TAG		"GRM-BEE-"	/* header: GRM-BEE-<version> */
#define TR_BEE_GRM_VERSION	1

/* ---- reader ---- */

#define TR_BUF		(2 * TAPE_LINE_MAX + 2)

struct tape_r;

/* What one format reads: next as tape_next; skip as tape_rskip, where the
 * format can do better than reading every record (NULL: it cannot); free
 * releases priv. */
struct tr_rops {
	int	(*next)(struct tape_r *r, struct tape_ev *ev);
	int	(*skip)(struct tape_r *r, uint64_t ts, struct tape_ev *ev);
	void	(*free)(struct tape_r *r);
};

/*
 * Opening: each format looks at the first bytes (the first line, NUL-
 * terminated and without trailing blanks, for the text ones) and returns
 * 1 if the file is its own, with r->ops set; 0 if it is not; -1 with *why
 * set if it is its own but cannot be read.
 */
int tr_bin_open(struct tape_r *r, const char **why);
int tr_text_open(struct tape_r *r, char *line, size_t len, const char **why);
int tr_bee_open(struct tape_r *r, char *line, size_t len, const char **why);

struct tape_r {
	int		fd;
	const struct tr_rops *ops;
	void		*priv;		/* the format's own state */
	int		failed;
	int		eof;
	int		rerrno;		/* errno of a failed read */
	int		ended;
	uint64_t	end_records;
	uint64_t	pos;		/* file offset of buf[0] */
	uint64_t	foff;		/* binary: offset of the last frame
					   read (tr_bin_r.c) */
	uint64_t	limit;		/* no byte read at or after it
					   (grmtrace_limit); 0: none */
	uint64_t	lineno;		/* line (frame) being read */
	uint64_t	eline;		/* BEE: the line the entry began on */
	uint64_t	losses;
	uint64_t	nrec;		/* records returned */
	unsigned	want;		/* TAPE_WANT of meta kinds returned */
	int		fmt;		/* GRMTRACE_FMT_* */
	int		seekable;	/* the input can go back */
	uint64_t	size;		/* seekable: the file's size, as last
					   looked at (tr_bin_r.c) */
	struct hmap	defs;		/* struct tr_defkey -> tape_def * */
	struct tape_def	**order;	/* the same, in the order read */
	size_t		norder;
	size_t		corder;
	size_t		nscoped;	/* of which scoped to a process */
	size_t		start;		/* unread input: buf[start..end) */
	size_t		end;
	char		*sp;		/* free space in sbuf */
	char		err[192];
	char		warn[192];	/* the last line or frame is cut */
	char		sbuf[2 * TAPE_LINE_MAX + 64];	/* strings of
							   one line, and
							   copies of its
							   tokens */
	char		buf[TR_BUF + 1];
};

/* How a cursor reads fields: the tokenizer of its format. */
struct cur;
struct tr_fieldops {
	/* One field of kind k (a tr_schema letter; 's' a string) into f. */
	int	(*get1)(struct tape_r *r, struct cur *c, char k,
		    struct rec_field *f);
	int	blanks;		/* blanks separate fields */
};

/* A cursor on a line or frame; why says what is wrong with it. */
struct cur {
	const char	*p;
	const char	*e;
	const char	*why;
	const struct tr_fieldops *ops;
};

extern const struct tr_fieldops tr_text_fields;

static inline int
tr_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* ---- tr_input.c: the input buffer ---- */

/* Says why the file cannot be read further ("line N: ..."); returns -1. */
int tr_fail(struct tape_r *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The file ends inside the line or frame being read (what, number
 * r->lineno), n bytes into it: a writer stopped, or its disk filled.
 * Notes the warning, consumes the rest; returns 0 (the end of the file):
 * what came before is the trace. */
int tr_cut(struct tape_r *r, const char *what, size_t n);
/* Makes at least n bytes of input available at buf[start]; 0 if the file
 * ends first (the bytes there are what is left), -1. */
int tr_fill(struct tape_r *r, size_t n);
/* The same, reading no more than it needs (to look at a few bytes before
 * going elsewhere in the file). */
int tr_fill_few(struct tape_r *r, size_t n);
/* The next line (NUL-terminated, in place): 1, 0 at end of file, -1.  A
 * last line without its LF is cut short (tr_cut): 0. */
int tr_getln(struct tape_r *r, char **line, size_t *len);
/* The file offset of the next byte to read. */
uint64_t tr_tell(const struct tape_r *r);
/* Reads no byte at or after off (0: no limit); a larger limit later lets
 * reading go on where it stopped (grmtrace_limit). */
void tr_limit(struct tape_r *r, uint64_t off);
/* Goes to file offset off (forward or back, on a seekable file): 0, -1. */
int tr_goto(struct tape_r *r, uint64_t off);

/* ---- tr_tok.c: tokens and numbers ---- */

/* Skips blanks (if the cursor's format has them); whether it is at its
 * end. */
int tr_at_end(struct cur *c);
/* Sets c->why; returns -1. */
int tr_bad(struct cur *c, const char *why);
/* The next blank-separated token. */
int tr_tok(struct cur *c, const char **s, size_t *n);
/* A decimal number of at most max. */
int tr_mag(struct cur *c, const char *s, size_t n, uint64_t max,
	   uint64_t *v);
/* A decimal integer from min to max: "-?[0-9]+". */
int tr_int(struct cur *c, const char *s, size_t n, int64_t min, int64_t max,
	   int64_t *v);
/* A decimal floating-point number as doc/formats.md 1.2 has them. */
int tr_double(struct cur *c, const char *s, size_t n, double *v);
/* A quoted string, unescaped into r->sbuf. */
int tr_str(struct tape_r *r, struct cur *c, const char **s, uint32_t *len);
/* One field of kind k of the text format (tr_schema.h letters). */
int tr_text_get1(struct tape_r *r, struct cur *c, char k,
		 struct rec_field *f);
/* Copies s[0..n) to r->sbuf, NUL-terminated; returns the copy. */
const char *tr_keep(struct tape_r *r, const char *s, size_t n);

/* ---- tr_defs.c: the definitions read so far ---- */

/* What a definition is found by: its scope (node 0: every process) and
 * eid; no padding (hmap compares the bytes). */
struct tr_defkey {
	uint32_t	node;
	uint32_t	pid;
	int32_t		eid;
};

/* The hash of a struct tr_defkey, for the maps keyed by it (the reader's
 * definitions, the BEE writer's). */
uint32_t tr_defkey_hash(const void *key);

/* Stores a definition (scoped when node >= 1), replacing one of the same
 * scope and eid.  Returns it, or NULL after tr_fail. */
struct tape_def *tr_define(struct tape_r *r, int32_t eid, uint8_t cls,
			  uint8_t attr, const char *format, const char *dsc,
			  uint32_t node, uint32_t pid);
/* The definition stored for exactly (eid, node, pid), or NULL. */
struct tape_def *tr_def_at(const struct tape_r *r, uint32_t node,
			   uint32_t pid, int32_t eid);
/* The definition records of (node, pid) of eid are read with: the
 * process's own if one was given, else the global one; or NULL. */
const struct tape_def *tr_def_for(const struct tape_r *r, uint32_t node,
				  uint32_t pid, int32_t eid);
void tr_defs_free(struct tape_r *r);
/* Fills pub, the API's view of d (whose strings it points to). */
void tr_def_fill_pub(struct grmtrace_def *pub, const struct tape_def *d);

/* ---- tr_meta.c: meta lines and record fields ---- */

/* A meta line's keyword and fields: 1 if ev was filled (a kind asked
 * for), 0 if consumed, -1. */
int tr_meta(struct tape_r *r, struct cur *c, struct tape_ev *ev);
/* What meta line m with its n fields v[] (schema order) means: the
 * reader's state (definitions, losses, the end) and ev.  1 if ev is of a
 * kind asked for, 0, -1. */
int tr_meta_apply(struct tape_r *r, int m, const struct rec_field *v,
		  unsigned n, struct tape_ev *ev);
/* The fields of a record whose ev->def is set, then the end of c. */
int tr_fields(struct tape_r *r, struct cur *c, struct tape_ev *ev);
/* Finds a record's definition (ev node, pid, eid set); -1 if none. */
int tr_record_def(struct tape_r *r, struct tape_ev *ev);
/* A record as a text line or binary R frame has it (ts node pid tid eid
 * field...), read with c's field ops into ev: 0, or -1 after tr_fail. */
int tr_record(struct tape_r *r, struct cur *c, struct tape_ev *ev);

#endif /* GRM_TR_INT_H */
