/* SPDX-License-Identifier: MIT */
/* rundir.c: finding, creating and checking the owner-only run folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/rundir.h"
#include "util/env.h"

int
rundir_get(char *dir, size_t sz)
{
	const char *env, *tmp;
	struct stat st;
	int n;

	if ((env = env_get(ENV_RUNDIR)) != NULL)
		n = snprintf(dir, sz, "%s", env);
	else {
		if ((tmp = env_get(ENV_TMPDIR)) == NULL)
			tmp = env_vars[ENV_TMPDIR].def;
		n = snprintf(dir, sz, "%s/grm-%u", tmp, (unsigned)getuid());
	}
	if (n < 0 || (size_t)n >= sz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
rundir_path(char *out, size_t sz, const char *dir, const char *name,
	    const char *suffix)
{
	int r = snprintf(out, sz, "%s/%s%s", dir, name, suffix);

	return r < 0 || (size_t)r >= sz ? -1 : 0;
}
