/* fuzz_tape.c: libFuzzer target for the trace file reader (tape_r.c), and
 * through a write-read round trip, for the writer (tape_w.c).
 *
 * The input is a whole trace file.  It is read to its end or its first
 * error, touching every field.  Each record read is written again with the
 * writer (tape_open, tape_def before each record, tape_record, tape_close)
 * into a second file; that file must read back without error, and writing
 * it once more must give the same bytes (the writer's output is a fixed
 * point of read-then-write).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An anonymous in-memory file and the path tape_ropen/tape_open take. */
struct mfile {
	int	fd;
	char	path[64];
};

static void
mf_open(struct mfile *m)
{
	m->fd = memfd_create("fuzz_tape", MFD_CLOEXEC);
	if (m->fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
}

static void
mf_write(struct mfile *m, const void *p, size_t n)
{
	const char *b = p;
	ssize_t k;

	while (n > 0) {
		k = write(m->fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			perror("write to memfd");
			abort();
		}
		b += k;
		n -= (size_t)k;
	}
}

/* The whole contents, in a malloc'ed buffer. */
static char *
mf_slurp(struct mfile *m, size_t *n)
{
	off_t end = lseek(m->fd, 0, SEEK_END);
	char *b;

	if (end < 0 || (b = malloc((size_t)end + 1)) == NULL)
		abort();
	if (pread(m->fd, b, (size_t)end, 0) != end)
		abort();
	*n = (size_t)end;
	return b;
}

/* Something the compiler cannot drop: every byte we read goes into it. */
static volatile uint64_t sink;

static void
touch(const struct tape_ev *ev)
{
	uint64_t h = ev->ts ^ ev->node ^ ev->pid ^ ev->tid ^ (uint32_t)ev->eid;
	unsigned i;
	uint32_t k;

	if (ev->n > REC_ARGS_MAX || ev->def == NULL || ev->def->eid != ev->eid ||
	    ev->def->fmt.n != ev->n)
		abort();
	h += strlen(ev->def->format) + strlen(ev->def->dsc);
	for (i = 0; i < ev->n; i++) {
		if (ev->f[i].kind != ev->def->fmt.kind[i])
			abort();
		switch (ev->f[i].kind) {
		case REC_K_STR:
			for (k = 0; k < ev->f[i].v.s.len; k++)
				h = h * 31 + (unsigned char)ev->f[i].v.s.p[k];
			break;
		case REC_K_DOUBLE:
			h += isnan(ev->f[i].v.d) ? 1 : (uint64_t)(ev->f[i].v.d != 0);
			break;
		default:
			h += ev->f[i].v.u;
		}
	}
	sink += h;
}

/*
 * Reads the file at path to its end.  With w, writes each record again
 * (its definition first).  Returns the number of records read; *rc is the
 * last tape_next result.
 */
static uint64_t
read_all(const char *path, struct tape_w *w, int *rc)
{
	const struct tape_def *d;
	struct tape_ev ev;
	struct tape_r *r;
	const char *why = NULL;
	uint64_t n = 0, end;

	if ((r = tape_ropen(path, &why)) == NULL) {
		if (why == NULL)
			abort();
		*rc = -2;
		return 0;
	}
	while ((*rc = tape_next(r, &ev)) == 1) {
		n++;
		touch(&ev);
		if (w == NULL)
			continue;
		d = ev.def;
		if (tape_def(w, d->eid, d->cls, d->attr, d->format,
		    strlen(d->format), d->dsc, strlen(d->dsc)) != 0) {
			/* The reader accepted this definition. */
			fprintf(stderr, "tape_def refused a definition the "
			    "reader took: %s\n", strerror(errno));
			abort();
		}
		/* Bytes >= 0x80 are read as themselves but written as
		 * \xHH: a line may grow past TAPE_LINE_MAX. */
		if (tape_record(w, ev.ts, ev.node, ev.pid, ev.tid, ev.eid,
		    ev.f, ev.n) != 0 && errno != EMSGSIZE) {
			fprintf(stderr, "tape_record: %s\n", strerror(errno));
			abort();
		}
	}
	if (*rc == -1 && strcmp(tape_rerror(r), "no error") == 0)
		abort();
	sink += tape_rlosses(r);
	if (tape_rend(r, &end))
		sink += end;
	if (tape_rdef(r, -1) != NULL)
		sink += strlen(tape_rdef(r, -1)->format);
	tape_rclose(r);
	return n;
}

/* Reads path, writes what it holds to a new memory file; returns it. */
static void
rewrite(const char *path, struct mfile *out, uint64_t *nread, int *rc)
{
	struct tape_w *w;

	mf_open(out);
	if ((w = tape_open(out->path, "fuzz", 1, 2)) == NULL) {
		perror("tape_open");
		abort();
	}
	*nread = read_all(path, w, rc);
	if (tape_close(w) != 0) {
		perror("tape_close");
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mfile in, a, b;
	uint64_t n0, na, nb;
	int rc0, rca, rcb;
	char *ta, *tb;
	size_t la, lb;

	mf_open(&in);
	mf_write(&in, data, size);

	/* Read the input, and write what was read into a. */
	rewrite(in.path, &a, &n0, &rc0);
	close(in.fd);
	if (rc0 == -2) {
		close(a.fd);
		return 0;	/* not a trace: nothing was written */
	}

	/* The writer's output must read back whole, and again into b. */
	rewrite(a.path, &b, &na, &rca);
	if (rca != 0) {
		fprintf(stderr, "the writer's output does not read back "
		    "(rc %d after %llu records)\n", rca,
		    (unsigned long long)na);
		abort();
	}
	ta = mf_slurp(&a, &la);
	tb = mf_slurp(&b, &lb);
	if (la != lb || memcmp(ta, tb, la) != 0) {
		fprintf(stderr, "write(read(write(read(input)))) differs "
		    "from write(read(input))\n");
		abort();
	}
	if (na > n0)
		abort();
	/* And the final file reads back to the same count. */
	nb = read_all(b.path, NULL, &rcb);
	if (rcb != 0 || nb != na)
		abort();
	free(ta);
	free(tb);
	close(a.fd);
	close(b.fd);
	return 0;
}
