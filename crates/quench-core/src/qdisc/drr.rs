//! Deficit round robin: Shreedhar & Varghese, "Efficient Fair Queuing using Deficit Round
//! Robin", SIGCOMM '95 (SV95).
//!
//! One FIFO per flow (the 5-tuple of `classify::FlowKey`) and a list of the active (backlogged)
//! flows. When a flow reaches the head of the list its turn starts: its deficit counter grows
//! by `quantum`; it sends head packets while the head fits in the deficit, subtracting each
//! size; then it goes to the tail of the list with what is left. A flow whose queue empties
//! leaves the list and its deficit is reset to 0 (SV95's pseudocode). With quantum ≥ the largest
//! packet every turn sends at least one packet, so each packet costs O(1) work (SV95 section 4);
//! a smaller quantum is allowed (a large packet then waits several turns).
//!
//! Buffer: one shared `limit`; an arrival that overflows it is answered by dropping the last
//! packet of the longest queue in bytes (SV95 drop from the longest queue, as McKenney's SFQ
//! does), which may be the arrival itself (ties go to the arrival's flow). Such drops count as
//! `Overflow`.
//!
//! Parameters: `limit` (default 1000 packets, Linux `txqueuelen`), `quantum` (default 1500 B).
//! Owns the per-flow queues, deficits and the active list. Must not touch: the link, the world or
//! any endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::classify::{over_limit, FlowIndex, Occupancy};
use super::fifo::{default_limit, validate_limit};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::units::{Bytes, Limit};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One Ethernet MTU (RFC 894): SV95 asks for quantum ≥ the largest packet, and Linux's
/// sch_drr defaults a class's quantum to the device MTU.
pub const DEFAULT_QUANTUM: Bytes = Bytes(1500);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrrConfig {
    pub limit: Limit,
    pub quantum: Bytes,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig { limit: default_limit(), quantum: DEFAULT_QUANTUM }
    }
}

pub struct Drr {
    limit: Limit,
    index: FlowIndex,
    rr: RoundRobin,
}

impl Drr {
    pub fn new(cfg: &DrrConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        Ok(Drr { limit: cfg.limit, index: FlowIndex::default(), rr: RoundRobin::new(cfg.quantum)? })
    }
}

impl Qdisc for Drr {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let f = self.index.index_of(&pkt);
        self.rr.push(f, pkt);
        self.rr.enforce(&self.limit, f, cx);
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx) -> Dequeued {
        self.rr.pop().map_or(Dequeued::Empty, Dequeued::Packet)
    }

    fn backlog(&self) -> Backlog {
        self.rr.backlog()
    }
}

const NIL: usize = usize::MAX;

/// A FIFO list of queue indices with O(1) removal from anywhere (a flow emptied by a drop
/// leaves the list at once, as SV95 requires).
#[derive(Default)]
struct ActiveList {
    next: Vec<usize>,
    prev: Vec<usize>,
    linked: Vec<bool>,
    head: Option<usize>,
    tail: Option<usize>,
}

impl ActiveList {
    fn grow(&mut self, i: usize) {
        if i >= self.linked.len() {
            self.next.resize(i + 1, NIL);
            self.prev.resize(i + 1, NIL);
            self.linked.resize(i + 1, false);
        }
    }

    fn contains(&self, i: usize) -> bool {
        self.linked.get(i).copied().unwrap_or(false)
    }

    fn push_back(&mut self, i: usize) {
        self.grow(i);
        self.linked[i] = true;
        self.next[i] = NIL;
        self.prev[i] = self.tail.unwrap_or(NIL);
        match self.tail {
            Some(t) => self.next[t] = i,
            None => self.head = Some(i),
        }
        self.tail = Some(i);
    }

    fn remove(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head = (n != NIL).then_some(n)
        } else {
            self.next[p] = n
        }
        if n == NIL {
            self.tail = (p != NIL).then_some(p)
        } else {
            self.prev[n] = p
        }
        self.linked[i] = false;
    }

    /// Indices from head to tail.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.head, |&i| (self.next[i] != NIL).then_some(self.next[i]))
    }
}

/// The DRR scheduler over numbered queues (flows for `drr`, hash buckets for `sfq`).
pub(crate) struct RoundRobin {
    quantum: u64,
    queues: Vec<VecDeque<Packet>>,
    deficit: Vec<u64>,
    list: ActiveList,
    /// Whether the head of the list has had this turn's quantum.
    turn_started: bool,
    occupancy: Occupancy,
    packets: u64,
    bytes: u64,
}

impl RoundRobin {
    pub fn new(quantum: Bytes) -> Result<Self, ConfigError> {
        if quantum.0 == 0 {
            return Err(ConfigError::new("quantum", "must be at least one byte"));
        }
        Ok(RoundRobin {
            quantum: quantum.0,
            queues: Vec::new(),
            deficit: Vec::new(),
            list: ActiveList::default(),
            turn_started: false,
            occupancy: Occupancy::default(),
            packets: 0,
            bytes: 0,
        })
    }

    pub fn push(&mut self, i: usize, pkt: Packet) {
        if i >= self.queues.len() {
            self.queues.resize_with(i + 1, VecDeque::new);
            self.deficit.resize(i + 1, 0);
        }
        if !self.list.contains(i) {
            self.list.push_back(i);
        }
        self.queues[i].push_back(pkt);
        self.account(i, pkt.size as u64, true);
    }

    fn account(&mut self, i: usize, size: u64, add: bool) {
        if add {
            self.occupancy.add(i, size);
            self.packets += 1;
            self.bytes += size;
        } else {
            self.occupancy.remove(i, size);
            self.packets -= 1;
            self.bytes -= size;
        }
    }

    /// Take `i` off the active list with its deficit reset (its queue emptied).
    fn retire(&mut self, i: usize) {
        if self.list.head == Some(i) {
            self.turn_started = false;
        }
        self.list.remove(i);
        self.deficit[i] = 0;
    }

    /// The next packet in DRR order.
    pub fn pop(&mut self) -> Option<Packet> {
        loop {
            let i = self.list.head?;
            if !self.turn_started {
                self.deficit[i] += self.quantum;
                self.turn_started = true;
            }
            let size = self.queues[i].front().expect("listed queues hold packets").size as u64;
            if size <= self.deficit[i] {
                let pkt = self.queues[i].pop_front().expect("checked above");
                self.deficit[i] -= size;
                self.account(i, size, false);
                if self.queues[i].is_empty() {
                    self.retire(i);
                }
                return Some(pkt);
            }
            // Turn over: to the tail with the deficit left.
            self.list.remove(i);
            self.list.push_back(i);
            self.turn_started = false;
        }
    }

    /// While the buffer is over `limit`, drop the last packet of the longest queue in bytes
    /// (`arriving` wins ties).
    pub fn enforce(&mut self, limit: &Limit, arriving: usize, cx: &mut QdiscCx) {
        while over_limit(limit, self.packets, self.bytes) {
            let i = self.occupancy.heaviest(arriving).expect("an over-full queue holds packets");
            let pkt = self.queues[i].pop_back().expect("the heaviest queue holds packets");
            self.account(i, pkt.size as u64, false);
            if self.queues[i].is_empty() {
                self.retire(i);
            }
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    /// Remove every packet, queue by queue in list order (each queue's in FIFO order), and
    /// reset the scheduler.
    pub fn drain(&mut self) -> Vec<Packet> {
        let order: Vec<usize> = self.list.iter().collect();
        let mut out = Vec::with_capacity(self.packets as usize);
        for i in order {
            out.extend(self.queues[i].drain(..));
            self.occupancy.remove(i, self.occupancy.bytes(i));
            self.retire(i);
        }
        (self.packets, self.bytes) = (0, 0);
        out
    }

    pub fn backlog(&self) -> Backlog {
        Backlog { packets: self.packets, bytes: self.bytes }
    }

    #[cfg(test)]
    pub fn deficits(&self) -> &[u64] {
        &self.deficit
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{check_conservation, packet, Bench};
    use super::super::QdiscSpec;
    use super::*;
    use crate::units::{BitRate, Time};

    fn drr(limit: Limit, quantum: u64) -> Drr {
        Drr::new(&DrrConfig { limit, quantum: Bytes(quantum) }).unwrap()
    }

    /// Quantum 500. Flows A (uids 1-3: 200, 700, 200), B (4: 1500), C (5-7: 300 each), all
    /// queued before the first departure; the list is A, B, C. Deficits [A, B, C]:
    /// round 1  A: 0+500=500, sends A1 (200) → 300; A2 700 > 300, to the tail.   [300,   0,   0]
    ///          B: 0+500=500 < 1500, to the tail.                                  [300, 500,   0]
    ///          C: 0+500=500, sends C1 (300) → 200; C2 300 > 200, to the tail.    [300, 500, 200]
    /// round 2  A: 300+500=800, sends A2 (700) → 100; A3 200 > 100, to the tail.  [100, 500, 200]
    ///          B: 500+500=1000 < 1500, to the tail.
    ///          C: 200+500=700, sends C2 → 400, C3 → 100, empty: reset to 0.       [100,1000,   0]
    /// round 3  A: 100+500=600, sends A3 → 400, empty: reset.                      [  0,1000,   0]
    ///          B: 1000+500=1500, sends B1 → 0, empty.                            [  0,   0,   0]
    /// Order: A1 C1 A2 C2 C3 A3 B1.
    #[test]
    fn deficits_and_departure_order_match_the_hand_trace() {
        let mut q = drr(default_limit(), 500);
        let mut b = Bench::new(1);
        for (uid, flow, size) in
            [(1, 0, 200), (2, 0, 700), (3, 0, 200), (4, 1, 1500), (5, 2, 300), (6, 2, 300), (7, 2, 300)]
        {
            b.offer(&mut q, packet(uid, flow, size), Time::ZERO, BitRate(8000));
        }
        let expected = [
            (1, [300, 0, 0]),
            (5, [300, 500, 200]),
            (2, [100, 500, 200]),
            (6, [100, 1000, 400]),
            (7, [100, 1000, 0]),
            (3, [0, 1000, 0]),
            (4, [0, 0, 0]),
        ];
        for (uid, deficits) in expected {
            let p = b.take(&mut q, Time::ZERO).expect("packets remain");
            assert_eq!((p.uid, q.rr.deficits()), (uid, &deficits[..]), "after uid {uid}");
        }
        assert!(b.take(&mut q, Time::ZERO).is_none());
    }

    /// Limit 4 packets: A holds 1500 + 1500 (uids 1, 2), B 200 + 200 (3, 4). B's third packet
    /// (5) overflows: A is the longest in bytes (3000 vs 600) and loses its last packet, uid 2.
    /// C's 100-byte arrival (6) overflows again: A (1500) loses uid 1, which empties it and
    /// takes it off the list. Then B's turn (500): B1 → 300, B2 → 100, B3 200 > 100 waits;
    /// C sends C1; B (100 + 500) sends B3. Order 3, 4, 6, 5.
    #[test]
    fn overflow_drops_from_the_longest_queue() {
        let mut q = drr(Limit { packets: Some(4), bytes: None }, 500);
        let mut b = Bench::new(1);
        for (uid, flow, size) in [(1, 0, 1500), (2, 0, 1500), (3, 1, 200), (4, 1, 200), (5, 1, 200), (6, 2, 100)] {
            b.offer(&mut q, packet(uid, flow, size), Time::ZERO, BitRate(8000));
        }
        let dropped: Vec<(u32, DropReason)> = b.drops.iter().map(|d| (d.0.uid, d.1)).collect();
        assert_eq!(dropped, vec![(2, DropReason::Overflow), (1, DropReason::Overflow)]);
        assert!(!q.rr.list.contains(0));
        let order: Vec<u32> = (0..4).map(|_| b.take(&mut q, Time::ZERO).unwrap().uid).collect();
        assert_eq!(order, vec![3, 4, 6, 5]);
    }

    #[test]
    fn conserves_packets_and_bytes_and_keeps_each_flow_in_order() {
        for quantum in [100, 1500] {
            let mut q = drr(Limit { packets: Some(8), bytes: None }, quantum);
            let (departed, dropped) = check_conservation(&mut q, 20_000, 7);
            assert!(departed > 0 && dropped > 0);
        }
    }

    #[test]
    fn bad_config_names_the_key() {
        let e = Drr::new(&DrrConfig { limit: default_limit(), quantum: Bytes(0) }).err().unwrap();
        assert_eq!(e.path, "quantum");
        let e = Drr::new(&DrrConfig { limit: Limit { packets: Some(0), bytes: None }, quantum: DEFAULT_QUANTUM });
        assert_eq!(e.err().unwrap().path, "limit");
        let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"drr","quantm":"500B"}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `quantm`"), "{e}");
    }
}
