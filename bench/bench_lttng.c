/* SPDX-License-Identifier: MIT */
/*
 * bench_lttng.c: the per-event cost of an LTTng-UST tracepoint with two int
 * fields next to GMI_Event with two ints, in one process, so that their
 * ratio comes from one run.  Batches of the two alternate (which one goes
 * first alternates too), and with several threads every thread starts each
 * batch at the same time (a barrier, outside the timed part), so machine
 * noise falls on both.  Prints figures, asserts nothing.
 *
 * Built and run by bench/lttng.sh, which starts an LTTng session daemon, a
 * session listening to grm_bench:two_ints and a live mainmon; with -m off
 * it checks that neither is listening and measures the disabled costs.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "grm.h"

#define TRACEPOINT_DEFINE
#include "grm_tp.h"
#include <lttng/ust-version.h>

#ifndef LTTNG_UST_VERSION
#define LTTNG_UST_VERSION "?"
#endif

#define BATCH		10000
#define MAXTHREADS	16

enum { LTTNG, GRM, NSYS };

static const char *sysname[NSYS] = {
	"LTTng tracepoint(2 ints)", "GMI_Event(2 ints)"
};

static long nbatches = 200;
static pthread_barrier_t sync_all;

struct result {
	double	*ns[NSYS];	/* per-event cost of each batch */
	long	grm_lost;	/* GMI_Event calls that did not return GRM_OK */
};

static double
batch_lttng(long b)
{
	uint64_t t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < BATCH; i++)
		tracepoint(grm_bench, two_ints, (int)i, (int)b);
	return (double)(now_ns() - t0) / BATCH;
}

static double
batch_grm(long b, long *lost)
{
	uint64_t t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < BATCH; i++)
		if (GMI_Event(1, (int)i, (int)b) != GRM_OK)
			(*lost)++;
	return (double)(now_ns() - t0) / BATCH;
}

static void *
run(void *arg)
{
	struct result *r = arg;
	long b;
	int k, s;

	for (b = 0; b < nbatches; b++) {
		for (k = 0; k < NSYS; k++) {
			s = (int)((b + k) % NSYS);
			pthread_barrier_wait(&sync_all);
			if (s == LTTNG)
				r->ns[s][b] = batch_lttng(b);
			else
				r->ns[s][b] = batch_grm(b, &r->grm_lost);
		}
	}
	return NULL;
}

static struct bench_stats
summarise(struct result *r, int n, int s)
{
	struct bench_stats st;
	double *all;
	long k = 0, b;
	int t;

	all = malloc(sizeof *all * (size_t)(nbatches * n));
	if (all == NULL) {
		perror("bench_lttng");
		exit(1);
	}
	for (t = 0; t < n; t++)
		for (b = 0; b < nbatches; b++)
			all[k++] = r[t].ns[s][b];
	st = bench_stats(all, (size_t)k);
	free(all);
	return st;
}

static void
measure(int nthreads, const char *state)
{
	pthread_t th[MAXTHREADS];
	struct result r[MAXTHREADS];
	struct bench_stats st[NSYS];
	long calls, lost = 0;
	int t, s;

	memset(r, 0, sizeof r);
	pthread_barrier_init(&sync_all, NULL, (unsigned)nthreads);
	for (t = 0; t < nthreads; t++) {
		for (s = 0; s < NSYS; s++) {
			r[t].ns[s] = calloc((size_t)nbatches, sizeof(double));
			if (r[t].ns[s] == NULL) {
				perror("bench_lttng");
				exit(1);
			}
		}
		if (t > 0 && pthread_create(&th[t], NULL, run, &r[t]) != 0) {
			fprintf(stderr, "bench_lttng: pthread_create failed\n");
			exit(1);
		}
	}
	run(&r[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&sync_all);

	calls = nbatches * BATCH * (long)nthreads;
	for (t = 0; t < nthreads; t++)
		lost += r[t].grm_lost;
	printf("-- %s, %d thread%s writing at once (%ld calls of each, "
	    "per-thread cost)\n", state, nthreads, nthreads > 1 ? "s" : "",
	    calls);
	for (s = 0; s < NSYS; s++) {
		st[s] = summarise(r, nthreads, s);
		printf("%-26s median %7.1f ns  p10 %7.1f  p90 %7.1f", sysname[s],
		    st[s].med, st[s].p10, st[s].p90);
		if (s == GRM)
			printf("  (%ld not GRM_OK)", lost);
		printf("\n");
	}
	printf("%-26s %.2f\n", "LTTng/grm (medians)",
	    st[GRM].med > 0 ? st[LTTNG].med / st[GRM].med : 0.0);
	for (t = 0; t < nthreads; t++)
		for (s = 0; s < NSYS; s++)
			free(r[t].ns[s]);
}

static void
clock_cost(void)
{
	printf("%-26s %7.1f ns\n", "clock_gettime(MONOTONIC)",
	    bench_clock_cost());
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_lttng -m on|off [-b BATCHES] "
	    "[-t THREADS]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	int c, threads = 2, want = -1, lt, gr;
	const char *state;

	while ((c = getopt(argc, argv, "b:m:t:")) != -1) {
		switch (c) {
		case 'b':
			nbatches = atol(optarg);
			break;
		case 'm':
			if (strcmp(optarg, "on") == 0)
				want = 1;
			else if (strcmp(optarg, "off") == 0)
				want = 0;
			else
				usage();
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (want < 0 || nbatches < 1 || threads < 1 || threads > MAXTHREADS)
		usage();
	if (GMI_DefineEvent(1, "%d %d", "bench") != GRM_OK) {
		fprintf(stderr, "bench_lttng: GMI_DefineEvent failed\n");
		return 1;
	}
	/* LTTng registers with the session daemon before main runs. */
	lt = tracepoint_enabled(grm_bench, two_ints) ? 1 : 0;
	gr = GMI_Traced();
	printf("LTTng-UST %s: grm_bench:two_ints %s; grm %s; batches of %d "
	    "calls\n", LTTNG_UST_VERSION, lt ? "enabled" : "disabled",
	    gr ? "traced" : "untraced (no GRM_MM)", BATCH);
	if (lt != want || gr != want) {
		fprintf(stderr, "bench_lttng: expected both systems %s\n",
		    want ? "recording" : "off");
		return 1;
	}
	state = want ? "recording" : "disabled / untraced";
	clock_cost();
	measure(1, state);
	if (threads > 1)
		measure(threads, state);
	return 0;
}
