/* relay.c: a TCP relay for test/auth.sh: takes connections on 127.0.0.1
 * (the port chosen is written to PORTFILE), passes each to HOST:PORT, and
 * appends every byte going either way to CAPTURE, so that the test can
 * look for the token in what crossed the network.
 *
 *	relay HOST:PORT PORTFILE CAPTURE SECONDS
 *
 * Runs SECONDS at most, then exits (0); 2 on a usage or system error.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "mmid.h"

#define MAXC	64

static int
dial(const char *host, unsigned port)
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

int
main(int argc, char **argv)
{
	struct pollfd pf[1 + 2 * MAXC];
	int pair[2 * MAXC];	/* pf[1 + i] relays to pf[1 + pair[i]] */
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	char host[256], buf[65536];
	unsigned port;
	time_t end;
	FILE *pfile, *cap;
	ssize_t r;
	int l, n = 0, i, j, fd, up, one = 1;

	if (argc != 5 || mmid_split(argv[1], host, sizeof host, &port) != 0) {
		fprintf(stderr, "usage: relay HOST:PORT PORTFILE CAPTURE "
		    "SECONDS\n");
		return 2;
	}
	end = time(NULL) + atoi(argv[4]);
	cap = fopen(argv[3], "ab");
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (cap == NULL || l == -1 ||
	    bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(l, 16) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0 ||
	    (pfile = fopen(argv[2], "w")) == NULL) {
		perror("relay");
		return 2;
	}
	fprintf(pfile, "%u\n", ntohs(sa.sin_port));
	fclose(pfile);
	pf[0].fd = l;
	pf[0].events = POLLIN;
	while (time(NULL) < end) {
		if (poll(pf, (nfds_t)(1 + n), 200) < 0 && errno != EINTR)
			break;
		if ((pf[0].revents & POLLIN) && n + 2 <= 2 * MAXC &&
		    (fd = accept(l, NULL, NULL)) != -1) {
			if ((up = dial(host, port)) == -1) {
				close(fd);
				continue;
			}
			pf[1 + n].fd = fd;
			pf[2 + n].fd = up;
			pf[1 + n].events = pf[2 + n].events = POLLIN;
			pair[n] = n + 1;
			pair[n + 1] = n;
			n += 2;
		}
		for (i = 0; i < n; i++) {
			if (pf[1 + i].fd < 0 ||
			    !(pf[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			j = pair[i];
			r = recv(pf[1 + i].fd, buf, sizeof buf, 0);
			if (r > 0) {
				fwrite(buf, 1, (size_t)r, cap);
				fflush(cap);
				if (pf[1 + j].fd >= 0 && send(pf[1 + j].fd, buf,
				    (size_t)r, MSG_NOSIGNAL) == r)
					continue;
			}
			/* One side is gone: close both. */
			close(pf[1 + i].fd);
			if (pf[1 + j].fd >= 0)
				close(pf[1 + j].fd);
			pf[1 + i].fd = pf[1 + j].fd = -1;
		}
	}
	fclose(cap);
	return 0;
}
