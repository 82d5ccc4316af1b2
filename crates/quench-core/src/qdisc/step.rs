//! Step marking: a FIFO that sets CE on every ECN-capable arrival that finds more than `K`
//! queued, the switch configuration DCTCP is deployed with (Alizadeh et al., "Data Center TCP
//! (DCTCP)", SIGCOMM 2010, section 3.1: "an arriving packet is marked with the CE codepoint if
//! the queue occupancy is greater than K upon its arrival"; RFC 8257 section 3.1, which
//! configures it as RED with both thresholds at K and max_p 1 on the instantaneous queue).
//!
//! What it owns:
//! - [`StepParams`]: the threshold `K` and the buffer limit, checked once (`K` ≤ `limit`);
//! - the FIFO ([`SlabFifo`], the store drop-tail uses), which decides only "does it fit";
//! - [`StepStats`]: marks, and non-ECT arrivals that found more than `K` (let in unmarked).
//!
//! It keeps no state between packets (no average, no count, no random draw): the decision is a
//! function of the queue the arrival finds. A packet that is not ECN-capable is never dropped
//! early, only when the buffer overflows (as RFC 8257 section 3.1 asks of the marking switch:
//! the threshold signals, the limit drops). A marked packet that does not fit is dropped
//! (`overflow`) and not counted as marked, as RED's `admit` does.
//!
//! Parameters: `threshold` — `K`, "20p" (packets) or "30KB" (bytes); default 65 packets
//! ([`DEFAULT_THRESHOLD_PACKETS`]; DCTCP's K depends on the link: 20 packets at 1 Gb/s, 65 at
//! 10 Gb/s, paper section 3.4); `limit` — as drop-tail's ("100p", "64KB", or both), default
//! 1000 packets.
//! Must not touch: the link, the world or any endpoint; it sees only the packets it is given and
//! its `QdiscCx`.

use super::fifo::{default_limit, validate_limit, SlabFifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx, SlabEnqueue};
use crate::error::ConfigError;
use crate::packet::{ecn, Packet};
use crate::slab::EntryId;
use crate::units::{parse_quantity, Bytes, Limit, Quantity};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// The marking threshold `K`, in the unit it was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepThreshold {
    Packets(u64),
    Bytes(Bytes),
}

impl<'de> Deserialize<'de> for StepThreshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match parse_quantity(&text).map_err(de::Error::custom)? {
            Quantity::Packets(p) => Ok(StepThreshold::Packets(p)),
            Quantity::Size(b) => Ok(StepThreshold::Bytes(b)),
            _ => Err(de::Error::custom(format!("'{text}' is not a threshold (e.g. 20p or 30KB)"))),
        }
    }
}

impl Serialize for StepThreshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            StepThreshold::Packets(p) => s.serialize_str(&format!("{p}p")),
            StepThreshold::Bytes(b) => s.serialize_str(&format!("{}B", b.0)),
        }
    }
}

/// 65 packets: the K of DCTCP's evaluation at 10 Gb/s (Alizadeh et al., SIGCOMM 2010,
/// sections 3.4 and 4), above its guideline K > C·RTT/7 for the 100 µs RTTs of a data centre.
pub const DEFAULT_THRESHOLD_PACKETS: u64 = 65;

fn default_threshold() -> StepThreshold {
    StepThreshold::Packets(DEFAULT_THRESHOLD_PACKETS)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    #[serde(default = "default_threshold")]
    pub threshold: StepThreshold,
    #[serde(default = "default_limit")]
    pub limit: Limit,
}

/// The checked configuration.
#[derive(Clone, Copy, Debug)]
pub struct StepParams {
    pub threshold: StepThreshold,
    pub limit: Limit,
}

impl StepParams {
    /// `K` must be one the buffer can exceed: at most the limit in the same unit.
    pub fn new(cfg: &StepConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        let (k, bound, unit) = match cfg.threshold {
            StepThreshold::Packets(k) => (k, cfg.limit.packets, "packets"),
            StepThreshold::Bytes(k) => (k.0, cfg.limit.bytes.map(|b| b.0), "bytes"),
        };
        match bound {
            Some(limit) if k > limit => Err(ConfigError::new(
                "threshold",
                format!("{k} {unit} is above limit ({limit} {unit}): no arrival could find more than K queued"),
            )),
            None => Err(ConfigError::new(
                "threshold",
                format!("is in {unit} but limit has no {unit} bound: give limit in {unit} too (e.g. \"100p,150KB\")"),
            )),
            Some(_) => Ok(StepParams { threshold: cfg.threshold, limit: cfg.limit }),
        }
    }

    /// Whether an arrival that finds `queued` is above the threshold.
    pub fn above(&self, queued: Backlog) -> bool {
        match self.threshold {
            StepThreshold::Packets(k) => queued.packets > k,
            StepThreshold::Bytes(k) => queued.bytes > k.0,
        }
    }
}

/// What the marker did, for inspection and tests (the links table counts marks and drops).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// ECN-capable arrivals above `K` that were marked CE (and fit).
    pub marked: u64,
    /// Not-ECT arrivals above `K`, admitted unmarked (no early drop).
    pub unmarkable: u64,
}

pub struct Step {
    params: StepParams,
    stats: StepStats,
    fifo: SlabFifo,
}

impl Step {
    pub fn new(cfg: &StepConfig) -> Result<Self, ConfigError> {
        let params = StepParams::new(cfg)?;
        Ok(Step { params, stats: StepStats::default(), fifo: SlabFifo::new(params.limit) })
    }

    pub fn stats(&self) -> StepStats {
        self.stats
    }

    /// Decide on the packet held in `id` (already in the slab): drop it if it does not fit,
    /// otherwise mark it if it finds more than `K` and queue it.
    fn admit(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let pkt = cx.slab.held(id);
        if !self.fifo.has_room(pkt) {
            let pkt = cx.slab.release(id);
            return cx.drop(pkt, DropReason::Overflow);
        }
        if self.params.above(self.fifo.backlog()) {
            if pkt.ecn == ecn::NOT_ECT {
                self.stats.unmarkable += 1;
            } else {
                // An arrival already CE stays CE and is counted again: this queue saw congestion too.
                cx.slab.held_mut(id).ecn = ecn::CE;
                cx.note_mark();
                self.stats.marked += 1;
            }
        }
        self.fifo.append(cx.slab, id);
    }
}

impl SlabEnqueue for Step {
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
        self.admit(id, cx);
    }
}

impl Qdisc for Step {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let id = cx.slab.hold(pkt);
        self.admit(id, cx);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        self.fifo.take(cx.slab).map_or(Dequeued::Empty, Dequeued::Held)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    /// An empty queue is below any `K` (nothing queued is never more than K), so an arrival
    /// that fits would leave unmarked and change nothing: the link may send it straight on.
    fn passes_through(&self, pkt: &Packet) -> bool {
        self.fifo.is_empty() && self.fifo.has_room(pkt)
    }

    fn dequeue_is_inert(&self) -> bool {
        self.fifo.is_empty()
    }
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
