//! The packet: a plain value moved through queues and links. It carries no payload bytes; the
//! pcap writer synthesizes headers from these fields. Sizes are IP datagram sizes (headers
//! included), since that is what occupies buffers and wire time.
//!
//! A packet knows nothing above itself: it depends on the units only, and every component
//! (links, disciplines, transports, the pcap writer) reads it without it reading them.

use crate::units::{Bytes, Dur, Time};

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(/// A host or router.
    NodeId);
id_type!(/// A unidirectional link.
    LinkId);
id_type!(/// A transport endpoint (TCP sender, TCP receiver, UDP source or sink).
    AgentId);
id_type!(/// A flow as the user declared it (one TCP connection or one UDP stream).
    FlowId);

/// IPv4 protocol numbers (RFC 790).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Proto {
    Icmp = 1,
    Tcp = 6,
    Udp = 17,
    /// RFC 3692's number for experiments: the router-assisted rate transport
    /// (`transport/assisted.rs`), whose header is shaped like TCP's.
    Assisted = 253,
    /// RFC 3692's other number for experiments: NDP (`transport/ndp.rs`), whose packets a
    /// trimming queue (`qdisc/trim.rs`) may cut to their headers.
    Ndp = 254,
}

/// IPv4 header without options (RFC 791).
pub const IP_HEADER: u32 = 20;
/// TCP header without options (RFC 793).
pub const TCP_HEADER: u32 = 20;
/// UDP header (RFC 768).
pub const UDP_HEADER: u32 = 8;
/// The timestamp option on the wire: kind 8, length 10, TSval and TSecr (RFC 7323 section 3),
/// aligned by two NOPs as RFC 7323 appendix A recommends and Linux sends it.
pub const TCP_TIMESTAMP_OPTION: u32 = 12;
/// The most option bytes a TCP header holds: a data offset of 15 words (RFC 9293 section 3.1),
/// Linux's `MAX_TCP_OPTION_SPACE`.
pub const TCP_OPTION_SPACE: u32 = 40;
/// The options a TCP SYN or SYN-ACK carries, in the layout of Linux's `tcp_options_write`
/// (net/ipv4/tcp_output.c), each a multiple of 4 bytes: MSS (kind 2, length 4); the timestamp
/// option (kind 8, length 10) after SACK-permitted (kind 4, length 2) when both are sent, else
/// after two NOPs; SACK-permitted alone after two NOPs; window scale (kind 3, length 3) after
/// one NOP. ns-3 pads the same options to the same byte counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    /// The MSS this end announces (RFC 9293 section 3.7.1), if it sends the option.
    pub mss: Option<u16>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    /// The window-scale shift this end announces (RFC 7323 section 2), if it sends the option.
    pub window_scale: Option<u8>,
}

impl SynOptions {
    /// Option bytes in the TCP header.
    pub const fn bytes(self) -> u32 {
        let mss = if self.mss.is_some() { 4 } else { 0 };
        let timestamps_or_sack = if self.timestamps {
            TCP_TIMESTAMP_OPTION
        } else if self.sack_permitted {
            4
        } else {
            0
        };
        let window_scale = if self.window_scale.is_some() { 4 } else { 0 };
        mss + timestamps_or_sack + window_scale
    }
}

/// The options of a connection's two SYNs: what its capture writes on them and how it scales
/// the window field after them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    /// The SYN, from the end that opens the connection (the data sender).
    pub syn: SynOptions,
    pub syn_ack: SynOptions,
    /// A Multipath TCP connection's subflows: its packets carry the options of
    /// [`mptcp_option`] beside these.
    pub mptcp: bool,
}

impl Handshake {
    /// The shift of the window field on a later segment from the opening end (`from_opener`)
    /// or the other: its own announced shift when both SYNs carried the option, else 0 (RFC
    /// 7323 section 2.2).
    pub fn window_shift(&self, from_opener: bool) -> u8 {
        match (self.syn.window_scale, self.syn_ack.window_scale) {
            (Some(opener), Some(answer)) => {
                if from_opener {
                    opener
                } else {
                    answer
                }
            }
            _ => 0,
        }
    }
}

/// Ticks of the timestamp clock per second: microseconds, as Linux's `tcp_usec_ts` option
/// (classic Linux ticks in milliseconds); RFC 7323 section 5.4 asks for 1 ms to 1 s.
pub const TS_CLOCK_HZ: u64 = 1_000_000;

/// A time on the timestamp clock (wraps after 2³² ticks, 71 minutes).
pub fn ts_clock(t: crate::units::Time) -> u32 {
    (t.0 / (crate::units::NS_PER_SEC / TS_CLOCK_HZ)) as u32
}

/// TCP flag bits as on the wire (RFC 793, RFC 3168 for ECE/CWR).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// NDP's header (Handley et al., "Re-architecting datacenter networks and stacks for low
/// latency and high performance", SIGCOMM 2017): the packet kinds and the bit a trimming
/// switch sets, and the size of a packet without payload. Shared by the transport
/// (`transport/ndp.rs`) and the trimming queue (`qdisc/trim.rs`), which reads nothing else of it.
pub mod ndp {
    /// A data packet (its payload may have been trimmed: [`TRIMMED`]).
    pub const DATA: u8 = 0x01;
    /// The receiver got a data packet whole: `seq` names it, `ack` is the cumulative ACK.
    pub const ACK: u8 = 0x02;
    /// The receiver got a trimmed header: `seq` names the packet to send again.
    pub const NACK: u8 = 0x04;
    /// The receiver asks for more: `seq` is the flow's pull counter (cumulative, so one pull
    /// lost is made up by the next).
    pub const PULL: u8 = 0x08;
    /// Set by a trimming queue that cut the payload off a data packet.
    pub const TRIMMED: u8 = 0x10;
    /// Bytes of a packet without payload (IP and NDP headers): htsim's `NdpPacket::ACKSIZE`
    /// (sim/ndppacket.h), the size of every ACK, NACK, PULL and trimmed header.
    pub const HEADER_BYTES: u32 = 64;
}

/// ECN codepoints of the IP header's two low TOS bits (RFC 3168 section 5). ECT(1) is the
/// L4S identifier (RFC 9331 section 4.1); an RFC 3168 AQM treats it as ECT(0) (any ECT
/// codepoint may be marked CE).
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;

    /// RFC 9331 section 5.1 / RFC 9332 section 2.3: ECT(1) and CE (the codepoints with the
    /// low bit set) are classified into the L4S queue; Not-ECT and ECT(0) are Classic.
    pub fn is_l4s(codepoint: u8) -> bool {
        codepoint & 0b01 == 0b01
    }
}

/// Multipath TCP subflows (RFC 8684): a subflow's sequence numbers, both directions, carry its
/// index in their top byte, the rest of the number being the subflow's own sequence space
/// (`transport/mptcp.rs` adds and strips it). The index stands for the subflow's distinct
/// port pair, so that ECMP's five-tuple hash (`routing/multipath.rs`) places each subflow on a
/// path of its own; every other packet's top byte is 0 (2⁵⁶ bytes are never sent in a run),
/// so its hash is what it was without subflows.
pub mod subflow {
    /// The bit where a subflow's index starts in a sequence number.
    pub const SEQ_SHIFT: u32 = 56;
    /// The bits below it: the number in the subflow's own sequence space.
    pub const SEQ_MASK: u64 = (1 << SEQ_SHIFT) - 1;

    /// The index a packet's sequence number carries (0 for every packet but a subflow's).
    #[inline]
    pub fn index(seq: u64) -> u64 {
        seq >> SEQ_SHIFT
    }
}

/// The Multipath TCP options (RFC 8684 section 3) on a subflow's packets, in bytes as Linux's
/// MPTCP sends them (net/mptcp/options.c with its defaults: no DSS checksum, 64-bit data
/// sequence numbers on every mapping, a DATA_ACK of 64 bits once the peer's DSNs are 64-bit,
/// of 32 before; each option padded to 4 bytes). Counted in the packet's size by
/// `transport::tcp::Connection::segment`, written by the capture.
pub mod mptcp_option {
    /// Option kind 30 (RFC 8684 section 8).
    pub const KIND: u8 = 30;
    /// Subtypes (RFC 8684 section 3, table 2).
    pub const MP_CAPABLE: u8 = 0x0;
    pub const MP_JOIN: u8 = 0x1;
    pub const DSS: u8 = 0x2;
    /// `TCPOLEN_MPTCP_MPC_SYN`: MP_CAPABLE v1 on the first subflow's SYN, no key.
    pub const CAPABLE_SYN: u8 = 4;
    /// `TCPOLEN_MPTCP_MPC_SYNACK`: MP_CAPABLE on its SYN-ACK, the answering end's key.
    pub const CAPABLE_SYN_ACK: u8 = 12;
    /// `TCPOLEN_MPTCP_MPJ_SYN`: MP_JOIN on a further subflow's SYN (token, nonce).
    pub const JOIN_SYN: u8 = 12;
    /// `TCPOLEN_MPTCP_MPJ_SYNACK`: MP_JOIN on its SYN-ACK (truncated HMAC, nonce).
    pub const JOIN_SYN_ACK: u8 = 16;
    /// A data segment's DSS: `TCPOLEN_MPTCP_DSS_BASE` + `_MAP64` (DSN 8, subflow sequence 4,
    /// data-level length 2) + `_ACK32` = 22, padded to 24. The data sender hears no 64-bit DSN
    /// from a peer that sends no data, so its DATA_ACK stays 32 bits (`use_64bit_ack`).
    pub const DSS_DATA: u8 = 24;
    /// The data sender's segment without data: `TCPOLEN_MPTCP_DSS_BASE` + `_ACK32`.
    pub const DSS_ACK32: u8 = 8;
    /// The data receiver's ACK: `TCPOLEN_MPTCP_DSS_BASE` + `_ACK64` (it has heard 64-bit DSNs).
    pub const DSS_ACK64: u8 = 12;

    /// Which option a subflow's segment carries.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Carried {
        CapableSyn,
        CapableSynAck,
        JoinSyn,
        JoinSynAck,
        /// A DSS with a mapping and a 32-bit DATA_ACK: the data sender's (in quench's one-way
        /// transfers the receiver sends no data).
        DssData,
        /// A DSS with a DATA_ACK alone, 32 or 64 bits.
        DssAck32,
        DssAck64,
    }

    impl Carried {
        /// The option on a segment of subflow `index` from the opening end (`from_opener`) or
        /// the other: MP_CAPABLE on the first subflow's SYN and SYN-ACK, MP_JOIN on the
        /// others', a DSS otherwise (with a mapping when it carries data).
        pub fn on(index: u64, from_opener: bool, syn: bool, has_data: bool) -> Carried {
            match (syn, index == 0, from_opener, has_data) {
                (true, true, true, _) => Carried::CapableSyn,
                (true, true, false, _) => Carried::CapableSynAck,
                (true, false, true, _) => Carried::JoinSyn,
                (true, false, false, _) => Carried::JoinSynAck,
                (false, _, _, true) => Carried::DssData,
                (false, _, true, false) => Carried::DssAck32,
                (false, _, false, false) => Carried::DssAck64,
            }
        }

        pub fn bytes(self) -> u8 {
            match self {
                Carried::CapableSyn => CAPABLE_SYN,
                Carried::CapableSynAck => CAPABLE_SYN_ACK,
                Carried::JoinSyn => JOIN_SYN,
                Carried::JoinSynAck => JOIN_SYN_ACK,
                Carried::DssData => DSS_DATA,
                Carried::DssAck32 => DSS_ACK32,
                Carried::DssAck64 => DSS_ACK64,
            }
        }
    }
}

/// The SACK option's two NOPs, kind and length (RFC 2018 section 3, as Linux aligns it).
const SACK_BASE_BYTES: u32 = 4;
/// One block: its left and right edges.
const SACK_BLOCK_BYTES: u32 = 8;

/// SACK blocks an ACK carries (RFC 2018): up to three [start, end) ranges, stored as signed
/// offsets from the ACK number (a D-SACK block, RFC 2883, may lie below it); unused slots are
/// (0, 0). The advertised window, at most 2^30 bytes (RFC 7323 section 2.3), keeps every
/// block within an offset's range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub offsets: [(i32, i32); SackBlocks::MAX],
}

impl SackBlocks {
    /// Three blocks fit beside a timestamp option in the 40 option bytes (RFC 2018 section 3).
    pub const MAX: usize = 3;

    pub fn count(&self) -> usize {
        self.offsets.iter().take_while(|(s, e)| e > s).count()
    }

    /// The blocks as absolute sequence ranges.
    pub fn ranges(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let at = move |off: i32| ack.wrapping_add_signed(off as i64);
        self.offsets.iter().take_while(|(s, e)| e > s).map(move |&(s, e)| (at(s), at(e)))
    }

    /// How many blocks fit in `room` option bytes: two NOPs, kind and length (4 bytes), then 8
    /// per block, at most [`SackBlocks::MAX`] (`TCPOLEN_SACK_BASE_ALIGNED`,
    /// `TCPOLEN_SACK_PERBLOCK`).
    pub fn fitting(room: u32) -> usize {
        (room.saturating_sub(SACK_BASE_BYTES) / SACK_BLOCK_BYTES).min(SackBlocks::MAX as u32) as usize
    }

    /// TCP option bytes: two NOPs, kind, length, 8 bytes per block.
    pub fn option_bytes(&self) -> u32 {
        match self.count() {
            0 => 0,
            n => SACK_BASE_BYTES + SACK_BLOCK_BYTES * n as u32,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique within a run (wraps after 2^32 packets); the low 16 bits are the IP identification.
    pub uid: u32,
    /// TCP: sequence number of the first byte (SYN and FIN occupy one). UDP: datagram number.
    pub seq: u64,
    /// TCP: cumulative acknowledgement (next byte expected).
    pub ack: u64,
    /// When the transport created the packet (for one-way delay).
    pub sent_at: Time,
    /// Stamped by the link when the packet enters a queue (for sojourn time).
    pub enqueued_at: Time,
    pub src: NodeId,
    pub dst: NodeId,
    pub flow: FlowId,
    /// The endpoint that consumes the packet at `dst` (stands for the port demultiplexer).
    pub dst_agent: AgentId,
    /// TCP advertised receive window in bytes.
    pub window: u32,
    /// IP total length in bytes (16 bits in IPv4).
    pub size: u16,
    /// Transport payload in bytes.
    pub payload: u16,
    pub proto: Proto,
    pub flags: u8,
    pub ecn: u8,
    /// TCP SACK blocks (empty unless the connection uses SACK).
    pub sack: SackBlocks,
    /// The TCP timestamp option (RFC 7323) is present: TSval is `sent_at` on the
    /// microsecond clock ([`ts_clock`]), TSecr is `ts_ecr`.
    pub ts_on: bool,
    /// TSecr: the peer's TSval this segment echoes (RFC 7323 section 4.3). Without the option
    /// (`ts_on` false) an ACK may carry its receiver's ACK delay here instead, in nanoseconds
    /// ([`Packet::set_ack_delay`]): a value inside the simulation, not on the wire.
    pub ts_ecr: u32,
    /// IP fragmentation: offset, more-fragments and don't-fragment.
    pub frag: Fragment,
}

impl Packet {
    /// This packet's identity among the packets in the network: its uid, which the fragments
    /// of one datagram share (as IP's fragments share their datagram's identification, which
    /// reassembly matches), and its fragment offset, which tells them apart.
    pub fn wire_key(&self) -> u64 {
        (self.frag.offset as u64) << 32 | self.uid as u64
    }

    pub fn bytes(&self) -> Bytes {
        Bytes(self.size as u64)
    }
    pub fn has_flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Carry the receiver's ACK delay (QUIC's ACK Delay, RFC 9000 section 13.2.5) in the
    /// unused TSecr slot of an ACK without the timestamp option, saturating at 2³² − 1 ns
    /// (4.3 s, beyond any delayed-ACK timer); with the option the slot is TSecr's and the
    /// delay is not carried. The Packet stays at 96 bytes, and no other flow pays for it.
    pub fn set_ack_delay(&mut self, delay: Dur) {
        if !self.ts_on {
            self.ts_ecr = delay.0.min(u32::MAX as u64) as u32;
        }
    }

    /// The ACK delay [`Packet::set_ack_delay`] stored, if the slot holds one.
    pub fn ack_delay(&self) -> Option<Dur> {
        (!self.ts_on).then_some(Dur(self.ts_ecr as u64))
    }
}

/// IP fragmentation fields of a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fragment {
    /// Byte offset of this piece in the original datagram's IP payload.
    pub offset: u16,
    /// More fragments follow.
    pub more: bool,
    /// Don't fragment.
    pub dont: bool,
}

impl Fragment {
    pub fn is_fragment(&self) -> bool {
        self.more || self.offset > 0
    }
}

/// A multiplicative hash of a uid (Knuth's 2⁶⁴/φ): uids are consecutive counts, which this
/// spreads over the table without SipHash's cost. Lookups only: no order of the table's is
/// ever seen, so a run cannot depend on it.
#[derive(Default)]
pub(crate) struct UidHasher(u64);

impl std::hash::Hasher for UidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    /// A wire key's uid is its low half (see [`Packet::wire_key`]), so the product's low bits,
    /// which pick the bucket, follow the uid as they do for a plain uid.
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// IEEE 802.1Q's priorities (the 3-bit PCP field), 0 to 7.
pub const PRIORITIES: u8 = 8;

/// `priority`, written under `key`, is one of IEEE 802.1Q's.
pub fn check_priority(key: impl Into<String>, priority: u8) -> Result<(), crate::error::ConfigError> {
    if priority < PRIORITIES {
        Ok(())
    } else {
        Err(crate::error::ConfigError::new(key, format!("{priority} is not a priority (0 to 7)")))
    }
}

/// Whether a flow's `priority` is the default, 0 (left out of a written scenario).
pub fn is_default_priority(priority: &u8) -> bool {
    *priority == 0
}

/// The priority (IEEE 802.1p, 0 to 7) each flow's packets travel in, for the switches'
/// traffic classes (`qdisc/classes.rs`) and PFC (`pfc.rs`). Kept per flow rather than in each
/// [`Packet`], which has no byte to spare, and only for flows off the default priority 0: a
/// run whose flows all keep it pays one test per look-up.
#[derive(Default)]
pub struct FlowPriorities {
    by_flow: UidMap<u8>,
}

impl FlowPriorities {
    /// Flow `f`'s packets travel in `priority`.
    pub fn set(&mut self, f: FlowId, priority: u8) {
        if priority != 0 {
            self.by_flow.insert(f.0, priority);
        }
    }

    /// Flow `f` is gone.
    pub fn forget(&mut self, f: FlowId) {
        self.by_flow.remove(&f.0);
    }

    /// The priority of flow `f`'s packets.
    #[inline]
    pub fn of(&self, f: FlowId) -> u8 {
        if self.by_flow.is_empty() {
            0
        } else {
            self.by_flow.get(&f.0).copied().unwrap_or(0)
        }
    }
}

/// A map keyed by flow id (`FlowPriorities`): look-ups only; what rides beside each packet
/// in flight is kept in a [`crate::key_table::KeyTable`].
pub(crate) type UidMap<V> = std::collections::HashMap<u32, V, std::hash::BuildHasherDefault<UidHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        // 64 bytes of header fields, 24 of SACK blocks, 3 of fragmentation, 5 of the timestamp
        // option; see docs/design.md.
        assert!(std::mem::size_of::<Packet>() <= 96, "{}", std::mem::size_of::<Packet>());
    }

    #[test]
    fn sack_blocks_as_ranges_and_option_bytes() {
        let b = SackBlocks { offsets: [(1000, 3000), (5000, 6000), (0, 0)] };
        assert_eq!(b.count(), 2);
        assert_eq!(b.ranges(100).collect::<Vec<_>>(), vec![(1100, 3100), (5100, 6100)]);
        assert_eq!(b.option_bytes(), 20);
        assert_eq!(SackBlocks::default().option_bytes(), 0);
        let dsack = SackBlocks { offsets: [(-1000, 0), (1000, 2000), (0, 0)] };
        assert_eq!(dsack.ranges(5000).collect::<Vec<_>>(), vec![(4000, 5000), (6000, 7000)]);
    }
}
