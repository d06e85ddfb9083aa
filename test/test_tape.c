/* SPDX-License-Identifier: MIT */
/* test_tape.c: unit tests of the trace file writer and reader; the BEE
 * Ascii format's own in test_beefmt.c. */
#include <fcntl.h>
#include <float.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tape_test.h"
#include "rec/dense.h"

TestSuite(tape, .init = setup, .fini = teardown);

static const char ufmt[] = "a=%d b=%ld c=%u d=%x e=%f f=%s g=%c";
static const char xfmt[] = "%lld %llu %g %s";

struct sample {
	uint64_t		ts;
	int32_t			eid;
	unsigned		n;
	struct rec_field	f[REC_ARGS_MAX];
};

static char allbytes[1024];

static unsigned
samples(struct sample *s)
{
	unsigned i, n = 0;

	for (i = 0; i < sizeof allbytes; i++)
		allbytes[i] = (char)i;
	s[n++] = (struct sample){ 10, 1, 7, { fi(-1), fi(INT64_MAX),
	    fu(0), fu(0xdeadbeef), fd(0.1), fs("plain", 5), fi('x') } };
	s[n++] = (struct sample){ 11, 1, 7, { fi(INT64_MIN), fi(0),
	    fu(UINT32_MAX), fu(0), fd(-0.0), fs("", 0), fi(-128) } };
	s[n++] = (struct sample){ 12, 2, 4, { fi(INT64_MIN), fu(UINT64_MAX),
	    fd(1e300), fs("q\"b\\n\nt\tr\r", 10) } };
	s[n++] = (struct sample){ 13, 2, 4, { fi(INT64_MAX), fu(1),
	    fd(DBL_MIN / 4), fs("\x01\xff\x7f\0z", 5) } };
	s[n++] = (struct sample){ 14, 2, 4, { fi(0), fu(0), fd(INFINITY),
	    fs(allbytes, sizeof allbytes) } };
	s[n++] = (struct sample){ 15, 2, 4, { fi(1), fu(2), fd(-INFINITY),
	    fs(allbytes, 300) } };
	s[n++] = (struct sample){ 16, 2, 4, { fi(1), fu(2), fd(NAN),
	    fs("nan", 3) } };
	s[n++] = (struct sample){ 17, 2, 4, { fi(1), fu(2), fd(-DBL_MAX),
	    fs(" ", 1) } };
	s[n++] = (struct sample){ 18, 2, 4, { fi(1), fu(2), fd(4.9e-324),
	    fs("#", 1) } };
	s[n++] = (struct sample){ 20, REC_EID_BLOCK_NAME, 2,
	    { fi(7), fs("main", 4) } };
	s[n++] = (struct sample){ 21, REC_EID_BLOCK_BEGIN, 1, { fi(7) } };
	s[n++] = (struct sample){ UINT64_MAX, REC_EID_BLOCK_END, 1,
	    { fi(7) } };
	return n;
}

static void
write_sample_fmt(const char *p, const struct sample *s, unsigned ns, int fmt)
{
	struct tape_w *w;
	unsigned i;

	w = tape_open_fmt(p, fmt, "mm 1", 1700000000000000000ull, 12345);
	cr_assert_not_null(w, "tape_open: %s", strerror(errno));
	cr_assert_eq(tape_host(w, 1, -5000, 42, "alpha.example"), 0);
	cr_assert_eq(tape_def(w, 1, REC_CLASS_USER, REC_ATTR_POINT, ufmt,
	    strlen(ufmt), "user \"one\"", 10), 0);
	cr_assert_eq(tape_def(w, 2, REC_CLASS_USER, REC_ATTR_POINT, xfmt,
	    strlen(xfmt), NULL, 0), 0);
	cr_assert_eq(tape_def(w, REC_EID_BLOCK_BEGIN, REC_CLASS_PROCEDURE,
	    REC_ATTR_ACT, "%d", 2, "block begin", 11), 0);
	cr_assert_eq(tape_def(w, REC_EID_BLOCK_END, REC_CLASS_PROCEDURE,
	    REC_ATTR_TERM, "%d", 2, "block end", 9), 0);
	cr_assert_eq(tape_def(w, REC_EID_BLOCK_NAME, REC_CLASS_PROCEDURE,
	    REC_ATTR_NAME, "%d %s", 5, "block name", 10), 0);
	cr_assert_eq(tape_proc(w, 1, 100, 1, 0, 5, 0, "a \"b\"\n"), 0);
	for (i = 0; i < ns; i++)
		cr_assert_eq(tape_record(w, s[i].ts, 1, 100, 101, s[i].eid,
		    s[i].f, s[i].n), 0);
	cr_assert_eq(tape_loss(w, 1, 100, 101, 7, 30), 0);
	cr_assert_eq(tape_collect(w, 1, 31), 0);
	cr_assert_eq(tape_flush(w), 0);
	cr_assert_eq(tape_loss(w, 1, 100, 102, 5, 32), 0);
	cr_assert_eq(tape_proc(w, 1, 100, 1, 1, 40, 3, "a"), 0);
	cr_assert_eq(tape_records(w), ns);
	cr_assert_eq(tape_close(w), 0);
}

static void
write_sample(const char *p, const struct sample *s, unsigned ns)
{
	write_sample_fmt(p, s, ns, TAPE_FMT_TAPE);
}

static void
round_trip(int fmt)
{
	struct sample s[32];
	const struct grmtrace_def *d;
	const char *p = path("rt.trace"), *why;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	unsigned i, j, ns = samples(s);
	uint64_t end;

	write_sample_fmt(p, s, ns, fmt);
	r = topen(p, &why);
	cr_assert_not_null(r, "grmtrace_open: %s", why);
	for (i = 0; i < ns; i++) {
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
		cr_assert_eq(ev->ts, s[i].ts);
		cr_assert_eq(ev->node, 1);
		cr_assert_eq(ev->pid, 100);
		cr_assert_eq(ev->tid, 101);
		cr_assert_eq(ev->eid, s[i].eid);
		cr_assert_eq(ev->n, s[i].n);
		cr_assert_not_null(ev->def);
		cr_assert_eq(ev->def->eid, s[i].eid);
		for (j = 0; j < ev->n; j++)
			same_field(&s[i].f[j], &ev->f[j]);
	}
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_next(r, &ev), 0);
	cr_assert_eq(grmtrace_losses(r), 12);
	cr_assert_eq(grmtrace_ended(r, &end), 1);
	cr_assert_eq(end, ns);
	cr_assert_not_null(d = grmtrace_def(r, 1));
	cr_assert_str_eq(d->format, ufmt);
	cr_assert_str_eq(d->description, "user \"one\"");
	cr_assert_eq(d->cls, REC_CLASS_USER);
	cr_assert_eq(d->attr, REC_ATTR_POINT);
	cr_assert_eq(d->nfields, 7);
	cr_assert_not_null(d = grmtrace_def(r, 2));
	cr_assert_str_eq(d->description, "");
	cr_assert_not_null(d = grmtrace_def(r, REC_EID_BLOCK_NAME));
	cr_assert_eq(d->attr, REC_ATTR_NAME);
	cr_assert_null(grmtrace_def(r, 3));
	grmtrace_close(r);
}

Test(tape, round_trip)
{
	round_trip(TAPE_FMT_TAPE);
}

/* The binary format gives back exactly what the text one does. */
Test(tape, round_trip_binary)
{
	round_trip(TAPE_FMT_BIN);
}

/* So does BEE Ascii: every field kind, every byte in strings, definitions,
 * processes, losses, the end. */
Test(tape, round_trip_bee)
{
	round_trip(TAPE_FMT_BEE);
}

/* Binary: records written as they are in memory come back decoded, in
 * frames of at most a line's size, and a piece that is not whole
 * records is refused. */
Test(tape, binary_pieces)
{
	const char *p = path("pieces.bin"), *why;
	static unsigned char recs[3000 * 32];
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;
	int64_t a;
	uint64_t b, end;
	unsigned i;

	for (i = 0; i < 3000; i++) {
		rec_put_hdr(recs + i * 32, 32, REC_CLASS_USER, REC_ATTR_POINT,
		    3, 1000 + i);
		a = -(int64_t)i;
		b = (uint64_t)i * 7;
		memcpy(recs + i * 32 + 16, &a, 8);
		memcpy(recs + i * 32 + 24, &b, 8);
	}
	w = tape_open_fmt(p, TAPE_FMT_BIN, "mm", 1, 2);
	cr_assert_not_null(w);
	cr_assert_eq(tape_def(w, 3, REC_CLASS_USER, REC_ATTR_POINT, "%d %u",
	    5, "pair", 4), 0);
	cr_assert_eq(tape_piece(w, 2, 300, 301, recs, sizeof recs), 0);
	cr_assert_eq(tape_piece(w, 2, 300, 301, recs, 31), -1, "half a record");
	cr_assert_eq(tape_records(w), 3000);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(r = topen(p, &why), "%s", why);
	for (i = 0; i < 3000; i++) {
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
		cr_assert(ev->kind == GRMTRACE_RECORD && ev->node == 2 &&
		    ev->pid == 300 && ev->tid == 301 && ev->eid == 3 &&
		    ev->ts == 1000 + i && ev->n == 2);
		cr_assert_eq(ev->f[0].v.i, -(int64_t)i);
		cr_assert_eq(ev->f[1].v.u, (uint64_t)i * 7);
	}
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_ended(r, &end), 1);
	cr_assert_eq(end, 3000);
	grmtrace_close(r);
}

/* The whole of file p into a new buffer (*n bytes). */
static unsigned char *
slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	unsigned char *b;

	cr_assert_not_null(f, "%s", p);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	cr_assert_not_null(b = malloc(*n + 1));
	cr_assert_eq(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

/* Closes w1 and w2 (files p1 and p2): the same records, the same bytes,
 * the same sidecars. */
static void
same_files(struct tape_w *w1, const char *p1, struct tape_w *w2,
	   const char *p2)
{
	char i1[PATH_MAX], i2[PATH_MAX];
	unsigned char *b1, *b2;
	size_t n1, n2;

	cr_assert_eq(tape_records(w1), tape_records(w2));
	cr_assert_eq(tape_close(w1), 0);
	cr_assert_eq(tape_close(w2), 0);
	b1 = slurp(p1, &n1);
	b2 = slurp(p2, &n2);
	cr_assert(n1 == n2 && memcmp(b1, b2, n1) == 0, "the files differ");
	free(b1);
	free(b2);
	snprintf(i1, sizeof i1, "%s.idx", p1);
	snprintf(i2, sizeof i2, "%s.idx", p2);
	b1 = slurp(i1, &n1);
	b2 = slurp(i2, &n2);
	cr_assert(n1 == n2 && n1 > 0 && memcmp(b1, b2, n1) == 0,
	    "the sidecars differ");
	free(b1);
	free(b2);
}

/* The same records written in D frames encoded again (tape_piece) and
 * copied from the run they came in (tape_piece_from, as mainmon does),
 * their times moved (a clock conversion: steps of a nanosecond, a jump),
 * in parts, some records left out: the same files, the same sidecars. */
Test(tape, binary_pieces_from_dense)
{
	const char *p1 = path("enc.bin"), *p2 = path("copy.bin");
	static unsigned char recs[6000 * 40], run[sizeof recs * 2];
	struct tape_w *w1, *w2;
	size_t len = 0, rlen, used, sp = REC_DENSE_BASE, mark = 0;
	size_t from, to, k;
	uint64_t v[3], shift = 5000;
	struct rec_hdr h;
	ssize_t sk;
	unsigned i;

	for (i = 0; i < 6000; i++) {
		v[0] = (uint64_t)-(int64_t)i;
		v[1] = i % 7 == 0 ? 0xffffffffu : i;
		v[2] = i % 13 == 0 ? 1ull << 40 : 3;	/* long */
		rec_put_hdr(recs + len, 16 + 8 * (2 + i % 2), REC_CLASS_USER,
		    REC_ATTR_POINT, (int32_t)(i % 3), 1000000 + 37ull * i);
		memcpy(recs + len + 16, v, 8 * (2 + i % 2));
		len += 16 + 8 * (2 + i % 2);
	}
	rlen = (size_t)rec_dense_encode(recs, len, run, sizeof run);
	for (k = 0, i = 0; k < len; k += h.len, i++) {
		memcpy(&h, recs + k, sizeof h);
		if (i % 500 == 0)
			shift += i % 1000 == 0 ? 1 : (uint64_t)-1;
		if (i == 3000)
			shift += 3ull << 31;
		h.ts += shift;
		memcpy(recs + k, &h, sizeof h);
	}
	cr_assert_not_null(w1 = tape_open_fmt(p1, TAPE_FMT_BIN, "mm", 1, 2));
	cr_assert_not_null(w2 = tape_open_fmt(p2, TAPE_FMT_BIN, "mm", 1, 2));
	for (i = 0; i < 3; i++) {
		cr_assert_eq(tape_def(w1, (int32_t)i, REC_CLASS_USER,
		    REC_ATTR_POINT, i % 2 ? "%d %u %lu" : "%d %u", 5 + 4 * (i % 2),
		    "", 0), 0);
		cr_assert_eq(tape_def(w2, (int32_t)i, REC_CLASS_USER,
		    REC_ATTR_POINT, i % 2 ? "%d %u %lu" : "%d %u", 5 + 4 * (i % 2),
		    "", 0), 0);
	}
	/* Parts of a few records to many frames' worth; every tenth part's
	 * first record left out. */
	for (from = 0, i = 0; from < len; from = to, i++) {
		memcpy(&h, recs + from, sizeof h);
		if (i % 10 == 9) {
			to = from + h.len;
			continue;
		}
		for (to = from, k = 0; to < len && k < 1 + i * 37 % 3000; k++) {
			memcpy(&h, recs + to, sizeof h);
			to += h.len;
		}
		cr_assert_eq(tape_piece(w1, 1, 2, 3, recs + from, to - from), 0);
		sk = rec_dense_skip(run + sp, rlen - sp, from - mark);
		cr_assert_geq(sk, 0);
		sp += (size_t)sk;
		cr_assert_eq(tape_piece_from(w2, 1, 2, 3, recs + from,
		    to - from, run + sp, rlen - sp, 0, &used), 0);
		cr_assert_neq(used, SIZE_MAX);
		sp += used;
		mark = to;
	}
	same_files(w1, p1, w2, p2);
}

Test(tape, many_records_cross_buffer)
{
	const char *p = path("big.trace"), *why;
	struct rec_field f[2];
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;
	char s[200];
	uint64_t i, n = 60000;

	memset(s, '"', sizeof s);
	cr_assert_not_null(w = tape_open(p, "x", 0, 0));
	cr_assert_eq(tape_def(w, 0, REC_CLASS_USER, 0, "%llu %s", 7, "", 0),
	    0);
	for (i = 0; i < n; i++) {
		f[0] = fu(i * 0x9e3779b97f4a7c15ull);
		f[1] = fs(s, i % sizeof s);
		cr_assert_eq(tape_record(w, i, 1, 2, 3, 0, f, 2), 0);
	}
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(r = topen(p, &why));
	for (i = 0; i < n; i++) {
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
		cr_assert_eq(ev->ts, i);
		cr_assert_eq(ev->f[0].v.u, i * 0x9e3779b97f4a7c15ull);
		cr_assert_eq(ev->f[1].v.s.len, i % sizeof s);
	}
	cr_assert_eq(grmtrace_next(r, &ev), 0);
	grmtrace_close(r);
}

/* Writes n records of a type "%llu %s" (ts i, its value i * K, a string
 * of i % 200 bytes) into w, handing the buffer out every 997 records. */
static void
async_fill(struct tape_w *w, uint64_t from, uint64_t n)
{
	struct rec_field f[2];
	static char s[200];
	uint64_t i;

	memset(s, 'q', sizeof s);
	for (i = from; i < from + n; i++) {
		f[0] = fu(i * 0x9e3779b97f4a7c15ull);
		f[1] = fs(s, i % sizeof s);
		cr_assert_eq(tape_record(w, i, 1, 2, 3, 0, f, 2), 0);
		cr_assert_leq(tape_written(w), tape_end(w));
		if (i % 997 == 0)
			(void)tape_write_out(w);
	}
}

/* The records async_fill wrote, 0 to n - 1, each once and in order. */
static void
async_check(const char *p, uint64_t n)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	const char *why;
	uint64_t i;

	cr_assert_not_null(r = topen(p, &why), "%s", why);
	for (i = 0; i < n; i++) {
		cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
		cr_assert_eq(ev->ts, i);
		cr_assert_eq(ev->f[0].v.u, i * 0x9e3779b97f4a7c15ull);
		cr_assert_eq(ev->f[1].v.s.len, i % 200);
	}
	cr_assert_eq(grmtrace_next(r, &ev), 0);
	grmtrace_close(r);
}

/* Waits up to 10 s for tape-w to add to efd; what it added. */
static uint64_t
async_note(int efd)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t v = 0;

	cr_assert_eq(poll(&pfd, 1, 10000), 1, "tape-w said nothing");
	cr_assert_eq(read(efd, &v, sizeof v), (ssize_t)sizeof v);
	return v;
}

/* tape_async: the writes from tape-w, each told on the eventfd; what
 * was given is all in the file, in order, in both formats. */
Test(tape, async_writes_from_its_thread)
{
	static const int fmts[] = { TAPE_FMT_TAPE, TAPE_FMT_BIN };
	uint64_t n = 60000;
	struct tape_w *w;
	const char *p;
	unsigned k;
	int efd;

	for (k = 0; k < 2; k++) {
		p = path(k == 0 ? "async.trace" : "async.bin");
		cr_assert_geq(efd = eventfd(0, EFD_CLOEXEC), 0);
		cr_assert_not_null(w = tape_open_fmt(p, fmts[k], "x", 0, 0));
		cr_assert_eq(tape_async(w, efd), 0);
		cr_assert_eq(tape_def(w, 0, REC_CLASS_USER, 0, "%llu %s", 7,
		    "", 0), 0);
		async_fill(w, 0, n);
		cr_assert_geq(async_note(efd), 1);
		cr_assert_eq(tape_flush(w), 0);
		cr_assert_eq(tape_written(w), tape_end(w));
		cr_assert_eq(tape_unwritten(w), 0);
		cr_assert_eq(tape_records(w), n);
		cr_assert_eq(tape_close(w), 0);
		close(efd);
		async_check(p, n);
	}
}

/* The sidecar falls due with nothing new to write: tape-w is handed it
 * alone, writes it covering the whole file, and is waited for as for
 * bytes (more records and writes meanwhile go after it). */
Test(tape, async_sidecar_alone)
{
	const char *p = path("async_sum.bin");
	char idx[PATH_MAX + 64];
	unsigned char h[32];
	struct tape_w *w;
	uint64_t covers = 0, size;
	int efd, fd, i;

	snprintf(idx, sizeof idx, "%s.idx", p);
	cr_assert_geq(efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), 0);
	cr_assert_not_null(w = tape_open_fmt(p, TAPE_FMT_BIN, "x", 0, 0));
	cr_assert_eq(tape_async(w, efd), 0);
	cr_assert_eq(tape_def(w, 0, REC_CLASS_USER, 0, "%llu %s", 7, "", 0),
	    0);
	async_fill(w, 0, 1000);
	cr_assert_eq(tape_flush(w), 0);		/* the first sidecar too */
	async_fill(w, 1000, 1000);
	cr_assert_eq(tape_flush(w), 0);		/* not due: within 1 s */
	cr_assert_eq(tape_written(w), tape_end(w));
	size = tape_end(w);
	usleep(1100000);
	/* Due, nothing to write: the sidecar alone. */
	cr_assert_eq(tape_write_out(w), 0);
	async_fill(w, 2000, 1000);
	cr_assert_eq(tape_write_out(w), 0);
	for (i = 0; i < 1000 && tape_written(w) < tape_end(w); i++) {
		usleep(10000);
		cr_assert_eq(tape_write_out(w), 0);
	}
	cr_assert_eq(tape_written(w), tape_end(w));
	cr_assert_geq(fd = open(idx, O_RDONLY), 0);
	cr_assert_eq(read(fd, h, sizeof h), (ssize_t)sizeof h);
	close(fd);
	for (i = 7; i >= 0; i--)
		covers = covers << 8 | h[24 + i];
	cr_assert_eq(covers, size, "the sidecar covers %llu bytes of %llu",
	    (unsigned long long)covers, (unsigned long long)size);
	cr_assert_eq(tape_close(w), 0);
	close(efd);
	async_check(p, 3000);
}

/* A write of tape-w's fails (the file size limit): the file is cut back
 * to whole lines, the writer keeps the rest (tape_error), writes it once
 * writes work, and nothing is lost or written twice. */
Test(tape, async_write_failure_keeps_everything)
{
	const char *p = path("async_fail.trace");
	struct rlimit rl = { 256 << 10, RLIM_INFINITY };
	uint64_t n = 40000, i;
	struct stat st;
	struct tape_w *w;
	char last;
	int efd, fd;

	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_geq(efd = eventfd(0, EFD_CLOEXEC), 0);
	cr_assert_not_null(w = tape_open(p, "x", 0, 0));
	cr_assert_eq(tape_async(w, efd), 0);
	cr_assert_eq(tape_def(w, 0, REC_CLASS_USER, 0, "%llu %s", 7, "", 0),
	    0);
	async_fill(w, 0, n);
	/* Until the failure comes back from tape-w. */
	for (i = 0; i < 100 && tape_error(w) == 0; i++) {
		(void)tape_write_out(w);
		if (tape_error(w) == 0)
			(void)async_note(efd);
	}
	cr_assert_eq(tape_error(w), EFBIG);
	cr_assert_gt(tape_unwritten(w), 0);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_leq(st.st_size, 256 << 10);
	cr_assert_eq(tape_written(w), (uint64_t)st.st_size);
	cr_assert_geq(fd = open(p, O_RDONLY), 0);
	cr_assert_eq(pread(fd, &last, 1, st.st_size - 1), 1);
	close(fd);
	cr_assert_eq(last, '\n', "the file ends in a part of a line");
	/* Writes fail still: the records wait in the writer. */
	async_fill(w, n, 1000);
	cr_assert_eq(tape_write_out(w), -1);
	/* And work again. */
	rl.rlim_cur = RLIM_INFINITY;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_eq(tape_flush(w), 0);
	cr_assert_eq(tape_error(w), 0);
	async_fill(w, n + 1000, 1000);
	cr_assert_eq(tape_close(w), 0);
	close(efd);
	async_check(p, n + 2000);
}

/* Doubles are written as printf("%.17g") writes them (doc/formats.md
 * 1.2), by the writer's own formatting: every kind of value, ties to even
 * at the 17th digit included. */
Test(tape, doubles_as_printf)
{
	static const double special[] = { 0, -0.0, 1, 0.1, 0.5, 1e16, 1e17,
	    1e-4, 1e-5, 123456789012345678.0, DBL_MAX, DBL_MIN, 4.9e-324,
	    DBL_EPSILON, 2251799813685247.75, 2251799813685247.25, 1e300,
	    99999999999999999.0, INFINITY, -INFINITY, NAN };
	const char *p = path("d.trace");
	uint64_t x = 88172645463325252ull, u;
	char want[64], *line = NULL, *got;
	struct rec_field f;
	struct tape_w *w;
	size_t cap = 0;
	long i, n = 0, nv = 300000;
	double *v;
	FILE *in;

	cr_assert_not_null(v = malloc((size_t)nv * sizeof *v));
	for (i = 0; i < nv; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = x;
		if (i < (long)(sizeof special / sizeof special[0]))
			v[i] = special[i];
		else if (i % 3 == 0)
			memcpy(&v[i], &u, 8);	/* any bits */
		else if (i % 3 == 1)	/* m / 2^k: ties at the 17th digit */
			v[i] = (double)((u >> 11) | 1) /
			    (double)(1u << (1 + u % 4));
		else
			v[i] = (double)(u % 100000000) / 1000.0;
		if (i % 2)
			v[i] = -v[i];
	}
	cr_assert_not_null(w = tape_open(p, "x", 0, 0));
	cr_assert_eq(tape_def(w, 1, 8, 2, "%f", 2, "", 0), 0);
	for (i = 0; i < nv; i++) {
		f = fd(v[i]);
		cr_assert_eq(tape_record(w, 1, 1, 1, 1, 1, &f, 1), 0);
	}
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(in = fopen(p, "r"));
	while (getline(&line, &cap, in) > 0) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		got = strrchr(line, ' ') + 1;
		if (isnan(v[n]))
			strcpy(want, "nan");
		else
			snprintf(want, sizeof want, "%.17g", v[n]);
		cr_assert_str_eq(got, want, "value %ld (%a)", n, v[n]);
		n++;
	}
	cr_assert_eq(n, nv);
	fclose(in);
	free(line);
	free(v);
}

Test(tape, writer_rejects)
{
	const char *p = path("w.trace"), *why;
	struct rec_field f[REC_ARGS_MAX + 1];
	static char big[TAPE_LINE_MAX];
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;

	cr_assert_null(tape_open(path("no/such/dir"), "x", 0, 0));
	cr_assert_not_null(w = tape_open(p, NULL, 0, 0));
	errno = 0;
	cr_assert_eq(tape_def(w, 1, 8, 2, "%n", 2, "", 0), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tape_def(w, 1, 8, 2, "%d\0", 3, "", 0), -1);
	cr_assert_eq(tape_def(w, 1, 8, 2, "%s", 2, "", 0), 0);
	memset(f, 0, sizeof f);
	errno = 0;
	cr_assert_eq(tape_record(w, 1, 1, 1, 1, 1, f, REC_ARGS_MAX + 1), -1);
	cr_assert_eq(errno, EINVAL);
	memset(big, 0x01, sizeof big);
	f[0] = fs(big, sizeof big);
	errno = 0;
	cr_assert_eq(tape_record(w, 1, 1, 1, 1, 1, f, 1), -1);
	cr_assert_eq(errno, EMSGSIZE);
	f[0] = fs(big, 100);
	cr_assert_eq(tape_record(w, 2, 1, 1, 1, 1, f, 1), 0);
	cr_assert_eq(tape_records(w), 1);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(r = topen(p, &why));
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->ts, 2);
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	grmtrace_close(r);
}

Test(tape, put_quoted)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(f = open_memstream(&buf, &len));
	cr_assert_eq(grmtrace_fput_string(f, "a\"\\\n\t\r\x01\x7f\xff\0b", 11),
	    0);
	fclose(f);
	cr_assert_str_eq(buf,
	    "\"a\\\"\\\\\\n\\t\\r\\x01\\x7f\\xff\\x00b\"");
	free(buf);
}

#define HDR	"#GRM-TRACE 1\n#DEF 5 8 2 \"%d %u %f %s\" \"ev\"\n"

Test(tape, hostile_header)
{
	bad_text("", -2, "empty");
	bad_text("hello\n1 2 3\n", -2, "not a grm trace");
	bad_text("#GRM-TRACE 3\n", -2, "version");
	bad_text("#GRM-TRACE\n", -2, "not a grm trace");
	bad_text("#GRM-TRACE 10\n", -2, "version");
}

Test(tape, hostile_records)
{
	bad_text(HDR "1 1 1 1 6 2\n", -1, "line 3: record before definition "
	    "of eid 6");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5\n", -1, "too few fields");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"s\" 9\n", -1, "too many fields");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"abc\n", -1, "unterminated");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"ab\\\"\n", -1, "unterminated");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"a\\q\"\n", -1, "bad escape");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"a\\x4\"\n", -1, "escape");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"a\\xzz\"\n", -1, "escape");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"a\"b\n", -1, "after closing");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 abc\n", -1, "quoted string");
	bad_text(HDR "1 1 1 1 5 -1 2 3.5 \"a\tb\"\n", -1, "control");
	bad_text(HDR "1 1 1 1 5 12x 2 3.5 \"s\"\n", -1, "bad number");
	bad_text(HDR "1 1 1 1 5 1.5 2 3.5 \"s\"\n", -1, "bad number");
	bad_text(HDR "1 1 1 1 5 +1 2 3.5 \"s\"\n", -1, "bad number");
	bad_text(HDR "1 1 1 1 5 - 2 3.5 \"s\"\n", -1, "bad number");
	bad_text(HDR "1 1 1 1 5 1 -2 3.5 \"s\"\n", -1, "bad number");
	bad_text(HDR "1 1 1 1 5 1 18446744073709551616 3.5 \"s\"\n", -1,
	    "out of range");
	bad_text(HDR "1 1 1 1 5 9223372036854775808 1 3.5 \"s\"\n", -1,
	    "out of range");
	bad_text(HDR "1 1 1 1 5 -9223372036854775809 1 3.5 \"s\"\n", -1,
	    "out of range");
	bad_text(HDR "1 1 4294967296 1 5 1 1 3.5 \"s\"\n", -1,
	    "out of range");
	bad_text(HDR "1 1 1 1 2147483648 1 1 3.5 \"s\"\n", -1,
	    "out of range");
	bad_text(HDR "1 1 1 1 5 1 1 3.5x \"s\"\n", -1, "floating");
	bad_text(HDR "1 1 1 1 5 1 1 0x10 \"s\"\n", -1, "floating");
	bad_text(HDR "1 1 1 1 5 1 1 infinity \"s\"\n", -1, "floating");
	bad_text(HDR "1 1 1 1 5 1 1 1e \"s\"\n", -1, "floating");
	bad_text(HDR "1 1 1 1 5 1 1 nan(1) \"s\"\n", -1, "floating");
	bad_text(HDR "1 1 1\n", -1, "missing field");
	bad_text(HDR "1 1 1 1 5 1 2 3.5 \"trunc\n", -1, "unterminated");
	bad_text(HDR "1 1 1 1 5 1 2\n", -1, "too few");
	/* The same as the last line, without its LF: cut short, as a
	 * writer that stopped leaves it; the lines before it are read. */
	bad_text(HDR "1 1 1 1 5 1 2 3.5 \"trunc", 0, "cut short");
	bad_text(HDR "1 1 1 1 5 1 2", 0, "line 3: cut short");
	bad_text(HDR "#DEF 6 8 2 \"%n\" \"\"\n", -1, "bad format");
	bad_text(HDR "#DEF 6 8 2 \"%d\\x00\" \"\"\n", -1, "bad format");
	bad_text(HDR "#DEF 6 8 2 \"%d\"\n", -1, "#DEF: missing field");
	bad_text(HDR "#DEF 6 256 2 \"%d\" \"\"\n", -1, "out of range");
	bad_text(HDR "#PROC 1 2 3 begin 4 0 \"x\"\n", -1, "start, exit, killed, exec or gone");
	bad_text(HDR "#LOSS 1 2 3 x 4\n", -1, "#LOSS: bad number");
	bad_text(HDR "#END\n", -1, "#END: missing field");
}

Test(tape, hostile_bytes)
{
	static const char nul[] = HDR "1 1 1 1 5 1 2 3.5 \"s\" \0 7\n";
	static const char nul2[] = HDR "1 1\0 1 1 5 1 2 3.5 \"s\"\n";
	const char *err;
	unsigned n;

	cr_assert_eq(read_text(nul, sizeof nul - 1, &err, &n), -1);
	cr_assert_not_null(strstr(err, "too many"), "%s", err);
	cr_assert_eq(read_text(nul2, sizeof nul2 - 1, &err, &n), -1);
	cr_assert_not_null(strstr(err, "bad number"), "%s", err);
}

Test(tape, overlong_line)
{
	size_t hl = strlen(HDR), pl, i;
	char *t = malloc(hl + 2 * TAPE_LINE_MAX + 100);
	const char *err;
	unsigned n;

	cr_assert_not_null(t);
	memcpy(t, HDR, hl);
	/* A record line of exactly TAPE_LINE_MAX bytes is accepted. */
	pl = (size_t)sprintf(t + hl, "1 1 1 1 5 -1 2 3.5 \"");
	for (i = hl + pl; i < hl + TAPE_LINE_MAX - 1; i++)
		t[i] = 'a';
	t[i++] = '"';
	t[i++] = '\n';
	cr_assert_eq(read_text(t, i, &err, &n), 0, "%s", err);
	cr_assert_eq(n, 1);
	/* One byte more is not, with or without a final newline. */
	memmove(t + hl + pl + 1, t + hl + pl, i - hl - pl);
	cr_assert_eq(read_text(t, i + 1, &err, &n), -1);
	cr_assert_not_null(strstr(err, "line 3: line longer"), "%s", err);
	cr_assert_eq(read_text(t, i, &err, &n), -1);
	cr_assert_not_null(strstr(err, "line longer"), "%s", err);
	/* A long line of garbage with no newline at all. */
	memset(t + hl, 'x', 2 * TAPE_LINE_MAX + 50);
	cr_assert_eq(read_text(t, hl + 2 * TAPE_LINE_MAX + 50, &err, &n),
	    -1);
	cr_assert_not_null(strstr(err, "line longer"), "%s", err);
	free(t);
}

Test(tape, lenient_parts)
{
	static const char ok[] =
	    "#GRM-TRACE 1\r\n"
	    "#FUTURE whatever \"unterminated\n"
	    "#\n"
	    "\n"
	    "   \t\n"
	    HDR
	    "#DEF 5 8 2 \"%d %u %f %s\" \"again\" extra\n"
	    "#MM mm\n"
	    "#CLOCK 1 2\n"
	    "#HOST 1 -3 4 h\n"
	    "#COLLECT 1 2 3\n"
	    "1 1 1 1 5 -1 2 3.5 \"s\"\r\n"
	    "  2\t1 1 1 5 -1 2 .5 \"\"  \n"
	    "#DEF 5 8 2 \"%s\" \"other\"\n"
	    "3 1 1 1 5 \"only\"\n"
	    "4 1 1 1 5 \"last line, no newline\"";
	const char *err;
	unsigned n;

	/* The last line without its LF is cut short: not a record. */
	cr_assert_eq(read_text(ok, sizeof ok - 1, &err, &n), 0, "%s", err);
	cr_assert_eq(n, 3);
	cr_assert_not_null(strstr(err, "cut short"), "%s", err);
}

Test(tape, many_definitions)
{
	const char *p = path("defs.trace"), *why;
	struct tape_w *w;
	struct grmtrace *r;
	const struct grmtrace_ev *ev;
	int32_t eid;
	int i;

	cr_assert_not_null(w = tape_open(p, "x", 0, 0));
	for (i = 0; i < 3000; i++) {
		eid = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : i * 7919 - 5000;
		cr_assert_eq(tape_def(w, eid, 8, 2, i % 2 ? "%d" : "%s", 2, "",
		    0), 0);
	}
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(r = topen(p, &why));
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	for (i = 0; i < 3000; i++) {
		eid = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : i * 7919 - 5000;
		cr_assert_not_null(grmtrace_def(r, eid));
		cr_assert_str_eq(grmtrace_def(r, eid)->format,
		    i % 2 ? "%d" : "%s");
	}
	cr_assert_null(grmtrace_def(r, 4));
	grmtrace_close(r);
}

/* Random damage to a valid trace must never crash the reader. */
Test(tape, fuzz)
{
	struct sample s[32];
	const char *p = path("fz.trace"), *err;
	char *orig, *buf;
	unsigned i, k, n, ns = samples(s);
	long len;
	FILE *f;

	write_sample(p, s, ns);
	cr_assert_not_null(f = fopen(p, "r"));
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	cr_assert_not_null(orig = malloc((size_t)len));
	cr_assert_not_null(buf = malloc((size_t)len));
	cr_assert_eq(fread(orig, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	srand(12345);
	for (i = 0; i < 1500; i++) {
		memcpy(buf, orig, (size_t)len);
		for (k = 0; k < 1 + i % 8; k++)
			buf[20 + rand() % (len - 20)] = "\"\\\n x0-9#\t"[
			    rand() % 11] + (i % 3 == 0 ? rand() % 256 : 0);
		read_text(buf, (size_t)(len - (i % 5 == 0 ? rand() % len : 0)),
		    &err, &n);
	}
	free(orig);
	free(buf);
}

/* A #DEF scoped to (node, pid) wins for that process's records only; the
 * writer's scoped line reads back with its scope. */
Test(tape, scoped_definitions)
{
	static const char text[] = "#GRM-TRACE 1\n"
	    "#DEF 5 8 2 \"%d\" \"plain\"\n"
	    "#DEF 5 8 2 \"%d %s\" \"tagged\" 1 7\n"
	    "10 1 7 7 5 1 \"t\"\n"
	    "11 1 8 8 5 2\n"
	    "12 2 7 7 5 3\n";
	const struct grmtrace_def *d;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	const char *why, *p;
	struct tape_w *w;

	r = topen(put_file(text, strlen(text)), &why);
	cr_assert_not_null(r, "%s", why);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->n, 2);
	cr_assert_str_eq(ev->def->description, "tagged");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->n, 1, "another pid on the node: the global one");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->n, 1, "the same pid on another node: the global one");
	cr_assert_eq(grmtrace_next(r, &ev), 0);
	d = grmtrace_def(r, 5);
	cr_assert_str_eq(d->description, "plain");
	d = grmtrace_def_for(r, 1, 7, 5);
	cr_assert_str_eq(d->description, "tagged");
	grmtrace_close(r);

	bad_text("#GRM-TRACE 1\n#DEF 5 8 2 \"%d\" \"x\" 0 7\n", -1, "node 0");
	bad_text("#GRM-TRACE 1\n#DEF 5 8 2 \"%d\" \"x\" 1\n", -1, "scope");

	p = path("scoped.trace");
	w = tape_open(p, "h:1", 1, 2);
	cr_assert_not_null(w);
	cr_assert_eq(tape_def(w, 5, 8, 2, "%d", 2, "g", 1), 0);
	cr_assert_eq(tape_def_scoped(w, 3, 99, 5, 8, 2, "%u %u", 5, "s", 1),
	    0);
	cr_assert_eq(tape_close(w), 0);
	r = topen(p, &why);
	cr_assert_not_null(r, "%s", why);
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	d = grmtrace_def_for(r, 3, 99, 5);
	cr_assert(d != NULL && d->node == 3 && d->pid == 99 &&
	    d->nfields == 2 && strcmp(d->description, "s") == 0);
	cr_assert_eq(grmtrace_def_for(r, 3, 98, 5)->nfields, 1);
	grmtrace_close(r);
}

/* #STATS, #CONTROL, #PROC and #LOSS lines written by the writer come back,
 * in file order and between the records, when asked for. */
static void
meta_round_trip(int fmt)
{
	static const char cmd[] = "disable class 3\n\"x\"\0\xff";
	const char *p = path("meta.trace"), *why;
	struct rec_field f[1] = { fu(0xdeadbeefcafe) };
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;

	cr_assert_not_null(w = tape_open_fmt(p, fmt, "x", 0, 0));
	cr_assert_eq(tape_def(w, 12, REC_CLASS_PROCEDURE, REC_ATTR_ACT,
	    "%p", 2, "solve", 5), 0);
	cr_assert_eq(tape_proc(w, 1, 100, 1, 0, 5, 0, "ring"), 0);
	cr_assert_eq(tape_stats_count(w, 1, 100, 12, 42), 0);
	cr_assert_eq(tape_record(w, 6, 1, 100, 101, 12, f, 1), 0);
	cr_assert_eq(tape_stats_range(w, 1, 100, -1, INT64_MIN, 3, 600, 100,
	    300, 0.1, 2e4), 0);
	cr_assert_eq(tape_stats_range(w, 4294967295u, 4294967295u, INT32_MIN,
	    INT64_MAX, UINT64_MAX, UINT64_MAX, 0, UINT64_MAX, -0.0, 1e300),
	    0);
	cr_assert_eq(tape_control(w, 7, cmd, sizeof cmd - 1), 0);
	cr_assert_eq(tape_control(w, 8, NULL, 0), 0);
	errno = 0;
	cr_assert_eq(tape_control(w, 8, NULL, 1), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tape_loss(w, 1, 100, 101, 9, 9), 0);
	cr_assert_eq(tape_proc(w, 1, 100, 1, 1, 10, -2, "ring"), 0);
	cr_assert_eq(tape_close(w), 0);

	/* Not asked for: records only, as before. */
	cr_assert_not_null(r = topen(p, &why));
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_RECORD);
	cr_assert_eq(ev->ts, 6);
	cr_assert_eq(ev->f[0].v.u, 0xdeadbeefcafe);
	cr_assert_eq(ev->def->conv[0], 'p');
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_losses(r), 9);
	grmtrace_close(r);

	cr_assert_not_null(r = topen(p, &why));
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) | GRMTRACE_WANT(GRMTRACE_LOSS) |
	    GRMTRACE_WANT(GRMTRACE_STATS_COUNT) | GRMTRACE_WANT(GRMTRACE_STATS_RANGE) |
	    GRMTRACE_WANT(GRMTRACE_CONTROL));
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_PROC);
	cr_assert(ev->node == 1 && ev->pid == 100 && ev->ppid == 1 &&
	    ev->ts == 5 && !ev->how && ev->status == 0 && ev->n == 7);
	cr_assert_eq(ev->str_len, 4);
	cr_assert_str_eq(ev->str, "ring");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_STATS_COUNT);
	cr_assert(ev->node == 1 && ev->pid == 100 && ev->eid == 12 &&
	    ev->count == 42);
	cr_assert_not_null(ev->def);
	cr_assert_str_eq(ev->def->description, "solve");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_RECORD);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_STATS_RANGE);
	cr_assert(ev->eid == -1 && ev->f[4].v.i == INT64_MIN &&
	    ev->count == 3 && ev->f[6].v.u == 600 && ev->f[7].v.u == 100 &&
	    ev->f[8].v.u == 300 && ev->f[9].v.d == 0.1 &&
	    ev->f[10].v.d == 2e4);
	cr_assert_null(ev->def, "no #DEF -1 in this file");
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_STATS_RANGE && ev->node == 4294967295u &&
	    ev->pid == 4294967295u && ev->eid == INT32_MIN &&
	    ev->f[4].v.i == INT64_MAX && ev->count == UINT64_MAX &&
	    ev->f[6].v.u == UINT64_MAX && ev->f[7].v.u == 0 &&
	    ev->f[8].v.u == UINT64_MAX && ev->f[10].v.d == 1e300);
	cr_assert(ev->f[9].v.d == 0 && signbit(ev->f[9].v.d));
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_CONTROL);
	cr_assert_eq(ev->ts, 7);
	cr_assert_eq(ev->str_len, sizeof cmd - 1);
	cr_assert_eq(memcmp(ev->str, cmd, sizeof cmd - 1), 0);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_CONTROL && ev->ts == 8 && ev->str_len == 0 &&
	    ev->str[0] == '\0');
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_LOSS && ev->node == 1 && ev->pid == 100 &&
	    ev->tid == 101 && ev->count == 9 && ev->ts == 9);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert(ev->kind == GRMTRACE_PROC && ev->how && ev->status == -2 &&
	    ev->ts == 10);
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	cr_assert_eq(grmtrace_ended(r, NULL), 1);
	grmtrace_close(r);

	/* Only some kinds. */
	cr_assert_not_null(r = topen(p, &why));
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_CONTROL));
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_RECORD);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_CONTROL);
	cr_assert_eq(grmtrace_next(r, &ev), 1, "%s", grmtrace_error(r));
	cr_assert_eq(ev->kind, GRMTRACE_CONTROL);
	cr_assert_eq(grmtrace_next(r, &ev), 0, "%s", grmtrace_error(r));
	grmtrace_close(r);
}

Test(tape, meta_round_trip)
{
	meta_round_trip(TAPE_FMT_TAPE);
}

Test(tape, meta_round_trip_bee)
{
	meta_round_trip(TAPE_FMT_BEE);
}

/* The exact text of the new lines (doc/formats.md). */
Test(tape, meta_text)
{
	const char *p = path("text.trace");
	char buf[1024];
	struct tape_w *w;
	size_t n;
	FILE *f;

	cr_assert_not_null(w = tape_open(p, "x", 0, 0));
	cr_assert_eq(tape_stats_count(w, 1, 2, -4, 7), 0);
	cr_assert_eq(tape_stats_range(w, 1, 2, -1, 3, 2, 30, 10, 20, 15, 50),
	    0);
	cr_assert_eq(tape_stats_range(w, 1, 2, 9, 9, 1, 1, 1, 1, 0.1, NAN),
	    0);
	cr_assert_eq(tape_control(w, 99, "stop \"now\"", 10), 0);
	cr_assert_eq(tape_close(w), 0);
	cr_assert_not_null(f = fopen(p, "r"));
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_assert_not_null(strstr(buf, "#CLOCK 0 0\n"
	    "#STATS 1 2 count -4 7\n"
	    "#STATS 1 2 range -1 3 2 30 10 20 15 50\n"
	    "#STATS 1 2 range 9 9 1 1 1 1 0.10000000000000001 nan\n"
	    "#CONTROL 99 \"stop \\\"now\\\"\"\n"
	    "#END 0\n"), "%s", buf);
}

/* Reads text asking for every meta kind; returns the last result. */
static int
read_meta(const char *text, const char **err, unsigned *nev)
{
	static char e[256];
	const char *why;
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc;

	*nev = 0;
	r = topen(put_file(text, strlen(text)), &why);
	cr_assert_not_null(r, "%s", why);
	cr_assert_eq(grmtrace_select(r, GRMTRACE_WANT_ALL), 0);
	while ((rc = grmtrace_next(r, &ev)) == 1)
		(*nev)++;
	snprintf(e, sizeof e, "%s", grmtrace_error(r));
	grmtrace_close(r);
	*err = e;
	return rc;
}

static void
bad_meta(const char *line, const char *reason)
{
	char text[512];
	const char *err;
	unsigned n;
	int rc;

	snprintf(text, sizeof text, "#GRM-TRACE 1\n%s\n", line);
	rc = read_meta(text, &err, &n);
	cr_assert_eq(rc, -1, "[%s]: got %d (%s)", line, rc, err);
	cr_assert_not_null(strstr(err, reason), "[%s]: %s", line, err);
	cr_assert_not_null(strstr(err, "line 2: "), "[%s]: %s", line, err);
}

Test(tape, hostile_meta)
{
	const char *err;
	unsigned n;

	bad_meta("#STATS", "#STATS: missing field");
	bad_meta("#STATS 1 2", "#STATS: missing field");
	bad_meta("#STATS -1 2 count 1 1", "#STATS: bad number");
	bad_meta("#STATS 1 4294967296 count 1 1", "out of range");
	bad_meta("#STATS 1 2 count", "#STATS count: missing field");
	bad_meta("#STATS 1 2 count 1", "#STATS count: missing field");
	bad_meta("#STATS 1 2 count 2147483648 1", "out of range");
	bad_meta("#STATS 1 2 count 1 -1", "#STATS count: bad number");
	bad_meta("#STATS 1 2 count 1 1.5", "bad number");
	bad_meta("#STATS 1 2 count \"1\" 1", "bad number");
	bad_meta("#STATS 1 2 range -1 5 3 30 10 20 15",
	    "#STATS range: missing field");
	bad_meta("#STATS 1 2 range -1 5 3 30 10 20 0x1 0",
	    "#STATS range: bad floating-point number");
	bad_meta("#STATS 1 2 range -1 5 3 30 10 20 1 infinity",
	    "floating-point");
	bad_meta("#STATS 1 2 range -1 9223372036854775808 1 1 1 1 1 1",
	    "out of range");
	bad_meta("#STATS 1 2 range -1 5 -3 30 10 20 15 50", "bad number");
	bad_meta("#STATS 1 2 range -1 5 3 18446744073709551616 1 1 1 1",
	    "out of range");
	bad_meta("#CONTROL", "#CONTROL: missing field");
	bad_meta("#CONTROL 5", "#CONTROL: missing field");
	bad_meta("#CONTROL -5 \"x\"", "#CONTROL: bad number");
	bad_meta("#CONTROL 5 stop", "#CONTROL: expected a quoted string");
	bad_meta("#CONTROL 5 \"stop", "#CONTROL: unterminated string");
	bad_meta("#CONTROL 5 \"a\\q\"", "bad escape");
	bad_meta("#CONTROL 5 \"a\"b", "after closing");
	bad_meta("#PROC 1 2 3 start 4 0 name", "#PROC: expected a quoted");

	/* Unknown #STATS words and trailing fields are ignored. */
	cr_assert_eq(read_meta("#GRM-TRACE 1\n"
	    "#STATS 1 2 histogram 1 2 3\n"
	    "#STATS 1 2 count 5 6 future\n"
	    "#STATS 1 2 range -1 5 3 30 10 20 15 50 future \"x\n"
	    "#CONTROL 5 \"x\" 7\n"
	    "#STATS 1 2 range -1 5 0 0 0 0 nan -nan\n", &err, &n), 0,
	    "%s", err);
	cr_assert_eq(n, 4);
}

/* The sidecar told where stretches of one kind of record are (as mainmon
 * does: tape_piece_stretch), their records counted by bisecting their
 * times: the same file and the same sidecar as walking them, over times
 * that cross many buckets and widen them, in parts of every size, with
 * one part told it is all one stretch. */
Test(tape, sidecar_of_stretches)
{
	const char *p1 = path("walk.bin"), *p2 = path("stretch.bin");
	static unsigned char recs[40000 * 24];
	static uint32_t at[40000];
	struct tape_w *w1, *w2;
	struct tape_stretch st;
	struct rec_hdr h, hp;
	size_t len = 0, from, to, k;
	uint64_t v[1], ts = 1000000;
	uint32_t nat = 0;
	unsigned i, j, n;

	/* Blocks of events of one kind, now a burst of another. */
	for (i = 0; len + 24 * 202 < sizeof recs; i++) {
		n = 1 + (i * 7919u) % 200;
		for (j = 0; j < n + 2; j++) {
			v[0] = j;
			ts += (i % 50 == 0 && j == 1) ? 5000000000ull :
			    (uint64_t)(j * 13 % 900);
			rec_put_hdr(recs + len, 24, REC_CLASS_USER,
			    REC_ATTR_POINT, j == 0 ? -1 : j == n + 1 ? -2 :
			    i % 9 == 0 ? 5 : 4, ts);
			memcpy(recs + len + 16, v, 8);
			len += 24;
		}
	}
	for (k = 0; k < len; k += h.len) {
		memcpy(&h, recs + k, sizeof h);
		if (k > 0 && (h.eid != hp.eid || h.len != hp.len))
			at[nat++] = (uint32_t)k;
		hp = h;
	}
	cr_assert_not_null(w1 = tape_open_fmt(p1, TAPE_FMT_BIN, "mm", 1, 2));
	cr_assert_not_null(w2 = tape_open_fmt(p2, TAPE_FMT_BIN, "mm", 1, 2));
	for (from = 0, i = 0; from < len; from = to, i++) {
		for (to = from, k = 0; to < len && k < 1 + i * 37 % 5000; k++)
			to += 24;
		cr_assert_eq(tape_piece(w1, 1, 2, 3, recs + from, to - from), 0);
		st.at = at;
		st.n = nat;
		st.base = (uint32_t)from;
		st.one = 0;
		cr_assert_eq(tape_piece_stretch(w2, 1, 2, 3, recs + from,
		    to - from, NULL, 0, 0, &st, NULL), 0);
	}
	/* A part all of one kind. */
	for (k = 0, len = 0; k < 3000; k++) {
		v[0] = k;
		ts += k % 1000 == 0 ? 3000000000ull : 77;
		rec_put_hdr(recs + len, 24, REC_CLASS_USER, REC_ATTR_POINT, 4,
		    ts);
		memcpy(recs + len + 16, v, 8);
		len += 24;
	}
	cr_assert_eq(tape_piece(w1, 1, 2, 4, recs, len), 0);
	st.n = 0;
	st.base = 0;
	st.one = 1;
	cr_assert_eq(tape_piece_stretch(w2, 1, 2, 4, recs, len, NULL, 0, 0,
	    &st, NULL), 0);
	same_files(w1, p1, w2, p2);
}

/* The same records written decoded (tape_piece, what mainmon wrote) and
 * from the run alone, never decoded (tape_piece_dense, what it writes of
 * a run it takes whole), their times moved by steps (a nanosecond, a
 * jump), in parts of every size, some records left out (a record that
 * does not match its type): the same files, the same sidecars.  Blocks
 * of events of one kind, now a burst of another, some long. */
Test(tape, binary_pieces_never_decoded)
{
	const char *p1 = path("dec.bin"), *p2 = path("run.bin");
	static unsigned char recs[40000 * 32], run[sizeof recs * 2],
	    moved[sizeof recs];
	static const uint64_t upto[3] = { 1000000 + 20000000ull,
	    1000000 + 90000000ull, UINT64_MAX };
	static const uint64_t by[3] = { 5000, 5001, 5001 + (3ull << 31) };
	struct rec_dense_shift sh = { 3, upto, by, NULL, 0, 0, NULL };
	static struct rec_dense_seg seg[40000];
	struct rec_dense_info inf;
	struct rec_dense_segs sg;
	struct tape_w *w1, *w2;
	struct rec_hdr h;
	size_t len = 0, rlen, from, to, k, sp = REC_DENSE_BASE, su;
	uint64_t v[2], ts = 1000000, prev, last;
	unsigned i, j, n;

	for (i = 0; len + 32 * 202 < sizeof recs; i++) {
		n = 1 + (i * 7919u) % 200;
		for (j = 0; j < n + 2; j++) {
			v[0] = j == 0 ? i % 5 + 1 : j;	/* a block's id */
			v[1] = (i + j) % 97 == 0 ? 1ull << 40 : i;	/* long */
			ts += (i % 50 == 0 && j == 1) ? 5000000000ull :
			    (uint64_t)(j * 13 % 900);
			rec_put_hdr(recs + len, 32, REC_CLASS_USER,
			    REC_ATTR_POINT, j == 0 ? -1 : j == n + 1 ? -2 :
			    i % 9 == 0 ? 5 : 4, ts);
			memcpy(recs + len + 16, v, 16);
			len += 32;
		}
	}
	rlen = (size_t)rec_dense_encode(recs, len, run, sizeof run);
	cr_assert_eq(rec_dense_decode_shift(run, rlen, moved, sizeof moved,
	    &sh), (ssize_t)len);
	cr_assert_eq(rec_dense_scan_st(run, rlen, NULL, &inf, seg, 40000),
	    (ssize_t)len);
	cr_assert_leq(inf.nseg, 40000);
	sg.at = seg;
	sg.n = inf.nseg;
	sg.end = (uint32_t)rlen;
	sg.last = inf.last;
	memcpy(&prev, run, 8);
	cr_assert_not_null(w1 = tape_open_fmt(p1, TAPE_FMT_BIN, "mm", 1, 2));
	cr_assert_not_null(w2 = tape_open_fmt(p2, TAPE_FMT_BIN, "mm", 1, 2));
	for (from = 0, i = 0; from < len; from = to, i++) {
		if (i % 10 == 9) {	/* left out */
			memcpy(&h, recs + from, sizeof h);
			prev = h.ts;
			sp += (size_t)rec_dense_skip(run + sp, rlen - sp, 32);
			to = from + 32;
			continue;
		}
		for (to = from, k = 0; to < len && k < 1 + i * 37 % 5000; k++)
			to += 32;
		cr_assert_eq(tape_piece(w1, 1, 2, 3, moved + from, to - from),
		    0);
		sg.base = (uint32_t)sp;
		cr_assert_eq(tape_piece_dense(w2, 1, 2, 3, run + sp, rlen - sp,
		    prev, &sh, i % 4 == 3 ? NULL : &sg, to - from, &su, &last),
		    0);
		memcpy(&h, recs + to - 32, sizeof h);
		cr_assert_eq(last, h.ts);
		prev = last;
		sp += su;
	}
	cr_assert_eq(sp, rlen);
	same_files(w1, p1, w2, p2);
}

/* Counts the D frames of binary file p and the thread switches in them;
 * returns the frames. */
static unsigned
d_frames(const char *p, unsigned *switches)
{
	static unsigned char dec[2 * TAPE_LINE_MAX];
	static struct rec_dense_sw sw[TAPE_LINE_MAX / 16];
	unsigned char *b;
	size_t n, pos = 8, flen, nsw;
	unsigned frames = 0;

	b = slurp(p, &n);
	*switches = 0;
	while (n - pos >= 5) {
		flen = (size_t)b[pos] | (size_t)b[pos + 1] << 8 |
		    (size_t)b[pos + 2] << 16 | (size_t)b[pos + 3] << 24;
		cr_assert_leq(flen, n - pos - 5);
		if (b[pos + 4] == 'D') {
			cr_assert_gt(rec_dense_decode_sw(b + pos + 17, flen - 12,
			    dec, sizeof dec, sw, TAPE_LINE_MAX / 16, &nsw), 0);
			frames++;
			*switches += (unsigned)nsw;
		}
		pos += 5 + flen;
	}
	free(b);
	return frames;
}

/* Two threads of a process whose records interleave, a few at a time,
 * and now and then a third thread of another process: the records of
 * the process's turns join one D frame, a switch before each other
 * thread's (version 4), whether written decoded (tape_piece) or from
 * the runs (tape_piece_dense, their times moved): the same files and
 * sidecars, and each record read back with its thread, in order; a
 * meta line between two turns ends the frame. */
Test(tape, threads_interleaved_in_one_frame)
{
	const char *p1 = path("dec2.bin"), *p2 = path("run2.bin"), *why;
	static unsigned char recs[3][20000 * 32], run[3][sizeof recs[0] * 2],
	    moved[3][sizeof recs[0]];
	static const uint64_t upto[2] = { 1000000 + 300000, UINT64_MAX };
	static const uint64_t by[2] = { 5000, 5001 };
	struct rec_dense_shift sh = { 2, upto, by, NULL, 0, 0, NULL };
	static const uint32_t pid[3] = { 7, 7, 8 }, tid[3] = { 70, 71, 80 };
	const struct grmtrace_ev *ev;
	struct tape_w *w1, *w2;
	struct grmtrace *r;
	struct rec_hdr h;
	size_t len[3] = { 0, 0, 0 }, rlen[3], at[3] = { 0, 0, 0 };
	size_t sp[3], su, k, m;
	uint64_t v[2], ts = 1000000, prev[3], last, lastts = 0;
	unsigned i, t, turns = 0, frames, switches, got[3] = { 0, 0, 0 };
	unsigned total = 0;
	int rc;

	/* Times taking turns: thread t's records are those it wrote in its
	 * turn, one to 12 at a time. */
	for (i = 0, t = 0; len[0] + len[1] + len[2] < 3 * 20000 * 32 - 12 * 32;
	    i++) {
		t = i % 17 == 16 ? 2 : i % 2;
		if (len[t] + 12 * 32 > sizeof recs[0])
			break;
		m = 1 + (i * 7) % 12;
		for (k = 0; k < m; k++) {
			ts += 1 + (i + k) % 40;
			v[0] = t;
			v[1] = (i + k) % 53 == 0 ? 1ull << 40 : k;	/* long */
			rec_put_hdr(recs[t] + len[t], 32, REC_CLASS_USER,
			    REC_ATTR_POINT, (i + k) % 29 == 0 ? 4 : 3, ts);
			memcpy(recs[t] + len[t] + 16, v, 16);
			len[t] += 32;
		}
	}
	for (t = 0; t < 3; t++) {
		rlen[t] = (size_t)rec_dense_encode(recs[t], len[t], run[t],
		    sizeof run[t]);
		cr_assert_eq(rec_dense_decode_shift(run[t], rlen[t], moved[t],
		    sizeof moved[t], &sh), (ssize_t)len[t]);
		memcpy(&prev[t], run[t], 8);
		sp[t] = REC_DENSE_BASE;
	}
	cr_assert_not_null(w1 = tape_open_fmt(p1, TAPE_FMT_BIN, "mm", 1, 2));
	cr_assert_not_null(w2 = tape_open_fmt(p2, TAPE_FMT_BIN, "mm", 1, 2));
	for (t = 3; t <= 4; t++) {
		cr_assert_eq(tape_def(w1, (int32_t)t, REC_CLASS_USER,
		    REC_ATTR_POINT, "%d %lu", 6, "", 0), 0);
		cr_assert_eq(tape_def(w2, (int32_t)t, REC_CLASS_USER,
		    REC_ATTR_POINT, "%d %lu", 6, "", 0), 0);
	}
	/* The turns again, in time order: each a piece. */
	for (;;) {
		for (t = 0, k = 3; t < 3; t++) {
			if (at[t] == len[t])
				continue;
			memcpy(&h, moved[t] + at[t], sizeof h);
			if (k == 3 || h.ts < lastts) {
				k = t;
				lastts = h.ts;
			}
		}
		if (k == 3)
			break;
		t = (unsigned)k;
		/* Its records before the next other thread's. */
		for (m = at[t]; m < len[t]; m += 32) {
			memcpy(&h, moved[t] + m, sizeof h);
			for (k = 0; k < 3; k++) {
				struct rec_hdr o;

				if (k == t || at[k] == len[k])
					continue;
				memcpy(&o, moved[k] + at[k], sizeof o);
				if (o.ts < h.ts)
					break;
			}
			if (k < 3)
				break;
		}
		cr_assert_eq(tape_piece(w1, 1, pid[t], tid[t], moved[t] + at[t],
		    m - at[t]), 0);
		cr_assert_eq(tape_piece_dense(w2, 1, pid[t], tid[t],
		    run[t] + sp[t], rlen[t] - sp[t], prev[t], &sh, NULL,
		    m - at[t], &su, &last), 0);
		prev[t] = last;
		sp[t] += su;
		at[t] = m;
		if (++turns == 2000) {	/* a meta line between two */
			cr_assert_eq(tape_order(w1, 1, 2, 3, 4), 0);
			cr_assert_eq(tape_order(w2, 1, 2, 3, 4), 0);
		}
	}
	cr_assert_gt(turns, 3000);
	same_files(w1, p1, w2, p2);
	/* Few frames: one holds the turns until it is full. */
	frames = d_frames(p2, &switches);
	cr_assert_gt(switches, turns / 2);
	cr_assert_lt(frames, turns / 20, "%u frames for %u turns", frames,
	    turns);
	cr_assert_not_null(r = topen(p2, &why), "%s", why);
	lastts = 0;
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind != GRMTRACE_RECORD)
			continue;
		for (t = 0; t < 3 && tid[t] != ev->tid; t++)
			;
		cr_assert_lt(t, 3, "thread %u", ev->tid);
		cr_assert_eq(ev->pid, pid[t]);
		memcpy(&h, moved[t] + 32 * got[t], sizeof h);
		cr_assert_eq(ev->ts, h.ts);
		cr_assert_eq(ev->f[0].v.i, (int64_t)t);
		cr_assert_geq(ev->ts, lastts);
		lastts = ev->ts;
		got[t]++;
		total++;
	}
	cr_assert_eq(rc, 0, "%s", grmtrace_error(r));
	for (t = 0; t < 3; t++)
		cr_assert_eq(got[t], len[t] / 32);
	cr_assert_eq(total, (len[0] + len[1] + len[2]) / 32);
	grmtrace_close(r);
	/* Sought: the record found is of its thread, and so are those
	 * after it (the switches passed over are applied). */
	cr_assert_not_null(r = topen(p2, &why), "%s", why);
	for (m = 1; m < 40; m++) {
		t = (unsigned)(m % 3);
		memcpy(&h, moved[t] + 32 * ((len[t] / 32) * m / 40), sizeof h);
		cr_assert_eq(grmtrace_seek(r, h.ts), 1, "%s",
		    grmtrace_error(r));
		for (k = 0; k < 50 && grmtrace_next(r, &ev) == 1; k++) {
			if (ev->kind != GRMTRACE_RECORD)
				continue;
			cr_assert_geq(ev->ts, h.ts);
			for (i = 0; i < 3 && tid[i] != ev->tid; i++)
				;
			cr_assert_lt(i, 3);
			cr_assert_eq(ev->pid, pid[i]);
			cr_assert_eq(ev->f[0].v.i, (int64_t)i,
			    "thread %u at %llu", ev->tid,
			    (unsigned long long)ev->ts);
		}
	}
	grmtrace_close(r);
}

/* Seeking into a piece that begins before the time sought, with only a
 * frame cut short after it (a writer stopped while writing) whose first
 * time is before it too (any time: it is cut): the piece is read, not
 * passed over with the cut frame (found by fuzz_tape). */
Test(tape, seek_into_a_piece_before_a_cut_frame)
{
	const char *p = path("cut.bin"), *why;
	static unsigned char recs[2][7 * 32];
	const struct grmtrace_ev *ev;
	struct tape_w *w;
	struct grmtrace *r;
	struct stat sb;
	int64_t a;
	unsigned i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < 7; i++) {
			rec_put_hdr(recs[k] + i * 32, 32, REC_CLASS_USER,
			    REC_ATTR_POINT, 3, 1000 + 100 * i + 10 * k);
			a = (int64_t)i;
			memcpy(recs[k] + i * 32 + 16, &a, 8);
			memcpy(recs[k] + i * 32 + 24, &a, 8);
		}
	cr_assert_not_null(w = tape_open_fmt(p, TAPE_FMT_BIN, "mm", 1, 2));
	cr_assert_eq(tape_def(w, 3, REC_CLASS_USER, REC_ATTR_POINT, "%d %u",
	    5, "pair", 4), 0);
	cr_assert_eq(tape_piece(w, 2, 300, 301, recs[0], sizeof recs[0]), 0);
	cr_assert_eq(tape_write_out(w), 0);
	cr_assert_eq(tape_piece(w, 2, 300, 302, recs[1], sizeof recs[1]), 0);
	cr_assert_eq(tape_close(w), 0);
	/* The last frame cut in its middle. */
	cr_assert_eq(stat(p, &sb), 0);
	cr_assert_eq(truncate(p, sb.st_size - 40), 0);
	for (i = 1; i < 7; i++) {
		cr_assert_not_null(r = topen(p, &why), "%s", why);
		cr_assert_eq(grmtrace_seek(r, 1000 + 100 * i - 50), 1, "%s",
		    grmtrace_error(r));
		cr_assert_eq(grmtrace_next(r, &ev), 1);
		cr_assert_eq(ev->ts, 1000 + 100 * i);
		cr_assert_eq(ev->tid, 301);
		grmtrace_close(r);
	}
}
