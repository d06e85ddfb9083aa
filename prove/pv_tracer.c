/* SPDX-License-Identifier: MIT */
/* pv_tracer.c: BEE's tracer in prove serve: the records of a selection, a
 * page at a time, filtered by event type, read again from the file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "pv_idx.h"

/* 1 if match is empty or the eid, name or format of ev holds it. */
static int
matches(const struct grmtrace_ev *ev, const char *match)
{
	char eid[16];

	if (match == NULL || match[0] == '\0')
		return 1;
	snprintf(eid, sizeof eid, "%" PRId32, ev->eid);
	if (strcmp(eid, match) == 0)
		return 1;
	return ev->def != NULL && (strcasestr(ev->def->description,
	    match) != NULL || strcasestr(ev->def->format, match) != NULL);
}

int
pv_tracer(const struct pv_idx *x, const struct pv_sel *sel,
	  const char *match, uint64_t skip, unsigned n,
	  struct evbuffer *out, char *err, size_t errlen)
{
	const struct grmtrace_ev *ev = NULL;
	const size_t *ri;
	struct grmtrace *t;
	size_t f, nf = pv_idx_files(x).n;
	unsigned got = 0, i;
	int rc = 0, more = 0;

	evbuffer_add_printf(out, "{\"records\":[");
	/* A job followed across files: each file, in order. */
	for (f = 0; f < nf && !more; f++) {
		if ((t = pv_idx_open(x, f, err, errlen)) == NULL)
			return -1;
		grmtrace_select(t, 0);
		rc = grmtrace_seek(t, sel->from);
		while (rc == 1 && (rc = grmtrace_next(t, &ev)) == 1) {
			if (ev->ts >= sel->to)
				break;
			if (!pv_sel_has(sel, ev->node, ev->pid, ev->tid,
			    ev->ts) || !matches(ev, match))
				continue;
			if (skip > 0) {
				skip--;
				continue;
			}
			if (got == n) {
				more = 1;
				break;
			}
			ri = pv_map_find(&x->rows, (uint64_t)ev->node << 32 |
			    ev->pid, ev->tid);
			evbuffer_add_printf(out, "%s[%zd,\"%" PRIu64 "\",%"
			    PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRId32 ",[",
			    got ? "," : "", ri != NULL ? (ssize_t)*ri - 1 :
			    (ssize_t)-1, ev->ts, ev->node, ev->pid, ev->tid,
			    ev->eid);
			for (i = 0; i < ev->n; i++) {
				if (i > 0)
					evbuffer_add(out, ",", 1);
				if (pv_field_json(&ev->f[i], out) != 0) {
					snprintf(err, errlen, "out of memory");
					grmtrace_close(t);
					return -1;
				}
			}
			evbuffer_add(out, "]]", 2);
			got++;
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s", grmtrace_error(t));
			grmtrace_close(t);
			return -1;
		}
		grmtrace_close(t);
	}
	evbuffer_add_printf(out, "],\"more\":%s}\n", more ? "true" :
	    "false");
	return 0;
}
