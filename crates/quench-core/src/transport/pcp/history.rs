//! Per-destination history (paper section 3.4), shared by all PCP flows of one source host:
//! the last base rate used towards each destination and how far to trust it. A new flow's
//! first probe asks for `fraction × last rate`; the fraction starts at 1/3, is halved after an
//! inaccurate prediction (the first probe failed) and doubled after an accurate one, never
//! above 1/3 ("up to 1/3 of the base rate").
//!
//! The builder creates one table per source host and hands each of its PCP senders a clone of
//! the `Arc`. An `Arc<Mutex<_>>` rather than `Rc<RefCell<_>>` because the simulation must be
//! `Send` (the Python extension releases the GIL while it runs); the lock is uncontended.

use crate::packet::NodeId;
use crate::units::BitRate;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The paper's cap on the trusted fraction of the previous base rate.
pub const MAX_FRACTION: f64 = 1.0 / 3.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DestHistory {
    pub last_rate: BitRate,
    pub fraction: f64,
}

#[derive(Debug, Default)]
pub struct HostHistory {
    // BTreeMap: iteration order never depends on hashing (determinism rule).
    dests: BTreeMap<NodeId, DestHistory>,
}

pub type SharedHistory = Arc<Mutex<HostHistory>>;

impl HostHistory {
    pub fn shared() -> SharedHistory {
        Arc::new(Mutex::new(HostHistory::default()))
    }

    pub fn get(&self, dst: NodeId) -> Option<DestHistory> {
        self.dests.get(&dst).copied()
    }

    /// The first probe's increment towards `dst`, if a rate was ever recorded.
    pub fn initial_probe(&self, dst: NodeId) -> Option<BitRate> {
        let h = self.dests.get(&dst).filter(|h| h.last_rate.0 > 0)?;
        Some(BitRate((h.last_rate.0 as f64 * h.fraction) as u64))
    }

    pub fn record_rate(&mut self, dst: NodeId, rate: BitRate) {
        let e = self.dests.entry(dst).or_insert(DestHistory { last_rate: rate, fraction: MAX_FRACTION });
        e.last_rate = rate;
    }

    /// Grade the last prediction: double the fraction if it held, halve it if not.
    pub fn record_prediction(&mut self, dst: NodeId, accurate: bool) {
        if let Some(e) = self.dests.get_mut(&dst) {
            e.fraction = if accurate { (e.fraction * 2.0).min(MAX_FRACTION) } else { e.fraction / 2.0 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_probe_is_a_third_then_tracks_accuracy() {
        let d = NodeId(7);
        let mut h = HostHistory::default();
        assert_eq!(h.initial_probe(d), None);
        h.record_rate(d, BitRate(9_000_000));
        assert_eq!(h.initial_probe(d), Some(BitRate(3_000_000)));
        h.record_prediction(d, false);
        h.record_prediction(d, false);
        assert_eq!(h.initial_probe(d), Some(BitRate(750_000))); // 9 Mb/s / 12
        h.record_prediction(d, true);
        assert_eq!(h.initial_probe(d), Some(BitRate(1_500_000)));
        h.record_prediction(d, true);
        h.record_prediction(d, true);
        assert_eq!(h.get(d).unwrap().fraction, MAX_FRACTION); // capped at 1/3
    }
}
