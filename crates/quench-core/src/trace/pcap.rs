//! A libpcap writer (nanosecond variant, magic 0xa1b23c4d) for the packets a link transmits,
//! timestamped when transmission starts, as tcpdump would see them on the sending interface.
//!
//! Packets carry no payload, so each record holds the synthesized IPv4 header and transport
//! header only (captured length < original length, as with a short snaplen); tcpdump and tshark
//! read such files without complaint. Addresses are 10.x.y.z from the node index; TCP ports are
//! derived from the flow; sequence numbers are offset by a per-(flow, direction) ISN so they look
//! like a real connection. The IPv4 header checksum is correct; the transport checksums are
//! zero because the payload is absent. The SYN and SYN-ACK carry the options their connection's
//! handshake gives them (`packet::Handshake`: MSS, SACK-permitted, timestamps, window scale in
//! Linux's `tcp_options_write` layout), the same bytes the simulated SYN counts. The window
//! field of a SYN is the advertised window capped at 65535; after the handshake it is scaled
//! by the sending end's shift when both SYNs carried window scale (RFC 7323 section 2.3), else
//! capped. ACKs of SACK connections carry the SACK option (RFC 2018 section 3), counted in the
//! simulated ACK's size. Segments of connections with `tcp.timestamps` carry the timestamp
//! option (RFC 7323), TSval on a microsecond clock. Packets of a flow that carries in-band
//! telemetry on the wire have its header after the transport header (`telemetry::IntHeader`:
//! the hop count and the hops written so far, this link's own when it is a switch's egress).
//! A Multipath TCP connection's subflows each have their own ports and sequence numbers, and
//! their options (`pcap_mptcp.rs`).
//! So every record's original length and IP total length are the simulated packet's size.
//! Owns each capture's buffer or file; it writes the packets the world hands it as a link starts
//! sending them, and reads no component.

use super::pcap_mptcp;
use crate::icmp;
use crate::packet::mptcp_option::Carried;
use crate::packet::{
    tcp_flags, ts_clock, FlowId, Handshake, LinkId, NodeId, Packet, Proto, SynOptions, IP_HEADER, TCP_HEADER,
    TCP_TIMESTAMP_OPTION, UDP_HEADER,
};
use crate::telemetry::{IntHeader, IntRecord};
use crate::units::Time;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const MAGIC_NANOSECOND: u32 = 0xa1b2_3c4d;
const VERSION_MAJOR: u16 = 2;
const VERSION_MINOR: u16 = 4;
const SNAPLEN: u32 = 65_535;
/// LINKTYPE_RAW: the packet begins with the IPv4 header.
const LINKTYPE_RAW: u32 = 101;
const DEFAULT_TTL: u8 = 64;
const TCP_OPT_NOP: u8 = 1;
/// RFC 9293 section 3.2: the MSS option, kind 2, length 4, sent only on a SYN.
const TCP_OPT_MSS: u8 = 2;
const TCP_OPT_MSS_LEN: u8 = 4;
/// RFC 7323 section 2.2: the window-scale option, kind 3, length 3, sent only on a SYN.
const TCP_OPT_WINDOW_SCALE: u8 = 3;
const TCP_OPT_WINDOW_SCALE_LEN: u8 = 3;
/// RFC 2018 section 2: the SACK-permitted option, kind 4, length 2, sent only on a SYN.
const TCP_OPT_SACK_PERMITTED: u8 = 4;
const TCP_OPT_SACK_PERMITTED_LEN: u8 = 2;
const TCP_OPT_SACK: u8 = 5;
/// RFC 7323 section 3: the timestamp option's kind and length.
const TCP_OPT_TIMESTAMP: u8 = 8;
const TCP_OPT_TIMESTAMP_LEN: u8 = 10;

/// TCP option bytes of a segment: a SYN's handshake options (`syn`, the timestamp option
/// among them), or the timestamp option (RFC 7323) and SACK blocks; then a multipath
/// subflow's option (`mptcp`).
fn tcp_option_bytes(pkt: &Packet, syn: Option<SynOptions>, mptcp: Option<Carried>) -> u32 {
    let tcp = match syn {
        Some(options) => options.bytes(),
        None => pkt.sack.option_bytes() + if pkt.ts_on { TCP_TIMESTAMP_OPTION } else { 0 },
    };
    tcp + mptcp.map_or(0, |c| c.bytes() as u32)
}

/// The Multipath TCP option `pkt` carries, if its flow is a multipath connection's.
fn mptcp_option(pkt: &Packet, handshake: &Handshake, sender_node: NodeId) -> Option<Carried> {
    let segment = handshake.mptcp && pkt.proto == Proto::Tcp && pkt.frag.offset == 0;
    segment.then(|| {
        let syn = pkt.has_flag(tcp_flags::SYN);
        Carried::on(pcap_mptcp::index(pkt), pkt.src == sender_node, syn, pkt.payload > 0)
    })
}

/// The handshake options `pkt` carries: a TCP SYN's (the opener's) or SYN-ACK's; None for any
/// other packet.
fn syn_options(pkt: &Packet, handshake: &Handshake) -> Option<SynOptions> {
    let syn = pkt.proto == Proto::Tcp && pkt.has_flag(tcp_flags::SYN) && pkt.frag.offset == 0;
    match (syn, pkt.has_flag(tcp_flags::ACK)) {
        (false, _) => None,
        (true, false) => Some(handshake.syn),
        (true, true) => Some(handshake.syn_ack),
    }
}
/// The receiving side of every flow listens on the iperf port; senders use an ephemeral port.
pub const RECEIVER_PORT: u16 = 5001;
const EPHEMERAL_PORT_BASE: u32 = 10_000;
const EPHEMERAL_PORT_SPAN: u32 = 50_000;

/// A capture's bytes: all in `buf` when kept in memory; when streamed to a file, `buf` holds
/// one record at a time, written through `sink`.
pub struct PcapWriter {
    buf: Vec<u8>,
    packets: u64,
    sink: Option<FileSink>,
}

/// The file a capture streams to, and the first error writing it (later packets are dropped).
struct FileSink {
    file: BufWriter<File>,
    path: PathBuf,
    error: Option<String>,
}

/// The writers of the captured links (`record.pcap`), in link order. Captures are few, so a
/// link without one holds nothing (a slot per link was 112 bytes a link: 4.5 MB at 40,002
/// links), and a lookup is a binary search over the captured ones.
#[derive(Default)]
pub struct Captures(Vec<(LinkId, PcapWriter)>);

impl Captures {
    /// Capture link `l` with `writer`, replacing the writer it had.
    pub fn insert(&mut self, l: LinkId, writer: PcapWriter) {
        match self.0.binary_search_by_key(&l, |(id, _)| *id) {
            Ok(i) => self.0[i].1 = writer,
            Err(i) => self.0.insert(i, (l, writer)),
        }
    }

    /// Link `l`'s writer, if it is captured.
    pub fn get_mut(&mut self, l: LinkId) -> Option<&mut PcapWriter> {
        let i = self.0.binary_search_by_key(&l, |(id, _)| *id).ok()?;
        Some(&mut self.0[i].1)
    }

    pub fn captures(&self, l: LinkId) -> bool {
        self.0.binary_search_by_key(&l, |(id, _)| *id).is_ok()
    }

    /// The writers, in link order.
    pub fn iter(&self) -> impl Iterator<Item = &PcapWriter> {
        self.0.iter().map(|(_, w)| w)
    }

    /// Take every writer out, in link order.
    pub fn take_all(&mut self) -> Vec<(LinkId, PcapWriter)> {
        std::mem::take(&mut self.0)
    }
}

impl FileSink {
    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.file.write_all(bytes) {
                self.error = Some(format!("{}: {e}", self.path.display()));
            }
        }
    }
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// The synthesized IPv4 address of a node: 10.0.0.1 for node 0, and so on.
pub fn node_address(node: NodeId) -> [u8; 4] {
    let n = node.0 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The sending side's port of a flow.
pub fn sender_port(flow: FlowId) -> u16 {
    (EPHEMERAL_PORT_BASE + flow.0 % EPHEMERAL_PORT_SPAN) as u16
}

/// Initial sequence number of the side of `flow` that lives on `node` (a fixed hash, so the
/// same scenario gives the same capture).
pub fn initial_sequence(flow: FlowId, node: NodeId) -> u32 {
    crate::rng::splitmix_at((flow.0 as u64) << 32 | node.0 as u64) as u32
}

/// (source port, destination port) of a flow's packet sent by `from`.
fn ports(flow: FlowId, from: NodeId, sender_node: NodeId) -> (u16, u16) {
    if from == sender_node {
        (sender_port(flow), RECEIVER_PORT)
    } else {
        (RECEIVER_PORT, sender_port(flow))
    }
}

/// The ISN of the end of `flow` on `node`, for the subflow `pkt` belongs to when `subflow`.
fn subflow_isn(flow: FlowId, node: NodeId, pkt: &Packet, subflow: bool) -> u32 {
    let first = initial_sequence(flow, node);
    if subflow {
        pcap_mptcp::initial_sequence(first, pcap_mptcp::index(pkt))
    } else {
        first
    }
}

/// A TCP segment's (source port, destination port, sequence number, acknowledgement number).
/// A multipath subflow has its own sender port and ISNs; its data segments' ACK field and the
/// receiver's sequence field carry the DSS's numbers in the simulation (`transport/mptcp.rs`),
/// so on the wire they are what a subflow's are: the receiver's ISN + 1 acknowledged, and the
/// receiver's own ISN + 1 (it sends no data).
fn tcp_numbers(pkt: &Packet, sender_node: NodeId, subflow: bool) -> (u16, u16, u32, u32) {
    let (mut sport, mut dport) = ports(pkt.flow, pkt.src, sender_node);
    let from_sender = pkt.src == sender_node;
    let (mut seq, mut ack) = (pkt.seq, pkt.ack);
    if subflow {
        let i = pcap_mptcp::index(pkt);
        let port = |p: u16| pcap_mptcp::sender_port(p, i, EPHEMERAL_PORT_BASE, EPHEMERAL_PORT_SPAN);
        if from_sender {
            sport = port(sport);
        } else {
            dport = port(dport);
        }
        let syn = pkt.has_flag(tcp_flags::SYN);
        if from_sender && pkt.payload > 0 {
            ack = 1;
        } else if !from_sender && !syn {
            seq = 1;
        }
    }
    let seq = subflow_isn(pkt.flow, pkt.src, pkt, subflow).wrapping_add(seq as u32);
    let ack = if pkt.has_flag(tcp_flags::ACK) {
        subflow_isn(pkt.flow, pkt.dst, pkt, subflow).wrapping_add(ack as u32)
    } else {
        0
    };
    (sport, dport, seq, ack)
}

/// The DSCP of a packet of `priority`: its class selector, CS`priority` (RFC 2474 section
/// 4.2.2.1, the codepoints `xxx000`), which switches map to the 802.1p priority of the same
/// number by default.
fn class_selector(priority: u8) -> u8 {
    (priority & 0b111) << 3
}

fn ipv4_header(src: NodeId, dst: NodeId, size: u16, uid: u32, proto: Proto, tos: u8) -> [u8; IP_HEADER as usize] {
    let mut h = [0u8; IP_HEADER as usize];
    h[0] = 0x45; // version 4, IHL 5 words
    h[1] = tos; // DSCP and ECN codepoint
    h[2..4].copy_from_slice(&size.to_be_bytes());
    h[4..6].copy_from_slice(&(uid as u16).to_be_bytes());
    h[8] = DEFAULT_TTL;
    h[9] = proto as u8;
    h[12..16].copy_from_slice(&node_address(src));
    h[16..20].copy_from_slice(&node_address(dst));
    let csum = ipv4_checksum(&h);
    h[10..12].copy_from_slice(&csum.to_be_bytes());
    h
}

/// The Internet checksum (RFC 1071) of an even-length buffer.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl PcapWriter {
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&MAGIC_NANOSECOND.to_le_bytes());
        buf.extend_from_slice(&VERSION_MAJOR.to_le_bytes());
        buf.extend_from_slice(&VERSION_MINOR.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        PcapWriter { buf, packets: 0, sink: None }
    }

    /// A writer that streams the capture to a new file at `path` (replaced if it exists).
    pub fn to_file(path: &Path) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = Self::new();
        let mut sink = FileSink { file: BufWriter::new(file), path: path.to_path_buf(), error: None };
        sink.put(&w.buf);
        w.buf.clear();
        w.sink = Some(sink);
        Ok(w)
    }

    /// The first error writing the capture's file, if it streams to one.
    pub fn error(&self) -> Option<&str> {
        self.sink.as_ref().and_then(|s| s.error.as_deref())
    }

    /// The capture's bytes when kept in memory (None when it streamed to a file, which is now
    /// complete), or the first error writing that file.
    pub fn finish(self) -> Result<Option<Vec<u8>>, String> {
        let Some(mut sink) = self.sink else { return Ok(Some(self.buf)) };
        if let Err(e) = sink.file.flush() {
            sink.error.get_or_insert(format!("{}: {e}", sink.path.display()));
        }
        sink.error.map_or(Ok(None), Err)
    }

    /// Append one packet as seen at time `t`; `sender_node` is where its flow's data starts;
    /// `handshake` the options of its flow's SYN and SYN-ACK; `int` the telemetry header its
    /// flow's packets carry and the record this one holds; `priority` its flow's (IEEE 802.1p),
    /// written as the DSCP class selector of the same number.
    pub fn write(
        &mut self,
        t: Time,
        pkt: &Packet,
        sender_node: NodeId,
        handshake: &Handshake,
        int: Option<(IntHeader, Option<&IntRecord>)>,
        priority: u8,
    ) {
        let size = pkt.size as u32;
        let syn = syn_options(pkt, handshake);
        let mptcp = mptcp_option(pkt, handshake, sender_node);
        // Only a datagram's first fragment carries the transport header and the shim.
        let int = int.filter(|_| pkt.frag.offset == 0);
        let shim = int.map_or(0, |(h, _)| h.wire_bytes());
        let transport = shim
            + match pkt.proto {
                _ if pkt.frag.offset > 0 => 0,
                Proto::Tcp | Proto::Assisted => TCP_HEADER + tcp_option_bytes(pkt, syn, mptcp),
                // NDP's header is captured as a UDP-shaped one (ports and length).
                Proto::Udp | Proto::Ndp => UDP_HEADER,
                Proto::Icmp => pkt.payload as u32,
            };
        let captured = (IP_HEADER + transport).min(size);
        self.buf.extend_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&captured.to_le_bytes());
        self.buf.extend_from_slice(&size.to_le_bytes());
        let start = self.buf.len();
        self.write_ipv4(pkt, size as u16, class_selector(priority) << 2);
        match pkt.proto {
            _ if pkt.frag.offset > 0 => {}
            Proto::Tcp | Proto::Assisted => {
                let shift = if syn.is_some() { 0 } else { handshake.window_shift(pkt.src == sender_node) };
                self.write_tcp(pkt, sender_node, syn, mptcp, shift)
            }
            Proto::Udp | Proto::Ndp => self.write_udp(pkt),
            Proto::Icmp => self.write_icmp(pkt, sender_node),
        }
        if let Some((header, record)) = int {
            header.write(record, &mut self.buf);
        }
        self.buf.truncate(start + captured as usize);
        self.packets += 1;
        if let Some(sink) = self.sink.as_mut() {
            sink.put(&self.buf);
            self.buf.clear();
        }
    }

    /// The IPv4 header with total length `size` (the packet's) and `dscp` in the TOS byte's
    /// upper six bits.
    fn write_ipv4(&mut self, pkt: &Packet, size: u16, dscp: u8) {
        let mut h = ipv4_header(pkt.src, pkt.dst, size, pkt.uid, pkt.proto, dscp | pkt.ecn & 0b11);
        let f = pkt.frag;
        if f.dont || f.is_fragment() {
            // Flags and offset in 8-byte units (an unaligned offset is rounded down: the
            // email's arithmetic has no wire form).
            let word = (f.dont as u16) << 14 | (f.more as u16) << 13 | (f.offset / 8);
            h[6..8].copy_from_slice(&word.to_be_bytes());
            h[10..12].copy_from_slice(&[0, 0]);
            let csum = ipv4_checksum(&h);
            h[10..12].copy_from_slice(&csum.to_be_bytes());
        }
        self.buf.extend_from_slice(&h);
    }

    /// RFC 792 Source Quench: type, code, checksum, unused, quoted IP header + 8 data bytes.
    fn write_icmp(&mut self, pkt: &Packet, sender_node: NodeId) {
        let q = icmp::quoted(pkt);
        let mut m = Vec::with_capacity(pkt.payload as usize);
        m.extend_from_slice(&[pkt.flags, 0, 0, 0, 0, 0, 0, 0]);
        m.extend_from_slice(&ipv4_header(q.src, q.dst, q.size, q.uid, q.proto, 0));
        let (sport, dport) = ports(pkt.flow, q.src, sender_node);
        m.extend_from_slice(&sport.to_be_bytes());
        m.extend_from_slice(&dport.to_be_bytes());
        match q.proto {
            Proto::Tcp => {
                m.extend_from_slice(&initial_sequence(pkt.flow, q.src).wrapping_add(q.seq as u32).to_be_bytes())
            }
            _ => {
                m.extend_from_slice(&(q.size - IP_HEADER as u16).to_be_bytes());
                m.extend_from_slice(&[0, 0]);
            }
        }
        let csum = ipv4_checksum(&m);
        m[2..4].copy_from_slice(&csum.to_be_bytes());
        self.buf.extend_from_slice(&m);
    }

    /// Ports: the data sender (`sender_node`) uses an ephemeral port, the receiver
    /// RECEIVER_PORT; each side's sequence numbers start at its own ISN. `syn`: the options of
    /// a SYN or SYN-ACK; `mptcp`: a multipath subflow's option, last; `window_shift`: the
    /// window field's scale after the handshake.
    fn write_tcp(
        &mut self,
        pkt: &Packet,
        sender_node: NodeId,
        syn: Option<SynOptions>,
        mptcp: Option<Carried>,
        window_shift: u8,
    ) {
        let (sport, dport, seq, ack) = tcp_numbers(pkt, sender_node, mptcp.is_some());
        let options = tcp_option_bytes(pkt, syn, mptcp);
        let mut h = [0u8; TCP_HEADER as usize];
        h[0..2].copy_from_slice(&sport.to_be_bytes());
        h[2..4].copy_from_slice(&dport.to_be_bytes());
        h[4..8].copy_from_slice(&seq.to_be_bytes());
        h[8..12].copy_from_slice(&ack.to_be_bytes());
        h[12] = (((TCP_HEADER + options) / 4) as u8) << 4;
        h[13] = pkt.flags;
        h[14..16].copy_from_slice(&((pkt.window >> window_shift).min(u16::MAX as u32) as u16).to_be_bytes());
        self.buf.extend_from_slice(&h);
        match syn {
            Some(options) => self.write_syn_options(pkt, options),
            None => self.write_established_options(pkt, mptcp.is_some()),
        }
        if let Some(carried) = mptcp {
            let from_sender = pkt.src == sender_node;
            let receiver = if from_sender { pkt.dst } else { pkt.src };
            pcap_mptcp::write(&mut self.buf, pkt, carried, &pcap_mptcp::Ends { sender: sender_node, receiver });
        }
    }

    /// The timestamp option and SACK blocks of a segment after the handshake.
    fn write_established_options(&mut self, pkt: &Packet, subflow: bool) {
        if pkt.ts_on {
            // RFC 7323 section 3 (appendix A's layout, Linux's): NOP, NOP, kind 8, length 10,
            // TSval (the send time on the timestamp clock), TSecr.
            self.buf.extend_from_slice(&[TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMP, TCP_OPT_TIMESTAMP_LEN]);
            self.buf.extend_from_slice(&ts_clock(pkt.sent_at).to_be_bytes());
            self.buf.extend_from_slice(&pkt.ts_ecr.to_be_bytes());
        }
        let sack_bytes = pkt.sack.option_bytes();
        if sack_bytes > 0 {
            // RFC 2018: NOP, NOP, kind 5, length, then left/right edges in the sender's space.
            self.buf.extend_from_slice(&[TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_SACK, (sack_bytes - 2) as u8]);
            let isn = subflow_isn(pkt.flow, pkt.dst, pkt, subflow);
            for (start, end) in pkt.sack.ranges(pkt.ack) {
                self.buf.extend_from_slice(&isn.wrapping_add(start as u32).to_be_bytes());
                self.buf.extend_from_slice(&isn.wrapping_add(end as u32).to_be_bytes());
            }
        }
    }

    /// A SYN's options in the order and alignment of Linux's `tcp_options_write`: MSS;
    /// SACK-permitted and timestamps in one 12-byte run (two NOPs in SACK-permitted's place
    /// without it); SACK-permitted alone after two NOPs; window scale after one NOP.
    fn write_syn_options(&mut self, pkt: &Packet, options: SynOptions) {
        if let Some(mss) = options.mss {
            self.buf.extend_from_slice(&[TCP_OPT_MSS, TCP_OPT_MSS_LEN]);
            self.buf.extend_from_slice(&mss.to_be_bytes());
        }
        let sack_permitted = [TCP_OPT_SACK_PERMITTED, TCP_OPT_SACK_PERMITTED_LEN];
        let lead = if options.sack_permitted { sack_permitted } else { [TCP_OPT_NOP, TCP_OPT_NOP] };
        if options.timestamps {
            self.buf.extend_from_slice(&lead);
            self.buf.extend_from_slice(&[TCP_OPT_TIMESTAMP, TCP_OPT_TIMESTAMP_LEN]);
            self.buf.extend_from_slice(&ts_clock(pkt.sent_at).to_be_bytes());
            self.buf.extend_from_slice(&pkt.ts_ecr.to_be_bytes());
        } else if options.sack_permitted {
            self.buf.extend_from_slice(&[TCP_OPT_NOP, TCP_OPT_NOP]);
            self.buf.extend_from_slice(&sack_permitted);
        }
        if let Some(shift) = options.window_scale {
            self.buf.extend_from_slice(&[TCP_OPT_NOP, TCP_OPT_WINDOW_SCALE, TCP_OPT_WINDOW_SCALE_LEN, shift]);
        }
    }

    fn write_udp(&mut self, pkt: &Packet) {
        let mut h = [0u8; UDP_HEADER as usize];
        h[0..2].copy_from_slice(&sender_port(pkt.flow).to_be_bytes());
        h[2..4].copy_from_slice(&RECEIVER_PORT.to_be_bytes());
        h[4..6].copy_from_slice(&(pkt.size - IP_HEADER as u16).to_be_bytes());
        self.buf.extend_from_slice(&h);
    }
}
