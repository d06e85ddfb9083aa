/* SPDX-License-Identifier: MIT */
/* test_sha256.c: SHA-256 against FIPS 180-4's examples, HMAC-SHA256
 * against RFC 4231's test cases, and the constant-time comparison. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sha256.h"

static void
hex(const unsigned char *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* Bytes from a hexadecimal string; returns how many. */
static size_t
unhex(const char *s, unsigned char *out)
{
	size_t n = 0;
	unsigned v;

	for (; s[0] != '\0' && s[1] != '\0'; s += 2) {
		sscanf(s, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

static void
digest_is(const void *p, size_t n, const char *want)
{
	unsigned char d[SHA256_LEN];
	char got[2 * SHA256_LEN + 1];

	sha256(p, n, d);
	hex(d, sizeof d, got);
	cr_assert_str_eq(got, want);
}

/* FIPS 180-4 examples (NIST's SHA256.pdf and SHA2_Additional.pdf). */
Test(sha256, fips_examples)
{
	digest_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	digest_is("", 0, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	digest_is("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    56, "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1");
	digest_is("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112,
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(sha256, million_a)
{
	unsigned char d[SHA256_LEN], a[1000];
	char got[2 * SHA256_LEN + 1];
	struct sha256 s;
	int i;

	memset(a, 'a', sizeof a);
	sha256_init(&s);
	for (i = 0; i < 1000; i++)
		sha256_update(&s, a, sizeof a);
	sha256_final(&s, d);
	hex(d, sizeof d, got);
	cr_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
}

/* Fed in pieces of every size, the digest is the same. */
Test(sha256, pieces)
{
	unsigned char msg[300], whole[SHA256_LEN], part[SHA256_LEN];
	struct sha256 s;
	size_t i, step, off;

	for (i = 0; i < sizeof msg; i++)
		msg[i] = (unsigned char)(i * 7 + 3);
	for (i = 0; i <= sizeof msg; i++) {
		sha256(msg, i, whole);
		for (step = 1; step <= 65; step += 16) {
			sha256_init(&s);
			for (off = 0; off < i; off += step)
				sha256_update(&s, msg + off,
				    i - off < step ? i - off : step);
			sha256_final(&s, part);
			cr_assert(memcmp(whole, part, sizeof whole) == 0,
			    "length %zu, pieces of %zu", i, step);
		}
	}
}

struct rfc4231 {
	const char	*key;
	const char	*data;
	const char	*mac;		/* case 5: the first 128 bits */
};

/* RFC 4231, section 4: test cases 1 to 7, keys and data in hex. */
static const struct rfc4231 cases[] = {
	{ "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
	  "4869205468657265",
	  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
	{ "4a656665",
	  "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	  "dddddddddddddddddddddddddddddddddddd",
	  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
	{ "0102030405060708090a0b0c0d0e0f10111213141516171819",
	  "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
	  "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
	  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
	{ "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
	  "546573742057697468205472756e636174696f6e",
	  "a3b6167473100ee06e0c796c2955552b" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaa",
	  "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a"
	  "65204b6579202d2048617368204b6579204669727374",
	  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaa",
	  "5468697320697320612074657374207573696e672061206c6172676572207468"
	  "616e20626c6f636b2d73697a65206b657920616e642061206c61726765722074"
	  "68616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565"
	  "647320746f20626520686173686564206265666f7265206265696e6720757365"
	  "642062792074686520484d414320616c676f726974686d2e",
	  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
};

Test(hmac_sha256, rfc4231)
{
	unsigned char key[256], data[256], mac[SHA256_LEN];
	char got[2 * SHA256_LEN + 1];
	size_t i, kl, dl;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		kl = unhex(cases[i].key, key);
		dl = unhex(cases[i].data, data);
		hmac_sha256(key, kl, data, dl, mac);
		hex(mac, sizeof mac, got);
		got[strlen(cases[i].mac)] = '\0';	/* case 5 is cut */
		cr_assert_str_eq(got, cases[i].mac, "test case %zu", i + 1);
	}
}

/* The same MAC over the data given in parts. */
Test(hmac_sha256, parts)
{
	unsigned char one[SHA256_LEN], two[SHA256_LEN];
	struct hmac_sha256 h;

	hmac_sha256("key", 3, "The quick brown fox", 19, one);
	hmac_sha256_init(&h, "key", 3);
	hmac_sha256_update(&h, "The quick", 9);
	hmac_sha256_update(&h, "", 0);
	hmac_sha256_update(&h, " brown fox", 10);
	hmac_sha256_final(&h, two);
	cr_assert(memcmp(one, two, sizeof one) == 0);
}

Test(hmac_sha256, equal)
{
	unsigned char a[32], b[32];
	int i;

	memset(a, 0x5a, sizeof a);
	memcpy(b, a, sizeof b);
	cr_assert_eq(hmac_equal(a, b, sizeof a), 1);
	cr_assert_eq(hmac_equal(a, b, 0), 1);
	for (i = 0; i < 32; i++) {
		b[i] ^= 0x01;
		cr_assert_eq(hmac_equal(a, b, sizeof a), 0, "byte %d", i);
		b[i] ^= 0x81;
		cr_assert_eq(hmac_equal(a, b, sizeof a), 0, "byte %d", i);
		b[i] ^= 0x80;
	}
}
