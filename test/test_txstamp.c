/* SPDX-License-Identifier: MIT */
/* test_txstamp.c: transmit timestamps (common/net/txstamp.c): an error
 * queue message is a stamp of the byte asked for or nothing (matching
 * by the byte count); and on a loopback TCP connection, the stamp of a
 * send comes with the count of the bytes written before it, never
 * before the send began; a peer drains a stamp that comes after the
 * message that asked for it stopped waiting for it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <event2/event.h>

#include "net/peer.h"
#include "net/txstamp.h"
#include "net/wire.h"

/* An error-queue message as the kernel writes one: the stamp (sec, ns)
 * and the extended error (origin, info, key). */
struct fake {
	union {
		struct cmsghdr	h;
		char		b[256];
	} cb;
	struct msghdr	mh;
};

static void
fake(struct fake *f, int with_ts, long sec, long ns, int level, int errn,
     int origin, int info, uint32_t key)
{
	struct cmsghdr *cm;
	struct scm_timestamping ts;
	struct sock_extended_err ee;
	size_t len = 0;

	memset(f, 0, sizeof *f);
	f->mh.msg_control = f->cb.b;
	f->mh.msg_controllen = sizeof f->cb.b;
	cm = CMSG_FIRSTHDR(&f->mh);
	if (with_ts) {
		memset(&ts, 0, sizeof ts);
		ts.ts[0].tv_sec = sec;
		ts.ts[0].tv_nsec = ns;
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SO_TIMESTAMPING;
		cm->cmsg_len = CMSG_LEN(sizeof ts);
		memcpy(CMSG_DATA(cm), &ts, sizeof ts);
		len += CMSG_SPACE(sizeof ts);
		cm = (struct cmsghdr *)(f->cb.b + len);
	}
	if (level >= 0) {
		memset(&ee, 0, sizeof ee);
		ee.ee_errno = (uint32_t)errn;
		ee.ee_origin = (uint8_t)origin;
		ee.ee_info = (uint32_t)info;
		ee.ee_data = key;
		cm->cmsg_level = level;
		cm->cmsg_type = level == SOL_IP ? IP_RECVERR : IPV6_RECVERR;
		cm->cmsg_len = CMSG_LEN(sizeof ee);
		memcpy(CMSG_DATA(cm), &ee, sizeof ee);
		len += CMSG_SPACE(sizeof ee);
	}
	f->mh.msg_controllen = len;
}

Test(txstamp, match)
{
	struct fake f;
	uint64_t r = 7;

	/* The byte asked for, IPv4 and IPv6. */
	fake(&f, 1, 12, 345, SOL_IP, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_SND, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 1);
	cr_assert_eq(r, 12000000345ull);
	fake(&f, 1, 1, 0, SOL_IPV6, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_SND, 0xffffffffu);
	cr_assert_eq(txs_match(&f.mh, 0xffffffffu, &r), 1);
	cr_assert_eq(r, 1000000000ull);
	/* Another byte's: an earlier send's, a later one's. */
	r = 7;
	cr_assert_eq(txs_match(&f.mh, 0xfffffffeu, &r), 0);
	cr_assert_eq(txs_match(&f.mh, 0, &r), 0);
	/* Another kind of stamp (the qdisc's, the peer's ACK). */
	fake(&f, 1, 12, 345, SOL_IP, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_SCHED, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	fake(&f, 1, 12, 345, SOL_IP, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_ACK, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	/* An error, not a stamp. */
	fake(&f, 1, 12, 345, SOL_IP, ECONNREFUSED, SO_EE_ORIGIN_ICMP, 0, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	/* A part missing; no software stamp (a hardware one only). */
	fake(&f, 0, 0, 0, SOL_IP, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_SND, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	fake(&f, 1, 12, 345, -1, 0, 0, 0, 0);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	fake(&f, 1, 0, 0, SOL_IP, ENOMSG, SO_EE_ORIGIN_TIMESTAMPING,
	    SCM_TSTAMP_SND, 99);
	cr_assert_eq(txs_match(&f.mh, 99, &r), 0);
	cr_assert_eq(r, 7);
}

static uint64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A connected loopback TCP pair. */
static void
pair(int *a, int *b)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int l, one = 1;

	cr_assert_neq(l = socket(AF_INET, SOCK_STREAM, 0), -1);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(l, (struct sockaddr *)&sa, sizeof sa), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
	cr_assert_neq(*a = socket(AF_INET, SOCK_STREAM, 0), -1);
	cr_assert_eq(connect(*a, (struct sockaddr *)&sa, sizeof sa), 0);
	cr_assert_neq(*b = accept(l, NULL, NULL), -1);
	setsockopt(*a, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
	close(l);
}

/* Waits (up to 5 s, no timing asserted) until fd's error queue holds
 * something; 0, or -1 if nothing came. */
static int
wait_err(int fd)
{
	struct pollfd pf = { fd, 0, 0 };

	return poll(&pf, 1, 5000) == 1 && (pf.revents & POLLERR) ? 0 : -1;
}

Test(txstamp, loopback)
{
	char buf[4096];
	uint64_t before, r = 0;
	int a, b, i;

	pair(&a, &b);
	/* Bytes before it is switched on count for nothing. */
	cr_assert_eq(send(a, "early", 5, 0), 5);
	if (txs_enable(a) != 0) {
		cr_log_warn("no transmit stamps on this kernel: skipped");
		return;
	}
	/* Bytes written without asking: counted, not stamped. */
	memset(buf, 'x', sizeof buf);
	cr_assert_eq(send(a, buf, 1000, 0), 1000);
	before = real_ns();
	cr_assert_eq(txs_send(a, buf, 24, 0), 24);
	cr_assert_eq(wait_err(a), 0);
	/* Its last byte is the 1024th since: count 1023. */
	cr_assert_eq(txs_drain(a, 1023, &r), 1);
	cr_assert_geq(r, before);
	cr_assert_leq(r, real_ns());
	/* Drained: nothing more. */
	cr_assert_eq(txs_drain(a, 1023, &r), 0);
	/* Another, after more plain bytes; an older key is not it. */
	cr_assert_eq(send(a, buf, 3000, 0), 3000);
	cr_assert_eq(txs_send(a, buf, 40, 0), 40);
	cr_assert_eq(wait_err(a), 0);
	cr_assert_eq(txs_drain(a, 1023, &r), 0);
	cr_assert_eq(txs_send(a, buf, 40, 0), 40);
	cr_assert_eq(wait_err(a), 0);
	cr_assert_eq(txs_drain(a, 1024 + 3000 + 40 + 40 - 1, &r), 1);
	/* The other end read nothing of the stamps. */
	for (i = 0; i < 5 + 1000 + 24 + 3000 + 80;) {
		ssize_t n = read(b, buf, sizeof buf);

		cr_assert_gt(n, 0);
		i += (int)n;
	}
	cr_assert_eq(i, 5 + 1000 + 24 + 3000 + 80);
	close(a);
	close(b);
}

/* Counts the messages read. */
static void
count(struct peer *p, uint16_t type, struct wire_rd *msg, const char *why,
      void *arg)
{
	(void)p;
	(void)type;
	(void)msg;
	if (why == NULL)
		(*(int *)arg)++;
}

/* Whether fd's error queue holds something now (not read). */
static int
err_queued(int fd)
{
	struct pollfd pf = { fd, 0, 0 };

	return poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR);
}

/*
 * A clock message whose bytes wait behind others in the kernel, then a
 * second queued in the peer (unstamped: the first no longer wanted), then
 * a message read: when the first's bytes leave, its stamp comes, and the
 * peer still drains it.  Left in the error queue, it would wake the loop
 * at once, every time, until the next bytes came (a busy loop).
 */
Test(txstamp, a_late_stamp_is_drained, .timeout = 20)
{
	static char junk[65536];
	unsigned char m[WIRE_HDR + 8];
	struct event_base *base;
	struct peer *p;
	uint64_t t;
	int a, b, small = 64 << 10, big = 512 << 10, i, got = 0;
	size_t left;

	pair(&a, &b);
	setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	setsockopt(a, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	cr_assert_eq(fcntl(a, F_SETFL, O_NONBLOCK), 0);
	cr_assert_not_null(base = event_base_new());
	cr_assert_not_null(p = peer_new(base, a, count, &got, "a"));
	/* The other end's window closed: what a sends waits in a, which
	 * has room for more (the clock message is written, and stamped). */
	memset(junk, 'x', sizeof junk);
	for (i = 0; i < 3; i++)
		cr_assert_eq(send(a, junk, sizeof junk, MSG_DONTWAIT),
		    (ssize_t)sizeof junk);
	usleep(20000);
	cr_assert_eq(peer_send_clock(p, WIRE_PING, NULL, 0, &t), 0);
	if (err_queued(a)) {
		cr_log_warn("the stamp came at once: not this case, skipped");
		goto out;
	}
	while (send(a, junk, sizeof junk, MSG_DONTWAIT) > 0)
		;
	cr_assert_eq(peer_send_now(p, WIRE_PING, junk, 8), 0);
	cr_assert_gt(peer_pending(p), 0, "not queued in the peer");
	cr_assert_eq(peer_send_clock(p, WIRE_PING, NULL, 0, &t), 0);
	wire_header(m, WIRE_PING, 8);
	memset(m + WIRE_HDR, 0, 8);
	cr_assert_eq(send(b, m, sizeof m, 0), (ssize_t)sizeof m);
	/* A stamp left undrained keeps the loop busy for ever: this test
	 * then ends at its timeout. */
	for (i = 0; i < 5000 && got == 0; i++) {
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	cr_assert_eq(got, 1, "the message was not read");
	/* Everything read at b, all of a's bytes acknowledged (so sent,
	 * and stamped where asked): the first clock message left. */
	for (i = 0; i < 5000; i++) {
		int unacked = 1, more = 0;

		while (recv(b, junk, sizeof junk, MSG_DONTWAIT) > 0)
			more = 1;
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
		if (peer_pending(p) == 0 &&
		    ioctl(a, SIOCOUTQ, &unacked) == 0 && unacked == 0)
			break;
		if (!more)
			usleep(1000);
	}
	/* Its stamp, once queued, is drained by the loop. */
	for (i = 0; i < 10; i++)
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
	left = peer_pending(p);
	cr_assert_eq(left, 0, "%zu bytes not written", left);
	cr_assert(!err_queued(a), "a stamp left in the error queue");
out:
	peer_free(p);
	event_base_free(base);
	close(b);
}
