/* SPDX-License-Identifier: MIT */
/* truewriter.c: a traced program whose every event carries the true time
 * of the machine, for checking a host's clock model when the host's clock
 * is not the machine's (libfaketime: test/clockdrift.sh, bench/).
 *
 *	truewriter EVENTS EVERY_US [STOP_FILE]
 *
 * Emits EVENTS events of type 1, "true %lu seq %ld host %lu", every
 * EVERY_US microseconds (or until STOP_FILE exists): the machine's
 * CLOCK_MONOTONIC read by a raw system call (libfaketime interposes on the
 * C library's clock_gettime, not on the system call) just before the
 * event, whose own timestamp the library reads from the host's (faked)
 * clock; and the host's clock, read just after the machine's (so the
 * true offset of the host's clock is known, to the time between).  Should the
 * two reads be far apart (the thread preempted), an event of type 2,
 * "seq %ld apart %lu", follows with how far (ns) apart the raw reads
 * around the event were: the truth is within that of the first.  Exits 0,
 * 1 if a call failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "grm.h"

#define EV_TRUE		1
#define EV_APART	2
#define APART_NS	2000u	/* reads further apart are reported */

/* The host's clock, as the library reads it. */
static uint64_t
host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
true_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	struct timespec d;
	uint64_t a, b, h;
	long n, every, i;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: truewriter EVENTS EVERY_US "
		    "[STOP_FILE]\n");
		return 2;
	}
	n = atol(argv[1]);
	every = atol(argv[2]);
	if (n < 1 || every < 0)
		return 2;
	if (GMI_DefineEvent(EV_TRUE, "true %lu seq %ld host %lu",
	    "true time") !=
	    GRM_OK || GMI_DefineEvent(EV_APART, "seq %ld apart %lu",
	    "true time unsure") != GRM_OK)
		return 1;
	d.tv_sec = every / 1000000;
	d.tv_nsec = every % 1000000 * 1000;
	for (i = 0; i < n; i++) {
		if (argc == 4 && access(argv[3], F_OK) == 0)
			break;
		a = true_ns();
		h = host_ns();
		if (GMI_Event(EV_TRUE, (unsigned long)a, i, (unsigned long)h) !=
		    GRM_OK)
			return 1;
		b = true_ns();
		if (b - a > APART_NS &&
		    GMI_Event(EV_APART, i, (unsigned long)(b - a)) != GRM_OK)
			return 1;
		if (every > 0)
			nanosleep(&d, NULL);
	}
	return 0;
}
