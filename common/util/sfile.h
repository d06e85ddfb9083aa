/* SPDX-License-Identifier: MIT */
/* sfile.h: creating and replacing the daemons' output files safely: never
 * through a symbolic link, never into a file that is not ours, never by
 * truncating what is there. */
#ifndef GRM_SFILE_H
#define GRM_SFILE_H

#include <stddef.h>

/*
 * Whether path may be created, before anything is (nothing is changed):
 * its folder exists and we may write in it, and path does not exist; with
 * force, it may exist if it is not a folder (it will be replaced, not
 * written into).  0, or -1 with the reason in why ("exists (--force
 * replaces it)").
 */
int sfile_check_new(const char *path, int force, char *why, size_t cap);

/*
 * Whether path may be replaced by a file of ours: it does not exist, or it
 * is a regular file owned by us (the name itself, a link not followed).
 * 0, or -1 with the reason in why.
 */
int sfile_check_ours(const char *path, char *why, size_t cap);

/* A new name beside path, in its folder: ".NAME.XXXXXXXXXXXX" (random,
 * 48 bits).  0, or -1 (name too long, or no random numbers). */
int sfile_tmpname(const char *path, char *buf, size_t cap);

/*
 * Writes len bytes of data to a new random name beside path (mode 0600,
 * created with O_EXCL|O_NOFOLLOW), then renames it to path if path is
 * still absent or a regular file of ours (sfile_check_ours).  Nothing is
 * left beside path on failure.  0, or -1 with the reason in why.
 */
int sfile_replace(const char *path, const void *data, size_t len,
		  char *why, size_t cap);

#endif /* GRM_SFILE_H */
