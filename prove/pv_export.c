/* SPDX-License-Identifier: MIT */
/* pv_export.c: prove export: options, and the table of formats. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "pv.h"
#include "pv_export.h"

/* The formats, one line each; their code is in prove/ex_*.c. */
static const struct pv_exporter formats[] = {
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
