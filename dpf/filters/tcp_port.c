/* Canonical packet filter: IPv4 (20-byte header) TCP to 10.0.2.15 port 80.
 * A conjunction of masked equalities on bytes at constant offsets, so the
 * kernel merges it with every other filter of this shape (docs/network.md). */
#include "veneer_bpf.h"

SEC("filter")
u64 tcp_port_80(const struct veneer_packet_ctx *ctx)
{
	const u8 *data = (const u8 *)(unsigned long)ctx->data;
	const u8 *end = (const u8 *)(unsigned long)ctx->data_end;

	if (data + 38 > end)
		return 0;
	if (*(const u16 *)(data + 12) != veneer_ntohs(0x0800))
		return 0;
	if (data[14] != 0x45 || data[23] != 6)
		return 0;
	if (*(const u32 *)(data + 30) != veneer_ntohl(0x0a00020f))
		return 0;
	return ((data[36] << 8) | data[37]) == 80;
}
