/* SPDX-License-Identifier: MIT */
/* tr_bee_r.c: reading BEE Ascii (doc/formats.md, section 4): grm's own
 * files (header GRM-BEE-1) exactly, and files of the original BEE by its
 * rules.  The input is hostile: every length and number is checked. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"

#define GROUPS_MAX	8

/* BEE: a class's type descriptor, and each field's conversion. */
struct tr_bee_desc {
	struct rec_fmt	fmt;
	char		conv[REC_ARGS_MAX];
};

/* The reader's state (r->priv). */
struct tr_bee_r {
	int		grm;		/* grm's file, not the original BEE's */
	struct tr_bee_desc	*desc[256];	/* by class, from E_DESCRIPTOR */
	char		lbuf[TAPE_LINE_MAX + 1];	/* an entry joined
							   from lines */
};

/* An entry: its command and its groups' insides. */
struct entry {
	uint64_t	cmd;
	int		n;
	struct cur	g[GROUPS_MAX];
};

/* The event record every entry has (4.3). */
struct brec {
	int32_t		eid;
	uint8_t		cls;
	uint8_t		attr;
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	ts;
};

static int get1(struct tape_r *r, struct cur *c, char k,
		struct rec_field *f);
static const struct tr_fieldops tr_bee_fields = { get1, 1 };

static void
tr_bee_free(struct tape_r *r)
{
	struct tr_bee_r *b = r->priv;
	int i;

	if (b == NULL)
		return;
	for (i = 0; i < 256; i++)
		free(b->desc[i]);
	free(b);
	r->priv = NULL;
}

static const char *
skip(const char *p, const char *e)
{
	while (p < e && tr_blank(*p))
		p++;
	return p;
}

/* The header, "(version protocol)": 1 for grm's, 0 for the original
 * BEE's, -1 with *why. */
static int
header(const char *line, size_t len, const char **why)
{
	const char *p = line, *e = line + len, *v, *ve, *q;
	uint64_t n = 0;

	*why = "not a grm trace, nor BEE Ascii (bad header)";
	p = skip(p, e);
	if (p == e || *p++ != '(')
		return -1;
	p = skip(p, e);
	for (v = p; p < e && !tr_blank(*p) && *p != '(' && *p != ')' &&
	    *p != '"'; p++)
		;
	ve = p;
	p = skip(p, e);
	for (q = p; p < e && *p >= '0' && *p <= '9'; p++)
		;
	if (v == ve || q == p || p - q > 9)
		return -1;
	p = skip(p, e);
	if (p == e || *p++ != ')' || skip(p, e) != e)
		return -1;
	if ((size_t)(ve - v) < strlen(TR_BEE_GRM_TAG) ||
	    memcmp(v, TR_BEE_GRM_TAG, strlen(TR_BEE_GRM_TAG)) != 0)
		return 0;
	for (v += strlen(TR_BEE_GRM_TAG); v < ve; v++) {
		if (*v < '0' || *v > '9' || n > 1000) {
			*why = "unsupported grm BEE Ascii version";
			return -1;
		}
		n = n * 10 + (uint64_t)(*v - '0');
	}
	if (n < 1 || n > TR_BEE_GRM_VERSION) {
		*why = "unsupported grm BEE Ascii version";
		return -1;
	}
	return 1;
}

/*
 * The next entry's text: lines joined where one ends with a backslash
 * (the backslash becomes a blank).  Blank lines are skipped.  Returns 1, 0
 * at end of file, -1.
 */
static int
entry_text(struct tape_r *r, const char **text, size_t *len)
{
	struct tr_bee_r *b = r->priv;
	size_t n, have = 0;
	int rc, joined = 0, cont;
	char *l;

	r->eline = 0;
	for (;;) {
		if ((rc = tr_getln(r, &l, &n)) <= 0) {
			/* The last entry is cut (said once). */
			if (rc == 0 && joined && r->warn[0] == '\0')
				return tr_cut(r, "entry", have);
			return rc;
		}
		if (!joined)
			r->eline = r->lineno;
		while (n > 0 && tr_blank(l[n - 1]))
			n--;
		cont = n > 0 && l[n - 1] == '\\';
		if (!joined && !cont) {
			if (n == 0)
				continue;
			*text = l;
			*len = n;
			return 1;
		}
		n -= (size_t)cont;
		if (have + n + (size_t)cont > TAPE_LINE_MAX)
			return tr_fail(r, "entry longer than %d bytes",
			    TAPE_LINE_MAX);
		memcpy(b->lbuf + have, l, n);
		have += n;
		if (cont)
			b->lbuf[have++] = ' ';
		joined = 1;
		if (!cont) {
			*text = b->lbuf;
			*len = have;
			return 1;
		}
	}
}

/* Splits "(cmd (group) ...)" into en. */
static int
parse_entry(struct tape_r *r, const char *p, const char *e, struct entry *en)
{
	const char *s;

	p = skip(p, e);
	if (p == e || *p != '(')
		return tr_fail(r, "expected an entry: \"(\"");
	p = skip(p + 1, e);
	for (s = p; p < e && *p >= '0' && *p <= '9'; p++)
		;
	if (s == p || p - s > 9 || (p < e && !tr_blank(*p) && *p != '(' &&
	    *p != ')'))
		return tr_fail(r, "bad command number");
	en->cmd = strtoull(s, NULL, 10);
	en->n = 0;
	for (;;) {
		p = skip(p, e);
		if (p == e)
			return tr_fail(r, "entry without its \")\"");
		if (*p == ')')
			break;
		if (*p != '(')
			return tr_fail(r, "entry %llu: expected \"(\" or \")\"",
			    (unsigned long long)en->cmd);
		if (en->n == GROUPS_MAX)
			return tr_fail(r, "entry %llu: more than %d groups",
			    (unsigned long long)en->cmd, GROUPS_MAX);
		for (s = ++p; p < e && *p != ')'; p++) {
			if (*p == '(')
				return tr_fail(r, "entry %llu: nested "
				    "parentheses", (unsigned long long)en->cmd);
			if (*p != '"')
				continue;
			for (p++; p < e && *p != '"'; p++)
				if (*p == '\\' && p + 1 < e)
					p++;
			if (p == e)
				return tr_fail(r, "entry %llu: unterminated "
				    "string", (unsigned long long)en->cmd);
		}
		if (p == e)
			return tr_fail(r, "entry %llu: group without its \")\"",
			    (unsigned long long)en->cmd);
		en->g[en->n++] = (struct cur){ s, p, NULL, &tr_bee_fields };
		p++;
	}
	if (skip(p + 1, e) != e)
		return tr_fail(r, "entry %llu: text after its \")\"",
		    (unsigned long long)en->cmd);
	return 0;
}

static int
tr_bee_str(struct tape_r *r, struct cur *c, const char **s, uint32_t *len)
{
	const char *t;
	size_t n;

	if (tr_at_end(c))
		return tr_bad(c, "missing field");
	if (*c->p == '"')
		return tr_str(r, c, s, len);
	tr_tok(c, &t, &n);
	memcpy(r->sp, t, n);
	r->sp[n] = '\0';
	*s = r->sp;
	*len = (uint32_t)n;
	r->sp += n + 1;
	return 0;
}

/* One field: strings and tokens as BEE Ascii tokens, numbers as text. */
static int
get1(struct tape_r *r, struct cur *c, char k, struct rec_field *f)
{
	if (k == 's' || k == 't' || k == '=')
		return tr_bee_str(r, c, &f->v.s.p, &f->v.s.len);
	return tr_text_get1(r, c, k, f);
}

/* Seconds, and up to nine digits of a fraction: "27.858328". */
static int
get_secs(struct cur *c, uint64_t *ns)
{
	const char *s, *dot;
	uint64_t sec, frac = 0;
	size_t n, k;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	if ((dot = memchr(s, '.', n)) == NULL)
		dot = s + n;
	k = (size_t)(s + n - dot);
	if (tr_mag(c, s, (size_t)(dot - s), UINT64_MAX / 1000000000u,
	    &sec) != 0 || k == 1 || k > 10 ||
	    (k > 0 && tr_mag(c, dot + 1, k - 1, UINT64_MAX, &frac) != 0))
		return tr_bad(c, "bad time (seconds, and at most nine "
		    "decimals)");
	for (; k < 10; k++)
		frac *= 10;
	if (sec * 1000000000u > UINT64_MAX - frac)
		return tr_bad(c, "time out of range");
	*ns = sec * 1000000000u + frac;
	return 0;
}

/* s[0..n) in base 8 or 16 (its digits only), up to max: 0, or -1. */
static int
based(const char *s, size_t n, unsigned base, uint64_t max, uint64_t *v)
{
	unsigned h;
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		h = s[i] >= '0' && s[i] <= '9' ? (unsigned)(s[i] - '0') :
		    (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f' ?
		    (unsigned)((s[i] | 0x20) - 'a' + 10) : 99;
		if (h >= base || *v > (max - h) / base)
			return -1;
		*v = *v * base + h;
	}
	return n > 0 ? 0 : -1;
}

/* A hexadecimal u32 (BEE's node, an internet address). */
static int
get_hex32(struct cur *c, uint32_t *v)
{
	const char *s;
	uint64_t x;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	if (based(s, n, 16, UINT32_MAX, &x) != 0)
		return tr_bad(c, "bad hexadecimal number (at most ffffffff)");
	*v = (uint32_t)x;
	return 0;
}

/* "(eid cls attr x node pid tid time": the event record of an entry; x,
 * a number the manual does not name, is read and not kept. */
static int
get_rec(struct tape_r *r, struct cur *c, struct brec *b, const char *what)
{
	struct rec_field f[5];
	int i;

	for (i = 0; i < 4; i++)
		if (get1(r, c, "ibbI"[i], &f[i]) != 0)
			goto bad;
	if (get_hex32(c, &b->node) != 0 || get1(r, c, 'U', &f[4]) != 0)
		goto bad;
	b->pid = (uint32_t)f[4].v.u;
	if (get1(r, c, 'U', &f[4]) != 0 || get_secs(c, &b->ts) != 0)
		goto bad;
	b->tid = (uint32_t)f[4].v.u;
	b->eid = (int32_t)f[0].v.i;
	b->cls = (uint8_t)f[1].v.u;
	b->attr = (uint8_t)f[2].v.u;
	return 0;
bad:
	return tr_fail(r, "%s: event record: %s", what, c->why);
}

/*
 * BEE: makes the definition at (node, pid, eid) say this class, attribute
 * and format; name, if not NULL, becomes its description (else it keeps
 * its own).
 */
static struct tape_def *
reshape(struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid,
	uint8_t cls, uint8_t attr, const char *format, const char *name)
{
	struct tape_def *d = tr_def_at(r, node, pid, eid);

	if (d == NULL || strcmp(d->format, format) != 0 ||
	    (name != NULL && strcmp(d->dsc, name) != 0))
		d = tr_define(r, eid, cls, attr, format, name != NULL ? name :
		    d != NULL ? d->dsc : "", node, pid);
	if (d != NULL) {
		d->cls = tr_def_pub(d)->cls = cls;
		d->attr = tr_def_pub(d)->attr = attr;
	}
	return d;
}

/*
 * A token of a BEE variant as kind k, by the conversion conv of a type
 * descriptor (0: as it looks): 0, or -1 if it is not one.
 */
static int
as_kind(struct tape_r *r, const char *s, size_t n, int k, char conv,
	struct rec_field *f)
{
	struct cur c = { s, s + n, NULL, &tr_bee_fields };

	f->kind = k;
	switch (k) {
	case REC_K_STR:
		return tr_bee_str(r, &c, &f->v.s.p, &f->v.s.len);
	case REC_K_DOUBLE:
		return tr_double(&c, s, n, &f->v.d);
	case REC_K_UINT:
		if (conv == 'x' || conv == 'X' || conv == 'p') {
			if (n > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
				s += 2;
				n -= 2;
			}
			return based(s, n, 16, UINT64_MAX, &f->v.u);
		}
		if (conv == 'o')
			return based(s, n, 8, UINT64_MAX, &f->v.u);
		return tr_mag(&c, s, n, UINT64_MAX, &f->v.u);
	default:
		return tr_int(&c, s, n, INT64_MIN, INT64_MAX, &f->v.i);
	}
}

/* What a token looks like: a string if quoted, else an integer, a
 * number, or a string. */
static int
guess(struct tape_r *r, const char *s, size_t n, struct rec_field *f)
{
	char *sp = r->sp;

	if (*s != '"') {
		if (as_kind(r, s, n, REC_K_INT, 0, f) == 0 ||
		    as_kind(r, s, n, REC_K_UINT, 0, f) == 0 ||
		    as_kind(r, s, n, REC_K_DOUBLE, 0, f) == 0)
			return 0;
	}
	r->sp = sp;
	return as_kind(r, s, n, REC_K_STR, 0, f);
}

/*
 * The variant of a record of a BEE file (4.7): its name, if it carries
 * one, and its values, by its class's type descriptor when they fit it,
 * else as they look.
 */
static int
tr_bee_variant(struct tape_r *r, struct cur *c, struct tape_ev *ev,
	    const struct brec *b)
{
	static const char *const fmts[] = { "%ld", "%lu", "%f", "%s" };
	const struct tr_bee_desc *desc = ((struct tr_bee_r *)r->priv)->desc[b->cls];
	const char *tk[REC_ARGS_MAX], *name = NULL, *s;
	size_t tl[REC_ARGS_MAX];
	const struct tape_def *sd;
	char format[REC_ARGS_MAX * 4], *sp = r->sp;
	unsigned n = 0, i;
	int fit = 0;

	while (!tr_at_end(c)) {
		if (n == REC_ARGS_MAX)
			return tr_fail(r, "E_EVERY: more than %d values",
			    REC_ARGS_MAX);
		/* A token; a quoted one may hold blanks. */
		s = c->p;
		if (*c->p == '"') {
			for (c->p++; c->p < c->e && *c->p != '"'; c->p++)
				if (*c->p == '\\' && c->p + 1 < c->e)
					c->p++;
			c->p += c->p < c->e;
		}
		while (c->p < c->e && !tr_blank(*c->p))
			c->p++;
		tk[n] = s;
		tl[n++] = (size_t)(c->p - s);
	}
	if (desc != NULL && desc->fmt.n == n)
		for (fit = 1, i = 0; i < n && fit; i++)
			fit = as_kind(r, tk[i], tl[i], desc->fmt.kind[i],
			    desc->conv[i], &ev->f[i]) == 0;
	if (!fit) {
		r->sp = sp;
		for (i = 0; i < n; i++)
			if (guess(r, tk[i], tl[i], &ev->f[i]) != 0)
				return tr_fail(r, "E_EVERY: value %u: a bad "
				    "quoted string", i + 1);
	}
	sd = tr_def_at(r, b->node, b->pid, b->eid);
	if (n == 1 && ev->f[0].kind == REC_K_STR &&
	    (b->attr == REC_ATTR_NAME || ((sd == NULL || sd->dsc[0] == '\0') &&
	    !fit && (b->cls == REC_CLASS_PROCEDURE ||
	    b->cls == REC_CLASS_EVENT || desc != NULL)))) {
		/* A name: an E_NAME record's value; or piggybacked on the
		 * sensor's first event, where it is no value. */
		name = ev->f[0].v.s.p;
		if (memchr(name, '\0', ev->f[0].v.s.len) != NULL)
			return tr_fail(r, "E_EVERY: NUL in a sensor name");
		n = b->attr == REC_ATTR_NAME;
	}
	format[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(format, " ");
		strcat(format, fmts[ev->f[i].kind]);
	}
	if ((ev->def = reshape(r, b->node, b->pid, b->eid, b->cls, b->attr,
	    format, name)) == NULL)
		return -1;
	/* The global definition, by which prove names an eid: the latest
	 * shape, and the latest name known. */
	if (name == NULL && ev->def->dsc[0] != '\0')
		name = ev->def->dsc;
	if ((b->node != 0 || b->pid != 0) && reshape(r, 0, 0, b->eid, b->cls,
	    b->attr, format, name) == NULL)
		return -1;
	ev->n = n;
	return 0;
}

/* E_EVERY: a record. */
static int
every(struct tape_r *r, struct entry *en, struct tape_ev *ev)
{
	struct cur *c = &en->g[0];
	struct brec b;

	if (en->n != 1)
		return tr_fail(r, "E_EVERY: %d groups (one: the event record)",
		    en->n);
	if (get_rec(r, c, &b, "E_EVERY") != 0)
		return -1;
	memset(ev, 0, offsetof(struct tape_ev, f));
	ev->kind = TAPE_RECORD;
	ev->ts = b.ts;
	ev->node = b.node;
	ev->pid = b.pid;
	ev->tid = b.tid;
	ev->eid = b.eid;
	if (!((struct tr_bee_r *)r->priv)->grm)
		return tr_bee_variant(r, c, ev, &b);
	if ((ev->def = tr_def_for(r, b.node, b.pid, b.eid)) == NULL)
		return tr_fail(r, "record before definition of eid %d",
		    (int)b.eid);
	if (ev->def->cls != b.cls || ev->def->attr != b.attr)
		return tr_fail(r, "E_EVERY: class %u and attribute %u of eid "
		    "%d are not its definition's (%u %u)", b.cls, b.attr,
		    (int)b.eid, ev->def->cls, ev->def->attr);
	return tr_fields(r, c, ev);
}

/* E_DESCRIPTOR: a type definition (grm), or a class's type descriptor
 * (BEE). */
static int
descriptor(struct tape_r *r, struct entry *en, struct tape_ev *ev)
{
	struct rec_field v[3];
	struct tr_bee_desc *bd;
	struct rec_fmt fmt;
	struct brec b;
	char t[REC_FMT_MAX];
	int i;

	if (en->n != 2)
		return tr_fail(r, "E_DESCRIPTOR: %d groups (two: the type, the "
		    "event record)", en->n);
	for (i = 0; i < (((struct tr_bee_r *)r->priv)->grm ? 3 : 1); i++)
		if (get1(r, &en->g[0], 's', &v[i]) != 0)
			return tr_fail(r, "E_DESCRIPTOR: %s", en->g[0].why);
	if (get_rec(r, &en->g[1], &b, "E_DESCRIPTOR") != 0)
		return -1;
	for (i = 0; i < (((struct tr_bee_r *)r->priv)->grm ? 3 : 1); i++)
		if (memchr(v[i].v.s.p, '\0', v[i].v.s.len) != NULL)
			return tr_fail(r, "E_DESCRIPTOR of eid %d: NUL in a "
			    "string", (int)b.eid);
	if (rec_parse_format(v[((struct tr_bee_r *)r->priv)->grm].v.s.p, &fmt) != 0)
		return tr_fail(r, "E_DESCRIPTOR of eid %d: bad format",
		    (int)b.eid);
	if (!((struct tr_bee_r *)r->priv)->grm) {
		/* BEE: the type of the variant of the record's class. */
		if (((struct tr_bee_r *)r->priv)->desc[b.cls] == NULL &&
		    (((struct tr_bee_r *)r->priv)->desc[b.cls] = malloc(sizeof *bd)) == NULL)
			return tr_fail(r, "out of memory");
		bd = ((struct tr_bee_r *)r->priv)->desc[b.cls];
		bd->fmt = fmt;
		tr_fmt_convs(v[0].v.s.p, bd->conv);
		return 0;
	}
	if (strlen(v[0].v.s.p) != tr_fmt_bee_type(v[1].v.s.p, t) ||
	    memcmp(t, v[0].v.s.p, strlen(v[0].v.s.p)) != 0)
		return tr_fail(r, "E_DESCRIPTOR of eid %d: type %s is not that "
		    "of its format", (int)b.eid, v[0].v.s.p);
	if (b.node == 0 && b.pid != 0)
		return tr_fail(r, "E_DESCRIPTOR of eid %d: scope of node 0",
		    (int)b.eid);
	return tr_meta_apply(r, TR_M_DEF, (struct rec_field []){
	    rec_fi(b.eid), rec_fu(b.cls), rec_fu(b.attr), v[1], v[2],
	    rec_fu(b.node), rec_fu(b.pid) },
	    b.node != 0 ? 7 : 5, ev);
}

/* E_REGISTRATION, E_DEATH: a process started or ended.  1 if ev was
 * filled and is wanted, 0, -1. */
static int
proc(struct tape_r *r, struct entry *en, struct tape_ev *ev)
{
	const char *what = en->cmd == TR_BEE_REGISTRATION ? "E_REGISTRATION" :
	    "E_DEATH";
	struct rec_field v[4];
	struct brec b;
	uint32_t ppid = 0;
	int32_t status = 0;
	int how, i;

	if (en->n != 2)
		return tr_fail(r, "%s: %d groups (two: the client, the event "
		    "record)", what, en->n);
	if (get1(r, &en->g[0], 's', &v[0]) != 0)
		return tr_fail(r, "%s: client name: %s", what, en->g[0].why);
	if (get_rec(r, &en->g[1], &b, what) != 0)
		return -1;
	how = en->cmd == TR_BEE_REGISTRATION ? TAPE_PROC_START : TAPE_PROC_GONE;
	/* grm's variant: how, status, parent */
	if (!tr_at_end(&en->g[1])) {
		for (i = 1; i < 4; i++)
			if (get1(r, &en->g[1], "sIU"[i - 1], &v[i]) != 0)
				return tr_fail(r, "%s: %s", what,
				    en->g[1].why);
		how = tr_proc_word(v[1].v.s.p, v[1].v.s.len);
		if (how < 0 ||
		    (how == TAPE_PROC_START) != (en->cmd == TR_BEE_REGISTRATION))
			return tr_fail(r, "%s: bad word %s", what, v[1].v.s.p);
		if (v[2].v.i < INT32_MIN || v[2].v.i > INT32_MAX)
			return tr_fail(r, "%s: status out of range", what);
		status = (int32_t)v[2].v.i;
		ppid = (uint32_t)v[3].v.u;
	}
	if (!tr_at_end(&en->g[1]))
		return tr_fail(r, "%s: too many values", what);
	return tr_meta_apply(r, TR_M_PROC, (struct rec_field []){
	    rec_fu(b.node), rec_fu(b.pid), rec_fu(ppid),
	    rec_fs(tr_proc_words[how], strlen(tr_proc_words[how])),
	    rec_fu(b.ts), rec_fi(status), v[0] }, 7, ev);
}

/* E_FINAL: the end, with the number of records (grm), or a client's
 * end (BEE): the records so far. */
static int
final(struct tape_r *r, struct entry *en, struct tape_ev *ev)
{
	struct rec_field v;
	struct brec b;

	if (en->n != 1)
		return tr_fail(r, "E_FINAL: %d groups (one: the event record)",
		    en->n);
	if (get_rec(r, &en->g[0], &b, "E_FINAL") != 0)
		return -1;
	v.v.u = r->nrec;
	if ((((struct tr_bee_r *)r->priv)->grm || !tr_at_end(&en->g[0])) &&
	    get1(r, &en->g[0], 'u', &v) != 0)
		return tr_fail(r, "E_FINAL: records: %s", en->g[0].why);
	if (!tr_at_end(&en->g[0]))
		return tr_fail(r, "E_FINAL: too many values");
	return tr_meta_apply(r, TR_M_END, &v, 1, ev);
}

static int
tr_bee_next(struct tape_r *r, struct tape_ev *ev)
{
	struct entry en;
	const char *text = NULL;
	size_t len = 0;
	int rc;

	while (!r->failed) {
		if ((rc = entry_text(r, &text, &len)) <= 0)
			return rc;
		r->sp = r->sbuf;
		if (parse_entry(r, text, text + len, &en) != 0)
			return -1;
		switch (en.cmd) {
		case TR_BEE_EVERY:
			if (every(r, &en, ev) != 0)
				return -1;
			r->nrec++;
			return 1;
		case TR_BEE_DESCRIPTOR:
			rc = descriptor(r, &en, ev);
			break;
		case TR_BEE_REGISTRATION:
		case TR_BEE_DEATH:
			rc = proc(r, &en, ev);
			break;
		case TR_BEE_FINAL:
			rc = final(r, &en, ev);
			break;
		case TR_BEE_GRM:
			if (en.n != 1 || tr_at_end(&en.g[0]))
				return tr_fail(r, "grm entry: %d groups (one, "
				    "not empty)", en.n);
			rc = tr_meta(r, &en.g[0], ev);
			break;
		default:
			/* E_INIT (an interpreter's window and display),
			 * and commands this reader does not know. */
			rc = 0;
		}
		if (rc != 0)
			return rc;
	}
	return -1;
}

static const struct tr_rops tr_bee_rops = { tr_bee_next, NULL, tr_bee_free };

int
tr_bee_open(struct tape_r *r, char *line, size_t len, const char **why)
{
	struct tr_bee_r *b;
	int grm;

	/* BEE Ascii starts with its header, "(version protocol)". */
	if (line[strspn(line, " \t")] != '(')
		return 0;
	if ((grm = header(line, len, why)) < 0)
		return -1;
	if ((b = calloc(1, sizeof *b)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	b->grm = grm;
	r->fmt = grm ? GRMTRACE_FMT_BEE : GRMTRACE_FMT_BEE_ORIG;
	r->priv = b;
	r->ops = &tr_bee_rops;
	return 1;
}
