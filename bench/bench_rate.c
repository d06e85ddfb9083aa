/* SPDX-License-Identifier: MIT */
/* bench_rate.c: sustained event rate.  THREADS threads emit RATE events
 * per second in all, for SECS seconds, paced in steps of STEP ms (-p,
 * default 1; coarser for many writers on few cores), into a live
 * mainmon; prints the rate achieved, the events the library reported lost,
 * and how far the writers fell behind their schedule.  Asserts nothing.
 * With -y READY and -g GO (bench/scale.sh: many writers started together),
 * it creates READY once the data path is up and waits for GO to exist
 * before it starts timing. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "grm.h"

static double rate = 1e6, secs = 10;
static int nthreads = 1;
static uint64_t step_ns = 1000000;	/* -p: the pacing step */
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

/* Creates path (empty); returns 0 or -1. */
static int
touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd == -1)
		return -1;
	close(fd);
	return 0;
}

static void *
run(void *arg)
{
	struct result *r = arg;
	double per_step = rate / nthreads * (double)step_ns / 1e9, due = 0;
	uint64_t t0, step, now, at;
	long i, n, total;

	total = (long)(rate / nthreads * secs);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (step = 1; r->sent < total; step++) {
		due += per_step;
		n = (long)due - r->sent;
		if (n > total - r->sent)
			n = total - r->sent;
		for (i = 0; i < n; i++)
			if (GMI_Event(1, (int)i, r->sent + i) != GRM_OK)
				r->lost++;
		r->sent += n;
		now = now_ns();
		at = t0 + step * step_ns;
		if (now > at) {
			if (now - at > r->lag_ns)
				r->lag_ns = now - at;
		} else
			sleep_until(at);
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
	const char *ready = NULL, *go = NULL;
	double el;
	int c, t, i;

	while ((c = getopt(argc, argv, "g:p:r:s:t:y:")) != -1) {
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
		case 'y':
			ready = optarg;
			break;
		case 'g':
			go = optarg;
			break;
		case 'p':
			step_ns = (uint64_t)(atof(optarg) * 1e6);
			break;
		default:
			fprintf(stderr, "usage: bench_rate [-r EVENTS_PER_S] "
			    "[-s SECONDS] [-t THREADS] [-p STEP_MS] "
			    "[-y READY_FILE] [-g GO_FILE]\n");
			return 2;
		}
	}
	if (rate < 1000 || secs <= 0 || nthreads < 1 || nthreads > 16 ||
	    step_ns < 100000 || step_ns > 1000000000)
		return 2;
	if (GMI_DefineEvent(1, "%d %ld", "rate") != GRM_OK)
		return 1;
	/* The sustained rate, not the start: wait until the data path is
	 * up (the Local Monitor connected to mainmon and synchronised; until
	 * then a flush answers that the data is kept). */
	for (i = 0; i < 50 && GMI_Flush() != GRM_OK; i++)
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	if (i == 50)
		fprintf(stderr, "bench_rate: the first flush did not reach "
		    "mainmon\n");
	if (ready != NULL && touch(ready) != 0) {
		perror(ready);
		return 1;
	}
	while (go != NULL && access(go, F_OK) != 0)
		usleep(1000);
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
