/* bench_event.c: the per-event cost of GMI_Event with two integers, for one
 * thread and for several writing at once; prints figures, asserts nothing. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "grm.h"

#define BATCH	10000

static long nbatches = 200;
static pthread_barrier_t start;

struct result {
	double	*ns;	/* per-event cost of each batch */
	long	lost;
};

static void *
run(void *arg)
{
	struct result *r = arg;
	long b, i;
	uint64_t t0;

	pthread_barrier_wait(&start);
	for (b = 0; b < nbatches; b++) {
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (GMI_Event(1, (int)i, (int)b) != GRM_OK)
				r->lost++;
		r->ns[b] = (double)(now_ns() - t0) / BATCH;
	}
	return NULL;
}

static void
report(const char *what, struct result *r, int n)
{
	struct bench_stats st;
	double *all;
	long lost = 0, k = 0, b;
	int t;

	all = malloc(sizeof *all * (size_t)(nbatches * n));
	for (t = 0; t < n; t++) {
		for (b = 0; b < nbatches; b++)
			all[k++] = r[t].ns[b];
		lost += r[t].lost;
	}
	st = bench_stats(all, (size_t)k);
	printf("%-34s median %7.1f ns  p10 %7.1f  p90 %7.1f  (%ld events, "
	    "%ld lost)\n", what, st.med, st.p10, st.p90, k * BATCH, lost);
	free(all);
}

static void
measure(int nthreads)
{
	pthread_t th[16];
	struct result r[16];
	char what[64];
	int t;

	memset(r, 0, sizeof r);
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (t = 0; t < nthreads; t++) {
		r[t].ns = calloc((size_t)nbatches, sizeof(double));
		if (t > 0)
			pthread_create(&th[t], NULL, run, &r[t]);
	}
	run(&r[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&start);
	snprintf(what, sizeof what, "GMI_Event(2 ints), %d thread%s:",
	    nthreads, nthreads > 1 ? "s" : "");
	report(what, r, nthreads);
	for (t = 0; t < nthreads; t++)
		free(r[t].ns);
}

static void
clock_cost(void)
{
	printf("%-34s %7.1f ns\n", "clock_gettime(CLOCK_MONOTONIC):",
	    bench_clock_cost());
}

int
main(int argc, char **argv)
{
	int c, threads = 2;

	while ((c = getopt(argc, argv, "b:t:")) != -1) {
		switch (c) {
		case 'b':
			nbatches = atol(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_event [-b BATCHES] "
			    "[-t THREADS]\n");
			return 2;
		}
	}
	if (nbatches < 1 || threads < 1 || threads > 16)
		return 2;
	if (GMI_DefineEvent(1, "%d %d", "bench") != GRM_OK)
		return 1;
	printf("tracing: %s; batches of %d events\n",
	    GMI_Traced() ? "on" : "off (GRM_MM not set)", BATCH);
	clock_cost();
	measure(1);
	if (threads > 1)
		measure(threads);
	return 0;
}
