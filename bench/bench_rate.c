/* bench_rate.c: sustained event rate.  THREADS threads emit RATE events
 * per second in all, for SECS seconds, paced in 1 ms steps, into a live
 * mainmon; prints the rate achieved, the events the library reported lost,
 * and how far the writers fell behind their schedule.  Asserts nothing. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "grm.h"

static double rate = 1e6, secs = 10;
static int nthreads = 1;
static pthread_barrier_t start;

struct result {
	long		sent;
	long		lost;
	uint64_t	lag_ns;		/* worst lag behind schedule */
};

static void
sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u),
	    (long)(t % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

static void *
run(void *arg)
{
	struct result *r = arg;
	double per_ms = rate / nthreads / 1000.0, due = 0;
	uint64_t t0, step, now;
	long i, n, total;

	total = (long)(rate / nthreads * secs);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (step = 1; r->sent < total; step++) {
		due += per_ms;
		n = (long)due - r->sent;
		if (n > total - r->sent)
			n = total - r->sent;
		for (i = 0; i < n; i++)
			if (GMI_Event(1, (int)i, r->sent + i) != GRM_OK)
				r->lost++;
		r->sent += n;
		now = now_ns();
		if (now > t0 + step * 1000000u) {
			if (now - (t0 + step * 1000000u) > r->lag_ns)
				r->lag_ns = now - (t0 + step * 1000000u);
		} else
			sleep_until(t0 + step * 1000000u);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	struct result r[16] = { { 0, 0, 0 } };
	pthread_t th[16];
	long sent = 0, lost = 0;
	uint64_t t0, lag = 0;
	double el;
	int c, t;

	while ((c = getopt(argc, argv, "r:s:t:")) != -1) {
		switch (c) {
		case 'r':
			rate = atof(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_rate [-r EVENTS_PER_S] "
			    "[-s SECONDS] [-t THREADS]\n");
			return 2;
		}
	}
	if (rate < 1000 || secs <= 0 || nthreads < 1 || nthreads > 16)
		return 2;
	if (GMI_DefineEvent(1, "%d %ld", "rate") != GRM_OK)
		return 1;
	/* The sustained rate, not the start: wait until the data path is
	 * up (the Local Monitor connected to mainmon). */
	if (GMI_Flush() != GRM_OK)
		fprintf(stderr, "bench_rate: the first flush did not reach "
		    "mainmon\n");
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	t0 = now_ns();
	for (t = 1; t < nthreads; t++)
		pthread_create(&th[t], NULL, run, &r[t]);
	run(&r[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	el = (double)(now_ns() - t0) / 1e9;
	for (t = 0; t < nthreads; t++) {
		sent += r[t].sent;
		lost += r[t].lost;
		if (r[t].lag_ns > lag)
			lag = r[t].lag_ns;
	}
	printf("asked %.0f events/s for %.1f s with %d thread%s: %ld events "
	    "in %.2f s = %.2f M events/s, %ld lost, worst lag %.1f ms\n",
	    rate, secs, nthreads, nthreads > 1 ? "s" : "", sent, el,
	    (double)sent / el / 1e6, lost, (double)lag / 1e6);
	return 0;
}
