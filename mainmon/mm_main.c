/* SPDX-License-Identifier: MIT */
/* mm_main.c: mainmon, the Main Monitor: its options, checked whole before
 * anything is made; then the listening socket, the trace and identifier
 * files, the event loop, and the end, each module finished in the reverse
 * order of its start. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/listener.h>

#include "mm.h"
#include "net/local.h"
#include "net/loop.h"
#include "net/mmid.h"
#include "net/peer.h"
#include "net/wire.h"
#include "tape.h"
#include "util/log.h"
#include "util/num.h"
#include "util/sfile.h"
#include "util/sha256.h"

/* What the command line says, every value checked (opts_parse). */
struct mm_opts {
	const char	*out;		/* -o */
	int		force;		/* --force: -o may be replaced */
	int		fmt;		/* -f: TAPE_FMT_* */
	const char	*bind;		/* -b */
	uint64_t	port;		/* -p */
	const char	*idfile;	/* -i */
	const char	*keyfile;	/* -k */
	uint64_t	auth_secs;	/* -t */
	double		sync_s;		/* -s */
	double		order_mib;	/* -m */
	int		global;		/* --collect */
	double		pause_s;	/* --pause-max */
	uint64_t	silent_s;	/* --silent: 0 never */
	double		order_wait_s;	/* --order-wait: 0 forever */
	uint64_t	disk_wait_s;	/* --disk-wait: a stop's bound */
	int		noindex;	/* --no-index: no sidecar */
	int		debug;		/* -d */
	const char	*plan;		/* -P: a plan file */
	int		allow_exec;	/* --allow-exec: plans may exec */
};

/* What main made, to be undone in reverse order. */
struct mm_made {
	struct evutil_addrinfo	*ai;		/* -b, resolved */
	struct loop_ev		*sigterm, *sigint;
	struct loop_ev		*relisten;	/* after running out of fds */
	char			out_tmp[4096];	/* --force: the new file's
						   name until renamed */
	int			out_made;	/* a trace file was created */
};

static struct mm_made made;

static void
usage(FILE *f)
{
	fprintf(f, "usage: mainmon -o FILE [--force] [-f tape|bee|bin] "
	    "[-p PORT] [-b ADDR] [-i IDFILE]\n"
	    "       [-k KEYFILE] [-t SECONDS] [-s SECONDS] [-m MIB] "
	    "[--collect=global|local]\n"
	    "       [--pause-max=SECONDS] [--silent=SECONDS] "
	    "[--order-wait=SECONDS]\n"
	    "       [--disk-wait=SECONDS] [--no-index] [-P PLANFILE] "
	    "[--allow-exec] [-d]\n");
}

/* Says on stderr what is wrong with the command line; returns 2 (the exit
 * status of a bad argument). */
static int
refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
refuse(const char *fmt, ...)
{
	va_list ap;

	fputs("mainmon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* Option opt's value s is not what was expected: 2. */
static int
bad_value(const char *opt, const char *s, const char *expected)
{
	char msg[NUM_MSG_MAX];

	return refuse("%s", num_msg(msg, sizeof msg, opt, s, expected));
}

/*
 * Reads the command line into o, checking each value; nothing is made.
 * 0; 1 if the help was asked for (printed); 2 on a bad argument (said).
 */
static int
opts_parse(int argc, char **argv, struct mm_opts *o)
{
	enum { OPT_COLLECT = 256, OPT_PAUSE_MAX, OPT_FORCE, OPT_SILENT,
	    OPT_ORDER_WAIT, OPT_DISK_WAIT, OPT_ALLOW_EXEC, OPT_NOINDEX };
	static const struct option longopts[] = {
		{ "collect", required_argument, NULL, OPT_COLLECT },
		{ "pause-max", required_argument, NULL, OPT_PAUSE_MAX },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "silent", required_argument, NULL, OPT_SILENT },
		{ "order-wait", required_argument, NULL, OPT_ORDER_WAIT },
		{ "disk-wait", required_argument, NULL, OPT_DISK_WAIT },
		{ "allow-exec", no_argument, NULL, OPT_ALLOW_EXEC },
		{ "plan", required_argument, NULL, 'P' },
		{ "no-index", no_argument, NULL, OPT_NOINDEX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char expected[64];
	int c;

	memset(o, 0, sizeof *o);
	o->bind = "127.0.0.1";
	o->fmt = TAPE_FMT_TAPE;
	o->auth_secs = 10;
	o->sync_s = 1;
	o->order_mib = 256;
	o->pause_s = 10;
	o->silent_s = 5;
	o->order_wait_s = 5;
	o->disk_wait_s = 60;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:f:p:b:i:k:t:s:m:P:dh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case OPT_COLLECT:
			if (strcmp(optarg, "global") == 0)
				o->global = 1;
			else if (strcmp(optarg, "local") == 0)
				o->global = 0;
			else
				return bad_value("--collect", optarg,
				    "a scheme (global, local)");
			break;
		case OPT_PAUSE_MAX:
			snprintf(expected, sizeof expected, "a number of "
			    "seconds (0.01 to %u)", WIRE_PAUSE_MAX_MS / 1000);
			if (num_parse_double(optarg, 0.01, WIRE_PAUSE_MAX_MS /
			    1000, &o->pause_s) != 0)
				return bad_value("--pause-max", optarg,
				    expected);
			break;
		case OPT_FORCE:
			o->force = 1;
			break;
		case OPT_ALLOW_EXEC:
			o->allow_exec = 1;
			break;
		case 'P':
			if (*optarg == '\0')
				return refuse("-P: an empty file name");
			o->plan = optarg;
			break;
		case OPT_SILENT:
			if (num_parse_u64(optarg, 0, 3600, &o->silent_s) != 0)
				return bad_value("--silent", optarg, "a number "
				    "of seconds (0 to 3600; 0: never)");
			break;
		case OPT_ORDER_WAIT:
			if (num_parse_double(optarg, 0, 3600,
			    &o->order_wait_s) != 0)
				return bad_value("--order-wait", optarg, "a "
				    "number of seconds (0 to 3600; 0: "
				    "forever)");
			break;
		case OPT_DISK_WAIT:
			if (num_parse_u64(optarg, 0, 3600,
			    &o->disk_wait_s) != 0)
				return bad_value("--disk-wait", optarg, "a "
				    "number of seconds (0 to 3600)");
			break;
		case OPT_NOINDEX:
			o->noindex = 1;
			break;
		case 'o':
			if (*optarg == '\0')
				return refuse("-o: an empty file name");
			o->out = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "tape") == 0)
				o->fmt = TAPE_FMT_TAPE;
			else if (strcmp(optarg, "bin") == 0)
				o->fmt = TAPE_FMT_BIN;
			else if (strcmp(optarg, "bee") == 0)
				o->fmt = TAPE_FMT_BEE;
			else
				return bad_value("-f", optarg,
				    "a format (tape, bee, bin)");
			break;
		case 'p':
			if (num_parse_u64(optarg, 0, 65535, &o->port) != 0)
				return bad_value("-p", optarg,
				    "a port number (0 to 65535)");
			break;
		case 'b':
			o->bind = optarg;
			break;
		case 's':
			if (num_parse_double(optarg, 0.01, 3600,
			    &o->sync_s) != 0)
				return bad_value("-s", optarg, "a number of "
				    "seconds (0.01 to 3600)");
			break;
		case 'm':
			if (num_parse_double(optarg, 1, 1 << 20,
			    &o->order_mib) != 0)
				return bad_value("-m", optarg, "a number of "
				    "MiB (1 to 1048576)");
			break;
		case 'i':
			if (*optarg == '\0')
				return refuse("-i: an empty file name");
			o->idfile = optarg;
			break;
		case 'k':
			o->keyfile = optarg;
			break;
		case 't':
			if (num_parse_u64(optarg, 1, 3600, &o->auth_secs) != 0)
				return bad_value("-t", optarg, "a number of "
				    "seconds (1 to 3600)");
			break;
		case 'd':
			o->debug = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			if (optopt != 0 && optopt < 256)
				refuse("-%c: a value is needed", optopt);
			else
				refuse("%s: a value is needed",
				    argv[optind - 1]);
			usage(stderr);
			return 2;
		default:
			if (optopt != 0)
				refuse("-%c: not an option", optopt);
			else
				refuse("%s: not an option", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || o->out == NULL) {
		if (optind != argc)
			refuse("%s: an argument that is not an option",
			    argv[optind]);
		else
			refuse("-o FILE is needed");
		usage(stderr);
		return 2;
	}
	return 0;
}

/*
 * The token from key file path (-k): the first line holds 32 hexadecimal
 * digits, or an identifier ending in them (the -i file of an earlier
 * mainmon).  The file must be the user's and readable by nobody else.
 * 0, or 2 (said).
 */
static int
read_key(struct mm *mm, const char *path)
{
	char line[MMID_MAX];
	struct stat st;
	FILE *f;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1)
		return refuse("-k %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		close(fd);
		return refuse("-k %s: not a regular file of yours that only "
		    "you can read (chmod 600 it)", path);
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return refuse("-k %s: %s", path, strerror(errno));
	}
	r = fgets(line, sizeof line, f) == NULL;
	fclose(f);
	if (r)
		return refuse("-k %s: cannot read it", path);
	line[strcspn(line, "\r\n")] = '\0';
	r = mmid_token_parse(line, &mm->mmid);
	hmac_wipe(line, sizeof line);
	if (r != 0)
		return refuse("-k %s: no token in it (32 hexadecimal digits, "
		    "or an identifier ending in them)", path);
	return 0;
}

/*
 * Everything the options name, checked before anything is made: the
 * files may be created, the address is one of this host's, the key file
 * holds a token (read into mm).  0, or 2 (said).
 */
static int
opts_check(const struct mm_opts *o, struct mm *mm)
{
	struct evutil_addrinfo hints;
	char why[4200], portstr[8];
	int err;

	if (sfile_check_new(o->out, o->force, why, sizeof why) != 0)
		return refuse("-o %s: %s", o->out, why);
	if (o->idfile != NULL &&
	    (sfile_check_new(o->idfile, 1, why, sizeof why) != 0 ||
	    sfile_check_ours(o->idfile, why, sizeof why) != 0))
		return refuse("-i %s: %s", o->idfile, why);
	if (o->idfile != NULL && strcmp(o->idfile, o->out) == 0)
		return refuse("-i %s: the trace file's name too", o->idfile);
	snprintf(portstr, sizeof portstr, "%u", (unsigned)o->port);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	err = evutil_getaddrinfo(o->bind, portstr, &hints, &made.ai);
	if (err != 0 || made.ai == NULL)
		return refuse("-b %s: not an address of this host (%s)",
		    o->bind, evutil_gai_strerror(err));
	mm->allow_exec = o->allow_exec;
	if (o->plan != NULL && (err = mm_plan_load(mm, o->plan, why,
	    sizeof why)) != 0)
		return refuse("%s%s", err == -2 ? "-P " : "", why);
	if (o->keyfile != NULL)
		return read_key(mm, o->keyfile);
	if (mmid_token_new(&mm->mmid) != 0) {
		fprintf(stderr, "mainmon: no random numbers for the token: "
		    "%s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static void
order_tick(void *arg)
{
	struct mm *mm = arg;

	if (mm_order_advance(mm, 1) != 0)
		mm->exit_code = 1;
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
relisten_cb(void *arg)
{
	struct mm *mm = arg;

	evconnlistener_enable(mm->listener);
	if (mm->door != NULL)
		evconnlistener_enable(mm->door);
}

/* A client on this host, through the local door: "local:PID", one source
 * for the admission limits (mm_auth.c), as 127.0.0.1 is. */
static void
door_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
	int salen, void *arg)
{
	struct ucred cr;
	socklen_t crlen = sizeof cr;
	char addr[64];

	(void)l;
	(void)sa;
	(void)salen;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0)
		snprintf(addr, sizeof addr, "local:%ld", (long)cr.pid);
	else
		snprintf(addr, sizeof addr, "local");
	mm_accept(arg, fd, addr);
}

/* An accept failed: out of descriptors (or memory), the listener rests
 * 100 ms rather than spin; logged once a minute at most. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	static time_t last;
	int e = errno;
	time_t now = time(NULL);

	(void)arg;
	if (now - last >= 60) {
		last = now;
		log_warn("cannot accept connections: %s%s", strerror(e),
		    e == EMFILE || e == ENFILE ? " (the listener rests 100 "
		    "ms each time; this line once a minute)" : "");
	}
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		evconnlistener_disable(l);
		(void)loop_arm(made.relisten, 100000000ull);
	}
}

static void
signal_cb(int sig, void *arg)
{
	struct mm *mm = arg;

	if (mm->stopping || mm->stop_wait != NULL) {
		/* A second signal: do not wait any longer.  What is not
		 * written was not acknowledged: the LMs keep it. */
		if (mm->stop_wait != NULL)
			log_warn("%s: ending without the final collection: "
			    "what is not written stays with the LMs",
			    sig == SIGTERM ? "SIGTERM" : "SIGINT");
		loop_exit(mm->base);
		return;
	}
	log_info("%s: final collection", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	mm_round(mm, NULL, MM_STOP, NULL);
}

/*
 * The local door beside the listener bound to sa (net/local.h): clients
 * on this host reach mainmon through it at a quarter of the TCP
 * loopback's cost.  Without it (its name taken) they use TCP: said.
 */
static void
door_open(struct mm *mm, const struct sockaddr *sa)
{
	char name[LOCAL_NAME_MAX];
	int fd;

	if (local_name(sa, name, sizeof name) != 0)
		return;
	fd = local_listen(sa, 128);
	if (fd >= 0 && (mm->door = evconnlistener_new(mm->base, door_cb, mm,
	    LEV_OPT_CLOSE_ON_FREE, -1, fd)) != NULL) {
		evconnlistener_set_error_cb(mm->door, accept_error_cb);
		log_debug("local door: @%s", name);
		return;
	}
	log_info("no local door (@%s: %s): clients on this host use TCP",
	    name, fd < 0 ? strerror(errno) : "out of memory");
	if (fd >= 0)
		close(fd);
}

/*
 * Binds the listening socket to the address resolved by opts_check, and
 * puts in mm->id the address LMs must reach: the bound one, in brackets if
 * IPv6, or this host's name when bound to every interface.  0, 2 if the
 * address is not this host's, or 1 (said).
 */
static int
listen_on(struct mm *mm, const struct mm_opts *o)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof ss;
	char host[INET6_ADDRSTRLEN + 8];
	unsigned port;
	int any;

	mm->listener = evconnlistener_new_bind(mm->base, accept_cb, mm,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    128, made.ai->ai_addr, (int)made.ai->ai_addrlen);
	if (mm->listener == NULL && errno == EADDRNOTAVAIL)
		return refuse("-b %s: not an address of this host (%s)",
		    o->bind, strerror(errno));
	if (mm->listener == NULL) {
		log_warn("cannot listen on %s port %u: %s", o->bind,
		    (unsigned)o->port, strerror(errno));
		return 1;
	}
	evconnlistener_set_error_cb(mm->listener, accept_error_cb);
	if (getsockname(evconnlistener_get_fd(mm->listener),
	    (struct sockaddr *)&ss, &sslen) != 0) {
		log_warn("getsockname: %s", strerror(errno));
		return 1;
	}
	door_open(mm, (struct sockaddr *)&ss);
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
		snprintf(mm->id, sizeof mm->id, "%s:%u", host, port);
	} else if (getnameinfo((struct sockaddr *)&ss, sslen, host,
	    sizeof host, NULL, 0, NI_NUMERICHOST) != 0) {
		log_warn("-b %s: cannot name the bound address", o->bind);
		return 1;
	} else if (ss.ss_family == AF_INET6)
		snprintf(mm->id, sizeof mm->id, "[%s]:%u", host, port);
	else
		snprintf(mm->id, sizeof mm->id, "%s:%u", host, port);
	return 0;
}

/*
 * The trace file: created new (O_EXCL: never through a link, never over
 * a file); with --force, under a random name beside it, renamed over the
 * old one by files_commit.  0, or 1 (said).
 */
static int
open_trace(struct mm *mm, const struct mm_opts *o)
{
	const char *path = o->out;
	int tries;

	for (tries = 0; o->force; tries++) {
		if (sfile_tmpname(o->out, made.out_tmp,
		    sizeof made.out_tmp) != 0) {
			log_warn("-o %s: no name for a new file beside it",
			    o->out);
			return 1;
		}
		path = made.out_tmp;
		if (mm_out_open(mm, path) == 0)
			break;
		if (mm->out != NULL || errno != EEXIST || tries == 8) {
			log_warn("-o %s: cannot create %s: %s", o->out, path,
			    strerror(errno));
			if (mm->out == NULL)	/* not ours to remove */
				made.out_tmp[0] = '\0';
			return 1;
		}
	}
	if (!o->force && mm_out_open(mm, path) != 0) {
		made.out_made = mm->out != NULL;
		log_warn("-o %s: cannot create it: %s%s", path,
		    strerror(errno), errno == EEXIST ? " (--force replaces "
		    "it)" : "");
		return 1;
	}
	made.out_made = 1;
	return 0;
}

/* The trace file and the identifier file (-i), whose line is also
 * printed on stdout.  0, or 1 (said; what was created is removed). */
static int
files_create(struct mm *mm, const struct mm_opts *o)
{
	char line[MMID_MAX + 1], why[4200];
	size_t len;

	/* The line with the token goes to stdout and the -i file only: the
	 * trace file, status and messages show HOST:PORT. */
	snprintf(mm->mmid.hostport, sizeof mm->mmid.hostport, "%s", mm->id);
	if (mmid_format(&mm->mmid, line, sizeof line - 1) != 0) {
		log_warn("identifier too long");
		return 1;
	}
	if (open_trace(mm, o) != 0)
		return 1;
	len = strlen(line);
	line[len++] = '\n';
	if (o->idfile != NULL &&
	    sfile_replace(o->idfile, line, len, why, sizeof why) != 0) {
		log_warn("-i %s: %s", o->idfile, why);
		hmac_wipe(line, sizeof line);
		return 1;
	}
	if (made.out_tmp[0] != '\0') {
		if (rename(made.out_tmp, o->out) != 0) {
			log_warn("-o %s: cannot replace it: %s", o->out,
			    strerror(errno));
			hmac_wipe(line, sizeof line);
			return 1;
		}
		made.out_tmp[0] = '\0';
	}
	fwrite(line, 1, len, stdout);
	fflush(stdout);
	hmac_wipe(line, sizeof line);
	return 0;
}

/*
 * The modules and the loop's events, on a new event base.  0, or 1
 * (said).
 */
static int
mm_start(struct mm *mm, const struct mm_opts *o)
{
	struct rlimit rl;

	/* A connection is a descriptor: as many as the system lets us. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	peer_keep_memory();
	signal(SIGPIPE, SIG_IGN);
	mm->sync_ns = (uint64_t)(o->sync_s * 1e9);
	mm->global = o->global;
	mm->pause_max_ms = (uint32_t)(o->pause_s * 1000);
	mm->silent_secs = (unsigned)o->silent_s;
	mm->order_wait_ns = (uint64_t)(o->order_wait_s * 1e9);
	mm->disk_wait_secs = (unsigned)o->disk_wait_s;
	mm->tape_flags = o->noindex ? TAPE_OPEN_NOIDX : 0;
	mm->order.max_bytes = (uint64_t)(o->order_mib * 1048576);
	mm->fmt = o->fmt;
	mm->auth_secs = (unsigned)o->auth_secs;
	if ((mm->out_path = strdup(o->out)) == NULL ||	/* grmctl file */
	    (mm->base = loop_new()) == NULL ||
	    mm_auth_init(mm) != 0 ||
	    (mm->order_ev = loop_timer(mm->base, order_tick, mm)) == NULL ||
	    mm_live_init(mm) != 0 ||
	    (made.relisten = loop_timer(mm->base, relisten_cb, mm)) == NULL ||
	    (made.sigterm = loop_signal(mm->base, SIGTERM, signal_cb,
	    mm)) == NULL ||
	    (made.sigint = loop_signal(mm->base, SIGINT, signal_cb,
	    mm)) == NULL) {
		log_warn("out of memory");
		return 1;
	}
	(void)loop_arm(made.sigterm, 0);
	(void)loop_arm(made.sigint, 0);
	return 0;
}

/* Until a stop, a second signal or an error; then what is held goes out
 * (ended by a signal without a stop). */
static void
mm_loop(struct mm *mm)
{
	loop_run(mm->base);
	mm->stopped = 1;
	if (mm->out != NULL && (mm_order_write(mm, UINT64_MAX) != 0 ||
	    mm_order_summary(mm) != 0))
		mm->exit_code = 1;
	/* What the writer's thread has too, acknowledged once written. */
	if (mm->out != NULL && tape_flush(mm->out) == 0)
		mm_order_acks(mm);
}

/* Undoes mm_start, listen_on and files_create, in reverse order; a
 * trace file made by a start that failed is removed. */
static void
mm_finish(struct mm *mm, const struct mm_opts *o, int failed)
{
	struct mm_node *n, *nn;

	while (mm->conns != NULL)
		mm_conn_free(mm->conns);
	mm_boost_stop(mm);
	if (mm->out != NULL && tape_close(mm->out) != 0)
		mm->exit_code = 1;
	mm->out = NULL;
	mm_out_finish(mm);
	mm_round_finish(mm);
	if (made.out_tmp[0] != '\0')
		unlink(made.out_tmp);
	else if (failed && made.out_made)
		unlink(o->out);
	if (mm->listener != NULL)
		evconnlistener_free(mm->listener);
	if (mm->door != NULL)
		evconnlistener_free(mm->door);
	if (made.ai != NULL)
		evutil_freeaddrinfo(made.ai);
	mm_order_free(mm);
	mm_causal_free(mm);
	mm_live_finish(mm);
	loop_ev_free(mm->global_ev);
	for (n = mm->nodes; n != NULL; n = nn) {
		nn = n->next;
		mm_node_free(n);
	}
	mm_defs_free(&mm->written);
	mm_stats_free(mm);
	mm_dedup_free(mm);
	mm_plan_free(mm);
	loop_ev_free(made.sigint);
	loop_ev_free(made.sigterm);
	loop_ev_free(made.relisten);
	loop_ev_free(mm->order_ev);
	mm_auth_finish(mm);
	loop_free(mm->base);
	free(mm->out_path);
	hmac_wipe(&mm->mmid, sizeof mm->mmid);
}

int
main(int argc, char **argv)
{
	struct mm_opts o;
	struct mm mm;
	int r;

	memset(&mm, 0, sizeof mm);
	if ((r = opts_parse(argc, argv, &o)) != 0)
		return r == 1 ? 0 : r;
	log_init("mainmon", o.debug ? GRM_LOG_DEBUG : GRM_LOG_WARN);
	if ((r = opts_check(&o, &mm)) != 0) {
		if (made.ai != NULL)
			evutil_freeaddrinfo(made.ai);
		mm_plan_free(&mm);
		return r;
	}
	if ((r = mm_start(&mm, &o)) == 0 && (r = listen_on(&mm, &o)) == 0 &&
	    (r = files_create(&mm, &o)) == 0)
		mm_loop(&mm);
	mm_finish(&mm, &o, r != 0);
	return r != 0 ? r : mm.exit_code;
}
