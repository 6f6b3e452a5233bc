/* Packet filter: accept IPv4 UDP datagrams to destination port 53, with a
 * variable-length IP header. Returns 1 to accept, 0 to reject. */
#include "veneer_bpf.h"

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IPPROTO_UDP 17

SEC("filter")
u64 udp_port_53(const struct veneer_packet_ctx *ctx)
{
	const u8 *data = (const u8 *)(unsigned long)ctx->data;
	const u8 *end = (const u8 *)(unsigned long)ctx->data_end;

	if (data + ETH_HLEN + 20 > end)
		return 0;
	if (((data[12] << 8) | data[13]) != ETH_P_IP)
		return 0;
	const u8 *ip = data + ETH_HLEN;
	if ((ip[0] >> 4) != 4 || ip[9] != IPPROTO_UDP)
		return 0;
	u32 ihl = (ip[0] & 0x0f) * 4;
	if (ihl < 20)
		return 0;
	const u8 *udp = ip + ihl;
	if (udp + 8 > end)
		return 0;
	return ((udp[2] << 8) | udp[3]) == 53;
}
