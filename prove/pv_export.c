/* SPDX-License-Identifier: MIT */
/* pv_export.c: prove export: options, and the table of formats. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pv.h"
#include "pv_export.h"

/* The formats, one line each; their code is in prove/ex_*.c. */
static const struct pv_exporter formats[] = {
	{ "json", "Trace Event JSON (Perfetto, Chrome)", ex_json },
	{ "paje", "Paje trace (ViTE, PajeNG)", ex_paje },
#ifdef GRM_HAVE_OTF2
	{ "otf2", "OTF2 archive (a folder; Vampir, Scalasca, ViTE)", ex_otf2 },
#endif
	{ "ctf", "CTF 1.8 trace (a folder; babeltrace2, Trace Compass)",
	    ex_ctf },
	{ NULL, NULL, NULL }
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove export --to FORMAT FILE -o OUT [--force] "
	    "[-q]\n");
}

static void
help(void)
{
	const struct pv_exporter *e;

	usage(stdout);
	printf("\n  --to FORMAT  the format to write:\n");
	for (e = formats; e->name != NULL; e++)
		printf("      %-8s %s\n", e->name, e->what);
	printf("  -o OUT       where to write it (refused if it exists)\n"
	    "  --force      replace OUT if it exists\n"
	    "  -q           no progress on standard error\n");
}

int
pv_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct pv_export x = { 0 };
	const struct pv_exporter *e;
	const char *to = NULL;
	int c, r;

	while ((r = pv_getopt(argc, argv, argv[0], ":ho:q", longopts,
	    &c)) > 0) {
		switch (c) {
		case 't':
			to = optarg;
			break;
		case 'o':
			x.out = optarg;
			break;
		case 'f':
			x.force = 1;
			break;
		case 'q':
			x.quiet = 1;
			break;
		case 'h':
			help();
			return pv_flush();
		}
	}
	if (r < 0 || optind != argc - 1 || to == NULL || x.out == NULL) {
		usage(stderr);
		return 2;
	}
	x.in = argv[optind];
	for (e = formats; e->name != NULL; e++)
		if (strcmp(e->name, to) == 0)
			return e->run(&x);
#ifndef GRM_HAVE_OTF2
	if (strcmp(to, "otf2") == 0) {
		fprintf(stderr, "prove: export: otf2: not built in (configure "
		    "found no OTF2 library: libotf2-trace-dev)\n");
		return 1;
	}
#endif
	fprintf(stderr, "prove: export: %s: not a format (", to);
	for (e = formats; e->name != NULL; e++)
		fprintf(stderr, "%s%s", e == formats ? "" : ", ", e->name);
	fprintf(stderr, ")\n");
	return 2;
}

/* ---- writing OUT safely: a file or a folder ---- */

/* The temporary file or folder being written, removed if a signal ends
 * prove. */
static char tmp_path[4096];

/*
 * Removes the folder at fd (opened O_DIRECTORY, closed here), and all in
 * it, with system calls only: it runs in a signal handler too.  Depth is
 * bounded (the exports' folders are two levels deep).
 */
static void
rm_in(int fd, int depth)
{
	uint64_t buf[512];
	struct dirent64 *d;
	long n, i;
	int sub;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (i = 0; i < n; i += d->d_reclen) {
			d = (struct dirent64 *)(void *)((char *)buf + i);
			if (strcmp(d->d_name, ".") == 0 ||
			    strcmp(d->d_name, "..") == 0)
				continue;
			if (unlinkat(fd, d->d_name, 0) == 0 || depth >= 8)
				continue;
			if ((sub = openat(fd, d->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW)) >= 0)
				rm_in(sub, depth + 1);
			unlinkat(fd, d->d_name, AT_REMOVEDIR);
		}
	close(fd);
}

/* Removes path, a file or a folder and all in it. */
static void
rm_tree(const char *path)
{
	int fd;

	if (unlink(path) == 0 ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
		return;
	rm_in(fd, 0);
	rmdir(path);
}

static void
on_signal(int sig)
{
	if (tmp_path[0] != '\0')
		rm_tree(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Removes path if a signal ends prove (NULL: nothing any more). */
static void
catch_signals(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	size_t i;

	if (path == NULL || strlen(path) >= sizeof tmp_path) {
		tmp_path[0] = '\0';
		return;
	}
	strcpy(tmp_path, path);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], on_signal);
}

/* Refuses an existing x->out unless --force: 0, or -1 after saying so. */
static int
refuse_existing(const struct pv_export *x)
{
	struct stat st;

	if (x->force || lstat(x->out, &st) != 0)
		return 0;
	fprintf(stderr, "prove: export: %s: exists (--force replaces it)\n",
	    x->out);
	return -1;
}

/*
 * Makes the temporary file (dir 0: its descriptor is returned) or folder
 * (dir 1: 0 is returned) OUT.tmp-XXXXXX, its path in tmp (n bytes), to be
 * removed on a signal.  -1 after saying why.
 */
static int
make_tmp(const struct pv_export *x, char *tmp, size_t n, int dir)
{
	mode_t m;
	int fd = 0;

	if (refuse_existing(x) != 0)
		return -1;
	if ((size_t)snprintf(tmp, n, "%s.tmp-XXXXXX", x->out) >= n) {
		fprintf(stderr, "prove: export: %s: name too long\n", x->out);
		return -1;
	}
	if (dir ? mkdtemp(tmp) == NULL : (fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "prove: export: %s: %s\n", x->out,
		    strerror(errno));
		return -1;
	}
	/* mkstemp makes it 0600, mkdtemp 0700: an export is as readable as
	 * any file. */
	m = umask(022);
	umask(m);
	(void)chmod(tmp, (dir ? 0777 : 0666) & ~m);
	catch_signals(tmp);
	return fd;
}

/*
 * Moves tmp (a file or folder) to x->out, refusing an existing one unless
 * --force; with --force, a folder at x->out is moved aside and removed
 * once the new one is in place.  tmp is removed on failure.  0, or -1
 * after saying why.
 */
static int
commit(const struct pv_export *x, const char *tmp)
{
	char aside[4096] = "";
	struct stat st, ts;

	if (refuse_existing(x) != 0)
		goto fail;
	if (lstat(x->out, &st) == 0 &&
	    (S_ISDIR(st.st_mode) || (lstat(tmp, &ts) == 0 &&
	    S_ISDIR(ts.st_mode)))) {
		if (!S_ISDIR(st.st_mode)) {
			if (unlink(x->out) != 0)
				goto fail_errno;
		} else if ((size_t)snprintf(aside, sizeof aside,
		    "%s.old-XXXXXX", x->out) >= sizeof aside ||
		    mkdtemp(aside) == NULL || rename(x->out, aside) != 0) {
			if (aside[0] != '\0')
				rmdir(aside);
			goto fail_errno;
		}
	}
	if (rename(tmp, x->out) != 0) {
		if (aside[0] != '\0')
			rename(aside, x->out);
		goto fail_errno;
	}
	catch_signals(NULL);
	if (aside[0] != '\0')
		rm_tree(aside);
	return 0;
fail_errno:
	fprintf(stderr, "prove: export: %s: %s\n", x->out, strerror(errno));
fail:
	rm_tree(tmp);
	catch_signals(NULL);
	return -1;
}

FILE *
pv_export_create(const struct pv_export *x, char **tmp)
{
	size_t n = strlen(x->out) + sizeof ".tmp-XXXXXX";
	FILE *f;
	int fd;

	if ((*tmp = malloc(n)) == NULL) {
		fprintf(stderr, "prove: export: out of memory\n");
		return NULL;
	}
	if ((fd = make_tmp(x, *tmp, n, 0)) < 0)
		goto fail;
	if ((f = fdopen(fd, "w")) != NULL)
		return f;
	fprintf(stderr, "prove: export: %s: %s\n", x->out, strerror(errno));
	close(fd);
	rm_tree(*tmp);
	catch_signals(NULL);
fail:
	free(*tmp);
	*tmp = NULL;
	return NULL;
}

int
pv_export_finish(const struct pv_export *x, FILE *f, char *tmp, int ok)
{
	int err = ferror(f);

	if (fclose(f) != 0 || err) {
		if (ok)
			fprintf(stderr, "prove: export: %s: write error: %s\n",
			    x->out, err ? "stream error" : strerror(errno));
		ok = 0;
	}
	if (!ok) {
		rm_tree(tmp);
		catch_signals(NULL);
	} else if (commit(x, tmp) != 0)
		ok = 0;
	free(tmp);
	return ok ? 0 : -1;
}

int
pv_export_dir_open(const struct pv_export *x, char *tmp, size_t n)
{
	return make_tmp(x, tmp, n, 1) < 0 ? -1 : 0;
}

void
pv_export_dir_abort(const char *tmp)
{
	rm_tree(tmp);
	catch_signals(NULL);
}

int
pv_export_dir_commit(const struct pv_export *x, const char *tmp)
{
	return commit(x, tmp);
}

/* ---- passes over the trace ---- */

/* Makes standard input a regular file, at its start. */
static int
stdin_file(void)
{
	const char *dir = getenv("TMPDIR");
	char buf[65536];
	struct stat sb;
	ssize_t n, w, off;
	int fd;

	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
		return 0;
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if ((fd = open(dir, O_TMPFILE | O_RDWR, 0600)) < 0) {
		fprintf(stderr, "prove: export: a temporary file in %s: %s\n",
		    dir, strerror(errno));
		return -1;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail_in;
		for (off = 0; off < n; off += w)
			if ((w = write(fd, buf + off, (size_t)(n - off))) < 0 &&
			    errno != EINTR)
				goto fail_tmp;
			else if (w < 0)
				w = 0;
	}
	if (dup2(fd, STDIN_FILENO) < 0)
		goto fail_in;
	close(fd);
	return 0;
fail_in:
	fprintf(stderr, "prove: export: standard input: %s\n",
	    strerror(errno));
	close(fd);
	return -1;
fail_tmp:
	fprintf(stderr, "prove: export: a temporary file in %s: %s\n", dir,
	    strerror(errno));
	close(fd);
	return -1;
}

struct grmtrace *
pv_export_open(const struct pv_export *x)
{
	if (strcmp(x->in, "-") != 0)
		return pv_open(x->in);
	if (stdin_file() != 0)
		return NULL;
	if (lseek(STDIN_FILENO, 0, SEEK_SET) < 0) {
		fprintf(stderr, "prove: export: standard input: %s\n",
		    strerror(errno));
		return NULL;
	}
	return pv_open(x->in);
}

/* ---- one run: its progress, and the trace's time origin ---- */

void
pv_xrun_init(struct pv_xrun *p, const struct pv_export *x, const char *name)
{
	memset(p, 0, sizeof *p);
	p->name = name;
	p->quiet = x->quiet;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->tick = p->start;
}

void
pv_xrun_pass(struct pv_xrun *p, int n)
{
	p->pass = n;
	p->done = 0;
	p->shown = 0;
	if (n == 1)
		p->total = 0;
}

static void
xrun_line(struct pv_xrun *p)
{
	if (p->pass == 1)
		fprintf(stderr, "prove: export: %s: pass 1: %" PRIu64
		    " records\n", p->name, p->done);
	else
		fprintf(stderr, "prove: export: %s: pass %d: %" PRIu64 " of %"
		    PRIu64 " records\n", p->name, p->pass, p->done, p->total);
	p->shown = 1;
}

void
pv_xrun_record(struct pv_xrun *p)
{
	struct timespec now;

	if (p->pass == 1)
		p->total++;
	/* The clock is read every 65536 records: 1 s is millions. */
	if ((++p->done & 0xffff) != 0 || p->quiet)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - p->start.tv_sec < 1 ||
	    (now.tv_sec - p->tick.tv_sec) * 1000000000L +
	    (now.tv_nsec - p->tick.tv_nsec) < 1000000000L)
		return;
	p->tick = now;
	xrun_line(p);
}

void
pv_xrun_done(struct pv_xrun *p)
{
	if (!p->shown || p->quiet)
		return;
	clock_gettime(CLOCK_MONOTONIC, &p->tick);
	xrun_line(p);
}

void
pv_xrun_time(struct pv_xrun *p, const struct grmtrace_ev *ev)
{
	switch (ev->kind) {
	case GRMTRACE_CLOCK:
		if (p->have_clock || ev->n < 2 ||
		    ev->f[0].type == GRMTRACE_STRING ||
		    ev->f[1].type == GRMTRACE_STRING)
			return;
		p->have_clock = 1;
		p->clk_real = ev->f[0].v.u;
		p->clk_mono = ev->f[1].v.u;
		return;
	case GRMTRACE_RECORD:
	case GRMTRACE_PROC:
	case GRMTRACE_LOSS:
		if (!p->any || ev->ts < p->t0)
			p->t0 = ev->ts;
		if (!p->any || ev->ts > p->t1)
			p->t1 = ev->ts;
		p->any = 1;
		return;
	default:
		return;
	}
}

uint64_t
pv_xrun_rel(const struct pv_xrun *p, uint64_t ts)
{
	return ts > p->t0 ? ts - p->t0 : 0;
}

uint64_t
pv_xrun_stamp(struct pv_xrun *p, int *any, uint64_t *last, uint64_t ts)
{
	uint64_t v = pv_xrun_rel(p, ts);

	if (*any && v < *last) {
		p->clamped++;
		v = *last;
	}
	*any = 1;
	*last = v;
	return v;
}

void
pv_xrun_say(const struct pv_xrun *p)
{
	if (p->clamped > 0)
		fprintf(stderr, "prove: export: %s: %" PRIu64 " time stamps "
		    "earlier than the previous one of their thread raised to "
		    "it\n", p->name, p->clamped);
}

uint64_t
pv_xrun_epoch(const struct pv_xrun *p, uint64_t ts)
{
	return p->have_clock ? p->clk_real + (ts - p->clk_mono) : 0;
}
