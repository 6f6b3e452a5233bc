//! The socket calls the Linux personality wraps: every call is
//! non-blocking (the personality blocks by sleeping until `readiness`
//! changes) and fails with the errno Linux would give.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use smoltcp::iface::SocketSet;
use smoltcp::socket::{tcp, udp};
use smoltcp::time::Instant;
use smoltcp::wire::{IpAddress, IpEndpoint, IpListenEndpoint};

use crate::errno::Errno;
use crate::link::Link;
use crate::opts::Opts;
use crate::stack::{Holder, If, Stack, Tuple};

/// A socket's name in its stack (the personality maps descriptors to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SocketId(pub(crate) usize);

/// What one receive gave (`Stack::recv_from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Bytes copied into the caller's buffer.
    pub len: usize,
    /// Bytes the datagram had (`len` for a stream).
    pub full: usize,
    pub from: SocketAddr,
    /// The datagram's hop limit (TTL) and traffic class (TOS) as it
    /// arrived (`IPV6_RECVHOPLIMIT`, `IPV6_RECVTCLASS`); `None` for a stream.
    pub traffic: Option<(u8, u8)>,
}

impl SocketId {
    /// The number the personality stores (and gives back with `from_raw`).
    pub fn raw(self) -> usize {
        self.0
    }
    pub fn from_raw(n: usize) -> SocketId {
        SocketId(n)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockType {
    Stream,
    Datagram,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    Read,
    Write,
    Both,
}

/// Readiness bits, as `poll` reports them.
pub mod ready {
    pub const POLLIN: u32 = 0x1;
    pub const POLLOUT: u32 = 0x4;
    pub const POLLERR: u32 = 0x8;
    pub const POLLHUP: u32 = 0x10;
    pub const POLLRDHUP: u32 = 0x2000;
}

#[derive(Debug)]
pub(crate) enum SockState {
    Fresh,
    Listening {
        backlog: usize,
        embryos: Vec<usize>,
        pending: VecDeque<usize>,
    },
    Connecting {
        conn: usize,
        since: Instant,
    },
    Connected(usize),
    /// One smoltcp socket per interface (a wildcard bind hears both).
    Udp {
        eth: Option<usize>,
        lo: Option<usize>,
    },
}

#[derive(Debug)]
pub(crate) struct Socket {
    pub ty: SockType,
    pub state: SockState,
    pub opts: Opts,
    /// An IPv6 socket (it takes IPv4 peers too unless `opts.v6only`:
    /// the personality shows them as `::ffff:a.b.c.d`).
    pub v6: bool,
    pub bound: Option<SocketAddr>,
    pub udp_peer: Option<SocketAddr>,
    /// The source address a connected datagram socket bound to a
    /// wildcard sends from (its name, as Linux reports it).
    pub udp_src: Option<IpAddr>,
    /// Pending error (`SO_ERROR`), cleared when read.
    pub error: Option<Errno>,
    pub shut_rd: bool,
    pub shut_wr: bool,
    /// Connected in the background; the next `connect` returns success.
    pub connect_unreported: bool,
}

/// How long a connect may take before ETIMEDOUT.
pub const CONNECT_TIMEOUT_MS: u64 = 75_000;
const EPHEMERAL: core::ops::RangeInclusive<u16> = 49152..=65535;

/// Whether a socket bound to `w` (with `IPV6_V6ONLY` as `v6only`) hears
/// address `x`: itself, or any of its family for a wildcard, IPv4 too for
/// a dual-stack IPv6 wildcard.
pub(crate) fn covers(w: IpAddr, v6only: bool, x: IpAddr) -> bool {
    w == x
        || w.is_unspecified()
            && match (w, x) {
                (IpAddr::V6(_), IpAddr::V4(_)) => !v6only,
                _ => w.is_ipv4() == x.is_ipv4(),
            }
}

/// EAFNOSUPPORT for an IPv6 destination of an IPv4 socket; ENETUNREACH
/// for an IPv4 one of an IPv6-only socket, or of a family other than the
/// address the socket is bound to.
fn reachable(sock: &Socket, to: IpAddr) -> Result<(), Errno> {
    let bound_other = sock.bound.is_some_and(|b| !b.ip().is_unspecified() && b.is_ipv4() != to.is_ipv4());
    match to {
        IpAddr::V6(_) if !sock.v6 => Err(Errno::EAFNOSUPPORT),
        IpAddr::V4(_) if sock.v6 && sock.opts.v6only => Err(Errno::ENETUNREACH),
        _ if bound_other => Err(Errno::ENETUNREACH),
        _ => Ok(()),
    }
}

/// The wildcard address of a socket's family.
fn any(v6: bool) -> SocketAddr {
    let ip = if v6 { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
    SocketAddr::new(ip, 0)
}

fn listen_endpoint(at: SocketAddr) -> IpListenEndpoint {
    let addr = (!at.ip().is_unspecified()).then(|| IpAddress::from(at.ip()));
    IpListenEndpoint { addr, port: at.port() }
}

impl<L: Link> Stack<L> {
    pub(crate) fn sock(&mut self, s: SocketId) -> Result<&mut Socket, Errno> {
        self.socks.get_mut(s.0).and_then(|x| x.as_mut()).ok_or(Errno::EBADF)
    }

    fn new_sock(&mut self, sock: Socket) -> SocketId {
        match self.free_socks.pop() {
            Some(i) => {
                self.socks[i] = Some(sock);
                SocketId(i)
            }
            None => {
                self.socks.push(Some(sock));
                SocketId(self.socks.len() - 1)
            }
        }
    }

    /// An IPv4 socket.
    pub fn socket(&mut self, ty: SockType) -> SocketId {
        self.new_socket(ty, false)
    }

    /// An IPv6 socket: dual-stack (IPv4 peers too) until `Opt::V6Only`.
    pub fn socket_v6(&mut self, ty: SockType) -> SocketId {
        self.new_socket(ty, true)
    }

    fn new_socket(&mut self, ty: SockType, v6: bool) -> SocketId {
        self.new_sock(Socket {
            ty,
            state: SockState::Fresh,
            opts: Opts::default(),
            v6,
            bound: None,
            udp_peer: None,
            error: None,
            shut_rd: false,
            shut_wr: false,
            connect_unreported: false,
            udp_src: None,
        })
    }

    /// Whether `port` is taken for a socket of type `ty` that wants `addr`.
    fn port_taken(&self, ty: SockType, addr: IpAddr, port: u16, me: usize) -> bool {
        let mine = self.socks[me].as_ref().map(|s| s.opts);
        let my_v6only = mine.is_some_and(|m| m.v6only);
        self.socks.iter().enumerate().any(|(i, s)| {
            let Some(s) = s else { return false };
            let Some(b) = s.bound else { return false };
            if i == me || s.ty != ty || b.port() != port {
                return false;
            }
            let overlap = covers(b.ip(), s.opts.v6only, addr) || covers(addr, my_v6only, b.ip());
            let both_reuseport = s.opts.reuse_port && mine.is_some_and(|m| m.reuse_port);
            let reuseaddr =
                mine.is_some_and(|m| m.reuse_addr) && !matches!(s.state, SockState::Listening { .. });
            overlap && !both_reuseport && !reuseaddr
        }) || (ty == SockType::Stream
            && self.tcp_by_tuple.keys().any(|t| t.local.port() == port)
            && !mine.is_some_and(|m| m.reuse_addr))
    }

    fn ephemeral(&mut self, ty: SockType, me: usize) -> Result<u16, Errno> {
        for _ in 0..EPHEMERAL.len() {
            let p = self.next_port;
            self.next_port = if p == *EPHEMERAL.end() { *EPHEMERAL.start() } else { p + 1 };
            let used_by_conn = self.tcp_by_tuple.keys().any(|t| t.local.port() == p)
                || self.udp_by_port.keys().any(|&(_, q)| q == p);
            if !used_by_conn && !self.port_taken(ty, any(true).ip(), p, me) {
                return Ok(p);
            }
        }
        Err(Errno::EADDRINUSE)
    }

    fn local_ok(&self, a: IpAddr) -> bool {
        self.iface_addr_ok(If::Eth, a) || self.iface_addr_ok(If::Lo, a)
    }

    /// Binds to `addr`; an IPv6 socket takes an IPv4 address (what it
    /// calls `::ffff:a.b.c.d`) and is then an IPv4 socket in all but name.
    pub fn bind(&mut self, s: SocketId, addr: impl Into<SocketAddr>) -> Result<(), Errno> {
        let addr = addr.into();
        let sock = self.sock(s)?;
        if sock.bound.is_some() || !matches!(sock.state, SockState::Fresh) {
            return Err(Errno::EINVAL);
        }
        if addr.is_ipv6() && !sock.v6 {
            return Err(Errno::EAFNOSUPPORT);
        }
        let ty = sock.ty;
        if !self.local_ok(addr.ip()) {
            return Err(Errno::EADDRNOTAVAIL);
        }
        let port = match addr.port() {
            0 => self.ephemeral(ty, s.0)?,
            p if self.port_taken(ty, addr.ip(), p, s.0) => return Err(Errno::EADDRINUSE),
            p => p,
        };
        let bound = SocketAddr::new(addr.ip(), port);
        self.sock(s)?.bound = Some(bound);
        if ty == SockType::Datagram {
            self.open_udp(s.0, bound)?;
        }
        Ok(())
    }

    fn open_udp(&mut self, s: usize, at: SocketAddr) -> Result<(), Errno> {
        let opts = self.socks[s].as_ref().map(|x| x.opts).unwrap_or_default();
        let mut ids = [None, None];
        for (k, iface) in [If::Eth, If::Lo].into_iter().enumerate() {
            if !self.iface_addr_ok(iface, at.ip()) {
                continue;
            }
            if self.udp_by_port.contains_key(&(iface, at.port())) {
                continue; // SO_REUSEPORT datagram sharing is not modelled: first one hears
            }
            let mut sock = opts.udp_socket();
            sock.bind(listen_endpoint(at)).map_err(|_| Errno::EINVAL)?;
            let mut set = SocketSet::new(Vec::with_capacity(1));
            let h = set.add(sock);
            let c = self.add_conn(set, h, iface, Holder::Sock(s));
            self.conn(c).udp_port = Some(at.port());
            self.udp_by_port.insert((iface, at.port()), c);
            ids[k] = Some(c);
        }
        if let Some(sock) = self.socks[s].as_mut() {
            sock.state = SockState::Udp { eth: ids[0], lo: ids[1] };
        }
        Ok(())
    }

    pub fn listen(&mut self, s: SocketId, backlog: usize) -> Result<(), Errno> {
        let sock = self.sock(s)?;
        if sock.ty != SockType::Stream {
            return Err(Errno::EOPNOTSUPP);
        }
        match &mut sock.state {
            SockState::Listening { backlog: b, .. } => {
                *b = backlog.clamp(1, 4096);
                return Ok(());
            }
            SockState::Fresh => {}
            _ => return Err(Errno::EINVAL),
        }
        if sock.bound.is_none() {
            let v6 = self.sock(s)?.v6;
            self.bind(s, any(v6))?;
        }
        let sock = self.sock(s)?;
        sock.state = SockState::Listening {
            backlog: backlog.clamp(1, 4096),
            embryos: Vec::new(),
            pending: VecDeque::new(),
        };
        Ok(())
    }

    /// The listening socket that takes SYNs for `local` on `iface`
    /// (several with `SO_REUSEPORT`: the one the peer's port picks).
    pub(crate) fn listener_for(&self, iface: If, local: SocketAddr) -> Option<usize> {
        let mut found = self.socks.iter().enumerate().filter(|(_, s)| {
            s.as_ref().is_some_and(|s| {
                matches!(s.state, SockState::Listening { .. })
                    && s.bound.is_some_and(|b| {
                        b.port() == local.port()
                            && covers(b.ip(), s.opts.v6only, local.ip())
                            && self.iface_addr_ok(iface, b.ip())
                    })
            })
        });
        found.next().map(|(i, _)| i)
    }

    pub fn accept(&mut self, s: SocketId) -> Result<(SocketId, SocketAddr), Errno> {
        let sock = self.sock(s)?;
        let SockState::Listening { pending, .. } = &mut sock.state else { return Err(Errno::EINVAL) };
        let Some(c) = pending.pop_front() else { return Err(Errno::EAGAIN) };
        let (opts, v6) = (sock.opts, sock.v6);
        let (tuple, peer) = {
            let conn = self.conn(c);
            let t = conn.tuple.expect("an accepted connection has a tuple");
            (t, t.remote)
        };
        let id = self.new_sock(Socket {
            ty: SockType::Stream,
            state: SockState::Connected(c),
            opts,
            v6,
            bound: Some(tuple.local),
            udp_peer: None,
            error: None,
            shut_rd: false,
            shut_wr: false,
            connect_unreported: false,
            udp_src: None,
        });
        self.conn(c).holder = Holder::Sock(id.0);
        Ok((id, peer))
    }

    pub fn connect(&mut self, s: SocketId, to: impl Into<SocketAddr>) -> Result<(), Errno> {
        let to = to.into();
        let now = self.now;
        let sock = self.sock(s)?;
        reachable(sock, to.ip())?;
        if sock.ty == SockType::Datagram {
            if sock.bound.is_none() {
                let v6 = self.sock(s)?.v6;
                self.bind(s, any(v6))?;
            }
            let src = self.source_for(to.ip());
            let sock = self.sock(s)?;
            sock.udp_peer = Some(to);
            sock.udp_src = src;
            return Ok(());
        }
        match sock.state {
            SockState::Connected(_) if sock.connect_unreported => {
                sock.connect_unreported = false;
                return Ok(());
            }
            SockState::Connected(_) => return Err(Errno::EISCONN),
            SockState::Listening { .. } => return Err(Errno::EINVAL),
            SockState::Connecting { conn, since } => return self.connect_progress(s, conn, since),
            _ => {}
        }
        let iface = self.iface_to(to.ip());
        // IPv6 has only loopback (the Ethernet interface has no IPv6 address).
        if iface == If::Eth && (self.info.is_none() || to.is_ipv6()) {
            return Err(Errno::ENETUNREACH);
        }
        let opts = self.sock(s)?.opts;
        let port = match self.sock(s)?.bound {
            Some(b) => b.port(),
            None => self.ephemeral(SockType::Stream, s.0)?,
        };
        let local_ip = self.sock(s)?.bound.map_or(any(false).ip(), |b| b.ip());
        let mut tcp = opts.tcp_socket();
        tcp.set_timeout(Some(smoltcp::time::Duration::from_millis(CONNECT_TIMEOUT_MS)));
        let local = listen_endpoint(SocketAddr::new(local_ip, port));
        let remote = IpEndpoint::from(to);
        let cx = match iface {
            If::Eth => self.eth.context(),
            If::Lo => self.lo.context(),
        };
        tcp.connect(cx, remote, local).map_err(|_| Errno::EADDRNOTAVAIL)?;
        let me = tcp.local_endpoint().map(SocketAddr::from).ok_or(Errno::EADDRNOTAVAIL)?;
        let tuple = Tuple { iface, local: me, remote: to };
        if self.tcp_by_tuple.contains_key(&tuple) {
            return Err(Errno::EADDRINUSE);
        }
        let mut set = SocketSet::new(Vec::with_capacity(1));
        let h = set.add(tcp);
        let c = self.add_conn(set, h, iface, Holder::Sock(s.0));
        self.conn(c).tuple = Some(tuple);
        self.conn(c).last = tcp::State::SynSent;
        self.tcp_by_tuple.insert(tuple, c);
        let sock = self.sock(s)?;
        sock.bound = Some(me);
        sock.state = SockState::Connecting { conn: c, since: now };
        self.dirty.push(c);
        Err(Errno::EINPROGRESS)
    }

    /// A connect asked again (or the personality checking on it).
    fn connect_progress(&mut self, s: SocketId, c: usize, since: Instant) -> Result<(), Errno> {
        let timed_out = (self.now - since).total_millis() >= CONNECT_TIMEOUT_MS;
        let conn = self.conn(c);
        match conn.tcp().state() {
            tcp::State::SynSent | tcp::State::SynReceived if timed_out => {
                conn.tcp().abort();
                self.fail_connect(s, c, Errno::ETIMEDOUT)
            }
            tcp::State::SynSent | tcp::State::SynReceived => Err(Errno::EALREADY),
            tcp::State::Closed => self.fail_connect(s, c, Errno::ECONNREFUSED),
            _ => {
                self.sock(s)?.state = SockState::Connected(c);
                Ok(())
            }
        }
    }

    fn fail_connect(&mut self, s: SocketId, c: usize, e: Errno) -> Result<(), Errno> {
        self.dirty.push(c);
        self.conn(c).holder = Holder::Orphan;
        let sock = self.sock(s)?;
        sock.state = SockState::Fresh;
        sock.bound = None;
        Err(e)
    }

    /// Settles a connecting socket whose handshake finished or failed
    /// (called before anything that needs to know).
    fn settle(&mut self, s: SocketId) -> Result<(), Errno> {
        if let SockState::Connecting { conn, since } = self.sock(s)?.state {
            match self.connect_progress(s, conn, since) {
                Ok(()) | Err(Errno::EALREADY) => {}
                Err(e) => self.sock(s)?.error = Some(e),
            }
        }
        Ok(())
    }

    fn stream(&mut self, s: SocketId) -> Result<usize, Errno> {
        self.settle(s)?;
        match self.sock(s)?.state {
            SockState::Connected(c) => Ok(c),
            SockState::Connecting { .. } => Err(Errno::EAGAIN),
            _ => Err(Errno::ENOTCONN),
        }
    }

    pub fn send(&mut self, s: SocketId, data: &[u8]) -> Result<usize, Errno> {
        if self.sock(s)?.ty == SockType::Datagram {
            let peer = self.sock(s)?.udp_peer.ok_or(Errno::EDESTADDRREQ)?;
            return self.send_to(s, data, peer);
        }
        let c = self.stream(s)?;
        if self.sock(s)?.shut_wr {
            return Err(Errno::EPIPE);
        }
        let conn = self.conn(c);
        if conn.reset {
            return Err(Errno::ECONNRESET);
        }
        if !conn.tcp().may_send() {
            return Err(Errno::EPIPE);
        }
        let n = conn.tcp().send_slice(data).map_err(|_| Errno::EPIPE)?;
        if n == 0 && !data.is_empty() {
            return Err(Errno::EAGAIN);
        }
        self.dirty.push(c);
        Ok(n)
    }

    /// Receives into `buf`; `Ok(0)` is end of file. With `peek` the data
    /// stays queued.
    pub fn recv(&mut self, s: SocketId, buf: &mut [u8], peek: bool) -> Result<usize, Errno> {
        if self.sock(s)?.ty == SockType::Datagram {
            return self.recv_from(s, buf, peek).map(|r| r.len);
        }
        let c = self.stream(s)?;
        if self.sock(s)?.shut_rd {
            return Ok(0);
        }
        let conn = self.conn(c);
        let tcp = conn.tcp();
        if tcp.can_recv() {
            let n = if peek { tcp.peek_slice(buf) } else { tcp.recv_slice(buf) }
                .map_err(|_| Errno::ECONNRESET)?;
            self.dirty.push(c); // the window opened: tell the peer
            return Ok(n);
        }
        if conn.reset {
            return Err(Errno::ECONNRESET);
        }
        if !conn.tcp().may_recv() {
            return Ok(0);
        }
        Err(Errno::EAGAIN)
    }

    /// Forgets a datagram socket's peer (`connect` to `AF_UNSPEC`).
    pub fn disconnect(&mut self, s: SocketId) -> Result<(), Errno> {
        let sock = self.sock(s)?;
        if sock.ty != SockType::Datagram {
            return Err(Errno::EOPNOTSUPP);
        }
        sock.udp_peer = None;
        sock.udp_src = None;
        Ok(())
    }

    /// The source address of a packet to `to`, as Linux's routes give it:
    /// a loopback address's family's first, our own address itself, the
    /// interface's address off the machine.
    fn source_for(&self, to: IpAddr) -> Option<IpAddr> {
        match (self.iface_to(to), to) {
            (If::Lo, IpAddr::V4(a)) if a.is_loopback() => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            (If::Lo, _) => Some(to),
            (If::Eth, IpAddr::V4(_)) => self.info.as_ref().map(|i| IpAddr::V4(i.ip.addr)),
            (If::Eth, IpAddr::V6(_)) => None,
        }
    }

    /// The interface a packet to `to` leaves by.
    fn iface_to(&self, to: IpAddr) -> If {
        if to.is_loopback() || !to.is_unspecified() && self.iface_addr_ok(If::Lo, to) {
            If::Lo
        } else {
            If::Eth
        }
    }

    fn udp_conn_for(&mut self, s: SocketId, to: IpAddr) -> Result<usize, Errno> {
        let sock = self.sock(s)?;
        reachable(sock, to)?;
        if sock.bound.is_none() {
            let v6 = self.sock(s)?.v6;
            self.bind(s, any(v6))?;
        }
        let SockState::Udp { eth, lo } = self.sock(s)?.state else { return Err(Errno::EINVAL) };
        match self.iface_to(to) {
            If::Lo => lo,
            If::Eth if to.is_ipv6() => None, // no IPv6 on the wire
            If::Eth => eth,
        }
        .ok_or(Errno::ENETUNREACH)
    }

    pub fn send_to(&mut self, s: SocketId, data: &[u8], to: impl Into<SocketAddr>) -> Result<usize, Errno> {
        let to = to.into();
        if self.sock(s)?.ty != SockType::Datagram {
            return self.send(s, data); // Linux ignores the address on a connected stream
        }
        let c = self.udp_conn_for(s, to.ip())?;
        let udp = self.conn(c).udp();
        if data.len() > udp.payload_send_capacity() {
            return Err(Errno::EMSGSIZE);
        }
        match udp.send_slice(data, IpEndpoint::from(to)) {
            Ok(()) => {
                self.dirty.push(c);
                Ok(data.len())
            }
            Err(udp::SendError::BufferFull) => Err(Errno::EAGAIN),
            Err(udp::SendError::Unaddressable) => Err(Errno::EINVAL),
        }
    }

    /// `send_to` (or `send`, `to` `None`) of one datagram with its own hop
    /// limit (`IPV6_HOPLIMIT` in a sendmsg's control data, honoured for
    /// an IPv6 destination as on Linux): what the socket had queued leaves
    /// first with the socket's limit, then this datagram with `hops`.
    pub fn send_with_hops(
        &mut self,
        s: SocketId,
        data: &[u8],
        to: Option<SocketAddr>,
        hops: u8,
    ) -> Result<usize, Errno> {
        let sock = self.sock(s)?;
        let dest = to.or(sock.udp_peer);
        let Some(dest) = dest.filter(|d| sock.ty == SockType::Datagram && d.is_ipv6()) else {
            return match to {
                Some(a) => self.send_to(s, data, a),
                None => self.send(s, data),
            };
        };
        let c = self.udp_conn_for(s, dest.ip())?;
        let own = self.sock(s)?.opts.hops();
        self.after(c);
        self.conn(c).udp().set_hop_limit(Some(hops.max(1)));
        let r = self.send_to(s, data, dest);
        self.after(c);
        self.conn(c).udp().set_hop_limit(own);
        r
    }

    /// Receives into `buf`: the bytes copied, the bytes the datagram had
    /// (more than copied when `buf` was too small: the rest is dropped, or
    /// kept with `peek`; the caller reports `MSG_TRUNC`), and the sender.
    pub fn recv_from(&mut self, s: SocketId, buf: &mut [u8], peek: bool) -> Result<Received, Errno> {
        let sock = self.sock(s)?;
        let (sock_v6, v6only) = (sock.v6, sock.opts.v6only);
        if sock.ty != SockType::Datagram {
            let n = self.recv(s, buf, peek)?;
            let peer = self.peer_addr(s).unwrap_or(any(sock_v6));
            return Ok(Received { len: n, full: n, from: peer, traffic: None });
        }
        let peer = sock.udp_peer;
        let SockState::Udp { eth, lo } = sock.state else { return Err(Errno::EAGAIN) };
        for c in [eth, lo].into_iter().flatten() {
            let udp = self.conn(c).udp();
            while udp.can_recv() {
                let (data, meta) = udp.peek().map_err(|_| Errno::EAGAIN)?;
                let from = SocketAddr::from(meta.endpoint);
                let traffic = crate::parse::traffic(meta.meta.id);
                let family_ok = if from.is_ipv4() { !(sock_v6 && v6only) } else { sock_v6 };
                if peer.is_some_and(|p| p != from) || !family_ok {
                    // not from the connected peer, or of a family the
                    // socket does not take: dropped, as on Linux
                    let _ = udp.recv();
                    continue;
                }
                let (n, full) = (data.len().min(buf.len()), data.len());
                buf[..n].copy_from_slice(&data[..n]);
                if !peek {
                    let _ = udp.recv();
                }
                return Ok(Received { len: n, full, from, traffic });
            }
        }
        Err(Errno::EAGAIN)
    }

    pub fn shutdown(&mut self, s: SocketId, how: Shutdown) -> Result<(), Errno> {
        let c = match self.stream(s) {
            Ok(c) => c,
            Err(Errno::EAGAIN) => return Err(Errno::ENOTCONN),
            Err(e) => return Err(e),
        };
        let sock = self.sock(s)?;
        if matches!(how, Shutdown::Read | Shutdown::Both) {
            sock.shut_rd = true;
        }
        if matches!(how, Shutdown::Write | Shutdown::Both) {
            sock.shut_wr = true;
            self.conn(c).tcp().close();
            self.dirty.push(c);
        }
        Ok(())
    }

    /// Closes the socket: a connection finishes its shutdown on its own
    /// (or is reset at once with `SO_LINGER` 0); queued connections of a
    /// listener are reset.
    pub fn close(&mut self, s: SocketId) -> Result<(), Errno> {
        let sock = self.socks.get_mut(s.0).and_then(|x| x.take()).ok_or(Errno::EBADF)?;
        self.free_socks.push(s.0);
        if self.cheetah.as_ref().is_some_and(|c| c.sock == s.0) {
            self.cheetah = None; // its connections go with it
        }
        let linger0 = sock.opts.linger == Some(0);
        let conns: Vec<usize> = match sock.state {
            SockState::Fresh => Vec::new(),
            SockState::Listening { embryos, pending, .. } => {
                for &c in embryos.iter().chain(pending.iter()) {
                    self.conn(c).tcp().abort();
                }
                embryos.into_iter().chain(pending).collect()
            }
            SockState::Connecting { conn, .. } => {
                self.conn(conn).tcp().abort();
                alloc::vec![conn]
            }
            SockState::Connected(c) => {
                if linger0 {
                    self.conn(c).tcp().abort();
                } else {
                    self.conn(c).tcp().close();
                }
                alloc::vec![c]
            }
            SockState::Udp { eth, lo } => {
                for c in [eth, lo].into_iter().flatten() {
                    self.free_conn(c);
                }
                Vec::new()
            }
        };
        for c in conns {
            self.conn(c).holder = Holder::Orphan;
            self.dirty.push(c);
        }
        Ok(())
    }

    /// Bytes waiting to be read (a stream's queue, a datagram's size).
    pub fn readable(&mut self, s: SocketId) -> usize {
        let (state_conn, udp) = match self.sock(s).map(|k| &k.state) {
            Ok(SockState::Connected(c)) => (Some(*c), None),
            Ok(SockState::Udp { eth, lo }) => (None, Some([*eth, *lo])),
            _ => (None, None),
        };
        if let Some(c) = state_conn {
            return self.conn(c).tcp().recv_queue();
        }
        for c in udp.into_iter().flatten().flatten() {
            if let Ok((d, _)) = self.conn(c).udp().peek() {
                return d.len();
            }
        }
        0
    }

    /// Bytes a connected stream socket has not yet had acknowledged (0
    /// for others).
    pub fn unsent(&mut self, s: SocketId) -> usize {
        match self.sock(s).map(|k| &k.state) {
            Ok(SockState::Connected(c)) => {
                let c = *c;
                self.conn(c).tcp().send_queue()
            }
            _ => 0,
        }
    }

    pub fn local_addr(&mut self, s: SocketId) -> Result<SocketAddr, Errno> {
        let sock = self.sock(s)?;
        Ok(match (sock.bound, sock.udp_src) {
            (Some(b), Some(src)) if b.ip().is_unspecified() => SocketAddr::new(src, b.port()),
            (b, _) => b.unwrap_or(any(sock.v6)),
        })
    }

    pub fn peer_addr(&mut self, s: SocketId) -> Result<SocketAddr, Errno> {
        self.settle(s)?;
        let sock = self.sock(s)?;
        match sock.state {
            SockState::Connected(c) => {
                let peer = self.conn(c).tuple.map(|t| t.remote);
                peer.ok_or(Errno::ENOTCONN)
            }
            SockState::Udp { .. } => sock.udp_peer.ok_or(Errno::ENOTCONN),
            _ => Err(Errno::ENOTCONN),
        }
    }

    /// What `poll` would report for the socket (`ready::*` bits).
    pub fn readiness(&mut self, s: SocketId) -> Result<u32, Errno> {
        use ready::{POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDHUP};
        self.settle(s)?;
        let sock = self.sock(s)?;
        let err = if sock.error.is_some() { POLLERR } else { 0 };
        let (shut_rd, shut_wr) = (sock.shut_rd, sock.shut_wr);
        let bits = match &sock.state {
            SockState::Fresh => POLLOUT | POLLHUP,
            SockState::Listening { pending, .. } => {
                if pending.is_empty() {
                    0
                } else {
                    POLLIN
                }
            }
            SockState::Connecting { .. } => 0,
            &SockState::Udp { eth, lo } => {
                let mut b = 0;
                for c in [eth, lo].into_iter().flatten() {
                    let u = self.conn(c).udp();
                    b |= if u.can_recv() { POLLIN } else { 0 } | if u.can_send() { POLLOUT } else { 0 };
                }
                b
            }
            &SockState::Connected(c) => {
                let conn = self.conn(c);
                let reset = conn.reset;
                let tcp = conn.tcp();
                let mut b = 0;
                if tcp.can_recv() || !tcp.may_recv() || shut_rd {
                    b |= POLLIN;
                }
                if !tcp.may_recv() {
                    b |= POLLRDHUP;
                }
                if tcp.can_send() && !shut_wr {
                    b |= POLLOUT;
                }
                if reset {
                    b |= POLLERR | POLLHUP | POLLIN;
                } else if !tcp.may_recv() && !tcp.may_send() {
                    b |= POLLHUP;
                }
                b
            }
        };
        Ok(bits | err)
    }

    /// Takes the pending error (`SO_ERROR`).
    pub fn take_error(&mut self, s: SocketId) -> Result<Option<Errno>, Errno> {
        self.settle(s)?;
        let sock = self.sock(s)?;
        let e = sock.error.take();
        if e.is_none() {
            if let SockState::Connected(c) = sock.state {
                if self.conn(c).reset {
                    return Ok(Some(Errno::ECONNRESET));
                }
            }
        }
        Ok(e)
    }

    pub(crate) fn sock_conns(&mut self, s: SocketId) -> Result<Vec<usize>, Errno> {
        Ok(match self.sock(s)?.state {
            SockState::Connecting { conn, .. } | SockState::Connected(conn) => alloc::vec![conn],
            SockState::Udp { eth, lo } => [eth, lo].into_iter().flatten().collect(),
            _ => Vec::new(),
        })
    }

    pub(crate) fn sock_opts(&mut self, s: SocketId) -> Result<&mut Opts, Errno> {
        Ok(&mut self.sock(s)?.opts)
    }
}
