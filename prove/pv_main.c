/* pv_main.c: prove, the trace analyser: command line and shared helpers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pv.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove dump FILE\n"
	    "       prove stats FILE\n"
	    "       prove svg FILE [-o OUT.svg] [-w WIDTH]\n");
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
	    "\n  -o OUT.svg  write the picture to OUT.svg, not standard "
	    "output\n"
	    "  -w WIDTH    width of the picture in pixels (default 1200)\n"
	    "\nFILE is a grm trace written by mainmon (text, binary or BEE "
	    "Ascii), or an\nevent file of the original BEE; - reads standard "
	    "input.\n");
}

struct grmtrace *
pv_open(const char *path)
{
	struct grmtrace *r;
	char err[512];

	if ((r = grmtrace_open(path, err, sizeof err)) == NULL) {
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
pv_flush(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "prove: write error: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		help();
		return pv_flush();
	}
	if (argc == 3 && strcmp(argv[1], "dump") == 0)
		return pv_dump(argv[2]);
	if (argc == 3 && strcmp(argv[1], "stats") == 0)
		return pv_stats(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "svg") == 0)
		return pv_svg(argc - 2, argv + 2);
	usage(stderr);
	return 2;
}
