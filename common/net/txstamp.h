/* SPDX-License-Identifier: MIT */
/* txstamp.h: the kernel's transmit timestamps of a TCP socket's sends
 * (SO_TIMESTAMPING): switched on, asked for by one send, and read back
 * from the socket's error queue, matched by the count of bytes written
 * (doc/clock-sync.md, "Departure times from the kernel"). */
#ifndef GRM_TXSTAMP_H
#define GRM_TXSTAMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct msghdr;

/*
 * Has the kernel report software transmit stamps of fd's sends, each
 * identified by its last byte's count from now on, from 0 (OPT_ID with
 * OPT_ID_TCP: the count starts at the bytes written so far), without the
 * data (OPT_TSONLY).  No stamp is made until a send asks (txs_send), so
 * the error queue holds only those.  0, or -1 if the kernel refuses (not
 * a TCP socket, a kernel older than 6.2): then there are no stamps.
 */
int txs_enable(int fd);

/* send(fd, buf, len, flags), asking for a stamp of the last byte it
 * writes (when that byte is handed to the device); as send(2). */
ssize_t txs_send(int fd, const void *buf, size_t len, int flags);

/*
 * One message of the error queue, mh as recvmsg(MSG_ERRQUEUE) filled it:
 * 1 and the stamp (CLOCK_REALTIME ns) in *real if it is a software
 * stamp of the moment the byte counted `key` (modulo 2^32) was handed to
 * the device (SCM_TSTAMP_SND); 0 if it is anything else (another byte's,
 * another kind of stamp, an error, a stamp of 0).
 */
int txs_match(const struct msghdr *mh, uint32_t key, uint64_t *real);

/* Reads fd's error queue until it is empty (never blocks): 1 with *real
 * if a stamp of key was among what it read, else 0. */
int txs_drain(int fd, uint32_t key, uint64_t *real);

#endif /* GRM_TXSTAMP_H */
