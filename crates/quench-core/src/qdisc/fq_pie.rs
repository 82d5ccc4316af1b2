//! FQ-PIE, flow queues with a PIE controller on each: Ramakrishnan, Bhasin, Tahiliani et al.,
//! "FQ-PIE Queue Discipline in the Linux Kernel" (2020) (docs/mechanisms.md#fq-pie). Read
//! beside Linux `net/sched/sch_fq_pie.c`; there is no RFC, so Linux is the reference.
//!
//! - **Classification, the lists and DRR**: `flow_queues.rs`, the machinery FQ-CoDel uses
//!   (RFC 8290 sections 4.1.1, 4.2): the 5-tuple hashed under a salt into `flows` queues,
//!   new queues served first, deficit round robin with `quantum`.
//! - **Enqueue** (`fq_pie_qdisc_enqueue`): an arrival that finds `limit` packets queued in all,
//!   or whose bytes would take the total over `memory_limit`, is dropped (`overflow`). Else
//!   the PIE of its flow queue decides (`pie.rs`, RFC 8033 section 4.1 and 5.1, on that
//!   queue's bytes and state alone): an early drop (`early`), a CE mark for an ECT packet
//!   while that queue's `drop_prob ≤ mark_ecnth`, or the packet joins its queue, stamped
//!   with the time.
//! - **Dequeue** (`fq_pie_qdisc_dequeue`): DRR as in FQ-CoDel; the departure feeds the flow
//!   queue's PIE delay estimate (`pie_process_dequeue`).
//! - **Drop probability**: every `tupdate` Linux's timer runs PIE's update on every flow queue
//!   (`fq_pie_timer`) with that queue's bytes. Here each queue's updates are evaluated lazily,
//!   at the first arrival to or departure from that queue at or after each due time (as in
//!   `pie.rs`): nothing a queue's update reads changes between events on that queue, so each
//!   update sees what the timer would have seen. All queues share the timer's grid. The
//!   catch-up is PIE's quiet one (`PieVars::catch_up_quietly`, no monitors), bit for bit the
//!   update loop's state.
//!
//! Differences from Linux: `memory_limit` drops the arrival (Linux only counts `overmemory`
//! and queues it anyway); memory counts packet bytes, not socket-buffer truesize; the PIE
//! departures of `pie.rs` (no byte mode, no extra increase above 250 ms; `derandomize` is a
//! choice, off by default as in RFC 8033's basic scheme, where Linux always de-randomizes).
//! `delay_estimate` defaults to Linux's `"timestamp"` (its `dq_rate_estimator` off): the
//! departure-rate estimate needs `dq_threshold` (16 KiB) queued in one flow queue before it
//! measures anything, which a queue of a fairly served flow seldom holds.
//!
//! Parameters and units (Linux `fq_pie_init` defaults): `flows` 1024 queues, `quantum`
//! 1514 B, `limit` 10240 packets, `memory_limit` 32 MiB, and PIE's (RFC 8033): `target`
//! 15 ms, `tupdate` 15 ms, `alpha` 0.125 Hz, `beta` 1.25 Hz, `max_burst` 150 ms, `ecn` false,
//! `mark_ecnth` 0.1 (Linux `ecn_prob` 10 %), `dq_threshold` 16 KiB, `mean_packet_size`
//! 1500 B (the safeguard's two packets, Linux's device MTU), `delay_estimate` "timestamp",
//! `derandomize` false.
//!
//! Monitors: none (PIE's state is per queue; the link's drop, mark and sojourn records cover
//! what it does). Nothing is allocated per packet (see `flow_queues.rs`).
//! Owns the flow queues and one PIE state per queue. Must not touch: the link, the world or any
//! endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::flow_queues::FlowQueues;
use super::fq_codel;
use super::pie::{self, DelayEstimate, PieConfig, PieParams, PieStats, PieVars};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::{ecn, Packet};
use crate::units::{Bytes, Dur, Limit};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqPieConfig {
    #[serde(default = "fq_codel::default_flows")]
    pub flows: u32,
    #[serde(default = "fq_codel::default_quantum")]
    pub quantum: Bytes,
    #[serde(default = "fq_codel::default_fq_limit")]
    pub limit: Limit,
    #[serde(default = "fq_codel::default_memory_limit")]
    pub memory_limit: Bytes,
    #[serde(default = "pie::default_target")]
    pub target: Dur,
    #[serde(default = "pie::default_tupdate")]
    pub tupdate: Dur,
    #[serde(default = "pie::default_alpha")]
    pub alpha: f64,
    #[serde(default = "pie::default_beta")]
    pub beta: f64,
    #[serde(default = "pie::default_max_burst")]
    pub max_burst: Dur,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "pie::default_mark_ecnth")]
    pub mark_ecnth: f64,
    #[serde(default = "pie::default_dq_threshold")]
    pub dq_threshold: Bytes,
    #[serde(default = "pie::default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    #[serde(default = "default_delay_estimate")]
    pub delay_estimate: DelayEstimate,
    #[serde(default)]
    pub derandomize: bool,
}

/// Linux `fq_pie_init`: `dq_rate_estimator` off, so timestamps (see the module notes).
fn default_delay_estimate() -> DelayEstimate {
    DelayEstimate::Timestamp
}

impl Default for FqPieConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every FQ-PIE field has a default")
    }
}

/// What FQ-PIE did (Linux `tc -s` for fq_pie): PIE's counts summed over the queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqPieStats {
    /// Early drops, marks, arrivals over `limit` or `memory_limit` (`overlimit`), largest packet.
    pub pie: PieStats,
    /// Of the overlimit drops, those caused by `memory_limit`.
    pub memory_drop: u64,
    /// Queues that joined the new list.
    pub new_flow_count: u64,
}

pub struct FqPie {
    pie: PieParams,
    limit: Limit,
    memory_limit: u64,
    fq: FlowQueues<PieVars>,
    stats: FqPieStats,
}

impl FqPie {
    pub fn new(cfg: &FqPieConfig) -> Result<Self, ConfigError> {
        let pie = PieParams::new(&PieConfig {
            limit: cfg.limit,
            target: cfg.target,
            tupdate: cfg.tupdate,
            alpha: cfg.alpha,
            beta: cfg.beta,
            max_burst: cfg.max_burst,
            ecn: cfg.ecn,
            mark_ecnth: cfg.mark_ecnth,
            dq_threshold: cfg.dq_threshold,
            mean_packet_size: cfg.mean_packet_size,
            delay_estimate: cfg.delay_estimate,
            derandomize: cfg.derandomize,
            // Linux's fq_pie caps as PIE does and has no active/inactive switch.
            cap_drop_adjustment: true,
            auto_activate: false,
        })?;
        if cfg.memory_limit.0 == 0 {
            return Err(ConfigError::new("memory_limit", "must be at least one byte"));
        }
        let fq = FlowQueues::new(cfg.flows, cfg.quantum, || PieVars::new(&pie))?;
        Ok(FqPie { pie, limit: cfg.limit, memory_limit: cfg.memory_limit.0, fq, stats: FqPieStats::default() })
    }

    pub fn stats(&self) -> FqPieStats {
        FqPieStats { new_flow_count: self.fq.new_flow_count, ..self.stats }
    }

    /// The queue of `p`'s flow.
    pub fn queue_of(&self, p: &Packet) -> usize {
        self.fq.queue_of(p)
    }

    /// Queue `i`'s PIE state.
    pub fn vars(&self, i: usize) -> &PieVars {
        &self.fq.queue(i).vars
    }

    /// Whether `pkt` would not fit: `limit` (packets already queued, or bytes with it), or
    /// `memory_limit` with it (the second: true).
    fn over_limits(&self, pkt: &Packet) -> Option<bool> {
        let (total, size) = (self.fq.total(), pkt.size as u64);
        let packets = self.limit.packets.is_some_and(|p| total.packets >= p)
            || self.limit.bytes.is_some_and(|b| total.bytes + size > b.0);
        if packets {
            Some(false)
        } else if total.bytes + size > self.memory_limit {
            Some(true)
        } else {
            None
        }
    }
}

impl Qdisc for FqPie {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        self.fq.salt_once(cx.rng);
        pkt.enqueued_at = cx.now;
        let i = self.fq.queue_of(&pkt);
        self.stats.pie.maxq = self.stats.pie.maxq.max(pkt.size as u64);
        let p = &self.pie;
        let over = self.over_limits(&pkt);
        let q = self.fq.queue_mut(i);
        let bytes = q.bytes();
        q.vars.catch_up_quietly(p, bytes, cx.now);
        if let Some(memory) = over {
            q.vars.accu_prob = 0.0;
            self.stats.pie.overlimit += 1;
            self.stats.memory_drop += memory as u64;
            return cx.drop(pkt, DropReason::Overflow);
        }
        if q.vars.burst_allowance.is_zero() && q.vars.drop_early(p, bytes, cx.rng) {
            if p.ecn && pkt.ecn != ecn::NOT_ECT && q.vars.drop_prob <= p.mark_ecnth {
                pkt.ecn = ecn::CE;
                self.stats.pie.ecn_mark += 1;
                cx.note_mark();
            } else {
                q.vars.accu_prob = 0.0;
                self.stats.pie.dropped += 1;
                return cx.drop(pkt, DropReason::Early);
            }
        }
        self.fq.push(i, pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        while let Some((from_new, i)) = self.fq.head() {
            let p = &self.pie;
            let (vars, mut packets) = self.fq.split(i);
            let bytes = packets.bytes();
            if bytes == 0 {
                self.fq.retire(from_new, i);
                continue;
            }
            vars.catch_up_quietly(p, bytes, cx.now);
            let pkt = packets.pop().expect("a queue with bytes has a packet");
            let sojourn = cx.now - pkt.enqueued_at;
            vars.on_departure(p, bytes, pkt.size as u64, sojourn, cx.now);
            self.fq.charge(i, pkt.size);
            return Dequeued::Packet(pkt);
        }
        Dequeued::Empty
    }

    fn backlog(&self) -> Backlog {
        self.fq.total()
    }
}

#[cfg(test)]
#[path = "fq_pie_tests.rs"]
mod tests;
