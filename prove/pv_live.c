/* SPDX-License-Identifier: MIT */
/* pv_live.c: prove serve ID, following a running job semi-on-line: every
 * few seconds a "live" command to the Main Monitor (authenticated as
 * grmctl is) makes it collect and answer how much of its trace file is
 * whole; the reader goes on up to there (grmtrace_limit), the records go
 * into the index, and the pages following are told (Server-Sent Events
 * on evhttp: a chunked reply kept open).  A Main Monitor away is asked
 * again, less and less often, until one answers on its identifier. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "net/auth.h"
#include "net/mmid.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/sha256.h"

#include "pv_idx.h"
#include "pv_live.h"

/* Seconds between comment lines on an event stream: well inside the
 * server's connection timeout (20 s), which would cut an idle stream. */
#define LIVE_KEEP_S	5
/* Seconds a collection may take before the Main Monitor is taken as
 * gone (it waits a minute for its Local Monitors, then answers). */
#define LIVE_WAIT_S	90
/* Seconds between requests to a Main Monitor away, at most: the wait
 * doubles from --every up to this. */
#define LIVE_BACKOFF_MAX_S	30
/* Pages following at once. */
#define LIVE_CLIENTS_MAX	64

enum live_state {
	LIVE_FOLLOWING,		/* collections come */
	LIVE_AWAY,		/* the Main Monitor does not answer: asked
				   again, less and less often, until one on
				   the same identifier does */
	LIVE_ENDED,		/* the trace is complete (#END) */
	LIVE_FAILED		/* the file cannot be read on */
};

static const char *const state_name[] = {
	"following", "away", "ended", "failed"
};

struct live_client {
	struct pv_live			*l;
	struct evhttp_request		*req;
	LIST_ENTRY(live_client)		next;
};

struct pv_live {
	struct event_base	*base;
	struct pv_idx		*x;
	struct mmid		id;		/* the token kept: asked again */
	unsigned		every_s;
	uint64_t		window_ns;
	struct peer		*p;		/* a request under way */
	struct auth_client	auth;
	int			authed;
	struct event		*tick;		/* the next request */
	struct event		*keep;		/* comment lines */
	struct event		*wait;		/* no answer in time */
	struct grmtrace		*t;		/* the file, read so far */
	char			*path;
	uint64_t		offset;		/* whole up to here */
	uint32_t		round;
	unsigned		away;		/* requests failed in a row */
	unsigned		wait_s;		/* to the next request */
	uint64_t		collections;	/* answers read */
	double			read_s;		/* seconds reading them */
	double			bee_s;		/* seconds growing BEE's tables */
	int			bee_said;	/* that they could not be */
	enum live_state		state;
	int			first;		/* the first answer came */
	int			done;		/* the first request ended */
	char			msg[1024];	/* said to the pages */
	LIST_HEAD(, live_client) clients;
	unsigned		nclients;
};

static void ask(struct pv_live *l);

/* ---- the pages following: Server-Sent Events ---- */

static void
send_all(struct pv_live *l, const char *s, size_t n)
{
	struct live_client *c;
	struct evbuffer *b;

	LIST_FOREACH(c, &l->clients, next) {
		if ((b = evbuffer_new()) == NULL)
			return;
		evbuffer_add(b, s, n);
		evhttp_send_reply_chunk(c->req, b);
		evbuffer_free(b);
	}
}

int
pv_live_state(const struct pv_live *l, struct evbuffer *out)
{
	const struct pv_idx *x;

	if (l == NULL)
		return evbuffer_add_printf(out, "{\"live\":false}\n") < 0 ?
		    -1 : 0;
	x = l->x;
	evbuffer_add_printf(out, "{\"live\":true,\"mm\":");
	pv_json_str(out, l->id.hostport, strlen(l->id.hostport));
	evbuffer_add_printf(out, ",\"state\":\"%s\",\"records\":%" PRIu64
	    ",\"first\":\"%" PRIu64 "\",\"last\":\"%" PRIu64 "\",\"round\":%"
	    PRIu32 ",\"offset\":%" PRIu64 ",\"collections\":%" PRIu64
	    ",\"read_s\":%.3f,\"bee_s\":%.3f,\"bee_full\":%" PRIu64
	    ",\"window_s\":%.0f,\"cut\":\"%" PRIu64
	    "\",\"index_bytes\":%zu,\"message\":", state_name[l->state],
	    x->records, x->first, x->tend, l->round, l->offset,
	    l->collections, l->read_s, l->bee_s, x->bee_full, (double)l->window_ns / 1e9, x->cut,
	    x->bytes);
	pv_json_str(out, l->msg, strlen(l->msg));
	evbuffer_add_printf(out, ",\"away\":%u,\"retry_s\":%u,\"file\":",
	    l->away, l->state == LIVE_AWAY ? l->wait_s : 0);
	pv_json_str(out, l->path != NULL ? l->path : "",
	    l->path != NULL ? strlen(l->path) : 0);
	return evbuffer_add_printf(out, "}\n") < 0 ? -1 : 0;
}

/* Tells every page following what is new. */
static void
tell(struct pv_live *l)
{
	struct evbuffer *b, *j;
	size_t n;

	if (LIST_EMPTY(&l->clients))
		return;
	if ((b = evbuffer_new()) == NULL || (j = evbuffer_new()) == NULL) {
		evbuffer_free(b);
		return;
	}
	if (pv_live_state(l, j) == 0) {
		n = evbuffer_get_length(j);
		evbuffer_add_printf(b, "event: update\ndata: ");
		evbuffer_add(b, evbuffer_pullup(j, -1), n > 0 ? n - 1 : 0);
		evbuffer_add(b, "\n\n", 2);
		n = evbuffer_get_length(b);
		send_all(l, (const char *)evbuffer_pullup(b, -1), n);
	}
	evbuffer_free(j);
	evbuffer_free(b);
}

static void
on_keep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	send_all(arg, ": keep\n\n", 8);
}

/* The browser left (or the connection timed out): forget it.  libevent
 * 2.1 detaches a request still being answered from a connection that
 * closes (its connection then NULL) and leaves it to the answer's end to
 * free: ended here. */
static void
on_left(struct evhttp_connection *evcon, void *arg)
{
	struct live_client *c = arg;

	(void)evcon;
	if (evhttp_request_get_connection(c->req) == NULL)
		evhttp_send_reply_end(c->req);
	LIST_REMOVE(c, next);
	c->l->nclients--;
	free(c);
}

void
pv_live_stream(struct pv_live *l, struct evhttp_request *req)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct live_client *c;

	if (l->nclients >= LIVE_CLIENTS_MAX ||
	    (c = calloc(1, sizeof *c)) == NULL) {
		evhttp_send_error(req, 503, "Too many pages following");
		return;
	}
	c->l = l;
	c->req = req;
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_send_reply_start(req, 200, "OK");
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    on_left, c);
	LIST_INSERT_HEAD(&l->clients, c, next);
	l->nclients++;
	tell(l);
}

/* ---- reading the file ---- */

/* Reads t on to its limit into the index, drops what is older than the
 * window, and makes the index whole again.  0, or -1 (said in msg). */
static int
read_on(struct pv_live *l)
{
	struct pv_idx *x = l->x;
	struct timespec a, b;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if ((rc = pv_idx_feed(x, l->t)) == -1) {
		snprintf(l->msg, sizeof l->msg, "%s: %s", l->path,
		    grmtrace_error(l->t));
		return -1;
	}
	if (rc == 0 && l->window_ns > 0 && x->last > l->window_ns &&
	    pv_idx_trim(x, x->last - l->window_ns) != 0)
		rc = -2;
	if (rc != 0 || pv_idx_finish(x, l->t) != 0) {
		pv_bee_free(x);		/* they would point at the old arrays */
		snprintf(l->msg, sizeof l->msg, "out of memory");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	l->read_s += (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	/* BEE's tables grown with the index (made again from what changed):
	 * without them (out of memory) the views read the files. */
	if (pv_bee_update(x) != 0 && !l->bee_said) {
		l->bee_said = 1;
		fprintf(stderr, "prove serve: out of memory for the tables of "
		    "BEE's views: they are read from the files\n");
	}
	x->bytes += x->bee_bytes;
	clock_gettime(CLOCK_MONOTONIC, &a);
	l->bee_s += (double)(a.tv_sec - b.tv_sec) +
	    (double)(a.tv_nsec - b.tv_nsec) / 1e9;
	return 0;
}

/* The file is whole up to off at path: read on to there (the rest of
 * the one before first, if the Main Monitor moved to a new file).
 * off 0: to the end of the file.  0, or -1 (said in msg). */
static int
read_to(struct pv_live *l, const char *path, uint64_t off)
{
	char err[256];
	char *p;

	if (l->t != NULL && strcmp(path, l->path) != 0) {
		grmtrace_limit(l->t, 0);
		l->x->limit = 0;
		if (read_on(l) != 0)
			return -1;
		/* The records of this file are found again there. */
		if (pv_idx_add_file(l->x, path, l->t) != 0) {
			snprintf(l->msg, sizeof l->msg, "out of memory");
			return -1;
		}
		grmtrace_close(l->t);
		l->t = NULL;
	}
	if (l->t == NULL) {
		if ((p = strdup(path)) == NULL) {
			snprintf(l->msg, sizeof l->msg, "out of memory");
			return -1;
		}
		free(l->path);
		l->path = p;
		if (l->x->path == NULL && pv_idx_begin(l->x, path) != 0) {
			snprintf(l->msg, sizeof l->msg, "out of memory");
			return -1;
		}
		if ((l->t = pv_topen(path, err, sizeof err)) == NULL) {
			snprintf(l->msg, sizeof l->msg, "%s (prove serve ID "
			    "reads the file the Main Monitor writes: run it "
			    "where that file is)", err);
			return -1;
		}
	}
	grmtrace_limit(l->t, off);
	l->x->limit = off;
	if (off != 0)
		l->offset = off;
	return read_on(l);
}

/* ---- asking the Main Monitor ---- */

static void
end_request(struct pv_live *l)
{
	if (l->p != NULL)
		peer_free(l->p);
	l->p = NULL;
	l->authed = 0;
	event_del(l->wait);
	l->done = 1;
}

/* Asks again in secs seconds (said in wait_s). */
static void
ask_in(struct pv_live *l, unsigned secs)
{
	l->wait_s = secs;
	event_del(l->tick);
	event_add(l->tick, &(struct timeval){ secs, 0 });
}

/* The Main Monitor cannot be asked (why): the first time, following
 * fails.  Later it is away (killed, restarting, out of reach): unless it
 * may still be writing (dead 0: it did not answer in time, or answered
 * a status 1 such as "the main monitor is stopping"), the file is read
 * to its end; a complete trace ends following; else it is asked
 * again, the wait doubling from --every up to LIVE_BACKOFF_MAX_S, until
 * a Main Monitor on the same identifier answers (mainmon -k: its new
 * file is then followed).  The pages are told. */
static void
gone(struct pv_live *l, const char *why, int dead)
{
	char said[256];
	unsigned secs, k;

	end_request(l);
	snprintf(said, sizeof said, "%s", why);
	if (!l->first) {
		snprintf(l->msg, sizeof l->msg, "%s", said);
		return;
	}
	if (dead && l->t != NULL && read_to(l, l->path, 0) != 0) {
		l->state = LIVE_FAILED;
		event_del(l->tick);
	} else if (l->x->ended) {
		l->state = LIVE_ENDED;
		event_del(l->tick);
		snprintf(l->msg, sizeof l->msg, "main monitor %s: %.200s; the "
		    "trace is complete", l->id.hostport, said);
	} else {
		l->state = LIVE_AWAY;
		l->away++;
		for (secs = l->every_s, k = 1; k < l->away &&
		    secs < LIVE_BACKOFF_MAX_S; k++)
			secs = secs * 2 > LIVE_BACKOFF_MAX_S ?
			    LIVE_BACKOFF_MAX_S : secs * 2;
		ask_in(l, secs);
		snprintf(l->msg, sizeof l->msg, "main monitor %s away: %.200s; "
		    "showing what was collected, asking again in %u s",
		    l->id.hostport, said, secs);
	}
	if (l->away <= 1 || l->state != LIVE_AWAY)
		fprintf(stderr, "prove serve: %s\n", l->msg);
	tell(l);
}

/* The answer to "live": "live ROUND OFFSET RECORDS PATH", then what a
 * snapshot says. */
static void
answer(struct pv_live *l, uint32_t st, const char *text)
{
	unsigned long long off, recs;
	unsigned round;
	int n = 0;
	char path[4096];
	const char *rest;

	if (st != 0) {
		gone(l, text, 0);
		return;
	}
	if (sscanf(text, "live %u %llu %llu %n", &round, &off, &recs,
	    &n) != 3 || n == 0) {
		gone(l, "not an answer to live (a main monitor of an older "
		    "version?)", 1);
		return;
	}
	rest = text + n;
	n = (int)strcspn(rest, "\n");
	if (n == 0 || (size_t)n >= sizeof path) {
		gone(l, "no file in the answer to live", 1);
		return;
	}
	memcpy(path, rest, (size_t)n);
	path[n] = '\0';
	end_request(l);
	l->round = round;
	if (l->away > 0 && l->state == LIVE_AWAY) {
		/* Back (a Main Monitor on the same identifier). */
		l->away = 0;
		l->state = LIVE_FOLLOWING;
		ask_in(l, l->every_s);
	}
	if (read_to(l, path, off) != 0) {
		l->state = LIVE_FAILED;
		event_del(l->tick);
		fprintf(stderr, "prove serve: %s\n", l->msg);
	} else {
		l->first = 1;
		l->collections++;
		snprintf(l->msg, sizeof l->msg, "collection %u: %llu records "
		    "in the file", round, recs);
		if (l->x->ended) {
			l->state = LIVE_ENDED;
			event_del(l->tick);
		}
	}
	tell(l);
}

static void
dispatch(struct peer *p, uint16_t type, struct wire_rd *msg, const char *why,
	 void *arg)
{
	struct pv_live *l = arg;
	unsigned char buf[64];
	char text[WIRE_TEXT_MAX + 1], bad[160];
	struct wire_wr w;
	uint32_t st, node;

	if (msg == NULL) {
		gone(l, why, 1);
		return;
	}
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_CTL, l->authed ?
	    WIRE_ST_READY : WIRE_ST_AUTH, wire_rd_left(msg), bad,
	    sizeof bad) != 0) {
		gone(l, bad, 1);
		return;
	}
	if (!l->authed) {
		switch (peer_auth(p, &l->auth, type, msg, &node, text,
		    sizeof text)) {
		case AUTH_MORE:
			return;
		case AUTH_OK:
			l->authed = 1;
			wire_wr_init(&w, buf, sizeof buf);
			wire_put_str(&w, "live");
			peer_send(p, WIRE_CTL, buf, w.len, NULL, 0);
			return;
		case AUTH_REFUSED:
		case AUTH_DENIED:
			snprintf(bad, sizeof bad, "refused: %.140s", text);
			gone(l, bad, 1);
			return;
		case AUTH_IMPOSTOR:
			gone(l, "not the main monitor we were given: it did "
			    "not prove the token", 1);
			return;
		default:
			gone(l, "unexpected message during authentication", 1);
			return;
		}
	}
	if (type != WIRE_CTL_REPLY)
		return;
	st = wire_get_u32(msg);
	wire_get_str(msg, text, sizeof text);
	if (!wire_rd_end(msg)) {
		gone(l, "malformed reply", 1);
		return;
	}
	answer(l, st, text);
}

static void
on_wait(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	gone(arg, "no answer in time", 0);
}

/* Asks for a collection, unless one is under way. */
static void
ask(struct pv_live *l)
{
	const char *why = NULL;

	if (l->p != NULL)
		return;
	l->done = 0;
	if ((l->p = peer_connect(l->base, l->id.hostport, dispatch, l,
	    &why)) == NULL) {
		gone(l, why != NULL ? why : "cannot connect", 1);
		return;
	}
	if (peer_send_hello(l->p, &l->auth, l->id.token, WIRE_ROLE_CTL,
	    0) != 0) {
		gone(l, "cannot start the handshake", 1);
		return;
	}
	event_add(l->wait, &(struct timeval){ LIVE_WAIT_S, 0 });
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ask(arg);
}

struct pv_live *
pv_live_start(struct event_base *base, const char *id, struct pv_idx *x,
	      unsigned every_s, unsigned window_s)
{
	struct pv_live *l;
	char line[MMID_MAX];
	const char *why;

	if ((l = calloc(1, sizeof *l)) == NULL) {
		fprintf(stderr, "prove serve: out of memory\n");
		return NULL;
	}
	LIST_INIT(&l->clients);
	l->base = base;
	l->x = x;
	l->every_s = every_s;
	l->window_ns = (uint64_t)window_s * 1000000000u;
	if (mmid_read(id, line, sizeof line, &why) != 0 ||
	    mmid_parse(line, &l->id, &why) != 0) {
		hmac_wipe(line, sizeof line);
		fprintf(stderr, "prove serve: %s: not a main monitor "
		    "identifier: %s\n", id[0] == '@' ? id : "ID", why);
		free(l);
		return NULL;
	}
	hmac_wipe(line, sizeof line);
	if ((l->tick = event_new(base, -1, EV_PERSIST, on_tick, l)) == NULL ||
	    (l->keep = event_new(base, -1, EV_PERSIST, on_keep, l)) == NULL ||
	    (l->wait = evtimer_new(base, on_wait, l)) == NULL) {
		fprintf(stderr, "prove serve: out of memory\n");
		pv_live_free(l);
		return NULL;
	}
	ask(l);
	while (!l->done && event_base_loop(base, EVLOOP_ONCE) == 0)
		continue;
	if (!l->first) {
		fprintf(stderr, "prove serve: %s: %s\n", l->id.hostport,
		    l->msg);
		pv_live_free(l);
		return NULL;
	}
	if (l->state == LIVE_FOLLOWING)
		ask_in(l, every_s);
	event_add(l->keep, &(struct timeval){ LIVE_KEEP_S, 0 });
	return l;
}

void
pv_live_free(struct pv_live *l)
{
	struct live_client *c;

	if (l == NULL)
		return;
	while ((c = LIST_FIRST(&l->clients)) != NULL) {
		LIST_REMOVE(c, next);
		evhttp_connection_set_closecb(
		    evhttp_request_get_connection(c->req), NULL, NULL);
		evhttp_send_reply_end(c->req);
		free(c);
	}
	if (l->p != NULL)
		peer_free(l->p);
	if (l->tick != NULL)
		event_free(l->tick);
	if (l->keep != NULL)
		event_free(l->keep);
	if (l->wait != NULL)
		event_free(l->wait);
	grmtrace_close(l->t);
	free(l->path);
	hmac_wipe(&l->id, sizeof l->id);
	free(l);
}
