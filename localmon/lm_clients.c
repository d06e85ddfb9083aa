/* SPDX-License-Identifier: MIT */
/* lm_clients.c: the LM's Unix socket: handshakes with traced processes,
 * their push notes, and their deaths. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "lm.h"
#include "net/wire.h"
#include "shm/lmproto.h"
#include "util/clock.h"
#include "util/log.h"

struct lm_client {
	struct lm		*lm;
	struct bufferevent	*bev;
	struct lm_client	*next;
	uint32_t		pid;
	uint32_t		ppid;
	uint32_t		session;
	int			attached;
	int			flush_want;	/* asked, not yet collected */
	int			flush_sent;	/* collected, not yet acked */
	uint32_t		cause;		/* WIRE_PROC_*, as it told us */
	int32_t			status;
	char			name[64];
};

ssize_t
lm_read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int
lm_proc_stat(uint32_t pid, struct lm_pstat *ps)
{
	char path[64], buf[1024], *p, *q, *tok, *save;
	int field;

	memset(ps, 0, sizeof *ps);
	ps->code = -1;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if (lm_read_small(path, buf, sizeof buf) <= 0)
		return -1;
	/* "pid (comm) state ...": field 3 is the state, 9 the flags, 52
	 * the exit code (a wait status). */
	if ((q = strchr(buf, '(')) == NULL || (p = strrchr(buf, ')')) == NULL ||
	    p < q)
		return -1;
	snprintf(ps->comm, sizeof ps->comm, "%.*s", (int)(p - q - 1), q + 1);
	field = 3;
	for (tok = strtok_r(p + 1, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			ps->state = tok[0];
		else if (field == 9)
			ps->flags = strtoul(tok, NULL, 10);
		else if (field == 52)
			ps->code = strtol(tok, NULL, 10);
	}
	return 0;
}

uint32_t
lm_death_cause(uint32_t pid, int32_t *status)
{
	struct lm_pstat ps;

	*status = 0;
	if (lm_proc_stat(pid, &ps) != 0)
		return WIRE_PROC_GONE;		/* already reaped */
	if (ps.state != 'Z' && ps.state != 'X' &&
	    !(ps.flags & 0x4) /* PF_EXITING */)
		return WIRE_PROC_EXEC;	/* alive: a new image */
	if (ps.code < 0)
		return WIRE_PROC_GONE;
	if (WIFSIGNALED((int)ps.code)) {
		*status = WTERMSIG((int)ps.code);
		return WIRE_PROC_KILLED;
	}
	*status = WEXITSTATUS((int)ps.code);
	return WIRE_PROC_EXIT;
}


static void
client_free(struct lm_client *c)
{
	struct lm *lm = c->lm;
	struct lm_client **pp;

	for (pp = &lm->clients; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->attached) {
		uint32_t cause = c->cause;
		int32_t status = c->status;

		lm_firer_pid(lm, c->pid, 0);

		seg_reclaim_session(&lm->view, c->session);
		if (cause == 0 || cause == WIRE_PROC_EXIT)
			/* What the kernel says wins over an exit note: a
			 * process may be killed after exit() began. */
			cause = lm_death_cause(c->pid, &status);
		if (cause == WIRE_PROC_GONE && c->cause != 0) {
			cause = c->cause;
			status = c->status;
		}
		lm_queue_proc(lm, c->pid, c->ppid, c->session, cause, status,
		    c->name);
		lm_defs_ended(lm, c->session);
		if (cause != WIRE_PROC_EXEC) {
			/* Dead, perhaps in the middle of taking a chunk or
			 * filling a firing slot (what it filled goes). */
			seg_reclaim_claims(&lm->view, c->pid);
			lm_plan_scan(lm);
			lm_plan_forget(lm, c->pid);
			lm->dead++;
		}
		lm->nclients--;
		log_debug("process %u (%s) gone", c->pid, c->name);
		if (lm->nclients == 0)
			lm->idle_since = clk_mono_ns();
	}
	bufferevent_free(c->bev);
	free(c);
}

static void
client_handshake(struct lm_client *c, struct evbuffer *in)
{
	struct lm *lm = c->lm;
	struct lmp_hello h;
	struct lmp_reply r;

	evbuffer_remove(in, &h, sizeof h);
	h.name[sizeof h.name - 1] = '\0';
	memset(&r, 0, sizeof r);
	r.magic = LMP_MAGIC;
	r.version = LMP_VERSION;
	if (h.magic != LMP_MAGIC || h.version != LMP_VERSION ||
	    h.pid != c->pid || lm->exiting) {
		log_warn("refusing process %u: %s", c->pid, lm->exiting ?
		    "exiting" : "bad handshake");
		r.status = LMP_REFUSED;
		bufferevent_write(c->bev, &r, sizeof r);
		return;
	}
	c->ppid = h.ppid;
	memcpy(c->name, h.name, sizeof c->name);
	/* The process checks the header's layout: put back what writers
	 * may have scribbled over, from our private copy. */
	seg_restore_layout(&lm->view, lm->seg_id, (uint32_t)getpid());
	if (h.session != 0) {
		/* Its LM died; we adopted the segment it writes in. */
		if (h.shmid != lm->shmid || h.session > lm->next_session) {
			log_warn("refusing process %u: its segment %d is not "
			    "ours", c->pid, h.shmid);
			r.status = LMP_REFUSED;
			bufferevent_write(c->bev, &r, sizeof r);
			return;
		}
		c->session = h.session;
		lm_orphan_resumed(lm, c->session);
	} else {
		c->session = ++lm->next_session;
		atomic_store(&lm->seg->sessions, lm->next_session);
	}
	c->attached = 1;
	lm_firer_pid(lm, c->pid, 1);
	lm->nclients++;
	lm->ever_clients = 1;
	lm->idle_since = 0;
	r.status = LMP_OK;
	r.shmid = lm->shmid;
	r.lm_pid = (uint32_t)getpid();
	r.session = c->session;
	r.size = lm->seg_size;
	bufferevent_write(c->bev, &r, sizeof r);
	lm_queue_proc(lm, c->pid, c->ppid, c->session, h.session != 0 ?
	    WIRE_PROC_RESUME : WIRE_PROC_START, 0, c->name);
	log_debug("process %u (%s) attached, session %u%s", c->pid, c->name,
	    c->session, h.session != 0 ? " (again)" : "");
	/* Processes are stopped for a collection: this one too. */
	lm_pause_attached(lm, c->pid);
}

void
lm_clients_each(struct lm *lm, void (*fn)(struct lm *, uint32_t))
{
	struct lm_client *c;
	int i;

	for (c = lm->clients; c != NULL; c = c->next)
		if (c->attached)
			fn(lm, c->pid);
	for (i = 0; i < lm->norphans; i++)
		fn(lm, lm->orphans[i].pid);
}

int
lm_client_attached(const struct lm *lm, uint32_t pid)
{
	const struct lm_client *c;

	for (c = lm->clients; c != NULL; c = c->next)
		if (c->attached && c->pid == pid)
			return 1;
	return 0;
}

void
lm_orphan_resumed(struct lm *lm, uint32_t session)
{
	int i;

	for (i = 0; i < lm->norphans; i++)
		if (lm->orphans[i].session == session) {
			lm->orphans[i] = lm->orphans[--lm->norphans];
			return;
		}
}

void
lm_orphans_check(struct lm *lm)
{
	struct lm_orphan o;
	uint32_t cause;
	int32_t status;
	int i;

	for (i = 0; i < lm->norphans; i++) {
		o = lm->orphans[i];
		cause = lm_death_cause(o.pid, &status);
		if (cause == WIRE_PROC_EXEC && kill((pid_t)o.pid, 0) == 0)
			continue;	/* still running */
		seg_reclaim_claims(&lm->view, o.pid);
		lm_plan_forget(lm, o.pid);
		/* Session 0: only a chunk it was claiming. */
		if (o.session != 0) {
			seg_reclaim_session(&lm->view, o.session);
			lm_queue_proc(lm, o.pid, 0, o.session, cause, status,
			    "");
			lm_defs_ended(lm, o.session);
		}
		lm->dead++;
		lm->orphans[i--] = lm->orphans[--lm->norphans];
		log_debug("process %u of the dead local monitor ended",
		    o.pid);
	}
	if (lm->norphans == 0 && lm->nclients == 0 && lm->idle_since == 0)
		lm->idle_since = clk_mono_ns();
}

static void
client_read(struct bufferevent *bev, void *arg)
{
	struct lm_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char note[64];
	size_t n, i;
	int push = 0;

	if (!c->attached) {
		if (evbuffer_get_length(in) < sizeof(struct lmp_hello))
			return;
		client_handshake(c, in);
		if (!c->attached)
			return;
	}
	while ((n = evbuffer_get_length(in)) > 0) {
		n = evbuffer_copyout(in, note, n < sizeof note ? n :
		    sizeof note);
		if (n == (size_t)-1)
			break;
		for (i = 0; i < n; i++) {
			int32_t v;

			if (note[i] == LMP_NOTE_EXIT ||
			    note[i] == LMP_NOTE_SIGNAL) {
				if (n - i < 1 + sizeof v)
					break;	/* the rest comes later */
				memcpy(&v, note + i + 1, sizeof v);
				c->cause = note[i] == LMP_NOTE_EXIT ?
				    WIRE_PROC_EXIT : WIRE_PROC_KILLED;
				c->status = v;
				i += sizeof v;
			} else if (note[i] == LMP_NOTE_PUSH)
				push = 1;
			else if (note[i] == LMP_NOTE_FIRE)
				lm_plan_scan(c->lm);
			else if (note[i] == LMP_NOTE_FLUSH) {
				/* No MM: kept, at once.  One connecting or
				 * synchronising: asked for when it is ready
				 * (or answered kept if it goes). */
				if (c->lm->mm_state == LM_LINK_DOWN) {
					char k = LMP_REPLY_KEPT;

					bufferevent_write(c->bev, &k, 1);
					continue;
				}
				c->flush_want = 1;
				if (c->lm->mm_state == LM_LINK_READY)
					lm_push(c->lm);
				else
					c->lm->push_wanted = 1;
			}
		}
		evbuffer_drain(in, i);
		if (i < n || i == 0)
			break;
	}
	/* Several notes read at once: one collection takes what each
	 * asked for. */
	if (push)
		lm_threshold(c->lm);
}

static void
client_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	client_free(arg);
}

void
lm_clients_drain(struct lm *lm)
{
	struct lm_client *c, *next;
	struct evbuffer *in;
	evutil_socket_t fd;
	int n, gone;

	for (c = lm->clients; c != NULL; c = next) {
		next = c->next;
		fd = bufferevent_getfd(c->bev);
		if (fd < 0 || evutil_make_socket_nonblocking(fd) != 0)
			continue;
		in = bufferevent_get_input(c->bev);
		errno = 0;
		while ((n = evbuffer_read(in, fd, 4096)) > 0)
			;
		/* Only the end of the stream says the process is gone, or a
		 * reset, which is how the end of a process that left a byte
		 * of ours unread (a wake-up, a flush's answer) reads on a
		 * local socket; any other error is left to the loop: taking
		 * a live process for dead would reclaim the chunk it writes
		 * in. */
		gone = n == 0 || (n < 0 && errno == ECONNRESET);
		if (evbuffer_get_length(in) > 0)
			client_read(c->bev, c);
		if (gone)
			client_free(c);	/* its end is queued now */
	}
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
	  int salen, void *arg)
{
	struct lm *lm = arg;
	struct lm_client *c;
	struct ucred cr;
	socklen_t crlen = sizeof cr;

	(void)l;
	(void)sa;
	(void)salen;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1 ||
	    cr.uid != getuid()) {
		log_warn("refusing a connection from another user");
		close(fd);
		return;
	}
	c = calloc(1, sizeof *c);
	if (c == NULL) {
		close(fd);
		return;
	}
	c->lm = lm;
	c->pid = (uint32_t)cr.pid;
	c->bev = bufferevent_socket_new(lm->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return;
	}
	c->next = lm->clients;
	lm->clients = c;
	bufferevent_setcb(c->bev, client_read, NULL, client_event, c);
	bufferevent_enable(c->bev, EV_READ);
}

int
lm_flushes_start(struct lm *lm)
{
	struct lm_client *c;
	int n = 0;

	for (c = lm->clients; c != NULL; c = c->next)
		if (c->flush_want) {
			c->flush_want = 0;
			c->flush_sent = 1;
			n++;
		}
	return n;
}

void
lm_flushes_done(struct lm *lm, int delivered)
{
	char r = delivered ? LMP_REPLY_FLUSHED : LMP_REPLY_KEPT;
	struct lm_client *c;

	for (c = lm->clients; c != NULL; c = c->next) {
		if (!delivered && c->flush_want) {
			c->flush_want = 0;
			bufferevent_write(c->bev, &r, 1);
		}
		if (c->flush_sent) {
			c->flush_sent = 0;
			bufferevent_write(c->bev, &r, 1);
		}
	}
}

int
lm_listen(struct lm *lm)
{
	struct sockaddr_un sa;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, lm->sock_path, sizeof sa.sun_path);
	/* We hold the election lock: a socket file here is stale. */
	if (unlink(lm->sock_path) == -1 && errno != ENOENT) {
		log_warn("cannot remove stale %s: %s", lm->sock_path,
		    strerror(errno));
		return -1;
	}
	lm->listener = evconnlistener_new_bind(lm->base, accept_cb, lm,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 128,
	    (struct sockaddr *)&sa, sizeof sa);
	if (lm->listener == NULL) {
		log_warn("cannot listen on %s: %s", lm->sock_path,
		    strerror(errno));
		return -1;
	}
	chmod(lm->sock_path, 0600);
	return 0;
}

/*
 * Stops taking processes.  Under the election lock, so that the socket
 * and .pid files removed are ours and not those of a successor.
 */
void
lm_unlisten(struct lm *lm)
{
	int fd;

	if (lm->listener == NULL)
		return;
	fd = -1;
	if (lm->lock_fd == -1) {	/* else we hold it already */
		fd = open(lm->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd != -1)
			while (flock(fd, LOCK_EX) == -1 && errno == EINTR)
				;
	}
	/* The .pid file stays until the segment is gone: an LM killed
	 * while it waits for its MM leaves its segment to the next one. */
	unlink(lm->sock_path);
	evconnlistener_free(lm->listener);
	lm->listener = NULL;
	if (fd != -1)
		close(fd);
}

void
lm_clients_resume_all(struct lm *lm)
{
	struct lm_client *c;

	for (c = lm->clients; c != NULL; c = c->next)
		if (c->attached)
			lm_queue_proc(lm, c->pid, c->ppid, c->session,
			    WIRE_PROC_RESUME, 0, c->name);
}

void
lm_clients_free(struct lm *lm)
{
	while (lm->clients != NULL) {
		lm->clients->attached = 0;
		client_free(lm->clients);
	}
}
