/* lm.h: the Local Monitor's state, shared by its modules. */
#ifndef GRM_LM_H
#define GRM_LM_H

#include <stdint.h>
#include <sys/un.h>

#include "seg.h"

struct event_base;
struct evconnlistener;
struct event;
struct evbuffer;
struct peer;

enum lm_mm_state { MM_DOWN, MM_CONNECTING, MM_SYNCING, MM_READY };

struct lm_client;

struct lm {
	struct event_base	*base;
	char			mm_id[256];
	char			dir[96];
	char			sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char			lock_path[256];
	char			info_path[256];
	int			lock_fd;
	int			standalone;	/* started by hand: no idle exit */

	/* The segment. */
	int			shmid;
	struct seg_hdr		*seg;		/* shared: writers may scribble */
	struct seg		view;		/* its layout, kept privately */
	size_t			seg_size;
	uint64_t		bad_bytes;	/* scribbled, skipped */
	uint64_t		lost_reported;	/* unrecorded losses sent */

	/* Traced processes. */
	struct evconnlistener	*listener;
	struct lm_client	*clients;
	int			nclients;
	int			ever_clients;
	uint32_t		next_session;
	struct evbuffer		*procs;		/* WIRE_PROC messages to send */

	/* The Main Monitor. */
	struct peer		*mm;
	enum lm_mm_state	mm_state;
	struct event		*retry;
	int			retry_s;
	uint64_t		mm_down_since;	/* ns; 0 while connected */
	int			push_wanted;
	int			outstanding;	/* DONEs not yet acknowledged */

	/* Life. */
	struct event		*tick;
	uint64_t		idle_since;	/* ns; 0 while clients live */
	uint64_t		linger_ns;
	uint64_t		mm_timeout_ns;
	int			exiting;
	int			final_sent;	/* collected since exiting began */
	int			finished;
	int			stopped;	/* the MM asked for the final
						   collection */
};

/* lm_clients.c */
int lm_listen(struct lm *lm);
/* A collection starts: flushes asked so far are answered at its ACK;
 * returns how many there are. */
int lm_flushes_start(struct lm *lm);
/* Answers flushes in flight: delivered (1) or only kept (0). */
void lm_flushes_done(struct lm *lm, int delivered);
void lm_unlisten(struct lm *lm);
void lm_clients_free(struct lm *lm);

/* lm_mm.c */
void lm_mm_init(struct lm *lm);
void lm_mm_connect(struct lm *lm);
/* Copies out everything committed and sends it with a DONE for round;
 * probe: with dormant sensors' values. */
int lm_collect(struct lm *lm, uint32_t round, int probe);
/* Asks for a push as soon as the MM is ready. */
void lm_push(struct lm *lm);

/* lm_main.c */
void lm_begin_exit(struct lm *lm, const char *why);
void lm_finish(struct lm *lm);
void lm_queue_proc(struct lm *lm, uint32_t pid, uint32_t ppid,
		   uint32_t session, uint32_t what, int32_t status,
		   const char *name);

#endif /* GRM_LM_H */
