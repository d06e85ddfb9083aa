/* SPDX-License-Identifier: MIT */
/* sha256.c: SHA-256 and HMAC-SHA256, written from FIPS 180-4 and RFC 2104
 * (no library dependency: see doc/protocol.md, section 1.11). */
#include <string.h>

#include "util/sha256.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n)	((x) >> (n) | (x) << (32 - (n)))

static void
block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ w[i - 2] >> 10) +
		    w[i - 7] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    w[i - 15] >> 3) + w[i - 16];
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		k = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void
sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(s->h, iv, sizeof iv);
	s->bytes = 0;
	s->nbuf = 0;
}

void
sha256_update(struct sha256 *s, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t take;

	s->bytes += n;
	if (s->nbuf > 0) {
		take = SHA256_BLOCK - s->nbuf < n ? SHA256_BLOCK - s->nbuf : n;
		memcpy(s->buf + s->nbuf, c, take);
		s->nbuf += take;
		c += take;
		n -= take;
		if (s->nbuf < SHA256_BLOCK)
			return;
		block(s->h, s->buf);
		s->nbuf = 0;
	}
	for (; n >= SHA256_BLOCK; c += SHA256_BLOCK, n -= SHA256_BLOCK)
		block(s->h, c);
	memcpy(s->buf, c, n);
	s->nbuf = n;
}

void
sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN])
{
	uint64_t bits = s->bytes * 8;
	int i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > SHA256_BLOCK - 8) {
		memset(s->buf + s->nbuf, 0, SHA256_BLOCK - s->nbuf);
		block(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, SHA256_BLOCK - 8 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[SHA256_BLOCK - 1 - i] = (unsigned char)(bits >> (8 * i));
	block(s->h, s->buf);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
	hmac_wipe(s, sizeof *s);
}

void
sha256(const void *p, size_t n, unsigned char out[SHA256_LEN])
{
	struct sha256 s;

	sha256_init(&s);
	sha256_update(&s, p, n);
	sha256_final(&s, out);
}

void
hmac_sha256_init(struct hmac_sha256 *h, const void *key, size_t klen)
{
	unsigned char k[SHA256_BLOCK], ipad[SHA256_BLOCK];
	int i;

	memset(k, 0, sizeof k);
	if (klen > SHA256_BLOCK)
		sha256(key, klen, k);
	else if (klen > 0)
		memcpy(k, key, klen);
	for (i = 0; i < SHA256_BLOCK; i++) {
		ipad[i] = k[i] ^ 0x36;
		h->okey[i] = k[i] ^ 0x5c;
	}
	sha256_init(&h->inner);
	sha256_update(&h->inner, ipad, sizeof ipad);
	hmac_wipe(k, sizeof k);
	hmac_wipe(ipad, sizeof ipad);
}

void
hmac_sha256_update(struct hmac_sha256 *h, const void *p, size_t n)
{
	sha256_update(&h->inner, p, n);
}

void
hmac_sha256_final(struct hmac_sha256 *h, unsigned char out[SHA256_LEN])
{
	unsigned char in[SHA256_LEN];
	struct sha256 o;

	sha256_final(&h->inner, in);
	sha256_init(&o);
	sha256_update(&o, h->okey, sizeof h->okey);
	sha256_update(&o, in, sizeof in);
	sha256_final(&o, out);
	hmac_wipe(in, sizeof in);
	hmac_wipe(h, sizeof *h);
}

void
hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
	    unsigned char out[SHA256_LEN])
{
	struct hmac_sha256 h;

	hmac_sha256_init(&h, key, klen);
	hmac_sha256_update(&h, p, n);
	hmac_sha256_final(&h, out);
}

int
hmac_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

void
hmac_wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n-- > 0)
		*v++ = 0;
}
