/* SPDX-License-Identifier: MIT */
/* ring.c: an instrumented example: P processes in a ring pass a token R
 * times over pipes; each also runs a helper thread doing background work. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "grm.h"

/* Event types and blocks of this program. */
enum { EV_TOKEN = 1, EV_WORK = 2 };
enum { B_RECV = 1, B_COMPUTE = 2, B_SEND = 3, B_BACKGROUND = 4 };

static int work_us = 500;
static volatile int done;

static void
spin_us(int us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L +
	    (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *
background(void *arg)
{
	int rank = *(int *)arg, n = 0;

	while (!done) {
		GMI_BlockBegin(B_BACKGROUND);
		spin_us(work_us / 4);
		GMI_Event(EV_WORK, rank, n, 0.25 * n);
		n++;
		GMI_BlockEnd(B_BACKGROUND);
		usleep((useconds_t)work_us);
	}
	return NULL;
}

static int
rw(int fd, int *v, int wr)
{
	ssize_t n;

	do
		n = wr ? write(fd, v, sizeof *v) : read(fd, v, sizeof *v);
	while (n == -1 && errno == EINTR);
	return n == (ssize_t)sizeof *v ? 0 : -1;
}

/* One member of the ring: receive from in, work, send to out. */
static int
member(int rank, int nprocs, int rounds, int in, int out)
{
	pthread_t th;
	int token = 0, r, next = (rank + 1) % nprocs;
	int prev = (rank + nprocs - 1) % nprocs;

	GMI_SetName(rank, "ring member");
	pthread_create(&th, NULL, background, &rank);
	if (rank == 0) {
		token = 1;
		GMI_MessageSend(next, 1, sizeof token);
		if (rw(out, &token, 1) != 0)
			return 1;
	}
	for (r = 0; r < rounds; r++) {
		GMI_BlockBegin(B_RECV);
		if (rw(in, &token, 0) != 0)
			break;
		GMI_MessageRecv(prev, 1, sizeof token);
		GMI_BlockEnd(B_RECV);
		GMI_Event(EV_TOKEN, token, rank, "hop");
		GMI_BlockBegin(B_COMPUTE);
		spin_us(work_us);
		GMI_BlockEnd(B_COMPUTE);
		if (rank == 0 && r == rounds - 1)
			break;	/* the token's last lap ends here */
		GMI_BlockBegin(B_SEND);
		token++;
		GMI_MessageSend(next, 1, sizeof token);
		if (rw(out, &token, 1) != 0)
			break;
		GMI_BlockEnd(B_SEND);
	}
	done = 1;
	pthread_join(th, NULL);
	return 0;
}

int
main(int argc, char **argv)
{
	int nprocs = 4, rounds = 200, c, i, st, rc = 0;
	int (*pipes)[2];
	pid_t *pids;

	while ((c = getopt(argc, argv, "p:r:w:")) != -1) {
		switch (c) {
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'w':
			work_us = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: ring [-p PROCS] [-r ROUNDS] "
			    "[-w WORK_US]\n");
			return 2;
		}
	}
	if (nprocs < 2 || nprocs > 256 || rounds < 1 || work_us < 0) {
		fprintf(stderr, "ring: need 2..256 processes, rounds >= 1\n");
		return 2;
	}
	/* Definitions made before fork are inherited by the children. */
	GMI_DefineEvent(EV_TOKEN, "token %d at rank %d: %s", "token");
	GMI_DefineEvent(EV_WORK, "rank %d item %u load %f", "work item");
	GMI_DefineBlock(B_RECV, "recv");
	GMI_DefineBlock(B_COMPUTE, "compute");
	GMI_DefineBlock(B_SEND, "send");
	GMI_DefineBlock(B_BACKGROUND, "background");

	pipes = calloc((size_t)nprocs, sizeof *pipes);
	pids = calloc((size_t)nprocs, sizeof *pids);
	if (pipes == NULL || pids == NULL)
		return 1;
	for (i = 0; i < nprocs; i++)
		if (pipe(pipes[i]) != 0) {
			perror("ring: pipe");
			return 1;
		}
	/* Member i reads pipe i and writes pipe (i+1) % n; rank 0 is us. */
	for (i = 1; i < nprocs; i++) {
		pids[i] = fork();
		if (pids[i] == -1) {
			perror("ring: fork");
			return 1;
		}
		if (pids[i] == 0) {
			int j, in = pipes[i][0], out = pipes[(i + 1) % nprocs][1];

			for (j = 0; j < nprocs; j++) {
				if (pipes[j][0] != in)
					close(pipes[j][0]);
				if (pipes[j][1] != out)
					close(pipes[j][1]);
			}
			_exit(member(i, nprocs, rounds, in, out));
		}
	}
	for (i = 0; i < nprocs; i++) {
		if (i != 0)
			close(pipes[i][0]);
		if (i != 1)
			close(pipes[i][1]);
	}
	rc = member(0, nprocs, rounds, pipes[0][0], pipes[1][1]);
	close(pipes[1][1]);
	for (i = 1; i < nprocs; i++)
		if (waitpid(pids[i], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = 1;
	printf("ring: %d processes, %d rounds done\n", nprocs, rounds);
	free(pipes);
	free(pids);
	return rc;
}
