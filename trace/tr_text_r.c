/* SPDX-License-Identifier: MIT */
/* tr_text_r.c: reading the text trace format (doc/formats.md section 1):
 * the #GRM-TRACE line, meta lines and record lines. */
#include <string.h>

#include "tr_int.h"

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
			return tr_record(r, &c, ev) == 0 ? 1 : -1;
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
