/* SPDX-License-Identifier: MIT */
/* mkbin.c: writes a large synthetic binary trace fast, through mainmon's
 * trace writer (so with its summary sidecar unless -N): T processes of one
 * thread each, ranked, doing rounds of nested blocks, events and a
 * message to the next rank, in global time order.  For bench/serve.sh and
 * test/sidecar.sh: a 100-million-record trace in seconds, not minutes of a
 * traced program.  Prints the records written and the writer's CPU. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tape.h"

#define NODE	1
#define PID0	1000
#define T0	UINT64_C(1000000000000)

static unsigned char piece[4096];
static size_t plen;

static void
put(int32_t eid, uint64_t ts, const int64_t *slot, unsigned n)
{
	uint16_t len = (uint16_t)(16 + 8 * n);

	rec_put_hdr(piece + plen, len, 0, 0, eid, ts);
	memcpy(piece + plen + 16, slot, 8 * n);
	plen += len;
}

static int
flush(struct tape_w *w, uint32_t pid)
{
	int rc = plen == 0 ? 0 : tape_piece(w, NODE, pid, pid, piece, plen);

	plen = 0;
	return rc;
}

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	const char *out = NULL;
	long long want = 1000000;
	unsigned nt = 4, i, j;
	uint64_t ts, round = 0, c0, slot, step;
	struct tape_w *w;
	int64_t s[3];
	char name[32];
	int c, flags = 0;

	while ((c = getopt(argc, argv, "n:t:o:N")) != -1) {
		switch (c) {
		case 'n':
			want = atoll(optarg);
			break;
		case 't':
			nt = (unsigned)atoi(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'N':
			flags = TAPE_OPEN_NOIDX;
			break;
		default:
			goto usage;
		}
	}
	if (out == NULL || want <= 0 || nt < 2 || nt > 256) {
usage:
		fprintf(stderr, "usage: mkbin -o FILE [-n RECORDS] "
		    "[-t PROCESSES] [-N]\n  -N: no summary sidecar\n");
		return 2;
	}
	c0 = cpu_ns();
	if ((w = tape_open_fmt(out, TAPE_FMT_BIN | flags, "127.0.0.1:7000",
	    1, 2)) == NULL || tape_host(w, NODE, 0, 4242, "bench") != 0)
		goto fail;
	for (i = 0; i < REC_NPREDEF; i++)
		if (tape_def(w, rec_predef[i].eid, rec_predef[i].cls,
		    rec_predef[i].attr, rec_predef[i].format,
		    strlen(rec_predef[i].format), rec_predef[i].dsc,
		    strlen(rec_predef[i].dsc)) != 0)
			goto fail;
	if (tape_def(w, 1, REC_CLASS_USER, REC_ATTR_POINT, "%d %d", 5,
	    "step", 4) != 0)
		goto fail;
	for (i = 0; i < nt; i++) {
		if (tape_proc(w, NODE, PID0 + i, 1, TAPE_PROC_START, T0, 0,
		    "bench") != 0)
			goto fail;
	}
	/* Each round: every process in turn, 10 records 100 ns apart in
	 * its slot of the round, so the file is in time order. */
	step = 100;
	slot = 10 * step;
	for (i = 0; i < nt; i++) {
		int64_t rank = i;
		size_t n = (size_t)snprintf(name, sizeof name, "rank%u", i);

		/* PROC_NAME: rank, then a string slot (length, bytes). */
		rec_put_hdr(piece, (uint16_t)(16 + 8 + 8 + 8), 0, 0,
		    REC_EID_PROC_NAME, T0 + i);
		memcpy(piece + 16, &rank, 8);
		memset(piece + 24, 0, 16);
		{
			uint32_t l = (uint32_t)n;

			memcpy(piece + 24, &l, 4);	/* 4 + 7 bytes at most */
			memcpy(piece + 28, name, n);
		}
		plen = 40;
		if (flush(w, PID0 + i) != 0)
			goto fail;
	}
	while (tape_records(w) < (uint64_t)want) {
		for (i = 0; i < nt; i++) {
			ts = T0 + 1000 + round * nt * slot + i * slot;
			j = 0;
			s[0] = 1 + (int64_t)(round % 3);
			put(REC_EID_BLOCK_BEGIN, ts + step * j++, s, 1);
			s[0] = (int64_t)i;
			s[1] = (int64_t)round;
			put(1, ts + step * j++, s, 2);
			s[0] = 10;
			put(REC_EID_BLOCK_BEGIN, ts + step * j++, s, 1);
			put(REC_EID_BLOCK_END, ts + step * j++, s, 1);
			if (i + 1 < nt) {	/* to the next rank */
				s[0] = (int64_t)i + 1;
				s[1] = 7;
				s[2] = 1024;
				put(REC_EID_MSG_SEND, ts + step * j++, s, 3);
			}
			if (i > 0) {		/* from the one before */
				s[0] = (int64_t)i - 1;
				s[1] = 7;
				s[2] = 1024;
				put(REC_EID_MSG_RECV, ts + step * j++, s, 3);
			}
			s[0] = (int64_t)i;
			s[1] = (int64_t)round;
			put(1, ts + step * j++, s, 2);
			s[0] = 1 + (int64_t)(round % 3);
			put(REC_EID_BLOCK_END, ts + step * j++, s, 1);
			if (flush(w, PID0 + i) != 0)
				goto fail;
		}
		round++;
	}
	want = (long long)tape_records(w);
	if (tape_close(w) != 0) {
		w = NULL;
		goto fail;
	}
	printf("%llu records, %llu rounds of %u processes, %.2f s of CPU "
	    "(%.1f ns per record)\n", (unsigned long long)want,
	    (unsigned long long)round, nt, (double)(cpu_ns() - c0) / 1e9,
	    (double)(cpu_ns() - c0) / (double)want);
	return 0;
fail:
	fprintf(stderr, "mkbin: %s: %s\n", out, strerror(errno));
	if (w != NULL)
		tape_close(w);
	return 1;
}
