/* SPDX-License-Identifier: MIT */
/* pv_export.c: prove export: options, and the table of formats. */
#include <errno.h>
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
		    " of %" PRIu64 " records\n", fmt, pass, done, total);
}
