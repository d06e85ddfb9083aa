/* SPDX-License-Identifier: MIT */
/* bench_event.c: the per-event cost of GMI_Event with two integers, for one
 * thread and for several writing at once, with a string argument, and
 * with the type switched off from outside (grmctl disable), and with a
 * monitoring plan watching another type, then this one (a comparison
 * that never holds, then one that always does, then a rate); prints
 * figures, asserts nothing. */
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "bench.h"
#include "grm.h"

#define BATCH	10000

static long nbatches = 200;
static pthread_barrier_t start;
static int use_string;		/* event 2: an int and a 16-byte string */

extern char **environ;

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
		if (use_string) {
			for (i = 0; i < BATCH; i++)
				if (GMI_Event(2, (int)i, "sixteen bytes...") !=
				    GRM_OK)
					r->lost++;
		} else {
			for (i = 0; i < BATCH; i++)
				if (GMI_Event(1, (int)i, (int)b) != GRM_OK)
					r->lost++;
		}
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
measure(const char *what0, int nthreads)
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
	snprintf(what, sizeof what, "%s, %d thread%s:", what0,
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

/* Runs GRMCTL $GRM_MM WORD ARG; returns its exit status. */
static int
grmctl(const char *prog, const char *word, const char *arg)
{
	char *argv[5];
	pid_t pid;
	int st;

	argv[0] = (char *)prog;
	argv[1] = getenv("GRM_MM");
	argv[2] = (char *)word;
	argv[3] = (char *)arg;
	argv[4] = NULL;
	if (argv[1] == NULL || posix_spawn(&pid, prog, NULL, NULL, argv,
	    environ) != 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int
main(int argc, char **argv)
{
	const char *ctl = NULL;
	int c, threads = 2;

	while ((c = getopt(argc, argv, "b:t:x:")) != -1) {
		switch (c) {
		case 'b':
			nbatches = atol(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'x':
			ctl = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench_event [-b BATCHES] "
			    "[-t THREADS] [-x GRMCTL]\n");
			return 2;
		}
	}
	if (nbatches < 1 || threads < 1 || threads > 16)
		return 2;
	if (GMI_DefineEvent(1, "%d %d", "bench") != GRM_OK ||
	    GMI_DefineEvent(2, "%d %s", "bench string") != GRM_OK)
		return 1;
	printf("tracing: %s; batches of %d events\n",
	    GMI_Traced() ? "on" : "off (GRM_MM not set)", BATCH);
	clock_cost();
	measure("GMI_Event(2 ints)", 1);
	if (threads > 1)
		measure("GMI_Event(2 ints)", threads);
	if (!GMI_Traced())
		return 0;
	use_string = 1;
	measure("GMI_Event(int, 16-byte string)", 1);
	use_string = 0;
	/* Switched off from outside: the type's check in the library. */
	if (ctl != NULL) {
		if (grmctl(ctl, "disable", "1") != 0) {
			fprintf(stderr, "bench_event: grmctl disable failed\n");
			return 1;
		}
		measure("GMI_Event, type disabled by grmctl", 1);
		if (grmctl(ctl, "enable", "1") != 0)
			return 1;
		/* Plans (doc/plans.md 7): rule 1 watches another type,
		 * rule 2 this one with a comparison that never holds (the
		 * check's cost), rule 3 one that always does (the firing
		 * slot taken, or a miss counted). */
		if (grmctl(ctl, "plan", "add when event 2 where $1 < 0 do "
		    "mark") != 0)
			return 1;
		measure("GMI_Event, another type watched", 1);
		if (grmctl(ctl, "plan", "add when event 1 where $2 > "
		    "1000000000 do mark") != 0)
			return 1;
		measure("GMI_Event, watched, never matching", 1);
		measure("GMI_Event, watched, never matching", threads);
		if (grmctl(ctl, "plan", "add when event 1 where $2 >= 0 do "
		    "mark") != 0)
			return 1;
		measure("GMI_Event, watched, always matching", 1);
		measure("GMI_Event, watched, always matching", threads);
		if (grmctl(ctl, "plan", "del 1") != 0 ||
		    grmctl(ctl, "plan", "del 2") != 0 ||
		    grmctl(ctl, "plan", "del 3") != 0)
			return 1;
		/* A rate over the host: counted in the thread, added to the
		 * row's shared count every 64 records. */
		if (grmctl(ctl, "plan", "add when rate 1 > 1000G/s do "
		    "mark") != 0)
			return 1;
		measure("GMI_Event, watched by a rate", 1);
		measure("GMI_Event, watched by a rate", threads);
		if (grmctl(ctl, "plan", "del 4") != 0)
			return 1;
	}
	return 0;
}
