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
//! **Layout** (for speed; the order of service is the RFC's whatever the layout). Linux keeps
//! each flow's packets in a linked list of socket buffers and the flows on linked lists
//! (`struct fq_codel_flow`'s `flowchain`); quench does the same with indices: every queued
//! packet sits in one slab of entries (`slab.rs`'s `PacketSlab`, the store of the world's pipes,
//! here the qdisc's own), each queue is a list of entries (`SlabList`: head, tail, count), and
//! the new and old lists link the queues through a `next` index in each queue. Freed entries
//! are reused last-freed first, so an arrival usually writes an entry that a departure has
//! just left in cache. Against a ring (`VecDeque`) per queue and per list this keeps the store
//! as large as the largest total backlog, not each queue's largest, and takes no ring
//! arithmetic per packet (`docs/benchmarks.md`, queue disciplines, gives the counts).
//!
//! Nothing is allocated per packet: the queues are allocated when the qdisc is built, and the
//! slab grows amortised (an entry is added only when none is free).
//! Owns the queues, the new and old lists and their slab; the drop and mark decisions belong to the
//! discipline above it (`fq_codel.rs`, `fq_pie.rs`).

use super::classify::FlowKey;
use super::Backlog;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::slab::{PacketSlab, SlabList};
use crate::units::{Bytes, Time};

/// At most 65536 flow queues (Linux's cap for fq_codel and fq_pie).
pub const MAX_FLOWS: u32 = 65536;

/// The end of a list of queues (queue indices are `u32`: 65536 queues at most).
const NIL: u32 = u32::MAX;

/// Which list a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listed {
    None,
    New,
    Old,
}

/// One queue's packets: a list of entries of the qdisc's slab in arrival order, and its bytes.
#[derive(Default)]
struct Packets {
    list: SlabList,
    bytes: u64,
}

/// One flow queue: its packets, DRR deficit, the AQM's state and its place on a list.
pub struct FlowQueue<V> {
    packets: Packets,
    pub deficit: i64,
    /// The next queue on the same list.
    next: u32,
    listed: Listed,
    pub vars: V,
}

impl<V> FlowQueue<V> {
    /// Bytes queued.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.packets.bytes
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.packets.list.len() as usize
    }
}

/// A list of queues (the new or the old list), first and last.
#[derive(Clone, Copy)]
struct QueueList {
    head: u32,
    tail: u32,
}

impl QueueList {
    const EMPTY: QueueList = QueueList { head: NIL, tail: NIL };
}

/// The queues, the lists and the totals.
pub struct FlowQueues<V> {
    quantum: i64,
    salt: Option<u64>,
    queues: Vec<FlowQueue<V>>,
    store: PacketSlab,
    new_flows: QueueList,
    old_flows: QueueList,
    total: Backlog,
    /// Queues that joined the new list.
    pub new_flow_count: u64,
}

/// One queue's packets with the store and the totals, borrowed apart from the queue's AQM
/// state: what an AQM that takes packets itself (CoDel) pops from.
pub struct QueueView<'a> {
    packets: &'a mut Packets,
    store: &'a mut PacketSlab,
    total: &'a mut Backlog,
}

impl QueueView<'_> {
    /// Take the head packet, keeping the queue's and the totals' counts.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let q = &mut *self.packets;
        if q.list.is_empty() {
            return None;
        }
        let (pkt, _) = self.store.pop(&mut q.list);
        q.bytes -= pkt.size as u64;
        self.total.packets -= 1;
        self.total.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Bytes left in the queue.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.packets.bytes
    }
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
        let queue =
            || FlowQueue { packets: Packets::default(), deficit: 0, next: NIL, listed: Listed::None, vars: vars() };
        Ok(FlowQueues {
            quantum: quantum.0 as i64,
            salt: None,
            queues: (0..flows).map(|_| queue()).collect(),
            store: PacketSlab::default(),
            new_flows: QueueList::EMPTY,
            old_flows: QueueList::EMPTY,
            total: Backlog::default(),
            new_flow_count: 0,
        })
    }

    /// Draw the salt at the first arrival (one draw from the qdisc's stream, then none).
    #[inline]
    pub fn salt_once(&mut self, rng: &mut Rng) {
        if self.salt.is_none() {
            self.salt = Some(rng.next_u64());
        }
    }

    /// The queue of `p`'s flow (multiply-shift of the salted hash onto 0..flows).
    #[inline]
    pub fn queue_of(&self, p: &Packet) -> usize {
        let h = FlowKey::of(p).hash(self.salt.unwrap_or(0));
        ((h as u128 * self.queues.len() as u128) >> 64) as usize
    }

    #[inline]
    pub fn queue(&self, i: usize) -> &FlowQueue<V> {
        &self.queues[i]
    }

    #[inline]
    pub fn queue_mut(&mut self, i: usize) -> &mut FlowQueue<V> {
        &mut self.queues[i]
    }

    /// Queue `i`'s AQM state and its packets (with the store and totals), borrowed together.
    #[inline]
    pub fn split(&mut self, i: usize) -> (&mut V, QueueView<'_>) {
        let q = &mut self.queues[i];
        (&mut q.vars, QueueView { packets: &mut q.packets, store: &mut self.store, total: &mut self.total })
    }

    #[inline]
    pub fn total(&self) -> Backlog {
        self.total
    }

    /// Append `pkt` to queue `i`; a queue on neither list joins the new list with a quantum.
    #[inline]
    pub fn push(&mut self, i: usize, pkt: Packet) {
        let size = pkt.size as u64;
        let q = &mut self.queues[i];
        // A queue's entries need no time of their own (a pipe's arrival time).
        self.store.push(&mut q.packets.list, Time::ZERO, pkt);
        q.packets.bytes += size;
        self.total.packets += 1;
        self.total.bytes += size;
        if q.listed == Listed::None {
            q.listed = Listed::New;
            q.deficit = self.quantum;
            Self::append(&mut self.queues, &mut self.new_flows, i as u32);
            self.new_flow_count += 1;
        }
    }

    /// Take the head packet of queue `i`, keeping the totals.
    #[inline]
    pub fn pop_front(&mut self, i: usize) -> Option<Packet> {
        self.split(i).1.pop()
    }

    /// The queue with the most bytes (lowest index on ties).
    pub fn fattest(&self) -> usize {
        let mut fattest = 0;
        for (i, q) in self.queues.iter().enumerate() {
            if q.packets.bytes > self.queues[fattest].packets.bytes {
                fattest = i;
            }
        }
        fattest
    }

    /// Put queue `i` at the tail of `list`.
    #[inline]
    fn append(queues: &mut [FlowQueue<V>], list: &mut QueueList, i: u32) {
        queues[i as usize].next = NIL;
        if list.tail == NIL {
            list.head = i;
        } else {
            queues[list.tail as usize].next = i;
        }
        list.tail = i;
    }

    /// Take the head queue off `list` (not empty).
    #[inline]
    fn take_head(queues: &[FlowQueue<V>], list: &mut QueueList) -> u32 {
        let i = list.head;
        list.head = queues[i as usize].next;
        if list.head == NIL {
            list.tail = NIL;
        }
        i
    }

    /// The queue to serve next and whether it is on the new list; `None` when both lists are
    /// empty. Queues whose deficit is spent move to the old list with another quantum first.
    #[inline]
    pub fn head(&mut self) -> Option<(bool, usize)> {
        loop {
            let from_new = self.new_flows.head != NIL;
            let i = if from_new { self.new_flows.head } else { self.old_flows.head };
            if i == NIL {
                return None;
            }
            let q = &mut self.queues[i as usize];
            if q.deficit > 0 {
                return Some((from_new, i as usize));
            }
            q.deficit += self.quantum;
            q.listed = Listed::Old;
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            Self::take_head(&self.queues, list);
            Self::append(&mut self.queues, &mut self.old_flows, i);
        }
    }

    /// Charge the queue that [`head`](Self::head) gave for a packet of `size` bytes.
    #[inline]
    pub fn charge(&mut self, i: usize, size: u16) {
        self.queues[i].deficit -= size as i64;
    }

    /// The queue that [`head`](Self::head) gave had nothing to send: from the new list to the
    /// tail of the old one, or off the old list.
    #[inline]
    pub fn retire(&mut self, from_new: bool, i: usize) {
        if from_new {
            Self::take_head(&self.queues, &mut self.new_flows);
            Self::append(&mut self.queues, &mut self.old_flows, i as u32);
            self.queues[i].listed = Listed::Old;
        } else {
            Self::take_head(&self.queues, &mut self.old_flows);
            self.queues[i].listed = Listed::None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::packet;
    use super::*;

    /// The slot store against a `VecDeque` per queue: 20,000 random pushes to and pops from
    /// 7 queues give the same packets in the same order, with the same counts and totals,
    /// and the store never holds more slots than the largest total backlog.
    #[test]
    fn queues_in_the_store_behave_as_rings() {
        use std::collections::VecDeque;
        let mut fq: FlowQueues<()> = FlowQueues::new(7, Bytes(1514), || ()).unwrap();
        let mut rings: Vec<VecDeque<Packet>> = vec![VecDeque::new(); 7];
        let mut rng = Rng::from_seed(42);
        let (mut uid, mut peak) = (0, 0);
        for _ in 0..20_000 {
            let i = (rng.next_u64() % 7) as usize;
            if rng.uniform() < 0.55 {
                let p = packet(uid, i as u32, 40 + (rng.next_u64() % 1460) as u16);
                uid += 1;
                fq.push(i, p);
                rings[i].push_back(p);
            } else {
                assert_eq!(fq.pop_front(i), rings[i].pop_front());
            }
            let (packets, bytes) = rings
                .iter()
                .fold((0, 0), |(n, b), r| (n + r.len() as u64, b + r.iter().map(|p| p.size as u64).sum::<u64>()));
            assert_eq!((fq.total().packets, fq.total().bytes), (packets, bytes));
            assert_eq!(fq.queue(i).len(), rings[i].len());
            assert_eq!(fq.queue(i).bytes(), rings[i].iter().map(|p| p.size as u64).sum::<u64>());
            peak = peak.max(packets as usize);
        }
        assert_eq!(fq.store.capacity(), peak);
    }

    /// DRR over the linked lists, traced by hand (quantum 1514 B; queues 0 and 1 hold uids
    /// 0-2 and 3-5, 1000 B each; queue 2 gets uid 100, 200 B, later), step by step in the
    /// comments below.
    #[test]
    fn the_lists_serve_new_queues_first_and_rotate_old_ones() {
        let mut fq: FlowQueues<()> = FlowQueues::new(3, Bytes(1514), || ()).unwrap();
        let mut uid = 0;
        for i in [0, 1] {
            for _ in 0..3 {
                fq.push(i, packet(uid, i as u32, 1000));
                uid += 1;
            }
        }
        let serve = |fq: &mut FlowQueues<()>| -> Option<u32> {
            while let Some((from_new, i)) = fq.head() {
                match fq.pop_front(i) {
                    Some(p) => {
                        fq.charge(i, p.size);
                        return Some(p.uid);
                    }
                    None => fq.retire(from_new, i),
                }
            }
            None
        };
        // New list [0, 1]: queue 0 sends uids 0, 1 (deficit 1514 → 514 → −486), then is spent
        // and moves to the old list (1028); queue 1 sends 3, 4 (→ −486) and stays at the head
        // of the new list until the next turn.
        assert_eq!(
            (serve(&mut fq), serve(&mut fq), serve(&mut fq), serve(&mut fq)),
            (Some(0), Some(1), Some(3), Some(4))
        );
        fq.push(2, packet(100, 2, 200));
        assert_eq!(fq.new_flow_count, 3);
        // Queue 2 joins the new list behind 1. Next turn: 1 is spent (→ 1028, to the old list,
        // now [0, 1]); 2 sends uid 100 (→ 1314). Then 2 is empty: from the new list to the
        // tail of the old one ([0, 1, 2]); 0 sends uid 2 (→ 28); then 0 is empty and leaves the
        // lists; 1 sends uid 5. Then 1 and 2 are empty and leave the lists.
        assert_eq!((serve(&mut fq), serve(&mut fq), serve(&mut fq)), (Some(100), Some(2), Some(5)));
        assert_eq!(serve(&mut fq), None);
        assert_eq!(fq.total(), Backlog::default());
        assert_eq!((fq.new_flows.head, fq.old_flows.head), (NIL, NIL));
    }
}
