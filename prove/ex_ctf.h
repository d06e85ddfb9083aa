/* SPDX-License-Identifier: MIT */
/* ex_ctf.h: prove export --to ctf: what its files share (ex_ctf.c: the
 * command, the packets and the events; ex_ctf_meta.c: the metadata). */
#ifndef GRM_EX_CTF_H
#define GRM_EX_CTF_H

#include <stdint.h>
#include <stdio.h>

#include "pv.h"
#include "pv_export.h"

#define CTF_MAGIC	0xC1FC1FC1u
#define PKT_SIZE	(64u << 10)
/* packet header (8) + context (5 x 8 + 3 x 4); every type is byte
 * aligned (align = 8 bits in the metadata), so nothing is padded */
#define PKT_HDR		(8u + 40u + 12u)

enum { EV_PROC = 0, EV_LOSS = 1, EV_USER0 = 2 };

struct stream {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	ix;		/* stream_ix */
	FILE		*f;
	unsigned char	*buf;		/* the packet being filled */
	size_t		len;
	size_t		cap;
	size_t		events;		/* in the packet */
	uint64_t	first;		/* its first and last time stamps */
	uint64_t	last;
	int		any;		/* an event was written (last set) */
};

/* An event class: a record type. */
struct eclass {
	uint32_t	id;
	int32_t		eid;
	unsigned	n;
	uint8_t		type[GRMTRACE_FIELDS_MAX];
	char		conv[GRMTRACE_FIELDS_MAX];
	char		*name;
};

/* A #PROC or #LOSS line, kept to be written at the end, in time order. */
struct mline {
	uint64_t	ts;
	uint64_t	seq;
	int		kind;		/* EV_PROC, EV_LOSS */
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;		/* LOSS */
	uint32_t	ppid;		/* PROC */
	int		how;
	int32_t		status;
	uint64_t	count;		/* LOSS */
	char		*name;		/* PROC */
};

struct cx {
	const struct pv_export *x;
	const char	*dir;
	struct pv_map	sx;		/* (node << 32 | pid, tid) -> stream */
	uint32_t	nstreams;
	struct pv_map	ex;		/* (eid | fmt, scope) -> eclass */
	struct pv_strs	fmts;
	uint32_t	nclasses;
	struct pv_xrun	run;		/* progress, time origin, #CLOCK */
	uint64_t	epoch;
	uint64_t	nul_cut;	/* strings holding a NUL, cut there */
	struct mline	*ml;		/* #PROC and #LOSS lines */
	size_t		nml;
	size_t		cml;
};

/* Says that memory ran out; returns -1. */
int ctf_oom(void);
/* Writes c->dir/metadata: the TSDL description of the trace, its clock,
 * stream class and every event class met.  0, or -1 after saying why. */
int ctf_write_metadata(struct cx *c);

#endif /* GRM_EX_CTF_H */
