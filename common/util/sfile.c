/* SPDX-License-Identifier: MIT */
/* sfile.c: creating and replacing the daemons' output files safely. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "util/sfile.h"

/* The folder of path in buf ("." if none). */
static int
folder_of(const char *path, char *buf, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL)
		return snprintf(buf, cap, ".") < (int)cap ? 0 : -1;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= cap)
		return -1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 0;
}

int
sfile_check_new(const char *path, int force, char *why, size_t cap)
{
	char dir[4096];
	struct stat st;

	if (*path == '\0' || path[strlen(path) - 1] == '/') {
		snprintf(why, cap, "not a file name");
		return -1;
	}
	if (folder_of(path, dir, sizeof dir) != 0) {
		snprintf(why, cap, "name too long");
		return -1;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, cap, "no folder %s", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(why, cap, "cannot create files in %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	if (!force) {
		snprintf(why, cap, "exists (--force replaces it)");
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, cap, "a folder");
		return -1;
	}
	return 0;
}

int
sfile_check_ours(const char *path, char *why, size_t cap)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(why, cap, "exists and is not a regular file of "
		    "yours: not replaced");
		return -1;
	}
	return 0;
}

int
sfile_tmpname(const char *path, char *buf, size_t cap)
{
	const char *base = strrchr(path, '/');
	unsigned char r[6];
	size_t dlen;
	int n;

	base = base != NULL ? base + 1 : path;
	dlen = (size_t)(base - path);
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	n = snprintf(buf, cap, "%.*s.%s.%02x%02x%02x%02x%02x%02x", (int)dlen,
	    path, base, r[0], r[1], r[2], r[3], r[4], r[5]);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

int
sfile_replace(const char *path, const void *data, size_t len, char *why,
	      size_t cap)
{
	char tmp[4096];
	const char *p = data;
	ssize_t n;
	int fd, tries;

	if (sfile_check_ours(path, why, cap) != 0)
		return -1;
	for (tries = 0;; tries++) {
		if (sfile_tmpname(path, tmp, sizeof tmp) != 0) {
			snprintf(why, cap, "name too long, or no random "
			    "numbers");
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries == 8) {
			snprintf(why, cap, "cannot create %s: %s", tmp,
			    strerror(errno));
			return -1;
		}
	}
	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* Checked again: what is there now is what gets replaced. */
	if (sfile_check_ours(path, why, cap) != 0) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0)
		goto fail;
	return 0;
fail:
	snprintf(why, cap, "%s", strerror(errno != 0 ? errno : EIO));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}
