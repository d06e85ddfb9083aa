/* SPDX-License-Identifier: MIT */
/* pv_main.c: prove, the trace analyser: command line and shared helpers. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pv.h"
#include "pv_export.h"
#include "pv_sum.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove [--raw-times] COMMAND ...\n"
	    "       prove dump FILE\n"
	    "       prove stats FILE [-t FROM:TO] [-r ROWS]\n"
	    "       prove svg FILE [-o OUT.svg] [-w WIDTH] [-t FROM:TO] "
	    "[-r ROWS]\n"
	    "       prove export --to FORMAT FILE -o OUT\n"
	    "       prove serve FILE... [-p PORT] [-b ADDR] [--summary-only]\n"
	    "       prove index FILE...\n"
	    "       prove trace FILE [-t FROM:TO] [-H HOST] [-p PROC] "
	    "[-T TID] [-e EVENT]\n"
	    "       prove load FILE [-i INTERVAL] [--csv]\n"
	    "       prove replay FILE --to ID [--speed X]\n"
	    "       prove report FILE -o OUT.html [--force]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\n"
	    "  dump   print every record, one a line: ts node pid tid eid "
	    "fields\n"
	    "  stats  print event counts, the time profile of blocks and\n"
	    "         ranges, messages, statistics-mode lines and control\n"
	    "         commands\n"
	    "  svg    draw the space-time diagram (threads, blocks, events,\n"
	    "         messages, losses) as an SVG picture\n"
	    "  export write the trace in another tool's format (prove "
	    "export --help)\n"
	    "  serve  show the traces in a web browser: a zoomable "
	    "space-time view\n"
	    "         (prints the address; -p PORT, default any free one; "
	    "-b ADDR,\n         default 127.0.0.1)\n"
	    "  index  write FILE.idx, the summary of a binary trace that "
	    "serve opens\n         at once (mainmon writes it as it "
	    "writes the trace)\n"
	    "  trace  print the records that match filters, as dump does "
	    "(prove trace --help)\n"
	    "  load   events per second per process over time (prove load "
	    "--help)\n"
	    "  replay send the trace's records into a running mainmon as if "
	    "live\n         (prove replay --help)\n"
	    "  report write one self-contained HTML page: summary, BEE's "
	    "views and\n         the space-time overview (-o OUT.html; "
	    "--force: replace OUT)\n"
	    "\n  -o OUT.svg  write the picture to OUT.svg, not standard "
	    "output\n"
	    "  -w WIDTH    width of the picture in pixels (default 1200)\n"
	    "  -t FROM:TO  only the records from FROM to TO ns (either may "
	    "be left out)\n"
	    "  -r ROWS     only the threads NODE[/PID[/TID]][,...] ('*': "
	    "any)\n"
	    "\n  --raw-times (before the command) the times of the file, "
	    "not corrected so\n              that no message is received "
	    "before it was sent\n"
	    "\nFILE is a grm trace written by mainmon (text, binary or BEE "
	    "Ascii), or an\nevent file of the original BEE; - reads standard "
	    "input.\n");
}

int pv_raw_times;

struct grmtrace *
pv_topen(const char *path, char *err, size_t errlen)
{
	struct grmtrace *r = grmtrace_open(path, err, errlen);

	if (r != NULL && pv_raw_times)
		(void)grmtrace_raw_times(r, 1);
	return r;
}

struct grmtrace *
pv_open(const char *path)
{
	struct grmtrace *r;
	char err[512];

	if ((r = pv_topen(path, err, sizeof err)) == NULL) {
		fprintf(stderr, "prove: %s\n", err);
		return NULL;
	}
	grmtrace_select(r, 0);	/* records only, unless a command asks */
	return r;
}

int
pv_fail(const char *path, struct grmtrace *r)
{
	fflush(stdout);
	fprintf(stderr, "prove: %s: %s\n", path, grmtrace_error(r));
	grmtrace_close(r);
	return 1;
}

void
pv_close(const char *path, struct grmtrace *r)
{
	static int said;

	if (!said && grmtrace_warning(r) != NULL) {
		fflush(stdout);
		fprintf(stderr, "prove: %s: warning: %s\n", path,
		    grmtrace_warning(r));
		said = 1;
	}
	grmtrace_close(r);
}

void
pv_put_name(const char *s, size_t n)
{
	unsigned char c;

	for (; n > 0; s++, n--) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

const char *
pv_secs(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%09" PRIu64, ns / 1000000000,
	    ns % 1000000000);
	return buf;
}

int
pv_dur_parse(const char *s, uint64_t *ns)
{
	static const struct {
		const char	*unit;
		uint64_t	mult;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { "", 1000000000 }
	};
	uint64_t whole = 0, frac = 0, scale = 1, mult = 0, v;
	const char *p = s;
	size_t i;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (scale < 1000000000) {	/* below 1 ns: cut */
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	if (digits == 0)
		return -1;
	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(p, units[i].unit) == 0) {
			mult = units[i].mult;
			break;
		}
	if (mult == 0 || (whole != 0 && whole > (UINT64_MAX >> 1) / mult))
		return -1;
	v = whole * mult + frac * mult / scale;
	if (v > (UINT64_MAX >> 1))
		return -1;
	*ns = v;
	return 0;
}

int
pv_flush(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "prove: write error: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int
pv_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
	  const struct option *longopts, int *c)
{
	*c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (*c) {
	case -1:
		return 0;
	case '?':
		if (optopt != 0)
			fprintf(stderr, "prove%s%s: unknown option -%c\n",
			    *cmd ? " " : "", cmd, optopt);
		else
			fprintf(stderr, "prove%s%s: unknown option %s\n",
			    *cmd ? " " : "", cmd, argv[optind - 1]);
		return -1;
	case ':':
		fprintf(stderr, "prove%s%s: %s needs a value\n",
		    *cmd ? " " : "", cmd, argv[optind - 1]);
		return -1;
	default:
		return 1;
	}
}

/* prove dump FILE, prove stats FILE: no option but --help. */
static int
file_command(int argc, char **argv, int (*run)(const char *))
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, r;

	while ((r = pv_getopt(argc, argv, argv[0], ":h", longopts, &c)) > 0) {
		help();
		return pv_flush();
	}
	if (r < 0 || optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	return run(argv[optind]);
}

/* prove stats FILE [-t FROM:TO] [-r ROWS]. */
static int
stats_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "rows", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct pv_sel sel = PV_SEL_ALL;
	int c, r, rc = 2;

	while ((r = pv_getopt(argc, argv, argv[0], ":t:r:h", longopts,
	    &c)) > 0) {
		if (c == 't' && pv_sel_time(&sel, "stats", optarg) != 0)
			goto out;
		if (c == 'r' && pv_sel_rows(&sel, "stats", optarg) != 0)
			goto out;
		if (c == 'h') {
			help();
			rc = pv_flush();
			goto out;
		}
	}
	if (r < 0 || optind != argc - 1) {
		usage(stderr);
		goto out;
	}
	rc = pv_stats(argv[optind], &sel);
out:
	pv_sel_free(&sel);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "raw-times", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 }
	};
	int c, r;

	opterr = 0;
	/* "+": the options before the command are prove's own. */
	while ((r = pv_getopt(argc, argv, "", "+:h", longopts, &c)) > 0) {
		if (c == 'R') {
			pv_raw_times = 1;
			continue;
		}
		help();
		return pv_flush();
	}
	if (r < 0 || optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	optind = 0;	/* each command parses from its own word on, afresh */
	if (strcmp(argv[0], "dump") == 0)
		return file_command(argc, argv, pv_dump);
	if (strcmp(argv[0], "stats") == 0)
		return stats_command(argc, argv);
	if (strcmp(argv[0], "report") == 0)
		return pv_report(argc, argv);
	if (strcmp(argv[0], "svg") == 0)
		return pv_svg(argc, argv);
	if (strcmp(argv[0], "export") == 0)
		return pv_export(argc, argv);
	if (strcmp(argv[0], "serve") == 0)
		return pv_serve(argc, argv);
	if (strcmp(argv[0], "trace") == 0)
		return pv_trace(argc, argv);
	if (strcmp(argv[0], "index") == 0)
		return pv_index_cmd(argc, argv);
	if (strcmp(argv[0], "load") == 0)
		return pv_load_cmd(argc, argv);
	if (strcmp(argv[0], "replay") == 0)
		return pv_replay(argc, argv);
	fprintf(stderr, "prove: %s: not a command (dump, stats, svg, "
	    "export, serve, index, trace, load, replay, report)\n",
	    argv[0]);
	usage(stderr);
	return 2;
}
