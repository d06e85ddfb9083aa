/* mm_main.c: mainmon, the Main Monitor: options, the listening socket, the
 * identifier line, and the event loop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "mm.h"
#include "peer.h"
#include "tape.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: mainmon -o FILE [-f tape|bee|bin] [-p PORT] [-b ADDR] "
	    "[-d]\n");
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
	  int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	mm_accept(arg, fd);
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	(void)arg;
	log_warn("accept: %s", strerror(errno));
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct mm *mm = arg;

	(void)what;
	if (mm->stopping) {	/* a second signal: do not wait any longer */
		event_base_loopexit(mm->base, NULL);
		return;
	}
	log_info("%s: final collection", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	mm_round(mm, NULL, MM_STOP, NULL);
}

int
main(int argc, char **argv)
{
	struct mm mm;
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	socklen_t sslen = sizeof ss;
	struct event *sigterm, *sigint;
	const char *bind_addr = "127.0.0.1", *out = NULL;
	char *end;
	char addr[INET6_ADDRSTRLEN];
	unsigned long port = 0;
	int c, debug = 0, fmt = TAPE_FMT_TAPE;
	struct mm_node *n, *nn;

	while ((c = getopt(argc, argv, "o:f:p:b:dh")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "tape") == 0)
				fmt = TAPE_FMT_TAPE;
			else if (strcmp(optarg, "bin") == 0)
				fmt = TAPE_FMT_BIN;
			else if (strcmp(optarg, "bee") == 0)
				fmt = TAPE_FMT_BEE;
			else {
				fprintf(stderr, "mainmon: -f %s: not a format "
				    "(tape, bee, bin)\n", optarg);
				return 2;
			}
			break;
		case 'p':
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || port > 65535) {
				fprintf(stderr, "mainmon: -p %s: not a port "
				    "number\n", optarg);
				return 2;
			}
			break;
		case 'b':
			bind_addr = optarg;
			break;
		case 'd':
			debug = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (out == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("mainmon", debug ? LOG_DEBUG : LOG_WARN);
	signal(SIGPIPE, SIG_IGN);
	memset(&mm, 0, sizeof mm);
	mm.fmt = fmt;
	mm.out_path = (char *)out;
	mm.base = event_base_new();
	if (mm.base == NULL)
		fatal("cannot create event base");

	memset(&ss, 0, sizeof ss);
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, bind_addr, &sin->sin_addr) != 1)
		fatal("-b %s: not an IPv4 address", bind_addr);
	mm.listener = evconnlistener_new_bind(mm.base, accept_cb, &mm,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    128, (struct sockaddr *)sin, sizeof *sin);
	if (mm.listener == NULL)
		fatal("cannot listen on %s:%lu: %s", bind_addr, port,
		    strerror(errno));
	evconnlistener_set_error_cb(mm.listener, accept_error_cb);
	if (getsockname(evconnlistener_get_fd(mm.listener),
	    (struct sockaddr *)&ss, &sslen) != 0)
		fatal("getsockname: %s", strerror(errno));
	/* The identifier names the address LMs must reach: the bound one,
	 * or this host's name when bound to every interface. */
	if (sin->sin_addr.s_addr == htonl(INADDR_ANY)) {
		if (gethostname(addr, sizeof addr) != 0)
			snprintf(addr, sizeof addr, "127.0.0.1");
		addr[sizeof addr - 1] = '\0';
	} else
		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof addr);
	snprintf(mm.id, sizeof mm.id, "%s:%u", addr, ntohs(sin->sin_port));

	if (mm_out_open(&mm, out) != 0)
		fatal("cannot create %s: %s", out, strerror(errno));
	printf("%s\n", mm.id);
	fflush(stdout);

	sigterm = evsignal_new(mm.base, SIGTERM, signal_cb, &mm);
	sigint = evsignal_new(mm.base, SIGINT, signal_cb, &mm);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);

	event_base_dispatch(mm.base);

	while (mm.conns != NULL)
		mm_conn_free(mm.conns);
	if (mm.out != NULL && tape_close(mm.out) != 0)
		mm.exit_code = 1;
	for (n = mm.nodes; n != NULL; n = nn) {
		nn = n->next;
		mm_node_free(n);
	}
	mm_defs_free(&mm.written);
	mm_stats_free(&mm);
	mm_dedup_free(&mm);
	free(mm.raw);
	evconnlistener_free(mm.listener);
	event_free(sigterm);
	event_free(sigint);
	event_base_free(mm.base);
	return mm.exit_code;
}
