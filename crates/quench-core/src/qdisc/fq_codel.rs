//! FQ-CoDel, the FlowQueue-CoDel packet scheduler: Høiland-Jørgensen, McKenney, Taht, Gettys
//! & Dumazet, RFC 8290 (2018) (docs/mechanisms.md#fq-codel). Read beside Linux
//! `net/sched/sch_fq_codel.c`.
//!
//! - **Classification, the lists and DRR**: `flow_queues.rs` (RFC 8290 sections 4.1.1, 4.2),
//!   shared with FQ-PIE.
//! - **Enqueue** (section 4.1): the packet joins its queue, stamped with the time; a queue that
//!   was in neither list joins the tail of the *new* list with a deficit of one `quantum`.
//!   Then, if the total exceeds `limit` packets or the bytes exceed `memory_limit`, packets are
//!   dropped from the **head** of the queue with the most bytes, at least one, until half of
//!   that queue's bytes are gone or `drop_batch_size` packets (Linux's batch drop,
//!   `fq_codel_drop`; section 4.1 asks for the head of the fattest queue). These count as
//!   `overflow`; the arrival itself may be among them. With `batch_drop_count = true` the
//!   number dropped is then added to the CoDel `count` of that queue, as Linux does ("tell
//!   codel to increase its signal strength also"), so that its next drops come sooner; RFC 8290
//!   section 4.1 asks only for the head drops and says nothing of CoDel's count, so the
//!   default (false) leaves the count alone.
//! - **Dequeue** (section 4.2): the head queue of the new list, else of the old list. A queue
//!   whose deficit is used up (≤ 0) gets another quantum and moves to the tail of the old
//!   list. Otherwise CoDel (`codel.rs`, run on that queue alone: its own state, sojourn
//!   times and MAXPACKET test on its own bytes) gives the next packet and the deficit is
//!   charged its size. A queue CoDel finds empty leaves the new list for the tail of the old
//!   one (so that a flow cannot stay "new" by emptying its queue each turn), or, on the old
//!   list, leaves the lists (section 4.2).
//!
//! RFC/Linux differences, RFC-side here: Linux moves an emptied new queue to the old list
//! only when the old list is not empty (else it drops it from the lists; the next turn's
//! outcome is the same), and passes CoDel the whole qdisc's backlog for the MAXPACKET test
//! (the RFC runs CoDel per queue). Memory is counted as packet bytes (Linux counts the
//! socket buffers' `truesize`).
//!
//! Parameters and units (RFC 8290 section 5.2 and 4.1; Linux defaults): `flows` 1024 queues,
//! `quantum` 1514 B (Linux: the device MTU plus the Ethernet header), `limit` 10240 packets,
//! `memory_limit` 32 MiB, `drop_batch_size` 64 packets, and CoDel's `target` 5 ms,
//! `interval` 100 ms, `mtu` 1500 B, `ecn` true (Linux `fq_codel` marks by default),
//! `ce_threshold` none, `ce_threshold_selector` none (every ECT packet; `{ value = 1, mask = 3 }`
//! for ECT(1) only, see `codel.rs`), `batch_drop_count` false. CoDel drops count as `early`.
//! Marks by the control law and by `ce_threshold` are counted apart in [`FqCodelStats`]
//! (`codel.ecn_mark`, `codel.ce_mark`); the links table's `marked_packets` is their sum.
//!
//! Monitors: none (CoDel's state is per queue; the link's drop, mark and sojourn records
//! cover what it does).
//! Nothing is allocated per packet: the queues and lists are allocated when the qdisc is
//! built, and the shared packet store grows amortised (`flow_queues.rs`).
//! Owns the flow queues and one CoDel state per queue. Must not touch: the link, the world or any
//! endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::codel::{
    default_interval, default_mtu, default_target, CeSelector, CodelParams, CodelQueue, CodelStats, CodelVars,
    ControlLaw,
};
use super::fifo::validate_limit;
use super::flow_queues::{FlowQueues, QueueView};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::units::{Bytes, Dur, Limit};
use serde::{Deserialize, Serialize};

/// RFC 8290 section 5.2.1 and Linux: 1024 flow queues; at most 65536 (Linux's cap).
pub const DEFAULT_FLOWS: u32 = 1024;
/// RFC 8290 section 5.2.2: quantum 1514 B (Linux: the device MTU, 1500, plus 14 B Ethernet).
pub const DEFAULT_QUANTUM: Bytes = Bytes(1514);
/// RFC 8290 section 5.2.3 and Linux: limit 10240 packets.
pub const DEFAULT_LIMIT_PACKETS: u64 = 10240;
/// Linux `fq_codel_init`: memory_limit 32 MiB.
pub const DEFAULT_MEMORY_LIMIT: Bytes = Bytes(32 << 20);
/// Linux `fq_codel_init`: drop_batch_size 64 packets.
pub const DEFAULT_DROP_BATCH: u32 = 64;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "default_flows")]
    pub flows: u32,
    #[serde(default = "default_quantum")]
    pub quantum: Bytes,
    #[serde(default = "default_fq_limit")]
    pub limit: Limit,
    #[serde(default = "default_memory_limit")]
    pub memory_limit: Bytes,
    #[serde(default = "default_drop_batch")]
    pub drop_batch_size: u32,
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_interval")]
    pub interval: Dur,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    #[serde(default = "default_true")]
    pub ecn: bool,
    #[serde(default)]
    pub ce_threshold: Option<Dur>,
    /// Apply `ce_threshold` only to the packets this matches (Linux `ce_threshold_selector`);
    /// left out of a written scenario when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_selector: Option<CeSelector>,
    /// CoDel's `control_law` in every flow queue (`codel.rs`); left out when exact.
    #[serde(default, skip_serializing_if = "ControlLaw::is_exact")]
    pub control_law: ControlLaw,
    /// Add a batch drop's size to the fat queue's CoDel count (Linux `fq_codel_drop`); left
    /// out when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub batch_drop_count: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

pub(super) fn default_flows() -> u32 {
    DEFAULT_FLOWS
}
pub(super) fn default_quantum() -> Bytes {
    DEFAULT_QUANTUM
}
pub(super) fn default_fq_limit() -> Limit {
    Limit { packets: Some(DEFAULT_LIMIT_PACKETS), bytes: None }
}
pub(super) fn default_memory_limit() -> Bytes {
    DEFAULT_MEMORY_LIMIT
}
fn default_drop_batch() -> u32 {
    DEFAULT_DROP_BATCH
}
fn default_true() -> bool {
    true
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every FQ-CoDel field has a default")
    }
}

/// A flow queue as CoDel sees it: popping keeps the discipline's totals too.
impl CodelQueue for QueueView<'_> {
    #[inline]
    fn pop(&mut self) -> Option<Packet> {
        QueueView::pop(self)
    }
    #[inline]
    fn bytes(&self) -> u64 {
        QueueView::bytes(self)
    }
}

/// What FQ-CoDel did (Linux `tc -s` for fq_codel): CoDel's counts summed over the queues,
/// and the overflow drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqCodelStats {
    pub codel: CodelStats,
    /// Packets dropped for the shared limits (`limit`, `memory_limit`).
    pub overflow_drop: u64,
    /// Of those, the drops caused by `memory_limit`.
    pub memory_drop: u64,
    /// Queues that joined the new list.
    pub new_flow_count: u64,
}

pub struct FqCodel {
    codel: CodelParams,
    limit: Limit,
    memory_limit: u64,
    drop_batch: u32,
    batch_drop_count: bool,
    fq: FlowQueues<CodelVars>,
    stats: FqCodelStats,
}

impl FqCodel {
    pub fn new(cfg: &FqCodelConfig) -> Result<Self, ConfigError> {
        let fq = FlowQueues::new(cfg.flows, cfg.quantum, CodelVars::default)?;
        validate_limit(&cfg.limit, "limit")?;
        if cfg.memory_limit.0 == 0 {
            return Err(ConfigError::new("memory_limit", "must be at least one byte"));
        }
        if cfg.drop_batch_size == 0 {
            return Err(ConfigError::new("drop_batch_size", "must be at least one packet"));
        }
        let codel = CodelParams::new(cfg.target, cfg.interval, cfg.mtu, cfg.ecn, cfg.ce_threshold, cfg.control_law)?
            .with_ce_selector(cfg.ce_threshold_selector)?;
        Ok(FqCodel {
            codel,
            limit: cfg.limit,
            memory_limit: cfg.memory_limit.0,
            drop_batch: cfg.drop_batch_size,
            batch_drop_count: cfg.batch_drop_count,
            fq,
            stats: FqCodelStats::default(),
        })
    }

    pub fn stats(&self) -> FqCodelStats {
        FqCodelStats { new_flow_count: self.fq.new_flow_count, ..self.stats }
    }

    /// The queue of `p`'s flow.
    pub fn queue_of(&self, p: &Packet) -> usize {
        self.fq.queue_of(p)
    }

    /// Packets queued in queue `i`.
    pub fn queue_len(&self, i: usize) -> usize {
        self.fq.queue(i).len()
    }

    fn over_limits(&self) -> (bool, bool) {
        let total = self.fq.total();
        let packets = self.limit.packets.is_some_and(|p| total.packets > p)
            || self.limit.bytes.is_some_and(|b| total.bytes > b.0);
        (packets, total.bytes > self.memory_limit)
    }

    /// Linux `fq_codel_drop`: from the head of the queue with the most bytes (lowest index on
    /// ties), at least one packet, until half its bytes are gone or a batch is dropped.
    fn drop_from_fattest(&mut self, memory: bool, cx: &mut QdiscCx) {
        let fattest = self.fq.fattest();
        let threshold = self.fq.queue(fattest).bytes() / 2;
        let (mut dropped_bytes, mut dropped) = (0, 0u32);
        for _ in 0..self.drop_batch {
            let Some(p) = self.fq.pop_front(fattest) else { break };
            dropped_bytes += p.size as u64;
            dropped += 1;
            self.stats.overflow_drop += 1;
            self.stats.memory_drop += memory as u64;
            cx.drop(p, DropReason::Overflow);
            if dropped_bytes >= threshold {
                break;
            }
        }
        if self.batch_drop_count {
            // Linux leaves the reciprocal square root alone here too: the Newton law catches
            // up at the next change of count.
            let vars = &mut self.fq.queue_mut(fattest).vars;
            vars.count = vars.count.saturating_add(dropped);
        }
    }

    /// Queue `i`'s CoDel state.
    pub fn vars(&self, i: usize) -> &CodelVars {
        &self.fq.queue(i).vars
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        self.fq.salt_once(cx.rng);
        pkt.enqueued_at = cx.now;
        let i = self.fq.queue_of(&pkt);
        self.stats.codel.maxpacket = self.stats.codel.maxpacket.max(pkt.size as u64);
        self.fq.push(i, pkt);
        let (packets, memory) = self.over_limits();
        if packets || memory {
            self.drop_from_fattest(memory && !packets, cx);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        while let Some((from_new, i)) = self.fq.head() {
            let (vars, mut packets) = self.fq.split(i);
            match vars.dequeue(&self.codel, &mut packets, &mut self.stats.codel, cx, false) {
                Some(p) => {
                    self.fq.charge(i, p.size);
                    return Dequeued::Packet(p);
                }
                None => self.fq.retire(from_new, i),
            }
        }
        Dequeued::Empty
    }

    fn backlog(&self) -> Backlog {
        self.fq.total()
    }
}

#[cfg(test)]
#[path = "fq_codel_tests.rs"]
mod tests;
