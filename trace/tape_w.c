/* SPDX-License-Identifier: MIT */
/* tape_w.c: the trace writer's front (tape.h): the output buffer and its
 * way to disk, argument checks, and each meta line's fields in schema
 * order, handed to the format's table (tr_text_w.c, tr_bin_w.c,
 * tr_bee_w.c).  No printf on the way of a record. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tr_int.h"
#include "tr_sum.h"

#define NUM_MAX		(TR_FMT_NUM_MAX + 1)	/* a number with its space */

char *
tw_u(char *d, const char *lim, uint64_t v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return tr_fmt_u64(d, v);
}

char *
tw_i(char *d, const char *lim, int64_t v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return tr_fmt_i64(d, v);
}

char *
tw_d(char *d, const char *lim, double v)
{
	if (d == NULL || lim - d < NUM_MAX)
		return NULL;
	*d++ = ' ';
	return tr_fmt_double(d, v);
}

char *
tw_fields(char *d, const char *lim, int m, const struct rec_field *v,
	  unsigned n, tw_str_fn *tok, tw_str_fn *str)
{
	const char *k = tr_schema[m].kinds, *w = tr_schema[m].word;
	unsigned i;

	for (i = 0; i < n; i++) {
		switch (k[i]) {
		case 'U':
		case 'u':
		case 'b':
			d = tw_u(d, lim, v[i].v.u);
			break;
		case 'i':
		case 'I':
			d = tw_i(d, lim, v[i].v.i);
			break;
		case 'd':
			d = tw_d(d, lim, v[i].v.d);
			break;
		case '=':
			d = tok(d, lim, w, strlen(w));
			break;
		case 't':
			d = tok(d, lim, v[i].v.s.p, v[i].v.s.len);
			break;
		default:
			d = str(d, lim, v[i].v.s.p, v[i].v.s.len);
		}
	}
	return d;
}

/*
 * A trace is written once, at hundreds of MB/s, and read later: the file
 * goes to disk as it grows, TW_WB bytes at a time, and what is on disk
 * leaves the page cache (up to TW_WB_KEEP behind).  A page cache filling
 * with gigabytes of dirty trace makes every write cost several times
 * more CPU (doc/PERFORMANCE.md).  Nothing waits for the disk: pages still
 * being written are dropped by a later call, or stay (the kernel's own
 * limits on dirty pages then apply, as without this).
 *
 * The writer does not start the disk's writes itself: sync_file_range
 * does them in its caller, with the filesystem's block allocation, which
 * may wait for the disk (ext4 reading its bitmaps); in mainmon's loop
 * that held a plan's firing for up to 25 ms (doc/PERFORMANCE.md,
 * "The file's writeback, out of the loop").  A thread of the writer's
 * own (tape-wb), started at the first TW_WB, is handed how far the file
 * is written and does it, the same way; the writer only stores that
 * and wakes it (an eventfd), taking no lock: it never waits for the
 * thread, which may wait for a core.  (Tried: the thread waiting for the writes it started a
 * step before, to drop them for sure; the firings' tail was then worse,
 * up to 58 ms.)  If it cannot be started, the writer does it itself.
 */
#define TW_WB		(16u << 20)
#define TW_WB_KEEP	(8u * TW_WB)

struct tw_wb {
	pthread_t	th;
	int		efd;		/* the writer's wake */
	int		fd;
	uint64_t	from;		/* where it starts */
	_Atomic uint64_t upto;		/* written to the file */
	atomic_int	quit;
};

/* The disk's writes of [from, to) started, and what lies more than
 * TW_WB_KEEP - TW_WB before from dropped from the page cache, if
 * written by then. */
static void
wback_range(int fd, uint64_t from, uint64_t to)
{
	uint64_t lo;

	(void)sync_file_range(fd, (off_t)from, (off_t)(to - from),
	    SYNC_FILE_RANGE_WRITE);
	lo = from > TW_WB_KEEP - TW_WB ? from - (TW_WB_KEEP - TW_WB) : 0;
	if (from > lo)
		(void)posix_fadvise(fd, (off_t)lo, (off_t)(from - lo),
		    POSIX_FADV_DONTNEED);
}

static void *
wb_main(void *arg)
{
	struct tw_wb *t = arg;
	uint64_t done = t->from, to, v;

	for (;;) {
		if (read(t->efd, &v, sizeof v) < 0 && errno != EINTR)
			break;
		if (atomic_load(&t->quit))
			break;
		to = atomic_load(&t->upto);
		if (to > done) {
			wback_range(t->fd, done, to);
			done = to;
		}
	}
	return NULL;
}

/* Starts fn(arg) in a thread named name, every signal blocked in it (the
 * program's threads take them): 0, or pthread_create's error. */
static int
thread_start(pthread_t *th, void *(*fn)(void *), void *arg,
	     const char *name)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		(void)pthread_setname_np(*th, name);
	return rc;
}

/* tape-wb for w, from file offset from on; NULL if it cannot be. */
static struct tw_wb *
wb_start(int fd, uint64_t from)
{
	struct tw_wb *t;

	if ((t = calloc(1, sizeof *t)) == NULL)
		return NULL;
	if ((t->efd = eventfd(0, EFD_CLOEXEC)) < 0) {
		free(t);
		return NULL;
	}
	t->fd = fd;
	t->from = from;
	atomic_init(&t->upto, from);
	atomic_init(&t->quit, 0);
	if (thread_start(&t->th, wb_main, t, "tape-wb") != 0) {
		close(t->efd);
		free(t);
		return NULL;
	}
	return t;
}

static void
wb_wake(struct tw_wb *t)
{
	uint64_t one = 1;

	(void)write(t->efd, &one, sizeof one);
}

/* tape-wb ended (what it was handed and had not begun is left to the
 * kernel), before the file is closed. */
static void
wb_stop(struct tape_w *w)
{
	struct tw_wb *t = w->wbt;

	if (t == NULL)
		return;
	atomic_store(&t->quit, 1);
	wb_wake(t);
	pthread_join(t->th, NULL);
	close(t->efd);
	free(t);
	w->wbt = NULL;
}

static void
wback(struct tape_w *w)
{
	struct tw_wb *t;

	/* tape-w does it for what it writes and for this. */
	if (w->wt != NULL || w->out - w->wb < TW_WB)
		return;
	if (w->wbt == NULL && !w->wbt_none &&
	    (w->wbt = wb_start(w->fd, w->wb)) == NULL)
		w->wbt_none = 1;
	if ((t = w->wbt) != NULL) {
		atomic_store(&t->upto, w->out);
		wb_wake(t);
	} else
		wback_range(w->fd, w->wb, w->out);
	w->wb = w->out;
}

/*
 * tape_async: the writes themselves in a thread of the writer's own,
 * tape-w.  A write into the page cache can wait: for the inode's lock
 * while the filesystem allocates blocks for what is being written back
 * (ext4), for a frozen filesystem, for a slow disk's dirty limits.  In
 * mainmon's loop, such a wait held a plan's firing for up to 20 ms
 * (doc/PERFORMANCE.md).  With tape-w, the caller hands it its buffer
 * whole (a buffer swap, no copy) and goes on with another; tape-w
 * writes it, starts its writeback (as tape-wb would), and says so
 * through an eventfd.  One buffer is in hand at a time: while it is,
 * the caller's buffer grows, up to TW_FLY_MAX, then the caller waits (a
 * caller that can hold its records back does so from half of that on:
 * tape_full, mainmon's merge).
 * The hand-over takes no lock (the caller, raised, must never wait for
 * an ordinary thread waiting for a core): `busy` says whose the buffer
 * is.  A write that fails is not tried again by tape-w: the caller takes
 * the buffer back in front of its own and goes on as without tape-w
 * (wfail, then every write its own until one works).
 */
#define TW_FLY_MAX	(32u << 20)
#define TW_SPARE_MAX	(4u << 20)	/* a buffer kept for the next */

/*
 * The buffers are mappings of their own, so that one grows or shrinks
 * by moving its pages (mremap), never by copying them: a buffer grown
 * while tape-w is busy holds megabytes, and realloc's copy of them, with
 * a fault for each new page, held the loop for 5 to 8 ms (a firing's
 * tail, traced with perf, doc/PERFORMANCE.md).
 */
#if defined(__SANITIZE_ADDRESS__)
#define TW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TW_ASAN 1
#endif
#endif

#ifdef TW_ASAN
/* Under AddressSanitizer, the heap: a write past a buffer's end is
 * caught there, not in the next page of a mapping. */
static char *
buf_new(size_t n)
{
	return malloc(n);
}

static char *
buf_resize(char *p, size_t old, size_t n)
{
	(void)old;
	return realloc(p, n);
}

static void
buf_free(char *p, size_t n)
{
	(void)n;
	free(p);
}
#else
static size_t
pg_up(size_t n)
{
	size_t pg = 4096;

	return (n + pg - 1) / pg * pg;
}

static char *
buf_new(size_t n)
{
	void *p = mmap(NULL, pg_up(n), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* p, of size old, made of size n; NULL (p unchanged) if it cannot be. */
static char *
buf_resize(char *p, size_t old, size_t n)
{
	void *q;

	if (pg_up(old) == pg_up(n))
		return p;
	q = mremap(p, pg_up(old), pg_up(n), MREMAP_MAYMOVE);
	return q == MAP_FAILED ? NULL : q;
}

static void
buf_free(char *p, size_t n)
{
	if (p != NULL)
		(void)munmap(p, pg_up(n));
}
#endif

static uint64_t mono_ns(void);
static int werror(struct tape_w *w, int e);
static int wfail(struct tape_w *w, size_t off, int e);
static int wflush(struct tape_w *w);

struct tw_wt {
	pthread_t	th;
	int		go;		/* the caller's wake for tape-w */
	int		back;		/* tape-w's for the caller */
	int		note;		/* and the caller's own, or -1 */
	int		fd;
	atomic_int	busy;		/* 1: buf is tape-w's */
	atomic_int	quit;
	char		*buf;		/* handed: len bytes, at file offset at */
	size_t		len, cap;
	uint64_t	at;
	unsigned char	*img;		/* and a sidecar (sum_image) to write
					   after them, or NULL */
	size_t		ilen;
	const char	*path;		/* the trace's, for the sidecar */
	size_t		off;		/* done: bytes written, */
	int		err;		/* and the errno if not all */
	uint64_t	wb;		/* writeback started up to here */
};

static void
efd_add(int fd)
{
	uint64_t one = 1;

	if (fd >= 0)
		(void)write(fd, &one, sizeof one);
}

static void *
wt_main(void *arg)
{
	struct tw_wt *t = arg;
	uint64_t v, end;
	size_t off;
	ssize_t n;
	int err;

	for (;;) {
		if (read(t->go, &v, sizeof v) < 0 && errno != EINTR)
			break;
		if (atomic_load(&t->quit))
			break;
		if (!atomic_load_explicit(&t->busy, memory_order_acquire))
			continue;
		for (off = 0, err = 0; off < t->len; ) {
			n = pwrite(t->fd, t->buf + off, t->len - off,
			    (off_t)(t->at + off));
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno == EINTR)
				continue;
			else {
				err = n == 0 ? EIO : errno;
				break;
			}
		}
		/* The sidecar once the bytes it sums are in the file. */
		if (t->img != NULL && err == 0)
			(void)sum_image_put(t->img, t->ilen, t->path);
		free(t->img);
		t->img = NULL;
		t->off = off;
		t->err = err;
		end = t->at + off;
		atomic_store_explicit(&t->busy, 0, memory_order_release);
		efd_add(t->back);
		efd_add(t->note);
		if (err == 0 && end - t->wb >= TW_WB) {
			wback_range(t->fd, t->wb, end);
			t->wb = end;
		}
	}
	return NULL;
}

int
tape_async(struct tape_w *w, int note_fd)
{
	struct tw_wt *t;
	int rc;

	if (w->wt != NULL) {
		w->wt->note = note_fd;
		return 0;
	}
	if ((t = calloc(1, sizeof *t)) == NULL)
		return -1;
	t->go = eventfd(0, EFD_CLOEXEC);
	t->back = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->go < 0 || t->back < 0)
		goto fail;
	t->note = note_fd;
	t->fd = w->fd;
	t->wb = w->out + w->len;
	atomic_init(&t->busy, 0);
	atomic_init(&t->quit, 0);
	if ((rc = thread_start(&t->th, wt_main, t, "tape-w")) != 0) {
		errno = rc;
		goto fail;
	}
	w->wt = t;
	return 0;
fail:
	rc = errno;
	if (t->go >= 0)
		close(t->go);
	if (t->back >= 0)
		close(t->back);
	free(t);
	errno = rc;
	return -1;
}

/*
 * What tape-w was handed, taken back if it is done: 1 if it is not yet,
 * else 0, or -1 if its write failed.  Then its buffer is put in front of
 * the caller's, and the failure is the caller's own (wfail, werr).
 */
static int
wt_reap(struct tape_w *w)
{
	struct tw_wt *t = w->wt;
	size_t need;
	char *nb;

	if (t == NULL || !w->handed)
		return 0;
	if (atomic_load_explicit(&t->busy, memory_order_acquire))
		return 1;
	w->handed = 0;
	w->fly = 0;
	if (t->err == 0) {
		/* Kept for the next (its pages need no fault again), cut
		 * back to TW_SPARE_MAX if it grew past. */
		if (w->spare == NULL && t->cap > TW_SPARE_MAX &&
		    (nb = buf_resize(t->buf, t->cap, TW_SPARE_MAX)) != NULL) {
			t->buf = nb;
			t->cap = TW_SPARE_MAX;
		}
		if (w->spare == NULL && t->cap <= TW_SPARE_MAX) {
			w->spare = t->buf;
			w->spare_cap = t->cap;
		} else
			buf_free(t->buf, t->cap);
		t->buf = NULL;
		return 0;
	}
	/* Its bytes, then the caller's, in one buffer at file offset t->at
	 * (an open D frame of the caller's is closed: it moved). */
	need = t->len + w->len + TAPE_LINE_MAX + 1;
	if ((nb = buf_resize(t->buf, t->cap, need)) == NULL) {
		/* Not lost: tape-w's buffer is kept aside, and taken back
		 * at the next call (nothing else is written meanwhile). */
		w->handed = 1;
		w->fly = t->len;
		w->ferr = ENOMEM;
		return werror(w, ENOMEM);
	}
	memcpy(nb + t->len, w->buf, w->len);
	buf_free(w->spare, w->spare_cap);
	w->spare = NULL;
	buf_free(w->buf, w->cap);
	t->buf = NULL;
	w->buf = nb;
	w->cap = need;
	w->len += t->len;
	w->out = t->at;
	w->dfr_open = 0;
	return wfail(w, t->off, t->err);
}

/* Waits until tape-w has nothing in hand; wt_reap's 0 or -1. */
static int
wt_wait(struct tape_w *w)
{
	struct pollfd pfd;
	uint64_t v;
	int r;

	while ((r = wt_reap(w)) > 0) {
		pfd.fd = w->wt->back;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, -1);
		(void)read(w->wt->back, &v, sizeof v);
	}
	return r;
}

/* Hands the buffer to tape-w if it has nothing in hand (else keeps it):
 * 0, or -1 if what tape-w had failed.  tape-w's old buffer becomes the
 * next. */
static int
wt_send(struct tape_w *w)
{
	struct tw_wt *t = w->wt;
	int r;

	if ((r = wt_reap(w)) != 0)
		return r < 0 ? -1 : 0;
	if (w->len == 0 && t->img == NULL)
		return 0;
	if (w->spare == NULL) {
		if ((w->spare = buf_new(TW_BUF)) == NULL)
			return wflush(w);	/* no memory for two */
		w->spare_cap = TW_BUF;
	}
	w->dfr_open = 0;	/* moved */
	t->buf = w->buf;
	t->len = w->len;
	t->cap = w->cap;
	t->at = w->out;
	w->handed = 1;
	w->fly = w->len;
	w->fly_ns = mono_ns();
	w->out += (uint64_t)w->len;
	w->len = 0;
	w->buf = w->spare;
	w->cap = w->spare_cap;
	w->spare = NULL;
	atomic_store_explicit(&t->busy, 1, memory_order_release);
	efd_add(t->go);
	return 0;
}

/* tape-w writes (nothing failed since the last write that worked). */
static int
wt_on(const struct tape_w *w)
{
	return w->wt != NULL && w->werr == 0 && !w->cut;
}

/* tape-w stopped, after all it was handed (before the file is closed). */
static void
wt_stop(struct tape_w *w)
{
	struct tw_wt *t = w->wt;

	if (t == NULL)
		return;
	(void)wt_wait(w);
	if (w->handed)		/* a failure with no memory: given up */
		buf_free(t->buf, t->cap);
	w->handed = 0;
	w->fly = 0;
	atomic_store(&t->quit, 1);
	efd_add(t->go);
	pthread_join(t->th, NULL);
	close(t->go);
	close(t->back);
	free(t->img);
	free(t);
	w->wt = NULL;
	buf_free(w->spare, w->spare_cap);
	w->spare = NULL;
}

/* The text formats: how many of the buffer's first n bytes are whole
 * lines (a line's strings hold no raw LF). */
static size_t
lines_whole(const struct tape_w *w, size_t n)
{
	const char *lf = memrchr(w->buf, '\n', n);

	return lf != NULL ? (size_t)(lf - w->buf) + 1 : 0;
}

/*
 * Writes the buffer out.  A write that fails (ENOSPC, EDQUOT, EIO...)
 * after part of the buffer went cuts the file back to the end of the last
 * whole line or frame written; the rest stays in the buffer, to be
 * written by a later call: no line or frame is ever in the file twice or
 * in part.
 */
/* Notes a failed write (e its errno); returns -1 with errno e. */
static int
werror(struct tape_w *w, int e)
{
	w->werr = e;
	errno = e;
	return -1;
}

/* The first off bytes of the buffer went to the file, then a write
 * failed with e: the whole lines or frames written stay, the rest is cut
 * off (if that fails too, before the next try) and kept. */
static int
wfail(struct tape_w *w, size_t off, int e)
{
	size_t keep = w->ops->whole != NULL ? w->ops->whole(w, off) :
	    lines_whole(w, off);

	w->cut = off > keep && ftruncate(w->fd, (off_t)(w->out + keep)) != 0;
	memmove(w->buf, w->buf + keep, w->len - keep);
	w->len -= keep;
	w->out += (uint64_t)keep;
	return werror(w, e);
}

static int
wflush(struct tape_w *w)
{
	size_t off = 0;
	ssize_t n;
	char *nb;

	/* Nothing is written behind what tape-w has in hand. */
	if (wt_wait(w) != 0)
		return -1;
	w->dfr_open = 0;	/* written, or moved: closed */
	if (w->cut && ftruncate(w->fd, (off_t)w->out) != 0)
		return werror(w, errno);
	w->cut = 0;
	while (off < w->len) {
		n = pwrite(w->fd, w->buf + off, w->len - off,
		    (off_t)(w->out + off));
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return wfail(w, off, n == 0 ? EIO : errno);
	}
	w->out += (uint64_t)w->len;
	w->len = 0;
	w->werr = 0;
	/* Grown while writes failed: back to its size. */
	if (w->cap > TW_BUF &&
	    (nb = buf_resize(w->buf, w->cap, TW_BUF)) != NULL) {
		w->buf = nb;
		w->cap = TW_BUF;
	}
	wback(w);
	return 0;
}

char *
tw_begin(struct tape_w *w, const char **lim)
{
	char *nb;

	w->ferr = 0;
	if (w->cap - w->len >= TAPE_LINE_MAX + 1)
		goto room;
	/* tape-w busy: the buffer grows meanwhile, to a bound; there it
	 * waits for tape-w. */
	if (wt_on(w) && wt_send(w) == 0 && w->cap - w->len <
	    TAPE_LINE_MAX + 1 && w->cap >= TW_FLY_MAX && wt_wait(w) == 0)
		(void)wt_send(w);
	/* Full and cannot be written out: kept whole, in a larger buffer,
	 * until a write works (the caller sees tape_error and stops giving
	 * records; the lines it writes meanwhile are few). */
	if (w->cap - w->len < TAPE_LINE_MAX + 1 &&
	    (wt_on(w) || wflush(w) != 0)) {
		if ((nb = buf_resize(w->buf, w->cap, 2 * w->cap)) == NULL) {
			w->ferr = ENOMEM;
			return NULL;
		}
		w->buf = nb;
		w->cap *= 2;
	}
room:
	*lim = w->buf + w->len + TAPE_LINE_MAX;
	return w->buf + w->len;
}

int
tw_commit(struct tape_w *w, char *d)
{
	if (d == NULL) {
		errno = w->ferr != 0 ? w->ferr : EMSGSIZE;
		return -1;
	}
	w->len = (size_t)(d - w->buf);
	return 0;
}

int
tw_end(struct tape_w *w, char *d)
{
	if (d != NULL)
		*d++ = '\n';
	return tw_commit(w, d);
}

/* ---- the writer's calls: each meta line's fields in schema order ---- */

static struct rec_field
vt(const char *s)
{
	return rec_fs(s, s != NULL ? strlen(s) : 0);
}

static int
meta(struct tape_w *w, int m, const struct rec_field *v, unsigned n)
{
	return w->ops->meta(w, m, v, n);
}

/* ---- the summary sidecar ---- */

static void
sum_drop(struct tape_w *w)
{
	if (w->sum != NULL)
		sum_free(w->sum);
	free(w->sum);
	free(w->path);
	w->sum = NULL;
	w->path = NULL;
}

void
tw_sum(struct tape_w *w, uint64_t foff, uint64_t ts, uint32_t node,
       uint32_t pid, uint32_t tid, int32_t eid, int64_t arg)
{
	w->sum->foff = foff;
	if (sum_rec(w->sum, ts, node, pid, tid, eid, arg) != 0)
		sum_drop(w);
}

void
tw_sum_piece(struct tape_w *w, uint64_t foff, uint32_t node, uint32_t pid,
	     uint32_t tid, const void *recs, size_t len,
	     const struct tape_stretch *st, size_t off)
{
	int r;

	w->sum->foff = foff;
	if (st == NULL)
		r = sum_piece(w->sum, node, pid, tid, recs, len);
	else
		r = sum_piece_st(w->sum, node, pid, tid, recs, len, st->at,
		    st->n, st->base + (uint32_t)off, st->one);
	if (r != 0)
		sum_drop(w);
}

void
tw_sum_dense(struct tape_w *w, uint64_t foff, uint32_t node, uint32_t pid,
	     uint32_t tid, const void *src, size_t slen, uint64_t prev,
	     const struct rec_dense_shift *sh, const struct rec_dense_segs *sg)
{
	w->sum->foff = foff;
	if (sum_dense(w->sum, node, pid, tid, src, slen, prev, sh, sg) != 0)
		sum_drop(w);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Writes the sidecar if everything summarised is in the file, and (unless
 * now) it has new records and a second has passed since the last, a
 * second more for each 4 MiB it has (64 KiB a thread: with a thousand
 * threads, every 17 s, so that writing it stays a small part of the
 * writer's work). */
static int
sum_due(const struct tape_w *w, uint64_t t)
{
	uint64_t wait;

	if (w->sum == NULL)
		return 0;
	wait = 1000000000u * (1 + (uint64_t)w->sum->nrow * SUM_NB *
	    sizeof(struct sum_cell) / (4u << 20));
	return t - w->sum_ns >= wait && w->sum->records != w->sum_records;
}

static void
sum_out(struct tape_w *w, int now)
{
	uint64_t t;

	if (w->sum == NULL || w->len != 0 || w->handed)
		return;
	t = mono_ns();
	if (!now && !sum_due(w, t))
		return;
	w->sum_ns = t;
	w->sum_records = w->sum->records;
	(void)sum_write(w->sum, w->path, w->out);
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
	static const struct tr_wops *const ops[] = { &tr_text_wops,
	    &tr_bin_wops, &tr_bee_wops };
	struct rec_field v[2];
	struct stat sb;
	struct tape_w *w;
	int e, how = fmt & TAPE_OPEN_NEW ? O_EXCL : O_TRUNC;
	int idx = !(fmt & TAPE_OPEN_NOIDX);

	fmt &= ~(TAPE_OPEN_NEW | TAPE_OPEN_NOIDX);
	if (fmt != TAPE_FMT_TAPE && fmt != TAPE_FMT_BIN &&
	    fmt != TAPE_FMT_BEE) {
		errno = EINVAL;
		return NULL;
	}
	if ((w = calloc(1, sizeof *w)) == NULL)
		return NULL;
	w->ops = ops[fmt];
	w->cap = TW_BUF;
	if ((w->buf = buf_new(w->cap)) == NULL ||
	    (w->fd = open(path, O_WRONLY | O_CREAT | how | O_CLOEXEC,
	    0644)) < 0) {
		e = errno;
		buf_free(w->buf, w->cap);
		free(w);
		errno = e;
		return NULL;
	}
	/* A sidecar beside a file only (not /dev/null). */
	if (idx && fmt == TAPE_FMT_BIN && fstat(w->fd, &sb) == 0 &&
	    S_ISREG(sb.st_mode)) {
		if ((w->sum = malloc(sizeof *w->sum)) == NULL ||
		    (w->path = strdup(path)) == NULL)
			goto fail;
		sum_init(w->sum);
	}
	v[0] = rec_fu(fmt != TAPE_FMT_BIN ? TAPE_VERSION :
	    TAPE_BIN_VERSION);
	if ((w->ops->open != NULL && w->ops->open(w) != 0) ||
	    meta(w, TR_M_HEADER, v, 1) != 0)
		goto fail;
	v[0] = vt(mm_id);
	if (meta(w, TR_M_MM, v, 1) != 0)
		goto fail;
	v[0] = rec_fu(realtime_ns);
	v[1] = rec_fu(monotonic_ns);
	if (meta(w, TR_M_CLOCK, v, 2) != 0 || wflush(w) != 0)
		goto fail;
	return w;
fail:
	e = errno;
	close(w->fd);
	sum_drop(w);
	if (w->ops->free != NULL)
		w->ops->free(w);
	buf_free(w->buf, w->cap);
	free(w);
	errno = e;
	return NULL;
}

int
tape_host(struct tape_w *w, uint32_t node, int64_t offset_ns,
	  uint32_t lm_pid, const char *hostname)
{
	struct rec_field v[4] = { rec_fu(node), rec_fi(offset_ns),
	    rec_fu(lm_pid), vt(hostname) };

	return meta(w, TR_M_HOST, v, 4);
}

int
tape_sync(struct tape_w *w, const struct tape_sync *s)
{
	struct rec_field v[TR_SYNC_FIELDS] = { rec_fu(s->node), rec_fu(s->at),
	    rec_fi(s->offset_ns), rec_fi(s->drift_ppb), rec_fu(s->err_ns),
	    rec_fu(s->rtt_ns), rec_fu(s->used), rec_fu(s->model),
	    rec_fu(s->from_ns), rec_fu(s->lo_ns), rec_fu(s->hi_ns),
	    rec_fu(s->allow_ppb) };

	/* Model 0 (none: a line of an older file, copied) has the seven
	 * fields of the lines before model numbers. */
	return meta(w, TR_M_SYNC, v, s->model != 0 ? TR_SYNC_FIELDS : 7);
}

int
tape_tsc(struct tape_w *w, const struct tape_tsc *t)
{
	struct rec_field v[7] = { rec_fu(t->node), rec_fu(t->tick0),
	    rec_fu(t->ns0), rec_fu(t->mult), rec_fu(t->err_ns),
	    rec_fu(t->span_ns), rec_fu(t->rate_ppb) };

	return meta(w, TR_M_TSC, v, 7);
}

int
tape_order(struct tape_w *w, uint64_t late, uint64_t clamped,
	   uint64_t forced, uint64_t held_max)
{
	struct rec_field v[4] = { rec_fu(late), rec_fu(clamped), rec_fu(forced),
	    rec_fu(held_max) };

	return meta(w, TR_M_ORDER, v, 4);
}

int
tape_causal(struct tape_w *w, uint64_t matched, uint64_t violations,
	    uint64_t worst_ns, uint64_t unchecked, uint64_t beyond)
{
	struct rec_field v[5] = { rec_fu(matched), rec_fu(violations),
	    rec_fu(worst_ns), rec_fu(unchecked), rec_fu(beyond) };

	return meta(w, TR_M_CAUSAL, v, 5);
}

int
tape_givenup(struct tape_w *w, uint32_t node, uint64_t ts, const char *why)
{
	struct rec_field v[3] = { rec_fu(node), rec_fu(ts), vt(why) };

	return meta(w, TR_M_GIVENUP, v, 3);
}

int
tape_clockstep(struct tape_w *w, uint32_t node, uint64_t ts, int64_t step,
	       uint64_t host_lo, uint64_t host_hi)
{
	struct rec_field v[5] = { rec_fu(node), rec_fu(ts), rec_fi(step),
	    rec_fu(host_lo), rec_fu(host_hi) };

	return meta(w, TR_M_CLOCKSTEP, v, 5);
}

int
tape_late(struct tape_w *w, uint32_t node, uint64_t count)
{
	struct rec_field v[2] = { rec_fu(node), rec_fu(count) };

	return meta(w, TR_M_LATE, v, 2);
}

int
tape_missing(struct tape_w *w, uint32_t node, uint64_t ts, uint64_t held,
	     uint64_t spilled, int known)
{
	struct rec_field v[5] = { rec_fu(node), rec_fu(ts), rec_fu(held),
	    rec_fu(spilled), rec_fu(known != 0) };

	return meta(w, TR_M_MISSING, v, 5);
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
	struct rec_field v[7];
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
	v[0] = rec_fi(eid);
	v[1] = rec_fu(cls);
	v[2] = rec_fu(attr);
	v[3] = rec_fs(fbuf, format_len);
	v[4] = rec_fs(dsc, dsc_len);
	v[5] = rec_fu(node);
	v[6] = rec_fu(pid);
	return meta(w, TR_M_DEF, v, node == 0 ? 5 : 7);
}

int
tape_proc(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t ppid,
	  int is_exit, uint64_t ts, int32_t status, const char *name)
{
	struct rec_field v[7];

	if (name == NULL)
		name = "";
	if (is_exit < 0 || is_exit > TAPE_PROC_GONE) {
		errno = EINVAL;
		return -1;
	}
	v[0] = rec_fu(node);
	v[1] = rec_fu(pid);
	v[2] = rec_fu(ppid);
	v[3] = vt(tr_proc_words[is_exit]);
	v[4] = rec_fu(ts);
	v[5] = rec_fi(status);
	v[6] = vt(name);
	return meta(w, TR_M_PROC, v, 7);
}

int
tape_loss(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	  uint64_t count, uint64_t ts)
{
	struct rec_field v[5] = { rec_fu(node), rec_fu(pid), rec_fu(tid),
	    rec_fu(count), rec_fu(ts) };

	return meta(w, TR_M_LOSS, v, 5);
}

int
tape_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	    uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	unsigned i;

	if (n > REC_ARGS_MAX || (n > 0 && f == NULL)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (f[i].kind > REC_K_STR) {
			errno = EINVAL;
			return -1;
		}
	if (w->ops->record(w, ts, node, pid, tid, eid, f, n) != 0)
		return -1;
	w->records++;
	return 0;
}

int
tape_collect(struct tape_w *w, uint32_t n, uint64_t ts)
{
	struct rec_field v[3] = { rec_fu(n), rec_fu(ts), rec_fu(w->records) };

	return meta(w, TR_M_COLLECT, v, 3);
}

int
tape_stats_count(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
		 uint64_t n)
{
	struct rec_field v[5] = { rec_fu(node), rec_fu(pid), vt(NULL),
	    rec_fi(eid), rec_fu(n) };

	return meta(w, TR_M_STATS_COUNT, v, 5);
}

int
tape_stats_range(struct tape_w *w, uint32_t node, uint32_t pid, int32_t eid,
		 int64_t key, uint64_t n, uint64_t total, uint64_t min,
		 uint64_t max, double mean, double m2)
{
	struct rec_field v[11] = { rec_fu(node), rec_fu(pid), vt(NULL),
	    rec_fi(eid), rec_fi(key), rec_fu(n), rec_fu(total), rec_fu(min),
	    rec_fu(max), rec_fd(mean), rec_fd(m2) };

	return meta(w, TR_M_STATS_RANGE, v, 11);
}

int
tape_control(struct tape_w *w, uint64_t ts, const char *command,
	     size_t command_len)
{
	struct rec_field v[2];

	if (command == NULL && command_len > 0) {
		errno = EINVAL;
		return -1;
	}
	v[0] = rec_fu(ts);
	v[1] = rec_fs(command, command_len);
	return meta(w, TR_M_CONTROL, v, 2);
}

int
tape_plan_add(struct tape_w *w, uint32_t n, uint64_t ts, const char *rule,
	      size_t rule_len)
{
	struct rec_field v[4];

	if (rule == NULL && rule_len > 0) {
		errno = EINVAL;
		return -1;
	}
	v[0] = vt(NULL);	/* the word: the writer's */
	v[1] = rec_fu(n);
	v[2] = rec_fu(ts);
	v[3] = rec_fs(rule, rule_len);
	return meta(w, TR_M_PLAN_ADD, v, 4);
}

int
tape_plan_del(struct tape_w *w, uint32_t n, uint64_t ts)
{
	struct rec_field v[3] = { vt(NULL),
	    rec_fu(n), rec_fu(ts) };

	return meta(w, TR_M_PLAN_DEL, v, 3);
}

int
tape_plan_fire(struct tape_w *w, const struct tape_fire *f)
{
	struct rec_field v[11];

	if (f->text == NULL && f->text_len > 0) {
		errno = EINVAL;
		return -1;
	}
	v[0] = vt(NULL);
	v[1] = rec_fu(f->n);
	v[2] = rec_fu(f->ts);
	v[3] = rec_fu(f->k);
	v[4] = rec_fu(f->node);
	v[5] = rec_fu(f->pid);
	v[6] = rec_fu(f->tid);
	v[7] = rec_fi(f->eid);
	v[8] = rec_fu(f->missed);
	v[9] = rec_fu(f->acted);
	v[10] = rec_fs(f->text != NULL ? f->text : "", f->text_len);
	return meta(w, TR_M_PLAN_FIRE, v, 11);
}

int
tape_piece(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	   const void *recs, size_t len)
{
	if (w->ops->piece == NULL) {
		errno = EINVAL;
		return -1;
	}
	return w->ops->piece(w, node, pid, tid, recs, len, NULL, 0, 0, NULL,
	    NULL);
}

int
tape_piece_from(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
		const void *recs, size_t len, const void *src, size_t slen,
		int same, size_t *sused)
{
	*sused = SIZE_MAX;
	if (w->ops->piece == NULL) {
		errno = EINVAL;
		return -1;
	}
	return w->ops->piece(w, node, pid, tid, recs, len, src, slen, same,
	    NULL, sused);
}

int
tape_piece_stretch(struct tape_w *w, uint32_t node, uint32_t pid,
		   uint32_t tid, const void *recs, size_t len, const void *src,
		   size_t slen, int same, const struct tape_stretch *st,
		   size_t *sused)
{
	if (sused != NULL)
		*sused = SIZE_MAX;
	if (w->ops->piece == NULL) {
		errno = EINVAL;
		return -1;
	}
	return w->ops->piece(w, node, pid, tid, recs, len, src, slen, same,
	    st, src != NULL ? sused : NULL);
}

int
tape_piece_dense(struct tape_w *w, uint32_t node, uint32_t pid,
		 uint32_t tid, const void *src, size_t slen, uint64_t prev,
		 const struct rec_dense_shift *sh,
		 const struct rec_dense_segs *sg, size_t len, size_t *sused,
		 uint64_t *last)
{
	*sused = 0;
	*last = prev;
	if (w->ops != &tr_bin_wops) {
		errno = EINVAL;
		return -1;
	}
	return tr_bin_piece_dense(w, node, pid, tid, src, slen, prev, sh, sg,
	    len, sused, last);
}

char *
tape_dense_at(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	      char **lim, uint64_t *prev, uint64_t *foff)
{
	if (w->ops != &tr_bin_wops)
		return NULL;
	return tr_bin_dense_at(w, node, pid, tid, lim, prev, foff);
}

void
tape_dense_put(struct tape_w *w, char *end, size_t nrec, uint32_t node,
	       uint32_t pid, uint32_t tid, uint64_t last)
{
	tr_bin_dense_put(w, end, nrec, node, pid, tid, last);
}

void
tape_sum(struct tape_w *w, uint64_t foff, uint64_t ts, uint32_t node,
	 uint32_t pid, uint32_t tid, int32_t eid)
{
	if (w->sum != NULL)
		tw_sum(w, foff, ts, node, pid, tid, eid, 0);
}

void
tape_sum_bucket(const struct tape_w *w, uint64_t *lo, uint64_t *wd)
{
	*lo = 0;
	*wd = 0;
	if (w->sum != NULL)
		sum_bucket(w->sum, lo, wd);
}

void
tape_sum_count(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	       uint32_t k, uint64_t tlast)
{
	if (w->sum != NULL &&
	    sum_count(w->sum, node, pid, tid, k, tlast) != 0)
		sum_drop(w);
}

int
tape_write_out(struct tape_w *w)
{
	uint64_t t;
	int r;

	if (!wt_on(w)) {
		if (wflush(w) != 0)
			return -1;
		sum_out(w, 0);
		return 0;
	}
	if ((r = wt_reap(w)) < 0)
		return -1;
	/* A sidecar due goes with the buffer: tape-w writes it once all it
	 * sums is in the file (what is in the buffer, tape-w idle). */
	if (r == 0 && sum_due(w, t = mono_ns()) &&
	    (w->wt->img = sum_image(w->sum, w->out + w->len,
	    &w->wt->ilen)) != NULL) {
		w->wt->path = w->path;
		w->sum_ns = t;
		w->sum_records = w->sum->records;
	}
	return wt_send(w);
}

int
tape_flush(struct tape_w *w)
{
	if (wflush(w) != 0)
		return -1;
	if (fdatasync(w->fd) != 0 && errno != EINVAL && errno != EROFS)
		return -1;
	sum_out(w, 0);
	return 0;
}

int
tape_close(struct tape_w *w)
{
	struct rec_field v;
	int rc = 0, e = 0;

	if (w == NULL)
		return 0;
	v = rec_fu(w->records);
	if (meta(w, TR_M_END, &v, 1) != 0 || tape_flush(w) != 0) {
		rc = -1;
		e = errno;
	} else
		sum_out(w, 1);
	wt_stop(w);
	wb_stop(w);
	if (close(w->fd) != 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (w->ops->free != NULL)
		w->ops->free(w);
	sum_drop(w);
	buf_free(w->buf, w->cap);
	free(w);
	if (rc != 0)
		errno = e;
	return rc;
}

int
tape_error(const struct tape_w *w)
{
	return w->werr;
}

size_t
tape_unwritten(const struct tape_w *w)
{
	return w->len + w->fly;
}

uint64_t
tape_records(const struct tape_w *w)
{
	return w->records;
}

uint64_t
tape_written(const struct tape_w *w)
{
	return w->out - w->fly;
}

int
tape_full(const struct tape_w *w)
{
	return w->wt != NULL && w->handed && w->len >= TW_FLY_MAX / 2 &&
	    atomic_load_explicit(&w->wt->busy, memory_order_acquire);
}

uint64_t
tape_waiting(const struct tape_w *w, uint64_t now)
{
	if (w->wt == NULL || !w->handed ||
	    !atomic_load_explicit(&w->wt->busy, memory_order_acquire) ||
	    now < w->fly_ns)
		return 0;
	return now - w->fly_ns;
}

uint64_t
tape_end(const struct tape_w *w)
{
	return w->out + w->len;
}
