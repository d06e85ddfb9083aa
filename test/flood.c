/* SPDX-License-Identifier: MIT */
/* flood.c: a crowd of unauthenticated connections to mainmon, for
 * test/admission.sh.
 *
 *	flood HOST:PORT STOPFILE HOLD RING [hello]
 *
 * Opens HOLD connections that say nothing (with "hello": that send a
 * HELLO as a control client, then nothing) and keeps them; prints "held N"
 * once they are open (with "hello": once each has had its CHALLENGE).  Then, until STOPFILE exists, opens connections
 * of the same kind one after another as fast as it can, keeping the last
 * RING of them (closing its oldest when it opens one more; RING 0: none
 * opened).  At the end prints how many it opened and how many of the held
 * ones mainmon had closed.  Exit 0, or 2 on a usage or system error.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "net/auth.h"
#include "util/clock.h"
#include "wireio.h"

#define HOLD_MAX	1000
#define RING_MAX	256

/* Whether mainmon closed fd (its DENIED, if any, read and dropped). */
static int
closed(int fd)
{
	char buf[512];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n > 0)
			continue;
		return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
	}
}

static int
send_hello(int fd)
{
	unsigned char buf[WIRE_PREAUTH_MAX];
	struct wire_hello h;
	size_t len;

	memset(&h, 0, sizeof h);
	h.role = WIRE_ROLE_CTL;
	h.pid = (uint32_t)getpid();
	snprintf(h.host, sizeof h.host, "flood");
	if (auth_nonce(h.nonce) != 0 ||
	    (len = auth_hello_build(buf, sizeof buf, &h)) == 0)
		return -1;
	return wio_msg(fd, WIRE_HELLO, buf, len);
}

int
main(int argc, char **argv)
{
	static int held[HOLD_MAX], ring[RING_MAX];
	char host[256], *colon;
	unsigned port;
	long nhold, nring;
	unsigned long opened = 0, gone = 0, i, head = 0;
	struct stat st;
	uint64_t t0;
	int hello;

	hello = argc == 6;
	if (argc < 5 || argc > 6 || (hello && strcmp(argv[5], "hello") != 0)) {
		fprintf(stderr, "usage: flood HOST:PORT STOPFILE HOLD RING "
		    "[hello]\n");
		return 2;
	}
	snprintf(host, sizeof host, "%s", argv[1]);
	colon = strrchr(host, ':');
	nhold = atol(argv[3]);
	nring = atol(argv[4]);
	if (colon == NULL || nhold < 0 || nhold > HOLD_MAX || nring < 0 ||
	    nring > RING_MAX) {
		fprintf(stderr, "flood: bad arguments\n");
		return 2;
	}
	*colon = '\0';
	port = (unsigned)atoi(colon + 1);
	for (i = 0; i < (unsigned long)nhold; i++) {
		if ((held[i] = wio_dial(host, port)) == -1) {
			fprintf(stderr, "flood: connection %lu: %s\n", i,
			    strerror(errno));
			return 2;
		}
		if (hello && send_hello(held[i]) != 0) {
			fprintf(stderr, "flood: hello %lu failed\n", i);
			return 2;
		}
	}
	/* Held with a HELLO: each answered with a CHALLENGE (mainmon has
	 * taken them all in) before they are said held. */
	for (i = 0; hello && i < (unsigned long)nhold; i++) {
		unsigned char buf[WIRE_PREAUTH_MAX];
		uint16_t type;
		size_t len;

		if (wio_get(held[i], &type, buf, sizeof buf, &len, 30000) != 0 ||
		    type != WIRE_CHALLENGE) {
			fprintf(stderr, "flood: no CHALLENGE for hello %lu\n",
			    i);
			return 2;
		}
	}
	printf("held %ld\n", nhold);
	fflush(stdout);
	for (i = 0; i < (unsigned long)nring; i++)
		ring[i] = -1;
	t0 = clk_mono_ns();
	while (stat(argv[2], &st) != 0) {
		if (nring == 0) {
			poll(NULL, 0, 20);
			continue;
		}
		if (ring[head] != -1)
			close(ring[head]);
		ring[head] = wio_dial(host, port);
		if (ring[head] != -1)
			opened++;
		if (ring[head] != -1 && hello && send_hello(ring[head]) != 0) {
			close(ring[head]);
			ring[head] = -1;
		}
		head = (head + 1) % (unsigned long)nring;
	}
	for (i = 0; i < (unsigned long)nhold; i++) {
		gone += closed(held[i]);
		close(held[i]);
	}
	for (i = 0; i < (unsigned long)nring; i++)
		if (ring[i] != -1)
			close(ring[i]);
	printf("opened %lu in %.1f s; %lu of the %ld held were closed by "
	    "mainmon\n", opened, (double)(clk_mono_ns() - t0) / 1e9, gone,
	    nhold);
	return 0;
}
