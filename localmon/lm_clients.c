/* lm_clients.c: the LM's Unix socket: handshakes with traced processes,
 * their push notes, and their deaths. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "lm.h"
#include "lmproto.h"
#include "log.h"
#include "wire.h"

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
	char			name[64];
};

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
		seg_reclaim_session(&lm->view, c->session);
		lm_queue_proc(lm, c->pid, c->ppid, c->session, WIRE_PROC_EXIT, 0,
		    c->name);
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
	c->session = ++lm->next_session;
	c->attached = 1;
	lm->nclients++;
	lm->ever_clients = 1;
	lm->idle_since = 0;
	r.status = LMP_OK;
	r.shmid = lm->shmid;
	r.lm_pid = (uint32_t)getpid();
	r.session = c->session;
	r.size = lm->seg_size;
	bufferevent_write(c->bev, &r, sizeof r);
	lm_queue_proc(lm, c->pid, c->ppid, c->session, WIRE_PROC_START, 0,
	    c->name);
	log_debug("process %u (%s) attached, session %u", c->pid, c->name,
	    c->session);
}

static void
client_read(struct bufferevent *bev, void *arg)
{
	struct lm_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char note[64];
	size_t n, i;

	if (!c->attached) {
		if (evbuffer_get_length(in) < sizeof(struct lmp_hello))
			return;
		client_handshake(c, in);
		if (!c->attached)
			return;
	}
	while ((n = evbuffer_remove(in, note, sizeof note)) > 0 &&
	    n != (size_t)-1)
		for (i = 0; i < n; i++) {
			if (note[i] == LMP_NOTE_PUSH)
				lm_push(c->lm);
			else if (note[i] == LMP_NOTE_FLUSH) {
				if (c->lm->mm_state != MM_READY) {
					char k = LMP_REPLY_KEPT;

					bufferevent_write(c->bev, &k, 1);
					continue;
				}
				c->flush_want = 1;
				lm_push(c->lm);
			}
		}
}

static void
client_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	client_free(arg);
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
	unlink(lm->sock_path);
	unlink(lm->info_path);
	evconnlistener_free(lm->listener);
	lm->listener = NULL;
	if (fd != -1)
		close(fd);
}

void
lm_clients_free(struct lm *lm)
{
	while (lm->clients != NULL) {
		lm->clients->attached = 0;
		client_free(lm->clients);
	}
}
