//! CHOKe, "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows": Pan,
//! Prabhakar & Psounis, "CHOKe: a stateless active queue management scheme for approximating
//! fair bandwidth allocation", INFOCOM 2000 (docs/mechanisms.md#choke). Read beside Linux
//! `net/sched/sch_choke.c`.
//!
//! RED (`red.rs`) with one step added, all of RED's code and parameters shared:
//! - **Per arrival** (paper section II, Figure 1): RED's average is updated on the queue the
//!   arrival finds. Below `min_th` the packet is admitted (RED). At or above it, a packet is
//!   drawn uniformly at random from the queue (one draw from the qdisc's stream); if it
//!   belongs to the arrival's flow (the 5-tuple, `classify::FlowKey`), both are dropped
//!   ("choose and kill", `early`; never marked, as in Linux). Otherwise ("choose and keep")
//!   RED decides as usual: the early region's probability, the forced region above
//!   `max_th` (`forced`), ECN marking by RED's `signal` policy, and `limit` (`overflow`).
//! - The comparison packet is removed from the middle of the FIFO (Linux leaves a hole in its
//!   ring and skips it at dequeue; the order of what remains is the same).
//!
//! Differences from Linux: the draw happens when the average is at or above `min_th` (RED's
//! region boundary here; Linux draws above `qth_min`); one candidate is drawn (Linux retries a
//! draw that lands on a hole, which this FIFO has none of); a matched arrival does not advance
//! RED's count (as in Linux). The paper draws one packet; its multiple-draw variant is not
//! implemented.
//!
//! Parameters and units: RED's (`red.rs`: `min_th`, `max_th`, `limit`, `max_p`, `w_q`,
//! `mode`, `curve`, `spacing`, `signal`, `forced`, `adapt`, `mean_packet_size`,
//! `target_delay`), with RED's defaults. Monitors: RED's (`avg_queue`, `arrival_queue`, `max_p`).
//! Nothing is allocated per packet (the FIFO's ring grows amortised).
//! Owns a RED state and its FIFO. Must not touch: the link, the world or any endpoint; it sees only
//! the packets it is given and its `QdiscCx`.

use super::classify::FlowKey;
use super::fifo::Fifo;
use super::red::{self, admit, Decision, RedConfig, RedParams, RedStats, RedVars};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;

/// CHOKe takes RED's configuration as it is.
pub type ChokeConfig = RedConfig;

/// What CHOKe did: RED's counts for the arrivals it kept, and the matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChokeStats {
    pub red: RedStats,
    /// Arrivals that matched the drawn packet (each drops two packets).
    pub matched: u64,
}

pub struct Choke {
    cfg: RedConfig,
    parms: Option<RedParams>,
    vars: RedVars,
    stats: ChokeStats,
    fifo: Fifo,
}

impl Choke {
    pub fn new(cfg: &ChokeConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Choke {
            cfg: cfg.clone(),
            parms: None,
            vars: RedVars::new(cfg),
            stats: ChokeStats::default(),
            fifo: Fifo::new(cfg.limit),
        })
    }

    pub fn stats(&self) -> ChokeStats {
        self.stats
    }
    pub fn vars(&self) -> &RedVars {
        &self.vars
    }
    /// The queued packets, head first.
    pub fn queued(&self) -> impl Iterator<Item = &Packet> {
        self.fifo.iter()
    }

    /// The choose-and-kill step for an arrival `pkt` and the drawn position `idx`: true (and
    /// the queued packet at `idx` handed to `cx.drop`) when they belong to the same flow.
    pub fn kill_if_same_flow(&mut self, pkt: &Packet, idx: usize, cx: &mut QdiscCx) -> bool {
        let same = self.fifo.get(idx).is_some_and(|q| FlowKey::of(q) == FlowKey::of(pkt));
        if same {
            let victim = self.fifo.remove(idx).expect("the drawn packet is queued");
            self.stats.matched += 1;
            cx.drop(victim, DropReason::Early);
        }
        same
    }
}

impl Qdisc for Choke {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let cfg = &self.cfg;
        let p = self.parms.get_or_insert_with(|| RedParams::new(cfg, cx.link_rate.0 as f64));
        let q = p.queued(&self.fifo);
        let before_max_p = self.vars.max_p;
        self.vars.update_average(p, q, cx.now);
        self.vars.adapt_max_p(p, cx.now);
        self.vars.report(before_max_p, q, cx);
        let min_th = p.resolved.min_th;
        if self.vars.avg >= min_th && !self.fifo.is_empty() {
            let idx = cx.rng.range_inclusive(0, self.fifo.len() as u64 - 1) as usize;
            if self.kill_if_same_flow(&pkt, idx, cx) {
                return cx.drop(pkt, DropReason::Early);
            }
        }
        let p = self.parms.as_ref().expect("set above");
        let d = self.vars.decide(p, q, &pkt, cx.rng);
        let mark = d != Decision::Accept && p.marks(&pkt, d);
        admit((&mut self.vars, &mut self.stats.red, &mut self.fifo), pkt, d, mark, cx);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        red::dequeue(&mut self.fifo, &mut self.vars, cx.now)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
}

#[cfg(test)]
#[path = "choke_tests.rs"]
mod tests;
