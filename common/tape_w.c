/* tape_w.c: writing the trace file (doc/formats.md): the text format, the
 * binary one, and the calls that send the BEE Ascii one to bee_w.c; the
 * field formatting prove shares.  No printf on the way of a record. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tape_int.h"

#define NUM_MAX		(FMT_NUM_MAX + 1)	/* a number with its space */

/* ---- formatting, shared by the writer and the stdio helpers ---- */

static char *
quote(char *d, const char *lim, const char *s, size_t len)
{
	if (d == NULL || lim - d < 3)
		return NULL;
	*d++ = ' ';
	*d++ = '"';
	if ((d = fmt_esc(d, lim - 1, s, len, 0)) == NULL)
		return NULL;
	*d++ = '"';
	return d;
}

/* Writes " <value>" of one field. */
static char *
put_field(char *d, const char *lim, const struct rec_field *f)
{
	if (f->kind == REC_K_STR)
		return quote(d, lim, f->v.s.p, f->v.s.len);
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	switch (f->kind) {
	case REC_K_INT:
		return fmt_i64(d, f->v.i);
	case REC_K_UINT:
		return fmt_u64(d, f->v.u);
	default:
		return fmt_double(d, f->v.d);
	}
}

char *
tw_u(char *d, const char *lim, uint64_t v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return fmt_u64(d, v);
}

char *
tw_i(char *d, const char *lim, int64_t v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return fmt_i64(d, v);
}

char *
tw_d(char *d, const char *lim, double v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return fmt_double(d, v);
}

/* Writes " <s>" as one token: bytes that are blank or not ASCII become '_'. */
static char *
put_tok(char *d, const char *lim, const char *s)
{
	unsigned char c;

	if (d == NULL || lim - d < 2)
		return NULL;
	*d++ = ' ';
	if (s == NULL || *s == '\0')
		s = "-";
	for (; *s != '\0'; s++) {
		if (d == lim)
			return NULL;
		c = (unsigned char)*s;
		*d++ = c > 0x20 && c < 0x7f ? (char)c : '_';
	}
	return d;
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
		d = fmt_esc(buf, buf + sizeof buf, s, k, 0);
		fwrite(buf, 1, (size_t)(d - buf), f);
		s += k;
		len -= k;
	}
	putc('"', f);
}

void
tape_put_field(FILE *f, const struct rec_field *fld)
{
	char buf[NUM_MAX + 1];
	char *d;

	if (fld->kind == REC_K_STR) {
		tape_put_quoted(f, fld->v.s.p, fld->v.s.len);
		return;
	}
	if ((d = put_field(buf, buf + sizeof buf, fld)) != NULL)
		fwrite(buf + 1, 1, (size_t)(d - buf - 1), f);
}

/* ---- writer ---- */

/*
 * A trace is written once, at hundreds of MB/s, and read later: the file
 * goes to disk as it grows, TW_WB bytes at a time, and what is on disk
 * leaves the page cache (up to TW_WB_KEEP behind).  A page cache filling
 * with gigabytes of dirty trace makes every write cost several times
 * more CPU (doc/PERFORMANCE.md).  Nothing waits for the disk: pages still
 * being written are dropped by a later call, or stay (the kernel's own
 * limits on dirty pages then apply, as without this).
 */
#define TW_WB		(16u << 20)
#define TW_WB_KEEP	(8u * TW_WB)

static void
wback(struct tape_w *w)
{
	uint64_t lo;

	if (w->out - w->wb < TW_WB)
		return;
	(void)sync_file_range(w->fd, (off_t)w->wb, (off_t)(w->out - w->wb),
	    SYNC_FILE_RANGE_WRITE);
	lo = w->wb > TW_WB_KEEP - TW_WB ? w->wb - (TW_WB_KEEP - TW_WB) : 0;
	if (w->wb > lo)
		(void)posix_fadvise(w->fd, (off_t)lo, (off_t)(w->wb - lo),
		    POSIX_FADV_DONTNEED);
	w->wb = w->out;
}

static int
wflush(struct tape_w *w)
{
	size_t off = 0;
	ssize_t n;
	int e;

	while (off < w->len) {
		n = write(w->fd, w->buf + off, w->len - off);
		if (n > 0) {
			off += (size_t)n;
			w->out += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		e = n == 0 ? EIO : errno;
		memmove(w->buf, w->buf + off, w->len - off);
		w->len -= off;
		errno = e;
		return -1;
	}
	w->len = 0;
	wback(w);
	return 0;
}

char *
tw_begin(struct tape_w *w, const char **lim)
{
	w->ferr = 0;
	if (TW_BUF - w->len < TAPE_LINE_MAX + 1 && wflush(w) != 0) {
		w->ferr = errno;
		return NULL;
	}
	*lim = w->buf + w->len + TAPE_LINE_MAX;
	return w->buf + w->len;
}

int
tw_end(struct tape_w *w, char *d)
{
	if (d == NULL) {
		errno = w->ferr != 0 ? w->ferr : EMSGSIZE;
		return -1;
	}
	*d++ = '\n';
	w->len = (size_t)(d - w->buf);
	return 0;
}

/* ---- the binary format: frames (doc/formats.md) ---- */

static char *
b_u64(char *d, const char *lim, uint64_t v)
{
	int i;

	if (d == NULL || lim - d < 8)
		return NULL;
	for (i = 0; i < 8; i++)
		*d++ = (char)(v >> (8 * i));
	return d;
}

static char *
b_u32(char *d, const char *lim, uint32_t v)
{
	int i;

	if (d == NULL || lim - d < 4)
		return NULL;
	for (i = 0; i < 4; i++)
		*d++ = (char)(v >> (8 * i));
	return d;
}

/* A token: u16 length and bytes; a string: u32 length and bytes. */
static char *
b_str(char *d, const char *lim, const char *s, size_t len, int wide)
{
	size_t hl = wide ? 4 : 2;

	if (d == NULL || (size_t)(lim - d) < hl + len ||
	    (!wide && len > UINT16_MAX))
		return NULL;
	*d++ = (char)len;
	*d++ = (char)(len >> 8);
	if (wide) {
		*d++ = (char)(len >> 16);
		*d++ = (char)(len >> 24);
	}
	memcpy(d, s, len);
	return d + len;
}

/* A token as the text writes it (put_tok): "-" if empty, anything but
 * printable non-blank ASCII turned into '_'. */
static char *
b_tok(char *d, const char *lim, const char *s)
{
	char *start;
	size_t n, i;

	if (s == NULL || *s == '\0')
		s = "-";
	n = strlen(s);
	if ((d = b_str(d, lim, s, n, 0)) == NULL)
		return NULL;
	start = d - n;
	for (i = 0; i < n; i++)
		if (!((unsigned char)start[i] > 0x20 &&
		    (unsigned char)start[i] < 0x7f))
			start[i] = '_';
	return d;
}

static char *
b_field(char *d, const char *lim, const struct rec_field *f)
{
	uint64_t u;

	switch (f->kind) {
	case REC_K_STR:
		return b_str(d, lim, f->v.s.p, f->v.s.len, 1);
	case REC_K_DOUBLE:
		memcpy(&u, &f->v.d, 8);
		return b_u64(d, lim, u);
	case REC_K_UINT:
		return b_u64(d, lim, f->v.u);
	default:
		return b_u64(d, lim, (uint64_t)f->v.i);
	}
}

/* Opens a frame of kind k at d: its length is filled in by fend. */
static char *
fbegin(struct tape_w *w, const char **lim, char kind)
{
	char *d = tw_begin(w, lim);

	if (d == NULL)
		return NULL;
	d[4] = kind;
	return d + 5;
}

static int
fend(struct tape_w *w, char *d)
{
	char *f = w->buf + w->len;

	if (d == NULL) {
		errno = w->ferr != 0 ? w->ferr : EMSGSIZE;
		return -1;
	}
	b_u32(f, f + 4, (uint32_t)(d - f - 5));
	w->len = (size_t)(d - w->buf);
	return 0;
}

static int
bline(struct tape_w *w, const char *key, const char *spec, va_list ap)
{
	const char *lim, *s;
	uint64_t u;
	double v;
	char *d;

	if ((d = fbegin(w, &lim, 'L')) == NULL)
		return fend(w, NULL);
	d = b_str(d, lim, key, strlen(key), 0);
	for (; *spec != '\0'; spec++) {
		switch (*spec) {
		case 'u':
			d = b_u64(d, lim, va_arg(ap, uint64_t));
			break;
		case 'i':
			d = b_u64(d, lim, (uint64_t)va_arg(ap, int64_t));
			break;
		case 'd':
			v = va_arg(ap, double);
			memcpy(&u, &v, 8);
			d = b_u64(d, lim, u);
			break;
		case 't':
			d = b_tok(d, lim, va_arg(ap, const char *));
			break;
		default:
			s = va_arg(ap, const char *);
			d = b_str(d, lim, s, va_arg(ap, size_t), 1);
		}
	}
	return fend(w, d);
}

/*
 * Writes the line "key" followed by one field per spec character: u
 * (uint64_t), i (int64_t), d (double), t (char *, a token), s (char *,
 * size_t: a quoted string).
 */
static int
wline(struct tape_w *w, const char *key, const char *spec, ...)
{
	const char *lim, *s;
	va_list ap;
	char *d;
	int rc, bee = w->fmt == TAPE_FMT_BEE;

	if (w->fmt == TAPE_FMT_BIN) {
		va_start(ap, spec);
		rc = bline(w, key, spec, ap);
		va_end(ap);
		return rc;
	}
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	/* BEE Ascii: the line as grm's entry, "(100 (#KEY ...))". */
	if (bee) {
		d = bee_w_cmd(d, BEE_GRM);
		*d++ = '(';
	}
	memcpy(d, key, strlen(key));
	d += strlen(key);
	va_start(ap, spec);
	for (; *spec != '\0'; spec++) {
		switch (*spec) {
		case 'u':
			d = tw_u(d, lim, va_arg(ap, uint64_t));
			break;
		case 'i':
			d = tw_i(d, lim, va_arg(ap, int64_t));
			break;
		case 'd':
			d = tw_d(d, lim, va_arg(ap, double));
			break;
		case 't':
			s = va_arg(ap, const char *);
			d = !bee ? put_tok(d, lim, s) : bee_w_str(d, lim,
			    s != NULL ? s : "", s != NULL ? strlen(s) : 0);
			break;
		default:
			s = va_arg(ap, const char *);
			d = !bee ? quote(d, lim, s, va_arg(ap, size_t)) :
			    bee_w_str(d, lim, s, va_arg(ap, size_t));
		}
	}
	va_end(ap);
	return bee ? bee_w_end_entry(w, d, lim) : tw_end(w, d);
}

struct tape_w *
tape_open(const char *path, const char *mm_id, uint64_t realtime_ns,
	  uint64_t monotonic_ns)
{
	return tape_open_fmt(path, TAPE_FMT_TAPE, mm_id, realtime_ns,
	    monotonic_ns);
}

struct tape_w *
tape_open_fmt(const char *path, int fmt, const char *mm_id,
	      uint64_t realtime_ns, uint64_t monotonic_ns)
{
	struct tape_w *w;
	int e, how = fmt & TAPE_OPEN_NEW ? O_EXCL : O_TRUNC;

	fmt &= ~TAPE_OPEN_NEW;
	if (fmt != TAPE_FMT_TAPE && fmt != TAPE_FMT_BIN &&
	    fmt != TAPE_FMT_BEE) {
		errno = EINVAL;
		return NULL;
	}
	if ((w = calloc(1, sizeof *w)) == NULL)
		return NULL;
	w->fmt = fmt;
	if (fmt == TAPE_FMT_BIN) {
		memcpy(w->buf, TAPE_BIN_MAGIC, 8);
		w->len = 8;
	}
	if ((w->fd = open(path, O_WRONLY | O_CREAT | how | O_CLOEXEC,
	    0644)) < 0) {
		e = errno;
		free(w);
		errno = e;
		return NULL;
	}
	if ((fmt == TAPE_FMT_BEE ? bee_w_header(w) :
	    wline(w, "#GRM-TRACE", "u", (uint64_t)TAPE_VERSION)) != 0 ||
	    wline(w, "#MM", "t", mm_id) != 0 ||
	    wline(w, "#CLOCK", "uu", realtime_ns, monotonic_ns) != 0 ||
	    wflush(w) != 0) {
		e = errno;
		close(w->fd);
		free(w);
		errno = e;
		return NULL;
	}
	return w;
}

const char *const tape_proc_words[TAPE_PROC_GONE + 1] = { "start", "exit",
	"killed", "exec", "gone" };

int
tape_host(struct tape_w *w, uint32_t node, int64_t offset_ns,
	  uint32_t lm_pid, const char *hostname)
{
	return wline(w, "#HOST", "uiut", (uint64_t)node, offset_ns,
	    (uint64_t)lm_pid, hostname);
}

int
tape_sync(struct tape_w *w, uint32_t node, uint64_t at, int64_t offset_ns,
	  int64_t drift_ppb, uint64_t err_ns, uint64_t rtt_ns, uint32_t used)
{
	return wline(w, "#SYNC", "uuiiuuu", (uint64_t)node, at, offset_ns,
	    drift_ppb, err_ns, rtt_ns, (uint64_t)used);
}

int
tape_order(struct tape_w *w, uint64_t late, uint64_t clamped,
	   uint64_t forced, uint64_t held_max)
{
	return wline(w, "#ORDER", "uuuu", late, clamped, forced, held_max);
}

int
tape_causal(struct tape_w *w, uint64_t matched, uint64_t violations,
	    uint64_t worst_ns, uint64_t unchecked)
{
	return wline(w, "#CAUSAL", "uuuu", matched, violations, worst_ns,
	    unchecked);
}

int
tape_def(struct tape_w *w, int32_t eid, uint8_t cls, uint8_t attr,
	 const char *format, size_t format_len, const char *dsc,
	 size_t dsc_len)
{
	return tape_def_scoped(w, 0, 0, eid, cls, attr, format, format_len,
	    dsc, dsc_len);
}

int
tape_def_scoped(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
		uint8_t cls, uint8_t attr, const char *format,
		size_t format_len, const char *dsc, size_t dsc_len)
{
	char fbuf[REC_FMT_MAX];
	struct rec_fmt fmt;

	if (dsc == NULL)
		dsc_len = 0;
	if (format == NULL || format_len >= REC_FMT_MAX ||
	    memchr(format, '\0', format_len) != NULL ||
	    (dsc != NULL && memchr(dsc, '\0', dsc_len) != NULL)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(fbuf, format, format_len);
	fbuf[format_len] = '\0';
	if (rec_parse_format(fbuf, &fmt) != 0) {
		errno = EINVAL;
		return -1;
	}
	if (w->fmt == TAPE_FMT_BEE)
		return bee_w_def(w, node, pid, eid, cls, attr, fbuf,
		    format_len, dsc != NULL ? dsc : "", dsc_len);
	if (node == 0)
		return wline(w, "#DEF", "iuuss", (int64_t)eid, (uint64_t)cls,
		    (uint64_t)attr, format, format_len, dsc != NULL ? dsc : "",
		    dsc_len);
	return wline(w, "#DEF", "iuussuu", (int64_t)eid, (uint64_t)cls,
	    (uint64_t)attr, format, format_len, dsc != NULL ? dsc : "",
	    dsc_len, (uint64_t)node, (uint64_t)pid);
}

int
tape_proc(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t ppid,
	  int is_exit, uint64_t ts, int32_t status, const char *name)
{
	if (name == NULL)
		name = "";
	if (is_exit < 0 || is_exit > TAPE_PROC_GONE) {
		errno = EINVAL;
		return -1;
	}
	if (w->fmt == TAPE_FMT_BEE)
		return bee_w_proc(w, node, pid, ppid, is_exit, ts, status,
		    name);
	return wline(w, "#PROC", "uuutuis", (uint64_t)node, (uint64_t)pid,
	    (uint64_t)ppid, tape_proc_words[is_exit], ts, (int64_t)status,
	    name, strlen(name));
}

int
tape_loss(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	  uint64_t count, uint64_t ts)
{
	return wline(w, "#LOSS", "uuuuu", (uint64_t)node, (uint64_t)pid,
	    (uint64_t)tid, count, ts);
}

/* Binary: an R frame. */
static int
bin_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	   uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	const char *lim;
	unsigned i;
	char *d;

	if ((d = fbegin(w, &lim, 'R')) == NULL)
		return fend(w, NULL);
	d = b_u64(d, lim, ts);
	d = b_u64(d, lim, node);
	d = b_u64(d, lim, pid);
	d = b_u64(d, lim, tid);
	d = b_u64(d, lim, (uint64_t)(int64_t)eid);
	for (i = 0; i < n; i++)
		d = b_field(d, lim, &f[i]);
	return fend(w, d);
}

int
tape_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	    uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	const char *lim;
	unsigned i;
	char *d;
	int rc;

	if (n > REC_ARGS_MAX || (n > 0 && f == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (w->fmt != TAPE_FMT_TAPE) {
		rc = w->fmt == TAPE_FMT_BIN ?
		    bin_record(w, ts, node, pid, tid, eid, f, n) :
		    bee_w_record(w, ts, node, pid, tid, eid, f, n);
		if (rc == 0)
			w->records++;
		return rc;
	}
	/* The line is committed by tw_end only: an early return drops it. */
	if ((d = tw_begin(w, &lim)) == NULL)
		return tw_end(w, NULL);
	d = fmt_u64(d, ts);
	d = tw_u(d, lim, node);
	d = tw_u(d, lim, pid);
	d = tw_u(d, lim, tid);
	d = tw_i(d, lim, eid);
	for (i = 0; i < n; i++) {
		if (f[i].kind > REC_K_STR) {
			errno = EINVAL;
			return -1;
		}
		d = put_field(d, lim, &f[i]);
	}
	if (tw_end(w, d) != 0)
		return -1;
	w->records++;
	return 0;
}

int
tape_collect(struct tape_w *w, uint32_t n, uint64_t ts)
{
	return wline(w, "#COLLECT", "uuu", (uint64_t)n, ts, w->records);
}

int
tape_stats_count(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
		 uint64_t n)
{
	return wline(w, "#STATS", "uutiu", (uint64_t)node, (uint64_t)pid,
	    "count", (int64_t)eid, n);
}

int
tape_stats_range(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
		 int64_t key, uint64_t n, uint64_t total, uint64_t min,
		 uint64_t max, double mean, double m2)
{
	return wline(w, "#STATS", "uutiiuuuudd", (uint64_t)node,
	    (uint64_t)pid, "range", (int64_t)eid, key, n, total, min, max,
	    mean, m2);
}

int
tape_control(struct tape_w *w, uint64_t ts, const char *command,
	     size_t command_len)
{
	if (command == NULL && command_len > 0) {
		errno = EINVAL;
		return -1;
	}
	return wline(w, "#CONTROL", "us", ts, command != NULL ? command : "",
	    command_len);
}

int
tape_write_out(struct tape_w *w)
{
	return wflush(w);
}

int
tape_flush(struct tape_w *w)
{
	if (wflush(w) != 0)
		return -1;
	if (fdatasync(w->fd) != 0 && errno != EINVAL && errno != EROFS)
		return -1;
	return 0;
}

int
tape_close(struct tape_w *w)
{
	int rc = 0, e = 0;

	if (w == NULL)
		return 0;
	if ((w->fmt == TAPE_FMT_BEE ? bee_w_end(w) :
	    wline(w, "#END", "u", w->records)) != 0 || tape_flush(w) != 0) {
		rc = -1;
		e = errno;
	}
	if (close(w->fd) != 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	bee_w_free(w);
	free(w);
	if (rc != 0)
		errno = e;
	return rc;
}

uint64_t
tape_records(const struct tape_w *w)
{
	return w->records;
}


int
tape_piece(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	   const void *recs, size_t len)
{
	const char *p = recs, *lim;
	struct rec_hdr h;
	size_t off = 0, start, n;
	char *d;

	if (w->fmt != TAPE_FMT_BIN) {
		errno = EINVAL;
		return -1;
	}
	/* One frame per run of records that fits in a line's room. */
	while (off < len) {
		if ((d = fbegin(w, &lim, 'P')) == NULL)
			return fend(w, NULL);
		d = b_u32(d, lim, node);
		d = b_u32(d, lim, pid);
		d = b_u32(d, lim, tid);
		start = off;
		for (n = 0; off + sizeof h <= len; n++) {
			memcpy(&h, p + off, sizeof h);
			if (h.len < sizeof h || h.len > len - off) {
				errno = EINVAL;
				return -1;
			}
			if ((size_t)(lim - d) < off + h.len - start)
				break;
			off += h.len;
		}
		if (n == 0 || d == NULL) {
			errno = EMSGSIZE;
			return -1;
		}
		memcpy(d, p + start, off - start);
		if (fend(w, d + (off - start)) != 0)
			return -1;
		w->records += n;
	}
	return 0;
}
