/* SPDX-License-Identifier: MIT */
/* test_sfile.c: the daemons' safe creation of files (common/util/sfile.c):
 * what may be created or replaced, never through a link nor over what is
 * not a regular file of ours, and nothing left beside the target. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/sfile.h"

static char dir[] = "/tmp/grm-sfile.XXXXXX";
static char path[512], why[512];

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

static const char *
in_dir(const char *name)
{
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static void
put(const char *name, const char *text)
{
	FILE *f = fopen(in_dir(name), "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static char *
get(const char *name)
{
	static char buf[256];
	FILE *f = fopen(in_dir(name), "r");
	size_t n;

	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Entries of dir, "." and ".." left out. */
static int
entries(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

TestSuite(sfile, .init = setup, .fini = teardown);

Test(sfile, check_new_refuses_what_exists_unless_forced)
{
	cr_expect_eq(sfile_check_new(in_dir("new"), 0, why, sizeof why), 0);
	put("old", "x");
	cr_expect_eq(sfile_check_new(in_dir("old"), 0, why, sizeof why), -1);
	cr_expect_str_eq(why, "exists (--force replaces it)");
	cr_expect_eq(sfile_check_new(in_dir("old"), 1, why, sizeof why), 0);
	/* A link is a name that exists, even one that points nowhere. */
	cr_assert_eq(symlink("nowhere", in_dir("dangling")), 0);
	cr_expect_eq(sfile_check_new(in_dir("dangling"), 0, why, sizeof why),
	    -1);
	cr_expect_eq(sfile_check_new(dir, 1, why, sizeof why), -1);
	cr_expect_str_eq(why, "a folder");
	cr_expect_eq(sfile_check_new(in_dir("no/such"), 1, why, sizeof why),
	    -1);
	cr_expect_eq(strncmp(why, "no folder ", 10), 0, "%s", why);
	cr_expect_eq(sfile_check_new("", 0, why, sizeof why), -1);
	cr_expect_eq(sfile_check_new("a/", 0, why, sizeof why), -1);
	cr_expect_eq(entries(), 2, "nothing made");
}

Test(sfile, tmpname_is_beside_and_new_each_time)
{
	char a[512], b[512];

	cr_assert_eq(sfile_tmpname(in_dir("t.trace"), a, sizeof a), 0);
	cr_assert_eq(sfile_tmpname(in_dir("t.trace"), b, sizeof b), 0);
	cr_expect_neq(strcmp(a, b), 0);
	cr_expect_eq(strncmp(a, dir, strlen(dir)), 0, "%s", a);
	cr_expect_eq(strncmp(a + strlen(dir), "/.t.trace.", 10), 0, "%s", a);
	cr_expect_eq(strlen(a), strlen(dir) + 10 + 12);
	cr_assert_eq(sfile_tmpname("t.trace", a, sizeof a), 0);
	cr_expect_eq(strncmp(a, ".t.trace.", 9), 0, "%s", a);
	cr_expect_eq(sfile_tmpname(in_dir("t.trace"), a, 20), -1);
}

Test(sfile, replace_writes_a_new_file_of_ours)
{
	struct stat st;

	cr_assert_eq(sfile_replace(in_dir("id"), "one\n", 4, why, sizeof why),
	    0, "%s", why);
	cr_expect_str_eq(get("id"), "one\n");
	cr_assert_eq(lstat(in_dir("id"), &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600);
	/* Ours and regular: replaced whole. */
	cr_assert_eq(sfile_replace(in_dir("id"), "two\n", 4, why, sizeof why),
	    0, "%s", why);
	cr_expect_str_eq(get("id"), "two\n");
	cr_expect_eq(entries(), 1, "nothing left beside it");
}

Test(sfile, replace_refuses_links_folders_and_devices)
{
	struct stat st;
	int node;

	put("victim", "victim\n");
	cr_assert_eq(symlink("victim", in_dir("link")), 0);
	cr_expect_eq(sfile_replace(in_dir("link"), "x\n", 2, why, sizeof why),
	    -1);
	cr_expect_str_eq(why, "exists and is not a regular file of yours: "
	    "not replaced");
	cr_expect_str_eq(get("victim"), "victim\n");
	cr_assert_eq(mkdir(in_dir("sub"), 0700), 0);
	cr_expect_eq(sfile_replace(in_dir("sub"), "x\n", 2, why, sizeof why),
	    -1);
	node = geteuid() == 0 && mknod(in_dir("null"), S_IFCHR | 0666,
	    makedev(1, 3)) == 0;
	if (node) {
		cr_expect_eq(sfile_replace(in_dir("null"), "x\n", 2, why,
		    sizeof why), -1);
		cr_assert_eq(lstat(in_dir("null"), &st), 0);
		cr_expect(S_ISCHR(st.st_mode), "the node is intact");
	}
	cr_expect_eq(sfile_check_ours(in_dir("absent"), why, sizeof why), 0);
	cr_expect_eq(entries(), 3 + node, "nothing left");
}
