/* SPDX-License-Identifier: MIT */
/* elfsym.c: the function symbols, build id and load extent of an ELF
 * file on disk, read with <elf.h> alone (elfsym.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "elfsym.h"

/* Whether [off, off + len) lies in a file of size n. */
static int
in_file(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

/* The same, and off a multiple of align (a power of 2): the structures
 * are read in place. */
static int
in_file_at(uint64_t off, uint64_t len, size_t n, uint64_t align)
{
	return (off & (align - 1)) == 0 && in_file(off, len, n);
}

int
elfsym_build_id(const void *notes, size_t len, char *out, size_t cap)
{
	const char *p = notes;
	const Elf64_Nhdr *nh;
	uint64_t namesz, descsz, off = 0;
	size_t j;

	if (cap > 0)
		out[0] = '\0';
	while (off + sizeof *nh <= len) {
		nh = (const Elf64_Nhdr *)(const void *)(p + off);
		namesz = ((uint64_t)nh->n_namesz + 3) & ~(uint64_t)3;
		descsz = ((uint64_t)nh->n_descsz + 3) & ~(uint64_t)3;
		if (namesz > len || descsz > len ||
		    off + sizeof *nh + namesz + nh->n_descsz > len)
			return -1;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(p + off + sizeof *nh, "GNU", 4) == 0) {
			const unsigned char *d = (const unsigned char *)p +
			    off + sizeof *nh + namesz;

			for (j = 0; j < nh->n_descsz && 2 * j + 2 < cap; j++)
				snprintf(out + 2 * j, 3, "%02x", d[j]);
			return 0;
		}
		off += sizeof *nh + namesz + descsz;
	}
	return -1;
}

/* Adds the defined functions of symbol table section sh (its strings in
 * section sh->sh_link). */
static int
add_table(struct elfsym *e, const Elf64_Shdr *sh, const Elf64_Shdr *shs,
	  unsigned nsh, size_t *cap)
{
	const char *f = e->map;
	const Elf64_Shdr *str;
	const Elf64_Sym *sym;
	uint64_t i, n;
	struct elfsym_fn *t;
	int type;

	if (sh->sh_link >= nsh || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file_at(sh->sh_offset, sh->sh_size, e->maplen, 8))
		return 0;
	str = &shs[sh->sh_link];
	if (str->sh_type != SHT_STRTAB || str->sh_size == 0 ||
	    !in_file(str->sh_offset, str->sh_size, e->maplen) ||
	    f[str->sh_offset + str->sh_size - 1] != '\0')
		return 0;
	n = sh->sh_size / sizeof(Elf64_Sym);
	sym = (const Elf64_Sym *)(const void *)(f + sh->sh_offset);
	for (i = 0; i < n; i++) {
		type = ELF64_ST_TYPE(sym[i].st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym[i].st_shndx == SHN_UNDEF || sym[i].st_value == 0 ||
		    sym[i].st_name >= str->sh_size)
			continue;
		if (e->n == *cap) {
			*cap = *cap ? 2 * *cap : 256;
			if ((t = realloc(e->fn, *cap * sizeof *t)) == NULL)
				return -1;
			e->fn = t;
		}
		e->fn[e->n].addr = sym[i].st_value;
		e->fn[e->n].size = sym[i].st_size;
		e->fn[e->n].name = f + str->sh_offset + sym[i].st_name;
		e->n++;
	}
	return 0;
}

static int
by_addr(const void *a, const void *b)
{
	const struct elfsym_fn *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* The global name before a local alias, then by name: the same
	 * order every time. */
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int
parse(struct elfsym *e)
{
	const char *f = e->map;
	const Elf64_Ehdr *eh = e->map;

	/* Structures are read in place: the file is mapped page-aligned, a
	 * caller's buffer is 8-byte aligned, and every offset is checked for
	 * its structure's alignment. */
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	size_t cap = 0, i, j;
	int have_note = 0;

	if (e->maplen < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	e->lo = UINT64_MAX;
	if (eh->e_phentsize == sizeof *ph &&
	    in_file_at(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof *ph,
	    e->maplen, 8)) {
		ph = (const Elf64_Phdr *)(const void *)(f + eh->e_phoff);
		for (i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_LOAD) {
				if (ph[i].p_vaddr < e->lo)
					e->lo = ph[i].p_vaddr;
				if (ph[i].p_vaddr + ph[i].p_memsz > e->hi)
					e->hi = ph[i].p_vaddr + ph[i].p_memsz;
			} else if (ph[i].p_type == PT_NOTE && !have_note &&
			    in_file_at(ph[i].p_offset, ph[i].p_filesz,
			    e->maplen, 4)) {
				have_note = elfsym_build_id(f +
				    ph[i].p_offset, ph[i].p_filesz,
				    e->build_id, sizeof e->build_id) == 0;
			}
		}
	}
	if (e->lo == UINT64_MAX)
		e->lo = 0;
	if (eh->e_shentsize != sizeof *sh || eh->e_shnum == 0 ||
	    !in_file_at(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof *sh,
	    e->maplen, 8))
		return 0;	/* no sections: no symbols */
	sh = (const Elf64_Shdr *)(const void *)(f + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if ((sh[i].sh_type == SHT_SYMTAB ||
		    sh[i].sh_type == SHT_DYNSYM) &&
		    add_table(e, &sh[i], sh, eh->e_shnum, &cap) != 0)
			return -2;
	if (e->n == 0)
		return 0;
	qsort(e->fn, e->n, sizeof *e->fn, by_addr);
	/* One entry per address: both tables list the exported ones. */
	for (i = j = 1; i < e->n; i++)
		if (e->fn[i].addr != e->fn[j - 1].addr)
			e->fn[j++] = e->fn[i];
	e->n = j;
	return 0;
}

int
elfsym_parse(struct elfsym *e, const void *buf, size_t len)
{
	int r;

	memset(e, 0, sizeof *e);
	if (((uintptr_t)buf & 7) != 0) {
		errno = EINVAL;
		return -1;
	}
	e->map = buf;
	e->maplen = len;
	if ((r = parse(e)) != 0) {
		elfsym_free(e);
		errno = r == -2 ? ENOMEM : ENOEXEC;
		return -1;
	}
	return 0;
}

int
elfsym_load(struct elfsym *e, const char *path)
{
	struct stat sb;
	void *m;
	int fd, r, saved;

	memset(e, 0, sizeof *e);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		saved = errno ? errno : ENOEXEC;
		close(fd);
		errno = S_ISREG(sb.st_mode) ? ENOEXEC : saved;
		return -1;
	}
	e->maplen = (size_t)sb.st_size;
	m = mmap(NULL, e->maplen, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	e->map = m;
	e->mapped = 1;
	if ((r = parse(e)) != 0) {
		elfsym_free(e);
		errno = r == -2 ? ENOMEM : ENOEXEC;
		return -1;
	}
	return 0;
}

const struct elfsym_fn *
elfsym_find(const struct elfsym *e, uint64_t vaddr)
{
	size_t lo = 0, hi = e->n, mid;
	const struct elfsym_fn *s;

	while (lo < hi) {	/* the last symbol at or below vaddr */
		mid = lo + (hi - lo) / 2;
		if (e->fn[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &e->fn[lo - 1];
	if (s->size != 0 ? vaddr - s->addr < s->size :
	    vaddr == s->addr || vaddr < e->hi)
		return s;
	return NULL;
}

void
elfsym_free(struct elfsym *e)
{
	if (e->mapped)
		munmap((void *)e->map, e->maplen);
	free(e->fn);
	memset(e, 0, sizeof *e);
}
