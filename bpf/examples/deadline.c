/* Wakeup predicate: true once the clock page shows a time at or past the
 * deadline stored in the context. */
#include "veneer_bpf.h"

struct clock_page {
	u64 now_ns;
	u64 ticks;
};

struct deadline_ctx {
	u64 deadline_ns;
	u64 owner;
};

VENEER_REGION(struct clock_page, clock);

SEC("predicate")
u64 deadline_reached(const struct deadline_ctx *ctx)
{
	return clock.now_ns >= ctx->deadline_ns;
}
