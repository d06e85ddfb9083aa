/* SPDX-License-Identifier: MIT */
/* pv_meter.c: prove load, BEE's load meter as a table: events per second
 * of each process, interval by interval (the counting is pv_load.c's). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pv.h"
#include "pv_load.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove load FILE [-i INTERVAL] [--csv] "
	    "[--counts]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nPrints how many events per second each process recorded, "
	    "interval by\ninterval from the trace's first record: one row an "
	    "interval (its start, in\nseconds after the first record), one "
	    "column a process (NODE:PID), and the\ntotal.  Lines starting "
	    "with # name the processes.\n\n"
	    "  -i INTERVAL  the interval: seconds, or a number with ns, us, "
	    "ms or s\n               (default 1 s)\n"
	    "  --csv        comma-separated values, a header line first, no "
	    "# lines\n"
	    "  --counts     events in each interval, not events per "
	    "second\n");
}

/* A process's names, for the legend. */
static void
put_label(const struct grmtrace_proc *p)
{
	if (p == NULL)
		return;
	if (p->name != NULL && p->name[0] != '\0') {
		putchar(' ');
		pv_put_name(p->name, strlen(p->name));
	}
	if (p->has_rank) {
		printf(" rank %" PRId64, p->rank);
		if (p->rank_name != NULL && p->rank_name[0] != '\0') {
			putchar(' ');
			pv_put_name(p->rank_name, strlen(p->rank_name));
		}
	}
}

/* Process i's value in bucket b, in buf. */
static const char *
value(char *buf, size_t n, const struct pv_load *l, size_t i, size_t b,
      int counts)
{
	if (counts)
		snprintf(buf, n, "%" PRIu64, l->procs[i].count[b]);
	else
		snprintf(buf, n, "%.3f", pv_load_rate(l, i, b));
	return buf;
}

static void
print_load(const struct pv_load *l, struct grmtrace *r, int csv, int counts)
{
	char sec[32], v[48];
	uint64_t sum;
	size_t i, b;

	if (!csv) {
		printf("# %s per second, interval %s s, %zu processes, %"
		    PRIu64 " events\n", counts ? "events, not" : "events",
		    pv_secs(sec, sizeof sec, l->interval), l->nprocs,
		    l->records);
		for (i = 0; i < l->nprocs; i++) {
			printf("# %" PRIu32 ":%" PRIu32, l->procs[i].node,
			    l->procs[i].pid);
			put_label(grmtrace_proc(r, l->procs[i].node,
			    l->procs[i].pid));
			printf(": %" PRIu64 " events\n", l->procs[i].total);
		}
		printf("%-14s", "time");
		for (i = 0; i < l->nprocs; i++) {
			snprintf(sec, sizeof sec, "%" PRIu32 ":%" PRIu32,
			    l->procs[i].node, l->procs[i].pid);
			printf(" %14s", sec);
		}
		printf(" %14s\n", "total");
	} else {
		printf("time");
		for (i = 0; i < l->nprocs; i++)
			printf(",%" PRIu32 ":%" PRIu32, l->procs[i].node,
			    l->procs[i].pid);
		printf(",total\n");
	}
	for (b = 0; b < l->nbuckets; b++) {
		pv_secs(sec, sizeof sec, b * l->interval);
		printf(csv ? "%s" : "%-14s", sec);
		sum = 0;
		for (i = 0; i < l->nprocs; i++) {
			printf(csv ? ",%s" : " %14s", value(v, sizeof v, l, i,
			    b, counts));
			sum += l->procs[i].count[b];
		}
		if (counts)
			printf(csv ? ",%" PRIu64 "\n" : " %14" PRIu64 "\n",
			    sum);
		else
			printf(csv ? ",%.3f\n" : " %14.3f\n",
			    (double)sum * 1e9 / (double)l->interval);
	}
}

int
pv_load_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "csv", no_argument, NULL, 'c' },
		{ "counts", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct pv_load l;
	const char *path;
	uint64_t interval = 1000000000;
	int c, rc, csv = 0, counts = 0;

	while ((rc = pv_getopt(argc, argv, "load", ":i:h", longopts, &c)) >
	    0) {
		switch (c) {
		case 'h':
			help();
			return pv_flush();
		case 'c':
			csv = 1;
			break;
		case 'n':
			counts = 1;
			break;
		case 'i':
			if (pv_dur_parse(optarg, &interval) != 0 ||
			    interval == 0) {
				fprintf(stderr, "prove load: -i '%s': not an "
				    "interval (a number above 0, with ns, us, "
				    "ms or s after it if not seconds)\n",
				    optarg);
				return 2;
			}
			break;
		}
	}
	if (rc < 0 || optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	path = argv[optind];
	if ((r = pv_open(path)) == NULL)
		return 1;
	pv_load_init(&l, interval);
	while ((rc = grmtrace_next(r, &ev)) == 1)
		if (pv_load_add(&l, ev->node, ev->pid, ev->ts) != 0) {
			fflush(stdout);
			fprintf(stderr, "prove load: %s: out of memory, or "
			    "over %u intervals: try a longer -i\n", path,
			    PV_LOAD_MAX_BUCKETS);
			pv_load_free(&l);
			grmtrace_close(r);
			return 1;
		}
	if (rc < 0) {
		pv_load_free(&l);
		return pv_fail(path, r);
	}
	print_load(&l, r, csv, counts);
	pv_load_free(&l);
	pv_close(path, r);
	return pv_flush();
}
