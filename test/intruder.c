/* SPDX-License-Identifier: MIT */
/* intruder.c: what another user could do to a Local Monitor's resources
 * (test/hygiene.sh runs it as the owner and as a stranger).  Tries each
 * way in and prints one line per try, "NAME ok ..." or "NAME ERRNO":
 *
 *	stat	shmctl(IPC_STAT) of the segment: its owner uid and mode
 *	shmat	attaching the segment for writing
 *	shmat-ro	attaching it read-only
 *	connect	connecting to the LM's socket
 *	hello	the handshake on that connection: "ok" with a segment id means
 *		the LM accepted this process
 *	opendir	listing the run folder
 *	pidfile	opening the LM's .pid file
 *	plant	binding a socket of our own in the run folder (removed again)
 *
 * Exits 0 once every try is reported, 2 on a usage error. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "shm/lmproto.h"

/* The errno name, for messages a script compares. */
static const char *
err_name(int e)
{
	static char buf[16];

	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EIDRM: return "EIDRM";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case EPIPE: return "EPIPE";
	case EAGAIN: return "EAGAIN";
	case ENOTDIR: return "ENOTDIR";
	}
	snprintf(buf, sizeof buf, "errno%d", e);
	return buf;
}

static void
try_segment(int shmid)
{
	struct shmid_ds ds;
	void *p;

	if (shmctl(shmid, IPC_STAT, &ds) == 0)
		printf("stat ok uid=%u mode=%03o\n", (unsigned)ds.shm_perm.uid,
		    (unsigned)(ds.shm_perm.mode & 0777));
	else
		printf("stat %s\n", err_name(errno));
	p = shmat(shmid, NULL, 0);
	if (p != (void *)-1) {
		/* Proof of access, not a write: the LM's header stays as is. */
		printf("shmat ok magic=%08x\n", *(volatile unsigned *)p);
		shmdt(p);
	} else
		printf("shmat %s\n", err_name(errno));
	p = shmat(shmid, NULL, SHM_RDONLY);
	if (p != (void *)-1) {
		printf("shmat-ro ok\n");
		shmdt(p);
	} else
		printf("shmat-ro %s\n", err_name(errno));
}

static void
try_socket(const char *path)
{
	struct sockaddr_un sa;
	struct lmp_hello h;
	struct lmp_reply r;
	struct timeval tv = { 5, 0 };
	ssize_t n;
	int fd;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1) {
		printf("connect %s\nhello not-tried\n", err_name(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	printf("connect ok\n");
	memset(&h, 0, sizeof h);
	h.magic = LMP_MAGIC;
	h.version = LMP_VERSION;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	snprintf(h.name, sizeof h.name, "intruder");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (send(fd, &h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) {
		printf("hello %s\n", err_name(errno));
		close(fd);
		return;
	}
	n = recv(fd, &r, sizeof r, MSG_WAITALL);
	if (n == (ssize_t)sizeof r && r.magic == LMP_MAGIC &&
	    r.status == LMP_OK)
		printf("hello ok shmid=%d\n", r.shmid);
	else if (n == (ssize_t)sizeof r)
		printf("hello refused\n");
	else if (n >= 0)
		printf("hello eof\n");
	else
		printf("hello %s\n", err_name(errno));
	close(fd);
}

static void
try_folder(const char *dir, const char *pidfile)
{
	struct sockaddr_un sa;
	DIR *d;
	int fd;

	d = opendir(dir);
	if (d != NULL) {
		printf("opendir ok\n");
		closedir(d);
	} else
		printf("opendir %s\n", err_name(errno));
	fd = open(pidfile, O_RDONLY);
	if (fd != -1) {
		printf("pidfile ok\n");
		close(fd);
	} else
		printf("pidfile %s\n", err_name(errno));
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/intruder.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd != -1 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		printf("plant ok\n");
		unlink(sa.sun_path);
	} else
		printf("plant %s\n", err_name(errno));
	if (fd != -1)
		close(fd);
}

int
main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr,
		    "usage: intruder SHMID SOCKET RUNDIR PIDFILE\n");
		return 2;
	}
	alarm(20);	/* never left waiting */
	setvbuf(stdout, NULL, _IOLBF, 0);
	try_segment(atoi(argv[1]));
	try_socket(argv[2]);
	try_folder(argv[3], argv[4]);
	return 0;
}
