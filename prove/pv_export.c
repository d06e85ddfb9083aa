/* SPDX-License-Identifier: MIT */
/* pv_export.c: prove export: options, and the table of formats. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

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

/* ---- writing OUT safely (a file), and progress ---- */

/* The temporary file being written, removed if a signal ends prove. */
static char tmp_path[4096];

static void
on_signal(int sig)
{
	if (tmp_path[0] != '\0')
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
catch_signals(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	size_t i;

	if (path == NULL) {
		tmp_path[0] = '\0';
		return;
	}
	if (strlen(path) >= sizeof tmp_path)
		return;
	strcpy(tmp_path, path);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], on_signal);
}

static mode_t
umask_now(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

FILE *
pv_export_create(const struct pv_export *x, char **tmp)
{
	struct stat sb;
	size_t n;
	FILE *f;
	int fd;

	if (!x->force && lstat(x->out, &sb) == 0) {
		fprintf(stderr, "prove: export: %s: exists (--force replaces "
		    "it)\n", x->out);
		return NULL;
	}
	n = strlen(x->out) + sizeof ".tmpXXXXXX";
	if ((*tmp = malloc(n)) == NULL) {
		fprintf(stderr, "prove: export: out of memory\n");
		return NULL;
	}
	snprintf(*tmp, n, "%s.tmpXXXXXX", x->out);
	if ((fd = mkstemp(*tmp)) < 0 || (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "prove: export: %s: %s\n", x->out,
		    strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	/* mkstemp makes it 0600: an export is as readable as any file. */
	(void)fchmod(fd, 0666 & ~umask_now());
	catch_signals(*tmp);
	return f;
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
	if (ok && rename(tmp, x->out) != 0) {
		fprintf(stderr, "prove: export: %s: %s\n", x->out,
		    strerror(errno));
		ok = 0;
	}
	if (!ok)
		unlink(tmp);
	catch_signals(NULL);
	free(tmp);
	return ok ? 0 : -1;
}

void
pv_export_progress(const struct pv_export *x, const char *fmt, int pass,
		   uint64_t done, uint64_t total)
{
	static struct timespec last;
	static int shown;
	struct timespec now;

	if (x->quiet)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (last.tv_sec == 0)
		last = now;
	if (done == total ? !shown : now.tv_sec - last.tv_sec < 1)
		return;
	last = now;
	shown = done != total;
	if (total == 0)
		fprintf(stderr, "prove: export: %s: pass %d: %" PRIu64
		    " records\n", fmt, pass, done);
	else
		fprintf(stderr, "prove: export: %s: pass %d: %" PRIu64
		    " of %" PRIu64 " records\n", fmt, pass, done, total);}

/* ---- folder-shaped outputs (otf2, ctf) ---- */

int
pv_export_dir_open(const struct pv_export *x, char *tmp, size_t n)
{
	struct stat st;

	if (!x->force && lstat(x->out, &st) == 0) {
		fprintf(stderr, "prove: export: %s: exists (--force replaces "
		    "it)\n", x->out);
		return -1;
	}
	if ((size_t)snprintf(tmp, n, "%s.tmp-XXXXXX", x->out) >= n) {
		fprintf(stderr, "prove: export: %s: name too long\n", x->out);
		return -1;
	}
	if (mkdtemp(tmp) == NULL) {
		fprintf(stderr, "prove: export: %s: %s\n", tmp,
		    strerror(errno));
		return -1;
	}
	return 0;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

void
pv_export_dir_abort(const char *tmp)
{
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
pv_export_dir_commit(const struct pv_export *x, const char *tmp)
{
	char aside[4096] = "";
	struct stat st;

	if (lstat(x->out, &st) == 0) {
		if (!x->force) {
			fprintf(stderr, "prove: export: %s: exists (--force "
			    "replaces it)\n", x->out);
			goto fail;
		}
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
	if (aside[0] != '\0')
		pv_export_dir_abort(aside);
	return 0;
fail_errno:
	fprintf(stderr, "prove: export: %s: %s\n", x->out, strerror(errno));
fail:
	pv_export_dir_abort(tmp);
	return -1;
}

/* ---- passes over the trace (otf2, ctf) ---- */

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

/* ---- progress and the wall clock (otf2, ctf) ---- */

void
pv_xrun_start(struct pv_xrun *p)
{
	p->tick = time(NULL);
}

static void
xrun_line(struct pv_xrun *p, int last)
{
	time_t now;

	if (p->quiet || (last ? !p->shown : (now = time(NULL)) == p->tick))
		return;
	if (!last)
		p->tick = now;
	p->shown = 1;
	fprintf(stderr, "\rprove: export: %s: %" PRIu64 " of %" PRIu64
	    " records%s", p->name, p->done, p->total, last ? "\n" : "");
}

void
pv_xrun_record(struct pv_xrun *p)
{
	if ((++p->done & 0xffff) == 0)
		xrun_line(p, 0);
}

void
pv_xrun_done(struct pv_xrun *p)
{
	xrun_line(p, 1);
}

void
pv_xrun_first(struct pv_xrun *p, uint64_t ts)
{
	if (p->total++ == 0 || ts < p->t0)
		p->t0 = ts;
}

uint64_t
pv_xrun_stamp(struct pv_xrun *p, int *any, uint64_t *last, uint64_t ts)
{
	uint64_t v = ts >= p->t0 ? ts - p->t0 : 0;

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

void
pv_xrun_clock(struct pv_xrun *p, const struct grmtrace_ev *ev)
{
	if (ev->kind != GRMTRACE_CLOCK || p->have_clock || ev->n < 2)
		return;
	p->have_clock = 1;
	p->clk_real = ev->f[0].v.u;
	p->clk_mono = ev->f[1].v.u;
}

uint64_t
pv_xrun_epoch(const struct pv_xrun *p, uint64_t ts)
{
	return p->have_clock ? p->clk_real + (ts - p->clk_mono) : 0;
}
