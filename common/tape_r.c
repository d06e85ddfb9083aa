/* tape_r.c: reading the ASCII trace file (doc/formats.md); the input is
 * hostile: every length and number is checked. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tape_int.h"

#define NUM_MAX		32	/* longest number we read as a double */

static uint32_t ld32(const char *p);

int
tr_fail(struct tape_r *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof r->err, "line %llu: ",
	    (unsigned long long)(r->eline != 0 ? r->eline : r->lineno));
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

/* Makes at least n bytes of input available at buf[start]; 0 if the
 * file ends first (the bytes there are what is left), -1. */
static int
fill(struct tape_r *r, size_t n)
{
	ssize_t got;

	while (r->end - r->start < n && !r->eof) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		got = read(r->fd, r->buf + r->end, TR_BUF - r->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r->rerrno = errno;
			return tr_fail(r, "read error: %s", strerror(errno));
		}
		r->eof = got == 0;
		r->end += (size_t)got;
	}
	return r->end - r->start >= n;
}

/* Binary: returns 1 with the next frame's kind and payload, 0 at end of
 * file, -1. */
static int
getframe(struct tape_r *r, char *kind, char **p, size_t *len)
{
	uint32_t n;
	int rc;

	if ((rc = fill(r, 5)) <= 0) {
		if (rc == 0 && r->end != r->start)
			return tr_fail(r, "truncated frame header");
		return rc;
	}
	n = ld32(r->buf + r->start);
	*kind = r->buf[r->start + 4];
	r->lineno++;
	if (n > TAPE_LINE_MAX - 5)
		return tr_fail(r, "frame of %lu bytes (at most %d)",
		    (unsigned long)n, TAPE_LINE_MAX - 5);
	if ((rc = fill(r, 5 + (size_t)n)) <= 0)
		return rc < 0 ? -1 : tr_fail(r, "truncated frame");
	*p = r->buf + r->start + 5;
	*len = n;
	r->start += 5 + (size_t)n;
	return 1;
}

/* Returns 1 with the next line (NUL-terminated), 0 at end of file, -1. */
int
tr_getln(struct tape_r *r, char **line, size_t *len)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl != NULL || r->eof || r->end - r->start > TAPE_LINE_MAX)
			break;
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		n = read(r->fd, r->buf + r->end, TR_BUF - r->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->rerrno = errno;
			return tr_fail(r, "read error: %s", strerror(errno));
		}
		r->eof = n == 0;
		r->end += (size_t)n;
	}
	if (nl == NULL && r->start == r->end)
		return 0;
	r->lineno++;
	if (nl == NULL)
		nl = r->buf + r->end;
	*line = r->buf + r->start;
	*len = (size_t)(nl - *line);
	if (*len > TAPE_LINE_MAX)
		return tr_fail(r, "line longer than %d bytes", TAPE_LINE_MAX);
	r->start = nl == r->buf + r->end ? r->end : r->start + *len + 1;
	*nl = '\0';
	return 1;
}

int
tr_at_end(struct cur *c)
{
	while (!c->bin && c->p < c->e && tr_blank(*c->p))
		c->p++;
	return c->p == c->e;
}

int
tr_bad(struct cur *c, const char *why)
{
	c->why = why;
	return -1;
}

static uint64_t
ld64(const char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

static uint32_t
ld32(const char *p)
{
	return (uint32_t)(unsigned char)p[0] | (uint32_t)(unsigned char)p[1] << 8 |
	    (uint32_t)(unsigned char)p[2] << 16 |
	    (uint32_t)(unsigned char)p[3] << 24;
}

/* Binary: a u16 (token) or u32 (string) length and its bytes. */
static int
bstr(struct cur *c, const char **s, size_t *n, int wide)
{
	size_t hl = wide ? 4 : 2, len;

	if ((size_t)(c->e - c->p) < hl)
		return tr_bad(c, "missing field");
	len = wide ? ld32(c->p) : (size_t)((unsigned char)c->p[0] |
	    (unsigned char)c->p[1] << 8);
	if ((size_t)(c->e - c->p) - hl < len)
		return tr_bad(c, "string past the end of its frame");
	*s = c->p + hl;
	*n = len;
	c->p += hl + len;
	return 0;
}

/* The next blank-separated token. */
int
tr_tok(struct cur *c, const char **s, size_t *n)
{
	if (c->bin)
		return bstr(c, s, n, 0);
	if (tr_at_end(c))
		return tr_bad(c, "missing field");
	*s = c->p;
	while (c->p < c->e && !tr_blank(*c->p))
		c->p++;
	*n = (size_t)(c->p - *s);
	return 0;
}

int
tr_mag(struct cur *c, const char *s, size_t n, uint64_t max, uint64_t *v)
{
	unsigned d;

	*v = 0;
	if (n == 0)
		return tr_bad(c, "bad number");
	for (; n > 0; s++, n--) {
		if (*s < '0' || *s > '9')
			return tr_bad(c, "bad number");
		d = (unsigned)(*s - '0');
		if (*v > (max - d) / 10)
			return tr_bad(c, "number out of range");
		*v = *v * 10 + d;
	}
	return 0;
}

static int
get_u(struct cur *c, uint64_t max, uint64_t *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_mag(c, s, n, max, v);
}

static int
get_i(struct cur *c, int64_t min, int64_t max, int64_t *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_int(c, s, n, min, max, v);
}

int
tr_int(struct cur *c, const char *s, size_t n, int64_t min, int64_t max,
       int64_t *v)
{
	uint64_t m;

	if (n == 0)
		return tr_bad(c, "bad number");
	if (*s != '-') {
		if (tr_mag(c, s, n, (uint64_t)max, &m) != 0)
			return -1;
		*v = (int64_t)m;
	} else {
		if (tr_mag(c, s + 1, n - 1, -(uint64_t)min, &m) != 0)
			return -1;
		*v = m == 0 ? 0 : -(int64_t)(m - 1) - 1;
	}
	return 0;
}

/* A decimal floating-point number (no hex, no "infinity"), inf, -inf, nan. */
int
tr_double(struct cur *c, const char *s, size_t n, double *v)
{
	char t[NUM_MAX * 2], *end;

	if (n >= sizeof t)
		return tr_bad(c, "bad floating-point number");
	memcpy(t, s, n);
	t[n] = '\0';
	if (strspn(t, "0123456789+-.eEinfa") < n)
		return tr_bad(c, "bad floating-point number");
	if (strcmp(t, "nan") == 0 || strcmp(t, "-nan") == 0) {
		*v = NAN;
		return 0;
	}
	*v = strtod(t, &end);
	if (end != t + n || isnan(*v))
		return tr_bad(c, "bad floating-point number");
	return 0;
}

static int
get_d(struct cur *c, double *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_double(c, s, n, v);
}

static int
hexval(char h)
{
	if (!isxdigit((unsigned char)h))
		return -1;
	return h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10;
}

/* A quoted string, unescaped into r->sbuf (and NUL-terminated there). */
int
tr_str(struct tape_r *r, struct cur *c, const char **s, uint32_t *len)
{
	char *d = r->sp;
	int h, l;

	if (tr_at_end(c))
		return tr_bad(c, "missing field");
	if (*c->p != '"')
		return tr_bad(c, "expected a quoted string");
	for (c->p++; c->p < c->e && *c->p != '"'; c->p++) {
		if ((unsigned char)*c->p < 0x20 || *c->p == 0x7f)
			return tr_bad(c, "control character in string");
		if (*c->p != '\\') {
			*d++ = *c->p;
			continue;
		}
		if (++c->p == c->e)
			break;
		switch (*c->p) {
		case '"':
		case '\\':
			*d++ = *c->p;
			break;
		case 'n':
			*d++ = '\n';
			break;
		case 't':
			*d++ = '\t';
			break;
		case 'r':
			*d++ = '\r';
			break;
		case 'x':
			if (c->e - c->p < 3 || (h = hexval(c->p[1])) < 0 ||
			    (l = hexval(c->p[2])) < 0)
				return tr_bad(c, "bad \\x escape in string");
			*d++ = (char)(h << 4 | l);
			c->p += 2;
			break;
		default:
			return tr_bad(c, "bad escape in string");
		}
	}
	if (c->p == c->e)
		return tr_bad(c, "unterminated string");
	if (++c->p < c->e && !tr_blank(*c->p))
		return tr_bad(c, "text after closing quote");
	*s = r->sp;
	*len = (uint32_t)(d - r->sp);
	*d++ = '\0';
	r->sp = d;
	return 0;
}

/*
 * Parses one field of kind k into f: U u32, u u64, i i32, I i64, b byte,
 * d double, t token, s string.
 */
/* The same, from a binary frame: every number in 8 bytes. */
static int
get1b(struct tape_r *r, struct cur *c, char k, struct rec_field *f)
{
	const char *s;
	uint64_t u;
	int64_t i;
	size_t n;

	if (k == 't' || k == 's') {
		if (bstr(c, &s, &n, k == 's') != 0)
			return -1;
		if (k == 's') {
			/* Strings are handed out NUL-terminated. */
			memcpy(r->sp, s, n);
			r->sp[n] = '\0';
			s = r->sp;
			r->sp += n + 1;
		} else
			for (i = 0; i < (int64_t)n; i++)
				if (tr_blank(s[i]) || s[i] == '\0' ||
				    s[i] == '\n')
					return tr_bad(c, "blank in token");
		f->v.s.p = s;
		f->v.s.len = (uint32_t)n;
		return 0;
	}
	if (c->e - c->p < 8)
		return tr_bad(c, "missing field");
	u = ld64(c->p);
	c->p += 8;
	memcpy(&i, &u, 8);
	switch (k) {
	case 'U':
		if (u > UINT32_MAX)
			return tr_bad(c, "number out of range");
		f->v.u = u;
		return 0;
	case 'b':
		if (u > 255)
			return tr_bad(c, "number out of range");
		f->v.u = u;
		return 0;
	case 'u':
		f->v.u = u;
		return 0;
	case 'i':
		if (i < INT32_MIN || i > INT32_MAX)
			return tr_bad(c, "number out of range");
		f->v.i = i;
		return 0;
	case 'I':
		f->v.i = i;
		return 0;
	default:
		memcpy(&f->v.d, &u, 8);
		return 0;
	}
}

int
tr_get1(struct tape_r *r, struct cur *c, char k, struct rec_field *f)
{
	size_t n;

	if (c->bin)
		return get1b(r, c, k, f);
	if (c->bee && (k == 's' || k == 't'))
		return bee_r_str(r, c, &f->v.s.p, &f->v.s.len);
	switch (k) {
	case 'U':
		return get_u(c, UINT32_MAX, &f->v.u);
	case 'u':
		return get_u(c, UINT64_MAX, &f->v.u);
	case 'b':
		return get_u(c, 255, &f->v.u);
	case 'i':
		return get_i(c, INT32_MIN, INT32_MAX, &f->v.i);
	case 'I':
		return get_i(c, INT64_MIN, INT64_MAX, &f->v.i);
	case 'd':
		return get_d(c, &f->v.d);
	case 't':
		if (tr_tok(c, &f->v.s.p, &n) != 0)
			return -1;
		f->v.s.len = (uint32_t)n;
		return 0;
	default:
		return tr_str(r, c, &f->v.s.p, &f->v.s.len);
	}
}

static size_t
slot(const struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid)
{
	size_t i;

	i = ((uint32_t)eid * 2654435761u ^ node * 40503u ^ pid * 2246822519u) &
	    (r->cap - 1);
	while (r->defs[i] != NULL && (r->defs[i]->eid != eid ||
	    r->defs[i]->node != node || r->defs[i]->pid != pid))
		i = (i + 1) & (r->cap - 1);
	return i;
}

static int
grow(struct tape_r *r)
{
	struct tape_def **old = r->defs;
	size_t i, ocap = r->cap;

	r->cap = ocap == 0 ? 64 : ocap * 2;
	if ((r->defs = calloc(r->cap, sizeof *r->defs)) == NULL) {
		r->defs = old;
		r->cap = ocap;
		return -1;
	}
	for (i = 0; i < ocap; i++)
		if (old[i] != NULL)
			r->defs[slot(r, old[i]->node, old[i]->pid,
			    old[i]->eid)] = old[i];
	free(old);
	return 0;
}

struct tape_def *
tr_define(struct tape_r *r, int32_t eid, uint8_t cls, uint8_t attr,
	  const char *format, const char *dsc, uint32_t node, uint32_t pid)
{
	struct tape_def *d;
	struct rec_fmt fmt;
	char *f2, *d2;
	size_t i;

	if (rec_parse_format(format, &fmt) != 0) {
		tr_fail(r, "definition of eid %d: bad format", (int)eid);
		return NULL;
	}
	if ((r->ndefs + 1) * 2 > r->cap && grow(r) != 0) {
		tr_fail(r, "out of memory");
		return NULL;
	}
	i = slot(r, node, pid, eid);
	f2 = strdup(format);
	d2 = strdup(dsc);
	if ((d = r->defs[i]) == NULL)
		d = calloc(1, sizeof *d);
	if (f2 == NULL || d2 == NULL || d == NULL) {
		free(f2);
		free(d2);
		if (d != r->defs[i])
			free(d);
		tr_fail(r, "out of memory");
		return NULL;
	}
	if (r->defs[i] == NULL) {
		r->ndefs++;
		r->nscoped += node != 0;
	}
	r->defs[i] = d;
	free(d->format);
	free(d->dsc);
	d->eid = eid;
	d->node = node;
	d->pid = pid;
	d->cls = cls;
	d->attr = attr;
	d->format = f2;
	d->dsc = d2;
	d->fmt = fmt;
	return d;
}

struct tape_def *
tr_def_at(const struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid)
{
	return r->cap == 0 ? NULL : r->defs[slot(r, node, pid, eid)];
}

/* A #DEF line's definition: v holds eid, class, attribute, format and
 * description. */
static int
define(struct tape_r *r, const struct rec_field *v, uint32_t node,
       uint32_t pid)
{
	struct rec_fmt fmt;

	if (memchr(v[3].v.s.p, '\0', v[3].v.s.len) != NULL ||
	    rec_parse_format(v[3].v.s.p, &fmt) != 0)
		return tr_fail(r, "#DEF %d: bad format", (int)v[0].v.i);
	if (memchr(v[4].v.s.p, '\0', v[4].v.s.len) != NULL)
		return tr_fail(r, "#DEF %d: NUL in description", (int)v[0].v.i);
	return tr_define(r, (int32_t)v[0].v.i, (uint8_t)v[1].v.u,
	    (uint8_t)v[2].v.u, v[3].v.s.p, v[4].v.s.p, node, pid) != NULL ?
	    0 : -1;
}

/* The meta lines the reader knows, and the fields each starts with. */
enum { M_DEF, M_HOST, M_PROC, M_LOSS, M_COLLECT, M_END, M_MM, M_CLOCK,
	M_STATS, M_CONTROL, M_N };

static const struct {
	const char	*key;
	const char	*spec;
} metas[M_N] = {
	[M_DEF] = { "#DEF", "ibbss" },
	[M_HOST] = { "#HOST", "UIUt" },
	[M_PROC] = { "#PROC", "UUUtuis" },
	[M_LOSS] = { "#LOSS", "UUUuu" },
	[M_COLLECT] = { "#COLLECT", "Uuu" },
	[M_END] = { "#END", "u" },
	[M_MM] = { "#MM", "t" },
	[M_CLOCK] = { "#CLOCK", "uu" },
	[M_STATS] = { "#STATS", "UUt" },
	[M_CONTROL] = { "#CONTROL", "us" },
};

static int
same(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

int
tr_proc_word(const char *s, size_t n)
{
	int how;

	for (how = 0; how <= TAPE_PROC_GONE; how++)
		if (same(s, n, tape_proc_words[how]))
			return how;
	return -1;
}

/* Reads the fields of spec into v; on error says which line kind. */
static int
fields(struct tape_r *r, struct cur *c, const char *key, const char *spec,
       struct rec_field *v)
{
	const char *sp;

	for (sp = spec; *sp != '\0'; sp++)
		if (tr_get1(r, c, *sp, &v[sp - spec]) != 0)
			return tr_fail(r, "%s: %s", key, c->why);
	return 0;
}

/*
 * The rest of a #STATS line, after node, pid and its word in v[0..2]: 1
 * with ev filled, 0 for a word this reader does not know (ignored, like an
 * unknown keyword), -1.
 */
static int
stats(struct tape_r *r, struct cur *c, struct rec_field *v,
      struct tape_ev *ev)
{
	if (same(v[2].v.s.p, v[2].v.s.len, "count")) {
		if (fields(r, c, "#STATS count", "iu", v + 3) != 0)
			return -1;
		ev->kind = TAPE_STATS_COUNT;
	} else if (same(v[2].v.s.p, v[2].v.s.len, "range")) {
		if (fields(r, c, "#STATS range", "iIuuuudd", v + 3) != 0)
			return -1;
		ev->kind = TAPE_STATS_RANGE;
		ev->range = (struct tape_range){ v[4].v.i, v[6].v.u,
		    v[7].v.u, v[8].v.u, v[9].v.d, v[10].v.d };
		v[4].v.u = v[5].v.u;	/* n, where a count line has it */
	} else
		return 0;
	ev->node = (uint32_t)v[0].v.u;
	ev->pid = (uint32_t)v[1].v.u;
	ev->eid = (int32_t)v[3].v.i;
	ev->count = v[4].v.u;
	ev->def = tape_rdef_for(r, ev->node, ev->pid, ev->eid);
	return 1;
}

/*
 * A #-line.  Unknown keywords and extra trailing fields are ignored.
 * Returns 1 if ev was filled (a kind the caller wants), 0 if the line was
 * consumed, -1.
 */
int
tr_meta(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	struct rec_field v[12];
	const char *k;
	size_t n, i;
	int rc;

	tr_tok(c, &k, &n);
	for (i = 0; i < M_N; i++)
		if (same(k, n, metas[i].key))
			break;
	if (i == M_N)
		return 0;
	if (fields(r, c, metas[i].key, metas[i].spec, v) != 0)
		return -1;
	memset(ev, 0, sizeof *ev);
	switch (i) {
	case M_DEF:
		/* An optional scope, node (>= 1) and pid; anything else
		 * trailing is ignored, as on every # line. */
		if (tr_at_end(c) || tr_get1(r, c, 'U', &v[5]) != 0)
			return define(r, v, 0, 0);
		if (tr_get1(r, c, 'U', &v[6]) != 0)
			return tr_fail(r, "#DEF scope: %s", c->why);
		if (v[5].v.u == 0)
			return tr_fail(r, "#DEF scope: node 0");
		return define(r, v, (uint32_t)v[5].v.u, (uint32_t)v[6].v.u);
	case M_PROC:
		if ((ev->is_exit = tr_proc_word(v[3].v.s.p,
		    v[3].v.s.len)) < 0)
			return tr_fail(r, "#PROC: expected start, exit, "
			    "killed, exec or gone");
		ev->kind = TAPE_PROC;
		ev->node = (uint32_t)v[0].v.u;
		ev->pid = (uint32_t)v[1].v.u;
		ev->ppid = (uint32_t)v[2].v.u;
		ev->ts = v[4].v.u;
		ev->status = (int32_t)v[5].v.i;
		ev->str = v[6].v.s.p;
		ev->str_len = v[6].v.s.len;
		break;
	case M_LOSS:
		r->losses = v[3].v.u > UINT64_MAX - r->losses ? UINT64_MAX :
		    r->losses + v[3].v.u;
		ev->kind = TAPE_LOSS;
		ev->node = (uint32_t)v[0].v.u;
		ev->pid = (uint32_t)v[1].v.u;
		ev->tid = (uint32_t)v[2].v.u;
		ev->count = v[3].v.u;
		ev->ts = v[4].v.u;
		break;
	case M_END:
		r->ended = 1;
		r->end_records = v[0].v.u;
		return 0;
	case M_STATS:
		if ((rc = stats(r, c, v, ev)) <= 0)
			return rc;
		break;
	case M_CONTROL:
		ev->kind = TAPE_CONTROL;
		ev->ts = v[0].v.u;
		ev->str = v[1].v.s.p;
		ev->str_len = v[1].v.s.len;
		break;
	default:
		return 0;
	}
	return (r->want & TAPE_WANT(ev->kind)) != 0;
}

static int
record(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	struct rec_field h[5];
	unsigned i;

	for (i = 0; i < 5; i++)
		if (tr_get1(r, c, "uUUUi"[i], &h[i]) != 0)
			return tr_fail(r, "record: %s", c->why);
	ev->kind = TAPE_RECORD;
	ev->ts = h[0].v.u;
	ev->node = (uint32_t)h[1].v.u;
	ev->pid = (uint32_t)h[2].v.u;
	ev->tid = (uint32_t)h[3].v.u;
	ev->eid = (int32_t)h[4].v.i;
	if ((ev->def = tape_rdef_for(r, ev->node, ev->pid, ev->eid)) == NULL)
		return tr_fail(r, "record before definition of eid %d",
		    (int)ev->eid);
	return tr_fields(r, c, ev);
}

int
tr_fields(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	unsigned i;
	int k;

	ev->n = ev->def->fmt.n;
	for (i = 0; i < ev->n; i++) {
		k = ev->def->fmt.kind[i];
		ev->f[i].kind = k;
		if (tr_at_end(c))
			return tr_fail(r, "too few fields for eid %d (its "
			    "format has %u)", (int)ev->eid, ev->n);
		if (tr_get1(r, c, "Iuds"[k], &ev->f[i]) != 0)
			return tr_fail(r, "field %u of eid %d: %s", i + 1,
			    (int)ev->eid, c->why);
	}
	if (!tr_at_end(c))
		return tr_fail(r, "too many fields for eid %d (its format has "
		    "%u)", (int)ev->eid, ev->n);
	return 0;
}

struct tape_r *
tape_ropen(const char *path, const char **why)
{
	struct tape_r *r;
	char *line;
	size_t len;

	if ((r = calloc(1, sizeof *r)) == NULL) {
		*why = strerror(errno);
		return NULL;
	}
	if (strcmp(path, "-") == 0)
		r->fd = STDIN_FILENO;
	else if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		*why = strerror(errno);
		free(r);
		return NULL;
	}
	/* A binary trace starts with its magic, then its first frame is
	 * the #GRM-TRACE line. */
	if (fill(r, 8) > 0 && memcmp(r->buf, TAPE_BIN_MAGIC, 8) == 0) {
		struct rec_field v;
		struct cur c;
		char kind;
		const char *k;
		size_t kn;

		r->bin = 1;
		r->start = 8;
		if (getframe(r, &kind, &line, &len) == 1 && kind == 'L') {
			c = (struct cur){ line, line + len, NULL, 1, 0 };
			if (tr_tok(&c, &k, &kn) == 0 &&
			    same(k, kn, "#GRM-TRACE") &&
			    tr_get1(r, &c, 'u', &v) == 0 && v.v.u >= 1 &&
			    v.v.u <= TAPE_VERSION)
				return r;
		}
		*why = "not a grm binary trace, or an unsupported version";
		tape_rclose(r);
		return NULL;
	}
	switch (tr_getln(r, &line, &len)) {
	case 1:
		while (len > 0 && tr_blank(line[len - 1]))
			line[--len] = '\0';
		/* BEE Ascii starts with its header, "(version protocol)". */
		if (line[strspn(line, " \t")] == '(') {
			if (bee_r_header(r, line, len, why) == 0)
				return r;
		} else if (strncmp(line, "#GRM-TRACE ", 11) != 0)
			*why = "not a grm trace (no #GRM-TRACE line)";
		else if (strcmp(line + 11, "1") != 0 &&
		    strcmp(line + 11, "2") != 0)
			*why = "unsupported trace version";
		else
			return r;
		break;
	case 0:
		*why = "empty file";
		break;
	default:
		*why = r->rerrno != 0 ? strerror(r->rerrno) :
		    "not a grm trace (first line too long)";
	}
	tape_rclose(r);
	return NULL;
}

/* Binary: the next record of the piece being read. */
static int
piece_record(struct tape_r *r, struct tape_ev *ev)
{
	struct rec_hdr h;
	unsigned i;

	memcpy(&h, r->pp, sizeof h);
	if (h.len < sizeof h || h.len > (size_t)(r->pe - r->pp))
		return tr_fail(r, "piece: record of %u bytes", (unsigned)h.len);
	ev->kind = TAPE_RECORD;
	ev->ts = h.ts;
	ev->node = r->pnode;
	ev->pid = r->ppid;
	ev->tid = r->ptid;
	ev->eid = h.eid;
	if ((ev->def = tape_rdef_for(r, ev->node, ev->pid, ev->eid)) == NULL)
		return tr_fail(r, "record before definition of eid %d",
		    (int)ev->eid);
	if (rec_decode(r->pp, h.len, &ev->def->fmt, ev->f) != 0)
		return tr_fail(r, "record of eid %d does not match its format",
		    (int)ev->eid);
	ev->n = ev->def->fmt.n;
	/* Strings are handed out NUL-terminated, like the text's. */
	for (i = 0; i < ev->n; i++)
		if (ev->f[i].kind == REC_K_STR) {
			memcpy(r->sp, ev->f[i].v.s.p, ev->f[i].v.s.len);
			r->sp[ev->f[i].v.s.len] = '\0';
			ev->f[i].v.s.p = r->sp;
			r->sp += ev->f[i].v.s.len + 1;
		}
	r->pp += h.len;
	return 1;
}

static int
bin_next(struct tape_r *r, struct tape_ev *ev)
{
	struct cur c;
	size_t len;
	char *p, kind;
	int rc;

	while (!r->failed) {
		r->sp = r->sbuf;
		if (r->pp != NULL && r->pp < r->pe)
			return piece_record(r, ev);
		r->pp = NULL;
		if ((rc = getframe(r, &kind, &p, &len)) <= 0)
			return rc;
		c = (struct cur){ p, p + len, NULL, 1, 0 };
		switch (kind) {
		case 'L':
			if ((rc = tr_meta(r, &c, ev)) != 0)
				return rc;
			break;
		case 'R':
			return record(r, &c, ev) == 0 ? 1 : -1;
		case 'P':
			if (len < 12 + sizeof(struct rec_hdr))
				return tr_fail(r, "piece: %zu bytes", len);
			r->pnode = ld32(p);
			r->ppid = ld32(p + 4);
			r->ptid = ld32(p + 8);
			r->pp = p + 12;
			r->pe = p + len;
			break;
		default:
			break;	/* a kind this reader does not know */
		}
	}
	return -1;
}

int
tape_next(struct tape_r *r, struct tape_ev *ev)
{
	struct cur c;
	size_t len;
	char *line;
	int rc;

	if (r->bin)
		return bin_next(r, ev);
	if (r->bee)
		return bee_r_next(r, ev);
	while (!r->failed) {
		if ((rc = tr_getln(r, &line, &len)) <= 0)
			return rc;
		c.p = line;
		c.e = line + len;
		c.why = NULL;
		c.bin = 0;
		c.bee = 0;
		r->sp = r->sbuf;
		if (tr_at_end(&c))
			continue;
		if (*c.p != '#')
			return record(r, &c, ev) == 0 ? 1 : -1;
		if ((rc = tr_meta(r, &c, ev)) != 0)
			return rc;
	}
	return -1;
}

void
tape_rwant(struct tape_r *r, unsigned kinds)
{
	r->want = kinds & ~TAPE_WANT(TAPE_RECORD);
}

const char *
tape_rerror(const struct tape_r *r)
{
	return r->err[0] != '\0' ? r->err : "no error";
}

const struct tape_def *
tape_rdef(const struct tape_r *r, int32_t eid)
{
	return r->cap == 0 ? NULL : r->defs[slot(r, 0, 0, eid)];
}

const struct tape_def *
tape_rdef_for(const struct tape_r *r, uint32_t node, uint32_t pid,
	      int32_t eid)
{
	const struct tape_def *d;

	if (r->nscoped > 0 && node != 0 &&
	    (d = r->defs[slot(r, node, pid, eid)]) != NULL)
		return d;
	return tape_rdef(r, eid);
}

uint64_t
tape_rlosses(const struct tape_r *r)
{
	return r->losses;
}

int
tape_rend(const struct tape_r *r, uint64_t *records)
{
	if (r->ended && records != NULL)
		*records = r->end_records;
	return r->ended;
}

void
tape_rclose(struct tape_r *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->cap; i++) {
		if (r->defs[i] != NULL) {
			free(r->defs[i]->format);
			free(r->defs[i]->dsc);
			free(r->defs[i]);
		}
	}
	free(r->defs);
	bee_r_free(r);
	if (r->fd != STDIN_FILENO)
		close(r->fd);
	free(r);
}
