/* C-FFS's metadata templates for XN (docs/cffs.md): which blocks each of
 * its on-disk structures points to (owns), who may change or bind them
 * (acl), and their size. Compiled by cffs/build.rs with
 * clang -target bpf; XN verifies them when they are installed.
 *
 * Templates of the "cffs" group, by index (the rel in XN_CLAIM):
 *   0 cffs.meta  entry blocks: the root block, directory blocks and
 *                inode-table blocks (a header and 15 entries of 256 bytes,
 *                each an embedded inode with its name)
 *   1 cffs.data  file data (no functions)
 *   2 cffs.ext   extent blocks (more extents of one file or directory)
 */
#include "xn_udf.h"

#define REL_META 0
#define REL_DATA 1
#define REL_EXT 2

#define KIND_ROOT 1
#define KIND_DIR 2
#define KIND_ITABLE 3

#define E_FREE 0
#define E_INODE 1
#define E_REF 2

#define F_INLINE 1
#define S_IFMT 0170000
#define S_IFDIR 0040000

#define ENTRIES 15
#define EXTENTS 4
#define SLOTS_PER_ENTRY (EXTENTS + 1)
#define ENTRY_SLOTS (ENTRIES * SLOTS_PER_ENTRY)
#define NAME_AT 136
#define OPEN_FROM 32	/* header bytes anyone may change: the inode */
#define OPEN_TO 96	/* counter and the rename intent */

struct extent {
	u64 start;
	u32 count;
	u32 fblock;
};

struct entry {
	u8 kind;
	u8 name_len;
	u16 flags;
	u32 mode;
	u64 ino;
	u32 uid, gid, nlink, gen;
	u64 size, atime, mtime, ctime;
	struct extent ext[EXTENTS];
	u64 ext_block;
	u8 name[120];
};

struct header {
	u32 magic, kind, uid, gid, mode, flags;
	u64 next;
	u64 counter;
	u64 reserved;
	u8 intent[64];
	u8 rest[136];
};

/* Entry 0 is the header: entries are indexed 1..=15. */
struct meta_block {
	union {
		struct header h;
		struct entry e[ENTRIES + 1];
	};
};

/* Extent blocks: 256 slots of 16 bytes; slot 0 is the header, slot 1
 * the owner (a copy of the inode's, for acl), slots 2..=255 extents. */
struct ext_head {
	u32 magic, flags;
	u64 next;
	u32 uid, gid, mode, pad;
};

struct ext_block {
	union {
		struct ext_head h;
		struct extent ext[256];
	};
};

#define EXT_EXTENTS 254

VENEER_REGION(struct meta_block, blk);
VENEER_REGION(struct meta_block, old);
VENEER_REGION(struct meta_block, new);

/* The same regions seen as extent blocks (the loader binds by name). */
#define EBLK (*(const volatile struct ext_block *)&blk)
#define EOLD (*(const volatile struct ext_block *)&old)
#define ENEW (*(const volatile struct ext_block *)&new)

VENEER_INLINE u32 perm(u32 mode, u32 uid, u32 gid, const struct xn_acl_ctx *c)
{
	if (c->uid == uid)
		return (mode >> 6) & 7;
	if (c->gid == gid || xn_in_groups(c, gid))
		return (mode >> 3) & 7;
	return mode & 7;
}

VENEER_INLINE u64 one(const struct xn_owns_ctx *c, u64 start, u32 rel)
{
	if (!start)
		return 0;
	return c->part ? XN_CLAIM(1, rel) : start;
}

SEC("meta.owns")
u64 meta_owns(const struct xn_owns_ctx *c)
{
	u32 s = c->slot;
	if (s == ENTRY_SLOTS)
		return blk.h.kind == KIND_DIR ? 0 : one(c, blk.h.next, REL_META);
	if (s > ENTRY_SLOTS)
		return 0;
	u32 k = s % SLOTS_PER_ENTRY;
	const volatile struct entry *en = &blk.e[XN_INDEX(s / SLOTS_PER_ENTRY + 1, 16)];
	if (en->kind != E_INODE || (en->flags & F_INLINE))
		return 0;
	if (k == EXTENTS)
		return one(c, en->ext_block, REL_EXT);
	const volatile struct extent *x = &en->ext[XN_INDEX(k, EXTENTS)];
	u64 start = x->start;
	if (!start)
		return 0;
	if (!c->part)
		return start;
	u32 rel = (en->mode & S_IFMT) == S_IFDIR ? REL_META : REL_DATA;
	return XN_CLAIM(x->count, rel);
}

/* Bindings: reading a child needs read (directories: read or search)
 * permission on the inode whose extent claims it, writing needs write. */
VENEER_INLINE u64 bind_entry(const struct xn_acl_ctx *c)
{
	u32 s = c->slot;
	if (s >= ENTRY_SLOTS)
		return c->op == XN_OP_BIND_READ;
	const volatile struct entry *en = &old.e[XN_INDEX(s / SLOTS_PER_ENTRY + 1, 16)];
	u32 p = perm(en->mode, en->uid, en->gid, c);
	if (c->op == XN_OP_BIND_WRITE)
		return (p & 2) != 0;
	return (p & ((en->mode & S_IFMT) == S_IFDIR ? 5 : 4)) != 0;
}

SEC("meta.acl")
u64 meta_acl(const struct xn_acl_ctx *c)
{
	if (c->uid == 0)
		return 1;
	if (c->op != XN_OP_MODIFY)
		return bind_entry(c);
	if (c->len == 0)
		return 1;
	u32 off = c->off, len = c->len;
	if (off >= XN_BLOCK || len > XN_BLOCK)
		return 0;
	u32 first = off / 256, last = (off + len - 1) / 256;
	u32 hp = perm(old.h.mode, old.h.uid, old.h.gid, c);
	if (first == 0) {
		if (last == 0 && off >= OPEN_FROM && off + len <= OPEN_TO)
			return 1;
		/* Owner fields and the chain pointer: the owner, who may not
		 * give the block away. */
		return c->uid == old.h.uid && new.h.uid == old.h.uid;
	}
	if (first != last)
		return old.h.kind == KIND_ITABLE ? 0 : (hp & 2) != 0;
	u64 e = XN_INDEX(first, 16);
	const volatile struct entry *o = &old.e[e];
	const volatile struct entry *n = &new.e[e];
	u32 rel = off - first * 256;
	if (o->kind == E_INODE && n->kind == E_INODE && rel >= 4 && rel + len <= NAME_AT && o->ino == n->ino) {
		/* One file's inode fields: chown is root's, chmod the
		 * owner's, the rest needs write permission (or ownership:
		 * utimes). */
		if (o->uid != n->uid)
			return 0;
		if (o->gid != n->gid || o->mode != n->mode)
			return c->uid == o->uid;
		return (perm(o->mode, o->uid, o->gid, c) & 2) != 0 || c->uid == o->uid;
	}
	if (old.h.kind == KIND_ITABLE)
		return o->kind == E_FREE || o->uid == c->uid;
	return (hp & 2) != 0;
}

SEC("meta.size")
u64 meta_size(const struct xn_size_ctx *c)
{
	return XN_BLOCK;
}

SEC("ext.owns")
u64 ext_owns(const struct xn_owns_ctx *c)
{
	u32 s = c->slot;
	if (s == EXT_EXTENTS)
		return one(c, EBLK.h.next, REL_EXT);
	if (s > EXT_EXTENTS)
		return 0;
	const volatile struct extent *x = &EBLK.ext[XN_INDEX(s + 2, 256)];
	u64 start = x->start;
	if (!start)
		return 0;
	if (!c->part)
		return start;
	return XN_CLAIM(x->count, (EBLK.h.flags & 1) ? REL_META : REL_DATA);
}

SEC("ext.acl")
u64 ext_acl(const struct xn_acl_ctx *c)
{
	if (c->uid == 0)
		return 1;
	const volatile struct ext_head *o = &EOLD.h, *n = &ENEW.h;
	u32 p = perm(o->mode, o->uid, o->gid, c);
	if (c->op == XN_OP_BIND_READ)
		return (p & ((o->flags & 1) ? 5 : 4)) != 0;
	if (c->op == XN_OP_BIND_WRITE)
		return (p & 2) != 0;
	if (o->uid != n->uid)
		return 0;
	if (o->gid != n->gid || o->mode != n->mode)
		return c->uid == o->uid;
	return (p & 2) != 0 || c->uid == o->uid;
}
