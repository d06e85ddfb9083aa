/* SPDX-License-Identifier: MIT */
/* pv_live.h: prove serve ID: following a running job semi-on-line, its
 * trace read as the Main Monitor collects it, and the pages following it
 * told of each collection (Server-Sent Events). */
#ifndef GRM_PV_LIVE_H
#define GRM_PV_LIVE_H

struct event_base;
struct evbuffer;
struct evhttp_request;
struct pv_idx;

struct pv_live;

/*
 * Starts following the Main Monitor of id (HOST:PORT:TOKEN, or @FILE
 * holding it, as grmctl takes it) on base: every every_s seconds a "live"
 * command (doc/protocol.md) makes it collect and say how much of its
 * trace file is whole; that much is read into x (empty: filled from the
 * first answer on); with window_s > 0, what ended window_s seconds before
 * the latest record is dropped from memory.  The first answer is waited
 * for (the loop of base runs until it comes): a bad identifier, a wrong
 * token, a Main Monitor not there fail here.  Later, a Main Monitor that
 * cannot be asked is away: asked again with a doubling wait (up to 30 s)
 * until one answers on the same identifier; a new file it names (grmctl
 * file, a restart) is read after the old one, both kept in x
 * (pv_idx_add_file).  Returns the follower, or
 * NULL after saying on stderr why.  x stays the caller's; it outlives the
 * follower.
 */
struct pv_live *pv_live_start(struct event_base *base, const char *id,
			      struct pv_idx *x, unsigned every_s,
			      unsigned window_s);
/* Answers req with the event stream of the follower (GET /api/live): an
 * "update" event now and after each collection read, a comment line
 * every few seconds; kept until the browser leaves. */
void pv_live_stream(struct pv_live *l, struct evhttp_request *req);
/* The follower's state as JSON (GET /api/follow); l may be NULL: not
 * following.  Returns 0, or -1 out of memory. */
int pv_live_state(const struct pv_live *l, struct evbuffer *out);
/* Ends the streams, closes the connection and the trace; l may be
 * NULL. */
void pv_live_free(struct pv_live *l);

#endif /* GRM_PV_LIVE_H */
