/* SPDX-License-Identifier: MIT */
/* tr_read.c: the trace reader's front (tape.h): opens a file, lets each
 * format tell whether it is its own (tr_bin_r.c, tr_bee_r.c, tr_text_r.c),
 * and reads through the table of the one that is; the stdio helpers that
 * print a field as the text format has it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_int.h"

struct tape_r *
tape_ropen(const char *path, const char **why)
{
	struct tape_r *r;
	char *line;
	size_t len;
	int rc, e;

	if ((r = calloc(1, sizeof *r)) == NULL) {
		*why = strerror(errno);
		return NULL;
	}
	if (strcmp(path, "-") == 0)
		r->fd = STDIN_FILENO;
	else if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		e = errno;
		*why = strerror(e);
		free(r);
		errno = e;
		return NULL;
	}
	r->seekable = lseek(r->fd, 0, SEEK_CUR) >= 0;
	if ((rc = tr_bin_open(r, why)) != 0)
		goto opened;
	switch (tr_getln(r, &line, &len)) {
	case 1:
		while (len > 0 && tr_blank(line[len - 1]))
			line[--len] = '\0';
		if ((rc = tr_bee_open(r, line, len, why)) == 0 &&
		    (rc = tr_text_open(r, line, len, why)) == 0) {
			*why = "not a grm trace (no #GRM-TRACE line)";
			rc = -1;
		}
		goto opened;
	case 0:
		*why = "empty file";
		break;
	default:
		*why = r->rerrno != 0 ? strerror(r->rerrno) :
		    "not a grm trace (first line too long)";
	}
	rc = -1;
opened:
	if (rc > 0) {
		r->err[0] = '\0';
		r->failed = 0;
		return r;
	}
	e = r->rerrno != 0 ? r->rerrno : EILSEQ;
	tape_rclose(r);
	errno = e;
	return NULL;
}

int
tape_rskip(struct tape_r *r, uint64_t ts, struct tape_ev *ev)
{
	int rc;

	if (r->failed)
		return -1;
	if (r->ops->skip != NULL)
		return r->ops->skip(r, ts, ev);
	while ((rc = r->ops->next(r, ev)) == 1 && ev->kind == TAPE_RECORD &&
	    ev->ts < ts)
		;
	return rc;
}

uint64_t
tape_rwhere(const struct tape_r *r)
{
	return r->eline != 0 ? r->eline : r->lineno;
}

int
tape_rformat(const struct tape_r *r)
{
	return r->fmt;
}

size_t
tape_rndefs(const struct tape_r *r)
{
	return r->norder;
}

const struct tape_def *
tape_rdef_at(const struct tape_r *r, size_t i)
{
	return i < r->norder ? r->order[i] : NULL;
}

int
tape_next(struct tape_r *r, struct tape_ev *ev)
{
	if (r->failed)
		return -1;
	return r->ops->next(r, ev);
}

void
tape_rwant(struct tape_r *r, unsigned kinds)
{
	r->want = kinds & ~TAPE_WANT(TAPE_RECORD);
}

const char *
tape_rwarning(const struct tape_r *r)
{
	return r->warn[0] != '\0' ? r->warn : NULL;
}

const char *
tape_rerror(const struct tape_r *r)
{
	return r->err[0] != '\0' ? r->err : "no error";
}

const struct tape_def *
tape_rdef(const struct tape_r *r, int32_t eid)
{
	return tr_def_at(r, 0, 0, eid);
}

const struct tape_def *
tape_rdef_for(const struct tape_r *r, uint32_t node, uint32_t pid,
	      int32_t eid)
{
	return tr_def_for(r, node, pid, eid);
}

uint64_t
tape_rlosses(const struct tape_r *r)
{
	return r->losses;
}

int
tape_rend(const struct tape_r *r, uint64_t *records)
{
	if (r->ended && records != NULL)
		*records = r->end_records;
	return r->ended;
}

void
tape_rclose(struct tape_r *r)
{
	if (r == NULL)
		return;
	tr_defs_free(r);
	if (r->ops != NULL && r->ops->free != NULL)
		r->ops->free(r);
	if (r->fd != STDIN_FILENO)
		close(r->fd);
	free(r);
}

void
tape_put_quoted(FILE *f, const char *s, size_t len)
{
	char buf[4 * 1024];
	size_t k;
	char *d;

	putc('"', f);
	while (len > 0) {
		k = len < sizeof buf / 4 ? len : sizeof buf / 4;
		d = tr_fmt_esc(buf, buf + sizeof buf, s, k, 0);
		fwrite(buf, 1, (size_t)(d - buf), f);
		s += k;
		len -= k;
	}
	putc('"', f);
}

void
tape_put_field(FILE *f, const struct rec_field *fld)
{
	char buf[TR_FMT_NUM_MAX + 2];
	char *d;

	if (fld->kind == REC_K_STR) {
		tape_put_quoted(f, fld->v.s.p, fld->v.s.len);
		return;
	}
	if ((d = tr_text_field(buf, buf + sizeof buf, fld)) != NULL)
		fwrite(buf + 1, 1, (size_t)(d - buf - 1), f);
}
