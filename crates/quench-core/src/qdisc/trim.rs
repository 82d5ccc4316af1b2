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

use super::fifo::{validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::{ndp, Packet, Proto};
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
    data: Fifo,
    headers: Fifo,
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
            data: Fifo::new(cfg.data_limit),
            headers: Fifo::new(cfg.header_limit),
            header_weight: cfg.header_weight,
            tail_trim_probability: cfg.tail_trim_probability,
            headers_in_a_row: 0,
            stats: TrimStats::default(),
        })
    }

    pub fn stats(&self) -> TrimStats {
        self.stats
    }

    /// Cut `pkt` to its headers and offer it to the header queue.
    fn trim(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        self.stats.trimmed_packets += 1;
        self.stats.trimmed_bytes += (pkt.size as u32 - ndp::HEADER_BYTES) as u64;
        pkt.size = ndp::HEADER_BYTES as u16;
        pkt.payload = 0;
        pkt.flags |= ndp::TRIMMED;
        cx.note_mark();
        self.enqueue_header(pkt, cx);
    }

    fn enqueue_header(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        if self.headers.has_room(&pkt) {
            self.headers.push(pkt);
        } else {
            self.stats.dropped_packets += 1;
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    /// A data packet that found the data queue full: trim it or the last one queued.
    fn on_full(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let tail_is_ndp = self.data.back().is_some_and(is_trimmable);
        if tail_is_ndp && cx.rng.uniform() < self.tail_trim_probability {
            let last = self.data.remove(self.data.len() - 1).expect("the data queue is full, so not empty");
            if self.data.has_room(&pkt) {
                self.data.push(pkt);
                return self.trim(last, cx);
            }
            // A byte limit the arrival still overflows: put the tail back, cut the arrival.
            self.data.push(last);
        }
        self.trim(pkt, cx);
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

/// An NDP packet with payload: the only kind a trim can shorten.
fn is_trimmable(pkt: &Packet) -> bool {
    pkt.proto == Proto::Ndp && pkt.payload > 0
}

impl Qdisc for Trim {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let header_only = pkt.proto == Proto::Ndp && pkt.payload == 0;
        if header_only {
            return self.enqueue_header(pkt, cx);
        }
        if self.data.has_room(&pkt) {
            return self.data.push(pkt);
        }
        if is_trimmable(&pkt) {
            self.on_full(pkt, cx)
        } else {
            self.stats.dropped_packets += 1;
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx) -> Dequeued {
        let data_waits = !self.data.is_empty();
        let next = match self.next_turn() {
            None => return Dequeued::Empty,
            Some(Turn::Header) => {
                // Count only headers that went ahead of waiting data.
                self.headers_in_a_row = if data_waits { self.headers_in_a_row + 1 } else { 0 };
                self.headers.pop()
            }
            Some(Turn::Data) => {
                self.headers_in_a_row = 0;
                self.data.pop()
            }
        };
        next.map_or(Dequeued::Empty, Dequeued::Packet)
    }

    fn backlog(&self) -> Backlog {
        let (d, h) = (self.data.backlog(), self.headers.backlog());
        Backlog { packets: d.packets + h.packets, bytes: d.bytes + h.bytes }
    }
}

#[cfg(test)]
#[path = "trim_tests.rs"]
mod tests;
