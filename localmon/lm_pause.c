/* SPDX-License-Identifier: MIT */
/*
 * lm_pause.c: the global collection scheme's stops (GRM paper §3.1).  When
 * mainmon asks (PAUSE), the LM stops every traced process of its host with
 * SIGSTOP, waits until the kernel shows them stopped, and answers with the
 * time (PAUSED); mainmon collects from every LM, then says RESUME, and the
 * LM sends SIGCONT.  A stop never outlives its reasons:
 *
 *	- the LM lets the processes go by itself when the round's time limit
 *	  passes, when the connection to mainmon ends, and when it exits;
 *	- the LM's guard process (lm_guard.c) is told each process before
 *	  it is stopped; if the LM dies (its end of the pipe closes), or the
 *	  time limit passes, or the guard is asked to end, it lets them go.
 *
 * SIGSTOP is invisible to the programs (no handler runs, no system call
 * fails with EINTR); a process that was already stopped (job control, a
 * debugger) is left as it is, and so never continued by us.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/rec.h"
#include "util/clock.h"
#include "util/log.h"

/* How long the LM waits for the kernel to show the processes stopped. */
#define STOP_WAIT_NS	200000000ull
/* The guard acts this much after the LM's own time limit, so that the LM,
 * if alive, is first (and says so to mainmon). */
#define GUARD_SLACK_NS	1000000000ull
#define PAUSE_DEFAULT_MS	10000u
/* After the processes are let go, "sent below" stays held back until
 * every thread stopped has run again (it commits what it was writing),
 * this long at most. */
#define RESUME_HOLD_NS	2000000000ull

static void tasks_note(struct lm_pause *ps);
static int hold_on(struct lm_pause *ps);

void
lm_pause_tick(struct lm *lm)
{
	struct lm_pause *ps = &lm->pause;
	uint32_t i;
	/* The guard lives on, or none is needed. */
	if ((!lm_guard_tick(lm) && lm->guard.pid != 0) || !ps->on)
		return;
	/* Processes are stopped: a new guard watches them, or, without
	 * one, they go. */
	if (lm->guard.pid == 0 && lm_guard_start(lm) != 0) {
		lm_resume(lm, REC_COLL_END_DEADLINE);
		return;
	}
	for (i = 0; i < ps->n; i++)
		lm_guard_send(lm, LM_GUARD_ADD, ps->pids[i], ps->t_begin +
		    ps->max_ns + GUARD_SLACK_NS);
}

/*
 * Whether every thread of pid is stopped (or dead): 1, 0 if one still
 * runs, -1 if there is no such process.
 */
static int
all_stopped(uint32_t pid)
{
	char path[64], buf[512], *p;
	struct dirent *d;
	DIR *dir;
	int r = 1;

	snprintf(path, sizeof path, "/proc/%u/task", pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while (r == 1 && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%u/task/%.20s/stat", pid,
		    d->d_name);
		if (lm_read_small(path, buf, sizeof buf) <= 0)
			continue;	/* that thread just ended */
		/* "tid (comm) S ...": the state follows the last ')'. */
		if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
			continue;
		if (strchr("TtZX", p[2]) == NULL)
			r = 0;
	}
	closedir(dir);
	return r;
}

/* Stops pid if it runs; counts it either way. */
static void
stop_one(struct lm *lm, uint32_t pid)
{
	struct lm_pause *ps = &lm->pause;
	struct lm_pstat st;
	uint32_t *np, i;

	if (pid == 0 || pid == (uint32_t)getpid())
		return;
	for (i = 0; i < ps->n; i++)
		if (ps->pids[i] == pid)
			return;
	if (lm_proc_stat(pid, &st) != 0 || st.state == 'Z' ||
	    st.state == 'X')
		return;			/* ended: nothing to stop */
	if (st.state == 'T' || st.state == 't') {
		ps->skipped++;		/* someone else's stop: theirs */
		return;
	}
	if (ps->n == ps->cap) {
		np = realloc(ps->pids, sizeof *np * (ps->cap ? 2 * ps->cap :
		    64));
		if (np == NULL) {
			ps->skipped++;
			return;
		}
		ps->pids = np;
		ps->cap = ps->cap ? 2 * ps->cap : 64;
	}
	/* The guard knows it first: then no moment exists where it is
	 * stopped and nobody would let it go. */
	if (lm_guard_send(lm, LM_GUARD_ADD, pid, clk_mono_ns() + ps->max_ns +
	    GUARD_SLACK_NS) != 0 || kill((pid_t)pid, SIGSTOP) != 0) {
		ps->skipped++;
		return;
	}
	ps->pids[ps->n++] = pid;
}

static void
stop_cb(struct lm *lm, uint32_t pid)
{
	stop_one(lm, pid);
}

static void
deadline_cb(void *arg)
{
	struct lm *lm = arg;

	log_warn("collection %u: processes stopped for %llu ms: let go "
	    "without the main monitor's word", lm->pause.round,
	    (unsigned long long)(lm->pause.max_ns / 1000000));
	lm_resume(lm, REC_COLL_END_DEADLINE);
}

static void
send_paused(struct lm *lm)
{
	struct lm_pause *ps = &lm->pause;
	unsigned char buf[28];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, ps->round);
	wire_put_u32(&w, ps->n);
	wire_put_u32(&w, ps->skipped);
	wire_put_u64(&w, ps->t_begin_h);
	wire_put_u64(&w, ps->took);
	peer_send(lm->mm, WIRE_PAUSED, buf, w.len, NULL, 0);
}

void
lm_pause_init(struct lm *lm)
{
	lm->pause.deadline = loop_timer(lm->base, deadline_cb, lm);
}

void
lm_pause_global(struct lm *lm)
{
	lm->global = 1;
	(void)lm_guard_start(lm);
}

void
lm_pause(struct lm *lm, uint32_t round, uint32_t max_ms)
{
	struct lm_pause *ps = &lm->pause;
	uint64_t t0, t0h, grace;
	uint32_t i, waiting;

	if (max_ms == 0)
		max_ms = PAUSE_DEFAULT_MS;
	if (max_ms > WIRE_PAUSE_MAX_MS)
		max_ms = WIRE_PAUSE_MAX_MS;
	if (ps->on) {
		/* Stopped already, for an earlier round: this one's now. */
		ps->round = round;
		send_paused(lm);
		return;
	}
	ps->round = round;
	ps->max_ns = (uint64_t)max_ms * 1000000u;
	ps->n = ps->skipped = 0;
	t0 = clk_mono_ns();
	/* Records read their time before the stop, commit after it.  A
	 * hold not over yet (a thread of the last stop has not run since)
	 * stays as low as it was. */
	t0h = lm_now(lm);
	grace = lm_clock_dur(lm, WIRE_ORDER_GRACE);
	if (!hold_on(ps) || t0h - grace < ps->hold_below)
		ps->hold_below = t0h > grace ? t0h - grace : 0;
	ps->hold_until = UINT64_MAX;
	if (lm_guard_start(lm) == 0)
		lm_clients_each(lm, stop_cb);
	else
		log_warn("collection %u: no guard process: the processes are "
		    "not stopped", round);
	/* SIGSTOP takes effect when each thread next enters the kernel:
	 * the phase begins once all show stopped. */
	do {
		for (waiting = 0, i = 0; i < ps->n; i++)
			waiting += all_stopped(ps->pids[i]) == 0;
		if (waiting == 0)
			break;
		usleep(50);
	} while (clk_mono_ns() - t0 < STOP_WAIT_NS);
	if (waiting > 0)
		log_warn("collection %u: %u processes not shown stopped after "
		    "%llu ms", round, waiting, STOP_WAIT_NS / 1000000);
	ps->t_begin = clk_mono_ns();
	ps->t_begin_h = lm_now(lm);
	ps->took = ps->t_begin - t0;
	tasks_note(ps);
	ps->on = 1;
	(void)loop_arm(ps->deadline, ps->max_ns);
	log_debug("collection %u: %u processes stopped in %llu us (%u not)",
	    round, ps->n, (unsigned long long)(ps->took / 1000), ps->skipped);
	send_paused(lm);
}

/*
 * How much thread tid of pid has run: ns on a CPU (from the scheduler's
 * /proc/PID/task/TID/sched, where the kernel has it; else 0) and context
 * switches (/proc/PID/task/TID/status).  -1 if the thread is gone.
 */
static int
task_run(uint32_t pid, uint32_t tid, uint64_t *run, uint64_t *sw)
{
	char path[80], buf[4096], *p;
	unsigned long long a, b;

	*run = *sw = 0;
	snprintf(path, sizeof path, "/proc/%u/task/%u/status", pid, tid);
	if (lm_read_small(path, buf, sizeof buf) <= 0)
		return -1;
	if ((p = strstr(buf, "\nvoluntary_ctxt_switches:")) != NULL &&
	    sscanf(p, "\nvoluntary_ctxt_switches: %llu "
	    "nonvoluntary_ctxt_switches: %llu", &a, &b) == 2)
		*sw = a + b;
	snprintf(path, sizeof path, "/proc/%u/task/%u/sched", pid, tid);
	if (lm_read_small(path, buf, sizeof buf) <= 0)
		return 0;
	if ((p = strstr(buf, "se.sum_exec_runtime")) != NULL &&
	    (p = strchr(p, ':')) != NULL && sscanf(p + 1, " %llu.%llu", &a,
	    &b) == 2)
		*run = a * 1000000u + b;	/* ms.ns, six digits */
	return 0;
}

/* Notes every thread of the stopped processes, and how much each ran. */
static void
tasks_note(struct lm_pause *ps)
{
	char path[64];
	struct dirent *d;
	struct lm_task *nt;
	uint32_t i, tid;
	DIR *dir;

	ps->ntasks = 0;
	for (i = 0; i < ps->n; i++) {
		snprintf(path, sizeof path, "/proc/%u/task", ps->pids[i]);
		if ((dir = opendir(path)) == NULL)
			continue;
		while ((d = readdir(dir)) != NULL) {
			if ((tid = (uint32_t)strtoul(d->d_name, NULL, 10)) == 0)
				continue;
			if (ps->ntasks == ps->captasks) {
				nt = realloc(ps->tasks, sizeof *nt *
				    (ps->captasks ? 2 * ps->captasks : 64));
				if (nt == NULL)
					break;	/* the time limit will do */
				ps->tasks = nt;
				ps->captasks = ps->captasks ?
				    2 * ps->captasks : 64;
			}
			nt = &ps->tasks[ps->ntasks];
			nt->pid = ps->pids[i];
			nt->tid = tid;
			if (task_run(nt->pid, tid, &nt->run,
			    &nt->switches) == 0)
				ps->ntasks++;
		}
		closedir(dir);
	}
}

/* Whether every thread noted has run since (or is gone). */
static int
tasks_ran(const struct lm_pause *ps)
{
	uint64_t run, sw;
	uint32_t i;

	for (i = 0; i < ps->ntasks; i++)
		if (task_run(ps->tasks[i].pid, ps->tasks[i].tid, &run,
		    &sw) == 0 && sw <= ps->tasks[i].switches &&
		    (run == 0 || run <= ps->tasks[i].run))
			return 0;
	return 1;
}

/* Ends the hold once every thread stopped has run again (or its time
 * is up); whether one is still on. */
static int
hold_on(struct lm_pause *ps)
{
	if (ps->hold_until != 0 && !ps->on &&
	    (clk_mono_ns() >= ps->hold_until || tasks_ran(ps)))
		ps->hold_until = 0;	/* every thread went on */
	return ps->hold_until != 0;
}

uint64_t
lm_pause_below(struct lm *lm, uint64_t below)
{
	struct lm_pause *ps = &lm->pause;

	if (!hold_on(ps) || below <= ps->hold_below)
		return below;
	return ps->hold_below > WIRE_BELOW_REPLAY ? ps->hold_below :
	    WIRE_BELOW_REPLAY + 1;
}

void
lm_pause_attached(struct lm *lm, uint32_t pid)
{
	if (lm->pause.on)
		stop_one(lm, pid);
}

void
lm_resume(struct lm *lm, unsigned why)
{
	struct lm_pause *ps = &lm->pause;
	unsigned char buf[24];
	struct wire_wr w;
	uint64_t t_end;

	if (!ps->on)
		return;
	t_end = clk_mono_ns();
	lm_cont_all(ps->pids, ps->n);
	lm_guard_send(lm, LM_GUARD_CLEAR, 0, 0);
	ps->on = 0;
	ps->hold_until = t_end + RESUME_HOLD_NS;
	loop_disarm(ps->deadline);
	log_debug("collection %u: %u processes let go after %llu us", ps->round,
	    ps->n, (unsigned long long)((t_end - ps->t_begin) / 1000));
	if (lm->mm != NULL && lm->mm_state == LM_LINK_READY) {
		wire_wr_init(&w, buf, sizeof buf);
		wire_put_u32(&w, ps->round);
		wire_put_u32(&w, ps->n);
		wire_put_u32(&w, why);
		wire_put_u64(&w, lm_now(lm));
		peer_send(lm->mm, WIRE_RESUMED, buf, w.len, NULL, 0);
	}
	ps->n = 0;
	/* The round freed what it wrote: still below the threshold (the
	 * writers filled more than it could free), another is due. */
	lm->full_sent = 0;
	if (why == REC_COLL_END_ASKED && lm_below_threshold(lm))
		lm_threshold(lm);
}

void
lm_pause_end(struct lm *lm)
{
	struct lm_pause *ps = &lm->pause;

	lm_resume(lm, REC_COLL_END_EXIT);
	lm_guard_end(lm);
	loop_ev_free(ps->deadline);
	ps->deadline = NULL;
	free(ps->pids);
	ps->pids = NULL;
	ps->cap = 0;
	free(ps->tasks);
	ps->tasks = NULL;
	ps->ntasks = ps->captasks = 0;
}
