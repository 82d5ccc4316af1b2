//! Packet trimming: NDP's switch queue (Handley et al., "Re-architecting datacenter networks
//! and stacks for low latency and high performance", SIGCOMM 2017; htsim's
//! `CompositeQueue`, sim/compositequeue.cpp). Two FIFOs share the port: a small data queue,
//! and a header queue for everything without payload (NDP's ACKs, NACKs, PULLs and trimmed
//! headers), served with priority by a weighted round robin so that data is never starved.
//!
//! An NDP data packet ([`Proto::Ndp`] with a payload) that finds the data queue full is cut to
//! its headers (payload 0, size [`ndp::HEADER_BYTES`], flag [`ndp::TRIMMED`]) and joins the
//! header queue: the receiver learns at once what it missed, and asks for it again. Which
//! packet is cut: the arrival, or (with probability `tail_trim_probability`, htsim's 0.5) the
//! packet queued last, whose place the arrival then takes; cutting only arrivals would let the
//! phase of competing senders decide who always loses (htsim's `receivePacket`). A packet of
//! any other protocol that finds the data queue full is dropped as drop-tail drops it
//! (`overflow`); a header that finds the header queue full is dropped too (`overflow`):
//! NDP's return-to-sender (the switch bounces the header to the source) is not modelled, so
//! the sender's retransmission timeout recovers that rare loss.
//!
//! Storage: both FIFOs keep their packets in the world's slab (`fifo::SlabFifo`), so a packet
//! is queued, trimmed and sent in the entry it arrived in, and an empty queue with room lets
//! an arrival pass straight to an idle transmitter (`Qdisc::passes_through`).
//!
//! Accounting: a trim is counted as a congestion mark (the links table's `marked_packets`) and
//! in [`TrimStats`]; the bytes cut off leave the link's byte identity, which for a trimming
//! queue reads arrived = departed + dropped + backlog + `TrimStats::trimmed_bytes`.
//!
//! Parameters: `data_limit` — "8p" (default, the paper's 8 full-size packets), or bytes, or
//! both; `header_limit` — default 24000 bytes (htsim's header queue holds twice the data
//! queue's bytes, `2*_maxsize`, and 8 × 1500 × 2 = 24000); `header_weight` — headers served
//! per data packet while both queues wait, default 100000 (htsim's `_ratio_high` = 100000 to
//! `_ratio_low` = 1); `tail_trim_probability` — default 0.5.
//! Must not touch: the link, the world or any endpoint; it reads only NDP's header bits
//! (`packet::ndp`), where a packet's fields mean them.

use super::fifo::{validate_limit, SlabFifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx, SlabEnqueue};
use crate::error::ConfigError;
use crate::packet::{ndp, Packet, Proto};
use crate::slab::EntryId;
use crate::units::{Bytes, Limit};
use serde::{Deserialize, Serialize};

/// The paper's data queue: 8 full-size packets.
pub const DEFAULT_DATA_LIMIT_PACKETS: u64 = 8;
/// htsim's header queue: twice the data queue's bytes (8 packets of 1500 bytes).
pub const DEFAULT_HEADER_LIMIT_BYTES: u64 = 2 * 8 * 1500;
/// htsim's `CompositeQueue` ratio: 100000 headers to 1 data packet while both wait.
pub const DEFAULT_HEADER_WEIGHT: u32 = 100_000;
/// htsim trims the packet queued last instead of the arrival half the time.
pub const DEFAULT_TAIL_TRIM_PROBABILITY: f64 = 0.5;

fn default_data_limit() -> Limit {
    Limit { packets: Some(DEFAULT_DATA_LIMIT_PACKETS), bytes: None }
}

fn default_header_limit() -> Limit {
    Limit { packets: None, bytes: Some(Bytes(DEFAULT_HEADER_LIMIT_BYTES)) }
}

fn default_header_weight() -> u32 {
    DEFAULT_HEADER_WEIGHT
}

fn default_tail_trim_probability() -> f64 {
    DEFAULT_TAIL_TRIM_PROBABILITY
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimConfig {
    #[serde(default = "default_data_limit")]
    pub data_limit: Limit,
    #[serde(default = "default_header_limit")]
    pub header_limit: Limit,
    #[serde(default = "default_header_weight")]
    pub header_weight: u32,
    #[serde(default = "default_tail_trim_probability")]
    pub tail_trim_probability: f64,
}

impl Default for TrimConfig {
    fn default() -> Self {
        TrimConfig {
            data_limit: default_data_limit(),
            header_limit: default_header_limit(),
            header_weight: DEFAULT_HEADER_WEIGHT,
            tail_trim_probability: DEFAULT_TAIL_TRIM_PROBABILITY,
        }
    }
}

/// What the queue did, for inspection and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimStats {
    /// NDP data packets cut to their headers.
    pub trimmed_packets: u64,
    /// Payload bytes cut off (the difference in the link's byte identity).
    pub trimmed_bytes: u64,
    /// Headers and non-NDP packets dropped because their queue was full.
    pub dropped_packets: u64,
}

/// Which queue the next departure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    Header,
    Data,
}

pub struct Trim {
    data: SlabFifo,
    headers: SlabFifo,
    header_weight: u32,
    tail_trim_probability: f64,
    /// Headers served in a row while data waited: at `header_weight`, data's turn.
    headers_in_a_row: u32,
    stats: TrimStats,
}

impl Trim {
    pub fn new(cfg: &TrimConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.data_limit, "data_limit")?;
        validate_limit(&cfg.header_limit, "header_limit")?;
        if cfg.header_limit.bytes.is_some_and(|b| b.0 < ndp::HEADER_BYTES as u64) {
            let why = format!("must hold at least one {}-byte header", ndp::HEADER_BYTES);
            return Err(ConfigError::new("header_limit", why));
        }
        if cfg.header_weight == 0 {
            return Err(ConfigError::new("header_weight", "must be at least 1 (headers served per data packet)"));
        }
        if !(0.0..=1.0).contains(&cfg.tail_trim_probability) {
            return Err(ConfigError::new("tail_trim_probability", "must be a probability in [0, 1]"));
        }
        Ok(Trim {
            data: SlabFifo::new(cfg.data_limit),
            headers: SlabFifo::new(cfg.header_limit),
            header_weight: cfg.header_weight,
            tail_trim_probability: cfg.tail_trim_probability,
            headers_in_a_row: 0,
            stats: TrimStats::default(),
        })
    }

    pub fn stats(&self) -> TrimStats {
        self.stats
    }

    /// Cut the packet held in entry `id` to its headers and offer it to the header queue.
    fn trim(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let pkt = cx.slab.held_mut(id);
        self.stats.trimmed_packets += 1;
        self.stats.trimmed_bytes += (pkt.size as u32 - ndp::HEADER_BYTES) as u64;
        pkt.size = ndp::HEADER_BYTES as u16;
        pkt.payload = 0;
        pkt.flags |= ndp::TRIMMED;
        cx.note_mark();
        self.enqueue_header(id, cx);
    }

    fn enqueue_header(&mut self, id: EntryId, cx: &mut QdiscCx) {
        if self.headers.has_room(cx.slab.held(id)) {
            self.headers.append(cx.slab, id);
        } else {
            self.stats.dropped_packets += 1;
            let pkt = cx.slab.release(id);
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    /// A data packet (held in entry `id`) that found the data queue full: trim it or the last
    /// one queued, whose place it then takes.
    fn on_full(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let tail_is_ndp = self.data.back(cx.slab).is_some_and(is_trimmable);
        // A byte limit the arrival would still overflow in the tail's place: cut the arrival.
        if tail_is_ndp
            && cx.rng.uniform() < self.tail_trim_probability
            && self.data.has_room_in_place_of_back(cx.slab, cx.slab.held(id))
        {
            // `id` now holds the packet that was queued last.
            self.data.replace_back(cx.slab, id);
        }
        self.trim(id, cx);
    }

    fn next_turn(&self) -> Option<Turn> {
        match (self.headers.is_empty(), self.data.is_empty()) {
            (true, true) => None,
            (false, true) => Some(Turn::Header),
            (true, false) => Some(Turn::Data),
            (false, false) if self.headers_in_a_row >= self.header_weight => Some(Turn::Data),
            (false, false) => Some(Turn::Header),
        }
    }
}

/// An NDP packet without payload (a header, trimmed or control): the header queue's.
fn is_header_only(pkt: &Packet) -> bool {
    pkt.proto == Proto::Ndp && pkt.payload == 0
}

/// An NDP packet with payload: the only kind a trim can shorten.
fn is_trimmable(pkt: &Packet) -> bool {
    pkt.proto == Proto::Ndp && pkt.payload > 0
}

impl Qdisc for Trim {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let id = cx.slab.hold(pkt);
        self.enqueue_held(id, cx);
    }

    /// The head of the queue whose turn it is leaves in its entry.
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        let data_waits = !self.data.is_empty();
        let next = match self.next_turn() {
            None => return Dequeued::Empty,
            Some(Turn::Header) => {
                // Count only headers that went ahead of waiting data.
                self.headers_in_a_row = if data_waits { self.headers_in_a_row + 1 } else { 0 };
                self.headers.take(cx.slab)
            }
            Some(Turn::Data) => {
                self.headers_in_a_row = 0;
                self.data.take(cx.slab)
            }
        };
        next.map_or(Dequeued::Empty, Dequeued::Held)
    }

    fn backlog(&self) -> Backlog {
        self.data.backlog() + self.headers.backlog()
    }

    /// Both queues empty and room for `pkt` in its own: an enqueue then a dequeue would hand
    /// `pkt` straight back. They leave no state behind either: the count of headers served
    /// ahead of data is zero whenever both queues are empty (the dequeue that emptied them
    /// served data, or a header with no data waiting, and each resets it), and an arrival
    /// with room draws nothing from the random stream.
    fn passes_through(&self, pkt: &Packet) -> bool {
        let queue = if is_header_only(pkt) { &self.headers } else { &self.data };
        let empty = self.data.is_empty() && self.headers.is_empty();
        debug_assert!(!empty || self.headers_in_a_row == 0);
        empty && queue.has_room(pkt)
    }

    fn dequeue_is_inert(&self) -> bool {
        self.data.is_empty() && self.headers.is_empty()
    }

    /// A dequeue only serves the round robin's turn: trims and drops happen at enqueue.
    fn dequeue_is_plain(&self) -> bool {
        true
    }
}

impl SlabEnqueue for Trim {
    /// The entry joins its queue as it is (no copy); a trim cuts the packet in its entry.
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let pkt = cx.slab.held(id);
        if is_header_only(pkt) {
            return self.enqueue_header(id, cx);
        }
        if self.data.has_room(pkt) {
            return self.data.append(cx.slab, id);
        }
        if is_trimmable(pkt) {
            self.on_full(id, cx)
        } else {
            self.stats.dropped_packets += 1;
            let pkt = cx.slab.release(id);
            cx.drop(pkt, DropReason::Overflow);
        }
    }
}

#[cfg(test)]
#[path = "trim_tests.rs"]
mod tests;
