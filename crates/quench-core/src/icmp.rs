//! ICMP Source Quench (RFC 792): type 4, code 0, a checksum, 4 unused bytes, then the
//! offending datagram's IP header and its first 8 data bytes — 36 bytes of ICMP in a 56-byte
//! IP datagram. It is routed back to the offending datagram's source like any packet, so it
//! can be queued, delayed and dropped.
//!
//! quench packets carry no payload, so the quoted datagram travels in the packet's fields:
//! `flow` and `seq` are the offending datagram's, `window` holds its destination node, and
//! `ack` packs its uid, size and protocol (see [`quoted`]); the pcap writer rebuilds the quoted
//! header from them.
//! Owns the encoding and decoding of ICMP messages only: it builds the packet and reads it back,
//! and it never sends, queues or routes one (the qdisc that originates it emits it through its
//! `QdiscCx`, and the world routes it).

use crate::packet::{AgentId, NodeId, Packet, Proto, IP_HEADER};

/// RFC 792 message type of Source Quench.
pub const SOURCE_QUENCH_TYPE: u8 = 4;
/// Type, code, checksum and 4 unused bytes.
pub const ICMP_HEADER: u16 = 8;
/// RFC 792: "Internet Header + 64 bits of Original Data Datagram".
pub const QUOTED_DATA: u16 = 8;
/// IP datagram size of a Source Quench: 20 + 8 + 20 + 8 = 56 bytes.
pub const SOURCE_QUENCH_SIZE: u16 = IP_HEADER as u16 + ICMP_HEADER + IP_HEADER as u16 + QUOTED_DATA;

/// The datagram an ICMP error quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quoted {
    pub src: NodeId,
    pub dst: NodeId,
    pub uid: u32,
    pub size: u16,
    pub proto: Proto,
    pub seq: u64,
}

/// A Source Quench from `gateway` about `offending`, addressed to its source.
pub fn source_quench(gateway: NodeId, offending: &Packet) -> Packet {
    let packed = offending.uid as u64 | (offending.size as u64) << 32 | (offending.proto as u64) << 48;
    Packet {
        uid: 0,
        seq: offending.seq,
        ack: packed,
        sent_at: Default::default(),
        enqueued_at: Default::default(),
        src: gateway,
        dst: offending.src,
        flow: offending.flow,
        // The host's ICMP layer demultiplexes by the quoted header, not by an endpoint.
        dst_agent: AgentId(u32::MAX),
        size: SOURCE_QUENCH_SIZE,
        payload: SOURCE_QUENCH_SIZE - IP_HEADER as u16,
        window: offending.dst.0,
        proto: Proto::Icmp,
        flags: SOURCE_QUENCH_TYPE,
        ecn: 0,
        sack: Default::default(),
        frag: Default::default(),
        ts_on: false,
        ts_ecr: 0,
    }
}

/// The datagram an ICMP error packet quotes.
pub fn quoted(icmp: &Packet) -> Quoted {
    let proto = match (icmp.ack >> 48) as u8 {
        6 => Proto::Tcp,
        17 => Proto::Udp,
        _ => Proto::Icmp,
    };
    Quoted {
        src: icmp.dst,
        dst: NodeId(icmp.window),
        uid: icmp.ack as u32,
        size: (icmp.ack >> 32) as u16,
        proto,
        seq: icmp.seq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::harness::packet;

    #[test]
    fn quotes_the_offending_datagram_exactly() {
        let mut p = packet(77_000, 3, 552);
        p.proto = Proto::Tcp;
        p.src = NodeId(0);
        p.dst = NodeId(2);
        p.seq = 123_456;
        let sq = source_quench(NodeId(1), &p);
        assert_eq!((sq.src, sq.dst, sq.size, sq.flags), (NodeId(1), NodeId(0), 56, 4));
        let q = quoted(&sq);
        assert_eq!(
            q,
            Quoted { src: NodeId(0), dst: NodeId(2), uid: 77_000, size: 552, proto: Proto::Tcp, seq: 123_456 }
        );
    }
}
