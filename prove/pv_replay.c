/* SPDX-License-Identifier: MIT */
/*
 * pv_replay.c: prove replay, BEE's event filer played back (seed 001
 * section 7.4.4): a trace's records sent into a running mainmon as if the
 * job were live, by one Local Monitor connection for each host of the
 * trace (doc/protocol.md section 1.12).  This file reads and paces;
 * pv_rp_send.c makes what is sent, pv_rp_link.c holds the connections.
 *
 * A pre-pass reads the trace once for its hosts and its span.  Then each
 * host gets a connection that authenticates and synchronises as an LM
 * does; once all are ready, the records are read again and sent at the
 * original pace (--speed 1), X times faster, or at once (--speed 0),
 * each stamped with the time it is sent at (its original spacing divided
 * by the speed; at speed 0 the original spacing, ending now).  Every
 * 50 ms each connection ends a collection (DONE) whose "sent below" time
 * is that of the next record not yet sent; reading waits while a
 * connection has much unwritten or unacknowledged.  At the end each
 * connection waits for its ACKs and says BYE.
 *
 * Failure: a connection lost or refused, or a trace that does not read,
 * ends the replay with status 1 (what mainmon acknowledged is in its
 * trace); a final collection (mainmon stopping) too, once acknowledged.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "pv_replay.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/num.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove replay FILE --to ID [--speed X]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nSends the trace's records into the running mainmon ID "
	    "(HOST:PORT:TOKEN, or\n@FILE holding it) as if the job were live: "
	    "one Local Monitor connection\nfor each host of the trace, "
	    "authenticated with the token, its processes,\nthreads, "
	    "definitions, records and losses.\n\n"
	    "  --to ID     the main monitor\n"
	    "  --speed X   1: the original pace (default); 10: ten times "
	    "faster; 0: as\n              fast as possible (times keep their "
	    "original spacing)\n\n"
	    "mainmon's own lines (#SYNC, #ORDER, #CONTROL, #STATS, ...) and "
	    "records\n(collection phases) are not sent: the receiving mainmon "
	    "writes its own.\nFILE must be a file (read twice), not standard "
	    "input.\n");
}

void
rp_fail(struct rp *rp, const char *fmt, const char *a, const char *b)
{
	if (!rp->failed) {
		fflush(stdout);
		fprintf(stderr, "prove replay: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	}
	rp->failed = 1;
	event_base_loopbreak(rp->base);
}

/* Our clock's time for trace time ts. */
uint64_t
rp_at(const struct rp *rp, uint64_t ts)
{
	double d = ts > rp->t0 ? (double)(ts - rp->t0) : 0;

	if (rp->speed > 0)
		d /= rp->speed;
	return rp->start + (uint64_t)d;
}

struct rp_node *
rp_node_of(struct rp *rp, uint32_t node)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].node == node)
			return &rp->nodes[i];
	return NULL;
}

/* A record's bytes, stamp left for later; -1 if it does not fit. */
static int
encode(struct rp_item *it, const struct grmtrace_ev *ev)
{
	size_t len = sizeof(struct rec_hdr), sl;
	uint32_t l32;
	unsigned i;

	for (i = 0; i < ev->n; i++) {
		if (ev->f[i].type != GRMTRACE_STRING) {
			if (len + 8 > REC_MAX)
				return -1;
			memcpy(it->rec + len, &ev->f[i].v, 8);
			len += 8;
			continue;
		}
		sl = ev->f[i].v.s.len;
		if (sl > REC_STR_MAX || len + rec_str_size(sl) > REC_MAX)
			return -1;
		l32 = (uint32_t)sl;
		memcpy(it->rec + len, &l32, 4);
		memcpy(it->rec + len + 4, ev->f[i].v.s.p, sl);
		memset(it->rec + len + 4 + sl, 0, rec_str_size(sl) - 4 - sl);
		len += rec_str_size(sl);
	}
	rec_put_hdr(it->rec, len, ev->def->cls, ev->def->attr, ev->eid, 0);
	it->len = len;
	return 0;
}

/* Reads the next line to send into rp->next.  1, 0 at the end, -1. */
static int
read_next(struct rp *rp)
{
	static const uint32_t what[] = {
		[GRMTRACE_PROC_START] = WIRE_PROC_START,
		[GRMTRACE_PROC_EXIT] = WIRE_PROC_EXIT,
		[GRMTRACE_PROC_KILLED] = WIRE_PROC_KILLED,
		[GRMTRACE_PROC_EXEC] = WIRE_PROC_EXEC,
		[GRMTRACE_PROC_GONE] = WIRE_PROC_GONE
	};
	const struct grmtrace_ev *ev;
	struct rp_item *it = &rp->next;
	int rc;

	while ((rc = grmtrace_next(rp->r, &ev)) == 1) {
		it->kind = ev->kind;
		it->node = ev->node;
		it->pid = ev->pid;
		it->tid = ev->tid;
		it->ts = ev->ts;
		it->def = ev->def;
		switch (ev->kind) {
		case GRMTRACE_RECORD:
			if (ev->pid == 0) {
				rp->skipped++;
				continue;
			}
			if (encode(it, ev) != 0) {
				rp->skipped++;
				continue;
			}
			return 1;
		case GRMTRACE_PROC:
			if (ev->how < 0 || ev->how > GRMTRACE_PROC_GONE)
				continue;	/* no such line is read */
			it->what = what[ev->how];
			it->ppid = ev->ppid;
			it->status = (uint32_t)ev->status;
			snprintf(it->name, sizeof it->name, "%.*s",
			    (int)ev->str_len, ev->str != NULL ? ev->str : "");
			return 1;
		case GRMTRACE_LOSS:
			it->count = ev->count;
			return 1;
		case GRMTRACE_STATS_COUNT:
		case GRMTRACE_STATS_RANGE:
			rp->stats++;
			continue;
		default:
			rp->control++;
			continue;
		}
	}
	if (rc < 0) {
		rp_fail(rp, "%s: %s", rp->path, grmtrace_error(rp->r));
		return -1;
	}
	return 0;
}

static int
congested(const struct rp *rp)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY &&
		    (peer_pending(rp->nodes[i].peer) > RP_PENDING_MAX ||
		    rp->nodes[i].unacked > RP_UNACKED_MAX))
			return 1;
	return 0;
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rp *rp = arg;
	uint64_t now = clk_mono_ns();
	unsigned n = 0;
	int rc;

	(void)fd;
	(void)what;
	if (rp->eof || rp->stopped)
		return;
	while (!congested(rp) && n < 100000) {
		if (!rp->has_next) {
			if ((rc = read_next(rp)) < 0)
				return;
			if (rc == 0) {
				rp->eof = 1;
				break;
			}
			rp->has_next = 1;
		}
		if (rp_at(rp, rp->next.ts) > now)
			break;
		rp->has_next = 0;
		if (rp_send_item(rp, &rp->next) != 0)
			return;
		n++;
	}
	if (rp->eof) {
		rp_flush_all(rp, clk_mono_ns());
		rp_finish(rp);
		return;
	}
	if (now - rp->last_flush >= RP_FLUSH_NS || n >= 100000)
		rp_flush_all(rp, now);
	event_add(rp->tick, &(struct timeval){ 0,
	    n >= 100000 ? 0 : RP_TICK_US });
}

void
rp_start(struct rp *rp)
{
	uint64_t now = clk_mono_ns();

	rp->started = 1;
	rp->began = now;
	/* At speed 0, the original spacing, ending now. */
	rp->start = rp->speed > 0 ? now : now - (rp->t1 - rp->t0) - 1;
	if (rp->speed == 0 && rp->t1 - rp->t0 >= now - 1)
		rp->start = 2;	/* spans more than our clock has run */
	rp->last_flush = now;
	event_add(rp->tick, &(struct timeval){ 0, 0 });
}

static int
node_cmp(const void *a, const void *b)
{
	const struct rp_node *x = a, *y = b;

	return pv_cmp(x->node, y->node);
}

/* The pre-pass: hosts, first and last record. */
static int
prepass(struct rp *rp)
{
	const struct grmtrace_host *h;
	const struct grmtrace_ev *ev;
	struct rp_node *n;
	int rc, any = 0;
	size_t i;

	/* The file's times, in their order: what a Local Monitor would
	 * send; a reader of the new trace corrects them again. */
	if ((rp->r = pv_open(rp->path)) == NULL)
		return -1;
	(void)grmtrace_raw_times(rp->r, 1);
	grmtrace_select(rp->r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	while ((rc = grmtrace_next(rp->r, &ev)) == 1) {
		if (ev->kind == GRMTRACE_RECORD && ev->pid == 0)
			continue;
		if (!any || ev->ts < rp->t0)
			rp->t0 = ev->ts;
		if (!any || ev->ts > rp->t1)
			rp->t1 = ev->ts;
		any = 1;
		if (rp_node_of(rp, ev->node) != NULL)
			continue;
		if ((n = realloc(rp->nodes, (rp->nnodes + 1) * sizeof *n)) ==
		    NULL) {
			fprintf(stderr, "prove replay: out of memory\n");
			return -1;
		}
		rp->nodes = n;
		n = &rp->nodes[rp->nnodes++];
		memset(n, 0, sizeof *n);
		n->node = ev->node;
	}
	if (rc < 0) {
		pv_fail(rp->path, rp->r);
		rp->r = NULL;
		return -1;
	}
	qsort(rp->nodes, rp->nnodes, sizeof *rp->nodes, node_cmp);
	for (i = 0; i < rp->nnodes; i++) {
		n = &rp->nodes[i];
		n->rp = rp;
		h = grmtrace_host(rp->r, n->node);
		if (h != NULL && h->hostname != NULL && h->hostname[0] != '\0')
			snprintf(n->host, sizeof n->host, "%s", h->hostname);
		else
			snprintf(n->host, sizeof n->host, "node%" PRIu32,
			    n->node);
	}
	grmtrace_close(rp->r);
	/* Read again, meta lines too, for the replay. */
	if ((rp->r = pv_open(rp->path)) == NULL)
		return -1;
	(void)grmtrace_raw_times(rp->r, 1);
	grmtrace_select(rp->r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS) | GRMTRACE_WANT(GRMTRACE_STATS_COUNT) |
	    GRMTRACE_WANT(GRMTRACE_STATS_RANGE) |
	    GRMTRACE_WANT(GRMTRACE_CONTROL));
	return any ? 0 : 1;
}

static void
rp_free(struct rp *rp)
{
	struct rp_thr *t;
	struct rp_proc *p;
	uint32_t it = 0, jt;
	size_t i;

	for (i = 0; i < rp->nnodes; i++) {
		if (rp->nodes[i].peer != NULL)
			peer_free(rp->nodes[i].peer);
		free(rp->nodes[i].dirty);
		jt = 0;
		while ((p = pv_map_next(&rp->nodes[i].procs, &jt)) != NULL) {
			pv_map_free(&p->defs, NULL);
			free(p->starts);
		}
		pv_map_free(&rp->nodes[i].procs, NULL);
	}
	while ((t = pv_map_next(&rp->threads, &it)) != NULL)
		free(t->buf);
	pv_map_free(&rp->threads, NULL);
	free(rp->nodes);
	if (rp->tick != NULL)
		event_free(rp->tick);
	grmtrace_close(rp->r);
}

int
pv_replay(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "speed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char idbuf[MMID_MAX], msgbuf[NUM_MSG_MAX];
	const char *to = NULL, *why;
	struct event *timeout = NULL;
	struct rp rp;
	double secs;
	int c, rc, status = 2;

	memset(&rp, 0, sizeof rp);
	rp.speed = 1;
	signal(SIGPIPE, SIG_IGN);
	while ((rc = pv_getopt(argc, argv, "replay", ":h", longopts, &c)) >
	    0) {
		switch (c) {
		case 'h':
			help();
			return pv_flush();
		case 't':
			to = optarg;
			break;
		case 's':
			if (num_parse_double(optarg, 0, 1e9, &rp.speed) != 0) {
				fprintf(stderr, "prove replay: %s\n",
				    num_msg(msgbuf, sizeof msgbuf, "--speed",
				    optarg, "a speed (0: as fast as "
				    "possible, 1: the original pace)"));
				return 2;
			}
			break;
		}
	}
	if (rc < 0 || optind != argc - 1 || to == NULL) {
		if (rc >= 0 && to == NULL)
			fprintf(stderr, "prove replay: --to ID is needed\n");
		usage(stderr);
		return 2;
	}
	rp.path = argv[optind];
	if (strcmp(rp.path, "-") == 0) {
		fprintf(stderr, "prove replay: the trace is read twice: give "
		    "a file, not standard input\n");
		return 2;
	}
	if (mmid_read(to, idbuf, sizeof idbuf, &why) != 0 ||
	    mmid_parse(idbuf, &rp.id, &why) != 0) {
		fprintf(stderr, "prove replay: --to %s: %s\n",
		    to[0] == '@' ? to : "ID", why);
		return 2;
	}
	status = 1;
	if ((rc = prepass(&rp)) != 0) {
		if (rc > 0) {
			printf("prove replay: %s: no record to replay\n",
			    rp.path);
			status = pv_flush();
		}
		goto out;
	}
	if ((rp.base = event_base_new()) == NULL ||
	    (rp.tick = evtimer_new(rp.base, tick_cb, &rp)) == NULL ||
	    (timeout = evtimer_new(rp.base, rp_ready_timeout, &rp)) == NULL) {
		fprintf(stderr, "prove replay: cannot make the event loop\n");
		goto out;
	}
	if (rp_connect(&rp, &rp.nodes[0]) != 0)
		goto out;
	event_add(timeout, &(struct timeval){ RP_READY_S, 0 });
	event_base_dispatch(rp.base);
	if (rp.failed)
		goto out;
	secs = (double)(clk_mono_ns() - rp.began) / 1e9;
	printf("prove replay: %" PRIu64 " records, %" PRIu64 " process "
	    "lines, %" PRIu64 " loss lines (%" PRIu64 " events) from %zu "
	    "hosts in %.3f s\n", rp.records, rp.procs, rp.losses, rp.lost,
	    rp.nnodes, secs);
	if (rp.skipped + rp.stats + rp.control > 0)
		printf("prove replay: not replayed: %" PRIu64 " records of "
		    "mainmon's own or too long, %" PRIu64 " #STATS lines, %"
		    PRIu64 " #CONTROL lines\n", rp.skipped, rp.stats,
		    rp.control);
	status = rp.stopped && !rp.eof ? 1 : pv_flush();
out:
	if (timeout != NULL)
		event_free(timeout);
	rp_free(&rp);
	if (rp.base != NULL)
		event_base_free(rp.base);
	return status;
}
