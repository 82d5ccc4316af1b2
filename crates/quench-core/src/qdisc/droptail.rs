//! Drop-tail FIFO: packets leave in arrival order; an arrival that would exceed the limit (in
//! packets, bytes, or both, whichever binds first) is discarded.
//!
//! Parameters: `limit` — "100p", "64KB", or "100p,64KB" for both. Default 1000 packets, the
//! Linux `txqueuelen` default (`fifo::DEFAULT_LIMIT_PACKETS`).
//! Owns its FIFO's order and counts (`SlabFifo`); the packets themselves sit in the slab its
//! `QdiscCx` lends it. Must not touch: the link, the world or any endpoint; it sees only the
//! packets it is given and its `QdiscCx`.

use super::fifo::{default_limit, validate_limit, SlabFifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx, SlabEnqueue};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::slab::EntryId;
use crate::units::Limit;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DropTailConfig {
    pub limit: Limit,
}

impl Default for DropTailConfig {
    fn default() -> Self {
        DropTailConfig { limit: default_limit() }
    }
}

/// A bare FIFO, its packets in the world's slab ([`SlabFifo`]): nothing is decided but "does
/// it fit".
pub struct DropTail {
    fifo: SlabFifo,
}

impl DropTail {
    pub fn new(cfg: &DropTailConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        Ok(DropTail { fifo: SlabFifo::new(cfg.limit) })
    }
}

// Inlined into the link's enqueue and dequeue: drop-tail is nearly every queue of a large
// network, and a call costs more than its few steps.
impl Qdisc for DropTail {
    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        if self.fifo.has_room(&pkt) {
            self.fifo.push(cx.slab, pkt);
        } else {
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    /// The head leaves in its entry, which becomes the transmitter's.
    #[inline(always)]
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        self.fifo.take(cx.slab).map_or(Dequeued::Empty, Dequeued::Held)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    /// Empty and with room for `pkt` (a limit in bytes may refuse it): a FIFO keeps no other state.
    fn passes_through(&self, pkt: &Packet) -> bool {
        self.fifo.is_empty() && self.fifo.has_room(pkt)
    }

    fn dequeue_is_inert(&self) -> bool {
        self.fifo.is_empty()
    }

    /// The head leaves, whenever asked: nothing else happens at a dequeue.
    fn dequeue_is_plain(&self) -> bool {
        true
    }
}

impl SlabEnqueue for DropTail {
    /// The entry joins the list as it is (no copy); an arrival that does not fit is dropped.
    #[inline(always)]
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
        if self.fifo.has_room(cx.slab.held(id)) {
            self.fifo.append(cx.slab, id);
        } else {
            let pkt = cx.slab.release(id);
            cx.drop(pkt, DropReason::Overflow);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Bench;
    use super::super::harness::{check_conservation, packet};
    use super::super::QdiscSpec;
    use super::*;
    use crate::units::{BitRate, Bytes, Time};

    #[test]
    fn packet_limit_drops_the_arrival_that_overflows() {
        let mut q = DropTail::new(&DropTailConfig { limit: Limit { packets: Some(2), bytes: None } }).unwrap();
        let mut bench = Bench::new(1);
        let mut cx = bench.cx(Time::ZERO, BitRate(1));
        for uid in 0..3 {
            q.enqueue(packet(uid, 0, 100), &mut cx);
        }
        assert_eq!(cx.drops.len(), 1);
        assert_eq!(cx.drops[0].0.uid, 2);
        assert_eq!(cx.drops[0].1, DropReason::Overflow);
        assert_eq!(q.dequeue(&mut cx).into_packet(cx.slab).map(|p| p.uid), Some(0));
    }

    #[test]
    fn byte_limit_binds_before_packet_limit() {
        let limit = Limit { packets: Some(100), bytes: Some(Bytes(1000)) };
        let mut q = DropTail::new(&DropTailConfig { limit }).unwrap();
        let mut bench = Bench::new(1);
        let mut cx = bench.cx(Time::ZERO, BitRate(1));
        for uid in 0..3 {
            q.enqueue(packet(uid, 0, 400), &mut cx);
        }
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 800 });
        assert_eq!(cx.drops.len(), 1);
    }

    #[test]
    fn conserves_packets_and_bytes() {
        let mut q = DropTail::new(&DropTailConfig { limit: Limit { packets: Some(8), bytes: None } }).unwrap();
        let (departed, dropped) = check_conservation(&mut q, 20_000, 3);
        assert!(departed > 0 && dropped > 0);
    }

    #[test]
    fn zero_limit_is_rejected_naming_the_field() {
        let e = DropTail::new(&DropTailConfig { limit: Limit { packets: Some(0), bytes: None } }).err().unwrap();
        assert_eq!(e.path, "limit");
    }

    #[test]
    fn spec_parses_from_json_and_rejects_unknown_kinds_and_fields() {
        let s: QdiscSpec = serde_json::from_str(r#"{"kind":"droptail","limit":"64KB"}"#).unwrap();
        assert_eq!(s.kind(), "droptail");
        let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"droptial"}"#).unwrap_err().to_string();
        assert!(e.contains("unknown variant `droptial`"), "{e}");
        let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"droptail","limt":"5p"}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `limt`"), "{e}");
    }
}
