//! Per-destination history (paper section 3.4), shared by all PCP flows of one source host:
//! the last base rate used towards each destination and how far to trust it. A new flow's
//! first probe asks for `fraction × last rate`; the fraction starts at 1/3, is halved after an
//! inaccurate prediction (the first probe failed) and doubled after an accurate one, never
//! above 1/3 ("up to 1/3 of the base rate").
//!
//! Beyond the paper, the table also keeps the smallest one-way delay any flow has seen to the
//! destination, which a new flow takes as its empty-path delay (`history_owd`). A flow that
//! takes its own first sample instead counts any queue standing when it opens as propagation
//! delay and never compensates for it: the late-comer error of Vegas and FAST. In pcp06 at
//! 90 % load (FIFO, seed 2) the older flows' cuts could not drain a queue the newcomers did
//! not see, tit-for-tat took the queue for an unresponsive competitor's, and it overflowed:
//! 466 drops, 0 with the host's delay (`docs/reproductions.md`). The cost: the minimum never
//! ages, so after a route change to a longer path the host's flows would see a standing queue
//! that is not there (pcp06 has no route changes).
//!
//! The builder creates one table per source host and hands each of its PCP senders a clone of
//! the `Arc`. An `Arc<Mutex<_>>` rather than `Rc<RefCell<_>>` because the simulation must be
//! `Send` (the Python extension releases the GIL while it runs); the lock is uncontended.
//! It owns that table only: it sends nothing and sees no packet.

use crate::packet::NodeId;
use crate::units::{BitRate, Dur};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The paper's cap on the trusted fraction of the previous base rate.
pub const MAX_FRACTION: f64 = 1.0 / 3.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DestHistory {
    pub last_rate: BitRate,
    pub fraction: f64,
    /// The smallest one-way delay any flow to this destination has seen.
    pub min_owd: Option<Dur>,
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
        self.entry(dst).last_rate = rate;
    }

    fn entry(&mut self, dst: NodeId) -> &mut DestHistory {
        self.dests.entry(dst).or_insert(DestHistory { last_rate: BitRate(0), fraction: MAX_FRACTION, min_owd: None })
    }

    pub fn min_owd(&self, dst: NodeId) -> Option<Dur> {
        self.dests.get(&dst).and_then(|h| h.min_owd)
    }

    pub fn record_owd(&mut self, dst: NodeId, owd: Dur) {
        let e = self.entry(dst);
        e.min_owd = Some(e.min_owd.map_or(owd, |m| m.min(owd)));
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

    #[test]
    fn keeps_the_smallest_delay_per_destination() {
        let (d, other) = (NodeId(7), NodeId(8));
        let mut h = HostHistory::default();
        assert_eq!(h.min_owd(d), None);
        h.record_owd(d, Dur::from_millis(12));
        h.record_owd(d, Dur::from_millis(20)); // a later flow behind a queue
        assert_eq!(h.min_owd(d), Some(Dur::from_millis(12)));
        h.record_owd(d, Dur::from_millis(11));
        assert_eq!(h.min_owd(d), Some(Dur::from_millis(11)));
        assert_eq!(h.min_owd(other), None);
        // A delay alone gives no rate to probe from.
        assert_eq!(h.initial_probe(d), None);
    }
}
