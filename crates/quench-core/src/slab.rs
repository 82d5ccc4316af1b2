//! One slab of packet entries that the world owns, holding every link's propagation pipe and
//! every drop-tail queue (and a trimming queue's two) as a FIFO list of its own ([`SlabList`]), and every packet in
//! transmission as an entry of no list ([`EntryId`]), which the end of its transmission puts
//! on the pipe's list without copying the packet; a packet that reaches the pipe's end and
//! passes on to an idle link or a drop-tail queue stays in its entry too
//! ([`PacketSlab::take`]), and leaves that queue in it for the transmitter. Memory then follows
//! the packets on the wire and in those queues in the whole network at once, not the sum of every
//! pipe's and queue's fullest moment: a ring buffer per pipe or queue keeps the room of its
//! peak (at 10,000 flows a dumbbell's 40,002 pipes took 57 MB that way, and its queues 10.8 MB).
//!
//! Entries freed are taken again first (a free list), so a packet entering the network lands
//! in memory recently touched: the entry of a packet just delivered or dropped. A long list's
//! entries lie scattered over the slab, where a ring buffer's lie in order for the processor
//! to fetch ahead, so taking an entry prefetches the next one (`PacketSlab::take`). The slab
//! grows by doubling; no packet allocates.
//!
//! The slab knows only entries and lists: which list is a pipe or a queue, and when a packet
//! moves from one to another, is for the link, the qdisc and the world to say. A qdisc with
//! per-flow queues keeps a slab of its own (`qdisc/flow_queues.rs`).

use crate::packet::Packet;
use crate::units::Time;

/// No entry: the end of a list.
const NO_ENTRY: u32 = u32::MAX;

/// A packet in a list and the next entry of its list (or of the free list).
struct Entry {
    next: u32,
    /// The next entry's time (a pipe's next arrival), so that taking this one tells when the
    /// next arrives without reading that entry yet (see `PacketSlab::pop`).
    next_at: Time,
    pkt: Packet,
}

/// The entries of every link's pipe and drop-tail queue (see the module header).
pub struct PacketSlab {
    entries: Vec<Entry>,
    /// The first free entry, `NO_ENTRY` if none.
    free: u32,
}

impl Default for PacketSlab {
    fn default() -> Self {
        PacketSlab { entries: Vec::new(), free: NO_ENTRY }
    }
}

/// An entry of a [`PacketSlab`] that holds a packet on no list (see [`PacketSlab::hold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId(u32);

/// One FIFO list of entries in a [`PacketSlab`]: 12 bytes, where a `VecDeque` takes 32 and
/// the room of its fullest moment.
#[derive(Clone, Copy, Debug)]
pub struct SlabList {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for SlabList {
    fn default() -> Self {
        SlabList { head: NO_ENTRY, tail: NO_ENTRY, len: 0 }
    }
}

impl SlabList {
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PacketSlab {
    /// Append `pkt` to `list`; `at` is its time (a pipe's arrival time, returned by the `pop`
    /// of the entry before it). Always inlined: called out of line, the packet is copied once
    /// more on the way in (3 % more instructions on the small dumbbells).
    #[inline(always)]
    pub fn push(&mut self, list: &mut SlabList, at: Time, pkt: Packet) {
        let id = self.hold(pkt);
        self.append(list, at, id);
    }

    /// Store `pkt` in an entry of no list (a packet in transmission); it stays there, not
    /// copied, until [`PacketSlab::append`] puts the entry on a list or
    /// [`PacketSlab::release`] frees it.
    #[inline(always)]
    pub fn hold(&mut self, pkt: Packet) -> EntryId {
        if self.free != NO_ENTRY {
            let i = self.free;
            // Field by field: a whole `Entry` written here was built on the stack first.
            let e = &mut self.entries[i as usize];
            self.free = e.next;
            e.next = NO_ENTRY;
            e.pkt = pkt;
            EntryId(i)
        } else {
            let i = u32::try_from(self.entries.len()).expect("more than 2^32 - 1 packets held");
            self.entries.push(Entry { next: NO_ENTRY, next_at: Time::ZERO, pkt });
            EntryId(i)
        }
    }

    /// The packet held in entry `id` ([`PacketSlab::hold`]).
    #[inline(always)]
    pub fn held(&self, id: EntryId) -> &Packet {
        &self.entries[id.0 as usize].pkt
    }

    #[inline(always)]
    pub fn held_mut(&mut self, id: EntryId) -> &mut Packet {
        &mut self.entries[id.0 as usize].pkt
    }

    /// Free entry `id`, held and on no list, and return its packet.
    #[inline(always)]
    pub fn release(&mut self, id: EntryId) -> Packet {
        let e = &mut self.entries[id.0 as usize];
        e.next = self.free;
        self.free = id.0;
        e.pkt
    }

    /// Put entry `id`, held and on no list, at the tail of `list`; `at` is its time.
    #[inline(always)]
    pub fn append(&mut self, list: &mut SlabList, at: Time, id: EntryId) {
        let i = id.0;
        debug_assert_eq!(self.entries[i as usize].next, NO_ENTRY, "an entry on a list appended again");
        if list.len == 0 {
            list.head = i;
        } else {
            let tail = &mut self.entries[list.tail as usize];
            tail.next = i;
            tail.next_at = at;
        }
        list.tail = i;
        list.len += 1;
    }

    /// Take the head of `list` (not empty) and free its entry; returns its packet and the
    /// time of the next one.
    #[inline(always)]
    pub fn pop(&mut self, list: &mut SlabList) -> (Packet, Option<Time>) {
        let (id, next_at) = self.take(list);
        (self.release(id), next_at)
    }

    /// Take the head of `list` (not empty) off the list without copying its packet: the entry
    /// is held ([`PacketSlab::hold`]) until appended or released. Returns it and the time of
    /// the next one.
    #[inline(always)]
    pub fn take(&mut self, list: &mut SlabList) -> (EntryId, Option<Time>) {
        debug_assert!(list.len > 0, "take from an empty list");
        let i = list.head;
        let e = &mut self.entries[i as usize];
        let next_at = e.next_at;
        list.head = e.next;
        e.next = NO_ENTRY;
        list.len -= 1;
        if list.len == 0 {
            return (EntryId(i), None);
        }
        // The next entry is read when its turn comes. A long list's entries lie scattered over
        // the slab, where a ring buffer's lie in order for the processor to fetch ahead; fetch
        // it now instead, while the events before its turn run.
        prefetch(&self.entries[list.head as usize]);
        (EntryId(i), Some(next_at))
    }

    /// The packet at the tail of `list`, if any.
    #[inline]
    pub fn back(&self, list: &SlabList) -> Option<&Packet> {
        (list.len > 0).then(|| &self.entries[list.tail as usize].pkt)
    }

    /// Exchange the packet at the tail of `list` (not empty) with the one held in entry `id`:
    /// the held packet takes the tail's place in the list, and `id` now holds the packet that
    /// was there. The entries stay where they are; only their packets move.
    pub fn swap_back(&mut self, list: &SlabList, id: EntryId) {
        debug_assert!(list.len > 0, "swap with the tail of an empty list");
        let (tail, held) = (list.tail as usize, id.0 as usize);
        debug_assert_ne!(tail, held, "an entry on the list is not held");
        let pkt = self.entries[held].pkt;
        self.entries[held].pkt = std::mem::replace(&mut self.entries[tail].pkt, pkt);
    }

    /// The packets of `list`, head first.
    pub fn iter<'a>(&'a self, list: &SlabList) -> impl Iterator<Item = &'a Packet> + 'a {
        let mut at = list.head;
        (0..list.len).map(move |_| {
            let e = &self.entries[at as usize];
            at = e.next;
            &e.pkt
        })
    }

    /// Entries made so far, held or free: the most ever held at once.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// The head of `list`, if any.
    #[inline]
    #[cfg(test)]
    pub fn front(&self, list: &SlabList) -> Option<&Packet> {
        (list.len > 0).then(|| &self.entries[list.head as usize].pkt)
    }
}

/// Ask the processor to bring `entry` into the cache (a hint: no effect on results).
#[inline(always)]
fn prefetch(entry: &Entry) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (entry as *const Entry).cast::<i8>();
        // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE, which it
        // needs, is part of every x86_64 processor.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            // The entry spans a second cache line.
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = entry;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::harness::packet;

    /// Lists interleaved in one slab keep their own order, report the next entry's time, and
    /// reuse freed entries before the slab grows.
    #[test]
    fn lists_share_the_slab_in_order() {
        let mut slab = PacketSlab::default();
        let (mut a, mut b) = (SlabList::default(), SlabList::default());
        for uid in 0..6u32 {
            let list = if uid % 2 == 0 { &mut a } else { &mut b };
            slab.push(list, Time(uid as u64 * 10), packet(uid, 0, 100));
        }
        assert_eq!((a.len(), b.len(), slab.entries.len()), (3, 3, 6));
        assert_eq!(slab.front(&b).map(|p| p.uid), Some(1));
        let (p, next) = slab.pop(&mut a);
        assert_eq!((p.uid, next), (0, Some(Time(20))));
        let (p, next) = slab.pop(&mut b);
        assert_eq!((p.uid, next), (1, Some(Time(30))));
        slab.push(&mut a, Time(60), packet(6, 0, 100));
        slab.push(&mut a, Time(70), packet(7, 0, 100));
        assert_eq!(slab.entries.len(), 6, "the two freed entries are taken again");
        let uids: Vec<u32> = std::iter::from_fn(|| (!a.is_empty()).then(|| slab.pop(&mut a).0.uid)).collect();
        assert_eq!(uids, vec![2, 4, 6, 7]);
        assert_eq!(slab.pop(&mut b).0.uid, 3);
        assert_eq!(slab.pop(&mut b), (packet(5, 0, 100), None));
        assert!(slab.front(&b).is_none());
    }

    /// A held entry keeps its packet in place until it joins a list (in the list's order, with
    /// the time given) or is released, and a released entry is the next one taken.
    #[test]
    fn a_held_entry_joins_a_list_in_place() {
        let mut slab = PacketSlab::default();
        let mut pipe = SlabList::default();
        slab.push(&mut pipe, Time(10), packet(0, 0, 100));
        let sent = slab.hold(packet(1, 0, 200));
        slab.held_mut(sent).enqueued_at = Time(3);
        assert_eq!((slab.held(sent).uid, pipe.len()), (1, 1), "held on no list");
        slab.append(&mut pipe, Time(20), sent);
        assert_eq!(slab.entries.len(), 2, "appended where it was held, not copied");
        assert_eq!(slab.pop(&mut pipe), (packet(0, 0, 100), Some(Time(20))));
        let (p, next) = slab.pop(&mut pipe);
        assert_eq!((p.uid, p.enqueued_at, next), (1, Time(3), None));
        let lost = slab.hold(packet(2, 0, 300));
        assert_eq!(slab.release(lost).uid, 2);
        assert_eq!(slab.hold(packet(3, 0, 100)), lost, "the released entry is taken first");
        assert_eq!(slab.entries.len(), 2);
    }

    /// A head taken off one list is held in place: it reports the next head's time, can join
    /// another list without a copy, and once released is the next entry taken.
    #[test]
    fn a_taken_head_passes_on_in_place() {
        let mut slab = PacketSlab::default();
        let (mut upstream, mut onward) = (SlabList::default(), SlabList::default());
        slab.push(&mut upstream, Time(10), packet(0, 0, 100));
        slab.push(&mut upstream, Time(20), packet(1, 0, 100));
        let (first, next) = slab.take(&mut upstream);
        assert_eq!((slab.held(first).uid, next, upstream.len()), (0, Some(Time(20)), 1));
        slab.append(&mut onward, Time(50), first);
        assert_eq!(slab.entries.len(), 2, "moved, not copied");
        let (second, next) = slab.take(&mut upstream);
        assert_eq!((slab.held(second).uid, next), (1, None));
        assert_eq!(slab.release(second).uid, 1);
        assert_eq!(slab.hold(packet(2, 0, 100)), second, "the released entry is taken first");
        assert_eq!(slab.pop(&mut onward), (packet(0, 0, 100), None));
    }
}
