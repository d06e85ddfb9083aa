/* SPDX-License-Identifier: MIT */
/* env_man.c: prints the ENVIRONMENT section of a man page from the table
 * of environment variables (env.c): `env_man localmon.1`.  test/manenv.sh
 * compares the pages with it, and writes them (`make man-env`). */
#include <stdio.h>
#include <string.h>

#include "util/env.h"

struct item {
	enum env_id	id;
	const char	*note;		/* roff after the meaning, or NULL */
};

struct page {
	const char	*name;
	const char	*intro;		/* roff, or NULL */
	struct item	items[ENV_COUNT];
	unsigned	nitems;
	const char	*outro;
};

static const struct page pages[] = {
	{ "grm.3", NULL, {
	    { ENV_MM, "Without a token, or with a malformed one, the process "
		"is not traced either,\nand\n.B GRM_DEBUG\nsays why\n"
		".RI (\\(lq \"GRM_MM: no token: ...: running untraced\" \\(rq).\n"
		"With a wrong token, the program runs to its end untraced: its "
		"Local\nMonitor is refused by the Main Monitor, switches "
		"recording off and says so\nin its log (see\n.BR localmon (1)).\n"
		"Every process of a job must have exactly the same string." },
	    { ENV_DEBUG, NULL },
	    { ENV_BLOCK_MS, "Another value is not used (the default is)." },
	    { ENV_POLICY, "Unset: the policy the Local Monitor was started "
		"with (its own\n.BR GRM_POLICY ,\ninherited from the process "
		"that started it), else\n.BR block ." },
	    { ENV_MODE, NULL },
	    { ENV_SIGNALS, NULL },
	    { ENV_LOCALMON, NULL },
	    { ENV_RUNDIR, NULL },
	    { ENV_TMPDIR, NULL } }, 9,
	  ".TP\n.BR GRM_SEGSIZE \", \" GRM_CHUNKSIZE \", \" GRM_THRESHOLD "
	  "\", \" GRM_SPILL_MAX \", \" GRM_LM_LINGER \", \" GRM_LM_MM_TIMEOUT "
	  "\", \" GRM_LM_SILENT \", \" GRM_PUSH_INTERVAL "
	  "\", \" GRM_HOSTNAME\nPassed on to a Local Monitor the process "
	  "starts; see\n.BR localmon (1).\n.B GRM_HOSTNAME\nsets the host "
	  "name the trace shows for this host (its node).\n.PP\n.BR GRM_MM ,"
	  "\n.BR GRM_DEBUG ,\n.BR GRM_BLOCK_MS ,\n.BR GRM_POLICY ,\n"
	  ".B GRM_MODE\nand\n.B GRM_SIGNALS\nare read at the process's first "
	  "GMI call.\n" },
	{ "localmon.1", NULL, {
	    { ENV_MM, "Read if\n.B \\-\\-mm\nis not given.\nA Local Monitor "
		"started by a traced process gets it this way, never on its\n"
		"command line." },
	    { ENV_SEGSIZE, NULL },
	    { ENV_CHUNKSIZE, "A value of either variable that is not a "
		"number with an optional suffix\nstops\n.B localmon\nwith "
		"status 1.\nA value out of range, or a segment size the "
		"system refuses, makes the\nsegment impossible to set up: "
		"this is reported on standard error (see\n.BR BUGS ).\n"
		"Neither variable applies to a Local Monitor that adopts a "
		"segment (see\n.BR Adoption )." },
	    { ENV_POLICY, "Written into the segment when it is created." },
	    { ENV_THRESHOLD, "Written into the segment when it is created "
		"(at least one chunk); any\nother value stops\n.B localmon\n"
		"with status 1." },
	    { ENV_SPILL_MAX, "Another value that is not a size stops\n"
		".B localmon\nwith status 1." },
	    { ENV_LM_LINGER, NULL },
	    { ENV_LM_MM_TIMEOUT, "See\n.BR Spilling ." },
	    { ENV_LM_SILENT, "See\n.BR \"A silent Main Monitor\" ." },
	    { ENV_PUSH_INTERVAL, NULL },
	    { ENV_HOSTNAME, NULL },
	    { ENV_RUNDIR, NULL },
	    { ENV_TMPDIR, NULL },
	    { ENV_DEBUG, NULL } }, 14,
	  ".PP\nA Local Monitor started by a traced process gets that "
	  "process's environment,\nso these variables are best set for the "
	  "whole job.\n" },
	{ "mainmon.1", NULL, {
	    { ENV_DEBUG, NULL } }, 1,
	  ".PP\n.B mainmon\ndoes not read\n.BR GRM_MM ;\nthat variable is "
	  "for the traced programs.\n" },
	{ "grmctl.1", ".B grmctl\nuses no environment variable of its own "
	  "but this one, which the Main\nMonitor does nothing with:\n", {
	    { ENV_HOSTNAME, NULL } }, 1,
	  ".PP\nThe identifier is usually the one the traced programs have "
	  "in\n.BR GRM_MM ,\nso that\n.B grmctl \\(dq$GRM_MM\\(dq stop\nis a "
	  "common form on a machine of one's own; on a shared one, where\n"
	  ".BR ps (1)\nshows every user the command lines, prefer\n"
	  ".BR \"grmctl @mm.id stop\" ,\nwith the file\n.B \"mainmon \\-i\"\n"
	  "wrote.\n" },
};

static void
put_item(const struct item *it)
{
	const struct env_var *e = &env_vars[it->id];

	printf(".TP\n.B %s\n%s\n", e->name, e->meaning);
	if (it->note != NULL)
		printf("%s\n", it->note);
	if (e->def != NULL)
		printf("Default:\n.BR %s .\n", e->def);
}

int
main(int argc, char **argv)
{
	const struct page *p;
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: env_man PAGE (grm.3, localmon.1, "
		    "mainmon.1, grmctl.1)\n");
		return 2;
	}
	for (p = pages; p < pages + sizeof pages / sizeof pages[0]; p++) {
		if (strcmp(p->name, argv[1]) != 0)
			continue;
		printf(".SH ENVIRONMENT\n");
		if (p->intro != NULL)
			printf("%s", p->intro);
		for (i = 0; i < p->nitems; i++)
			put_item(&p->items[i]);
		printf("%s", p->outro);
		return fflush(stdout) != 0 ? 1 : 0;
	}
	fprintf(stderr, "env_man: %s: no such page\n", argv[1]);
	return 2;
}
