/* SPDX-License-Identifier: MIT */
/* mm_main.c: mainmon, the Main Monitor: options, the listening socket, the
 * identifier line, and the event loop. */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "mm.h"
#include "net/mmid.h"
#include "net/peer.h"
#include "net/wire.h"
#include "tape.h"
#include "net/wire.h"
#include "util/log.h"
#include "util/num.h"
#include "util/sha256.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: mainmon -o FILE [-f tape|bee|bin] [-p PORT] [-b ADDR] "
	    "[-i IDFILE] [-k KEYFILE] [-t SECONDS] [-s SECONDS] [-m MIB]\n"
	    "       [--collect=global|local] [--pause-max=SECONDS] [-d]\n");
}

static void
order_tick(evutil_socket_t fd, short what, void *arg)
{
	struct mm *mm = arg;

	(void)fd;
	(void)what;
	if (mm_order_advance(mm, 1) != 0)
		mm->exit_code = 1;
}

/* Says on stderr that option opt's value s is not what was expected. */
static int
bad_option(const char *opt, const char *s, const char *expected)
{
	char msg[NUM_MSG_MAX];

	fprintf(stderr, "mainmon: %s\n", num_msg(msg, sizeof msg, opt, s,
	    expected));
	return 2;
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
	  int salen, void *arg)
{
	char host[INET6_ADDRSTRLEN + 8], serv[8], addr[64];

	(void)l;
	if (getnameinfo(sa, (socklen_t)salen, host, sizeof host, serv,
	    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(addr, sizeof addr, "a peer");
	else if (sa->sa_family == AF_INET6)
		snprintf(addr, sizeof addr, "[%s]:%s", host, serv);
	else
		snprintf(addr, sizeof addr, "%s:%s", host, serv);
	mm_accept(arg, fd, addr);
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

/*
 * Binds the listening socket to addr (a numeric IPv4 or IPv6 address, or
 * a name of this host's) and port, and puts in mm->id the address LMs must
 * reach: the bound one, in brackets if IPv6, or this host's name when
 * bound to every interface.
 */
static void
listen_on(struct mm *mm, const char *addr, uint64_t port)
{
	struct evutil_addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof ss;
	char portstr[8], host[INET6_ADDRSTRLEN + 8];
	int err, any;

	snprintf(portstr, sizeof portstr, "%u", (unsigned)port);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	err = evutil_getaddrinfo(addr, portstr, &hints, &ai);
	if (err != 0 || ai == NULL)
		fatal("-b %s: not an address of this host (%s)", addr,
		    evutil_gai_strerror(err));
	mm->listener = evconnlistener_new_bind(mm->base, accept_cb, mm,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    128, ai->ai_addr, (int)ai->ai_addrlen);
	evutil_freeaddrinfo(ai);
	if (mm->listener == NULL)
		fatal("cannot listen on %s port %u: %s", addr, (unsigned)port,
		    strerror(errno));
	evconnlistener_set_error_cb(mm->listener, accept_error_cb);
	if (getsockname(evconnlistener_get_fd(mm->listener),
	    (struct sockaddr *)&ss, &sslen) != 0)
		fatal("getsockname: %s", strerror(errno));
	any = ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY) :
	    IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	port = ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (any) {
		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "localhost");
		host[sizeof host - 1] = '\0';
		snprintf(mm->id, sizeof mm->id, "%s:%u", host, (unsigned)port);
	} else if (getnameinfo((struct sockaddr *)&ss, sslen, host,
	    sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
		fatal("-b %s: cannot name the bound address", addr);
	else if (ss.ss_family == AF_INET6)
		snprintf(mm->id, sizeof mm->id, "[%s]:%u", host, (unsigned)port);
	else
		snprintf(mm->id, sizeof mm->id, "%s:%u", host, (unsigned)port);
}

/*
 * The token from key file path (-k): the first line holds 32 hexadecimal
 * digits, or an identifier ending in them (the -i file of an earlier
 * mainmon).  The file must be the user's and readable by nobody else.
 */
static void
read_key(struct mm *mm, const char *path)
{
	char line[MMID_MAX];
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1)
		fatal("-k %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 077) != 0)
		fatal("-k %s: not a regular file of yours that only you can "
		    "read (chmod 600 it)", path);
	f = fdopen(fd, "r");
	if (f == NULL || fgets(line, sizeof line, f) == NULL)
		fatal("-k %s: cannot read it", path);
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	if (mmid_token_parse(line, &mm->mmid) != 0)
		fatal("-k %s: no token in it (32 hexadecimal digits, or an "
		    "identifier ending in them)", path);
	hmac_wipe(line, sizeof line);
}

/* Writes line to path (-i), mode 0600, replacing it whole. */
static void
write_id(const char *path, const char *line)
{
	char tmp[4096];
	FILE *f;
	int fd;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		fatal("-i %s: name too long", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL)
		fatal("-i %s: %s", path, strerror(errno));
	if (fprintf(f, "%s\n", line) < 0 || fclose(f) != 0 ||
	    rename(tmp, path) != 0) {
		unlink(tmp);
		fatal("-i %s: %s", path, strerror(errno));
	}
}

int
main(int argc, char **argv)
{
	struct mm mm;
	struct event *sigterm, *sigint;
	const char *bind_addr = "127.0.0.1", *out = NULL, *idfile = NULL;
	const char *keyfile = NULL;
	char line[MMID_MAX], expected[64];
	uint64_t port = 0, secs = 10;
	int c, debug = 0, fmt = TAPE_FMT_TAPE;
	double sync_s = 1, order_mib = 256, pause_s = 10;
	int global = 0;
	enum { OPT_COLLECT = 256, OPT_PAUSE_MAX };
	static const struct option longopts[] = {
		{ "collect", required_argument, NULL, OPT_COLLECT },
		{ "pause-max", required_argument, NULL, OPT_PAUSE_MAX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct mm_node *n, *nn;

	while ((c = getopt_long(argc, argv, "o:f:p:b:i:k:t:s:m:dh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case OPT_COLLECT:
			if (strcmp(optarg, "global") == 0)
				global = 1;
			else if (strcmp(optarg, "local") == 0)
				global = 0;
			else {
				return bad_option("--collect", optarg,
				    "a scheme (global, local)");
			}
			break;
		case OPT_PAUSE_MAX:
			snprintf(expected, sizeof expected, "a number of "
			    "seconds (0.01 to %u)", WIRE_PAUSE_MAX_MS / 1000);
			if (num_parse_double(optarg, 0.01, WIRE_PAUSE_MAX_MS /
			    1000, &pause_s) != 0)
				return bad_option("--pause-max", optarg,
				    expected);
			break;
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
				return bad_option("-f", optarg,
				    "a format (tape, bee, bin)");
			}
			break;
		case 'p':
			if (num_parse_u64(optarg, 0, 65535, &port) != 0)
				return bad_option("-p", optarg,
				    "a port number (0 to 65535)");
			break;
		case 'b':
			bind_addr = optarg;
			break;
		case 's':
			if (num_parse_double(optarg, 0.01, 3600, &sync_s) != 0)
				return bad_option("-s", optarg, "a number of "
				    "seconds (0.01 to 3600)");
			break;
		case 'm':
			if (num_parse_double(optarg, 1, 1 << 20,
			    &order_mib) != 0)
				return bad_option("-m", optarg, "a number of "
				    "MiB (1 to 1048576)");
			break;
		case 'i':
			idfile = optarg;
			break;
		case 'k':
			keyfile = optarg;
			break;
		case 't':
			if (num_parse_u64(optarg, 1, 3600, &secs) != 0)
				return bad_option("-t", optarg, "a number of "
				    "seconds (1 to 3600)");
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
	log_init("mainmon", debug ? GRM_LOG_DEBUG : GRM_LOG_WARN);
	peer_keep_memory();
	signal(SIGPIPE, SIG_IGN);
	memset(&mm, 0, sizeof mm);
	mm.sync_ns = (uint64_t)(sync_s * 1e9);
	mm.global = global;
	mm.pause_max_ms = (uint32_t)(pause_s * 1000);
	mm.order.max_bytes = (uint64_t)(order_mib * 1048576);
	mm.fmt = fmt;
	mm.out_path = strdup(out);	/* grmctl file changes it */
	if (mm.out_path == NULL)
		fatal("out of memory");
	mm.base = event_base_new();
	if (mm.base == NULL)
		fatal("cannot create event base");

	mm.auth_secs = (unsigned)secs;
	if (keyfile != NULL)
		read_key(&mm, keyfile);
	else if (mmid_token_new(&mm.mmid) != 0)
		fatal("no random numbers for the token: %s", strerror(errno));
	listen_on(&mm, bind_addr, port);
	/* The line with the token goes to stdout and the -i file only: the
	 * trace file, status and messages show HOST:PORT. */
	snprintf(mm.mmid.hostport, sizeof mm.mmid.hostport, "%s", mm.id);
	if (mmid_format(&mm.mmid, line, sizeof line) != 0)
		fatal("identifier too long");

	if (mm_out_open(&mm, out) != 0)
		fatal("cannot create %s: %s", out, strerror(errno));
	if (idfile != NULL)
		write_id(idfile, line);
	printf("%s\n", line);
	fflush(stdout);

	sigterm = evsignal_new(mm.base, SIGTERM, signal_cb, &mm);
	sigint = evsignal_new(mm.base, SIGINT, signal_cb, &mm);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	if ((mm.order_ev = evtimer_new(mm.base, order_tick, &mm)) == NULL)
		fatal("out of memory");

	event_base_dispatch(mm.base);

	/* Ended without a stop (a signal): what is held goes out now. */
	mm.stopped = 1;
	if (mm.out != NULL && (mm_order_write(&mm, UINT64_MAX) != 0 ||
	    mm_order_summary(&mm) != 0))
		mm.exit_code = 1;
	while (mm.conns != NULL)
		mm_conn_free(mm.conns);
	if (mm.out != NULL && tape_close(mm.out) != 0)
		mm.exit_code = 1;
	mm_out_finish(&mm);
	mm_order_free(&mm);
	mm_causal_free(&mm);
	event_free(mm.order_ev);
	if (mm.global_ev != NULL)
		event_free(mm.global_ev);
	for (n = mm.nodes; n != NULL; n = nn) {
		nn = n->next;
		mm_node_free(n);
	}
	mm_defs_free(&mm.written);
	mm_stats_free(&mm);
	mm_dedup_free(&mm);
	free(mm.out_path);
	evconnlistener_free(mm.listener);
	event_free(sigterm);
	event_free(sigint);
	event_base_free(mm.base);
	return mm.exit_code;
}
