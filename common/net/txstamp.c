/* SPDX-License-Identifier: MIT */
/* txstamp.c: the kernel's transmit timestamps of a TCP socket's sends
 * (txstamp.h). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#include "net/txstamp.h"

/* Linux 6.2; not in every header yet. */
#ifndef SOF_TIMESTAMPING_OPT_ID_TCP
#define SOF_TIMESTAMPING_OPT_ID_TCP	(1 << 16)
#endif

int
txs_enable(int fd)
{
	/* Without OPT_ID_TCP the count would start at the bytes
	 * acknowledged, not written: not asked for. */
	int f = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
	    SOF_TIMESTAMPING_OPT_ID_TCP | SOF_TIMESTAMPING_OPT_TSONLY;

	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof f) ==
	    0 ? 0 : -1;
}

ssize_t
txs_send(int fd, const void *buf, size_t len, int flags)
{
	struct iovec io = { (void *)buf, len };
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(uint32_t))];
	} cb;
	struct msghdr mh;
	struct cmsghdr *cm;
	uint32_t f = SOF_TIMESTAMPING_TX_SOFTWARE;

	memset(&mh, 0, sizeof mh);
	memset(&cb, 0, sizeof cb);
	mh.msg_iov = &io;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.b;
	mh.msg_controllen = sizeof cb.b;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SO_TIMESTAMPING;
	cm->cmsg_len = CMSG_LEN(sizeof f);
	memcpy(CMSG_DATA(cm), &f, sizeof f);
	return sendmsg(fd, &mh, flags);
}

int
txs_match(const struct msghdr *mh, uint32_t key, uint64_t *real)
{
	struct cmsghdr *cm;
	struct sock_extended_err ee;
	struct scm_timestamping ts;
	int have_ee = 0, have_ts = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL;
	    cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SO_TIMESTAMPING &&
		    cm->cmsg_len >= CMSG_LEN(sizeof ts)) {
			memcpy(&ts, CMSG_DATA(cm), sizeof ts);
			have_ts = 1;
		} else if (((cm->cmsg_level == SOL_IP &&
		    cm->cmsg_type == IP_RECVERR) ||
		    (cm->cmsg_level == SOL_IPV6 &&
		    cm->cmsg_type == IPV6_RECVERR)) &&
		    cm->cmsg_len >= CMSG_LEN(sizeof ee)) {
			memcpy(&ee, CMSG_DATA(cm), sizeof ee);
			have_ee = 1;
		}
	}
	if (!have_ts || !have_ee || ee.ee_errno != ENOMSG ||
	    ee.ee_origin != SO_EE_ORIGIN_TIMESTAMPING ||
	    ee.ee_info != SCM_TSTAMP_SND || ee.ee_data != key ||
	    ts.ts[0].tv_sec < 0 || ts.ts[0].tv_nsec < 0 ||
	    ts.ts[0].tv_nsec >= 1000000000 ||
	    (ts.ts[0].tv_sec == 0 && ts.ts[0].tv_nsec == 0))
		return 0;
	*real = (uint64_t)ts.ts[0].tv_sec * 1000000000u +
	    (uint64_t)ts.ts[0].tv_nsec;
	return 1;
}

int
txs_drain(int fd, uint32_t key, uint64_t *real)
{
	union {
		struct cmsghdr	h;
		char		b[512];
	} cb;
	struct msghdr mh;
	uint64_t r;
	int found = 0, i;

	/* A bounded number: the queue holds a stamp per asking send. */
	for (i = 0; i < 64; i++) {
		memset(&mh, 0, sizeof mh);
		mh.msg_control = cb.b;
		mh.msg_controllen = sizeof cb.b;
		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The earliest, should the kernel stamp a send twice (a
		 * segment sent again): a departure time is never late. */
		if (txs_match(&mh, key, &r) && (!found || r < *real)) {
			*real = r;
			found = 1;
		}
	}
	return found;
}
