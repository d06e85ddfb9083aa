/* SPDX-License-Identifier: MIT */
/* leaker.c: a program that leaks, for test/fire.sh: each step records
 * event 12 with its "stack depth" (growing by 1000 a step) and event 13
 * with the step's number (excess monitoring, off until a plan switches it
 * on), event 15 with the step's number (a tick), and every 500 steps
 * event 14, a checkpoint ("ckpt", the step).  It names itself rank 3.
 * "leaker STEPS PACE_US THREADS [GO]": every thread takes the steps, one
 * every PACE_US microseconds, once file GO exists.  Every 100 steps a
 * block "solve" (id 1) begins and ends, lasting 60 ms at step
 * LEAKER_SLOW (in the environment; no slow one without).  With
 * LEAKER_ABORT=K in
 * the environment, the first thread to take step K calls abort() (a crash
 * after some seconds of work).  With LEAKER_EXTRA=1, each step also
 * records event 16 with the step's number (more excess monitoring).
 * With LEAKER_GROW=G, the depth grows by G a step instead of 1000.
 * LEAKER_RANK=R names it rank R instead of 3; LEAKER_NAME=NAME makes
 * it attach under the program name NAME (a plan's `process` scope).
 * At its end it flushes (GMI_Flush), asking again while delivery was not
 * confirmed, 30 s at most: on a loaded machine one flush's 5 s can pass
 * while mainmon writes another program's flood; exit status 1 if never
 * confirmed. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <grm.h>

static long steps, pace_us, abort_at, slow_at, extra, grow = 1000;

static void *
run(void *arg)
{
	struct timespec ts;
	long i;

	(void)arg;
	ts.tv_sec = pace_us / 1000000;
	ts.tv_nsec = pace_us % 1000000 * 1000;
	for (i = 1; i <= steps; i++) {
		if (GMI_Event(12, i * grow) != GRM_OK ||
		    GMI_Event(13, (int)i) != GRM_OK ||
		    GMI_Event(15, (int)i) != GRM_OK ||
		    (extra && GMI_Event(16, (int)i) != GRM_OK) ||
		    (i % 500 == 0 && GMI_Event(14, "ckpt", (int)i) != GRM_OK)) {
			fprintf(stderr, "leaker: step %ld not recorded\n", i);
			exit(1);
		}
		if (i % 100 == 0) {
			struct timespec slow = { 0, 60000000 };

			GMI_BlockBegin(1);
			if (i == slow_at)
				nanosleep(&slow, NULL);
			GMI_BlockEnd(1);
		}
		if (i == abort_at)
			abort();
		if (pace_us > 0)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[16];
	struct timespec nap = { 0, 1000000 };
	long n = argc > 3 ? atol(argv[3]) : 0, k;

	if (argc < 4 || n < 1 || n > 16) {
		fprintf(stderr, "usage: leaker STEPS PACE_US THREADS [GO]\n");
		return 2;
	}
	steps = atol(argv[1]);
	abort_at = getenv("LEAKER_ABORT") != NULL ?
	    atol(getenv("LEAKER_ABORT")) : 0;
	slow_at = getenv("LEAKER_SLOW") != NULL ?
	    atol(getenv("LEAKER_SLOW")) : 0;
	if (getenv("LEAKER_GROW") != NULL)
		grow = atol(getenv("LEAKER_GROW"));
	extra = getenv("LEAKER_EXTRA") != NULL ?
	    atol(getenv("LEAKER_EXTRA")) : 0;
	pace_us = atol(argv[2]);
	/* Read by libgrm when it attaches, at the first GMI call. */
	if (getenv("LEAKER_NAME") != NULL)
		program_invocation_short_name = getenv("LEAKER_NAME");
	if (GMI_DefineEvent(12, "%ld", "stack depth") != GRM_OK ||
	    GMI_DefineEvent(13, "%d", "procedure step") != GRM_OK ||
	    GMI_DefineEvent(14, "%s %d", "checkpoint") != GRM_OK ||
	    GMI_DefineEvent(15, "%d", "tick") != GRM_OK ||
	    GMI_DefineEvent(16, "%d", "extra step") != GRM_OK ||
	    GMI_DefineBlock(1, "solve") != GRM_OK ||
	    GMI_SetName(getenv("LEAKER_RANK") != NULL ?
	    atoi(getenv("LEAKER_RANK")) : 3, "leaker") != GRM_OK)
		return 1;
	while (argc > 4 && access(argv[4], F_OK) != 0)
		nanosleep(&nap, NULL);
	for (k = 0; k < n; k++)
		if (pthread_create(&t[k], NULL, run, NULL) != 0)
			return 1;
	for (k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	for (k = 0; k < 6; k++)
		if (GMI_Flush() == GRM_OK)
			return 0;
	return 1;
}
