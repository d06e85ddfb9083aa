/* SPDX-License-Identifier: MIT */
/* truewriter.c: a traced program whose every event carries the true time
 * of the machine, for checking a host's clock model when the host's clock
 * is not the machine's (libfaketime: test/clockdrift.sh, bench/).
 *
 *	truewriter EVENTS EVERY_US [STOP_FILE]
 *
 * Emits EVENTS events of type 1, "true %lu seq %ld prev %lu host %lu
 * mid %lu", every EVERY_US microseconds (or until STOP_FILE exists):
 *	true	the machine's CLOCK_MONOTONIC read by a raw system call
 *		(libfaketime interposes on the C library's clock_gettime,
 *		not on the system call) just before the event, whose own
 *		timestamp the library reads from the host's (faked) clock;
 *	prev	how long (ns) the previous event took, from its true read
 *		to a raw read after it (its timestamp was read in between);
 *	host	the host's clock, read between two raw reads whose middle
 *		is mid: the true offset of the host's clock.
 * Should an event take longer than APART_NS (the thread preempted), and
 * after the last one, an event of type 2, "seq %ld apart %lu", says how
 * long.  With TRUEWRITER_FT_FILE, the host's clock changes before event
 * TRUEWRITER_FT_AT (libfaketime reads its setting from that file,
 * FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1): to the rate
 * TRUEWRITER_FT_RATE (its x) from then on, without a jump (libfaketime
 * applies a rate from its start, which the writer measures first: the
 * offset makes up for it), or by a step of TRUEWRITER_FT_STEP seconds
 * (its offset).  Exits 0, 1 if a call
 * failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* FAKETIME_TIMESTAMP_FILE's setting becomes line; 0 or -1. */
static int
ft_set(const char *line)
{
	const char *f = getenv("TRUEWRITER_FT_FILE");
	char tmp[4096];
	FILE *fp;

	snprintf(tmp, sizeof tmp, "%s.new", f);
	if ((fp = fopen(tmp, "w")) == NULL)
		return -1;
	if (fputs(line, fp) == EOF || fclose(fp) != 0 || rename(tmp, f) != 0)
		return -1;
	return 0;
}

/* The host's clock less the true one, now. */
static int64_t
host_ahead(void)
{
	uint64_t a, h, c;

	a = true_ns();
	h = host_ns();
	c = true_ns();
	return (int64_t)(h - (a + (c - a) / 2));
}

/*
 * The true time from which libfaketime applies a rate: its start, shared
 * by the processes under one wrapper (the first of them to start, which
 * may be well before main() in a slow build).  At rate 2 the host's clock
 * gains on its lead at rate 1 by the time since that start.  Read before
 * any other process reads the clock (the LM starts with the first call of
 * the library): rate 1 again after, with no trace of it.
 */
static int
ft_start(uint64_t *start)
{
	int64_t x1, x2;

	x1 = host_ahead();
	if (ft_set("+0 x2\n") != 0)
		return -1;
	x2 = host_ahead();
	if (ft_set("+0 x1\n") != 0)
		return -1;
	*start = true_ns() - (uint64_t)(x2 - x1);
	return 0;
}

/* The change of the host's clock (the top of the file); 0 or -1. */
static int
ft_change(uint64_t start)
{
	const char *rate = getenv("TRUEWRITER_FT_RATE");
	const char *step = getenv("TRUEWRITER_FT_STEP");
	char buf[128];

	if (rate != NULL)
		snprintf(buf, sizeof buf, "%+.9f x%s\n", -(atof(rate) - 1.0) *
		    (double)(true_ns() - start) / 1e9, rate);
	else if (step != NULL)
		snprintf(buf, sizeof buf, "%s x1\n", step);
	else
		return -1;
	return ft_set(buf);
}

int
main(int argc, char **argv)
{
	const char *ft = getenv("TRUEWRITER_FT_FILE");
	const char *ft_at = getenv("TRUEWRITER_FT_AT");
	uint64_t start = 0;
	struct timespec d;
	uint64_t a, c, h, r1, r2, prev = 0;
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
	if (ft != NULL && ft_start(&start) != 0) {
		fprintf(stderr, "truewriter: cannot change %s\n", ft);
		return 1;
	}
	if (GMI_DefineEvent(EV_TRUE, "true %lu seq %ld prev %lu host %lu "
	    "mid %lu", "true time") != GRM_OK ||
	    GMI_DefineEvent(EV_APART, "seq %ld apart %lu",
	    "true time unsure") != GRM_OK)
		return 1;
	d.tv_sec = every / 1000000;
	d.tv_nsec = every % 1000000 * 1000;
	for (i = 0; i < n; i++) {
		if (argc == 4 && access(argv[3], F_OK) == 0)
			break;
		if (ft != NULL && ft_at != NULL && i == atol(ft_at) &&
		    ft_change(start) != 0) {
			fprintf(stderr, "truewriter: cannot change %s\n", ft);
			return 1;
		}
		a = true_ns();
		h = host_ns();
		c = true_ns();
		r1 = true_ns();
		if (GMI_Event(EV_TRUE, (unsigned long)r1, i, (unsigned long)prev,
		    (unsigned long)h, (unsigned long)(a + (c - a) / 2)) !=
		    GRM_OK)
			return 1;
		r2 = true_ns();
		prev = r2 - r1;
		if ((prev > APART_NS || i == n - 1) &&
		    GMI_Event(EV_APART, i, (unsigned long)prev) != GRM_OK)
			return 1;
		if (every > 0)
			nanosleep(&d, NULL);
	}
	return 0;
}
