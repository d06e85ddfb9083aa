/* SPDX-License-Identifier: MIT */
/* bench_tapew.c: how fast the trace file writers take records, on one core:
 * two-int events (or, with -m double, an int and a double), as mainmon
 * writes them (tape_record for the text and BEE Ascii formats; in-memory
 * records in pieces, tape_piece, for the binary one), into a file in a
 * temporary folder and into /dev/null.  Prints records and MB per second
 * of the thread's CPU time (what one core does, whatever else the machine
 * runs), and per second of elapsed time, the best of a few runs.  Asserts
 * nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "tape.h"

#define PIECE	2048	/* records per piece: one 64 KiB chunk */

static long nrec = 10000000;
static int repeat = 3;
static int dbl;		/* the second field a double */

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The i-th record: ts, and its two fields. */
static inline uint64_t
rec_ts(long i)
{
	return 5000000000000ull + (uint64_t)i * 67;
}

static int
write_all(struct tape_w *w, int fmt)
{
	static unsigned char piece[PIECE * 32];
	struct rec_field f[2] = { { .kind = REC_K_INT },
	    { .kind = REC_K_INT } };
	int64_t a, b;
	double v;
	long i, k;

	f[1].kind = dbl ? REC_K_DOUBLE : REC_K_INT;
	if ((fmt & ~TAPE_OPEN_NOIDX) != TAPE_FMT_BIN) {
		for (i = 0; i < nrec; i++) {
			f[0].v.i = i & 0xffff;
			if (dbl)	/* seconds with some decimals */
				f[1].v.d = (double)(i % 100000000) / 1000.0;
			else
				f[1].v.i = i;
			if (tape_record(w, rec_ts(i), 1, 123456, 123460, 1, f,
			    2) != 0)
				return -1;
		}
		return 0;
	}
	for (i = 0; i < nrec; i += k) {
		for (k = 0; k < PIECE && i + k < nrec; k++) {
			rec_put_hdr(piece + k * 32, 32, REC_CLASS_USER,
			    REC_ATTR_POINT, 1, rec_ts(i + k));
			a = (i + k) & 0xffff;
			b = i + k;
			v = (double)((i + k) % 100000000) / 1000.0;
			memcpy(piece + k * 32 + 16, &a, 8);
			if (dbl)
				memcpy(piece + k * 32 + 24, &v, 8);
			else
				memcpy(piece + k * 32 + 24, &b, 8);
		}
		if (tape_piece(w, 1, 123456, 123460, piece, (size_t)k * 32) !=
		    0)
			return -1;
	}
	return 0;
}

/* The best of a set of runs: CPU and elapsed ns writing, ns closing. */
struct best {
	uint64_t	cpu;
	uint64_t	wall;
	uint64_t	close;
	off_t		size;
};

/* One run into path; keeps the best times in b.  Returns 0 or -1. */
static int
run(int fmt, const char *path, struct best *b)
{
	struct tape_w *w;
	uint64_t c0, t0, c1, t1, t2;
	FILE *f;

	if ((w = tape_open_fmt(path, fmt, "127.0.0.1:7000", 1, 2)) == NULL ||
	    tape_host(w, 1, 0, 4242, "alpha") != 0 ||
	    tape_def(w, 1, REC_CLASS_USER, REC_ATTR_POINT, dbl ? "%d %f" :
	    "%d %d", 5, "pair", 4) != 0)
		goto fail;
	c0 = cpu_ns();
	t0 = now_ns();
	if (write_all(w, fmt) != 0 || tape_write_out(w) != 0)
		goto fail;
	c1 = cpu_ns();
	t1 = now_ns();
	if (tape_close(w) != 0) {
		w = NULL;
		goto fail;
	}
	t2 = now_ns();
	if (b->cpu == 0 || c1 - c0 < b->cpu)
		b->cpu = c1 - c0;
	if (b->wall == 0 || t1 - t0 < b->wall) {
		b->wall = t1 - t0;
		b->close = t2 - t1;
	}
	if (strcmp(path, "/dev/null") != 0 && (f = fopen(path, "r")) != NULL) {
		fseek(f, 0, SEEK_END);
		b->size = ftello(f);
		fclose(f);
		unlink(path);
	}
	if (strcmp(path, "/dev/null") != 0) {	/* its summary sidecar */
		char idx[4300];

		snprintf(idx, sizeof idx, "%s.idx", path);
		unlink(idx);
	}
	return 0;
fail:
	fprintf(stderr, "bench_tapew: %s: %s\n", path, strerror(errno));
	if (w != NULL)
		tape_close(w);
	return -1;
}

static void
report(const char *name, const char *target, const struct best *b)
{
	printf("%-9s %-10s %7.2f M records/s per CPU second, %7.2f per second",
	    name, target, (double)nrec / ((double)b->cpu / 1e9) / 1e6,
	    (double)nrec / ((double)b->wall / 1e9) / 1e6);
	if (b->size > 0)
		printf("; %6.0f MB/s per CPU second, %5.1f bytes/record, "
		    "then %.2f s to close and sync", (double)b->size /
		    ((double)b->cpu / 1e9) / 1e6, (double)b->size /
		    (double)nrec, (double)b->close / 1e9);
	putchar('\n');
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static const struct {
		const char	*name;
		int		fmt;
	} fmts[] = { { "tape", TAPE_FMT_TAPE }, { "bee", TAPE_FMT_BEE },
	    { "bin", TAPE_FMT_BIN },
	    { "bin-noidx", TAPE_FMT_BIN | TAPE_OPEN_NOIDX } };
	const char *only = NULL, *tmp = getenv("TMPDIR");
	char dir[4096], path[4200];
	unsigned i;
	int c, r, rc = 0;

	while ((c = getopt(argc, argv, "n:f:r:m:")) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "double") != 0 &&
			    strcmp(optarg, "ints") != 0)
				goto usage;
			dbl = strcmp(optarg, "double") == 0;
			break;
		case 'n':
			nrec = atol(optarg);
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		case 'f':
			only = optarg;
			break;
		default:
usage:
			fprintf(stderr, "usage: bench_tapew [-n RECORDS] "
			    "[-f tape|bee|bin|bin-noidx] [-r RUNS] [-m ints|double]\n");
			return 2;
		}
	}
	snprintf(dir, sizeof dir, "%s/bench_tapew.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (nrec <= 0 || repeat <= 0 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_tapew: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("%ld records of %s per run, one thread, best of %d runs; "
	    "file in %s\n", nrec, dbl ? "an int and a double" : "two ints",
	    repeat, dir);
	snprintf(path, sizeof path, "%s/trace", dir);
	for (i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
		struct best null = { 0, 0, 0, 0 }, file = { 0, 0, 0, 0 };

		if (only != NULL && strcmp(only, fmts[i].name) != 0)
			continue;
		for (r = 0; r < repeat && rc == 0; r++)
			if (run(fmts[i].fmt, "/dev/null", &null) != 0 ||
			    run(fmts[i].fmt, path, &file) != 0)
				rc = 1;
		if (rc != 0)
			break;
		report(fmts[i].name, "/dev/null", &null);
		report(fmts[i].name, "file", &file);
	}
	rmdir(dir);
	return rc;
}
