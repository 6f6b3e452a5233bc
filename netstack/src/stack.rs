//! The stack: two smoltcp interfaces (the Ethernet link and loopback), the
//! connections, and the dispatcher that routes each frame to the one
//! connection it belongs to by hash.
//!
//! smoltcp walks its whole socket set for every packet and has no listen
//! backlog. Here every connection is its own one-socket set: the
//! dispatcher looks the frame's 4-tuple up in a hash map and lets the
//! interface process the frame against that set alone; a SYN for a
//! listening port gets a fresh listening socket of its own (the backlog is
//! the queue of those), and anything else meets an empty set, which
//! smoltcp answers as a host with no such socket would (RST, ICMP port
//! unreachable, ARP and echo replies).

use alloc::collections::{BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::hash::Keyed;
use crate::opts::Opts;
use hashbrown::HashMap;
use smoltcp::iface::{Config, Interface, PollResult, SocketHandle, SocketSet};
use smoltcp::phy::Medium;
use smoltcp::socket::{dhcpv4, tcp, udp};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, Ipv4Cidr, Ipv6Cidr};

use crate::device::{OneFrame, Out};
use crate::link::{Link, MAX_FRAME};
use crate::parse::{self, Kind};
use crate::socket::{SockState, Socket};

/// Which interface a connection lives on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum If {
    Eth,
    Lo,
}

/// A TCP connection's name: interface, local and remote endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuple {
    pub iface: If,
    pub local: SocketAddr,
    pub remote: SocketAddr,
}

/// Who a connection is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// The socket with this index.
    Sock(usize),
    /// A handshake or accepted connection queued on this listening socket.
    Listener(usize),
    /// Closed by its socket, finishing its shutdown on its own.
    Orphan,
    /// The DHCP client.
    Dhcp,
}

pub struct Conn {
    pub set: SocketSet<'static>,
    pub handle: SocketHandle,
    pub iface: If,
    pub tuple: Option<Tuple>,
    pub udp_port: Option<u16>,
    pub holder: Holder,
    pub timer: Option<i64>,
    pub last: tcp::State,
    /// The peer reset the connection (or it timed out).
    pub reset: bool,
    /// Data segments still to be ACKed at once (`opts::QUICK_ACKS`).
    pub quick_acks: u8,
}

impl Conn {
    /// Whether it holds a TCP socket (not UDP's, not the DHCP client's).
    pub fn is_tcp(&self) -> bool {
        self.udp_port.is_none() && self.holder != Holder::Dhcp
    }
    pub fn tcp(&mut self) -> &mut tcp::Socket<'static> {
        self.set.get_mut::<tcp::Socket>(self.handle)
    }
    pub fn udp(&mut self) -> &mut udp::Socket<'static> {
        self.set.get_mut::<udp::Socket>(self.handle)
    }
}

/// How the Ethernet interface gets its address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// DHCP; if no lease arrives within `fallback_ms`, `fallback` (and
    /// DHCP keeps trying).
    Dhcp {
        fallback_ms: u64,
        fallback: StaticIp,
    },
    Static(StaticIp),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticIp {
    pub addr: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Option<Ipv4Addr>,
    pub dns: Vec<Ipv4Addr>,
}

impl StaticIp {
    /// QEMU's user network: 10.0.2.15/24, gateway 10.0.2.2, DNS 10.0.2.3.
    pub fn qemu() -> StaticIp {
        StaticIp {
            addr: Ipv4Addr::new(10, 0, 2, 15),
            prefix: 24,
            gateway: Some(Ipv4Addr::new(10, 0, 2, 2)),
            dns: alloc::vec![Ipv4Addr::new(10, 0, 2, 3)],
        }
    }
}

/// Where the current address came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Dhcp,
    Static,
    /// DHCP did not answer in time.
    Fallback,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetInfo {
    pub ip: StaticIp,
    pub source: Source,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    pub frames_in: u64,
    pub loop_packets: u64,
    pub loop_bytes: u64,
    /// SYNs dropped because the listener's backlog was full.
    pub syn_dropped: u64,
    /// Frames no connection wanted (answered by the interface, if at all).
    pub unmatched: u64,
}

/// How long a half-open connection (either side's handshake) may wait.
pub const HANDSHAKE_TIMEOUT_MS: u64 = 30_000;

/// Frames taken from the link per `poll` (the rest wait in the ring).
pub const RX_BUDGET: usize = 256;
/// Loopback packets processed per `poll`.
pub const LOOP_BUDGET: usize = 4096;

pub struct Stack<L: Link> {
    pub(crate) link: L,
    pub(crate) eth: Interface,
    pub(crate) lo: Interface,
    pub(crate) lo_queue: VecDeque<Vec<u8>>,
    pub(crate) conns: Vec<Option<Conn>>,
    free_conns: Vec<usize>,
    pub(crate) tcp_by_tuple: HashMap<Tuple, usize, Keyed>,
    pub(crate) udp_by_port: HashMap<(If, u16), usize, Keyed>,
    pub(crate) socks: Vec<Option<Socket>>,
    pub(crate) free_socks: Vec<usize>,
    timers: BinaryHeap<Reverse<(i64, usize)>>,
    pub(crate) dirty: Vec<usize>,
    dhcp: Option<(usize, Option<Instant>, StaticIp)>,
    pub(crate) info: Option<NetInfo>,
    pub(crate) now: Instant,
    nobody: SocketSet<'static>,
    rx: Vec<u8>,
    scratch: Vec<u8>,
    pub(crate) stats: NetStats,
    pub(crate) next_port: u16,
    pub(crate) seed: u64,
    /// The listening socket Cheetah answers for, if any.
    pub(crate) cheetah: Option<crate::cheetah::Cheetah>,
}

const LOOPBACK: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

impl<L: Link> Stack<L> {
    pub fn new(mut link: L, mac: [u8; 6], seed: u64, addressing: Addressing, now_ms: u64) -> Stack<L> {
        let now = Instant::from_millis(now_ms as i64);
        let mut scratch = Vec::with_capacity(MAX_FRAME);
        let mut cfg = Config::new(HardwareAddress::Ethernet(EthernetAddress(mac)));
        cfg.random_seed = seed;
        let mut dev = OneFrame {
            frame: None,
            out: Out::Wire(&mut link),
            medium: Medium::Ethernet,
            scratch: &mut scratch,
        };
        let eth = Interface::new(cfg, &mut dev, now);
        let mut lo_queue = VecDeque::new();
        let mut cfg = Config::new(HardwareAddress::Ip);
        cfg.random_seed = seed.rotate_left(17);
        let mut dev = OneFrame::<L> {
            frame: None,
            out: Out::Loop(&mut lo_queue),
            medium: Medium::Ip,
            scratch: &mut scratch,
        };
        let mut lo = Interface::new(cfg, &mut dev, now);
        lo.update_ip_addrs(|a| {
            let _ = a.push(IpCidr::Ipv4(Ipv4Cidr::new(LOOPBACK, 8)));
            let _ = a.push(IpCidr::Ipv6(Ipv6Cidr::new(Ipv6Addr::LOCALHOST, 128)));
        });
        let mut s = Stack {
            link,
            eth,
            lo,
            lo_queue,
            conns: Vec::new(),
            free_conns: Vec::new(),
            tcp_by_tuple: HashMap::with_hasher(Keyed(seed)),
            udp_by_port: HashMap::with_hasher(Keyed(seed.rotate_left(23))),
            socks: Vec::new(),
            free_socks: Vec::new(),
            timers: BinaryHeap::new(),
            dirty: Vec::new(),
            dhcp: None,
            info: None,
            now,
            nobody: SocketSet::new(Vec::new()),
            rx: alloc::vec![0; MAX_FRAME],
            scratch,
            stats: NetStats::default(),
            next_port: 49152 + (seed % 16384) as u16,
            seed,
            cheetah: None,
        };
        match addressing {
            Addressing::Static(ip) => s.configure(ip, Source::Static),
            Addressing::Dhcp { fallback_ms, fallback } => {
                let mut set = SocketSet::new(Vec::new());
                let handle = set.add(dhcpv4::Socket::new());
                let c = s.add_conn(set, handle, If::Eth, Holder::Dhcp);
                s.dirty.push(c);
                let at = now + smoltcp::time::Duration::from_millis(fallback_ms);
                s.dhcp = Some((c, Some(at), fallback));
            }
        }
        s
    }

    pub fn link(&mut self) -> &mut L {
        &mut self.link
    }

    pub fn info(&self) -> Option<&NetInfo> {
        self.info.as_ref()
    }

    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Live connections (sockets' and orphans still closing).
    pub fn connections(&self) -> usize {
        self.conns.iter().flatten().filter(|c| c.holder != Holder::Dhcp).count()
    }

    /// The local ports in use on the Ethernet interface, `(tcp, port)`:
    /// bound sockets and every connection still alive (orphans finishing
    /// their close included). What a packet filter must claim. A socket
    /// bound to a loopback address, or connected over loopback, hears
    /// nothing from the wire: a filter for it would only cost an install
    /// and a removal in the kernel per connection (a third of a loopback
    /// HTTP request's instructions, when it had them).
    pub fn ports(&self) -> Vec<(bool, u16)> {
        use crate::socket::SockState;
        let on_lo =
            |c: &usize| self.conns.get(*c).and_then(|c| c.as_ref()).is_some_and(|c| c.iface == If::Lo);
        let mut v: Vec<(bool, u16)> = self
            .socks
            .iter()
            .flatten()
            .filter(|s| match &s.state {
                SockState::Connected(c) | SockState::Connecting { conn: c, .. } => !on_lo(c),
                _ => !s.bound.is_some_and(|b| b.ip().is_loopback()),
            })
            .filter_map(|s| Some((s.ty == crate::socket::SockType::Stream, s.bound?.port())))
            .collect();
        for c in self.conns.iter().flatten().filter(|c| c.iface == If::Eth) {
            v.extend(c.tuple.map(|t| (true, t.local.port())));
            v.extend(c.udp_port.map(|p| (false, p)));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    fn configure(&mut self, ip: StaticIp, source: Source) {
        let cidr = Ipv4Cidr::new(ip.addr, ip.prefix);
        self.eth.update_ip_addrs(|a| {
            a.clear();
            let _ = a.push(IpCidr::Ipv4(cidr));
        });
        self.eth.routes_mut().remove_default_ipv4_route();
        if let Some(gw) = ip.gateway {
            let _ = self.eth.routes_mut().add_default_ipv4_route(gw);
        }
        // Our own address is reached through loopback, as on Linux.
        self.lo.update_ip_addrs(|a| {
            a.truncate(2);
            let _ = a.push(IpCidr::Ipv4(Ipv4Cidr::new(ip.addr, 32)));
        });
        self.info = Some(NetInfo { ip, source });
    }

    pub(crate) fn add_conn(
        &mut self,
        set: SocketSet<'static>,
        handle: SocketHandle,
        iface: If,
        holder: Holder,
    ) -> usize {
        let conn = Conn {
            set,
            handle,
            iface,
            tuple: None,
            udp_port: None,
            holder,
            timer: None,
            last: tcp::State::Closed,
            quick_acks: crate::opts::QUICK_ACKS,
            reset: false,
        };
        match self.free_conns.pop() {
            Some(i) => {
                self.conns[i] = Some(conn);
                i
            }
            None => {
                self.conns.push(Some(conn));
                self.conns.len() - 1
            }
        }
    }

    pub(crate) fn free_conn(&mut self, c: usize) {
        if let Some(conn) = self.conns[c].take() {
            if let Some(t) = conn.tuple {
                self.tcp_by_tuple.remove(&t);
            }
            if let Some(p) = conn.udp_port {
                self.udp_by_port.remove(&(conn.iface, p));
            }
            self.free_conns.push(c);
        }
    }

    pub(crate) fn conn(&mut self, c: usize) -> &mut Conn {
        self.conns[c].as_mut().expect("live connection")
    }

    pub(crate) fn iface_addr_ok(&self, iface: If, addr: IpAddr) -> bool {
        let i = match iface {
            If::Eth => &self.eth,
            If::Lo => &self.lo,
        };
        addr.is_unspecified() || i.has_ip_addr(IpAddress::from(addr))
    }

    /// Processes received frames, loopback packets, timers and pending
    /// output; returns true if frames were left in the link (call again).
    pub fn poll(&mut self, now_ms: u64) -> bool {
        self.now = Instant::from_millis(now_ms as i64);
        let mut more = false;
        let mut rx = core::mem::take(&mut self.rx);
        for i in 0.. {
            if i == RX_BUDGET {
                more = true;
                break;
            }
            let Some(n) = self.link.recv(&mut rx) else { break };
            self.stats.frames_in += 1;
            self.ingress(If::Eth, &rx[..n.min(rx.len())]);
        }
        self.rx = rx;
        self.run_pending();
        self.dhcp_events();
        self.link.flush();
        more
    }

    /// Loopback packets, connections with output and due timers, until
    /// quiet (or the loopback budget is spent).
    fn run_pending(&mut self) {
        let mut budget = LOOP_BUDGET;
        loop {
            let dirty = core::mem::take(&mut self.dirty);
            for &c in &dirty {
                if self.conns[c].is_some() {
                    self.after(c);
                }
            }
            while let Some(&Reverse((at, c))) = self.timers.peek() {
                if at > self.now.total_millis() {
                    break;
                }
                self.timers.pop();
                if self.conns[c].as_ref().is_some_and(|k| k.timer == Some(at)) {
                    self.conn(c).timer = None;
                    self.after(c);
                }
            }
            self.cheetah_timers();
            let Some(p) = self.lo_queue.pop_front() else {
                if self.dirty.is_empty() {
                    return;
                }
                continue;
            };
            self.stats.loop_packets += 1;
            self.stats.loop_bytes += p.len() as u64;
            self.ingress(If::Lo, &p);
            budget -= 1;
            if budget == 0 {
                return;
            }
        }
    }

    /// When `poll` next has work that is due without new frames.
    pub fn poll_at(&self) -> Option<u64> {
        if !self.lo_queue.is_empty() || !self.dirty.is_empty() {
            return Some(self.now.total_millis() as u64);
        }
        let timer = self.timers.peek().map(|Reverse((at, _))| *at);
        let fallback = self.dhcp.as_ref().and_then(|d| d.1).map(|i| i.total_millis());
        let cheetah = self.cheetah.as_ref().and_then(|c| c.server.poll_at());
        [timer, fallback, cheetah].into_iter().flatten().min().map(|t| t.max(0) as u64)
    }

    fn route(&mut self, iface: If, kind: Kind) -> Route {
        match kind {
            Kind::Tcp { src, dst, syn, .. } => {
                let t = Tuple { iface, local: dst.into(), remote: src.into() };
                if let Some(&c) = self.tcp_by_tuple.get(&t) {
                    return Route::Conn(c);
                }
                if syn {
                    return self.embryo(t);
                }
                Route::Nobody
            }
            Kind::Udp { dst, .. } => {
                if iface == If::Eth && dst.1 == 68 {
                    if let Some((c, ..)) = self.dhcp {
                        return Route::Conn(c);
                    }
                }
                match self.udp_by_port.get(&(iface, dst.1)) {
                    Some(&c) => Route::Conn(c),
                    None => Route::Nobody,
                }
            }
            Kind::Other => Route::Nobody,
        }
    }

    /// A SYN for no connection: a fresh listening socket if some socket
    /// listens on the port and its backlog has room.
    fn embryo(&mut self, t: Tuple) -> Route {
        if !self.iface_addr_ok(t.iface, t.local.ip()) {
            return Route::Nobody; // not ours (an IPv6 neighbour's, say)
        }
        let Some(l) = self.listener_for(t.iface, t.local) else { return Route::Nobody };
        let Some(Socket { state: SockState::Listening { backlog, embryos, pending }, opts, .. }) =
            &self.socks[l]
        else {
            return Route::Nobody;
        };
        if embryos.len() + pending.len() >= *backlog {
            self.stats.syn_dropped += 1;
            return Route::Drop;
        }
        let mut sock = opts.tcp_socket();
        // A handshake the peer never completes frees its place (a SYN
        // flood cannot hold the backlog for ever).
        sock.set_timeout(Some(smoltcp::time::Duration::from_millis(HANDSHAKE_TIMEOUT_MS)));
        let listen_addr =
            self.socks[l].as_ref().and_then(|s| s.bound).map(|a| a.ip()).filter(|a| !a.is_unspecified());
        let ep =
            smoltcp::wire::IpListenEndpoint { addr: listen_addr.map(IpAddress::from), port: t.local.port() };
        if sock.listen(ep).is_err() {
            return Route::Nobody;
        }
        let mut set = SocketSet::new(Vec::with_capacity(1));
        let handle = set.add(sock);
        let c = self.add_conn(set, handle, t.iface, Holder::Listener(l));
        self.conn(c).tuple = Some(t);
        self.conn(c).last = tcp::State::Listen;
        self.tcp_by_tuple.insert(t, c);
        if let Some(Socket { state: SockState::Listening { embryos, .. }, .. }) = &mut self.socks[l] {
            embryos.push(c);
        }
        Route::Conn(c)
    }

    /// Whether a TCP segment to `local` is Cheetah's.
    pub(crate) fn for_cheetah(&self, iface: If, local: SocketAddr) -> bool {
        self.cheetah.as_ref().is_some_and(|c| {
            local.is_ipv4() && c.port == local.port() && self.listener_for(iface, local) == Some(c.sock)
        })
    }

    pub(crate) fn cheetah_input(&mut self, iface: If, frame: &[u8]) {
        let now = self.now.total_millis();
        if let Some(c) = &mut self.cheetah {
            let mut out = crate::cheetah::Outputs { link: &mut self.link, lo: &mut self.lo_queue };
            c.server.input(frame, iface == If::Eth, now, &mut out);
        }
    }

    pub(crate) fn cheetah_timers(&mut self) {
        let now = self.now.total_millis();
        if let Some(c) = &mut self.cheetah {
            if c.server.poll_at().is_some_and(|t| t <= now) {
                let mut out = crate::cheetah::Outputs { link: &mut self.link, lo: &mut self.lo_queue };
                c.server.timers(now, &mut out);
            }
        }
    }

    fn ingress(&mut self, iface: If, frame: &[u8]) {
        let kind = match iface {
            If::Eth => parse::ethernet(frame),
            If::Lo => parse::ip(frame),
        };
        if let Kind::Tcp { src, dst, .. } = kind {
            let local = SocketAddr::from(dst);
            let t = Tuple { iface, local, remote: src.into() };
            if self.for_cheetah(iface, local) && !self.tcp_by_tuple.contains_key(&t) {
                return self.cheetah_input(iface, frame);
            }
        }
        let route = self.route(iface, kind);
        if route == Route::Drop {
            return;
        }
        // A connection in its quick-ACK start; for a segment with a FIN,
        // its options (the only segment that needs them here).
        let quick = matches!(route, Route::Conn(c) if self.conn(c).quick_acks > 0 && self.conn(c).is_tcp());
        let fin_opts = match route {
            Route::Conn(c) if quick && matches!(kind, Kind::Tcp { fin: true, .. }) => Some(self.conn_opts(c)),
            _ => None,
        };
        let now = self.now;
        let (ifc, medium, out) = match iface {
            If::Eth => (&mut self.eth, Medium::Ethernet, Out::Wire(&mut self.link)),
            If::Lo => (&mut self.lo, Medium::Ip, Out::Loop(&mut self.lo_queue)),
        };
        let mut dev = OneFrame { frame: Some(frame), out, medium, scratch: &mut self.scratch };
        match route {
            Route::Conn(c) => {
                let conn = self.conns[c].as_mut().expect("routed to a live connection");
                if !quick {
                    ifc.poll_ingress_single(now, &mut dev, &mut conn.set);
                    return self.after(c);
                }
                // A FIN ends what the peer sends: no ACK of ours can release
                // data it holds back, so the FIN's may wait for our answer
                // or our FIN and ride on it.
                if let Some(o) = fin_opts {
                    o.set_ack_delay(conn.tcp(), false);
                }
                let queued = conn.tcp().recv_queue();
                ifc.poll_ingress_single(now, &mut dev, &mut conn.set);
                if let Some(o) = fin_opts {
                    o.set_ack_delay(conn.tcp(), true);
                } else if conn.tcp().recv_queue() > queued {
                    self.quick_ack_sent(c);
                }
                self.after(c);
            }
            _ => {
                self.stats.unmatched += 1;
                ifc.poll_ingress_single(now, &mut dev, &mut self.nobody);
                if iface == If::Eth && parse::is_arp(frame) {
                    // A neighbour may have become known: connections that
                    // wait for it sleep until a timer otherwise.
                    let waiting = self
                        .conns
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.as_ref().is_some_and(|c| c.timer.is_some()));
                    self.dirty.extend(waiting.map(|(i, _)| i));
                }
            }
        }
    }

    /// Connection `c` took in data while still in its quick-ACK start:
    /// the last of those ACKs ends it.
    fn quick_ack_sent(&mut self, c: usize) {
        self.conn(c).quick_acks -= 1;
        if self.conn(c).quick_acks == 0 {
            let opts = self.conn_opts(c);
            opts.set_ack_delay(self.conn(c).tcp(), false);
        }
    }

    /// The options of connection `c`'s socket (or listener); the defaults
    /// for one whose socket closed.
    fn conn_opts(&self, c: usize) -> Opts {
        let holder = self.conns[c].as_ref().map(|conn| conn.holder);
        let sock = match holder {
            Some(Holder::Sock(s) | Holder::Listener(s)) => self.socks[s].as_ref(),
            _ => None,
        };
        sock.map(|s| s.opts).unwrap_or_default()
    }

    /// After a connection saw input or output: send what it has, follow
    /// its state (handshakes done, resets, orphans finished), re-arm its
    /// timer.
    pub(crate) fn after(&mut self, c: usize) {
        let now = self.now;
        let conn = self.conns[c].as_mut().expect("live connection");
        let (ifc, medium, out) = match conn.iface {
            If::Eth => (&mut self.eth, Medium::Ethernet, Out::Wire(&mut self.link)),
            If::Lo => (&mut self.lo, Medium::Ip, Out::Loop(&mut self.lo_queue)),
        };
        let mut dev = OneFrame { frame: None, out, medium, scratch: &mut self.scratch };
        for _ in 0..1024 {
            if ifc.poll_egress(now, &mut dev, &mut conn.set) == PollResult::None {
                break;
            }
        }
        // What smoltcp still calls due now could not go out (egress is
        // done): it is tried again a millisecond later, never in this
        // same instant, which would loop for ever.
        let soon = now.total_millis() + 1;
        let at = ifc.poll_at(now, &conn.set).map(|t| t.total_millis().max(soon));
        if conn.timer != at {
            conn.timer = at;
            if let Some(at) = at {
                self.timers.push(Reverse((at, c)));
            }
        }
        if self.timers.len() > 4 * self.conns.len() + 64 {
            self.compact_timers();
        }
        self.track(c);
    }

    fn compact_timers(&mut self) {
        let live = self.conns.iter().enumerate().filter_map(|(i, c)| Some((c.as_ref()?.timer?, i)));
        self.timers = live.map(Reverse).collect();
    }

    /// Follows a TCP connection's state changes.
    fn track(&mut self, c: usize) {
        let conn = self.conn(c);
        if !conn.is_tcp() {
            return;
        }
        let state = conn.tcp().state();
        let last = core::mem::replace(&mut conn.last, state);
        use tcp::State::*;
        if state == Closed && !matches!(last, Closed | LastAck | TimeWait | Listen) {
            conn.reset = true; // RST, or a retransmission timeout
        }
        if matches!(last, SynSent | SynReceived) && !matches!(state, Closed | SynSent | SynReceived | Listen)
        {
            conn.tcp().set_timeout(None); // the handshake's deadline is over
        }
        match conn.holder {
            Holder::Listener(l) => match state {
                Listen | Closed => {
                    // The handshake was reset: forget it.
                    self.unqueue(l, c);
                    self.free_conn(c);
                }
                SynReceived => {}
                _ => {
                    if let Some(Socket { state: SockState::Listening { embryos, pending, .. }, .. }) =
                        &mut self.socks[l]
                    {
                        if let Some(i) = embryos.iter().position(|&e| e == c) {
                            embryos.swap_remove(i);
                            pending.push_back(c);
                        }
                    }
                }
            },
            Holder::Orphan if state == Closed => self.free_conn(c),
            // TIME_WAIT guards against a lost last ACK and old duplicates
            // on a wire; loopback loses and delays nothing, and holding
            // every closed connection's buffers for the period ran a
            // server that closes first out of memory.
            Holder::Orphan if state == TimeWait && conn.iface == If::Lo => self.free_conn(c),
            Holder::Sock(s) if !matches!(state, Closed | SynSent | SynReceived | Listen) => {
                // A handshake finished: connected now, so that a reset
                // later reads as ECONNRESET; `connect` still reports the
                // success once.
                if let Some(sock) = self.socks[s].as_mut() {
                    if matches!(sock.state, SockState::Connecting { conn, .. } if conn == c) {
                        sock.state = SockState::Connected(c);
                        sock.connect_unreported = true;
                    }
                }
            }
            _ => {}
        }
    }

    pub(crate) fn unqueue(&mut self, l: usize, c: usize) {
        if let Some(Socket { state: SockState::Listening { embryos, pending, .. }, .. }) = &mut self.socks[l]
        {
            embryos.retain(|&e| e != c);
            pending.retain(|&e| e != c);
        }
    }

    fn dhcp_events(&mut self) {
        let Some((c, fallback_at, fallback)) = self.dhcp.clone() else { return };
        let event = {
            let conn = self.conn(c);
            conn.set.get_mut::<dhcpv4::Socket>(conn.handle).poll().map(|e| match e {
                dhcpv4::Event::Configured(cfg) => Some(StaticIp {
                    addr: cfg.address.address(),
                    prefix: cfg.address.prefix_len(),
                    gateway: cfg.router,
                    dns: cfg.dns_servers.iter().copied().collect(),
                }),
                dhcpv4::Event::Deconfigured => None,
            })
        };
        match event {
            Some(Some(ip)) => {
                self.configure(ip, Source::Dhcp);
                self.dhcp = Some((c, None, fallback));
            }
            Some(None) if self.info.as_ref().is_some_and(|i| i.source == Source::Dhcp) => {
                // Lease lost: back to the fallback until a new one comes.
                self.configure(fallback, Source::Fallback);
            }
            Some(None) => {} // the client starting: nothing configured yet
            None => {
                if let Some(at) = fallback_at {
                    if self.now >= at && self.info.is_none() {
                        self.configure(fallback.clone(), Source::Fallback);
                        self.dhcp = Some((c, None, fallback));
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Conn(usize),
    /// No connection: the interface answers as for a closed port.
    Nobody,
    /// Dropped unseen (a SYN beyond the backlog: the peer retries).
    Drop,
}
