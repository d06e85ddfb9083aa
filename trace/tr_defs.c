/* SPDX-License-Identifier: MIT */
/* tr_defs.c: the event type definitions a trace reader has read, global
 * and scoped to one process (doc/formats.md 1.3, #DEF); memory grows with
 * their number only. */
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"

uint32_t
tr_defkey_hash(const void *key)
{
	const struct tr_defkey *k = key;

	return (uint32_t)k->eid * 2654435761u ^ k->node * 40503u ^
	    k->pid * 2246822519u;
}

static const struct hmap_type defs_type = {
	sizeof(struct tr_defkey), sizeof(struct tape_def *), 64, tr_defkey_hash
};

void
tr_def_fill_pub(struct grmtrace_def *pub, const struct tape_def *d)
{
	*pub = (struct grmtrace_def){ .eid = d->eid, .cls = d->cls,
	    .attr = d->attr, .node = d->node, .pid = d->pid,
	    .format = d->format, .description = d->dsc, .nfields = d->fmt.n };
	memcpy(pub->type, d->fmt.kind, d->fmt.n);
	tr_fmt_convs(d->format, pub->conv);
}

/* Fills d (and its public view) with a definition; d takes f2 and d2. */
static void
def_set(struct tape_def *d, int32_t eid, uint8_t cls, uint8_t attr,
	char *f2, char *d2, uint32_t node, uint32_t pid,
	const struct rec_fmt *fmt)
{
	free(d->format);
	free(d->dsc);
	*d = (struct tape_def){ .eid = eid, .cls = cls, .attr = attr,
	    .node = node, .pid = pid, .format = f2, .dsc = d2, .fmt = *fmt };
	tr_def_fill_pub(tr_def_pub(d), d);
}

/* Room for one more definition in r->order: 0, or -1. */
static int
order_reserve(struct tape_r *r)
{
	struct tape_def **o;
	size_t c;

	if (r->norder < r->corder)
		return 0;
	c = r->corder == 0 ? 64 : 2 * r->corder;
	if ((o = realloc(r->order, c * sizeof *o)) == NULL)
		return -1;
	r->order = o;
	r->corder = c;
	return 0;
}

struct tape_def *
tr_define(struct tape_r *r, int32_t eid, uint8_t cls, uint8_t attr,
	  const char *format, const char *dsc, uint32_t node, uint32_t pid)
{
	const struct tr_defkey k = { node, pid, eid };
	struct tape_def *d, **slot;
	struct rec_fmt fmt;
	char *f2, *d2;

	if (rec_parse_format(format, &fmt) != 0) {
		tr_fail(r, "definition of eid %d: bad format", (int)eid);
		return NULL;
	}
	f2 = strdup(format);
	d2 = strdup(dsc);
	if ((d = tr_def_at(r, node, pid, eid)) == NULL && f2 != NULL &&
	    d2 != NULL && order_reserve(r) == 0 &&
	    (d = calloc(1, sizeof(struct tr_def))) != NULL) {
		if (r->defs.type == NULL)
			hmap_init(&r->defs, &defs_type);
		if ((slot = hmap_put(&r->defs, &k, NULL)) == NULL) {
			free(d);
			d = NULL;
		} else {
			*slot = d;
			r->order[r->norder++] = d;
			r->nscoped += node != 0;
		}
	}
	if (f2 == NULL || d2 == NULL || d == NULL) {
		free(f2);
		free(d2);
		tr_fail(r, "out of memory");
		return NULL;
	}
	def_set(d, eid, cls, attr, f2, d2, node, pid, &fmt);
	return d;
}

struct tape_def *
tr_def_at(const struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid)
{
	const struct tr_defkey k = { node, pid, eid };
	struct tape_def **slot = hmap_find(&r->defs, &k);

	return slot != NULL ? *slot : NULL;
}

const struct tape_def *
tr_def_for(const struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid)
{
	const struct tape_def *d;

	if (r->nscoped > 0 && node != 0 &&
	    (d = tr_def_at(r, node, pid, eid)) != NULL)
		return d;
	return tr_def_at(r, 0, 0, eid);
}

void
tr_defs_free(struct tape_r *r)
{
	size_t i;

	for (i = 0; i < r->norder; i++) {
		free(r->order[i]->format);
		free(r->order[i]->dsc);
		free(r->order[i]);
	}
	hmap_free(&r->defs);
	free(r->order);
	r->order = NULL;
	r->norder = r->corder = 0;
	r->nscoped = 0;
}
