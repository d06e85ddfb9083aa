/* SPDX-License-Identifier: MIT */
/* mm_round.c: rounds: collections (snapshot, stop, stats, probe),
 * control changes and status, asked of every LM with a time limit, and
 * their answers once every LM answered, timed out or was given up. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

#define MM_COLLECT_TIMEOUT	60
/* How long a status round waits for the LMs' answers (then answers
 * with what it knows: within a second in all). */
#define MM_STATUS_TIMEOUT_US	800000
/* Seconds a global round waits for the LMs to stop their processes. */
#define MM_PAUSE_TIMEOUT	5

static void coll_start(struct mm *mm, struct mm_coll *co);
static int stop_wait(struct mm *mm, struct mm_coll *co);

static void
exit_after_flush(struct peer *p, void *arg)
{
	struct mm_conn *c = arg;

	(void)p;
	loop_exit(c->mm->base);
}

static void
coll_unlink(struct mm *mm, struct mm_coll *co)
{
	struct mm_coll **pp;

	for (pp = &mm->colls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == co) {
			*pp = co->next;
			break;
		}
}

static void
coll_free(struct mm_coll *co)
{
	loop_ev_free(co->timeout);
	free(co->pending);
	free(co->paused);
	free(co);
}

/* Answers co's requester with text (r != 0 or failed: as an error), or
 * with the statistics; a stop then ends mainmon once the answer is out. */
static void
coll_answer(struct mm *mm, struct mm_coll *co, int r, const char *failed,
	    char *text, size_t cap)
{
	struct mm_conn *c;
	char *big;

	if (r != 0 && mm->out != NULL) {
		snprintf(text, cap, "cannot write %s", mm->out_path);
		mm->exit_code = 1;
	}
	if (co->what == MM_STATS && r == 0 && failed == NULL) {
		if ((big = malloc(WIRE_TEXT_MAX + 1)) != NULL) {
			mm_stats_text(mm, big, WIRE_TEXT_MAX + 1);
			mm_ctl_reply(co->ctl, 0, big);
			free(big);
		} else
			mm_ctl_reply(co->ctl, 1, "out of memory");
	} else
		mm_ctl_reply(co->ctl, r != 0 || failed != NULL, text);
	if (co->stop) {
		/* An LM whose processes are stopped for a round still going
		 * lets them go when mainmon leaves: the phase ends in the
		 * file now, not never. */
		for (c = mm->conns; c != NULL; c = c->next)
			if (MM_IS_LM(c) && c->glob == MM_GL_STOPPED)
				mm_global_conn_gone(mm, c);
		/* Exit once the answer is out, or at once if nobody waits
		 * (mm_conn_free ends the loop if the requester goes). */
		mm->stopped = 1;
		mm->stop_ctl = co->ctl;
		if (co->ctl != NULL)
			peer_on_flushed(co->ctl->p, exit_after_flush);
		else
			loop_exit(mm->base);
	}
}

/* A control change is in effect: when the last LM applied it (never
 * before the request, whatever the clock estimates say), in the file. */
static void
control_done(struct mm *mm, struct mm_coll *co, const char *failed)
{
	char text[768];
	uint64_t at = co->t_applied > co->t0 ? co->t_applied : co->t0;
	int r;

	if (co->t_applied == 0)
		at = clk_mono_ns();
	snprintf(text, sizeof text, "%s: in effect%s%s at %llu (%.1f ms after "
	    "the request)", co->cmd, failed ? " except on " : "",
	    failed ? failed : "", (unsigned long long)at,
	    (double)(at - co->t0) / 1e6);
	if (failed == NULL && co->dropped[0] != '\0')
		snprintf(text + strlen(text), sizeof text - strlen(text),
		    "; given up: %s (it gets the change when it returns)",
		    co->dropped);
	r = mm->out != NULL ? mm_out_control(mm, at, co->cmd) : 0;
	coll_answer(mm, co, r, failed, text, sizeof text);
}

/* The status round is over (every LM answered, or its second passed):
 * the answer says what is known of each host. */
static void
status_done(struct mm *mm, struct mm_coll *co)
{
	char *big = malloc(WIRE_TEXT_MAX + 1);

	if (big == NULL) {
		mm_ctl_reply(co->ctl, 1, "out of memory");
		return;
	}
	mm_status_text(mm, big, WIRE_TEXT_MAX + 1);
	mm_ctl_reply(co->ctl, 0, big);
	free(big);
}

/* The plan's rows are in every LM that answered (a CONTROL sent behind
 * them came back): the answer is the one prepared, naming any host that
 * did not answer in time (it has the rows once it reads them). */
static void
plan_done(struct mm_coll *co, const char *failed)
{
	char text[600];

	snprintf(text, sizeof text, "%s%s%s", co->cmd, failed != NULL ?
	    "; not yet confirmed by " : "", failed != NULL ? failed : "");
	mm_ctl_reply(co->ctl, 0, text);
}

/* The final collection is written: the end lines, the hosts missing,
 * the file closed; text says so. */
static int
stop_close(struct mm *mm, const char *failed, char *text, size_t cap)
{
	uint64_t n = tape_records(mm->out);
	char missing[512];
	struct mm_conn *c;
	int r = 0;

	/* The final collection in the file (tape-w done), acknowledged:
	 * each LM exits on its ACK. */
	if (tape_flush(mm->out) != 0)
		r = -1;
	mm_order_acks(mm);
	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c))
			mm_write_sync(mm, c, 1);
	mm_live_missing(mm, missing, sizeof missing);
	if (r == 0)
		r = mm_order_summary(mm);
	if (r == 0)
		r = mm_stats_write(mm);
	if (tape_close(mm->out) != 0)
		r = -1;
	mm->out = NULL;
	snprintf(text, cap, "stopped: %llu records in %s%s%s%s",
	    (unsigned long long)n, mm->out_path,
	    failed ? "; no answer from " : "", failed ? failed : "", missing);
	return r;
}

/* The answer to "live" (a snapshot for a reader following the file,
 * doc/protocol.md): the round, the bytes of the file that hold every
 * collection so far (whole lines or frames), the records, the file's
 * absolute path; then what a snapshot says.  A host that did not answer
 * is said, not an error: what was collected is in the file. */
static void
live_answer(struct mm *mm, struct mm_coll *co, const char *said)
{
	char text[PATH_MAX + 1200], *abs;

	abs = realpath(mm->out_path, NULL);
	snprintf(text, sizeof text, "live %u %llu %llu %s\n%s", co->round,
	    (unsigned long long)tape_written(mm->out),
	    (unsigned long long)tape_records(mm->out),
	    abs != NULL ? abs : mm->out_path, said);
	free(abs);
	mm_ctl_reply(co->ctl, 0, text);
}

/* A collection round's answers are in: what the LMs had committed when
 * asked is written (and their own records, stamped with the scan's
 * time); a global round's processes go on while the file is synced.
 * A stop's that cannot all be written now waits for the disk, nothing
 * acknowledged (stop_wait): 1, co kept; else 0, co answered. */
static int
collection_done(struct mm *mm, struct mm_coll *co, const char *failed)
{
	char text[1024];
	uint64_t stopped_ns = 0, w;
	int r = 0;

	if (!co->final)
		mm->collections++;
	if (mm->out != NULL) {
		w = co->stop ? UINT64_MAX : mm_order_scanned(mm);
		r = mm_order_write(mm, w == UINT64_MAX ? w : w + 1);
	}
	if (co->stop && r == 0 && mm->out != NULL && mm->out_failed_ns != 0) {
		co->final = 1;
		snprintf(co->failed, sizeof co->failed, "%s",
		    failed != NULL ? failed : "");
		if (co->timeout != NULL)
			loop_disarm(co->timeout);
		if (stop_wait(mm, co) == 0)
			return 1;
		r = -1;		/* out of memory: the stop fails */
	}
	if (co->global) {
		stopped_ns = clk_mono_ns() - co->t_paused;
		mm_global_done(mm, co);
	}
	if (co->stop && mm->out != NULL) {
		if (stop_close(mm, failed, text, sizeof text) != 0)
			r = -1;
	} else if (mm->out == NULL) {
		r = -1;
		snprintf(text, sizeof text, "the trace file is closed");
	} else if (r == 0) {
		r = tape_collect(mm->out, co->round, clk_mono_ns());
		if (r == 0)
			r = tape_flush(mm->out);
		if (r == 0)
			mm_order_acks(mm);
		snprintf(text, sizeof text, "%s %u: %llu records in "
		    "%s%s%s", co->what == MM_PROBE ? "probe" : "snapshot",
		    co->round, (unsigned long long)tape_records(mm->out),
		    mm->out_path, failed ? "; no answer from " : "",
		    failed ? failed : "");
	}
	if (failed == NULL && co->dropped[0] != '\0')
		snprintf(text + strlen(text), sizeof text - strlen(text),
		    "; given up: %s (what it holds comes when it returns)",
		    co->dropped);
	if (co->note[0] != '\0')
		snprintf(text + strlen(text), sizeof text - strlen(text),
		    "%s", co->note);
	if (co->global)
		snprintf(text + strlen(text), sizeof text - strlen(text),
		    "; %llu processes stopped on %d hosts for %.1f ms%s%s",
		    (unsigned long long)co->stopped, co->npaused,
		    (double)stopped_ns / 1e6,
		    co->unpaused[0] ? "; not stopped on " : "", co->unpaused);
	if (r == 0 && strcmp(co->cmd, "live") == 0) {
		live_answer(mm, co, text);
		return 0;
	}
	coll_answer(mm, co, r, failed, text, sizeof text);
	return 0;
}

static void
coll_complete(struct mm *mm, struct mm_coll *co, const char *failed)
{
	coll_unlink(mm, co);
	if (co->what == MM_CONTROL)
		control_done(mm, co, failed);
	else if (co->what == MM_STATUS)
		status_done(mm, co);
	else if (co->what == MM_PLAN)
		plan_done(co, failed);
	else if (collection_done(mm, co, failed) != 0)
		return;		/* a stop waits for the disk: kept */
	coll_free(co);
}

/* Removes c from co's pending list; completes co when it empties. */
void
mm_coll_drop(struct mm *mm, struct mm_coll *co, struct mm_conn *c)
{
	int i;

	for (i = 0; i < co->npending; i++)
		if (co->pending[i] == c) {
			co->pending[i] = co->pending[--co->npending];
			if (co->npending > 0)
				return;
			/* Hosts given up (co->dropped) do not fail the
			 * round: their data comes when they return, late;
			 * the answer names them. */
			if (co->phase == MM_PH_PAUSE)
				mm_round_next(mm, co);
			else
				coll_complete(mm, co, NULL);
			return;
		}
}

void
mm_coll_give_up(struct mm *mm, struct mm_conn *c)
{
	struct mm_coll *co, *next;
	size_t k;
	int i;

	for (co = mm->colls; co != NULL; co = next) {
		next = co->next;
		for (i = 0; i < co->npending && co->pending[i] != c; i++)
			;
		if (i == co->npending || co->phase == MM_PH_WAIT)
			continue;
		k = strlen(co->dropped);
		snprintf(co->dropped + k, sizeof co->dropped - k, "%s%s",
		    k ? ", " : "", c->node->host);
		mm_coll_drop(mm, co, c);
	}
}

static void
coll_timeout(void *arg)
{
	struct mm_coll *co = arg;
	struct mm *mm = co->pending[0]->mm;
	char failed[300];
	int i;

	snprintf(failed, sizeof failed, "%s", co->dropped);
	for (i = 0; i < co->npending; i++)
		snprintf(failed + strlen(failed), sizeof failed -
		    strlen(failed), "%s%s", failed[0] ? ", " : "",
		    co->pending[i]->node->host);
	co->npending = 0;
	if (co->phase == MM_PH_PAUSE) {
		/* Collected all the same; the answer names them. */
		snprintf(co->unpaused, sizeof co->unpaused, "%s", failed);
		mm_round_next(mm, co);
		return;
	}
	coll_complete(mm, co, failed);
}

void
mm_send_control(struct mm *mm, struct mm_conn *c, uint32_t round)
{
	unsigned char *buf;
	struct wire_wr w;
	size_t cap = 64 + sizeof mm->ctl;
	unsigned i;

	buf = malloc(cap);
	if (buf == NULL)
		return;
	wire_wr_init(&w, buf, cap);
	wire_put_u32(&w, round);
	for (i = 0; i < 8; i++)
		wire_put_u32(&w, mm->ctl.cls_off[i]);
	wire_put_str(&w, mm->ctl.filter);
	wire_put_u32(&w, MM_CTL_WORDS);
	for (i = 0; i < MM_CTL_WORDS; i++)
		wire_put_u32(&w, mm->ctl.eid_off[i]);
	/* On its fire link if it has one: its firing thread applies it
	 * at once, whatever its loop is doing. */
	peer_send(mm_fire_of(mm, c), WIRE_CONTROL, buf, w.len, NULL, 0);
	free(buf);
}

/* Asks c for its part of round co. */
static void
coll_send(struct mm_conn *c, struct mm_coll *co)
{
	/* A plan's rows went first, on the same link (mm_fire_of): the
	 * control state sent behind them is acknowledged once they are in
	 * the segment too. */
	if (co->what == MM_CONTROL || co->what == MM_PLAN)
		mm_send_control(c->mm, c, co->round);
	else if (co->what == MM_STATUS)
		mm_send_u32s(c, WIRE_STATUS, co->round, 0, 1);
	else if (co->phase == MM_PH_PAUSE)
		mm_send_u32s(c, WIRE_PAUSE, co->round, c->mm->pause_max_ms, 2);
	else
		mm_send_collect(c, co->round,
		    (co->stop ? WIRE_COLLECT_STOP : 0) |
		    (co->what == MM_PROBE ? WIRE_COLLECT_PROBE : 0));
}

static void
coll_ask(struct mm_coll *co, struct mm_conn *c)
{
	struct mm_conn **np;

	np = realloc(co->pending, sizeof *np * (size_t)(co->npending + 1));
	if (np == NULL)
		return;
	co->pending = np;
	co->pending[co->npending++] = c;
	/* An LM still synchronising is asked when it becomes ready. */
	if (c->state == MM_CONN_READY)
		coll_send(c, co);
}

/* Sends c every collection it is pending in (it just became ready), and
 * adds it to the final one if a stop is under way. */
void
mm_round_ready(struct mm *mm, struct mm_conn *c)
{
	struct mm_coll *co;
	int i, found;

	for (co = mm->colls; co != NULL; co = co->next) {
		for (found = 0, i = 0; i < co->npending; i++)
			if (co->pending[i] == c)
				found = 1;
		if (found)
			coll_send(c, co);
		else if (co->stop)
			coll_ask(co, c);
	}
}

/* ---- a stop while the file cannot be written ----
 *
 * Stopping ends the LMs, and their segments with them: what mainmon
 * holds unwritten (nothing of it acknowledged) would be lost.  So the
 * stop waits, the LMs not told, until the file has been written again
 * for a second (mm_out_stalled), then goes on as any stop; or, after
 * --disk-wait seconds, fails: mainmon runs on, the LMs keep their data,
 * and the answer says why and how much mainmon holds.
 *
 * The disk can also fill while the final collection is written (the LMs
 * told, their processes recording nothing more): then mainmon neither
 * acknowledges it nor closes the file (an LM exits on the ACK of its
 * final collection, and with its connection), but waits in the same way
 * (co->final), writes the rest once the disk works, and completes the
 * stop; past the bound the stop fails as above, the LMs still holding
 * what is unwritten, and a later stop (or the disk coming back) writes
 * it. */

/* Bytes mainmon holds that the file does not (its merge, the writer). */
static uint64_t
held_unwritten(const struct mm *mm)
{
	return mm->order.bytes + (mm->out != NULL ?
	    (uint64_t)tape_unwritten(mm->out) : 0);
}

/* Why the file cannot be written, and since when. */
static void
disk_why(const struct mm *mm, char *text, size_t cap)
{
	int e = mm->out != NULL ? tape_error(mm->out) : 0;

	snprintf(text, cap, "cannot write %s%s%s (for %.1f s)",
	    mm->out_path, e ? ": " : "", e ? strerror(e) : "",
	    mm->out_failed_ns ? (double)(clk_mono_ns() -
	    mm->out_failed_ns) / 1e9 : 0.0);
}

static int
nlms(const struct mm *mm)
{
	const struct mm_conn *c;
	int n = 0;

	for (c = mm->conns; c != NULL; c = c->next)
		n += MM_IS_LM(c);
	return n;
}

/* The disk works again (the stop goes on), or the bound passed. */
static void
stop_wait_cb(void *arg)
{
	struct mm *mm = arg;
	struct mm_coll *co = mm->stop_wait;
	char why[600], text[1024];
	double waited;

	if (co == NULL)
		return;
	waited = (double)(clk_mono_ns() - co->t_wait) / 1e9;
	if (mm->out != NULL && mm->out_failed_ns != 0 &&
	    waited < mm->disk_wait_secs) {
		/* Woken early, and writes still fail: wait on. */
		(void)loop_arm(mm->stop_wait_ev, (mm->disk_wait_secs -
		    (unsigned)waited) * 1000000000ull);
		return;
	}
	mm->stop_wait = NULL;
	if (mm->out != NULL && mm->out_failed_ns != 0) {
		disk_why(mm, why, sizeof why);
		snprintf(text, sizeof text, "%s; not stopped after waiting "
		    "%.0f s, nothing lost: mainmon holds %llu bytes unwritten "
		    "and runs on, %d %s the rest; stop again once the "
		    "disk has room", why, waited,
		    (unsigned long long)held_unwritten(mm), nlms(mm),
		    nlms(mm) == 1 ? "LM keeps" : "LMs keep");
		if (co->final) {
			/* Its processes record nothing more; mainmon takes
			 * commands again, a stop among them. */
			snprintf(text + strlen(text), sizeof text -
			    strlen(text), " (the final collection had begun: "
			    "tracing has ended)");
			mm->stopping = 0;
		}
		log_warn("stop%s: %s", co->ctl == NULL ? " (signal)" : "",
		    text);
		mm_ctl_reply(co->ctl, 1, text);
		coll_free(co);
		return;
	}
	log_warn("the stop goes on: %s written again after %.1f s",
	    mm->out_path, waited);
	snprintf(co->note, sizeof co->note, " (after waiting %.1f s for the "
	    "disk)", waited);
	if (co->final) {
		/* The rest of the final collection, then the end. */
		if (collection_done(mm, co, co->failed[0] ? co->failed :
		    NULL) == 0)
			coll_free(co);
		return;
	}
	co->next = mm->colls;
	mm->colls = co;
	mm->stopping = 1;
	coll_start(mm, co);
}

/* co, a stop, waits for the file; 0, or -1 (out of memory). */
static int
stop_wait(struct mm *mm, struct mm_coll *co)
{
	char why[600];
	uint64_t waited;

	if (mm->stop_wait_ev == NULL &&
	    (mm->stop_wait_ev = loop_timer(mm->base, stop_wait_cb,
	    mm)) == NULL)
		return -1;
	mm->stop_wait = co;
	disk_why(mm, why, sizeof why);
	/* Written again, then failing again in the final collection: the
	 * bound counts from the first wait. */
	if (co->t_wait == 0)
		co->t_wait = clk_mono_ns();
	waited = (clk_mono_ns() - co->t_wait) / 1000000000ull;
	log_warn("stop%s: %s: waiting up to %u s for it to be written again "
	    "%s (mainmon holds %llu bytes unwritten, %d %s the rest)",
	    co->ctl == NULL ? " (signal)" : "", why, mm->disk_wait_secs,
	    co->final ? "to complete the final collection" :
	    "before the final collection",
	    (unsigned long long)held_unwritten(mm), nlms(mm),
	    nlms(mm) == 1 ? "LM keeps" : "LMs keep");
	(void)loop_arm(mm->stop_wait_ev, (waited < mm->disk_wait_secs ?
	    mm->disk_wait_secs - waited : 0) * 1000000000ull);
	return 0;
}

void
mm_round_disk_ok(struct mm *mm)
{
	/* From the loop, not from inside the write that worked. */
	if (mm->stop_wait != NULL)
		loop_soon(mm->stop_wait_ev);
}

void
mm_round_finish(struct mm *mm)
{
	if (mm->stop_wait != NULL)
		coll_free(mm->stop_wait);
	mm->stop_wait = NULL;
	loop_ev_free(mm->stop_wait_ev);
	mm->stop_wait_ev = NULL;
}

void
mm_round(struct mm *mm, struct mm_conn *ctl, enum mm_what what,
	 const char *cmd)
{
	struct mm_coll *co;
	int stop = what == MM_STOP;

	if (mm->stopping) {
		/* A plan's change is made: only its confirmation is not. */
		if (what == MM_PLAN)
			mm_ctl_reply(ctl, 0, cmd);
		else
			mm_ctl_reply(ctl, 1, "the main monitor is stopping");
		return;
	}
	if (stop && mm->stop_wait != NULL) {
		mm_ctl_reply(ctl, 1, "a stop already waits for the disk");
		return;
	}
	co = calloc(1, sizeof *co);
	if (co == NULL) {
		mm_ctl_reply(ctl, 1, "out of memory");
		return;
	}
	co->round = ++mm->next_round;
	co->stop = stop;
	co->what = what;
	co->t0 = clk_mono_ns();
	if (cmd != NULL)
		snprintf(co->cmd, sizeof co->cmd, "%s", cmd);
	co->ctl = ctl;
	if (stop && mm->out != NULL && mm->out_failed_ns != 0) {
		if (stop_wait(mm, co) != 0) {
			mm_ctl_reply(ctl, 1, "out of memory");
			coll_free(co);
		}
		return;
	}
	co->next = mm->colls;
	mm->colls = co;
	if (stop)
		mm->stopping = 1;
	/* The global scheme: a snapshot stops every process first, one
	 * such round at a time (the next waits its turn: mm_global_done). */
	if (what == MM_SNAPSHOT && mm->global) {
		co->phase = mm_global_busy(mm) ? MM_PH_WAIT : MM_PH_PAUSE;
		co->global = 1;
		if (co->phase == MM_PH_WAIT)
			return;
	}
	coll_start(mm, co);
}

/* Asks every LM for its part of co (the PAUSE first, for a global round
 * in that phase), with a time limit. */
static void
coll_start(struct mm *mm, struct mm_coll *co)
{
	struct mm_conn *c;

	co->t_asked = clk_mono_ns();
	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c)) {
			/* Collected now: a FULL before is answered. */
			if (co->phase == MM_PH_COLLECT &&
			    co->what != MM_STATUS && co->what != MM_CONTROL &&
			    co->what != MM_PLAN)
				if (c->glob == MM_GL_WANTS)
					c->glob = MM_GL_RUNS;
			/* One given up for not answering is asked, not
			 * waited for (mm_live.c). */
			if (c->order == MM_ORD_OUT && co->what != MM_STATUS)
				coll_send(c, co);
			else
				coll_ask(co, c);
		}
	if (co->npending == 0) {
		if (co->phase == MM_PH_PAUSE)
			mm_round_next(mm, co);
		else
			coll_complete(mm, co, NULL);
		return;
	}
	if (co->timeout == NULL)
		co->timeout = loop_timer(mm->base, coll_timeout, co);
	if (co->timeout == NULL)
		return;		/* out of memory: no time limit */
	/* A status answers within a second whatever an LM does; so does
	 * a plan's change. */
	if (co->what == MM_STATUS || co->what == MM_PLAN)
		(void)loop_arm(co->timeout, MM_STATUS_TIMEOUT_US * 1000ull);
	else
		(void)loop_arm(co->timeout, (co->phase == MM_PH_PAUSE ?
		    MM_PAUSE_TIMEOUT : MM_COLLECT_TIMEOUT) * 1000000000ull);
}

void
mm_round_next(struct mm *mm, struct mm_coll *co)
{
	if (co->phase == MM_PH_WAIT && mm->stopping) {
		/* Queued behind a round, and now mainmon stops. */
		mm_ctl_reply(co->ctl, 1, "the main monitor is stopping");
		coll_unlink(mm, co);
		coll_free(co);
		return;
	}
	if (co->phase == MM_PH_PAUSE)
		co->t_paused = clk_mono_ns();
	co->phase = co->phase == MM_PH_WAIT ? MM_PH_PAUSE : MM_PH_COLLECT;
	if (co->timeout != NULL)
		loop_disarm(co->timeout);
	coll_start(mm, co);
}

void
mm_status(struct mm *mm, struct mm_conn *ctl)
{
	mm_round(mm, ctl, MM_STATUS, NULL);
}

/* What grmctl status prints: the MM, then each host's LM. */
void
mm_status_text(struct mm *mm, char *text, size_t cap)
{
	char buf[600];
	uint64_t w;
	size_t n;

	n = (size_t)snprintf(text, cap, "main monitor %s\nfile %s: %llu "
	    "records, %llu collections, %llu events lost, %llu bytes sent "
	    "twice and dropped\n", mm->id, mm->out_path,
	    (unsigned long long)(mm->out != NULL ? tape_records(mm->out) : 0),
	    (unsigned long long)mm->collections,
	    (unsigned long long)mm->losses, (unsigned long long)mm->dup_bytes);
	if (n < cap)
		n += (size_t)snprintf(text + n, cap - n, "order: %llu bytes "
		    "held (at most %llu), %llu records late, %llu clamped, "
		    "%llu early writes for room; causality: %llu messages "
		    "matched, %llu received before sent (worst by %llu ns, "
		    "%llu beyond the clock bounds), %llu unchecked\n",
		    (unsigned long long)mm->order.bytes,
		    (unsigned long long)mm->order.bytes_max,
		    (unsigned long long)mm->order.late,
		    (unsigned long long)mm->order.clamped,
		    (unsigned long long)mm->order.forced,
		    (unsigned long long)mm->causal.checked,
		    (unsigned long long)mm->causal.violations,
		    (unsigned long long)mm->causal.worst,
		    (unsigned long long)mm->causal.beyond,
		    (unsigned long long)mm->causal.unchecked);
	if (n < cap && mm->out_failed_ns != 0) {
		mm_out_status(mm, buf, sizeof buf);
		n += (size_t)snprintf(text + n, cap - n, "file: %s; %llu bytes "
		    "held unwritten%s\n", buf[0] ? buf : "written again, "
		    "being watched", (unsigned long long)held_unwritten(mm),
		    mm->stop_wait != NULL ? "; a stop waits for it" : "");
	} else if (n < cap && mm->out != NULL &&
	    (w = tape_waiting(mm->out, clk_mono_ns())) >= 1000000000u)
		n += (size_t)snprintf(text + n, cap - n, "file: its writes "
		    "have waited %.1f s (a frozen, slow or failing disk); "
		    "%llu bytes held unwritten\n", (double)w / 1e9,
		    (unsigned long long)held_unwritten(mm));
	if (n < cap) {
		mm_global_status(mm, text + n, cap - n);
		n += strlen(text + n);
	}
	if (n < cap)
		n += mm_live_status(mm, text + n, cap - n);
	if (n < cap)
		n += mm_plan_list(mm, text + n, cap - n);
	if (n >= cap && cap > 16)
		memcpy(text + cap - 16, "\n(truncated)\n", 14);
}
