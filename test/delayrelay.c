/* SPDX-License-Identifier: MIT */
/* delayrelay.c: a TCP relay that delays one direction, standing in for a slow
 * or asymmetric link where tc netem is not available (clocksync.sh).
 *   delayrelay LISTEN_ADDR TARGET_ADDR TARGET_PORT DELAY_MS
 * listens on LISTEN_ADDR (port chosen, printed on stdout), and for each
 * connection forwards to the target at once, and back from the target
 * DELAY_MS later (the target's answers arrive late: for mainmon, its pings
 * reach the LM late). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC	16

struct chunk {
	uint64_t	due;
	size_t		len;
	struct chunk	*next;
	char		data[];
};

struct pair {
	int		cl, tg;
	struct chunk	*q, **qt;	/* target -> client, delayed */
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
writeall(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void
drop(struct pair *p)
{
	struct chunk *c, *n;

	close(p->cl);
	close(p->tg);
	for (c = p->q; c != NULL; c = n) {
		n = c->next;
		free(c);
	}
	p->cl = p->tg = -1;
	p->q = NULL;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in la = { .sin_family = AF_INET }, ta = la;
	socklen_t len = sizeof la;
	struct pair pr[MAXC];
	struct pollfd pf[1 + 2 * MAXC];
	uint64_t delay;
	char buf[65536];
	int ls, i, one = 1;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &la.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &ta.sin_addr) != 1) {
		fprintf(stderr, "usage: delayrelay LISTEN_ADDR TARGET_ADDR "
		    "TARGET_PORT DELAY_MS\n");
		return 2;
	}
	ta.sin_port = htons((uint16_t)atoi(argv[3]));
	delay = (uint64_t)atoi(argv[4]);
	if ((ls = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(ls, (struct sockaddr *)&la, sizeof la) != 0 ||
	    listen(ls, 8) != 0 ||
	    getsockname(ls, (struct sockaddr *)&la, &len) != 0) {
		perror("delayrelay");
		return 1;
	}
	printf("%u\n", ntohs(la.sin_port));
	fflush(stdout);
	for (i = 0; i < MAXC; i++)
		pr[i].cl = pr[i].tg = -1, pr[i].q = NULL;
	for (;;) {
		uint64_t t = now_ms(), next = UINT64_MAX;
		int n = 1, timeout;

		/* What is due goes out. */
		for (i = 0; i < MAXC; i++) {
			struct chunk *c;

			while (pr[i].cl >= 0 && (c = pr[i].q) != NULL &&
			    c->due <= t) {
				if (writeall(pr[i].cl, c->data, c->len) != 0) {
					drop(&pr[i]);
					break;
				}
				if ((pr[i].q = c->next) == NULL)
					pr[i].qt = &pr[i].q;
				free(c);
			}
			if (pr[i].cl >= 0 && pr[i].q != NULL &&
			    pr[i].q->due < next)
				next = pr[i].q->due;
		}
		pf[0] = (struct pollfd){ ls, POLLIN, 0 };
		for (i = 0; i < MAXC; i++) {
			pf[1 + 2 * i] = (struct pollfd){ pr[i].cl, POLLIN, 0 };
			pf[2 + 2 * i] = (struct pollfd){ pr[i].tg, POLLIN, 0 };
			n += 2;
		}
		timeout = next == UINT64_MAX ? -1 : (int)(next - t) + 1;
		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return 1;
		if (pf[0].revents & POLLIN) {
			int cl = accept(ls, NULL, NULL), tg;

			for (i = 0; i < MAXC && pr[i].cl >= 0; i++)
				continue;
			if (cl >= 0 && i < MAXC &&
			    (tg = socket(AF_INET, SOCK_STREAM, 0)) >= 0) {
				if (connect(tg, (struct sockaddr *)&ta,
				    sizeof ta) != 0) {
					close(tg);
					close(cl);
				} else {
					setsockopt(cl, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof one);
					setsockopt(tg, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof one);
					pr[i].cl = cl;
					pr[i].tg = tg;
					pr[i].q = NULL;
					pr[i].qt = &pr[i].q;
				}
			} else if (cl >= 0)
				close(cl);
		}
		for (i = 0; i < MAXC; i++) {
			ssize_t r;

			if (pr[i].cl < 0)
				continue;
			if (pf[1 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) {
				r = read(pr[i].cl, buf, sizeof buf);
				if (r <= 0 || writeall(pr[i].tg, buf,
				    (size_t)r) != 0) {
					drop(&pr[i]);
					continue;
				}
			}
			if (pf[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) {
				struct chunk *c;

				r = read(pr[i].tg, buf, sizeof buf);
				if (r <= 0 || (c = malloc(sizeof *c +
				    (size_t)r)) == NULL) {
					drop(&pr[i]);
					continue;
				}
				c->due = now_ms() + delay;
				c->len = (size_t)r;
				c->next = NULL;
				memcpy(c->data, buf, (size_t)r);
				*pr[i].qt = c;
				pr[i].qt = &c->next;
			}
		}
	}
}
