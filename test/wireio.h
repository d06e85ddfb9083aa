/* SPDX-License-Identifier: MIT */
/* wireio.h: blocking wire-protocol I/O for the test programs that play a
 * peer of mainmon (wirefuzz.c, fakelm.c). */
#ifndef GRM_TEST_WIREIO_H
#define GRM_TEST_WIREIO_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "net/wire.h"

/* A TCP connection to host:port, or -1. */
static inline int
wio_dial(const char *host, unsigned port)
{
	struct addrinfo hints, *ai;
	char ps[8];
	int fd;

	snprintf(ps, sizeof ps, "%u", port);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, ps, &hints, &ai) != 0)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd != -1 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Sends (wr) or receives exactly n bytes, waiting at most ms for each
 * part of what is received; 0, or -1 (closed, late, error). */
static inline int
wio_xfer(int fd, void *p, size_t n, int wr, int ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	char *c = p;
	ssize_t r;

	while (n > 0) {
		if (!wr && poll(&pf, 1, ms) != 1)
			return -1;
		r = wr ? send(fd, c, n, MSG_NOSIGNAL) : recv(fd, c, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static inline int
wio_put(int fd, const void *p, size_t n)
{
	return wio_xfer(fd, (void *)p, n, 1, 0);
}

/* One message of type with payload p[n]; 0 or -1. */
static inline int
wio_msg(int fd, uint16_t type, const void *p, size_t n)
{
	unsigned char h[WIRE_HDR];

	wire_header(h, type, (uint32_t)n);
	return wio_put(fd, h, sizeof h) != 0 ||
	    (n > 0 && wio_put(fd, p, n) != 0) ? -1 : 0;
}

/* One whole message into buf[cap], waiting at most ms for each part: its
 * type and length, or -1. */
static inline int
wio_get(int fd, uint16_t *type, unsigned char *buf, size_t cap, size_t *len,
	int ms)
{
	unsigned char h[WIRE_HDR];
	const char *why;
	uint32_t l;

	if (wio_xfer(fd, h, sizeof h, 0, ms) != 0 ||
	    wire_parse_header(h, type, &l, &why) != 0 || l > cap ||
	    wio_xfer(fd, buf, l, 0, ms) != 0)
		return -1;
	*len = l;
	return 0;
}

#endif /* GRM_TEST_WIREIO_H */
