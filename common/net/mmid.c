/* SPDX-License-Identifier: MIT */
/* mmid.c: the Main Monitor identifier HOST:PORT:TOKEN (doc/protocol.md,
 * section 3.2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/un.h>

#include "net/mmid.h"
#include "util/num.h"
#include "util/sha256.h"

static void
to_hex(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Exactly 32 hexadecimal digits at s (and nothing after) into token. */
static int
token_hex(const char *s, unsigned char token[MMID_TOKEN_LEN])
{
	int i, hi, lo;

	if (strlen(s) != MMID_TOKEN_HEX)
		return -1;
	for (i = 0; i < MMID_TOKEN_LEN; i++) {
		hi = num_hexdigit((unsigned char)s[2 * i]);
		lo = num_hexdigit((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		token[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int
mmid_split(const char *hostport, char *host, size_t hsz, unsigned *port)
{
	const char *colon = strrchr(hostport, ':');
	char *end;
	unsigned long v;
	size_t n;

	if (colon == NULL || colon == hostport)
		return -1;
	n = (size_t)(colon - hostport);
	if (hostport[0] == '[' && colon[-1] == ']') {
		hostport++;
		n -= 2;
	}
	if (n == 0 || n >= hsz)
		return -1;
	memcpy(host, hostport, n);
	host[n] = '\0';
	if (colon[1] < '0' || colon[1] > '9')
		return -1;	/* strtoul would take spaces and signs */
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > 65535)
		return -1;
	*port = (unsigned)v;
	return 0;
}

int
mmid_parse(const char *s, struct mmid *id, const char **why)
{
	const char *colon;
	char host[256];
	unsigned port;
	size_t n;

	memset(id, 0, sizeof *id);
	*why = "not a main monitor identifier (HOST:PORT:TOKEN, the line "
	    "mainmon printed)";
	if (s == NULL || (colon = strrchr(s, ':')) == NULL)
		return -1;
	n = (size_t)(colon - s);
	if (n >= sizeof id->hostport)
		return -1;
	memcpy(id->hostport, s, n);
	id->hostport[n] = '\0';
	if (token_hex(colon + 1, id->token) != 0) {
		/* Say what is wrong: the token, or its absence (HOST:PORT
		 * alone, as before tokens). */
		if (mmid_split(id->hostport, host, sizeof host, &port) == 0)
			*why = "bad token: not 32 hexadecimal digits";
		else if (mmid_split(s, host, sizeof host, &port) == 0)
			*why = "no token: give the whole identifier mainmon "
			    "printed, HOST:PORT:TOKEN";
		memset(id, 0, sizeof *id);
		return -1;
	}
	if (mmid_split(id->hostport, id->host, sizeof id->host,
	    &id->port) != 0) {
		memset(id, 0, sizeof *id);
		return -1;
	}
	to_hex(id->token, MMID_TOKEN_LEN, id->hex);
	return 0;
}

int
mmid_format(const struct mmid *id, char *out, size_t sz)
{
	int r = snprintf(out, sz, "%s:%s", id->hostport, id->hex);

	return r < 0 || (size_t)r >= sz ? -1 : 0;
}

int
mmid_read(const char *arg, char *out, size_t sz, const char **why)
{
	FILE *f;
	size_t n;

	if (arg[0] != '@') {
		if (strlen(arg) >= sz) {
			errno = ENAMETOOLONG;
			*why = "identifier too long";
			return -1;
		}
		memcpy(out, arg, strlen(arg) + 1);
		return 0;
	}
	f = fopen(arg + 1, "re");
	if (f == NULL) {
		*why = strerror(errno);
		return -1;
	}
	if (fgets(out, (int)sz, f) == NULL) {
		fclose(f);
		errno = EINVAL;
		*why = "empty file";
		return -1;
	}
	fclose(f);
	n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' ||
	    out[n - 1] == ' ' || out[n - 1] == '\t'))
		out[--n] = '\0';
	return 0;
}

int
mmid_token_parse(const char *s, struct mmid *id)
{
	const char *colon = strrchr(s, ':');

	if (token_hex(colon != NULL ? colon + 1 : s, id->token) != 0)
		return -1;
	to_hex(id->token, MMID_TOKEN_LEN, id->hex);
	return 0;
}

int
mmid_token_new(struct mmid *id)
{
	size_t got = 0;
	ssize_t r;

	while (got < MMID_TOKEN_LEN) {
		r = getrandom(id->token + got, MMID_TOKEN_LEN - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	to_hex(id->token, MMID_TOKEN_LEN, id->hex);
	return 0;
}

int
mmid_lm_name(const struct mmid *id, const char *dir, char *out, size_t sz)
{
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];
	struct sha256 s;
	size_t n = 0, i, sun = sizeof(((struct sockaddr_un *)0)->sun_path);
	int r;

	sha256_init(&s);
	sha256_update(&s, "grm-lm ", 7);
	sha256_update(&s, id->hostport, strlen(id->hostport));
	sha256_update(&s, " ", 1);
	sha256_update(&s, id->hex, MMID_TOKEN_HEX);
	sha256_final(&s, d);
	to_hex(d, sizeof d, hex);
	if (sz < 4)
		return -1;
	memcpy(out, "lm-", 3);
	n = 3;
	for (i = 0; id->hostport[i] != '\0' && n + 1 < sz; i++) {
		char c = id->hostport[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-'))
			c = '_';
		out[n++] = c;
	}
	r = snprintf(out + n, sz - n, "-%.16s", hex);
	/* dir "/" name ".sock" and a NUL must fit in sun_path. */
	if (id->hostport[i] == '\0' && r > 0 && (size_t)r < sz - n &&
	    strlen(dir) + 1 + n + (size_t)r + 5 < sun)
		return 0;
	r = snprintf(out, sz, "lm-%.32s", hex);
	if (r < 0 || (size_t)r >= sz || strlen(dir) + 1 + (size_t)r + 5 >= sun)
		return -1;
	return 0;
}
