/* SPDX-License-Identifier: MIT */
/* lm_defs.c: the definitions each process image wrote, kept by the LM so
 * that a Main Monitor that connects later (restarted, or another one on
 * the same port) can decode records whose definitions went to its
 * predecessor.  They are sent again, first, on every connection. */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "lm.h"
#include "net/wire.h"
#include "rec/rec.h"

struct lm_defs {
	uint32_t	pid;
	uint32_t	session;
	struct evbuffer	*buf;		/* definition records */
	uint64_t	ended_at;	/* flights pushed when it ended; 0: alive */
	struct lm_defs	*next;
};

static struct lm_defs *
defs_for(struct lm *lm, uint32_t pid, uint32_t session, int create)
{
	struct lm_defs *d;

	for (d = lm->defs; d != NULL; d = d->next)
		if (d->session == session && d->pid == pid)
			return d;
	if (!create || (d = calloc(1, sizeof *d)) == NULL)
		return NULL;
	if ((d->buf = evbuffer_new()) == NULL) {
		free(d);
		return NULL;
	}
	d->pid = pid;
	d->session = session;
	d->next = lm->defs;
	lm->defs = d;
	return d;
}

void
lm_defs_note(struct lm *lm, uint32_t pid, uint32_t session, const void *data,
	     size_t len)
{
	const char *p = data;
	struct rec_hdr h;
	struct lm_defs *d;
	size_t off;

	/* data is whole records, checked by the caller. */
	for (off = 0; off + sizeof h <= len; off += h.len) {
		memcpy(&h, p + off, sizeof h);
		if (h.len < sizeof h || h.len > len - off)
			return;
		if (h.cls != REC_CLASS_META || h.attr != REC_ATTR_DESCRIPTOR)
			continue;
		d = defs_for(lm, pid, session, 1);
		if (d == NULL || evbuffer_get_length(d->buf) + h.len >
		    LM_DEFS_MAX)
			return;
		evbuffer_add(d->buf, p + off, h.len);
	}
}

void
lm_defs_ended(struct lm *lm, uint32_t session)
{
	struct lm_defs *d;

	for (d = lm->defs; d != NULL; d = d->next)
		if (d->session == session && d->ended_at == 0)
			d->ended_at = lm->flights_pushed + 1;
}

void
lm_defs_acked(struct lm *lm)
{
	struct lm_defs **pp = &lm->defs, *d;

	/* Once a collection that started after the process ended is
	 * acknowledged, its records are all with the MM. */
	while ((d = *pp) != NULL) {
		if (d->ended_at != 0 && lm->flights_acked >= d->ended_at) {
			*pp = d->next;
			evbuffer_free(d->buf);
			free(d);
		} else
			pp = &d->next;
	}
}

int
lm_defs_send(struct lm *lm)
{
	unsigned char *data;
	struct lm_defs *d;
	size_t len;
	int n = 0;

	for (d = lm->defs; d != NULL; d = d->next) {
		len = evbuffer_get_length(d->buf);
		if (len == 0)
			continue;
		data = evbuffer_pullup(d->buf, -1);
		/* seq 0: no chunk, not checked for repeats. */
		if (data == NULL || lm_send_data(lm, d->pid, d->pid,
		    d->session, 0, 0, data, len) != 0)
			continue;	/* the next image may still go */
		n++;
	}
	return n;
}

void
lm_defs_free(struct lm *lm)
{
	struct lm_defs *d;

	while ((d = lm->defs) != NULL) {
		lm->defs = d->next;
		evbuffer_free(d->buf);
		free(d);
	}
}
