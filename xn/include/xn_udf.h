/* XN's UDF ABI for restricted C (see docs/xn.md, xn/src/udf.rs).
 *
 *   clang -target bpf -O2 -c -I bpf/include -I xn/include t.c -o t.o
 *
 * owns:  context struct xn_owns_ctx, region `blk` (the block). XN asks
 *        every slot; part 0 answers the first block claimed (0: nothing),
 *        part 1 answers XN_CLAIM(count, rel_template).
 * acl:   context struct xn_acl_ctx, regions `old` and `new` (the block
 *        before and after the change; equal for bindings). Non-zero
 *        allows.
 * size:  context struct xn_size_ctx, region `blk`. Answers bytes used.
 */
#ifndef XN_UDF_H
#define XN_UDF_H

#include "veneer_bpf.h"

#define XN_BLOCK 4096
#define XN_GROUPS 32	/* xn/src/lib.rs GROUPS */
#define XN_OP_MODIFY 1
#define XN_OP_BIND_READ 2
#define XN_OP_BIND_WRITE 3

struct xn_owns_ctx {
	u32 slot;
	u32 part;
	u64 block;
};

struct xn_acl_ctx {
	u32 op;
	u32 slot;	/* bindings: the slot of the parent that claims the child */
	u32 uid;
	u32 gid;
	u32 off;	/* modify: first byte that differs */
	u32 len;	/* modify: bytes from `off` to the last that differs */
	u64 child;	/* bindings: the child block */
	u64 block;
	u32 ngroups;	/* supplementary groups: the first `ngroups` of `groups` */
	u32 pad;
	u32 groups[XN_GROUPS];
};

/* Is `gid` one of the credential's supplementary groups? (Unrolled: a
 * UDF may not loop.) */
VENEER_INLINE int xn_in_groups(const struct xn_acl_ctx *c, u32 gid)
{
	u32 n = c->ngroups;
#pragma unroll
	for (u32 i = 0; i < XN_GROUPS; i++)
		if (i < n && c->groups[i] == gid)
			return 1;
	return 0;
}

struct xn_size_ctx {
	u64 block;
};

/* Hides a value from the compiler so that the bounds check after it stays
 * where the verifier can see it (clang may otherwise fold it into an
 * earlier comparison the verifier cannot use, e.g. one with a hole). */
#define XN_OPAQUE(x) asm volatile("" : "+r"(x))

/* An index the verifier can prove below `n` (a power of two): masked after
 * the compiler lost track of it, so the mask is not folded away. Use it
 * where the value is already known to be in range (the mask then changes
 * nothing) but the proof went through a copy or a comparison with a hole,
 * which the verifier does not follow. */
#define XN_INDEX(i, n) ({ u64 _i = (i); XN_OPAQUE(_i); _i & ((n) - 1); })

#define XN_CLAIM(count, rel) ((u64)(u32)(count) | ((u64)(rel) << 32))

#endif
