//! How a capture writes a Multipath TCP subflow's packets (RFC 8684): each subflow its own
//! port pair and initial sequence number, and the option each segment carries
//! (`packet::mptcp_option`) in RFC 8684 section 3's layout, at the end of the TCP options as
//! Linux's `tcp_options_write` puts it.
//!
//! - MP_CAPABLE v1 (HMAC-SHA256 flag set, no checksum): on the first subflow's SYN without a
//!   key, on its SYN-ACK with the answering end's key.
//! - MP_JOIN: on a further subflow's SYN the receiver's token and the sender's nonce, on its
//!   SYN-ACK a truncated HMAC and the answering end's nonce; address ID 0, no backup flag.
//! - DSS: on a data segment a 32-bit DATA_ACK and a mapping (64-bit DSN, the subflow sequence
//!   number relative to its SYN, the data-level length) then two NOPs; on a segment without
//!   data the DATA_ACK alone, 32 bits from the data sender and 64 from the receiver.
//!
//! The data sequence numbers start at each end's IDSN + 1. Keys, tokens, nonces, IDSNs and
//! HMACs are fixed hashes of the flow and the node, not RFC 8684's SHA-256 derivations: a
//! dissector that derives the IDSN from the key (Wireshark's relative data sequence numbers)
//! shows absolute ones instead.
//! Owns these rules only; `pcap.rs` calls them for a flow whose handshake says `mptcp`.

use crate::packet::mptcp_option::{self, Carried};
use crate::packet::{subflow, FlowId, NodeId, Packet};
use crate::rng::mix64 as mix;

/// RFC 8684 section 3.1: MP_CAPABLE's version 1, in the subtype byte's low nibble.
const MPTCP_VERSION: u8 = 1;
/// MP_CAPABLE's flags byte: H, HMAC-SHA256 (RFC 8684 section 3.1; Linux's
/// `MPTCP_CAP_HMAC_SHA256`), the one algorithm defined.
const CAPABLE_FLAGS: u8 = 0x01;
/// DSS flags (RFC 8684 section 3.3): A, DATA_ACK present; a, DATA_ACK is 8 octets; M, mapping
/// present; m, DSN is 8 octets.
const DSS_DATA_ACK: u8 = 0x01;
const DSS_DATA_ACK_64: u8 = 0x02;
const DSS_MAPPING: u8 = 0x04;
const DSS_DSN_64: u8 = 0x08;
const NOP: u8 = 1;
/// Subflow i's sender port is `i` strides of the ephemeral range past the first's; another
/// flow shares it only if its id differs by a multiple of the stride.
const SUBFLOW_PORT_STRIDE: u64 = 997;
/// Golden-ratio increments apart per subflow (as SplitMix64 steps its state), 32 bits of it.
const SUBFLOW_ISN_STEP: u32 = (crate::rng::GOLDEN_GAMMA >> 32) as u32;
/// "MPTCP" in ASCII, folded into the keys' hash so that they differ from the ISNs' of the same
/// flow and node (`pcap::initial_sequence`).
const KEY_SALT: u64 = 0x4D50_5443_5000_0000;

/// The subflow a packet of a multipath connection belongs to.
pub(super) fn index(pkt: &Packet) -> u64 {
    subflow::index(pkt.seq)
}

/// Subflow `index`'s sender port, from the connection's first subflow's `port` within the
/// ephemeral range `[base, base + span)`.
pub(super) fn sender_port(port: u16, index: u64, base: u32, span: u32) -> u16 {
    let offset = (port as u64 - base as u64 + index * SUBFLOW_PORT_STRIDE) % span as u64;
    (base as u64 + offset) as u16
}

/// Subflow `index`'s initial sequence number, from the first subflow's.
pub(super) fn initial_sequence(first: u32, index: u64) -> u32 {
    first.wrapping_add((index as u32).wrapping_mul(SUBFLOW_ISN_STEP))
}

/// The key of the end of `flow` on `node`, and what is derived from it.
fn key(flow: FlowId, node: NodeId) -> u64 {
    mix((flow.0 as u64) << 32 ^ node.0 as u64 ^ KEY_SALT)
}
fn idsn(flow: FlowId, node: NodeId) -> u64 {
    mix(key(flow, node))
}
fn token(flow: FlowId, node: NodeId) -> u32 {
    (mix(key(flow, node) ^ 1) >> 32) as u32
}
fn nonce(flow: FlowId, node: NodeId, index: u64) -> u32 {
    mix(key(flow, node) ^ index << 8 ^ 2) as u32
}

/// The two ends of a packet's connection: the data sender's node and the receiver's.
pub(super) struct Ends {
    pub sender: NodeId,
    pub receiver: NodeId,
}

/// The option `pkt` carries, written at the end of its TCP options (`carried.bytes()` bytes).
pub(super) fn write(buf: &mut Vec<u8>, pkt: &Packet, carried: Carried, ends: &Ends) {
    let start = buf.len();
    let (len, subtype) = (carried.bytes(), |s: u8| s << 4);
    let flow = pkt.flow;
    let i = index(pkt);
    let data_start = |node| idsn(flow, node).wrapping_add(1);
    match carried {
        Carried::CapableSyn => {
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::MP_CAPABLE) | MPTCP_VERSION]);
            buf.push(CAPABLE_FLAGS);
        }
        Carried::CapableSynAck => {
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::MP_CAPABLE) | MPTCP_VERSION]);
            buf.push(CAPABLE_FLAGS);
            buf.extend_from_slice(&key(flow, ends.receiver).to_be_bytes());
        }
        Carried::JoinSyn => {
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::MP_JOIN), 0]);
            buf.extend_from_slice(&token(flow, ends.receiver).to_be_bytes());
            buf.extend_from_slice(&nonce(flow, ends.sender, i).to_be_bytes());
        }
        Carried::JoinSynAck => {
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::MP_JOIN), 0]);
            let hmac = mix(key(flow, ends.receiver) ^ key(flow, ends.sender) ^ i);
            buf.extend_from_slice(&hmac.to_be_bytes());
            buf.extend_from_slice(&nonce(flow, ends.receiver, i).to_be_bytes());
        }
        Carried::DssData => {
            // Kind, length 22 (the option without its padding), subtype, flags.
            let flags = DSS_DATA_ACK | DSS_MAPPING | DSS_DSN_64;
            buf.extend_from_slice(&[mptcp_option::KIND, len - 2, subtype(mptcp_option::DSS), flags]);
            buf.extend_from_slice(&(data_start(ends.receiver) as u32).to_be_bytes());
            // The segment's data sequence number rides in its ACK field (`transport/mptcp.rs`).
            buf.extend_from_slice(&data_start(ends.sender).wrapping_add(pkt.ack).to_be_bytes());
            buf.extend_from_slice(&((pkt.seq & subflow::SEQ_MASK) as u32).to_be_bytes());
            buf.extend_from_slice(&pkt.payload.to_be_bytes());
            buf.extend_from_slice(&[NOP, NOP]);
        }
        Carried::DssAck32 => {
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::DSS), DSS_DATA_ACK]);
            buf.extend_from_slice(&(data_start(ends.receiver) as u32).to_be_bytes());
        }
        Carried::DssAck64 => {
            let flags = DSS_DATA_ACK | DSS_DATA_ACK_64;
            buf.extend_from_slice(&[mptcp_option::KIND, len, subtype(mptcp_option::DSS), flags]);
            // The receiver's DATA_ACK rides in its sequence field (`transport/mptcp.rs`).
            let data_ack = data_start(ends.sender).wrapping_add(pkt.seq & subflow::SEQ_MASK);
            buf.extend_from_slice(&data_ack.to_be_bytes());
        }
    }
    debug_assert_eq!(buf.len() - start, carried.bytes() as usize, "{carried:?}");
}
