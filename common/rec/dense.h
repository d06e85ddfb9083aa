/* SPDX-License-Identifier: MIT */
/* dense.h: the dense encoding of a run of records (doc/formats.md 2.6),
 * what Local Monitors send in DATA and mainmon writes in binary traces. */
#ifndef GRM_REC_DENSE_H
#define GRM_REC_DENSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A dense run is the lossless encoding of one thread's records (section 2
 * of doc/formats.md: 16-byte header, 8-byte slots): decoding gives back
 * the same bytes.  It is a u64 base (the first record's ts) and one dense
 * record per record, each a multiple of 4 bytes:
 *
 *	u32 word	bits 0-1 form: 0 short, slots sign-extended;
 *			1 short, slots zero-extended; 2 long; 3 invalid
 *			(but a thread switch, in a binary file: below)
 *	short:		bits 2-5 slots (0..15), 6-9 cls, 10-13 attr,
 *			14-31 eid + 64;
 *			i32 ts minus the previous record's (the base for
 *			the first), then a u32 per 8-byte slot
 *	long:		bits 2-31 zero; the record as it is (its ts whole)
 *
 * A record is short when its slots all fit in 32 bits the same way, its
 * class and attribute are below 16, its eid between -64 and 262079, and
 * its time within 2^31 ns of the one before: a GMI_Event of two ints takes
 * 16 bytes.  Nothing in it depends on the record's type.
 */
#define REC_DENSE_BASE		8	/* bytes of the base */
/* The most bytes a run of len bytes of records takes dense. */
#define REC_DENSE_MAX(len)	(REC_DENSE_BASE + (len) + (len) / 4)
/* The most bytes n bytes of dense run give decoded (a short record of
 * no slot: 8 bytes for 16). */
#define REC_DENSE_OUT_MAX(n)	(2 * (n))

/* Encoder state of one run. */
struct rec_dense_enc {
	uint64_t	prev;	/* the previous record's ts */
};

/* Starts a run at out (REC_DENSE_BASE bytes) whose first record has time
 * base.  Returns REC_DENSE_BASE. */
size_t rec_dense_begin(struct rec_dense_enc *e, void *out, uint64_t base);

/* Encodes the record rec (len bytes: a whole, well-formed record, any
 * alignment) at out, which has room for len + 4 bytes.  Returns the bytes
 * written.  Cannot fail. */
size_t rec_dense_put(struct rec_dense_enc *e, const void *rec, size_t len,
		     void *out);

/*
 * Encodes the whole, well-formed records in recs[0..len) as one run into
 * out[0..cap).  Returns its length, or -1 (errno EINVAL: a malformed
 * record; EMSGSIZE: cap too small; REC_DENSE_MAX(len) is always enough).
 */
ssize_t rec_dense_encode(const void *recs, size_t len, void *out,
			 size_t cap);

/*
 * rec_dense_encode of the well-formed records at the start of recs[0..len)
 * (checked as rec_valid_prefix does, in the same pass); cap at least
 * REC_DENSE_MAX(len).  Returns the run's length (0 if the first record is
 * malformed), in *used the bytes of records it holds and in *meta whether
 * one of them is of class META; or -1 (EMSGSIZE: cap too small).
 */
ssize_t rec_dense_encode_valid(const void *recs, size_t len, void *out,
			       size_t cap, size_t *used, int *meta);

/*
 * The same for the records at the start of recs[0..len) that fit in
 * out[0..cap): stops before the first record that might not fit (one of
 * len bytes needs len + 4).  Returns the run's length, in *used the
 * bytes of records it holds and in *nrec (if not NULL) their number, or
 * -1 (EINVAL: a malformed record, checked as rec_valid_prefix does;
 * EMSGSIZE: cap below REC_DENSE_BASE).
 */
ssize_t rec_dense_encode_part(const void *recs, size_t len, void *out,
			      size_t cap, size_t *used, size_t *nrec);

/*
 * What rec_dense_encode_part(recs, len, out, cap, used, nrec) writes,
 * made from src[0..slen) where it can: the records of a dense run from
 * one of them on (no base), whose bytes decode to those of recs but for
 * their ts (a run as it came, before its times were converted).  A short
 * record of src whose delta is still right is copied, in stretches; the
 * others (the first, a long one, one whose time moved otherwise than the
 * one before it) are encoded.  *sused: the bytes of src that held the
 * records used, or SIZE_MAX if src did not follow recs (its records'
 * lengths differ: the rest was encoded).  Returns as
 * rec_dense_encode_part does.
 */
ssize_t rec_dense_recode_part(const void *recs, size_t len, const void *src,
			      size_t slen, void *out, size_t cap, size_t *used,
			      size_t *sused, size_t *nrec);

/*
 * The same as rec_dense_recode_part when src is as rec_dense_decode_canon
 * says canonical and every record of recs after the first moved by as
 * much as the one before it (their deltas in src are theirs), without
 * looking at them: the first record and the long ones are encoded, the
 * short ones copied as they are.  Checks only that src's records have
 * recs' lengths (else all is encoded, *sused SIZE_MAX).  With one (the
 * run was REC_DENSE_ONE), its records are not even walked: how many fit
 * is reckoned from their one length.
 */
ssize_t rec_dense_copy_part(const void *recs, size_t len, const void *src,
			    size_t slen, int one, void *out, size_t cap,
			    size_t *used, size_t *sused, size_t *nrec);

/*
 * rec_dense_copy_part knowing where in recs stretches of records of one
 * header begin (at[i] - base bytes from recs, in order; as
 * rec_dense_info says where, with the records those of src): the short
 * records of a stretch are not walked, how many fit is reckoned from
 * their one length.
 */
ssize_t rec_dense_copy_part_st(const void *recs, size_t len, const void *src,
			       size_t slen, const uint32_t *at, uint32_t nat,
			       uint32_t base, void *out, size_t cap,
			       size_t *used, size_t *sused, size_t *nrec);

/* The bytes of src[0..slen) (records of a dense run, no base) that decode
 * to its first dec bytes, or -1 if no record ends there. */
ssize_t rec_dense_skip(const void *src, size_t slen, size_t dec);

/* The length the dense run in[0..n) (untrusted) decodes to, or -1 if it
 * is malformed (cut short, a bad form, a long record of a bad length). */
ssize_t rec_dense_len(const void *in, size_t n);

/*
 * Decodes the dense run in[0..n) (untrusted) into out[0..cap).  Returns
 * the bytes written (whole records, every one well formed), or -1 if the
 * run is malformed or out too small (rec_dense_len says how much).
 */
ssize_t rec_dense_decode(const void *in, size_t n, void *out, size_t cap);

/* rec_dense_decode, and in *canon: REC_DENSE_CANON if every record of
 * the run is as the encoder writes it (the run itself may have another
 * base), REC_DENSE_ONE if there are records, all short, all of one
 * header (length, class, attribute, eid). */
#define REC_DENSE_CANON	1
#define REC_DENSE_ONE	2
ssize_t rec_dense_decode_canon(const void *in, size_t n, void *out,
			       size_t cap, int *canon);

/*
 * What a run holds, known without decoding it (mainmon decides from it
 * whether a run's records need be looked at one by one): the first and
 * last records' times (0 if none), the records, how many are meta
 * (class REC_CLASS_META: always long), which predefined eids occur (bit
 * eid + REC_EID_BIAS of pre), whether no record's time is before
 * the one before it (nor the first's before the base), and in how many
 * places a stretch of records of one header begins after the first
 * record: where a record's length, class, attribute or eid differ from
 * the one before's, or either is long (a stretch is short records of one
 * header: REC_DENSE_ONE is a run of one stretch).
 */
struct rec_dense_info {
	uint64_t	first, last;
	uint64_t	pre;
	uint32_t	nrec;
	uint32_t	nmeta;
	uint32_t	nseg;
	int		mono;
};

/* Checks the dense run in[0..n) (untrusted) as rec_dense_decode_canon
 * does, without decoding it: returns the length it decodes to, or -1;
 * with canon (may be NULL), *canon as rec_dense_decode_canon says it;
 * *inf what it holds. */
ssize_t rec_dense_scan(const void *in, size_t n, int *canon,
		       struct rec_dense_info *inf);

/* Where a stretch begins (rec_dense_info: not the first's): the decoded
 * offset of its first record, that record's place in the run (bytes from
 * the run's start, base included), the time of the record before it. */
struct rec_dense_seg {
	uint32_t	off;
	uint32_t	sp;
	uint64_t	prev;
};

/* rec_dense_scan, and the first max of the places where stretches begin
 * in seg[] (inf->nseg of them in all). */
ssize_t rec_dense_scan_st(const void *in, size_t n, int *canon,
			  struct rec_dense_info *inf, struct rec_dense_seg *seg,
			  uint32_t max);

/*
 * Times moved by a shift that steps: a record of time t (in the run)
 * moves by by[i], i the first step with t <= upto[i] (upto[n - 1] should
 * be UINT64_MAX).  The steps are taken in order: a run whose times go
 * back stays on its step.  What the decoding says back: the decoded
 * offsets of the records that moved otherwise than the one before (not
 * the first), the first brk_max of them in brk, their number in nbrk up
 * to brk_max + 1 (more: not known).
 */
struct rec_dense_shift {
	uint32_t	n;
	const uint64_t	*upto;
	const uint64_t	*by;
	uint32_t	*brk;
	uint32_t	brk_max;
	uint32_t	nbrk;
	/* With seg (room for rec_dense_info.nseg), the decoded offsets
	 * where a stretch of records of one header begins (not the
	 * first's), in order: see rec_dense_info. */
	uint32_t	*seg;
};

/* rec_dense_decode with every record's time moved by sh (modulo 2^64):
 * one pass where a clock conversion is a shift, or a few, for the whole
 * run. */
ssize_t rec_dense_decode_shift(const void *in, size_t n, void *out,
			       size_t cap, struct rec_dense_shift *sh);

/*
 * Reading a run without decoding it (mainmon, a binary file: the records
 * of a run it takes whole are never decoded, issue 18).  src: records of
 * a run checked by rec_dense_scan, from one of them on (no base); prev:
 * the time in the run of the record before src's first (the base for the
 * run's first); times move by sh's steps (as rec_dense_decode_shift
 * moves them; its brk and seg unused), the step of each record found
 * from its time (a run whose times do not go back).
 */

/* The record at src (whole: checked), decoded into out (room for
 * REC_MAX bytes) with its time moved by shift; its time in the run in
 * *t.  Returns its decoded length. */
size_t rec_dense_one(const void *src, uint64_t prev, uint64_t shift,
		     void *out, uint64_t *t);

/*
 * What rec_dense_encode_part(recs, len, out, cap, used, nrec) writes,
 * recs being src's records decoded (their times moved by sh), made from
 * src[0..slen) alone: the first record and the long ones decoded and
 * encoded, a short one copied where its time moved as the one before's,
 * encoded where not (a step of sh between them).  Returns the run's
 * length, *used, *nrec as rec_dense_encode_part does, in *sused the
 * bytes of src the records took and in *last the time in the run of the
 * last of them (prev if none); -1 (EMSGSIZE: cap below REC_DENSE_BASE;
 * EINVAL: src's first record is not whole or longer than len).
 */
ssize_t rec_dense_frame(const void *src, size_t slen, uint64_t prev,
			const struct rec_dense_shift *sh, size_t len,
			void *out, size_t cap, size_t *used, size_t *sused,
			size_t *nrec, uint64_t *last);

/* Where the stretches of a run begin (rec_dense_scan_st; NULL or n 0 if
 * not known), the run's length and last time (where its last stretch
 * ends), and where in the run src[0] is: rec_dense_frame_st and
 * sum_dense take a stretch's records whole where they can. */
struct rec_dense_segs {
	const struct rec_dense_seg	*at;
	uint32_t			n;
	uint32_t			end;
	uint64_t			last;
	uint32_t			base;
};

/* rec_dense_frame knowing where stretches begin (sg may be NULL): a
 * stretch's short records are not walked where they all fit. */
ssize_t rec_dense_frame_st(const void *src, size_t slen, uint64_t prev,
			   const struct rec_dense_shift *sh,
			   const struct rec_dense_segs *sg, size_t len,
			   void *out, size_t cap, size_t *used, size_t *sused,
			   size_t *nrec, uint64_t *last);

/* rec_dense_encode_part continuing a frame: no base is written, the
 * first record's delta is from *prev (the time of the frame's record
 * before it), and *prev is then the last record's time. */
ssize_t rec_dense_encode_cont(const void *recs, size_t len, uint64_t *prev,
			      void *out, size_t cap, size_t *used,
			      size_t *nrec);

/* rec_dense_frame_st continuing a frame (cont not NULL): no base is
 * written, and the first record's delta is from *cont, the time (moved)
 * of the frame's record before it; cap need only hold a record. */
ssize_t rec_dense_frame_cont(const void *src, size_t slen, uint64_t prev,
			     const struct rec_dense_shift *sh,
			     const struct rec_dense_segs *sg, size_t len,
			     const uint64_t *cont, void *out, size_t cap,
			     size_t *used, size_t *sused, size_t *nrec,
			     uint64_t *last);

/*
 * Switches (a D frame's run in a binary file of version 4,
 * doc/formats.md 3): between two records, a word of form 3 then the ids
 * of the records after it, each still timed from the record before it
 * in the run: REC_DENSE_SW_THREAD and a u32 tid (another thread of the
 * process), REC_DENSE_SW_PROC and u32 pid, tid (another process of the
 * host), REC_DENSE_SW_HOST and u32 node, pid, tid.  A run holds one only
 * after a record and before one, never two in a row.
 */
#define REC_DENSE_SW_THREAD	3u
#define REC_DENSE_SW_PROC	7u
#define REC_DENSE_SW_HOST	11u
#define REC_DENSE_SW_MAX	16	/* bytes of the longest */
struct rec_dense_sw {
	uint32_t	off;	/* decoded offset of its first record */
	uint32_t	word;	/* REC_DENSE_SW_*: which ids it gives */
	uint32_t	node, pid, tid;	/* (those it does not give: 0) */
};

/* The switch from records of (node0, pid0, tid0) to those of (node, pid,
 * tid), at out (REC_DENSE_SW_MAX bytes of room): its bytes, 0 if none is
 * needed. */
static inline size_t
rec_dense_sw_put(void *out, uint32_t node0, uint32_t pid0, uint32_t tid0,
		 uint32_t node, uint32_t pid, uint32_t tid)
{
	unsigned char *o = out;
	uint32_t v[4];
	size_t n;

	if (node != node0) {
		v[0] = REC_DENSE_SW_HOST;
		v[1] = node;
		v[2] = pid;
		v[3] = tid;
		n = 16;
	} else if (pid != pid0) {
		v[0] = REC_DENSE_SW_PROC;
		v[1] = pid;
		v[2] = tid;
		n = 12;
	} else if (tid != tid0) {
		v[0] = REC_DENSE_SW_THREAD;
		v[1] = tid;
		n = 8;
	} else
		return 0;
	__builtin_memcpy(o, v, n);	/* little-endian, as the run */
	return n;
}

/* The ids of the records after switch s, those before it being
 * (*node, *pid, *tid). */
static inline void
rec_dense_sw_apply(const struct rec_dense_sw *s, uint32_t *node,
		   uint32_t *pid, uint32_t *tid)
{
	if (s->word == REC_DENSE_SW_HOST)
		*node = s->node;
	if (s->word != REC_DENSE_SW_THREAD)
		*pid = s->pid;
	*tid = s->tid;
}

/* rec_dense_decode of a run that may hold switches: the first max of
 * them in sw[], their number in *nsw (more than max: -1, as for any
 * malformed run). */
ssize_t rec_dense_decode_sw(const void *in, size_t n, void *out, size_t cap,
			    struct rec_dense_sw *sw, size_t max,
			    size_t *nsw);

/* The time of the record that ends src[0..slen) (short records of one
 * length sl), the one before the first at time prev. */
static inline uint64_t
rec_dense_walk_ts(const unsigned char *src, size_t slen, size_t sl,
		  uint64_t prev)
{
	int32_t d;
	size_t sp;

	for (sp = 0; sp < slen; sp += sl) {
		__builtin_memcpy(&d, src + sp + 4, 4);
		prev += (uint64_t)(int64_t)d;
	}
	return prev;
}

/* The stretch that the record at place sp of the run is in, from *si on
 * (moved there): where it ends in the run, and in *t the time of its
 * last record.  Found by galloping from *si, then bisecting: a caller
 * that starts at 0 in the middle of a long run (a short piece of it,
 * two threads' records interleaved) pays the log of its stretches, not
 * their number; one that walks the run pays a step or two a stretch. */
static inline uint32_t
rec_dense_seg_end(const struct rec_dense_segs *sg, uint32_t *si, size_t sp,
		  uint64_t *t)
{
	uint32_t lo = *si, hi, step = 1, mid;

	/* The first beginning after sp (the beginnings are in order):
	 * at[lo] is not it; galloped to, it is in at[lo + 1..hi]. */
	if (lo < sg->n && sg->at[lo].sp <= sp) {
		while (lo + step < sg->n && sg->at[lo + step].sp <= sp) {
			lo += step;
			step *= 2;
		}
		hi = lo + step < sg->n ? lo + step : sg->n;
		lo++;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (sg->at[mid].sp <= sp)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	*si = lo;
	if (*si < sg->n) {
		*t = sg->at[*si].prev;
		return sg->at[*si].sp;
	}
	*t = sg->last;
	return sg->end;
}

/* The step of sh that a record of time t (in the run) is in. */
static inline uint32_t
rec_dense_step(const struct rec_dense_shift *sh, uint64_t t)
{
	uint32_t k = 0;

	while (k + 1 < sh->n && t > sh->upto[k])
		k++;
	return k;
}

#endif /* GRM_REC_DENSE_H */
