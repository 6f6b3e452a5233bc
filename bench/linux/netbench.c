/*
 * The Linux side of the network rows (issue 24): `netbench NAME ITERATIONS
 * TRIALS`, the same line format as `bench`.  The experiments go through the
 * virtio-net NIC on QEMU's user network that every boot has, as Veneer's
 * `netbench` (libos/src/bin/netbench.rs) does:
 *
 *  - pkt_tx: per frame sent: the same prebuilt UDP frame (10.0.2.15:4000 to
 *    the gateway's port 9, 64 bytes of payload) given to the NIC through a
 *    packet socket, one sendto per frame.
 *  - ping_N: per ICMP echo round trip with the gateway (10.0.2.2) through
 *    an ICMP ("ping") socket, with N ping sockets bound to identifiers that
 *    differ only in that identifier, the last of which pings: the reply is
 *    demultiplexed among N sockets by the kernel's ping hash table.
 *
 * As Veneer's side does, the time the processor spends halted waiting for
 * QEMU is left out: under `-icount ... sleep=off` a halted processor's clock
 * jumps to the next timer, so each trial subtracts the idle time the
 * scheduler's tick accounting recorded over it (cpu 0's idle_sleeptime and
 * iowait_sleeptime in /proc/timer_list, in nanoseconds, which under
 * `shift=0` are instructions).  Those stamps are taken a little inside
 * the idle path, so the few hundred instructions of idle entry and exit
 * around each halt are left out too: it errs in Linux's favour.
 *
 * The NIC's driver is a module in Debian's kernel: the harness puts the
 * modules it needs in /modules of the initramfs and this program loads
 * them (once; a loaded module answers EEXIST) and brings eth0 up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../libos/tests/c/halted.h"
#include "harness.h"

#define IFACE "eth0"
#define OURS "10.0.2.15"
#define GATEWAY "10.0.2.2"


/* The modules virtio-net needs, dependencies first. */
static const char *modules[] = {
	"virtio_ring", "virtio",	"virtio_pci_legacy_dev",
	"virtio_pci_modern_dev", "virtio_pci", "failover",
	"net_failover", "virtio_net",
};

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

/* Loads the driver, brings eth0 up as 10.0.2.15/24 (IPv6 off, so that no
 * router solicitation or DAD traffic falls into a trial) and lets root
 * open ICMP sockets. */
static void network_up(void)
{
	for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "/modules/%s.ko", modules[i]);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)
			die(path);
		close(fd);
	}
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	write_file("/proc/sys/net/ipv4/ping_group_range", "0 0");
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, IFACE);
	struct sockaddr_in *a = (struct sockaddr_in *)&ifr.ifr_addr;
	a->sin_family = AF_INET;
	inet_pton(AF_INET, OURS, &a->sin_addr);
	if (ioctl(s, SIOCSIFADDR, &ifr))
		die("SIOCSIFADDR");
	inet_pton(AF_INET, "255.255.255.0", &a->sin_addr);
	if (ioctl(s, SIOCSIFNETMASK, &ifr))
		die("SIOCSIFNETMASK");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		die("SIOCGIFFLAGS");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		die("SIOCSIFFLAGS");
	close(s);
}

static int ping_socket(int id)
{
	int s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	if (s < 0)
		die("ICMP socket");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(id) };
	inet_pton(AF_INET, OURS, &a.sin_addr);
	if (bind(s, (struct sockaddr *)&a, sizeof a))
		die("bind ICMP socket");
	return s;
}

/* One echo round trip on `s`: 8 bytes of header and 16 of data, the size
 * of Veneer's request. */
static void ping(int s, uint16_t seq)
{
	struct icmphdr req[3];
	memset(req, 0x5a, sizeof req);
	req[0] = (struct icmphdr){ .type = ICMP_ECHO, .un.echo.sequence = htons(seq) };
	struct sockaddr_in to = { .sin_family = AF_INET };
	inet_pton(AF_INET, GATEWAY, &to.sin_addr);
	if (sendto(s, req, sizeof req, 0, (struct sockaddr *)&to, sizeof to) != sizeof req)
		die("sendto echo");
	for (;;) {
		struct icmphdr reply[8];
		ssize_t n = recv(s, reply, sizeof reply, 0);
		if (n < 0)
			die("recv echo");
		if (n >= 8 && reply[0].type == ICMP_ECHOREPLY &&
		    reply[0].un.echo.sequence == htons(seq))
			return;
	}
}

static uint64_t run_ping(int s, long n)
{
	static uint16_t seq;
	uint64_t h0 = halted(), t0 = now();
	for (long i = 0; i < n; i++)
		ping(s, ++seq);
	uint64_t t = now() - t0;
	return t - (halted() - h0);
}

/* The gateway's MAC, from the neighbour table once a ping resolved it. */
static void gateway_mac(int s, unsigned char mac[6])
{
	struct arpreq r;
	memset(&r, 0, sizeof r);
	struct sockaddr_in *a = (struct sockaddr_in *)&r.arp_pa;
	a->sin_family = AF_INET;
	inet_pton(AF_INET, GATEWAY, &a->sin_addr);
	strcpy(r.arp_dev, IFACE);
	if (ioctl(s, SIOCGARP, &r) || !(r.arp_flags & ATF_COM))
		die("SIOCGARP");
	memcpy(mac, r.arp_ha.sa_data, 6);
}

static uint16_t checksum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += b[i] << 8 | b[i + 1];
	if (n & 1)
		sum += b[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* Veneer's frame: Ethernet, IPv4, UDP 4000 -> 9, 64 bytes of 0x33, no UDP
 * checksum. */
static size_t udp_frame(unsigned char *f, const unsigned char gw[6], const unsigned char ours[6])
{
	size_t payload = 64, ip = 20 + 8 + payload;
	memcpy(f, gw, 6);
	memcpy(f + 6, ours, 6);
	f[12] = 0x08, f[13] = 0x00;
	unsigned char *h = f + 14;
	memset(h, 0, 28);
	h[0] = 0x45, h[2] = ip >> 8, h[3] = ip & 0xff, h[8] = 64, h[9] = IPPROTO_UDP;
	inet_pton(AF_INET, OURS, h + 12);
	inet_pton(AF_INET, GATEWAY, h + 16);
	uint16_t sum = checksum(h, 20);
	h[10] = sum >> 8, h[11] = sum & 0xff;
	unsigned char *u = h + 20;
	u[0] = 4000 >> 8, u[1] = 4000 & 0xff, u[3] = 9;
	u[4] = (8 + payload) >> 8, u[5] = (8 + payload) & 0xff;
	memset(u + 8, 0x33, payload);
	return 14 + ip;
}

static uint64_t b_pkt_tx(long n)
{
	static int s = -1;
	static unsigned char frame[128];
	static size_t len;
	static struct sockaddr_ll to;
	if (s < 0) {
		int icmp = ping_socket(999);
		ping(icmp, 1);
		unsigned char gw[6], ours[6];
		gateway_mac(icmp, gw);
		struct ifreq ifr;
		memset(&ifr, 0, sizeof ifr);
		strcpy(ifr.ifr_name, IFACE);
		if (ioctl(icmp, SIOCGIFHWADDR, &ifr))
			die("SIOCGIFHWADDR");
		memcpy(ours, ifr.ifr_hwaddr.sa_data, 6);
		len = udp_frame(frame, gw, ours);
		s = socket(AF_PACKET, SOCK_RAW, 0);
		if (s < 0)
			die("packet socket");
		to = (struct sockaddr_ll){ .sll_family = AF_PACKET,
					   .sll_ifindex = if_nametoindex(IFACE),
					   .sll_halen = 6 };
		memcpy(to.sll_addr, gw, 6);
	}
	uint64_t h0 = halted(), t0 = now();
	for (long i = 0; i < n; i++)
		if (sendto(s, frame, len, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)len)
			die("sendto frame");
	uint64_t t = now() - t0;
	return t - (halted() - h0);
}

/* N bound ICMP sockets, identifiers 1000 .. 1000+N-1; the last pings. */
static uint64_t b_ping(long n, int sockets)
{
	static int last = -1;
	if (last < 0) {
		for (int i = 0; i < sockets; i++)
			last = ping_socket(1000 + i);
		ping(last, 0); /* the gateway's address resolved, untimed */
	}
	return run_ping(last, n);
}

static uint64_t b_ping_1(long n) { return b_ping(n, 1); }
static uint64_t b_ping_10(long n) { return b_ping(n, 10); }
static uint64_t b_ping_100(long n) { return b_ping(n, 100); }
static uint64_t b_ping_1000(long n) { return b_ping(n, 1000); }

static const struct bench benches[] = {
	{ "pkt_tx", b_pkt_tx, 0 },	  { "ping_1", b_ping_1, 0 },
	{ "ping_10", b_ping_10, 0 },	  { "ping_100", b_ping_100, 0 },
	{ "ping_1000", b_ping_1000, 0 },
};

int main(int argc, char **argv)
{
	return bench_main("netbench", benches,
			  sizeof benches / sizeof benches[0], network_up, argc,
			  argv);
}
