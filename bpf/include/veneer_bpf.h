/* Veneer downloaded-code ABI for restricted C compiled with
 *   clang -target bpf -O2 -c prog.c -o prog.o
 *
 * A program is one function placed in a named section with SEC(). It gets
 * a pointer to its read-only context and returns a 64-bit scalar. Other
 * read-only memory (regions) is declared with VENEER_REGION and bound to a
 * region index by name when the object is loaded. Programs may not loop,
 * call functions or write anywhere but their own stack.
 */
#ifndef VENEER_BPF_H
#define VENEER_BPF_H

typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;
typedef __INT64_TYPE__ s64;

/* Places a program in the object section the loader looks up. */
#define SEC(name) __attribute__((section(name), used))

/* Declares a read-only region. The loader binds `name` to a region index. */
#define VENEER_REGION(type, name) extern const volatile type name

/* Every helper must be inlined: there are no calls. */
#define VENEER_INLINE static inline __attribute__((always_inline))

/* Network byte order conversions (the JIT target is little-endian). */
#define veneer_ntohs(x) __builtin_bswap16(x)
#define veneer_ntohl(x) __builtin_bswap32(x)

/* Context of a packet filter: the loader is told that `data` and
 * `data_end` (offsets 0 and 4, 4 bytes wide) are the packet bounds. */
struct veneer_packet_ctx {
	u32 data;
	u32 data_end;
	u32 ifindex;
	u32 flags;
};

#endif
