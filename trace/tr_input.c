/* SPDX-License-Identifier: MIT */
/* tr_input.c: the trace reader's input buffer: lines (text formats) and
 * bytes (frames), and the reader's one error message. */
#include <errno.h>
#include <sys/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tr_int.h"

int
tr_fail(struct tape_r *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof r->err, "line %llu: ",
	    (unsigned long long)(r->eline != 0 ? r->eline : r->lineno));
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

int
tr_cut(struct tape_r *r, const char *what, size_t n)
{
	snprintf(r->warn, sizeof r->warn, "%s %llu: cut short at the end of "
	    "the file (%zu bytes; a writer stopped while writing, or a full "
	    "disk): read up to the %s before it", what,
	    (unsigned long long)r->lineno, n, what);
	r->start = r->end;
	return 0;
}

/* Reads more input after what is left at buf[start..end), at most max
 * bytes: 0, or -1. */
static int
more(struct tape_r *r, size_t max)
{
	ssize_t got;
	uint64_t at;

	memmove(r->buf, r->buf + r->start, r->end - r->start);
	r->end -= r->start;
	r->pos += r->start;
	r->start = 0;
	/* A limit: the bytes before it only, then the end (for now). */
	at = r->pos + r->end;
	if (r->limit != 0 && (at >= r->limit || r->limit - at < max))
		max = at >= r->limit ? 0 : (size_t)(r->limit - at);
	if (max == 0) {
		r->eof = 1;
		return 0;
	}
	for (;;) {
		got = read(r->fd, r->buf + r->end, max < TR_BUF - r->end ?
		    max : TR_BUF - r->end);
		if (got >= 0)
			break;
		if (errno != EINTR) {
			r->rerrno = errno;
			return tr_fail(r, "read error: %s", strerror(errno));
		}
	}
	r->eof = got == 0;
	r->end += (size_t)got;
	return 0;
}

int
tr_fill(struct tape_r *r, size_t n)
{
	while (r->end - r->start < n && !r->eof)
		if (more(r, TR_BUF) != 0)
			return -1;
	return r->end - r->start >= n;
}

int
tr_fill_few(struct tape_r *r, size_t n)
{
	while (r->end - r->start < n && !r->eof)
		if (more(r, n - (r->end - r->start)) != 0)
			return -1;
	return r->end - r->start >= n;
}

int
tr_getln(struct tape_r *r, char **line, size_t *len)
{
	char *nl;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl != NULL || r->eof || r->end - r->start > TAPE_LINE_MAX)
			break;
		if (more(r, TR_BUF) != 0)
			return -1;
	}
	if (nl == NULL && r->start == r->end)
		return 0;
	r->lineno++;
	if (nl == NULL)
		nl = r->buf + r->end;
	*line = r->buf + r->start;
	*len = (size_t)(nl - *line);
	if (*len > TAPE_LINE_MAX)
		return tr_fail(r, "line longer than %d bytes", TAPE_LINE_MAX);
	/* Every writer ends a line with its LF. */
	if (nl == r->buf + r->end)
		return tr_cut(r, "line", *len);
	r->start = nl == r->buf + r->end ? r->end : r->start + *len + 1;
	*nl = '\0';
	return 1;
}

uint64_t
tr_tell(const struct tape_r *r)
{
	return r->pos + r->start;
}

int
tr_goto(struct tape_r *r, uint64_t off)
{
	if (off >= r->pos && off <= r->pos + r->end) {
		r->start = (size_t)(off - r->pos);
		return 0;
	}
	if (lseek(r->fd, (off_t)off, SEEK_SET) < 0) {
		r->rerrno = errno;
		return tr_fail(r, "cannot seek: %s", strerror(errno));
	}
	r->pos = off;
	r->start = r->end = 0;
	r->eof = 0;
	return 0;
}

void
tr_limit(struct tape_r *r, uint64_t off)
{
	r->limit = off;
	/* Input past the new limit already read but not taken is given
	 * back (read again once the limit allows); what was taken stays. */
	if (off != 0 && r->pos + r->end > off && off >= r->pos + r->start &&
	    r->seekable && lseek(r->fd, (off_t)off, SEEK_SET) >= 0)
		r->end = (size_t)(off - r->pos);
	/* The end seen before is looked at again. */
	if (off == 0 || r->pos + r->end < off)
		r->eof = 0;
}
