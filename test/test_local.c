/* SPDX-License-Identifier: MIT */
/* test_local.c: the Main Monitor's local door (common/net/local.c): its
 * name for each kind of address; a client finds the door of the exact
 * address, else the wildcard's, and only for an address of this host; a
 * name taken cannot be taken again; a door kept by another user is not
 * used; a peer made of an accepted door connection knows it is one. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "net/local.h"
#include "net/peer.h"

static struct sockaddr_in
v4(const char *a, unsigned port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof s);
	s.sin_family = AF_INET;
	s.sin_port = htons((uint16_t)port);
	cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6
v6(const char *a, unsigned port)
{
	struct sockaddr_in6 s;

	memset(&s, 0, sizeof s);
	s.sin6_family = AF_INET6;
	s.sin6_port = htons((uint16_t)port);
	cr_assert_eq(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

/* A port no one else's door uses while tcp is open: the kernel's TCP
 * port, held by a socket bound to it (doors are named by port). */
static unsigned
held_port(int *tcp)
{
	struct sockaddr_in s = v4("127.0.0.1", 0);
	socklen_t len = sizeof s;

	*tcp = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(*tcp >= 0);
	cr_assert_eq(bind(*tcp, (struct sockaddr *)&s, sizeof s), 0);
	cr_assert_eq(getsockname(*tcp, (struct sockaddr *)&s, &len), 0);
	return ntohs(s.sin_port);
}

Test(name, each_kind_of_address)
{
	struct sockaddr_in a = v4("127.0.0.1", 5000), any = v4("0.0.0.0", 7);
	struct sockaddr_in6 b = v6("::1", 65535), any6 = v6("::", 80);
	struct sockaddr_in6 m = v6("::ffff:10.1.2.3", 9);
	struct sockaddr u = { .sa_family = AF_UNIX };
	char n[LOCAL_NAME_MAX];

	cr_assert_eq(local_name((struct sockaddr *)&a, n, sizeof n), 0);
	cr_assert_str_eq(n, "grm-mm/127.0.0.1:5000");
	cr_assert_eq(local_name((struct sockaddr *)&any, n, sizeof n), 0);
	cr_assert_str_eq(n, "grm-mm/*:7");
	cr_assert_eq(local_name((struct sockaddr *)&b, n, sizeof n), 0);
	cr_assert_str_eq(n, "grm-mm/[::1]:65535");
	cr_assert_eq(local_name((struct sockaddr *)&any6, n, sizeof n), 0);
	cr_assert_str_eq(n, "grm-mm/*:80");
	cr_assert_eq(local_name((struct sockaddr *)&m, n, sizeof n), 0);
	cr_assert_str_eq(n, "grm-mm/[::ffff:10.1.2.3]:9");
	cr_assert_eq(local_name(&u, n, sizeof n), -1);
	/* Too small a buffer: refused, not cut. */
	cr_assert_eq(local_name((struct sockaddr *)&a, n, 10), -1);
}

/* Accepts one connection on door l, or fails the test. */
static void
take(int l)
{
	int c;

	c = accept(l, NULL, NULL);
	cr_assert(c >= 0, "accept: %s", strerror(errno));
	close(c);
}

Test(connect, exact_address_then_wildcard)
{
	int tcp, tcp2, l, w, c;
	unsigned p = held_port(&tcp), q = held_port(&tcp2);
	struct sockaddr_in a = v4("127.0.0.1", p), a2 = v4("127.0.0.2", p);
	struct sockaddr_in any = v4("0.0.0.0", q), a5 = v4("127.0.0.5", q);
	struct sockaddr_in6 m = v6("::ffff:127.0.0.5", q);
	const char *why = NULL;

	l = local_listen((struct sockaddr *)&a, 4);
	cr_assert(l >= 0, "local_listen: %s", strerror(errno));
	cr_assert_eq(local_is(l), 1);
	cr_assert_eq(local_is(tcp), 0);
	/* The name is the listener's: a second one cannot have it. */
	cr_assert_eq(local_listen((struct sockaddr *)&a, 4), -1);
	cr_assert_eq(errno, EADDRINUSE);
	c = local_connect((struct sockaddr *)&a, &why);
	cr_assert(c >= 0, "local_connect: %s", why);
	cr_assert_eq(local_is(c), 1);
	close(c);
	take(l);
	/* Another loopback address: TCP would find no listener there. */
	cr_assert_eq(local_connect((struct sockaddr *)&a2, &why), -1);
	cr_assert_str_eq(why, "no local door");

	w = local_listen((struct sockaddr *)&any, 4);
	cr_assert(w >= 0, "local_listen: %s", strerror(errno));
	c = local_connect((struct sockaddr *)&a5, &why);
	cr_assert(c >= 0, "local_connect to the wildcard: %s", why);
	close(c);
	take(w);
	c = local_connect((struct sockaddr *)&m, &why);
	cr_assert(c >= 0, "local_connect, v4-mapped: %s", why);
	close(c);
	take(w);
	close(l);
	close(w);
	close(tcp);
	close(tcp2);
}

Test(connect, not_for_another_host)
{
	int tcp, w;
	unsigned q = held_port(&tcp);
	struct sockaddr_in any = v4("0.0.0.0", q);
	/* TEST-NET-1 (RFC 5737): no host of ours has it. */
	struct sockaddr_in far = v4("192.0.2.1", q);
	struct sockaddr_in6 far6 = v6("2001:db8::1", q);
	const char *why = NULL;

	w = local_listen((struct sockaddr *)&any, 4);
	cr_assert(w >= 0, "local_listen: %s", strerror(errno));
	/* The wildcard door is there, but TCP would go to that host. */
	cr_assert_eq(local_connect((struct sockaddr *)&far, &why), -1);
	cr_assert_str_eq(why, "not an address of this host");
	cr_assert_eq(local_connect((struct sockaddr *)&far6, &why), -1);
	cr_assert_str_eq(why, "not an address of this host");
	close(w);
	close(tcp);
}

Test(connect, not_to_another_users_door)
{
	int tcp, go[2], c;
	unsigned p = held_port(&tcp);
	struct sockaddr_in a = v4("127.0.0.1", p);
	const char *why = NULL;
	pid_t pid;
	char x;

	if (geteuid() != 0) {
		cr_skip_test("needs root, to listen as another user");
		return;
	}
	cr_assert_eq(pipe(go), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		/* nobody takes the door, then waits to be killed. */
		if (setgid(65534) != 0 || setuid(65534) != 0 ||
		    local_listen((struct sockaddr *)&a, 4) < 0)
			_exit(1);
		(void)write(go[1], "k", 1);
		pause();
		_exit(0);
	}
	close(go[1]);
	cr_assert_eq(read(go[0], &x, 1), 1, "the other user's door");
	c = local_connect((struct sockaddr *)&a, &why);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(c, -1);
	cr_assert_str_eq(why, "the local door is another user's");
	close(go[0]);
	close(tcp);
}

static void
nothing(struct peer *p, uint16_t type, struct wire_rd *msg, const char *why,
	void *arg)
{
	(void)p;
	(void)type;
	(void)msg;
	(void)why;
	(void)arg;
}

/* mainmon's end of a door link (peer_new on an accepted socket) is local:
 * no TCP options, no transmit stamps asked of a Unix socket. */
Test(peer, accepted_door_link_is_local)
{
	struct event_base *base = event_base_new();
	struct peer *u, *t;
	int sv[2], tcp;

	cr_assert(base != NULL);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	(void)held_port(&tcp);
	u = peer_new(base, sv[0], nothing, NULL, "door");
	t = peer_new(base, tcp, nothing, NULL, "tcp");
	cr_assert(u != NULL && t != NULL);
	cr_expect_eq(peer_is_local(u), 1);
	cr_expect_eq(peer_is_local(t), 0);
	peer_free(u);
	peer_free(t);
	close(sv[1]);
	event_base_free(base);
}
