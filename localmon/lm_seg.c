/* SPDX-License-Identifier: MIT */
/* lm_seg.c: the Local Monitor's segment: created, or adopted from an LM
 * that died, named in the .pid file, and removed at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/shm.h>

#include "lm.h"
#include "util/clock.h"
#include "util/log.h"

/* The share of free chunks below which the LM pushes (GRM_THRESHOLD, a
 * percentage, default 50). */
static uint32_t
threshold_for(uint32_t nchunks, uint64_t percent)
{
	uint64_t t;

	t = (uint64_t)nchunks * percent / 100;
	return t < 1 ? 1 : (uint32_t)t;
}

/* The LM's private bookkeeping of the segment, once it is attached. */
static int
lm_seg_own(struct lm *lm, void *mem, size_t size)
{
	lm->seg = mem;
	seg_view(&lm->view, mem, size);
	lm->view.sent = calloc(lm->view.nchunks, sizeof *lm->view.sent);
	if (lm->view.sent == NULL)
		return -1;
	lm->seg_size = size;
	return 0;
}

/* A new segment, of c's sizes, threshold and policy; 0, or -1 (logged,
 * nothing left). */
static int
lm_seg_create(struct lm *lm, const struct lm_conf *c)
{
	size_t size = (size_t)c->segsize;
	size_t chunk = (size_t)c->chunksize;
	void *mem;
	uint64_t id;

	lm->shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0600);
	if (lm->shmid == -1) {
		log_warn("cannot create a %zu-byte segment: %s", size,
		    strerror(errno));
		return -1;
	}
	mem = seg_attach(lm->shmid, size);
	if (mem == (void *)-1 || seg_init(mem, size, (uint32_t)chunk) != 0 ||
	    lm_seg_own(lm, mem, size) != 0) {
		log_warn("cannot set up segment (size %zu, chunk %zu)", size,
		    chunk);
		if (mem != (void *)-1)
			shmdt(mem);
		shmctl(lm->shmid, IPC_RMID, NULL);
		lm->seg = NULL;
		return -1;
	}
	lm->seg->threshold = threshold_for(lm->seg->nchunks, c->threshold);
	lm->view.threshold = lm->seg->threshold;
	if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
		id = clk_mono_ns() ^ ((uint64_t)getpid() << 32);
	lm->seg->seg_id = id;
	lm->seg_id = id;
	/* Allocate every page now: writers then never wait for the kernel
	 * to zero one. */
	if (seg_populate(mem, size) != 0)
		log_debug("cannot populate the segment: %s", strerror(errno));
	lm->seg->lm_pid = (uint32_t)getpid();
	/* The job's buffer-full policy: processes without GRM_POLICY of
	 * their own follow it. */
	atomic_store(&lm->seg->policy, (uint32_t)c->policy);
	return 0;
}

unsigned long long
lm_seg_huge_kib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[128];
	unsigned long long kib = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "ShmemPmdMapped: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Whether process pid is a live local monitor (not a reused pid, not a
 * zombie nobody reaped yet). */
static int
is_live_lm(int pid)
{
	struct lm_pstat ps;

	return lm_proc_stat((uint32_t)pid, &ps) == 0 &&
	    strcmp(ps.comm, "localmon") == 0 && ps.state != 'Z' &&
	    ps.state != 'X';
}

static void
add_orphan(struct lm *lm, uint32_t pid, uint32_t session)
{
	struct lm_orphan *o;
	int i;

	for (i = 0; i < lm->norphans; i++)
		if (lm->orphans[i].session == session &&
		    lm->orphans[i].pid == pid)
			return;
	o = realloc(lm->orphans, sizeof *o * (size_t)(lm->norphans + 1));
	if (o == NULL)
		return;
	lm->orphans = o;
	o[lm->norphans].pid = pid;
	o[lm->norphans++].session = session;
}

/*
 * The LM named in the .pid file died (killed, crashed) and left its
 * segment: adopt it, with every record committed in it.  What that LM
 * had sent and not had acknowledged is sent again, from `consumed`; the
 * MM drops what it already wrote.  Returns 0, or -1 (create a new one).
 */
static int
lm_seg_adopt_dead(struct lm *lm)
{
	struct shmid_ds ds;
	struct seg_chunk *c;
	int pid, shmid;
	uint32_t i, st;
	void *mem;
	FILE *f;

	f = fopen(lm->info_path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d %d", &pid, &shmid) != 2) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if (pid <= 0 || pid == getpid() || is_live_lm(pid) ||
	    shmctl(shmid, IPC_STAT, &ds) != 0)
		return -1;
	if (ds.shm_perm.uid != getuid() || ds.shm_perm.cuid != getuid() ||
	    (ds.shm_perm.mode & 0777) != 0600) {
		log_warn("segment %d of the dead local monitor %d is not "
		    "owner-only: not adopted", shmid, pid);
		return -1;
	}
	mem = seg_attach(shmid, ds.shm_segsz);
	if (mem == (void *)-1)
		return -1;
	if (seg_check(mem, ds.shm_segsz) != 0 ||
	    ((struct seg_hdr *)mem)->lm_pid != (uint32_t)pid ||
	    lm_seg_own(lm, mem, ds.shm_segsz) != 0) {
		/* Not one we can take (scribbled, or not grm's at all):
		 * left alone, never removed. */
		log_warn("segment %d named by %s is not a segment of the dead "
		    "local monitor %d: not adopted, left as it is", shmid,
		    lm->info_path, pid);
		shmdt(mem);
		lm->seg = NULL;
		return -1;
	}
	lm->shmid = shmid;
	lm->seg_id = lm->seg->seg_id;
	seg_adopt(&lm->view);
	lm->next_session = atomic_load(&lm->seg->sessions);
	lm->seg->lm_pid = (uint32_t)getpid();
	lm->adopted = 1;
	/* Processes of the dead LM still writing: watched until they
	 * attach to us or die. */
	for (i = 0; i < lm->view.nchunks; i++) {
		c = seg_chunk(&lm->view, i);
		st = atomic_load(&c->state);
		if (st == SEG_OWNED && c->session != 0 &&
		    c->session <= lm->next_session)
			add_orphan(lm, c->pid, c->session);
		else if (SEG_STATE(st) == SEG_CLAIMED && st >> 2 != 0)
			add_orphan(lm, st >> 2, 0);
	}
	log_warn("adopted segment %d of the dead local monitor %d "
	    "(%u chunks in use, %d processes to watch)", shmid, pid,
	    seg_used(&lm->view), lm->norphans);
	return 0;
}

/* Records pid and segment id for operators and tests; removed at exit. */
static void
write_info(struct lm *lm)
{
	char tmp[300];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof tmp, "%s.tmp", lm->info_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	fprintf(f, "%d %d\n", (int)getpid(), lm->shmid);
	if (fclose(f) == 0)
		rename(tmp, lm->info_path);
}

/* Removes the .pid file, under the election lock (taken here unless it
 * is held already: a start that failed), if it still names us (a
 * successor may have written its own). */
static void
remove_info(struct lm *lm)
{
	FILE *f;
	int fd = -1, pid = 0;

	if (lm->lock_fd == -1)
		fd = open(lm->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd != -1)
		while (flock(fd, LOCK_EX) == -1 && errno == EINTR)
			;
	if ((f = fopen(lm->info_path, "r")) != NULL) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid == getpid())
		unlink(lm->info_path);
	if (fd != -1)
		close(fd);
}

int
lm_segment_make(struct lm *lm, const struct lm_conf *c)
{
	if (lm_seg_adopt_dead(lm) != 0 && lm_seg_create(lm, c) != 0)
		return -1;
	if (lm_clock_start(lm, c->clock) != 0) {
		lm_segment_unmake(lm);
		return -1;
	}
	write_info(lm);
	return 0;
}

/* The .pid file goes after the segment: an LM killed in between leaves
 * the segment to the next one, never a segment no file names. */
void
lm_segment_unmake(struct lm *lm)
{
	if (lm->seg != NULL) {
		shmdt(lm->seg);
		lm->seg = NULL;
		shmctl(lm->shmid, IPC_RMID, NULL);
	}
	free(lm->view.sent);
	lm->view.sent = NULL;
	lm_defs_free(lm);
	remove_info(lm);
}

