/* tr_text_r.c: reading the text trace format (doc/formats.md section 1):
 * the #GRM-TRACE line, meta lines and record lines. */
#include <string.h>

#include "tr_int.h"

/* A record line: ts node pid tid eid field... */
static int
record(struct tape_r *r, struct cur *c, struct tape_ev *ev)
{
	struct rec_field h[5];
	unsigned i;

	for (i = 0; i < 5; i++)
		if (c->ops->get1(r, c, "uUUUi"[i], &h[i]) != 0)
			return tr_fail(r, "record: %s", c->why);
	ev->kind = TAPE_RECORD;
	ev->ts = h[0].v.u;
	ev->node = (uint32_t)h[1].v.u;
	ev->pid = (uint32_t)h[2].v.u;
	ev->tid = (uint32_t)h[3].v.u;
	ev->eid = (int32_t)h[4].v.i;
	if (tr_record_def(r, ev) != 0)
		return -1;
	return tr_fields(r, c, ev);
}

static int
text_next(struct tape_r *r, struct tape_ev *ev)
{
	struct cur c;
	size_t len;
	char *line;
	int rc;

	while (!r->failed) {
		if ((rc = tr_getln(r, &line, &len)) <= 0)
			return rc;
		c = (struct cur){ line, line + len, NULL, &tr_text_fields };
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

static const struct tr_rops text_rops = { text_next, NULL, NULL };

int
tr_text_open(struct tape_r *r, char *line, size_t len, const char **why)
{
	(void)len;
	(void)why;
	if (strncmp(line, "#GRM-TRACE ", 11) != 0)
		return 0;
	if (strcmp(line + 11, "1") != 0 && strcmp(line + 11, "2") != 0) {
		*why = "unsupported trace version";
		return -1;
	}
	r->ops = &text_rops;
	r->fmt = GRMTRACE_FMT_TEXT;
	return 1;
}
