/* SPDX-License-Identifier: MIT */
/* sha256.h: SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104) and a
 * constant-time comparison, for the wire protocol's authentication. */
#ifndef GRM_SHA256_H
#define GRM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32
#define SHA256_BLOCK	64

struct sha256 {
	uint32_t	h[8];
	uint64_t	bytes;		/* message length so far */
	unsigned char	buf[SHA256_BLOCK];
	size_t		nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Writes the digest to out[SHA256_LEN]; s must be initialised again to
 * be used again. */
void sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN]);
void sha256(const void *p, size_t n, unsigned char out[SHA256_LEN]);

/* HMAC-SHA256 over several parts: update any number of times. */
struct hmac_sha256 {
	struct sha256	inner;
	unsigned char	okey[SHA256_BLOCK];	/* key xor opad */
};

void hmac_sha256_init(struct hmac_sha256 *h, const void *key, size_t klen);
void hmac_sha256_update(struct hmac_sha256 *h, const void *p, size_t n);
/* Writes the MAC to out[SHA256_LEN] and wipes the key from h. */
void hmac_sha256_final(struct hmac_sha256 *h, unsigned char out[SHA256_LEN]);
void hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
		 unsigned char out[SHA256_LEN]);

/* 1 if a[n] and b[n] are equal, else 0, in a time that depends on n
 * only: for comparing MACs. */
int hmac_equal(const void *a, const void *b, size_t n);

/* Overwrites p[n] with zeros in a way the compiler keeps. */
void hmac_wipe(void *p, size_t n);

#endif /* GRM_SHA256_H */
