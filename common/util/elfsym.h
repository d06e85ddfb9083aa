/* SPDX-License-Identifier: MIT */
/* elfsym.h: the function symbols of an ELF file on disk (.symtab and
 * .dynsym), its build id and the extent of its loaded segments, for
 * naming addresses (prove) and turning names into address ranges (the
 * preload library's function filter). */
#ifndef GRM_ELFSYM_H
#define GRM_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/* One function: [addr, addr + size) in the file's own virtual addresses
 * (an address in a process less the object's load bias). */
struct elfsym_fn {
	uint64_t	addr;
	uint64_t	size;
	const char	*name;	/* in the mapped file, NUL-terminated */
};

struct elfsym {
	const void	*map;	/* the file's bytes */
	size_t		maplen;
	int		mapped;	/* map is ours (elfsym_load), not the
				   caller's (elfsym_parse) */
	struct elfsym_fn *fn;	/* by addr, then by name */
	size_t		n;
	uint64_t	lo, hi;	/* the PT_LOAD segments' extent */
	char		build_id[84];	/* hex; "" if it has none */
};

/*
 * Reads path (a 64-bit ELF file of this machine's byte order): its
 * defined function symbols of both tables, merged by address.  Returns 0,
 * or -1 with errno set (ENOEXEC: not such a file, or malformed).  Every
 * offset and size is checked against the file: a corrupt or hostile file
 * fails or yields fewer symbols, never a bad read.  The caller owns e and
 * frees it with elfsym_free.
 */
int elfsym_load(struct elfsym *e, const char *path);

/* The same from the len bytes at buf, which the caller keeps (and
 * unchanged) until elfsym_free(e): names point into it. */
int elfsym_parse(struct elfsym *e, const void *buf, size_t len);

/* The function containing vaddr (a file virtual address), or NULL; a
 * symbol of size 0 holds its own address and what lies after it, up to
 * the next symbol, inside the loaded extent. */
const struct elfsym_fn *elfsym_find(const struct elfsym *e, uint64_t vaddr);

/* The GNU build id, in hexadecimal into out (cap bytes, cut to fit), of
 * the notes of a PT_NOTE segment (len bytes at notes, 4-byte aligned, in
 * a file or in memory); 0, or -1 and "" if they hold none or are
 * malformed. */
int elfsym_build_id(const void *notes, size_t len, char *out, size_t cap);

/* Frees what e holds (a zeroed e too) and zeroes it. */
void elfsym_free(struct elfsym *e);

#endif /* GRM_ELFSYM_H */
