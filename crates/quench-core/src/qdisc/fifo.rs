//! The one first-in first-out packet store under every discipline that keeps a single queue
//! (drop-tail, RED, the Fuzzball, the Dummynet pipe): the packets in arrival order, their byte
//! count and the buffer limit. A FIFO only stores; the discipline around it decides what to
//! admit, drop or mark (as Linux's `sch_red` keeps its packets in a child `bfifo`/`pfifo`).
//!
//! The limit is counted in packets, bytes or both, whichever binds first; the default is
//! [`DEFAULT_LIMIT_PACKETS`], shared by every discipline that has no default of its own.
//!
//! Drop-tail, the queue of nearly every link in a large network, keeps its packets in the
//! world's shared slab instead ([`SlabFifo`], `slab.rs`), so that its memory follows the packets
//! queued rather than its fullest moment; it only appends at the tail and takes the head, each
//! in the entry the packet already has where it can (a packet arriving off a pipe joins the
//! queue in its entry, and the head leaves in it for the transmitter). NDP's trimming queue
//! keeps its two FIFOs there too: it also swaps an arrival for the packet queued last. The disciplines that take
//! packets from the middle or look through the queue (the Fuzzball's and CHOKe's preemptions,
//! RED's drop-front) keep a [`Fifo`] of their own.
//! Owns the stored packets, their byte count and the limit; it answers only whether a packet fits,
//! and dropping or marking is the discipline's.

use super::Backlog;
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::slab::{EntryId, PacketSlab, SlabList};
use crate::units::Limit;
use crate::units::Time;
use std::collections::VecDeque;

/// 1000 packets: Linux's default `txqueuelen` (`DEFAULT_TX_QUEUE_LEN`, include/net/pkt_sched.h,
/// set by `ether_setup`), which `pfifo_fast` and a `pfifo` without a limit take as theirs; ns-3's
/// FifoQueueDisc and PfifoFastQueueDisc default to "1000p" too.
pub const DEFAULT_LIMIT_PACKETS: u64 = 1000;

/// The default `limit` of every discipline's config (serde `default = "..."`).
pub fn default_limit() -> Limit {
    Limit { packets: Some(DEFAULT_LIMIT_PACKETS), bytes: None }
}

/// A limit must admit at least one packet; `field` names the key in the error.
pub fn validate_limit(limit: &Limit, field: &str) -> Result<(), ConfigError> {
    if limit.packets == Some(0) || limit.bytes.is_some_and(|b| b.0 == 0) {
        return Err(ConfigError::new(field, "the queue must hold at least one packet"));
    }
    Ok(())
}

/// Packets in arrival order, their total size and the limit they are held to.
#[derive(Clone, Debug)]
pub struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
    limit: Limit,
}

impl Fifo {
    pub fn new(limit: Limit) -> Self {
        // No room until a packet comes, then doubling as the queue fills (and kept): a network
        // of many links must not hold room for packets in every queue before any comes (64
        // packets of 96 bytes per queue were 24 KiB per flow of a dumbbell, 4 queues each).
        Fifo { packets: VecDeque::new(), bytes: 0, limit }
    }

    /// A FIFO bounded by something else (the Fuzzball's node-wide pool).
    pub fn unlimited() -> Self {
        Fifo::new(Limit::unlimited())
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Whether `pkt` fits: the packet count stays within the limit and the bytes, with the
    /// packet's, too (Linux `pfifo`/`bfifo`: `qlen < limit`, `backlog + len <= limit`).
    pub fn has_room(&self, pkt: &Packet) -> bool {
        !self.limit.exceeded_by(self.len() as u64, self.bytes, pkt.size as u64)
    }

    /// Append `pkt` at the tail; the caller has decided to admit it (see [`Fifo::has_room`]).
    pub fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.packets.push_back(pkt);
    }

    /// Take the head packet.
    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    /// Take the packet at position `i` from the head (a preemption from the middle).
    pub fn remove(&mut self, i: usize) -> Option<Packet> {
        let p = self.packets.remove(i)?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    pub fn peek(&self) -> Option<&Packet> {
        self.packets.front()
    }

    pub fn back(&self) -> Option<&Packet> {
        self.packets.back()
    }

    pub fn get(&self, i: usize) -> Option<&Packet> {
        self.packets.get(i)
    }

    /// The packets from head to tail.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Packet> + ExactSizeIterator {
        self.packets.iter()
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn backlog(&self) -> Backlog {
        Backlog { packets: self.packets.len() as u64, bytes: self.bytes }
    }
}

/// A FIFO whose packets lie in a [`PacketSlab`] (see the module header): its byte count, its
/// limit and the ends of its list, 56 bytes where a [`Fifo`] takes 72 and the room of its
/// fullest moment. Every call that stores or takes a packet names the slab.
#[derive(Clone, Debug)]
pub struct SlabFifo {
    packets: SlabList,
    bytes: u64,
    limit: Limit,
}

impl SlabFifo {
    pub fn new(limit: Limit) -> Self {
        SlabFifo { packets: SlabList::default(), bytes: 0, limit }
    }

    /// Whether `pkt` fits (as [`Fifo::has_room`]).
    #[inline]
    pub fn has_room(&self, pkt: &Packet) -> bool {
        !self.limit.exceeded_by(self.packets.len() as u64, self.bytes, pkt.size as u64)
    }

    /// Append `pkt` at the tail; the caller has decided to admit it.
    #[inline]
    pub fn push(&mut self, slab: &mut PacketSlab, pkt: Packet) {
        self.bytes += pkt.size as u64;
        // A queue's entries need no time of their own (a pipe's arrival time).
        slab.push(&mut self.packets, Time::ZERO, pkt);
    }

    /// Append the packet held in entry `id` at the tail, as it is; the caller has decided to
    /// admit it.
    #[inline]
    pub fn append(&mut self, slab: &mut PacketSlab, id: EntryId) {
        self.bytes += slab.held(id).size as u64;
        slab.append(&mut self.packets, Time::ZERO, id);
    }

    /// The packet queued last, if any.
    pub fn back<'a>(&self, slab: &'a PacketSlab) -> Option<&'a Packet> {
        slab.back(&self.packets)
    }

    /// Whether `pkt` would fit in place of the packet queued last (the queue is not empty).
    pub fn has_room_in_place_of_back(&self, slab: &PacketSlab, pkt: &Packet) -> bool {
        let back = self.back(slab).expect("a queue with a packet queued last").size as u64;
        let (packets, bytes) = (self.packets.len() as u64 - 1, self.bytes - back);
        !self.limit.exceeded_by(packets, bytes, pkt.size as u64)
    }

    /// Put the packet held in entry `id` in place of the one queued last, which `id` then
    /// holds; the caller has decided to admit it (see [`SlabFifo::has_room_in_place_of_back`]).
    pub fn replace_back(&mut self, slab: &mut PacketSlab, id: EntryId) {
        slab.swap_back(&self.packets, id);
        self.bytes = self.bytes + slab.back(&self.packets).expect("not empty").size as u64 - slab.held(id).size as u64;
    }

    /// Take the head packet off the list, held in its entry (not copied).
    #[inline]
    pub fn take(&mut self, slab: &mut PacketSlab) -> Option<EntryId> {
        if self.packets.is_empty() {
            return None;
        }
        let (id, _) = slab.take(&mut self.packets);
        self.bytes -= slab.held(id).size as u64;
        Some(id)
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn backlog(&self) -> Backlog {
        Backlog { packets: self.packets.len() as u64, bytes: self.bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::packet;
    use super::*;
    use crate::units::Bytes;

    #[test]
    fn keeps_order_and_counts_bytes() {
        let mut f = Fifo::new(default_limit());
        for uid in 0..3 {
            f.push(packet(uid, 0, 100 + uid as u16));
        }
        assert_eq!(f.backlog(), Backlog { packets: 3, bytes: 303 });
        assert_eq!(f.remove(1).unwrap().uid, 1);
        assert_eq!((f.peek().unwrap().uid, f.back().unwrap().uid), (0, 2));
        assert_eq!(f.pop().unwrap().uid, 0);
        assert_eq!(f.backlog(), Backlog { packets: 1, bytes: 102 });
    }

    /// The slab FIFO answers as the FIFO does, packet for packet, under the same limit.
    #[test]
    fn the_slab_fifo_follows_the_fifo() {
        let limit = Limit { packets: Some(5), bytes: Some(Bytes(4000)) };
        let (mut f, mut s, mut slab) = (Fifo::new(limit), SlabFifo::new(limit), PacketSlab::default());
        let mut rng = crate::rng::Rng::from_seed(7);
        for uid in 0..2000u32 {
            if rng.uniform() < 0.55 {
                let p = packet(uid, 0, rng.range_inclusive(40, 1500) as u16);
                assert_eq!(f.has_room(&p), s.has_room(&p), "packet {uid}");
                if f.has_room(&p) {
                    f.push(p);
                    // Copied in, or appended in the entry it is held in.
                    if uid % 2 == 0 {
                        s.push(&mut slab, p);
                    } else {
                        let id = slab.hold(p);
                        s.append(&mut slab, id);
                    }
                }
            } else {
                assert_eq!(f.pop(), s.take(&mut slab).map(|id| slab.release(id)), "step {uid}");
            }
            assert_eq!((f.backlog(), f.is_empty()), (s.backlog(), s.is_empty()));
        }
    }

    /// Replacing the packet queued last answers as taking it off the FIFO's tail and pushing the
    /// arrival: the same room, the same packet displaced, the same order and backlog after.
    #[test]
    fn replacing_the_back_follows_the_fifo() {
        let limit = Limit { packets: Some(4), bytes: Some(Bytes(3000)) };
        let (mut f, mut s, mut slab) = (Fifo::new(limit), SlabFifo::new(limit), PacketSlab::default());
        let mut rng = crate::rng::Rng::from_seed(11);
        for uid in 0..2000u32 {
            let p = packet(uid, 0, rng.range_inclusive(40, 1500) as u16);
            let draw = rng.uniform();
            if draw < 0.4 && !f.is_empty() {
                let last = f.remove(f.len() - 1).expect("not empty");
                let fits = f.has_room(&p);
                assert_eq!(s.has_room_in_place_of_back(&slab, &p), fits, "packet {uid}");
                if fits {
                    f.push(p);
                    let id = slab.hold(p);
                    s.replace_back(&mut slab, id);
                    assert_eq!(slab.release(id), last, "the displaced packet, step {uid}");
                } else {
                    f.push(last);
                }
            } else if draw < 0.75 {
                if f.has_room(&p) {
                    f.push(p);
                    s.push(&mut slab, p);
                }
            } else {
                assert_eq!(f.pop(), s.take(&mut slab).map(|id| slab.release(id)), "step {uid}");
            }
            assert_eq!(f.back(), s.back(&slab));
            assert_eq!((f.backlog(), f.is_empty()), (s.backlog(), s.is_empty()));
        }
    }

    #[test]
    fn room_under_packet_and_byte_limits() {
        let mut f = Fifo::new(Limit { packets: Some(2), bytes: Some(Bytes(1000)) });
        f.push(packet(0, 0, 600));
        assert!(f.has_room(&packet(1, 0, 400)), "bytes reach the limit exactly");
        assert!(!f.has_room(&packet(1, 0, 401)));
        f.push(packet(1, 0, 100));
        assert!(!f.has_room(&packet(2, 0, 40)), "two packets already");
        assert!(Fifo::unlimited().has_room(&packet(0, 0, 1500)));
    }

    #[test]
    fn a_limit_must_admit_a_packet() {
        assert_eq!(validate_limit(&Limit { packets: Some(0), bytes: None }, "limit").unwrap_err().path, "limit");
        assert!(validate_limit(&Limit { packets: None, bytes: Some(Bytes(0)) }, "pool_limit").is_err());
        assert!(validate_limit(&default_limit(), "limit").is_ok());
    }
}
