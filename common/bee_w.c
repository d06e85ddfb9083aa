/* bee_w.c: writing the trace file as BEE Ascii (doc/formats.md, section 4):
 * records as E_EVERY entries, definitions as E_DESCRIPTOR, process starts
 * and ends as E_REGISTRATION and E_DEATH, the end as E_FINAL; tape_w.c's
 * line writer puts grm's other meta lines in extension entries with what
 * this file gives it.  No printf on the way of a record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tape_int.h"

/* A type defined so far: what its records' class and attribute are. */
struct bee_wdef {
	int32_t		eid;
	uint32_t	node;
	uint32_t	pid;
	uint8_t		cls;
	uint8_t		attr;
	uint8_t		used;
};

static size_t
wslot(const struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid)
{
	size_t i;

	i = ((uint32_t)eid * 2654435761u ^ node * 40503u ^ pid * 2246822519u) &
	    (w->bcap - 1);
	while (w->bdefs[i].used && (w->bdefs[i].eid != eid ||
	    w->bdefs[i].node != node || w->bdefs[i].pid != pid))
		i = (i + 1) & (w->bcap - 1);
	return i;
}

/* Room for one more type, so that storing it cannot fail. */
static int
wreserve(struct tape_w *w)
{
	struct bee_wdef *old = w->bdefs;
	size_t i, ocap = w->bcap;

	if ((w->bn + 1) * 2 <= w->bcap)
		return 0;
	w->bcap = ocap == 0 ? 64 : ocap * 2;
	if ((w->bdefs = calloc(w->bcap, sizeof *w->bdefs)) == NULL) {
		w->bdefs = old;
		w->bcap = ocap;
		return -1;
	}
	for (i = 0; i < ocap; i++)
		if (old[i].used)
			w->bdefs[wslot(w, old[i].node, old[i].pid,
			    old[i].eid)] = old[i];
	free(old);
	return 0;
}

void
bee_w_free(struct tape_w *w)
{
	free(w->bdefs);
	w->bdefs = NULL;
	w->bcap = w->bn = w->bscoped = 0;
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

char *
bee_w_str(char *d, const char *lim, const char *s, size_t len)
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
	if ((d = fmt_esc(d, lim - 1, s, len, 1)) == NULL)
		return NULL;
	*d++ = '"';
	return d;
}

/* "(<s>": a group's first token. */
static char *
open_str(char *d, const char *lim, const char *s, size_t len)
{
	char *e = bee_w_str(d, lim, s, len);

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
	d = fmt_i64(d, eid);
	*d++ = ' ';
	d = fmt_u64(d, cls);
	*d++ = ' ';
	d = fmt_u64(d, attr);
	memcpy(d, " 0 ", 3);
	d = fmt_hex(d + 3, node);
	*d++ = ' ';
	d = fmt_u64(d, pid);
	*d++ = ' ';
	d = fmt_u64(d, tid);
	*d++ = ' ';
	return fmt_secs(d, ts);
}

char *
bee_w_cmd(char *d, unsigned cmd)
{
	*d++ = '(';
	d = fmt_u64(d, cmd);
	*d++ = ' ';
	return d;
}

int
bee_w_end_entry(struct tape_w *w, char *d, const char *lim)
{
	if (d == NULL || lim - d < 2)
		return tw_end(w, NULL);
	*d++ = ')';
	*d++ = ')';
	return tw_end(w, d);
}

int
bee_w_header(struct tape_w *w)
{
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	memcpy(d, "(" BEE_GRM_TAG, sizeof BEE_GRM_TAG);
	d = fmt_u64(d + sizeof BEE_GRM_TAG, BEE_GRM_VERSION);
	memcpy(d, " 0)", 3);
	return tw_end(w, d + 3);
}

size_t
bee_type_of(const char *format, char *t)
{
	const char *p;
	size_t n = 0;

	for (p = format; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		if (*++p == '%')
			continue;
		p += strspn(p, "-+ #0'");
		p += strspn(p, "0123456789");
		if (*p == '.')
			p += 1 + strspn(p + 1, "0123456789");
		if (*p == '\0')
			break;	/* not a format rec_parse_format takes */
		t[n++] = '%';
		while (*p != '\0' && strchr("hlqjzt", *p) != NULL)
			t[n++] = *p++;
		if (*p == '\0')
			break;
		t[n++] = *p;
	}
	return n;
}

int
bee_w_def(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
	  uint8_t cls, uint8_t attr, const char *format, size_t format_len,
	  const char *dsc, size_t dsc_len)
{
	struct bee_wdef *b;
	char type[REC_FMT_MAX];
	const char *lim;
	size_t i;
	char *d;

	if (wreserve(w) != 0)
		return -1;
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = bee_w_cmd(d, BEE_DESCRIPTOR);
	d = open_str(d, lim, type, bee_type_of(format, type));
	d = bee_w_str(d, lim, format, format_len);
	d = bee_w_str(d, lim, dsc, dsc_len);
	if (d == NULL || lim - d < 96)
		return tw_end(w, NULL);
	memcpy(d, ") ", 2);
	d = put_rec(d + 2, eid, cls, attr, node, pid, 0, 0);
	if (bee_w_end_entry(w, d, lim) != 0)
		return -1;
	i = wslot(w, node, pid, eid);
	b = &w->bdefs[i];
	if (!b->used) {
		w->bn++;
		w->bscoped += node != 0;
	}
	*b = (struct bee_wdef){ eid, node, pid, cls, attr, 1 };
	return 0;
}

int
bee_w_proc(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t ppid,
	   int how, uint64_t ts, int32_t status, const char *name)
{
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = bee_w_cmd(d, how == TAPE_PROC_START ? BEE_REGISTRATION : BEE_DEATH);
	d = open_str(d, lim, name, strlen(name));
	if (d == NULL || lim - d < 160)
		return tw_end(w, NULL);
	memcpy(d, " 0 ", 3);
	d = fmt_hex(d + 3, node);
	*d++ = ' ';
	d = fmt_u64(d, pid);
	memcpy(d, " 0 0) ", 6);
	d = put_rec(d + 6, -1, REC_CLASS_EVENT, REC_ATTR_POINT, node, pid, 0,
	    ts);
	d = bee_w_str(d, lim, tape_proc_words[how],
	    strlen(tape_proc_words[how]));
	d = tw_i(d, lim, status);
	d = tw_u(d, lim, ppid);
	return bee_w_end_entry(w, d, lim);
}

int
bee_w_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	     uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	const struct bee_wdef *b = NULL;
	const char *lim;
	unsigned i;
	char *d;

	if (w->bcap > 0) {
		if (w->bscoped > 0 && node != 0)
			b = &w->bdefs[wslot(w, node, pid, eid)];
		if (b == NULL || !b->used)
			b = &w->bdefs[wslot(w, 0, 0, eid)];
	}
	if (b == NULL || !b->used) {
		errno = EINVAL;
		return -1;
	}
	/* The line is committed by tw_end only: an early return drops it. */
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = bee_w_cmd(d, BEE_EVERY);
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
		case REC_K_STR:
			d = bee_w_str(d, lim, f[i].v.s.p, f[i].v.s.len);
			break;
		default:
			errno = EINVAL;
			return -1;
		}
	}
	return bee_w_end_entry(w, d, lim);
}

int
bee_w_end(struct tape_w *w)
{
	const char *lim;
	char *d;

	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = bee_w_cmd(d, BEE_FINAL);
	d = put_rec(d, -1, REC_CLASS_EVENT, REC_ATTR_POINT, 0, 0, 0, 0);
	d = tw_u(d, lim, w->records);
	return bee_w_end_entry(w, d, lim);
}
