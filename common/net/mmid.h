/* SPDX-License-Identifier: MIT */
/* mmid.h: the Main Monitor identifier, HOST:PORT:TOKEN: parsing, the
 * token, and the names of a Local Monitor's files derived from it. */
#ifndef GRM_MMID_H
#define GRM_MMID_H

#include <stddef.h>

#define MMID_TOKEN_LEN	16		/* bytes: 128 random bits */
#define MMID_TOKEN_HEX	(2 * MMID_TOKEN_LEN)
#define MMID_MAX	512		/* longest identifier string, NUL too */

struct mmid {
	char		hostport[272];	/* "HOST:PORT" as given: what messages
					   and files show (never the token) */
	char		host[256];	/* without the brackets of an IPv6
					   address */
	unsigned	port;
	unsigned char	token[MMID_TOKEN_LEN];
	char		hex[MMID_TOKEN_HEX + 1];	/* lower case */
};

/*
 * Parses "HOST:PORT:TOKEN" (HOST a name, a dotted address, or an IPv6
 * address in brackets; PORT 1 to 65535; TOKEN 32 hexadecimal digits, either
 * case).  Returns 0, or -1 with a reason in *why (a static string that
 * never quotes the token): an identifier without a token, a malformed
 * token, or something that is not an identifier.
 */
int mmid_parse(const char *s, struct mmid *id, const char **why);

/* Writes "HOST:PORT:TOKEN" into out[sz].  0, or -1 if it does not fit. */
int mmid_format(const struct mmid *id, char *out, size_t sz);

/*
 * Splits "HOST:PORT" (or "[V6]:PORT") into host[hsz] and *port (1 to
 * 65535).  Returns 0 or -1.
 */
int mmid_split(const char *hostport, char *host, size_t hsz, unsigned *port);

/*
 * arg as it is, or, if it starts with '@', the first line of the file it
 * names (so that the token need not be on a command line, where every
 * user of the host can read it), into out[sz].  Returns 0, or -1 with
 * errno set and a reason in *why.
 */
int mmid_read(const char *arg, char *out, size_t sz, const char **why);

/* 32 hexadecimal digits (or an identifier ending in them) into id's token
 * and hex.  Returns 0 or -1. */
int mmid_token_parse(const char *s, struct mmid *id);
/* Fills token and id->hex with a new random token (getrandom).  0 or -1. */
int mmid_token_new(struct mmid *id);

/*
 * The name, in run folder dir, of the files of the Local Monitor that
 * serves id: "lm-HOST_PORT-TAG", HOST:PORT with every byte outside
 * [A-Za-z0-9.-] made '_', TAG the first 16 hexadecimal digits of
 * SHA-256("grm-lm HOST:PORT TOKEN"); or, if the socket's path
 * (dir/NAME.sock) would not fit in a sockaddr_un, "lm-" and the first 32
 * digits.  Two Main Monitors with different tokens on the same address
 * never share a Local Monitor or a spill file.  0, or -1 if even the short
 * name does not fit in out[sz] or in a socket path.
 */
int mmid_lm_name(const struct mmid *id, const char *dir, char *out,
		 size_t sz);

#endif /* GRM_MMID_H */
