/* SPDX-License-Identifier: MIT */
/* local.c: the Main Monitor's local door (doc/protocol.md 1.2).  A Unix
 * stream socket moves a Local Monitor's data to a Main Monitor on the same
 * host for a quarter of the CPU time the TCP loopback takes (no protocol
 * stack, no acknowledgements); its name is abstract, so it lives in the
 * network namespace, like the TCP address it stands beside. */
#include <errno.h>
#include <ifaddrs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "net/local.h"

#define LOCAL_PREFIX	"grm-mm/"

static int
is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		    htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
	    &((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static unsigned
port_of(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET ?
	    ((const struct sockaddr_in *)sa)->sin_port :
	    ((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* The door's name for address text addr ("*" for the wildcard). */
static int
name_of(const char *addr, int v6, unsigned port, char *out, size_t sz)
{
	int n;

	n = snprintf(out, sz, v6 ? LOCAL_PREFIX "[%s]:%u" :
	    LOCAL_PREFIX "%s:%u", addr, port);
	return n > 0 && (size_t)n < sz && (size_t)n < LOCAL_NAME_MAX ? 0 : -1;
}

int
local_name(const struct sockaddr *sa, char *out, size_t sz)
{
	char a[INET6_ADDRSTRLEN];
	const void *p;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -1;
	if (is_any(sa))
		return name_of("*", 0, port_of(sa), out, sz);
	p = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (inet_ntop(sa->sa_family, p, a, sizeof a) == NULL)
		return -1;
	return name_of(a, sa->sa_family == AF_INET6, port_of(sa), out, sz);
}

/* The abstract address of door name: a NUL, then the name (no NUL after:
 * the length says where it ends). */
static socklen_t
door_addr(const char *name, struct sockaddr_un *un)
{
	size_t n = strlen(name);

	memset(un, 0, sizeof *un);
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int
local_listen(const struct sockaddr *sa, int backlog)
{
	char name[LOCAL_NAME_MAX];
	struct sockaddr_un un;
	socklen_t len;
	int fd;

	if (local_name(sa, name, sizeof name) != 0) {
		errno = EINVAL;
		return -1;
	}
	len = door_addr(name, &un);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&un, len) != 0 ||
	    listen(fd, backlog) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Whether IPv4 address a (network order) is this namespace's. */
static int
local_v4(const struct ifaddrs *ifs, in_addr_t a)
{
	const struct ifaddrs *i;

	/* All of 127/8 reaches the loopback device, one address of it
	 * configured or not. */
	if ((ntohl(a) >> 24) == 127)
		return 1;
	for (i = ifs; i != NULL; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr
		    == a)
			return 1;
	return 0;
}

static int
local_v6(const struct ifaddrs *ifs, const struct in6_addr *a)
{
	const struct ifaddrs *i;

	if (IN6_IS_ADDR_LOOPBACK(a))
		return 1;
	for (i = ifs; i != NULL; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->
		    sin6_addr, a, sizeof *a) == 0)
			return 1;
	return 0;
}

/* 1 if sa is an address of this host's network namespace, 0 if not, -1
 * if that cannot be told. */
static int
is_local(const struct sockaddr *sa)
{
	struct ifaddrs *ifs;
	const struct in6_addr *a6;
	in_addr_t a4;
	int r;

	if (getifaddrs(&ifs) != 0)
		return -1;
	if (sa->sa_family == AF_INET)
		r = local_v4(ifs,
		    ((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	else {
		a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			memcpy(&a4, &a6->s6_addr[12], sizeof a4);
			r = local_v4(ifs, a4);
		} else
			r = local_v6(ifs, a6);
	}
	freeifaddrs(ifs);
	return r;
}

/* Connects to door name: the socket, or -1 (no such door, its backlog
 * full, or kept by someone we do not trust). */
static int
door_connect(const char *name, const char **why)
{
	struct sockaddr_un un;
	struct ucred cr;
	socklen_t len = door_addr(name, &un), crlen = sizeof cr;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&un, len) != 0) {
		*why = errno == ECONNREFUSED ? "no local door" :
		    "the local door refused";
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 ||
	    (cr.uid != geteuid() && cr.uid != 0)) {
		*why = "the local door is another user's";
		close(fd);
		return -1;
	}
	return fd;
}

int
local_connect(const struct sockaddr *sa, const char **why)
{
	char name[LOCAL_NAME_MAX];
	const char *dummy, *first;
	int fd;

	if (why == NULL)
		why = &dummy;
	*why = "not an address of this host";
	if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    is_local(sa) != 1)
		return -1;
	if (local_name(sa, name, sizeof name) == 0 &&
	    (fd = door_connect(name, why)) >= 0)
		return fd;
	first = *why;
	/* A Main Monitor listening on every address of the host. */
	if (name_of("*", 0, port_of(sa), name, sizeof name) == 0 &&
	    (fd = door_connect(name, why)) >= 0)
		return fd;
	/* The exact address's door said more than the wildcard's absence. */
	if (strcmp(*why, "no local door") == 0)
		*why = first;
	return -1;
}

int
local_is(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    ss.ss_family == AF_UNIX;
}
