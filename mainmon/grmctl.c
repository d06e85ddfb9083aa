/* SPDX-License-Identifier: MIT */
/* grmctl.c: command-line control of a running Main Monitor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "net/mmid.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sha256.h"

struct ctl {
	struct event_base	*base;
	struct peer		*p;
	const char		*id;		/* HOST:PORT, for messages */
	const char		*cmd;
	struct auth_client	auth;
	int			authed;
	int			status;		/* exit status */
	unsigned		wait;		/* seconds for the answer */
};

/* Seconds grmctl waits for mainmon's answer: a status or a plan command,
 * anything else. */
#define CTL_WAIT_STATUS	5
#define CTL_WAIT	120

static void
usage(FILE *f)
{
	fprintf(f, "usage: grmctl HOST:PORT:TOKEN|@IDFILE COMMAND [ARG...]\n"
	    "commands: snapshot, live, stop, status, stats, probe,\n"
	    "          enable CLASS|EID|all, disable CLASS|EID, "
	    "filter [SUBSTRING],\n"
	    "          file NEWNAME, plan add 'RULE', plan list, plan del N "
	    "(doc/plans.md)\n"
	    "classes:  procedure, event, string, message, user, class:N\n");
}

/* The commands, and how many words each takes after it (mainmon checks
 * their values). */
static const struct {
	const char	*verb;
	int		min, max;
} commands[] = {
	{ "snapshot", 0, 0 }, { "live", 0, 0 }, { "stop", 0, 0 },
	{ "status", 0, 0 },
	{ "stats", 0, 0 }, { "probe", 0, 0 }, { "enable", 1, 1 },
	{ "disable", 1, 1 }, { "filter", 0, 1000 }, { "file", 1, 1 },
	{ "plan", 1, 1000 },
};

/*
 * Checks the command words (argv[0] the verb, n words in all) before
 * anything is made.  0, or 2 (said on stderr).
 */
static int
check_command(char **argv, int n)
{
	size_t i;
	int args = n - 1;

	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[0], commands[i].verb) == 0)
			break;
	if (i == sizeof commands / sizeof commands[0]) {
		fprintf(stderr, "grmctl: %s: not a command\n", argv[0]);
		usage(stderr);
		return 2;
	}
	if (args < commands[i].min || args > commands[i].max) {
		fprintf(stderr, "grmctl: %s: %s\n", argv[0],
		    commands[i].max == 0 ? "takes no argument" :
		    commands[i].max == 1 ? "takes one argument" :
		    "needs an argument");
		usage(stderr);
		return 2;
	}
	if (args == 1 && argv[1][0] == '\0') {
		fprintf(stderr, "grmctl: %s: an empty argument\n", argv[0]);
		return 2;
	}
	return 0;
}

static void
finish(struct ctl *c, int status)
{
	c->status = status;
	event_base_loopexit(c->base, NULL);
}

static void
dispatch(struct peer *p, uint16_t type, struct wire_rd *msg, const char *why,
	 void *arg)
{
	struct ctl *c = arg;
	unsigned char buf[WIRE_STR_MAX + 64];
	char text[WIRE_TEXT_MAX + 1], bad[160];
	struct wire_wr w;
	uint32_t st;

	uint32_t node;

	if (msg == NULL) {
		fprintf(stderr, "grmctl: %s: %s\n", c->id, why);
		finish(c, 1);
		return;
	}
	/* Every message against its rule (wire.h) before its handler. */
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_CTL, c->authed ?
	    WIRE_ST_READY : WIRE_ST_AUTH, wire_rd_left(msg), bad,
	    sizeof bad) != 0) {
		fprintf(stderr, "grmctl: %s: %s\n", c->id, bad);
		finish(c, 1);
		return;
	}
	if (!c->authed) {
		switch (peer_auth(p, &c->auth, type, msg, &node, text,
		    sizeof text)) {
		case AUTH_MORE:
			return;
		case AUTH_OK:
			/* The MM proved the token: now the command. */
			c->authed = 1;
			wire_wr_init(&w, buf, sizeof buf);
			wire_put_str(&w, c->cmd);
			peer_send(c->p, WIRE_CTL, buf, w.len, NULL, 0);
			return;
		case AUTH_REFUSED:
			fprintf(stderr, "grmctl: mainmon at %s refused: %s\n",
			    c->id, text);
			finish(c, 1);
			return;
		case AUTH_DENIED:
			fprintf(stderr, "grmctl: %s: refused: %s\n", c->id,
			    text);
			finish(c, 1);
			return;
		case AUTH_IMPOSTOR:
			fprintf(stderr, "grmctl: %s is not the main monitor "
			    "we were given: it did not prove the token\n",
			    c->id);
			finish(c, 1);
			return;
		case AUTH_BAD:
			fprintf(stderr, "grmctl: %s: unexpected message %u "
			    "during authentication\n", c->id, type);
			finish(c, 1);
			return;
		}
	}
	switch (type) {
	case WIRE_CTL_REPLY:
		st = wire_get_u32(msg);
		wire_get_str(msg, text, sizeof text);
		if (!wire_rd_end(msg)) {
			fprintf(stderr, "grmctl: %s: malformed reply\n", c->id);
			finish(c, 1);
			return;
		}
		if (st == 0) {
			fputs(text, stdout);
			if (text[0] != '\0' && text[strlen(text) - 1] != '\n')
				putchar('\n');
		} else
			fprintf(stderr, "grmctl: %s: %s\n", c->id, text);
		finish(c, st == 0 ? 0 : 1);
		break;
	}
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *c = arg;

	(void)fd;
	(void)what;
	fprintf(stderr, "grmctl: %s: no answer in %u s\n", c->id, c->wait);
	finish(c, 1);
}

int
main(int argc, char **argv)
{
	struct ctl c;
	struct event *to;
	struct mmid id;
	const char *why;
	char line[MMID_MAX], cmd[WIRE_STR_MAX];
	int i;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "grmctl: %s\n", argc < 2 ? "a main monitor "
		    "identifier and a command are needed" : "a command is "
		    "needed");
		usage(stderr);
		return 2;
	}
	if ((i = check_command(argv + 2, argc - 2)) != 0)
		return i;
	memset(&c, 0, sizeof c);
	/* The command line: the words after the identifier, one space
	 * apart. */
	cmd[0] = '\0';
	for (i = 2; i < argc; i++) {
		if (strlen(cmd) + strlen(argv[i]) + 2 > sizeof cmd) {
			fprintf(stderr, "grmctl: command too long\n");
			return 2;
		}
		if (i > 2)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	c.cmd = cmd;
	/* The identifier's token stays out of every message. */
	if (mmid_read(argv[1], line, sizeof line, &why) != 0) {
		fprintf(stderr, "grmctl: %s: %s\n", argv[1], why);
		return 2;
	}
	if (mmid_parse(line, &id, &why) != 0) {
		fprintf(stderr, "grmctl: main monitor identifier: %s\n", why);
		return 2;
	}
	hmac_wipe(line, sizeof line);
	c.id = id.hostport;
	c.base = event_base_new();
	if (c.base == NULL)
		return 1;
	c.p = peer_connect(c.base, id.hostport, dispatch, &c, &why);
	if (c.p == NULL) {
		fprintf(stderr, "grmctl: %s: %s\n", c.id, why);
		event_base_free(c.base);
		return 1;
	}
	if (peer_send_hello(c.p, &c.auth, id.token, WIRE_ROLE_CTL, 0) != 0) {
		fprintf(stderr, "grmctl: %s: cannot start the handshake\n",
		    c.id);
		peer_free(c.p);
		event_base_free(c.base);
		return 1;
	}
	hmac_wipe(id.token, sizeof id.token);
	/* mainmon answers a status within a second whatever its LMs do;
	 * a collection may wait a minute for theirs, then be written. */
	c.wait = strcmp(argv[2], "status") == 0 ||
	    strcmp(argv[2], "plan") == 0 ? CTL_WAIT_STATUS : CTL_WAIT;
	to = evtimer_new(c.base, timeout_cb, &c);
	event_add(to,
	    &(struct timeval){ .tv_sec = c.wait, .tv_usec = 0 });
	c.status = 1;
	event_base_dispatch(c.base);
	event_free(to);
	peer_free(c.p);
	event_base_free(c.base);
	return c.status;
}
