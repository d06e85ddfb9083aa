/* SPDX-License-Identifier: MIT */
/* pv_report.c: prove report, one self-contained HTML page of a trace: its
 * summary, BEE's views (the numbers of prove stats) and an overview of the
 * space-time view (the level of detail of prove serve), the page's style
 * and scripts inline, nothing fetched from the network. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "pv_idx.h"

#define REPORT_WIDTH	1200	/* pixels of the overview */
#define REPORT_LOAD	100	/* buckets of the load meter */
#define REPORT_ROWS	4096	/* rows of the overview, at most */

static const struct pv_web *
web(const char *path)
{
	const struct pv_web *w;

	for (w = pv_web; w->path != NULL; w++)
		if (strcmp(w->path, path) == 0)
			return w;
	return NULL;
}

/* The page, in out: the JSON of meta, view and bee in a script element
 * (pv_json_str writes no '<', so no "</script>" can appear in it). */
static int
page(struct pv_idx *x, struct evbuffer *out, char *err, size_t errlen)
{
	const struct pv_web *css = web("/style.css"), *js = web("/views.js");
	struct pv_q q = { x->first, x->tend + 1, REPORT_WIDTH, 0,
	    x->nrow < REPORT_ROWS ? x->nrow : REPORT_ROWS };
	struct pv_files fs;

	if (css == NULL || js == NULL) {
		snprintf(err, errlen, "the page's files are not built in");
		return -1;
	}
	evbuffer_add_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	    "Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
	    "script-src 'unsafe-inline'; img-src data:\">\n<title>prove "
	    "report</title>\n<style>\n");
	evbuffer_add(out, css->data, css->len);
	evbuffer_add_printf(out, "</style>\n</head>\n<body class=\"report\">\n"
	    "<header><b>prove report</b> <span id=\"r-file\"></span></header>\n"
	    "<div id=\"summary\"></div>\n<h3>space-time overview</h3>\n"
	    "<div id=\"overview\"></div>\n<div id=\"views\"></div>\n"
	    "<pre id=\"errors\"></pre>\n"
	    "<script type=\"application/json\" id=\"data\">{\"meta\":");
	if (pv_idx_meta(x, out) != 0 || (evbuffer_add(out, ",\"view\":", 8),
	    pv_idx_view(x, &q, out) != 0))
		goto nomem;
	evbuffer_add_printf(out, ",\"bee\":");
	fs = pv_idx_files(x);
	if (pv_stats_json(&fs, NULL, REPORT_LOAD, out, err, errlen) != 0)
		return -1;
	evbuffer_add_printf(out, "}</script>\n<script>\n");
	evbuffer_add(out, js->data, js->len);
	evbuffer_add_printf(out, "</script>\n<script>\nViews.report("
	    "JSON.parse(document.getElementById('data').textContent));\n"
	    "</script>\n</body>\n</html>\n");
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Writes b to a new file beside out, then gives it out's name: replacing
 * out if force, else refused if out exists (link fails).  0, or -1 after
 * saying why on stderr. */
static int
write_out(struct evbuffer *b, const char *out, int force)
{
	char *tmp;
	int fd, rc = -1;

	if (asprintf(&tmp, "%s.XXXXXX", out) < 0) {
		fprintf(stderr, "prove report: out of memory\n");
		return -1;
	}
	if ((fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "prove report: %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	while (evbuffer_get_length(b) > 0)
		if (evbuffer_write(b, fd) < 0 && errno != EINTR) {
			fprintf(stderr, "prove report: %s: %s\n", tmp,
			    strerror(errno));
			goto out;
		}
	if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
		fprintf(stderr, "prove report: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	if (force ? rename(tmp, out) != 0 : link(tmp, out) != 0) {
		fprintf(stderr, "prove report: %s: %s%s\n", out,
		    strerror(errno), errno == EEXIST ? " (--force replaces "
		    "it)" : "");
		goto out;
	}
	rc = 0;
out:
	if (close(fd) != 0 && rc == 0) {
		fprintf(stderr, "prove report: %s: %s\n", out, strerror(errno));
		rc = -1;
	}
	if (rc != 0 || !force)
		unlink(tmp);
	free(tmp);
	return rc;
}

int
pv_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL;
	struct pv_idx x;
	struct evbuffer *b = NULL;
	struct stat sb;
	char err[512];
	int c, r, force = 0, rc = 1;

	while ((r = pv_getopt(argc, argv, "report", ":o:fh", longopts,
	    &c)) > 0) {
		if (c == 'o')
			out = optarg;
		else if (c == 'f')
			force = 1;
		else {
			printf("usage: prove report FILE -o OUT.html "
			    "[--force]\n");
			return pv_flush();
		}
	}
	if (r < 0 || optind != argc - 1 || out == NULL) {
		fprintf(stderr, "usage: prove report FILE -o OUT.html "
		    "[--force]\n");
		return 2;
	}
	if (strcmp(argv[optind], "-") == 0) {
		fprintf(stderr, "prove report: cannot read standard input: "
		    "the file is read more than once\n");
		return 2;
	}
	/* Said early, before the work; the link at the end decides. */
	if (!force && lstat(out, &sb) == 0) {
		fprintf(stderr, "prove report: %s exists (--force replaces "
		    "it)\n", out);
		return 1;
	}
	memset(&x, 0, sizeof x);
	if (pv_idx_build(&x, argv[optind]) != 0)
		return 1;
	if ((b = evbuffer_new()) == NULL) {
		fprintf(stderr, "prove report: out of memory\n");
		goto out;
	}
	if (page(&x, b, err, sizeof err) != 0) {
		fprintf(stderr, "prove report: %s: %s\n", argv[optind], err);
		goto out;
	}
	if (write_out(b, out, force) == 0)
		rc = 0;
out:
	if (b != NULL)
		evbuffer_free(b);
	pv_idx_free(&x);
	return rc;
}
