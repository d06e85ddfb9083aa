/* SPDX-License-Identifier: MIT */
/* tr_text_w.c: writing the text trace format (doc/formats.md section 1):
 * one line per meta line and per record.  No printf on the way of a
 * record. */
#include <errno.h>
#include <string.h>

#include "tr_int.h"

#define NUM_MAX		(TR_FMT_NUM_MAX + 1)	/* a number with its space */

char *
tr_text_quote(char *d, const char *lim, const char *s, size_t len)
{
	if (d == NULL || lim - d < 3)
		return NULL;
	*d++ = ' ';
	*d++ = '"';
	if ((d = tr_fmt_esc(d, lim - 1, s, len, 0)) == NULL)
		return NULL;
	*d++ = '"';
	return d;
}

char *
tr_text_field(char *d, const char *lim, const struct rec_field *f)
{
	if (f->kind == REC_K_STR)
		return tr_text_quote(d, lim, f->v.s.p, f->v.s.len);
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	switch (f->kind) {
	case REC_K_INT:
		return tr_fmt_i64(d, f->v.i);
	case REC_K_UINT:
		return tr_fmt_u64(d, f->v.u);
	default:
		return tr_fmt_double(d, f->v.d);
	}
}

/* " <s>" as one token: bytes that are blank or not ASCII become '_', and
 * an empty token is "-". */
static char *
put_tok(char *d, const char *lim, const char *s, size_t len)
{
	unsigned char c;
	size_t i;

	if (d == NULL || lim - d < 2)
		return NULL;
	*d++ = ' ';
	if (len == 0) {
		s = "-";
		len = 1;
	}
	for (i = 0; i < len; i++) {
		if (d == lim)
			return NULL;
		c = (unsigned char)s[i];
		*d++ = c > 0x20 && c < 0x7f ? (char)c : '_';
	}
	return d;
}

static int
text_meta(struct tape_w *w, int m, const struct rec_field *v, unsigned n)
{
	const char *lim, *key = tr_schema[m].key;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	memcpy(d, key, strlen(key));
	d += strlen(key);
	return tw_end(w, tw_fields(d, lim, m, v, n, put_tok,
	    tr_text_quote));
}

static int
text_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	    uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	const char *lim;
	unsigned i;
	char *d;

	/* The line is committed by tw_end only: an early return drops it. */
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = tr_fmt_u64(d, ts);
	d = tw_u(d, lim, node);
	d = tw_u(d, lim, pid);
	d = tw_u(d, lim, tid);
	d = tw_i(d, lim, eid);
	for (i = 0; i < n; i++)
		d = tr_text_field(d, lim, &f[i]);
	return tw_end(w, d);
}

const struct tr_wops tr_text_wops = {
	.meta = text_meta,
	.record = text_record,
};
