/* SPDX-License-Identifier: MIT */
/* lm_spill.c: the spill file, where the LM keeps trace data while it has
 * no Main Monitor (framed DATA, PROC and SEGMENT messages, up to
 * GRM_SPILL_MAX), and its replay, first, to the next one. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <event2/buffer.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/log.h"

static ssize_t spill_append(struct lm *lm, struct evbuffer *b);

/* A SEGMENT message naming our segment: into b, or to the MM (b NULL). */
static int
segment_msg(struct lm *lm, struct evbuffer *b)
{
	unsigned char m[WIRE_HDR + 8];
	struct wire_wr w;

	wire_wr_init(&w, m + WIRE_HDR, 8);
	wire_put_u64(&w, lm->seg_id);
	wire_header(m, WIRE_SEGMENT, 8);
	if (b != NULL)
		return evbuffer_add(b, m, sizeof m);
	return peer_send_bytes(lm->mm, m, sizeof m);
}

/* Length of the whole, well-formed messages at the start of buf. */
static size_t
whole_messages(const unsigned char *buf, size_t len)
{
	size_t off = 0;
	uint16_t type;
	uint32_t plen;
	const char *why;

	while (len - off >= WIRE_HDR &&
	    wire_parse_header(buf + off, &type, &plen, &why) == 0 &&
	    (type == WIRE_DATA || type == WIRE_PROC ||
	    type == WIRE_SEGMENT) &&
	    len - off - WIRE_HDR >= plen)
		off += WIRE_HDR + plen;
	return off;
}

/*
 * Takes the spill file: one LM at a time (flock; a predecessor still
 * delivering keeps it, and we try again at each tick), and keeps only its
 * whole messages: an LM killed while writing leaves a partial one, whose
 * data is still in the segment.
 */
int
lm_spill_take(struct lm *lm)
{
	struct stat a, b;
	unsigned char *buf;
	size_t have = 0, good;
	uint64_t off = 0;
	ssize_t r;
	int fd;

	if (lm->spill_fd != -1 || lm->spill_max == 0)
		return 0;
	fd = open(lm->spill_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1) {
		log_warn("%s: %s", lm->spill_path, strerror(errno));
		return -1;
	}
	/* The predecessor removes the file when it is done with it: the
	 * lock must be on the file the name still names. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &a) != 0 ||
	    stat(lm->spill_path, &b) != 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		close(fd);
		return -1;
	}
	buf = malloc(2 * WIRE_MAX + WIRE_HDR);
	if (buf == NULL) {
		close(fd);
		return -1;
	}
	for (;;) {
		r = pread(fd, buf + have, 2 * WIRE_MAX + WIRE_HDR - have,
		    (off_t)(off + have));
		if (r > 0)
			have += (size_t)r;
		good = whole_messages(buf, have);
		off += good;
		if (r <= 0 || good == 0)
			break;
		memmove(buf, buf + good, have - good);
		have -= good;
	}
	free(buf);
	if (ftruncate(fd, (off_t)off) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	lm->spill_fd = fd;
	lm->spill_bytes = off;
	lm->spill_sent = lm->spill_acked = 0;
	if (off > 0) {
		log_warn("%s: %llu bytes of trace data kept for the main "
		    "monitor", lm->spill_path, (unsigned long long)off);
		if (lm->mm_state == LM_LINK_READY && lm->outstanding == 0)
			lm_spill_replay(lm);
	}
	return 0;
}

void
lm_spill_close(struct lm *lm)
{
	if (lm->spill_fd == -1)
		return;
	if (lm->spill_bytes == 0)
		unlink(lm->spill_path);
	close(lm->spill_fd);
	lm->spill_fd = -1;
}

void
lm_spill_lost(struct lm *lm, uint64_t n)
{
	struct lm_emit ec = { lm, 0, NULL, UINT64_MAX, 0, 0, 0 };
	int64_t r;

	if (lm->spill_fd == -1 || (ec.spill = evbuffer_new()) == NULL)
		return;
	segment_msg(lm, ec.spill);
	r = lm_report_losses(lm, &ec, n);
	if (r >= 0 && spill_append(lm, ec.spill) > 0)
		atomic_fetch_add(&lm->seg->lost_reported, (uint64_t)r);
	evbuffer_free(ec.spill);
}

/*
 * Appends b (a SEGMENT message, then what to keep) to the spill file.
 * Returns the bytes appended, 0 if b held only the SEGMENT message, or -1
 * (logged; the file is cut back to what it was).
 */
static ssize_t
spill_append(struct lm *lm, struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);

	if (len <= WIRE_HDR + 8)
		return 0;
	if (lseek(lm->spill_fd, (off_t)lm->spill_bytes, SEEK_SET) < 0)
		goto fail;
	while (evbuffer_get_length(b) > 0)
		if (evbuffer_write(b, lm->spill_fd) < 0 && errno != EINTR)
			goto fail;
	lm->spill_bytes += len;
	return (ssize_t)len;
fail:
	log_warn("%s: %s: the data stays in the segment", lm->spill_path,
	    strerror(errno));
	if (ftruncate(lm->spill_fd, (off_t)lm->spill_bytes) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	return -1;
	return 0;
}

void
lm_spill(struct lm *lm, int all)
{
	struct seg_flight fl = { NULL, 0, 0, 0 };
	struct lm_emit ec = { lm, 0, NULL, 0, 0, 0, 0 };
	ssize_t len;
	int64_t lost = 0;

	if (lm->spill_max == 0 || lm->spill_fd == -1 || lm->seg == NULL ||
	    lm->spill_bytes >= lm->spill_max)
		return;
	ec.spill = evbuffer_new();
	if (ec.spill == NULL)
		return;
	ec.room = lm->spill_max - lm->spill_bytes;
	/* Whoever replays it says which segment the data came from. */
	segment_msg(lm, ec.spill);
	evbuffer_add_buffer(ec.spill, lm->procs);
	seg_collect_ex(&lm->view, !all, lm_emit_piece, &ec, &lm->bad_bytes,
	    &fl);
	/* At the end, the tables too (the segment goes away). */
	if (all && !ec.err)
		lm_emit_tables(&ec, 1, &fl);
	if (all && !ec.err) {
		ec.room += 64;	/* a loss record always fits */
		lost = lm_report_losses(lm, &ec, 0);
	}
	if ((len = spill_append(lm, ec.spill)) < 0)
		seg_flight_abort(&lm->view, &fl);
	else {
		seg_flight_commit(&lm->view, &fl);
		if (lost > 0)
			atomic_fetch_add(&lm->seg->lost_reported,
			    (uint64_t)lost);
		lm->spilled_total += (uint64_t)len;
		if (len > 0)
			log_debug("spilled %zd bytes (%llu in %s)", len,
			    (unsigned long long)lm->spill_bytes,
			    lm->spill_path);
	}
	seg_flight_free(&fl);
	evbuffer_free(ec.spill);
}

uint64_t
lm_count_left(struct lm *lm)
{
	struct lm_emit ec = { lm, 0, NULL, 0, 0, 1, 0 };

	if (lm->seg == NULL)
		return 0;
	seg_collect_ex(&lm->view, 0, lm_emit_piece, &ec, NULL, NULL);
	return ec.events;
}

/* Sends the next block of the spill file (whole messages, at most 8 MiB)
 * with a DONE; the file is emptied once the MM has acknowledged it all. */
int
lm_spill_replay(struct lm *lm)
{
	enum { BLOCK = 8 << 20 };
	struct lm_flight *f;
	unsigned char *buf;
	size_t want, good;
	ssize_t r;

	if (lm->spill_sent >= lm->spill_bytes)
		return 0;
	want = lm->spill_bytes - lm->spill_sent;
	if (want > BLOCK + WIRE_MAX + WIRE_HDR)
		want = BLOCK + WIRE_MAX + WIRE_HDR;
	buf = malloc(want);
	f = calloc(1, sizeof *f);
	if (buf == NULL || f == NULL)
		goto fail;
	r = pread(lm->spill_fd, buf, want, (off_t)lm->spill_sent);
	if (r <= 0)
		goto fail;
	good = whole_messages(buf, (size_t)r);
	if (good == 0)
		goto fail;
	if (peer_send_bytes(lm->mm, buf, good) != 0 ||
	    segment_msg(lm, NULL) != 0)
		goto fail;
	free(buf);
	lm->spill_sent += good;
	f->replay = 1;
	f->spill_end = lm->spill_sent;
	lm_done_push(lm, WIRE_ROUND_PUSH, f, WIRE_BELOW_REPLAY);
	log_debug("replayed %zu bytes of %s", good, lm->spill_path);
	return 0;
fail:
	/* Unreadable: what follows cannot be sent; it is dropped. */
	log_warn("%s: cannot replay from byte %llu: dropped", lm->spill_path,
	    (unsigned long long)lm->spill_sent);
	free(buf);
	free(f);
	lm->spill_bytes = lm->spill_sent;
	if (lm->spill_bytes == lm->spill_acked)
		lm->spill_bytes = lm->spill_sent = lm->spill_acked = 0;
	if (ftruncate(lm->spill_fd, (off_t)lm->spill_bytes) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	return -1;
}

void
lm_spill_acked(struct lm *lm, uint64_t end)
{
	lm->spill_acked = end;
	if (end < lm->spill_bytes)
		return;
	/* All of the spill file is with the MM. */
	if (ftruncate(lm->spill_fd, 0) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	log_debug("%s delivered (%llu bytes)", lm->spill_path,
	    (unsigned long long)lm->spill_bytes);
	lm->spill_bytes = lm->spill_sent = lm->spill_acked = 0;
}
