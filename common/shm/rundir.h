/* SPDX-License-Identifier: MIT */
/* rundir.h: the owner-only folder holding Local Monitor sockets and locks. */
#ifndef GRM_RUNDIR_H
#define GRM_RUNDIR_H

#include <stddef.h>

/*
 * Puts the run folder's path in dir[sz]: $GRM_RUNDIR if set, else
 * ${TMPDIR:-/tmp}/grm-<uid>.  Creates it mode 0700 if missing, and refuses
 * (-1, errno EPERM) a folder that is not a directory, is not ours, or is
 * open to group or others.  Returns 0 or -1 with errno set.
 */
int rundir_get(char *dir, size_t sz);

/*
 * Puts "<dir>/<name><suffix>" in out[sz]; name is a Local Monitor's name
 * (mmid_lm_name).  Returns 0, or -1 if it does not fit (a socket path must
 * fit in sockaddr_un: callers pass that size).
 */
int rundir_path(char *out, size_t sz, const char *dir, const char *name,
		const char *suffix);

#endif /* GRM_RUNDIR_H */
