/* SPDX-License-Identifier: MIT */
/* tr_bee_w.c: writing the trace file as BEE Ascii (doc/formats.md, section
 * 4): records as E_EVERY entries, definitions as E_DESCRIPTOR, process
 * starts and ends as E_REGISTRATION and E_DEATH, the end as E_FINAL, and
 * grm's other meta lines as extension entries.  No printf on the way of a
 * record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"

/* A type defined so far (by struct tr_defkey): what its records' class
 * and attribute are. */
struct tr_bee_wdef {
	uint8_t		cls;
	uint8_t		attr;
};

static const struct hmap_type wdefs_type = {
	sizeof(struct tr_defkey), sizeof(struct tr_bee_wdef), 64, tr_defkey_hash
};

/* The writer's state (w->priv): the types defined so far. */
struct tr_bee_w {
	struct hmap	defs;
	size_t		scoped;		/* of which scoped to a process */
};

static int
tr_bee_wopen(struct tape_w *w)
{
	struct tr_bee_w *b;

	if ((b = calloc(1, sizeof *b)) == NULL)
		return -1;
	hmap_init(&b->defs, &wdefs_type);
	w->priv = b;
	return 0;
}

static void
tr_bee_wfree(struct tape_w *w)
{
	struct tr_bee_w *b = w->priv;

	if (b != NULL)
		hmap_free(&b->defs);
	free(b);
	w->priv = NULL;
}

/* s[0..len) can stand as a token as it is. */
static int
plain(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++)
		if (u[i] <= 0x20 || u[i] >= 0x7f || u[i] == '"' ||
		    u[i] == '\\' || u[i] == '(' || u[i] == ')')
			return 0;
	return 1;
}

static char *
tr_bee_str(char *d, const char *lim, const char *s, size_t len)
{
	if (d == NULL || lim - d < 3)
		return NULL;
	*d++ = ' ';
	if (plain(s, len)) {
		if ((size_t)(lim - d) < len)
			return NULL;
		memcpy(d, s, len);
		return d + len;
	}
	*d++ = '"';
	if ((d = tr_fmt_esc(d, lim - 1, s, len, 1)) == NULL)
		return NULL;
	*d++ = '"';
	return d;
}

/* "(<s>": a group's first token. */
static char *
open_str(char *d, const char *lim, const char *s, size_t len)
{
	char *e = tr_bee_str(d, lim, s, len);

	if (e != NULL)
		*d = '(';
	return e;
}

/*
 * "(eid cls attr 0 node pid tid secs": an event record, open for its
 * variant (doc/formats.md 4.3).  There is always room for it.
 */
static char *
put_rec(char *d, int32_t eid, unsigned cls, unsigned attr, uint32_t node,
	uint32_t pid, uint32_t tid, uint64_t ts)
{
	*d++ = '(';
	d = tr_fmt_i64(d, eid);
	*d++ = ' ';
	d = tr_fmt_u64(d, cls);
	*d++ = ' ';
	d = tr_fmt_u64(d, attr);
	memcpy(d, " 0 ", 3);
	d = tr_fmt_hex(d + 3, node);
	*d++ = ' ';
	d = tr_fmt_u64(d, pid);
	*d++ = ' ';
	d = tr_fmt_u64(d, tid);
	*d++ = ' ';
	return tr_fmt_secs(d, ts);
}

static char *
tr_bee_cmd(char *d, unsigned cmd)
{
	*d++ = '(';
	d = tr_fmt_u64(d, cmd);
	*d++ = ' ';
	return d;
}

static int
end_entry(struct tape_w *w, char *d, const char *lim)
{
	if (d == NULL || lim - d < 2)
		return tw_end(w, NULL);
	*d++ = ')';
	*d++ = ')';
	return tw_end(w, d);
}

static int
tr_bee_header(struct tape_w *w)
{
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	memcpy(d, "(" TR_BEE_GRM_TAG, sizeof TR_BEE_GRM_TAG);
	d = tr_fmt_u64(d + sizeof TR_BEE_GRM_TAG, TR_BEE_GRM_VERSION);
	memcpy(d, " 0)", 3);
	return tw_end(w, d + 3);
}

/* E_DESCRIPTOR: a definition (#DEF: eid cls attr format dsc [node pid]). */
static int
tr_bee_def(struct tape_w *w, const struct rec_field *v, unsigned n)
{
	struct tr_bee_w *bw = w->priv;
	int32_t eid = (int32_t)v[0].v.i;
	uint8_t cls = (uint8_t)v[1].v.u, attr = (uint8_t)v[2].v.u;
	uint32_t node = n > 5 ? (uint32_t)v[5].v.u : 0;
	uint32_t pid = n > 6 ? (uint32_t)v[6].v.u : 0;
	const struct tr_defkey k = { node, pid, eid };
	struct tr_bee_wdef *b;
	char type[REC_FMT_MAX];
	const char *lim;
	char *d;
	int added;

	/* The type is stored once its entry is written: an entry that fails
	 * leaves the table as it was. */
	if ((b = hmap_put(&bw->defs, &k, &added)) == NULL)
		return -1;
	if ((d = tw_begin(w, &lim)) == NULL)
		goto fail;
	d = tr_bee_cmd(d, TR_BEE_DESCRIPTOR);
	/* The format is NUL-terminated (tape_def_scoped). */
	d = open_str(d, lim, type, tr_fmt_bee_type(v[3].v.s.p, type));
	d = tr_bee_str(d, lim, v[3].v.s.p, v[3].v.s.len);
	d = tr_bee_str(d, lim, v[4].v.s.p, v[4].v.s.len);
	if (d == NULL || lim - d < 96)
		goto fail;
	memcpy(d, ") ", 2);
	d = put_rec(d + 2, eid, cls, attr, node, pid, 0, 0);
	if (end_entry(w, d, lim) != 0)
		goto undo;
	*b = (struct tr_bee_wdef){ cls, attr };
	bw->scoped += added && node != 0;
	return 0;
fail:
	tw_end(w, NULL);
undo:
	if (added)
		hmap_del_value(&bw->defs, b);
	return -1;
}

/* E_REGISTRATION, E_DEATH: #PROC node pid ppid how ts status name. */
static int
tr_bee_proc(struct tape_w *w, const struct rec_field *v)
{
	uint32_t node = (uint32_t)v[0].v.u, pid = (uint32_t)v[1].v.u;
	int how = tr_proc_word(v[3].v.s.p, v[3].v.s.len);
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = tr_bee_cmd(d, how == TAPE_PROC_START ? TR_BEE_REGISTRATION :
	    TR_BEE_DEATH);
	d = open_str(d, lim, v[6].v.s.p, v[6].v.s.len);
	if (d == NULL || lim - d < 160)
		return tw_end(w, NULL);
	memcpy(d, " 0 ", 3);
	d = tr_fmt_hex(d + 3, node);
	*d++ = ' ';
	d = tr_fmt_u64(d, pid);
	memcpy(d, " 0 0) ", 6);
	d = put_rec(d + 6, -1, REC_CLASS_EVENT, REC_ATTR_POINT, node, pid, 0,
	    v[4].v.u);
	d = tr_bee_str(d, lim, v[3].v.s.p, v[3].v.s.len);
	d = tw_i(d, lim, v[5].v.i);
	d = tw_u(d, lim, v[2].v.u);
	return end_entry(w, d, lim);
}

static int
tr_bee_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	   uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	const struct tr_bee_w *bw = w->priv;
	const struct tr_bee_wdef *b = NULL;
	struct tr_defkey k = { node, pid, eid };
	const char *lim;
	unsigned i;
	char *d;

	if (bw->scoped > 0 && node != 0)
		b = hmap_find(&bw->defs, &k);
	if (b == NULL) {
		k.node = k.pid = 0;
		b = hmap_find(&bw->defs, &k);
	}
	if (b == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* The line is committed by tw_end only: an early return drops it. */
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = tr_bee_cmd(d, TR_BEE_EVERY);
	d = put_rec(d, eid, b->cls, b->attr, node, pid, tid, ts);
	for (i = 0; i < n; i++) {
		switch (f[i].kind) {
		case REC_K_INT:
			d = tw_i(d, lim, f[i].v.i);
			break;
		case REC_K_UINT:
			d = tw_u(d, lim, f[i].v.u);
			break;
		case REC_K_DOUBLE:
			d = tw_d(d, lim, f[i].v.d);
			break;
		default:
			d = tr_bee_str(d, lim, f[i].v.s.p, f[i].v.s.len);
		}
	}
	return end_entry(w, d, lim);
}

/* E_FINAL: #END records. */
static int
tr_bee_final(struct tape_w *w, uint64_t records)
{
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = tr_bee_cmd(d, TR_BEE_FINAL);
	d = put_rec(d, -1, REC_CLASS_EVENT, REC_ATTR_POINT, 0, 0, 0, 0);
	d = tw_u(d, lim, records);
	return end_entry(w, d, lim);
}

/* The meta lines BEE has entries for, and grm's extension entry,
 * "(100 (#KEY field...))", for the others. */
static int
tr_bee_meta(struct tape_w *w, int m, const struct rec_field *v, unsigned n)
{
	const char *lim, *key = tr_schema[m].key;
	char *d;

	switch (m) {
	case TR_M_HEADER:
		return tr_bee_header(w);
	case TR_M_DEF:
		return tr_bee_def(w, v, n);
	case TR_M_PROC:
		return tr_bee_proc(w, v);
	case TR_M_END:
		return tr_bee_final(w, v[0].v.u);
	}
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = tr_bee_cmd(d, TR_BEE_GRM);
	*d++ = '(';
	memcpy(d, key, strlen(key));
	d += strlen(key);
	return end_entry(w, tw_fields(d, lim, m, v, n, tr_bee_str, tr_bee_str),
	    lim);
}

const struct tr_wops tr_bee_wops = {
	.open = tr_bee_wopen,
	.meta = tr_bee_meta,
	.record = tr_bee_record,
	.free = tr_bee_wfree,
};
