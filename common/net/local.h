/* SPDX-License-Identifier: MIT */
/* local.h: a Main Monitor's local door, an abstract Unix socket beside
 * its TCP listener, named after the address it listens on; and how a
 * client on the same host finds it (doc/protocol.md 1.2). */
#ifndef GRM_LOCAL_H
#define GRM_LOCAL_H

#include <stddef.h>
#include <sys/socket.h>

/* The longest door name, its leading NUL too (a sockaddr_un's path). */
#define LOCAL_NAME_MAX	108

/*
 * The door's name for a TCP listener bound to sa (AF_INET or AF_INET6,
 * its port set): "grm-mm/ADDR:PORT" (IPv6 in brackets), or "grm-mm/\x2a:PORT" (a star)
 * if sa is a wildcard address, into out[sz], without the leading NUL.
 * 0, or -1 (another family, or too long).
 */
int local_name(const struct sockaddr *sa, char *out, size_t sz);

/*
 * mainmon: a listening socket (non-blocking, close-on-exec) on the door of
 * the TCP listener bound to sa; -1 with errno if it cannot be made (the
 * name taken already: by another Main Monitor of the same address, or by
 * anyone who took it first; clients then use TCP).
 */
int local_listen(const struct sockaddr *sa, int backlog);

/*
 * A client's connected socket (non-blocking, close-on-exec) to the door
 * of the Main Monitor that a TCP connection to sa would reach, if sa is
 * an address of this host's network namespace and that Main Monitor has
 * a door; the door of sa's exact address first, then the wildcard's.  The
 * peer must run as this user or as root (SO_PEERCRED): a door anyone may
 * name could be taken by another user first.  -1 if there is no such
 * door (the caller then uses TCP); why (if not NULL) says why not, for a
 * debug log.
 */
int local_connect(const struct sockaddr *sa, const char **why);

/* 1 if fd is a local (AF_UNIX) socket, 0 if not. */
int local_is(int fd);

#endif /* GRM_LOCAL_H */
