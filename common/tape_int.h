/* tape_int.h: what the trace file writers and readers share across formats
 * (tape_w.c and bee_w.c; tape_r.c and bee_r.c); not part of tape.h's
 * interface. */
#ifndef GRM_TAPE_INT_H
#define GRM_TAPE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fmt.h"
#include "tape.h"

/* ---- writer ---- */

#define TW_BUF		(1u << 20)

struct bee_wdef;

struct tape_w {
	int		fd;
	int		fmt;		/* TAPE_FMT_* */
	int		ferr;		/* errno of a failed tw_begin */
	uint64_t	records;
	uint64_t	out;		/* bytes written to the file */
	uint64_t	wb;		/* ... whose writeback has started */
	size_t		len;
	/* BEE: the class and attribute of each type defined so far, by
	 * (eid, node, pid) (bee_w.c) */
	struct bee_wdef	*bdefs;
	size_t		bcap;
	size_t		bn;
	size_t		bscoped;
	char		buf[TW_BUF];
};

/* Makes room for one line (at most TAPE_LINE_MAX bytes and its LF) and
 * returns where it starts; *lim is as far as it may go.  NULL if the
 * buffer could not be written out. */
char *tw_begin(struct tape_w *w, const char **lim);
/* Ends the line begun at w->buf + w->len at d with a LF; d NULL: the line
 * did not fit (EMSGSIZE) or tw_begin failed.  Returns 0 or -1. */
int tw_end(struct tape_w *w, char *d);

/* Write " <v>" if it fits before lim (and d is not NULL), else NULL. */
char *tw_u(char *d, const char *lim, uint64_t v);
char *tw_i(char *d, const char *lim, int64_t v);
char *tw_d(char *d, const char *lim, double v);

/* BEE Ascii (doc/formats.md, section 4): the commands of BEE's event
 * protocol (BEE manual, 9.8.1) and grm's extension, and grm's version. */
enum {
	BEE_INIT = 0,
	BEE_EVERY = 1,
	BEE_FINAL = 2,
	BEE_REGISTRATION = 3,
	BEE_DEATH = 4,
	BEE_DESCRIPTOR = 7,
	BEE_GRM = 100		/* a grm meta line */
};
#define BEE_GRM_TAG	"GRM-BEE-"	/* header: GRM-BEE-<version> */
#define BEE_GRM_VERSION	1

/* bee_w.c: the BEE Ascii format (doc/formats.md, section 4); the callers
 * in tape_w.c have checked the arguments. */
int bee_w_header(struct tape_w *w);
/* " <s>" as one token: as it is if it can be, else quoted, with blanks,
 * parentheses and what a quoted string escapes escaped; NULL if it does
 * not fit before lim (or d is NULL). */
char *bee_w_str(char *d, const char *lim, const char *s, size_t len);
/* The start of an entry, "(cmd ": there is always room. */
char *bee_w_cmd(char *d, unsigned cmd);
/* Ends an entry whose last group is open ("))") and its line. */
int bee_w_end_entry(struct tape_w *w, char *d, const char *lim);
int bee_w_def(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
	      uint8_t cls, uint8_t attr, const char *format,
	      size_t format_len, const char *dsc, size_t dsc_len);
int bee_w_proc(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t ppid,
	       int how, uint64_t ts, int32_t status, const char *name);
int bee_w_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
		 uint32_t tid, int32_t eid, const struct rec_field *f,
		 unsigned n);
int bee_w_end(struct tape_w *w);
/* The type descriptor of a format rec_parse_format took: its conversions
 * without flags, width and precision ("%d%s%lf"), at t (as long as the
 * format at most); returns its length. */
size_t bee_type_of(const char *format, char *t);
void bee_w_free(struct tape_w *w);

/* The words of a #PROC line, by TAPE_PROC_*. */
extern const char *const tape_proc_words[TAPE_PROC_GONE + 1];

/* ---- reader ---- */

#define TR_BUF		(2 * TAPE_LINE_MAX + 2)

/* BEE: a class's type descriptor, and each field's conversion. */
struct bee_desc {
	struct rec_fmt	fmt;
	char		conv[REC_ARGS_MAX];
};

struct tape_r {
	int		fd;
	int		failed;
	int		eof;
	int		rerrno;		/* errno of a failed read */
	int		ended;
	uint64_t	end_records;
	uint64_t	lineno;
	uint64_t	eline;		/* BEE: the line the entry began on */
	uint64_t	losses;
	uint64_t	nrec;		/* records returned */
	unsigned	want;		/* TAPE_WANT of meta kinds returned */
	int		bin;		/* the binary format */
	int		bee;		/* BEE Ascii: TR_BEE or TR_BEE_GRM */
	const char	*pp;		/* binary: records left in a piece */
	const char	*pe;
	uint32_t	pnode, ppid, ptid;
	struct tape_def	**defs;		/* open addressing on eid */
	size_t		ndefs;
	size_t		nscoped;	/* of which scoped to a process */
	size_t		cap;
	size_t		start;		/* unread input: buf[start..end) */
	size_t		end;
	char		*sp;		/* free space in sbuf */
	char		err[192];
	/* BEE: the type descriptor of each class, from E_DESCRIPTOR */
	struct bee_desc	*bdesc[256];
	char		sbuf[TAPE_LINE_MAX + 1];
	char		lbuf[TAPE_LINE_MAX + 1];	/* BEE: an entry
							   joined from
							   lines */
	char		buf[TR_BUF + 1];
};

enum { TR_BEE = 1, TR_BEE_GRM = 2 };

/* A cursor on a line or frame; why says what is wrong with it. */
struct cur {
	const char	*p;
	const char	*e;
	const char	*why;
	int		bin;		/* fields in binary (a frame) */
	int		bee;		/* strings as BEE Ascii tokens */
};

static inline int
tr_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Says why the file cannot be read further ("line N: ..."); returns -1. */
int tr_fail(struct tape_r *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The next line (NUL-terminated, in place): 1, 0 at end of file, -1. */
int tr_getln(struct tape_r *r, char **line, size_t *len);
/* Skips blanks; whether the cursor is at its end. */
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
/*
 * One field of kind k into f: U u32, u u64, b byte, i i32, I i64, d
 * double, t token, s string.
 */
int tr_get1(struct tape_r *r, struct cur *c, char k, struct rec_field *f);
/* Stores a definition (scoped when node >= 1), replacing one of the same
 * scope and eid.  Returns it, or NULL after tr_fail. */
struct tape_def *tr_define(struct tape_r *r, int32_t eid, uint8_t cls,
			  uint8_t attr, const char *format, const char *dsc,
			  uint32_t node, uint32_t pid);
/* The definition stored for exactly (eid, node, pid), or NULL. */
struct tape_def *tr_def_at(const struct tape_r *r, uint32_t node,
			   uint32_t pid, int32_t eid);
/* A meta line's keyword and fields: 1 if ev was filled (a kind asked
 * for), 0 if consumed, -1. */
int tr_meta(struct tape_r *r, struct cur *c, struct tape_ev *ev);
/* The TAPE_PROC_* of a #PROC line's word s[0..n), or -1. */
int tr_proc_word(const char *s, size_t n);
/* The fields of a record whose ev->def is set, then the end of c. */
int tr_fields(struct tape_r *r, struct cur *c, struct tape_ev *ev);

/* bee_r.c */
int bee_r_header(struct tape_r *r, const char *line, size_t len,
		 const char **why);
int bee_r_next(struct tape_r *r, struct tape_ev *ev);
/* A string field: a plain token, or a quoted string. */
int bee_r_str(struct tape_r *r, struct cur *c, const char **s,
	      uint32_t *len);
void bee_r_free(struct tape_r *r);

#endif /* GRM_TAPE_INT_H */
