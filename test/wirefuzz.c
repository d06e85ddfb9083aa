/* SPDX-License-Identifier: MIT */
/* wirefuzz.c: a hostile wire peer for test/wire_hostile.sh and
 * test/auth.sh.  As a client, it does one bad thing to a mainmon and says
 * whether, and how soon, mainmon closed the connection; as a server, it
 * plays a main monitor that does not know the token, or relays to a real
 * one and records the bytes.
 *
 *	wirefuzz HOST:PORT[:TOKEN] MODE [ARG]
 *
 * Modes (a client unless said; TOKEN only for "proved"):
 *	garbage SEED	random bytes (64 KiB), then waits for the close
 *	huge		a header announcing more than WIRE_MAX bytes
 *	big		a header announcing 1 MiB before the handshake
 *	truncated	half a HELLO, then our end closed
 *	badhello	a whole HELLO message of role 4 (none)
 *	wrongtoken	the handshake with a proof made with another token:
 *			prints the DENIED code and text
 *	proved SEED	the whole handshake (as a control client), then
 *			random bytes
 *	silent N	N connections that say nothing; prints how many were
 *			closed by mainmon and after how long
 *	hellonly	a HELLO, then nothing (stopped mid-handshake)
 *	hello short|long  a HELLO one byte shorter than its rule allows
 *			(wire.h), or a right one and a byte; mainmon must
 *			close the connection sending nothing (no CHALLENGE)
 *	auth short|long	 the same with the proof, after a right HELLO: no
 *			WELCOME, no DENIED
 *	ctl short|long	 the same with a CTL ("status"), after the whole
 *			handshake as a control client (TOKEN): no CTL_REPLY
 *	impostor PORTFILE  listens on HOST (port 0; the port is written to
 *			PORTFILE), takes one connection, answers its HELLO
 *			with a CHALLENGE and its proof with a WELCOME whose
 *			proof is wrong, and prints what came after it
 *	mute PORTFILE SECONDS  listens on HOST (port 0, written to
 *			PORTFILE) and takes connections, answering none, for
 *			SECONDS
 *	relay PORTFILE CAPTURE SECONDS  a relay on 127.0.0.1 (port 0,
 *			written to PORTFILE) to HOST:PORT that appends every
 *			byte going either way to CAPTURE, so that a test can
 *			look for the token in what crossed the network; it
 *			runs SECONDS, then exits 0
 *	badmm PORTFILE CASE...  a main monitor that knows TOKEN, on HOST
 *			(port 0, written to PORTFILE), for a real localmon:
 *			for each CASE, TYPE:short or TYPE:long, it takes a
 *			connection, goes as far as TYPE is expected (the
 *			handshake, READY, a PING answered) and sends TYPE one
 *			byte shorter than its rule allows, or a right one and
 *			a byte; the LM must close the connection sending
 *			nothing more (no PONG to a PING, no STATUS_REPLY to a
 *			STATUS, ...).  Then it takes one more connection and
 *			checks that the LM still answers a PING.  Prints a
 *			line per case.
 *
 * Exit 0 if mainmon closed the connection(s) within 30 s (impostor: if
 * nothing but the end of the connection followed the WELCOME; badmm: if
 * the LM passed every case), 1 if not, 2 on a usage or system error.
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

#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "rec/rec.h"
#include "util/clock.h"
#include "wireio.h"

#define WAIT_MS	30000
#define MAXC	64		/* relay: connections in its life */

static char host[256];
static unsigned port;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A connection to the mainmon given, or -1. */
static int
dial(void)
{
	return wio_dial(host, port);
}

static int
put(int fd, const void *p, size_t n)
{
	return wio_put(fd, p, n);
}

static int
msg(int fd, uint16_t type, const void *p, size_t n)
{
	return wio_msg(fd, type, p, n);
}

static int
get_msg(int fd, uint16_t *type, unsigned char *buf, size_t cap, size_t *len)
{
	return wio_get(fd, type, buf, cap, len, WAIT_MS);
}

/* Waits for the peer to close fd (what it sends meanwhile is read and
 * dropped; with quiet, a byte of it makes the result -2).  Returns the
 * milliseconds it took, or -1. */
static long
wait_close_q(int fd, uint64_t t0, int quiet)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	char buf[4096];
	ssize_t r;

	for (;;) {
		int left = (int)(WAIT_MS - (long)(now_ms() - t0));

		if (left <= 0 || poll(&pf, 1, left) != 1)
			return -1;
		r = recv(fd, buf, sizeof buf, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return (long)(now_ms() - t0);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0 && quiet)
			return -2;
	}
}

static long
wait_close(int fd, uint64_t t0)
{
	return wait_close_q(fd, t0, 0);
}

static void
random_bytes(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	srand(seed);
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)rand();
}

static size_t
hello(unsigned char *buf, size_t cap, uint32_t role,
      unsigned char nonce[WIRE_NONCE])
{
	struct wire_hello h;

	memset(&h, 0, sizeof h);
	h.role = role;
	h.pid = (uint32_t)getpid();
	snprintf(h.host, sizeof h.host, "wirefuzz");
	if (auth_nonce(h.nonce) != 0)
		return 0;
	if (nonce != NULL)
		memcpy(nonce, h.nonce, WIRE_NONCE);
	return auth_hello_build(buf, cap, &h);
}

static int
report(long ms)
{
	if (ms == -2) {
		printf("answered the message instead of closing\n");
		return 1;
	}
	if (ms < 0) {
		printf("not closed within %d ms\n", WAIT_MS);
		return 1;
	}
	printf("closed after %ld ms\n", ms);
	return 0;
}

/*
 * Sends type with a right payload p[n] made one byte shorter than its
 * rule allows (wire.h), or (lng) one byte longer (p has room for it).
 * 0, or -1.
 */
static int
wrong_length(int fd, uint16_t type, unsigned char *p, size_t n, int lng)
{
	const struct wire_rule *r = wire_rule(type);

	if (lng) {
		p[n] = 0;
		return msg(fd, type, p, n + 1);
	}
	if (r == NULL || r->len == 0)
		return -1;
	return msg(fd, type, p, r->len - 1);
}

/* HELLO, CHALLENGE, AUTH with token; the reply's type into *type. */
static int
handshake(int fd, const unsigned char token[MMID_TOKEN_LEN],
	  uint16_t *type, unsigned char *buf, size_t cap, size_t *len)
{
	unsigned char hb[WIRE_PREAUTH_MAX], proof[WIRE_PROOF];
	size_t hl = hello(hb, sizeof hb, WIRE_ROLE_CTL, NULL);

	if (hl == 0 || msg(fd, WIRE_HELLO, hb, hl) != 0 ||
	    get_msg(fd, type, buf, cap, len) != 0 ||
	    *type != WIRE_CHALLENGE || *len != WIRE_NONCE)
		return -1;
	auth_proof(token, AUTH_PEER, hb, hl, buf, proof);
	if (msg(fd, WIRE_AUTH, proof, sizeof proof) != 0)
		return -1;
	return get_msg(fd, type, buf, cap, len);
}

/*
 * A listening socket on IPv4 address addr, port 0; the port chosen is
 * written to portfile.  Returns the socket or -1.
 */
static int
listener(const char *addr, const char *portfile)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	FILE *f;
	int l, one = 1;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l == -1)
		return -1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(l, 16) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0 ||
	    (f = fopen(portfile, "w")) == NULL) {
		close(l);
		return -1;
	}
	fprintf(f, "%u\n", ntohs(sa.sin_port));
	fclose(f);
	return l;
}

/*
 * relay PORTFILE CAPTURE SECONDS: takes connections on 127.0.0.1 (the port
 * chosen is written to PORTFILE), passes each to HOST:PORT, and appends
 * every byte going either way to CAPTURE, for SECONDS at most.
 */
static int
relay(const char *portfile, const char *capture, int secs)
{
	struct pollfd pf[1 + 2 * MAXC];
	int pair[2 * MAXC];	/* pf[1 + i] relays to pf[1 + pair[i]] */
	char buf[65536];
	time_t end;
	FILE *cap;
	ssize_t r;
	int l, n = 0, i, j, fd, up;

	end = time(NULL) + secs;
	cap = fopen(capture, "ab");
	if (cap == NULL || (l = listener("127.0.0.1", portfile)) == -1) {
		perror("wirefuzz: relay");
		return 2;
	}
	pf[0].fd = l;
	pf[0].events = POLLIN;
	while (time(NULL) < end) {
		if (poll(pf, (nfds_t)(1 + n), 200) < 0 && errno != EINTR)
			break;
		if ((pf[0].revents & POLLIN) && n + 2 <= 2 * MAXC &&
		    (fd = accept(l, NULL, NULL)) != -1) {
			if ((up = dial()) == -1) {
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

/* mute PORTFILE SECONDS: listens on HOST (port 0, written to PORTFILE),
 * takes connections and never answers, for SECONDS; prints how many came. */
static int
mute(const char *portfile, int secs)
{
	struct pollfd pf = { -1, POLLIN, 0 };
	int fds[MAXC], n = 0;
	time_t end = time(NULL) + secs;

	if ((pf.fd = listener(host, portfile)) == -1)
		return 2;
	while (time(NULL) < end)
		if (poll(&pf, 1, 200) == 1 && n < MAXC &&
		    (fds[n] = accept(pf.fd, NULL, NULL)) != -1)
			n++;
	printf("%d connections, none answered\n", n);
	while (n > 0)
		close(fds[--n]);
	return 0;
}

static int
impostor(const char *portfile)
{
	unsigned char buf[WIRE_PREAUTH_MAX], nonce[WIRE_NONCE], w[36];
	uint16_t type;
	size_t len;
	int l, fd;

	if ((l = listener(host, portfile)) == -1)
		return 2;
	fd = accept(l, NULL, NULL);
	if (fd == -1 || get_msg(fd, &type, buf, sizeof buf, &len) != 0 ||
	    type != WIRE_HELLO) {
		printf("no hello\n");
		return 1;
	}
	auth_nonce(nonce);
	if (msg(fd, WIRE_CHALLENGE, nonce, sizeof nonce) != 0 ||
	    get_msg(fd, &type, buf, sizeof buf, &len) != 0 ||
	    type != WIRE_AUTH) {
		printf("no proof\n");
		return 1;
	}
	/* A WELCOME with a proof that cannot be right, and a PING after
	 * it, as a real MM would send. */
	memset(w, 0, sizeof w);
	w[0] = 1;
	random_bytes(w + 4, WIRE_PROOF, (unsigned)getpid());
	msg(fd, WIRE_WELCOME, w, sizeof w);
	msg(fd, WIRE_PING, w, 8);
	if (get_msg(fd, &type, buf, sizeof buf, &len) == 0) {
		printf("after the WELCOME: message type %u\n", type);
		return 1;
	}
	printf("after the WELCOME: nothing, connection closed\n");
	return 0;
}

/* Reads messages until a PONG to t_mm (answers nothing); 0, or -1. */
static int
pong_to(int fd, uint64_t t_mm)
{
	static unsigned char buf[WIRE_MAX];
	struct wire_rd r;
	uint16_t type;
	size_t len;

	for (;;) {
		if (get_msg(fd, &type, buf, sizeof buf, &len) != 0)
			return -1;
		wire_rd_init(&r, buf, len);
		if (type == WIRE_PONG && wire_get_u64(&r) == t_mm)
			return 0;
	}
}

/* A right payload of type, one the MM sends once READY, into w. */
static int
ready_msg(uint16_t type, struct wire_wr *w)
{
	uint32_t i;

	switch (type) {
	case WIRE_COLLECT:
	case WIRE_PAUSE:
		wire_put_u32(w, 1);
		wire_put_u32(w, type == WIRE_PAUSE ? 1000 : 0);
		return 0;
	case WIRE_ACK:
	case WIRE_STATUS:
	case WIRE_RESUME:
		wire_put_u32(w, 1);
		return 0;
	case WIRE_PLAN:
		wire_put_u32(w, 1);	/* seq */
		wire_put_u32(w, 0);
		return 0;
	case WIRE_WRITTEN:
		wire_put_u32(w, 0);
		return 0;
	case WIRE_SIGNAL:
		wire_put_u32(w, 1);
		wire_put_u32(w, 1);
		wire_put_u32(w, WIRE_SIGNAL_CONT);
		return 0;
	case WIRE_CONTROL:
		wire_put_u32(w, 1);
		for (i = 0; i < 8; i++)
			wire_put_u32(w, 0);
		wire_put_str(w, "");
		wire_put_u32(w, REC_EID_BITS / 32);
		for (i = 0; i < REC_EID_BITS / 32; i++)
			wire_put_u32(w, 0);
		return 0;
	}
	return -1;
}

/*
 * One case of badmm on the LM's connection fd: type sent short or (lng)
 * long where it is expected (type 0: a right session, the LM must answer
 * a PING).  Returns 0 if the LM did as it should, else 1; 2 if fd is the
 * LM's fire link (HELLO role 3, made once it is ready: not a case).
 */
static int
badmm_case(int fd, const unsigned char token[MMID_TOKEN_LEN],
	   uint16_t type, int lng)
{
	static unsigned char big[WIRE_MAX];
	unsigned char hb[WIRE_PREAUTH_MAX], nonce[WIRE_NONCE], b[64];
	struct wire_wr w;
	uint16_t t;
	size_t hl, len;
	uint64_t t_mm;

	if (get_msg(fd, &t, hb, sizeof hb, &hl) != 0 || t != WIRE_HELLO)
		return 1;
	if (hl >= 4 && hb[0] == WIRE_ROLE_FIRE && hb[1] == 0)
		return 2;
	wire_wr_init(&w, b, sizeof b);
	if (type == WIRE_CHALLENGE || type == WIRE_DENIED) {
		wire_put_u32(&w, WIRE_DENIED_OTHER);
		wire_put_str(&w, "x");
		return wrong_length(fd, type, b, type == WIRE_DENIED ? w.len :
		    WIRE_NONCE, lng) != 0 || wait_close_q(fd, now_ms(), 1) < 0;
	}
	auth_nonce(nonce);
	if (msg(fd, WIRE_CHALLENGE, nonce, sizeof nonce) != 0 ||
	    get_msg(fd, &t, b, sizeof b, &len) != 0 || t != WIRE_AUTH)
		return 1;
	wire_put_u32(&w, 1);
	auth_proof(token, AUTH_MM, hb, hl, nonce, b + 4);
	if (type == WIRE_WELCOME)
		return wrong_length(fd, type, b, 4 + WIRE_PROOF, lng) != 0 ||
		    wait_close_q(fd, now_ms(), 1) < 0;
	if (msg(fd, WIRE_WELCOME, b, 4 + WIRE_PROOF) != 0)
		return 1;
	wire_wr_init(&w, b, sizeof b);
	wire_put_u64(&w, t_mm = clk_mono_ns());
	if (type == WIRE_PING || type == WIRE_READY)
		return wrong_length(fd, type, b, type == WIRE_PING ? 8 : 4,
		    lng) != 0 || wait_close_q(fd, now_ms(), 1) < 0;
	/* Ready, and whatever that makes the LM send is in. */
	wire_put_u32(&w, 0);
	if (msg(fd, WIRE_READY, b + 8, 4) != 0 ||
	    msg(fd, WIRE_PING, b, 8) != 0 || pong_to(fd, t_mm) != 0)
		return 1;
	if (type == 0)
		return 0;
	wire_wr_init(&w, big, sizeof big - 1);
	return ready_msg(type, &w) != 0 ||
	    wrong_length(fd, type, big, w.len, lng) != 0 ||
	    wait_close_q(fd, now_ms(), 1) < 0;
}

/* badmm PORTFILE CASE...: see the top of the file. */
static int
badmm(const unsigned char token[MMID_TOKEN_LEN], const char *portfile,
      char **cases, int ncases)
{
	char name[32], *kind;
	uint16_t type;
	int l, fd, i, bad = 0, r;

	if ((l = listener(host, portfile)) == -1)
		return 2;
	for (i = 0; i <= ncases; i++) {
		type = 0;
		kind = NULL;
		if (i < ncases) {
			snprintf(name, sizeof name, "%s", cases[i]);
			if ((kind = strchr(name, ':')) == NULL)
				return 2;
			*kind++ = '\0';
			for (type = 1; wire_rule(type) != NULL &&
			    strcmp(wire_type_name(type), name) != 0; type++)
				;
			if (wire_rule(type) == NULL)
				return 2;
		}
		do {
			fd = accept(l, NULL, NULL);
			if (fd == -1)
				return 2;
			r = badmm_case(fd, token, type, kind != NULL &&
			    kind[0] == 'l');
			close(fd);
		} while (r == 2);
		if (i < ncases)
			printf("%s %s: %s\n", name, kind, r == 0 ?
			    "closed, nothing answered" : "NOT closed, or answered");
		else
			printf("then a right session: %s\n", r == 0 ?
			    "the LM answers a PING" : "the LM DOES NOT serve");
		bad += r;
	}
	close(l);
	return bad == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	unsigned char *big, buf[WIRE_PREAUTH_MAX], h[WIRE_HDR];
	struct mmid id;
	const char *why, *mode;
	uint16_t type;
	size_t len;
	uint64_t t0;
	long ms, worst = 0;
	int fd, n, i, closed, *fds;

	if (argc < 3)
		goto usage;
	mode = argv[2];
	if (mmid_parse(argv[1], &id, &why) != 0) {
		/* HOST:PORT alone will do for most modes. */
		if (mmid_split(argv[1], host, sizeof host, &port) != 0)
			goto usage;
	} else {
		snprintf(host, sizeof host, "%s", id.host);
		port = id.port;
	}
	if (strcmp(mode, "impostor") == 0 && argc == 4) {
		if (mmid_split(argv[1], host, sizeof host, &port) != 0 &&
		    mmid_parse(argv[1], &id, &why) != 0)
			goto usage;
		return impostor(argv[3]);
	}
	if (strcmp(mode, "mute") == 0 && argc == 5)
		return mute(argv[3], atoi(argv[4]));
	if (strcmp(mode, "relay") == 0 && argc == 6)
		return relay(argv[3], argv[4], atoi(argv[5]));
	if (strcmp(mode, "badmm") == 0 && argc >= 4 && id.hex[0] != '\0')
		return badmm(id.token, argv[3], argv + 4, argc - 4);
	if (strcmp(mode, "silent") == 0 && argc == 4) {
		n = atoi(argv[3]);
		fds = calloc((size_t)n, sizeof *fds);
		if (fds == NULL)
			return 2;
		for (i = 0; i < n; i++)
			if ((fds[i] = dial()) == -1) {
				perror("wirefuzz: connect");
				return 2;
			}
		t0 = now_ms();
		for (closed = 0, i = 0; i < n; i++)
			if ((ms = wait_close(fds[i], t0)) >= 0) {
				closed++;
				worst = ms > worst ? ms : worst;
			}
		printf("%d of %d closed, the last after %ld ms\n", closed, n,
		    worst);
		for (i = 0; i < n; i++)
			close(fds[i]);
		free(fds);
		return closed == n ? 0 : 1;
	}
	fd = dial();
	if (fd == -1) {
		perror("wirefuzz: connect");
		return 2;
	}
	t0 = now_ms();
	if (strcmp(mode, "garbage") == 0 && argc == 4) {
		big = malloc(65536);
		random_bytes(big, 65536, (unsigned)atoi(argv[3]));
		put(fd, big, 65536);	/* may fail once mainmon closes */
		free(big);
	} else if (strcmp(mode, "huge") == 0) {
		wire_header(h, WIRE_HELLO, 0);
		memset(h + 8, 0xff, 4);
		put(fd, h, sizeof h);
	} else if (strcmp(mode, "big") == 0) {
		wire_header(h, WIRE_HELLO, 1u << 20);
		put(fd, h, sizeof h);
	} else if (strcmp(mode, "truncated") == 0) {
		len = hello(buf, sizeof buf, WIRE_ROLE_LM, NULL);
		wire_header(h, WIRE_HELLO, (uint32_t)len);
		put(fd, h, sizeof h);
		put(fd, buf, len / 2);
		shutdown(fd, SHUT_WR);
	} else if (strcmp(mode, "badhello") == 0) {
		len = hello(buf, sizeof buf, 4, NULL);
		msg(fd, WIRE_HELLO, buf, len);
	} else if (strcmp(mode, "hello") == 0 && argc == 4) {
		len = hello(buf, sizeof buf - 1, WIRE_ROLE_LM, NULL);
		if (wrong_length(fd, WIRE_HELLO, buf, len, argv[3][0] == 'l'))
			return 2;
		return report(wait_close_q(fd, t0, 1));
	} else if (strcmp(mode, "auth") == 0 && argc == 4) {
		unsigned char proof[WIRE_PROOF + 1] = { 0 };

		len = hello(buf, sizeof buf, WIRE_ROLE_LM, NULL);
		if (msg(fd, WIRE_HELLO, buf, len) != 0 ||
		    get_msg(fd, &type, buf, sizeof buf, &len) != 0 ||
		    type != WIRE_CHALLENGE ||
		    wrong_length(fd, WIRE_AUTH, proof, WIRE_PROOF,
		    argv[3][0] == 'l') != 0)
			return 2;
		return report(wait_close_q(fd, t0, 1));
	} else if (strcmp(mode, "ctl") == 0 && argc == 4) {
		struct wire_wr w;

		if (id.hex[0] == '\0' || handshake(fd, id.token, &type, buf,
		    sizeof buf, &len) != 0 || type != WIRE_WELCOME) {
			printf("handshake failed\n");
			return 1;
		}
		wire_wr_init(&w, buf, sizeof buf - 1);
		wire_put_str(&w, "status");
		if (wrong_length(fd, WIRE_CTL, buf, w.len, argv[3][0] == 'l'))
			return 2;
		return report(wait_close_q(fd, t0, 1));
	} else if (strcmp(mode, "hellonly") == 0) {
		len = hello(buf, sizeof buf, WIRE_ROLE_LM, NULL);
		msg(fd, WIRE_HELLO, buf, len);
	} else if (strcmp(mode, "wrongtoken") == 0) {
		struct wire_rd r;
		char text[256];

		mmid_token_parse("0123456789abcdef0123456789abcdef", &id);
		if (handshake(fd, id.token, &type, buf, sizeof buf, &len) != 0 ||
		    type != WIRE_DENIED) {
			printf("no DENIED\n");
			return 1;
		}
		wire_rd_init(&r, buf, len);
		n = (int)wire_get_u32(&r);
		wire_get_str(&r, text, sizeof text);
		printf("denied %d: %s\n", n, text);
	} else if (strcmp(mode, "proved") == 0 && argc == 4) {
		if (id.hex[0] == '\0' || handshake(fd, id.token, &type, buf,
		    sizeof buf, &len) != 0 || type != WIRE_WELCOME) {
			printf("handshake failed\n");
			return 1;
		}
		big = malloc(65536);
		random_bytes(big, 65536, (unsigned)atoi(argv[3]));
		put(fd, big, 65536);
		free(big);
	} else {
		close(fd);
		goto usage;
	}
	return report(wait_close(fd, t0));
usage:
	fprintf(stderr, "usage: wirefuzz HOST:PORT[:TOKEN] garbage SEED | huge "
	    "| big | truncated | badhello | wrongtoken | proved SEED | "
	    "silent N | hellonly | hello|auth|ctl short|long | "
	    "impostor PORTFILE | mute PORTFILE SECONDS | "
	    "relay PORTFILE CAPTURE SECONDS | badmm PORTFILE TYPE:short|long..."
	    "\n");
	return 2;
}
