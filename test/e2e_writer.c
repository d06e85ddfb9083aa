/* SPDX-License-Identifier: MIT */
/* e2e_writer.c: an instrumented test program: T threads emit N numbered
 * events each; halfway they stop, announce it, and wait to be let go.
 * With START_FILE, nothing is traced until that file exists.  Events the
 * library reports lost are counted and printed ("lost N seq M").  With
 * E2E_TAGGED in the environment, event 1 has another format (a string
 * more): another program using the same event id.  With E2E_PACE_US,
 * each thread sleeps that long after every 1000 events; with E2E_EVERY_US,
 * after every event (a slow writer).  Waiting costs
 * nothing: the threads block on a barrier, and the main thread on inotify
 * until the file it waits for is made (scale.sh runs 128 of them). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "grm.h"

#define EV_SEQ	1

static long nevents;
static int tagged;	/* E2E_TAGGED: event 1 has a third field */
static long pace_us;	/* E2E_PACE_US: pause after every 1000 events */
static long every_us;	/* E2E_EVERY_US: pause after every event */
static pthread_barrier_t half, go;

/* Events the library reported as lost (buffer full): all, and sequence
 * events only. */
static _Atomic long lost, lost_seq;

static void
check(int r, int is_seq)
{
	if (r == GRM_ELOST) {
		lost++;
		lost_seq += is_seq;
		return;
	}
	if (r != GRM_OK) {
		fprintf(stderr, "e2e_writer: GMI call failed: %d\n", r);
		exit(1);
	}
}

static void *
writer(void *arg)
{
	int idx = (int)(long)arg;
	long i;

	for (i = 0; i < nevents; i++) {
		if (i == nevents / 2) {
			pthread_barrier_wait(&half);
			pthread_barrier_wait(&go);
		}
		if (i % 1000 == 0 && i > 0 && pace_us > 0)
			usleep((useconds_t)pace_us);
		if (i % 1000 == 0)
			check(GMI_BlockBegin(idx), 0);
		check(tagged ? GMI_Event(EV_SEQ, idx, i, "tag") :
		    GMI_Event(EV_SEQ, idx, i), 1);
		if (i % 1000 == 999 || i == nevents - 1)
			check(GMI_BlockEnd(idx), 0);
		if (every_us > 0)
			usleep((useconds_t)every_us);
	}
	return NULL;
}

/* Returns once PATH exists: blocked on inotify, or where no inotify
 * instance is left (128 per user by default), looking every 10 ms. */
static void
wait_file(const char *path)
{
	char dir[PATH_MAX], buf[4096];
	int fd;

	if (access(path, F_OK) == 0)
		return;
	snprintf(dir, sizeof dir, "%s", path);
	fd = inotify_init1(IN_CLOEXEC);
	if (fd != -1 && inotify_add_watch(fd, dirname(dir),
	    IN_CREATE | IN_MOVED_TO | IN_ATTRIB) != -1) {
		/* Watched before this look: a file made since wakes us. */
		while (access(path, F_OK) != 0)
			if (read(fd, buf, sizeof buf) == -1 && errno != EINTR)
				break;
	}
	if (fd != -1)
		close(fd);
	while (access(path, F_OK) != 0)
		usleep(10000);
}

int
main(int argc, char **argv)
{
	pthread_t th[64];
	long nthreads, t;
	int fd;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: e2e_writer THREADS EVENTS HALF_FILE "
		    "GO_FILE [START_FILE]\n");
		return 2;
	}
	/* Many writers released at one instant: the first GMI call races. */
	if (argc == 6)
		wait_file(argv[5]);
	nthreads = atol(argv[1]);
	nevents = atol(argv[2]);
	if (nthreads < 1 || nthreads > 64 || nevents < 2)
		return 2;
	tagged = getenv("E2E_TAGGED") != NULL;
	if (getenv("E2E_PACE_US") != NULL)
		pace_us = atol(getenv("E2E_PACE_US"));
	if (getenv("E2E_EVERY_US") != NULL)
		every_us = atol(getenv("E2E_EVERY_US"));
	if (GMI_DefineEvent(EV_SEQ, tagged ? "thread %d seq %ld tag %s" :
	    "thread %d seq %ld", "sequence") != GRM_OK)
		return 1;
	for (t = 0; t < nthreads; t++)
		GMI_DefineBlock((int)t, t == 0 ? "work0" : "work");
	pthread_barrier_init(&half, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&go, NULL, (unsigned)nthreads + 1);
	for (t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	pthread_barrier_wait(&half);
	fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd == -1)
		return 1;
	close(fd);
	wait_file(argv[4]);
	pthread_barrier_wait(&go);
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	if (lost > 0)
		printf("lost %ld seq %ld\n", (long)lost, (long)lost_seq);
	return 0;
}
