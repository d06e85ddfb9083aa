/* msgpair.c: two traced processes on different "hosts" exchanging messages
 * through a FIFO, for the causality check (clocksync.sh).
 *   msgpair send RANK FIFO PEER N: N times, a message send to PEER (tag 7),
 *     then a line into FIFO, then 3 ms of sleep (so that the receiver
 *     keeps up: each message takes about 1 ms);
 *   msgpair recv RANK FIFO PEER N: N times, reads a line, waits 1 ms (so
 *     that the true order is clear whatever the clocks), then a message
 *     receive from PEER.
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
	FILE *f;
	char line[32];
	int rank, peer, send, i, n;

	if ((argc != 6 && argc != 7) || (strcmp(argv[1], "send") != 0 &&
	    strcmp(argv[1], "recv") != 0)) {
		fprintf(stderr, "usage: msgpair send|recv RANK FIFO PEER N [GO]\n");
		return 2;
	}
	send = strcmp(argv[1], "send") == 0;
	rank = atoi(argv[2]);
	peer = atoi(argv[4]);
	n = atoi(argv[5]);
	if (GMI_SetName(rank, send ? "sender" : "receiver") != GRM_OK) {
		fprintf(stderr, "msgpair: not traced\n");
		return 1;
	}
	for (i = 0; argc == 7 && access(argv[6], F_OK) != 0; i++) {
		if (i == 3000) {
			fprintf(stderr, "msgpair: no %s\n", argv[6]);
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	if ((f = fopen(argv[3], send ? "w" : "r")) == NULL) {
		perror(argv[3]);
		return 1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	for (i = 0; i < n; i++) {
		if (send) {
			GMI_MessageSend(peer, 7, 8);
			fprintf(f, "%d\n", i);
			nanosleep(&(struct timespec){ 0, 3000000 }, NULL);
		} else {
			if (fgets(line, sizeof line, f) == NULL) {
				fprintf(stderr, "msgpair: sender gone at %d\n",
				    i);
				return 1;
			}
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			GMI_MessageRecv(peer, 7, 8);
		}
	}
	fclose(f);
	if ((i = GMI_Flush()) != GRM_OK) {
		fprintf(stderr, "msgpair: flush: %d\n", i);
		return 1;
	}
	return 0;
}
