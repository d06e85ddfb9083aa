/* tr_defs.c: the event type definitions a trace reader has read, global
 * and scoped to one process (doc/formats.md 1.3, #DEF); memory grows with
 * their number only. */
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"

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
	struct grmtrace_def *pub;
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
		d = calloc(1, sizeof(struct tr_def));
	if (f2 == NULL || d2 == NULL || d == NULL) {
		free(f2);
		free(d2);
		if (d != r->defs[i])
			free(d);
		tr_fail(r, "out of memory");
		return NULL;
	}
	if (r->defs[i] == NULL) {
		if (r->norder == r->corder) {
			size_t c = r->corder == 0 ? 64 : 2 * r->corder;
			struct tape_def **o = realloc(r->order, c * sizeof *o);

			if (o == NULL) {
				free(f2);
				free(d2);
				free(d);
				tr_fail(r, "out of memory");
				return NULL;
			}
			r->order = o;
			r->corder = c;
		}
		r->order[r->norder++] = d;
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
	pub = tr_def_pub(d);
	memset(pub, 0, sizeof *pub);
	pub->eid = eid;
	pub->cls = cls;
	pub->attr = attr;
	pub->node = node;
	pub->pid = pid;
	pub->format = f2;
	pub->description = d2;
	pub->nfields = fmt.n;
	memcpy(pub->type, fmt.kind, fmt.n);
	tr_fmt_convs(f2, pub->conv);
	return d;
}

struct tape_def *
tr_def_at(const struct tape_r *r, uint32_t node, uint32_t pid, int32_t eid)
{
	return r->cap == 0 ? NULL : r->defs[slot(r, node, pid, eid)];
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

	for (i = 0; i < r->cap; i++) {
		if (r->defs[i] != NULL) {
			free(r->defs[i]->format);
			free(r->defs[i]->dsc);
			free(r->defs[i]);
		}
	}
	free(r->defs);
	free(r->order);
	r->order = NULL;
	r->norder = r->corder = 0;
	r->defs = NULL;
	r->cap = r->ndefs = r->nscoped = 0;
}
