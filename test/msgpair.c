/* SPDX-License-Identifier: MIT */
/* msgpair.c: two traced processes on different "hosts" exchanging messages
 * through a pair of FIFOs, for the causality check (clocksync.sh).
 *   msgpair send RANK FIFO ACK PEER N: N times, a message send to PEER
 *     (tag 7), then a line into FIFO, then waits for the receiver's line
 *     on ACK;
 *   msgpair recv RANK FIFO ACK PEER N: N times, reads a line from FIFO,
 *     waits 1 ms (so that the true order is clear whatever the clocks),
 *     then a message receive from PEER, then a line into ACK.
 * In lock step, each receive comes 1 ms and a wake-up after its send,
 * however loaded the machine: a receiver that fell behind would make
 * every later message take longer (the check counts receives stamped
 * before their sends, through a clock known to within 50 ms).
 * Either waits for the file GO, if given, first (its LM ready). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grm.h"

int
main(int argc, char **argv)
{
	FILE *f, *ack;
	char line[32];
	int rank, peer, send, i, n;

	if ((argc != 7 && argc != 8) || (strcmp(argv[1], "send") != 0 &&
	    strcmp(argv[1], "recv") != 0)) {
		fprintf(stderr, "usage: msgpair send|recv RANK FIFO ACK PEER N "
		    "[GO]\n");
		return 2;
	}
	send = strcmp(argv[1], "send") == 0;
	rank = atoi(argv[2]);
	peer = atoi(argv[5]);
	n = atoi(argv[6]);
	if (GMI_SetName(rank, send ? "sender" : "receiver") != GRM_OK) {
		fprintf(stderr, "msgpair: not traced\n");
		return 1;
	}
	for (i = 0; argc == 8 && access(argv[7], F_OK) != 0; i++) {
		if (i == 3000) {
			fprintf(stderr, "msgpair: no %s\n", argv[7]);
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	/* Both open FIFO, then ACK: neither waits for the other forever. */
	if ((f = fopen(argv[3], send ? "w" : "r")) == NULL) {
		perror(argv[3]);
		return 1;
	}
	if ((ack = fopen(argv[4], send ? "r" : "w")) == NULL) {
		perror(argv[4]);
		return 1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	setvbuf(ack, NULL, _IOLBF, 0);
	for (i = 0; i < n; i++) {
		if (send) {
			GMI_MessageSend(peer, 7, 8);
			fprintf(f, "%d\n", i);
			if (fgets(line, sizeof line, ack) == NULL) {
				fprintf(stderr, "msgpair: receiver gone at "
				    "%d\n", i);
				return 1;
			}
		} else {
			if (fgets(line, sizeof line, f) == NULL) {
				fprintf(stderr, "msgpair: sender gone at %d\n",
				    i);
				return 1;
			}
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			GMI_MessageRecv(peer, 7, 8);
			fprintf(ack, "%d\n", i);
		}
	}
	fclose(ack);
	fclose(f);
	if ((i = GMI_Flush()) != GRM_OK) {
		fprintf(stderr, "msgpair: flush: %d\n", i);
		return 1;
	}
	return 0;
}
