//! The flow-queue machinery shared by FQ-CoDel (`fq_codel.rs`, RFC 8290) and FQ-PIE
//! (`fq_pie.rs`, Linux `sch_fq_pie.c`): classification, the queues, deficit round robin with
//! the new and old lists, the totals; the per-queue AQM state `V` (CoDel's or PIE's) rides
//! along in each queue.
//!
//! - **Classification** (RFC 8290 section 4.1.1): the 5-tuple (`classify::FlowKey`) hashed
//!   under a salt into one of `flows` queues. The salt (Linux's `perturbation`) is drawn from
//!   the qdisc's seeded stream at the first arrival and kept.
//! - **Enqueue** (section 4.1): [`FlowQueues::push`] appends to the queue; a queue that was on
//!   neither list joins the tail of the *new* list with a deficit of one `quantum`.
//! - **Scheduling** (section 4.2): [`FlowQueues::head`] gives the head queue of the new list,
//!   else of the old list, after moving every queue whose deficit is used up (≤ 0) to the tail
//!   of the old list with another quantum. The discipline then takes a packet from that queue
//!   (its AQM may drop some first) and charges it ([`FlowQueues::charge`]), or, finding the
//!   queue empty, retires it ([`FlowQueues::retire`]): from the new list to the tail of the
//!   old one (so that a flow cannot stay "new" by emptying its queue each turn), or, from the
//!   old list, off the lists.
//!
//! Nothing is allocated per packet: the queues and lists are allocated when the qdisc is
//! built (each queue's ring grows amortised).

use super::classify::FlowKey;
use super::Backlog;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::Bytes;
use std::collections::VecDeque;

/// At most 65536 flow queues (Linux's cap for fq_codel and fq_pie).
pub const MAX_FLOWS: u32 = 65536;

/// Which list a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listed {
    None,
    New,
    Old,
}

/// One flow queue: its packets, bytes, DRR deficit, the AQM's state and its list.
pub struct FlowQueue<V> {
    pub packets: VecDeque<Packet>,
    pub bytes: u64,
    pub deficit: i64,
    pub vars: V,
    listed: Listed,
}

/// The queues, the lists and the totals.
pub struct FlowQueues<V> {
    quantum: i64,
    salt: Option<u64>,
    queues: Vec<FlowQueue<V>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    total: Backlog,
    /// Queues that joined the new list.
    pub new_flow_count: u64,
}

impl<V> FlowQueues<V> {
    /// `flows` queues served `quantum` bytes per turn, each with the state `vars()`; the keys
    /// `flows` and `quantum` are named when out of range.
    pub fn new(flows: u32, quantum: Bytes, vars: impl Fn() -> V) -> Result<Self, ConfigError> {
        if !(1..=MAX_FLOWS).contains(&flows) {
            return Err(ConfigError::new("flows", format!("{flows} is not in 1..={MAX_FLOWS}")));
        }
        if quantum.0 == 0 || quantum.0 > u32::MAX as u64 {
            return Err(ConfigError::new("quantum", "must be between one byte and 4 GiB"));
        }
        let n = flows as usize;
        let queue = || FlowQueue { packets: VecDeque::new(), bytes: 0, deficit: 0, vars: vars(), listed: Listed::None };
        Ok(FlowQueues {
            quantum: quantum.0 as i64,
            salt: None,
            queues: (0..n).map(|_| queue()).collect(),
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            total: Backlog::default(),
            new_flow_count: 0,
        })
    }

    /// Draw the salt at the first arrival (one draw from the qdisc's stream, then none).
    pub fn salt_once(&mut self, rng: &mut Rng) {
        if self.salt.is_none() {
            self.salt = Some(rng.next_u64());
        }
    }

    /// The queue of `p`'s flow (multiply-shift of the salted hash onto 0..flows).
    pub fn queue_of(&self, p: &Packet) -> usize {
        let h = FlowKey::of(p).hash(self.salt.unwrap_or(0));
        ((h as u128 * self.queues.len() as u128) >> 64) as usize
    }

    pub fn queue(&self, i: usize) -> &FlowQueue<V> {
        &self.queues[i]
    }

    pub fn queue_mut(&mut self, i: usize) -> &mut FlowQueue<V> {
        &mut self.queues[i]
    }

    /// Queue `i` and the totals, borrowed together (for an AQM that pops from the queue).
    pub fn split(&mut self, i: usize) -> (&mut FlowQueue<V>, &mut Backlog) {
        (&mut self.queues[i], &mut self.total)
    }

    pub fn total(&self) -> Backlog {
        self.total
    }

    /// Append `pkt` to queue `i`; a queue on neither list joins the new list with a quantum.
    pub fn push(&mut self, i: usize, pkt: Packet) {
        let size = pkt.size as u64;
        let q = &mut self.queues[i];
        q.packets.push_back(pkt);
        q.bytes += size;
        self.total.packets += 1;
        self.total.bytes += size;
        if q.listed == Listed::None {
            q.listed = Listed::New;
            q.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
            self.new_flow_count += 1;
        }
    }

    /// Take the head packet of queue `i`, keeping the totals.
    pub fn pop_front(&mut self, i: usize) -> Option<Packet> {
        let q = &mut self.queues[i];
        let p = q.packets.pop_front()?;
        q.bytes -= p.size as u64;
        self.total.packets -= 1;
        self.total.bytes -= p.size as u64;
        Some(p)
    }

    /// The queue with the most bytes (lowest index on ties).
    pub fn fattest(&self) -> usize {
        let mut fattest = 0;
        for (i, q) in self.queues.iter().enumerate() {
            if q.bytes > self.queues[fattest].bytes {
                fattest = i;
            }
        }
        fattest
    }

    /// The queue to serve next and whether it is on the new list; `None` when both lists are
    /// empty. Queues whose deficit is spent move to the old list with another quantum first.
    pub fn head(&mut self) -> Option<(bool, usize)> {
        loop {
            let (from_new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let q = &mut self.queues[i];
            if q.deficit > 0 {
                return Some((from_new, i));
            }
            q.deficit += self.quantum;
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
            self.old_flows.push_back(i as u32);
            q.listed = Listed::Old;
        }
    }

    /// Charge the queue that [`head`](Self::head) gave for a packet of `size` bytes.
    pub fn charge(&mut self, i: usize, size: u16) {
        self.queues[i].deficit -= size as i64;
    }

    /// The queue that [`head`](Self::head) gave had nothing to send: from the new list to the
    /// tail of the old one, or off the old list.
    pub fn retire(&mut self, from_new: bool, i: usize) {
        let q = &mut self.queues[i];
        if from_new {
            self.new_flows.pop_front();
            self.old_flows.push_back(i as u32);
            q.listed = Listed::Old;
        } else {
            self.old_flows.pop_front();
            q.listed = Listed::None;
        }
    }
}
