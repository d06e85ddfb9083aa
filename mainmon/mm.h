/* mm.h: the Main Monitor's state, shared by its modules. */
#ifndef GRM_MM_H
#define GRM_MM_H

#include <stdint.h>

#include "rec.h"
#include "tape.h"

struct event_base;
struct evconnlistener;
struct event;
struct peer;
struct wire_rd;

/* Event types known for one node, by eid: open addressing, grown at half
 * full.  An empty slot has format NULL. */
struct mm_defs {
	struct tape_def	*v;
	uint32_t	cap;
	uint32_t	n;
};

/*
 * A traced process as mainmon knows it: its parent (from its PROC start),
 * the definitions it made, and what its records are decoded with: `own`
 * first, then its ancestors' (a fork child inherits its parent's types),
 * then the node's.  `resolved` caches the answer once the file's reader is
 * known to resolve the same (a scoped #DEF line is written if the global
 * one differs), so a record costs one lookup.
 */
struct mm_proc {
	uint32_t	pid;
	uint32_t	ppid;
	struct mm_defs	own;
	struct mm_defs	resolved;
	struct mm_proc	*next;
};

#define MM_PROC_BUCKETS	256

struct mm_node {
	uint32_t	id;		/* 1, 2, ...: the node column */
	char		host[256];
	struct mm_defs	defs;		/* every definition seen on the node */
	struct mm_proc	*procs[MM_PROC_BUCKETS];
	struct mm_node	*next;
};

/* A received piece of one thread's records, kept until its batch ends. */
struct mm_piece {
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	len;
	struct mm_piece	*next;
	unsigned char	data[];
};

enum { PEER_NEW, PEER_LM, PEER_CTL };

struct mm_conn {
	struct mm		*mm;
	struct peer		*p;
	int			role;
	struct mm_conn		*next;
	/* LM */
	struct mm_node		*node;
	uint32_t		lm_pid;
	int			npings;
	int			synced;
	uint64_t		best_rtt;
	int64_t			offset;		/* LM clock - MM clock, ns */
	struct mm_piece		*batch, **batch_tail;
	uint64_t		batch_bytes;
	uint64_t		records;
};

/* A collection in progress (snapshot or stop). */
struct mm_coll {
	uint32_t		round;
	int			stop;
	struct mm_conn		**pending;
	int			npending;
	struct mm_conn		*ctl;		/* who asked; may go away */
	struct event		*timeout;
	struct mm_coll		*next;
};

struct mm {
	struct event_base	*base;
	struct evconnlistener	*listener;
	char			id[300];
	struct tape_w		*out;
	char			*out_path;
	struct mm_conn		*conns;
	struct mm_node		*nodes;
	uint32_t		next_node;
	struct mm_coll		*colls;
	uint32_t		next_round;
	int			stopping;
	int			stopped;	/* final collection written */
	struct mm_conn		*stop_ctl;	/* who is told; exit after */
	int			exit_code;
	struct mm_defs		written;	/* #DEF lines in the file */
	uint64_t		collections;
	uint64_t		losses;
};

/* mm_peer.c */
void mm_accept(struct mm *mm, int fd);
void mm_conn_free(struct mm_conn *c);
/* Starts a collection for ctl (may be NULL); stop: the final one. */
void mm_collect(struct mm *mm, struct mm_conn *ctl, int stop);

/* mm_out.c */
int mm_out_open(struct mm *mm, const char *path);
/* Writes the conn's pending batch to the file; returns 0 or -1. */
int mm_out_batch(struct mm *mm, struct mm_conn *c);
int mm_out_proc(struct mm *mm, struct mm_conn *c, struct wire_rd *msg);
void mm_defs_free(struct mm_defs *d);
void mm_node_free(struct mm_node *n);
/* A new node's definitions start with the predefined ones. */
void mm_node_init_defs(struct mm *mm, struct mm_node *n);

#endif /* GRM_MM_H */
