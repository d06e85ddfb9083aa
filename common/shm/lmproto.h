/* SPDX-License-Identifier: MIT */
/* lmproto.h: the handshake between a traced process and its Local Monitor. */
#ifndef GRM_LMPROTO_H
#define GRM_LMPROTO_H

#include <stdint.h>

/*
 * Over the LM's Unix stream socket (same host, so native byte order):
 * the process sends one lmp_hello, the LM answers one lmp_reply and the
 * process attaches segment shmid.  The connection then stays open for the
 * life of the process: the LM learns of its death from the end of file, and
 * the process writes single LMP_NOTE_* bytes to it.  The LM checks the
 * peer's credentials (SO_PEERCRED): same user only.
 * Bump LMP_VERSION whenever these structures change; doc/protocol.md
 * section 2 specifies them in prose.
 */
#define LMP_MAGIC	0x504d4c47u	/* "GLMP" */
#define LMP_VERSION	2

struct lmp_hello {
	uint32_t	magic;
	uint16_t	version;
	uint16_t	pad;
	uint32_t	pid;
	uint32_t	ppid;
	char		name[64];	/* program name, NUL-terminated */
	/* Attaching again after its LM died: the session it had and the
	 * segment it writes in (0, -1: a first attach).  An LM that adopted
	 * that segment gives the session back; any other refuses. */
	uint32_t	session;
	int32_t		shmid;
};

enum { LMP_OK = 0, LMP_REFUSED = 1 };

struct lmp_reply {
	uint32_t	magic;
	uint16_t	version;
	uint16_t	status;
	int32_t		shmid;
	uint32_t	lm_pid;
	uint32_t	session;	/* stamped on every chunk taken */
	uint32_t	pad;
	uint64_t	size;		/* segment bytes */
};

/* Bytes a process may send after the handshake. */
#define LMP_NOTE_PUSH	'P'	/* free chunks fell below the threshold */
#define LMP_NOTE_FLUSH	'F'	/* deliver everything, then answer */
#define LMP_NOTE_FIRE	'T'	/* a plan's firing slot is READY (seg.h) */
/* Followed by an int32 (native): how the process is ending. */
#define LMP_NOTE_EXIT	'X'	/* exit(status): the status */
#define LMP_NOTE_SIGNAL	'K'	/* a fatal signal: its number */

/* Bytes the LM sends after the handshake, one per LMP_NOTE_FLUSH. */
#define LMP_REPLY_FLUSHED	'f'	/* all data up to the note delivered */
#define LMP_REPLY_KEPT		'k'	/* no Main Monitor now: kept, not sent */

#endif /* GRM_LMPROTO_H */
