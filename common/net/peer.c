/* SPDX-License-Identifier: MIT */
/* peer.c: libevent bufferevents carrying framed wire messages. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "net/auth.h"
#include "net/local.h"
#include "net/mmid.h"
#include "net/peer.h"
#include "net/txstamp.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* The most one read or write system call moves. */
#define PEER_IO_MAX	(1u << 20)
/* What a peer reads ahead of its messages at most (the read high
 * watermark). */
#define PEER_READ_HIGH	((size_t)4 * WIRE_MAX)
/* How long before their read bytes may have arrived, at most, for their
 * kernel receive time to be believed (peer_rx_time). */
#define PEER_STAMP_MAX	1000000000u
/* A transmit stamp's age on the real-time clock is taken as up to 1 /
 * this longer on the monotonic one (500 ppm, the largest drift of a
 * host's clock mainmon believes: mm_sync.h). */
#define PEER_RATE_DIV	2000u

struct peer {
	struct bufferevent	*bev;
	peer_dispatch_fn	dispatch;
	void			*arg;
	void			(*flushed)(struct peer *, void *);
	uint32_t		max;		/* longest message taken */
	int			dead;
	int			broken;		/* died of bad framing */
	int			silent;		/* died of silence */
	int			in_dispatch;
	int			freed;
	int			local;		/* through a local door */
	char			name[128];
	/* Liveness (peer_set_liveness): 0 seconds, none. */
	unsigned		live_secs;
	struct event		*live_ev;
	uint64_t		last_rx;	/* ns: bytes last arrived */
	/* The kernel's CLOCK_REALTIME stamp of the latest bytes read
	 * (SO_TIMESTAMPNS), 0 if unknown (peer_rx_time). */
	uint64_t		rx_stamp;
	/* Bytes peer_poll read and left for the read callback it
	 * triggered (0: none): their stamp stands until more are read. */
	size_t			polled_left;
	uint64_t		last_tick;	/* ns: the watchdog last ran */
	uint64_t		(*clock)(void);	/* peer_set_clock; NULL: mono */
	/* Transmit stamps of clock messages (peer_send_clock,
	 * peer_tx_time): tx_on 1 once switched on, -1 if refused. */
	int			tx_on;
	int			tx_wait;	/* its stamp wanted, not read */
	/* A stamped send's stamp not read yet (tx_key), wanted or not: the
	 * kernel may queue it long after (its bytes behind others), and an
	 * error queue left holding it wakes the loop at once, every time. */
	int			tx_pending;
	uint32_t		tx_bytes;	/* written since on, mod 2^32 */
	uint32_t		tx_key;		/* its last byte's count */
	uint64_t		tx_user;	/* the clock read before it */
	uint64_t		tx_time;	/* its stamp, mono ns; 0 none */
	uint64_t		tx_age;		/* how old when converted */
	struct event		*err_ev;	/* drains while tx_pending */
	struct evbuffer_iovec	resv;		/* peer_reserve's, till commit */
	size_t			resv_max;
};

static void peer_tx_drain(struct peer *p);
static void peer_out_cb(struct evbuffer *b,
			const struct evbuffer_cb_info *info, void *arg);

void
peer_keep_memory(void)
{
#ifdef M_TRIM_THRESHOLD
	/* Up to 64 MiB free at the top of the heap stays; buffers up to
	 * 8 MiB (the most a peer reads ahead) come from the heap, not from
	 * mappings of their own. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
#endif
}

static void
peer_die(struct peer *p, const char *why)
{
	if (p->dead)
		return;
	p->dead = 1;
	bufferevent_disable(p->bev, EV_READ | EV_WRITE);
	p->dispatch(p, 0, NULL, why, p->arg);
}

static void
peer_destroy(struct peer *p)
{
	if (p->live_ev != NULL)
		event_free(p->live_ev);
	if (p->err_ev != NULL)
		event_free(p->err_ev);
	bufferevent_free(p->bev);
	free(p);
}

/*
 * libevent reads one byte a call (peer_alloc; at most 4 KiB whatever it is
 * told, EVBUFFER_MAX_READ), the byte that woke it up.  What more the socket
 * holds is read here in one recvmsg of up to PEER_IO_MAX, with the
 * kernel's receive time of the last of it (rx_stamp; last_rx: after
 * it).  Only bytes the
 * kernel says are queued (FIONREAD) are asked for, so this read never
 * takes an end of file or a socket error: those stay for libevent's next
 * read, which reports them as before.  Past the read high watermark
 * nothing more is read (the sender waits, as with libevent's reads).
 */
static void
peer_read_more(struct peer *p, struct evbuffer *in, int keep)
{
	struct evbuffer_iovec v;
	evutil_socket_t fd = bufferevent_getfd(p->bev);
	size_t have = evbuffer_get_length(in), want;
	ssize_t n;
	int q = 0;

	/* Unless read here, the last bytes were libevent's: their arrival
	 * is known by the time they were read only (but for the bytes
	 * peer_poll read, keep: their stamp). */
	if (!keep)
		p->rx_stamp = 0;
	if (p->dead || fd < 0 || have >= PEER_READ_HIGH ||
	    ioctl(fd, FIONREAD, &q) != 0 || q <= 0)
		return;
	want = (size_t)q;
	if (want > PEER_IO_MAX)
		want = PEER_IO_MAX;
	if (want > PEER_READ_HIGH - have)
		want = PEER_READ_HIGH - have;
	/* The bufferevent keeps its input's end frozen between its own
	 * reads: thawed for this one, as it does. */
	evbuffer_unfreeze(in, 0);
	if (evbuffer_reserve_space(in, (ev_ssize_t)want, &v, 1) == 1) {
		struct iovec io = { v.iov_base, want };
		struct msghdr mh;
		struct cmsghdr *cm;
		union {
			struct cmsghdr	h;
			/* And a SCM_TIMESTAMPING (three timespecs) once
			 * transmit stamps are on (peer_tx_on). */
			char		b[CMSG_SPACE(sizeof(struct timespec)) +
			    CMSG_SPACE(3 * sizeof(struct timespec))];
		} cb;

		memset(&mh, 0, sizeof mh);
		mh.msg_iov = &io;
		mh.msg_iovlen = 1;
		mh.msg_control = cb.b;
		mh.msg_controllen = sizeof cb.b;
		do
			n = recvmsg(fd, &mh, 0);
		while (n < 0 && errno == EINTR);
		v.iov_len = n > 0 ? (size_t)n : 0;
		evbuffer_commit_space(in, &v, n > 0 ? 1 : 0);
		/* When the bytes were read: never before they arrived;
		 * and when the last of them arrived, by the kernel (a
		 * clock exchange is timed by it). */
		if (n > 0) {
			p->last_rx = clk_mono_ns();
			p->rx_stamp = 0;
			for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
			    cm = CMSG_NXTHDR(&mh, cm))
				if (cm->cmsg_level == SOL_SOCKET &&
				    cm->cmsg_type == SCM_TIMESTAMPNS) {
					struct timespec ts;

					memcpy(&ts, CMSG_DATA(cm), sizeof ts);
					p->rx_stamp = (uint64_t)ts.tv_sec *
					    1000000000u + (uint64_t)ts.tv_nsec;
				}
		}
	}
	evbuffer_freeze(in, 0);
}

/* Asks the kernel for receive timestamps on fd (peer_rx_time). */
static void
peer_sock_stamps(int fd)
{
	int one = 1;

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

/*
 * peer_poll: whole messages of p's input (after reading what the socket
 * holds) handed to fn while it takes them.  Never p's death: a message
 * not taken, its framing bad or not, stays for the read callback.
 */
int
peer_poll(struct peer *p, peer_take_fn fn, void *arg)
{
	struct evbuffer *in;
	unsigned char hdr[WIRE_HDR], *body;
	struct wire_rd rd;
	const char *why;
	uint16_t type;
	uint32_t len;
	int n = 0;

	if (p->dead || p->freed || p->in_dispatch)
		return 0;
	in = bufferevent_get_input(p->bev);
	peer_read_more(p, in, p->polled_left != 0);
	p->in_dispatch = 1;
	while (!p->freed && evbuffer_get_length(in) >= WIRE_HDR) {
		evbuffer_copyout(in, hdr, WIRE_HDR);
		if (wire_parse_header(hdr, &type, &len, &why) != 0 ||
		    len > p->max ||
		    evbuffer_get_length(in) < WIRE_HDR + (size_t)len)
			break;
		body = evbuffer_pullup(in, WIRE_HDR + (ev_ssize_t)len);
		if (body == NULL)
			break;
		wire_rd_init(&rd, body + WIRE_HDR, len);
		if (!fn(p, type, &rd, arg))
			break;
		evbuffer_drain(in, WIRE_HDR + (size_t)len);
		n++;
	}
	p->in_dispatch = 0;
	if (p->freed) {
		peer_destroy(p);
		return n;
	}
	/* What is left waits for no more bytes: the dispatch runs soon. */
	p->polled_left = evbuffer_get_length(in);
	if (p->polled_left > 0)
		bufferevent_trigger(p->bev, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
	return n;
}

static void
peer_read_cb(struct bufferevent *bev, void *arg)
{
	struct peer *p = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char hdr[WIRE_HDR], *body;
	struct wire_rd rd;
	const char *why;
	uint16_t type;
	uint32_t len;
	int polled;

	/* Called for what peer_poll left (libevent read nothing more):
	 * those bytes' arrival stands. */
	polled = p->polled_left != 0 &&
	    evbuffer_get_length(in) == p->polled_left;
	p->polled_left = 0;
	if (!polled)
		p->last_rx = clk_mono_ns();
	peer_read_more(p, in, polled);
	if (p->tx_on > 0)
		peer_tx_drain(p);
	p->in_dispatch = 1;
	while (!p->dead && !p->freed &&
	    evbuffer_get_length(in) >= WIRE_HDR) {
		evbuffer_copyout(in, hdr, WIRE_HDR);
		if (wire_parse_header(hdr, &type, &len, &why) != 0 ||
		    (len > p->max && (why = "message too long") != NULL)) {
			p->broken = 1;
			peer_die(p, why);
			break;
		}
		if (evbuffer_get_length(in) < WIRE_HDR + (size_t)len)
			break;
		evbuffer_drain(in, WIRE_HDR);
		body = evbuffer_pullup(in, len);
		if (body == NULL && len > 0) {
			peer_die(p, "out of memory");
			break;
		}
		wire_rd_init(&rd, body, len);
		p->dispatch(p, type, &rd, NULL, p->arg);
		if (!p->freed)
			evbuffer_drain(in, len);
	}
	p->in_dispatch = 0;
	if (p->freed)
		peer_destroy(p);
}

static void
peer_write_cb(struct bufferevent *bev, void *arg)
{
	struct peer *p = arg;
	void (*fn)(struct peer *, void *) = p->flushed;

	(void)bev;
	if (fn != NULL) {
		p->flushed = NULL;
		fn(p, p->arg);
	}
}

/* The kernel's part: keepalive probes every second after one idle
 * second, and unacknowledged data given up after secs. */
static void
peer_sock_liveness(int fd, unsigned secs)
{
	int one = 1, idle = 1, intvl = 1, cnt = (int)secs;
	unsigned ms = secs * 1000u;

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

/* Bytes from the peer not read yet: in the socket, or read ahead. */
static int
peer_unread(struct peer *p)
{
	int n = 0, fd = bufferevent_getfd(p->bev);

	if (evbuffer_get_length(bufferevent_get_input(p->bev)) > 0)
		return 1;
	return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/*
 * The application's part, every quarter of the bound: nothing received
 * for the bound kills the peer.  A watchdog that itself ran late (this
 * process was stopped, or its loop busy or starved) first gives the peer
 * a whole bound again if the peer's bytes wait unread: the silence was
 * ours.  With nothing waiting, a late watchdog judges as usual, so that
 * a loop kept busy (a spill under load) still notices a hung peer.
 */
static void
peer_live_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer *p = arg;
	uint64_t now = clk_mono_ns(), bound;
	char why[80];

	(void)fd;
	(void)what;
	bound = (uint64_t)p->live_secs * 1000000000u;
	if (now - p->last_tick > bound / 2 && peer_unread(p))
		p->last_rx = now;
	p->last_tick = now;
	if (p->dead || now - p->last_rx < bound)
		return;
	snprintf(why, sizeof why, "silent for %u s", p->live_secs);
	p->silent = 1;
	peer_die(p, why);
}

static void
peer_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct peer *p = arg;
	char why[160];
	size_t left;
	int fd, one = 1;

	if (what & BEV_EVENT_CONNECTED) {
		fd = bufferevent_getfd(bev);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		peer_sock_stamps(fd);
		if (p->live_secs > 0)
			peer_sock_liveness(fd, p->live_secs);
		return;
	}
	left = evbuffer_get_length(bufferevent_get_input(bev));
	if ((what & BEV_EVENT_EOF) && left > 0) {
		/* A message cut short: the sender broke the framing. */
		p->broken = 1;
		snprintf(why, sizeof why, "connection closed in the middle of "
		    "a message (%zu bytes of it)", left);
	} else if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof why, "connection closed");
	else {
		int err = EVUTIL_SOCKET_ERROR();

		/* The kernel's part of the liveness check gave up first
		 * (TCP_USER_TIMEOUT, keepalive): the same silence. */
		if (err == ETIMEDOUT && p->live_secs > 0)
			p->silent = 1;
		snprintf(why, sizeof why, "%s", strerror(err));
	}
	peer_die(p, why);
}

static struct peer *
peer_alloc(struct event_base *base, int fd, peer_dispatch_fn dispatch,
	   void *arg, const char *name)
{
	struct peer *p;

	p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	p->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (p->bev == NULL) {
		free(p);
		return NULL;
	}
	p->dispatch = dispatch;
	p->arg = arg;
	/* A connection accepted on mainmon's local door is one too. */
	p->local = fd >= 0 && local_is(fd);
	p->max = WIRE_MAX;
	p->last_rx = clk_mono_ns();
	snprintf(p->name, sizeof p->name, "%s", name);
	bufferevent_setcb(p->bev, peer_read_cb, peer_write_cb, peer_event_cb,
	    p);
	bufferevent_setwatermark(p->bev, EV_READ, 0, PEER_READ_HIGH);
	/* Trace data moves in messages of up to a chunk (64 KiB by
	 * default): libevent's 16 KiB per write would cost four system
	 * calls per message. */
	bufferevent_set_max_single_write(p->bev, PEER_IO_MAX);
	/* Reads, though, are peer_read_more's, which takes the kernel's
	 * receive time with the bytes (libevent's read cannot): libevent's
	 * own takes one byte, the one that woke it up. */
	bufferevent_set_max_single_read(p->bev, 1);
	peer_sock_stamps(fd);
	bufferevent_enable(p->bev, EV_READ | EV_WRITE);
	return p;
}

struct peer *
peer_new(struct event_base *base, int fd, peer_dispatch_fn dispatch,
	 void *arg, const char *name)
{
	int one = 1;

	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return peer_alloc(base, fd, dispatch, arg, name);
}

struct peer *
peer_connect(struct event_base *base, const char *hostport,
	     peer_dispatch_fn dispatch, void *arg, const char **why)
{
	struct evutil_addrinfo hints, *ai = NULL;
	char host[256], portstr[8];
	const char *lwhy;
	unsigned port;
	struct peer *p;
	int err, fd = -1, local = 0;

	if (mmid_split(hostport, host, sizeof host, &port) != 0) {
		*why = "not of the form host:port";
		return NULL;
	}
	snprintf(portstr, sizeof portstr, "%u", port);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	err = evutil_getaddrinfo(host, portstr, &hints, &ai);
	if (err != 0 || ai == NULL) {
		*why = "cannot resolve host";
		return NULL;
	}
	(void)env_choice(ENV_MM_LINK, &local);
	if (local == 0)
		log_debug("%s: by TCP", hostport);
	else if ((fd = local_connect(ai->ai_addr, &lwhy)) < 0)
		log_debug("%s: by TCP (%s)", hostport, lwhy);
	p = peer_alloc(base, fd, dispatch, arg, hostport);
	if (p == NULL) {
		if (fd >= 0)
			close(fd);
		evutil_freeaddrinfo(ai);
		*why = "out of memory";
		return NULL;
	}
	if (fd >= 0)
		log_debug("%s: through its local door", hostport);
	else if (bufferevent_socket_connect(p->bev, ai->ai_addr,
	    (int)ai->ai_addrlen) != 0) {
		evutil_freeaddrinfo(ai);
		bufferevent_free(p->bev);
		free(p);
		*why = "cannot connect";
		return NULL;
	}
	evutil_freeaddrinfo(ai);
	return p;
}

int
peer_is_local(const struct peer *p)
{
	return p->local;
}

int
peer_set_liveness(struct peer *p, unsigned secs)
{
	struct timeval tv;
	uint64_t q;

	if (p->live_ev != NULL) {
		event_free(p->live_ev);
		p->live_ev = NULL;
	}
	p->live_secs = secs;
	if (secs == 0)
		return 0;
	if (!p->local)
		peer_sock_liveness(bufferevent_getfd(p->bev), secs);
	p->last_rx = p->last_tick = clk_mono_ns();
	p->live_ev = event_new(bufferevent_get_base(p->bev), -1, EV_PERSIST,
	    peer_live_cb, p);
	if (p->live_ev == NULL)
		return -1;
	q = (uint64_t)secs * 250000u;	/* µs: a quarter */
	tv.tv_sec = (time_t)(q / 1000000u);
	tv.tv_usec = (suseconds_t)(q % 1000000u);
	return event_add(p->live_ev, &tv);
}

int
peer_silent(const struct peer *p)
{
	return p->silent;
}

uint64_t
peer_last_rx(const struct peer *p)
{
	return p->last_rx;
}

/*
 * A kernel stamp (CLOCK_REALTIME ns) on CLOCK_MONOTONIC: its age by the
 * real-time clock, from now on the monotonic one (the two run at one
 * rate), into *age; the monotonic clock read after the real-time one if
 * `late` (the result is then not earlier than the truth), before it
 * otherwise (not later).  The real-time clock is read by a system call:
 * a library that fakes this process's clocks (tests under libfaketime)
 * fakes both, and their difference too.  0 if the stamp is in the future
 * or older than `max` (a clock set in the meantime).
 */
static uint64_t
peer_real_to_mono(uint64_t stamp, uint64_t max, int late, uint64_t *age)
{
	struct timespec ts;
	uint64_t real, mono = 0;

	if (!late)
		mono = clk_mono_ns();
	if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0)
		return 0;
	if (late)
		mono = clk_mono_ns();
	real = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (real < stamp || real - stamp > max || real - stamp > mono)
		return 0;
	*age = real - stamp;
	return mono - *age;
}

uint64_t
peer_rx_time(const struct peer *p)
{
	uint64_t mono, age, max;

	if (p->rx_stamp == 0)
		return p->last_rx;
	max = clk_mono_ns() - p->last_rx + PEER_STAMP_MAX;
	mono = peer_real_to_mono(p->rx_stamp, max, 1, &age);
	/* A clock set in the meantime: the read's time stands. */
	if (mono == 0 || mono > p->last_rx)
		return p->last_rx;
	return mono;
}

/* Reads p's error queue: the stamp of the last clock message, if
 * awaited and there. */
static void
peer_tx_drain(struct peer *p)
{
	evutil_socket_t fd = bufferevent_getfd(p->bev);
	uint64_t real = 0, t, age = 0;

	if (fd < 0 || !txs_drain(fd, p->tx_key, &real))
		goto out;
	p->tx_pending = 0;
	if (!p->tx_wait)
		goto out;
	p->tx_wait = 0;
	/* Not later than the truth: the monotonic clock read first, and
	 * the age taken as up to PEER_RATE_MAX longer on it (the two
	 * clocks of a process under libfaketime run at two rates).  Not
	 * before the clock read that preceded the send. */
	t = peer_real_to_mono(real, PEER_STAMP_MAX, 0, &age);
	t -= age / PEER_RATE_DIV + 1;
	if (t >= p->tx_user && t < UINT64_MAX / 2) {
		p->tx_time = t;
		p->tx_age = age;
	}
out:
	if (!p->tx_pending && p->err_ev != NULL)
		event_del(p->err_ev);
}

static void
peer_err_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	peer_tx_drain(arg);
}

/* Switches transmit stamps on for p's socket (once); 1 if on. */
static int
peer_tx_on(struct peer *p, int fd)
{
	if (p->tx_on != 0)
		return p->tx_on > 0;
	p->tx_on = -1;
	/* A Unix socket's sends are stamped by no device. */
	if (p->local || txs_enable(fd) != 0)
		return 0;
	p->err_ev = event_new(bufferevent_get_base(p->bev), fd,
	    EV_READ | EV_PERSIST, peer_err_cb, p);
	if (p->err_ev == NULL || evbuffer_add_cb(bufferevent_get_output(
	    p->bev), peer_out_cb, p) == NULL) {
		/* Stamps asked for by no send come never. */
		return 0;
	}
	p->tx_bytes = 0;
	p->tx_on = 1;
	return 1;
}

uint64_t
peer_tx_time(struct peer *p, uint64_t *age)
{
	if (p->tx_wait && !p->dead && !p->freed)
		peer_tx_drain(p);
	*age = p->tx_age;
	return p->tx_time;
}

void
peer_free(struct peer *p)
{
	if (p == NULL)
		return;
	if (p->in_dispatch) {
		p->freed = 1;
		bufferevent_disable(p->bev, EV_READ | EV_WRITE);
		if (p->live_ev != NULL)
			event_del(p->live_ev);
		return;
	}
	peer_destroy(p);
}

int
peer_send(struct peer *p, uint16_t type, const void *a, size_t alen,
	  const void *b, size_t blen)
{
	struct evbuffer *out;
	unsigned char hdr[WIRE_HDR];

	if (p->dead || p->freed || alen + blen > WIRE_MAX)
		return -1;
	out = bufferevent_get_output(p->bev);
	wire_header(hdr, type, (uint32_t)(alen + blen));
	if (evbuffer_add(out, hdr, sizeof hdr) != 0 ||
	    (alen > 0 && evbuffer_add(out, a, alen) != 0) ||
	    (blen > 0 && evbuffer_add(out, b, blen) != 0))
		return -1;
	return 0;
}

void *
peer_reserve(struct peer *p, size_t max)
{
	if (p->dead || p->freed || max > WIRE_MAX ||
	    evbuffer_reserve_space(bufferevent_get_output(p->bev),
	    (ev_ssize_t)(WIRE_HDR + max), &p->resv, 1) != 1)
		return NULL;
	p->resv_max = max;
	return (unsigned char *)p->resv.iov_base + WIRE_HDR;
}

int
peer_commit(struct peer *p, uint16_t type, size_t len)
{
	int r;

	if (p->dead || p->freed || p->resv.iov_base == NULL ||
	    len > p->resv_max)
		return -1;
	wire_header(p->resv.iov_base, type, (uint32_t)len);
	p->resv.iov_len = WIRE_HDR + len;
	r = evbuffer_commit_space(bufferevent_get_output(p->bev), &p->resv,
	    1);
	p->resv.iov_base = NULL;
	return r != 0 ? -1 : 0;
}

void
peer_set_clock(struct peer *p, uint64_t (*clock)(void))
{
	p->clock = clock;
}

/* Bytes libevent wrote (drained from the output): counted for the
 * transmit stamps' keys. */
static void
peer_out_cb(struct evbuffer *b, const struct evbuffer_cb_info *info,
	    void *arg)
{
	struct peer *p = arg;

	(void)b;
	p->tx_bytes += (uint32_t)info->n_deleted;
}

/* Writes framed message buf[len] to the socket now if nothing is queued
 * before it, and queues what it did not take; 0 or -1.  With stamp, the
 * write asks the kernel for a transmit stamp of its last byte
 * (peer_tx_time), when transmit stamps can be had. */
static int
send_or_queue(struct peer *p, const unsigned char *buf, size_t len,
	      int stamp)
{
	struct evbuffer *out = bufferevent_get_output(p->bev);
	evutil_socket_t fd = bufferevent_getfd(p->bev);
	ssize_t n = 0;

	if (evbuffer_get_length(out) == 0) {
		if (stamp && peer_tx_on(p, fd))
			n = txs_send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		else {
			stamp = 0;
			n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		/* An error is the connection's: its next write tells. */
		if (n < 0)
			n = 0;
		p->tx_bytes += (uint32_t)n;
		if (stamp && n > 0) {
			/* Its last byte's stamp: of the message's, or
			 * earlier (a part written), never later. */
			p->tx_key = p->tx_bytes - 1;
			p->tx_wait = 1;
			p->tx_pending = 1;
			peer_tx_drain(p);
			if (p->tx_pending && p->err_ev != NULL)
				event_add(p->err_ev, NULL);
		}
	}
	return (size_t)n == len ? 0 :
	    evbuffer_add(out, buf + n, len - (size_t)n);
}

int
peer_send_clock(struct peer *p, uint16_t type, const void *a, size_t alen,
		uint64_t *t)
{
	unsigned char buf[WIRE_HDR + 64 + 8];
	struct wire_wr w;

	if (p->dead || p->freed || alen > 64)
		return -1;
	wire_header(buf, type, (uint32_t)(alen + 8));
	if (alen > 0)
		memcpy(buf + WIRE_HDR, a, alen);
	wire_wr_init(&w, buf + WIRE_HDR + alen, 8);
	*t = p->clock != NULL ? p->clock() : clk_mono_ns();
	wire_put_u64(&w, *t);
	/* This message's stamp, or none: not an older one's. */
	p->tx_wait = 0;
	p->tx_time = 0;
	p->tx_age = 0;
	p->tx_user = *t;
	/* A stamp is on CLOCK_MONOTONIC, not another clock's. */
	return send_or_queue(p, buf, WIRE_HDR + alen + 8, p->clock == NULL);
}

int
peer_send_now(struct peer *p, uint16_t type, const void *a, size_t alen)
{
	unsigned char buf[WIRE_HDR + 64];

	if (p->dead || p->freed || alen > 64)
		return -1;
	wire_header(buf, type, (uint32_t)alen);
	if (alen > 0)
		memcpy(buf + WIRE_HDR, a, alen);
	return send_or_queue(p, buf, WIRE_HDR + alen, 0);
}

int
peer_fd(const struct peer *p)
{
	if (p == NULL || p->dead || p->freed)
		return -1;
	return (int)bufferevent_getfd(p->bev);
}

void
peer_stop_reading(struct peer *p)
{
	if (p != NULL && !p->dead && !p->freed)
		(void)bufferevent_disable(p->bev, EV_READ);
}

size_t
peer_take_input(struct peer *p, void *buf, size_t cap)
{
	struct evbuffer *in;
	size_t n;

	if (p == NULL || p->dead || p->freed)
		return 0;
	in = bufferevent_get_input(p->bev);
	if ((n = evbuffer_get_length(in)) > cap)
		return SIZE_MAX;
	if (n > 0 && evbuffer_remove(in, buf, n) != (int)n)
		return SIZE_MAX;
	return n;
}

void
peer_flush(struct peer *p)
{
	struct evbuffer *out;

	if (p->dead || p->freed)
		return;
	out = bufferevent_get_output(p->bev);
	if (evbuffer_get_length(out) == 0)
		return;
	/* The bufferevent keeps its output's start frozen between its own
	 * writes: thawed for this one, as it does.  An error is the
	 * connection's: its next write tells. */
	evbuffer_unfreeze(out, 1);
	(void)evbuffer_write_atmost(out, bufferevent_getfd(p->bev),
	    PEER_IO_MAX);
	evbuffer_freeze(out, 1);
}

int
peer_send_hello(struct peer *p, struct auth_client *a,
		const unsigned char token[MMID_TOKEN_LEN], uint32_t role,
		uint64_t seg_id)
{
	return peer_send_hello_as(p, a, token, role, seg_id, NULL);
}

int
peer_send_hello_as(struct peer *p, struct auth_client *a,
		   const unsigned char token[MMID_TOKEN_LEN], uint32_t role,
		   uint64_t seg_id, const char *host)
{
	struct wire_hello h;
	struct timespec ts;
	const char *env = host != NULL ? host : env_get(ENV_HOSTNAME);

	memset(&h, 0, sizeof h);
	if (env != NULL)
		snprintf(h.host, sizeof h.host, "%s", env);
	else if (gethostname(h.host, sizeof h.host) != 0)
		snprintf(h.host, sizeof h.host, "localhost");
	h.host[sizeof h.host - 1] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h.role = role;
	h.pid = (uint32_t)getpid();
	h.now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h.seg_id = seg_id;
	if (auth_client_start(a, token, &h) != 0)
		return -1;
	/* Until the MM has proved itself, it may send only short
	 * messages. */
	p->max = WIRE_PREAUTH_MAX;
	return peer_send(p, WIRE_HELLO, a->hello, a->hello_len, NULL, 0);
}

enum auth_result
peer_auth(struct peer *p, struct auth_client *a, uint16_t type,
	  struct wire_rd *msg, uint32_t *node, char *text, size_t textsz)
{
	unsigned char proof[WIRE_PROOF];
	enum auth_result r;

	r = auth_client_msg(a, type, msg, proof, node, text, textsz);
	if (r == AUTH_MORE &&
	    peer_send(p, WIRE_AUTH, proof, sizeof proof, NULL, 0) != 0)
		r = AUTH_BAD;
	if (r == AUTH_OK)
		p->max = WIRE_MAX;
	return r;
}

void
peer_set_max(struct peer *p, uint32_t max)
{
	p->max = max;
}

int
peer_broken(const struct peer *p)
{
	return p->broken;
}

int
peer_send_raw(struct peer *p, struct evbuffer *buf)
{
	if (p->dead || p->freed)
		return -1;
	return evbuffer_add_buffer(bufferevent_get_output(p->bev), buf);
}

int
peer_send_bytes(struct peer *p, const void *buf, size_t len)
{
	if (p->dead || p->freed)
		return -1;
	return evbuffer_add(bufferevent_get_output(p->bev), buf, len);
}

size_t
peer_pending(struct peer *p)
{
	return evbuffer_get_length(bufferevent_get_output(p->bev));
}

size_t
peer_input_left(const struct peer *p)
{
	if (p == NULL || p->dead || p->freed)
		return 0;
	return evbuffer_get_length(bufferevent_get_input(p->bev));
}

void
peer_on_flushed(struct peer *p, void (*fn)(struct peer *, void *))
{
	if (peer_pending(p) == 0) {
		fn(p, p->arg);
		return;
	}
	p->flushed = fn;
}

const char *
peer_name(const struct peer *p)
{
	return p->name;
}

void *
peer_arg(const struct peer *p)
{
	return p->arg;
}

size_t
peer_peek(struct peer *p, void *buf, size_t cap)
{
	struct evbuffer *in = bufferevent_get_input(p->bev);
	ssize_t n;

	if (p->dead)
		return 0;
	if (evbuffer_get_length(in) > 0) {
		n = evbuffer_copyout(in, buf, cap);
		return n > 0 ? (size_t)n : 0;
	}
	n = recv(bufferevent_getfd(p->bev), buf, cap, MSG_PEEK | MSG_DONTWAIT);
	return n > 0 ? (size_t)n : 0;
}

int
peer_heard(struct peer *p)
{
	char b;
	ssize_t n;

	if (p->dead)
		return -1;
	if (evbuffer_get_length(bufferevent_get_input(p->bev)) > 0)
		return 1;
	n = recv(bufferevent_getfd(p->bev), &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0)
		return 1;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return 0;
	return -1;
}
