/* Wakeup predicate over two regions: wake when the pipe has data or was
 * closed, or when the clock passed the timeout. The index into the pipe's
 * slot table is data-dependent and bounds-checked. */
#include "veneer_bpf.h"

struct clock_page {
	u64 now_ns;
	u64 ticks;
};

struct pipe_page {
	u32 closed;
	u32 nslots;
	u32 fill[64];
};

struct wait_ctx {
	u64 timeout_ns;
	u32 slot;
	u32 min_bytes;
};

VENEER_REGION(struct clock_page, clock);
VENEER_REGION(struct pipe_page, pipe);

SEC("predicate")
u64 pipe_ready(const struct wait_ctx *ctx)
{
	u32 slot = ctx->slot;
	if (pipe.closed)
		return 2;
	if (slot < 64 && pipe.fill[slot] >= ctx->min_bytes)
		return 1;
	if (clock.now_ns >= ctx->timeout_ns)
		return 3;
	return 0;
}
