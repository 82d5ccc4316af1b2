//! The event queue: a binary heap keyed by (time, insertion sequence), so events due at the same
//! instant run first-in first-out and every run is deterministic. Events are small typed values,
//! never closures; timers are cancelled lazily by generation number in their owner.
//!
//! A sequence number can be reserved when an event is foreseen and the event queued later
//! under it (or never, when its owner can show that it would change nothing): its place among
//! equal-time events is then the one it had when foreseen, so results do not depend on it.
//!
//! Flows' starts take their numbers from a band below every other event's
//! ([`Scheduler::schedule_start`]): the n-th start is ordered as if all starts had been queued
//! before the run, whenever it is queued, so a workload's arrivals can be drawn as the run goes.

use crate::units::Time;

/// The (time, sequence) order packed into one integer, compared in a single operation.
fn key(at: Time, seq: u64) -> u128 {
    (at.0 as u128) << 64 | seq as u128
}

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// A binary min-heap on `key` whose popped root is removed lazily. Handling an event nearly
/// always queues another one first (a link's next arrival, its next end of transmission), so
/// the new entry simply takes the vacated root's place: one sift instead of the removal's
/// and the insertion's two. Keys are unique (sequence numbers are), so the pop order is
/// exactly the (time, sequence) order whatever the heap's shape.
struct Heap<E> {
    entries: Vec<Entry<E>>,
    /// The root has been handed out and awaits removal or replacement.
    root_taken: bool,
}

impl<E: Copy> Heap<E> {
    fn with_capacity(n: usize) -> Self {
        Heap { entries: Vec::with_capacity(n), root_taken: false }
    }

    fn len(&self) -> usize {
        self.entries.len() - self.root_taken as usize
    }

    fn push(&mut self, entry: Entry<E>) {
        if std::mem::take(&mut self.root_taken) {
            self.sift_down_from_root(entry);
        } else {
            self.entries.push(entry);
            self.sift_up_from_last();
        }
    }

    /// The earliest entry, left in place until the next push or peek (see [`Heap`]).
    #[inline]
    fn take_root_if(&mut self, due: impl FnOnce(u128) -> bool) -> Option<Entry<E>> {
        let root = *self.peek()?;
        if !due(root.key) {
            return None;
        }
        self.root_taken = true;
        Some(root)
    }

    #[inline]
    fn peek(&mut self) -> Option<&Entry<E>> {
        if std::mem::take(&mut self.root_taken) {
            let last = self.entries.pop().expect("a taken root is in the heap");
            if !self.entries.is_empty() {
                self.sift_down_from_root(last);
            }
        }
        self.entries.first()
    }

    fn sift_up_from_last(&mut self) {
        let mut hole = self.entries.len() - 1;
        let entry = self.entries[hole];
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.entries[parent].key < entry.key {
                break;
            }
            self.entries[hole] = self.entries[parent];
            hole = parent;
        }
        self.entries[hole] = entry;
    }

    /// Put `entry` in the root's slot (whose occupant is discarded) and restore the order.
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        // A slice of fixed length: the compiler drops the bounds tests it can prove.
        let entries = &mut self.entries[..];
        let n = entries.len();
        let mut hole = 0;
        loop {
            let left = 2 * hole + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && entries[right].key < entries[left].key { right } else { left };
            if entry.key < entries[child].key {
                break;
            }
            entries[hole] = entries[child];
            hole = child;
        }
        entries[hole] = entry;
    }
}

pub struct Scheduler<E> {
    heap: Heap<E>,
    next_seq: u64,
    executed: u64,
    /// Key of the event last popped: the position of the run in the (time, sequence) order.
    current: u128,
}

/// Sequence numbers below this are flows' starts (`schedule_start`), one per flow: flow ids
/// are `u32`, so a start's ordinal always fits.
const START_BAND: u64 = 1 << 32;

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler { heap: Heap::with_capacity(1024), next_seq: START_BAND, executed: 0, current: 0 }
    }
}

impl<E: Copy> Scheduler<E> {
    pub fn schedule(&mut self, at: Time, event: E) {
        let seq = self.reserve();
        self.schedule_reserved(at, seq, event);
    }

    /// Queue the `ordinal`-th flow start: among events due at the same instant it runs before
    /// every other kind of event, and after the starts with smaller ordinals.
    pub fn schedule_start(&mut self, at: Time, ordinal: u64, event: E) {
        debug_assert!(ordinal < START_BAND, "more flow starts than flow ids");
        self.schedule_reserved(at, ordinal, event);
    }

    /// Take the sequence number an event scheduled now would get, without queueing it.
    pub fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Take `n` consecutive sequence numbers at once: events queued later under them keep the
    /// place they would have had if queued now, in the order of the numbers.
    pub fn reserve_block(&mut self, n: u64) -> std::ops::Range<u64> {
        self.next_seq += n;
        self.next_seq - n..self.next_seq
    }

    /// Queue an event under a sequence number taken earlier with [`Scheduler::reserve`].
    pub fn schedule_reserved(&mut self, at: Time, seq: u64, event: E) {
        // Before the first pop `current` is 0, which the first start's key (time 0, ordinal 0)
        // equals without being in the past.
        debug_assert!(self.executed == 0 || key(at, seq) > self.current, "an event scheduled in the past");
        self.heap.push(Entry { key: key(at, seq), event });
    }

    /// Whether an event at (at, seq) would already have run: it precedes the one last popped.
    pub fn has_passed(&self, at: Time, seq: u64) -> bool {
        key(at, seq) < self.current
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|e| Time((e.key >> 64) as u64))
    }

    /// The next event if it is due at or before `horizon`. Inlined into the run loop: called
    /// once per event, its call and the copy of its returned event cost as much as its body.
    #[inline]
    pub fn pop_until(&mut self, horizon: Time) -> Option<(Time, E)> {
        let e = self.heap.take_root_if(|k| k <= key(horizon, u64::MAX))?;
        self.executed += 1;
        self.current = e.key;
        Some((Time((e.key >> 64) as u64), e.event))
    }

    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut s = Scheduler::default();
        s.schedule(Time(5), 'c');
        s.schedule(Time(1), 'a');
        s.schedule(Time(5), 'd');
        s.schedule(Time(1), 'b');
        s.schedule(Time(9), 'e');
        let mut out = vec![];
        while let Some((_, e)) = s.pop_until(Time(8)) {
            out.push(e);
        }
        assert_eq!(out, vec!['a', 'b', 'c', 'd']);
        assert_eq!(s.peek_time(), Some(Time(9)));
        assert_eq!(s.executed(), 4);
    }

    /// A reserved number keeps the event's place among equal-time events, whenever it is queued.
    #[test]
    fn reserved_sequence_keeps_its_place() {
        let mut s = Scheduler::default();
        let early = s.reserve();
        s.schedule(Time(5), 'b');
        s.schedule(Time(5), 'c');
        assert!(!s.has_passed(Time(5), early));
        s.schedule_reserved(Time(5), early, 'a');
        let (_, first) = s.pop_until(Time(5)).unwrap();
        assert_eq!(first, 'a');
        let late = s.reserve();
        assert!(s.has_passed(Time(4), late) && !s.has_passed(Time(5), late));
        let (_, second) = s.pop_until(Time(5)).unwrap();
        assert_eq!(second, 'b');
        assert!(s.has_passed(Time(5), early) && !s.has_passed(Time(5), late + 1));
    }

    /// A start queued late still runs before the other events due at its instant, in ordinal
    /// order, as if it had been queued first.
    #[test]
    fn starts_run_first_in_ordinal_order() {
        let mut s = Scheduler::default();
        s.schedule_start(Time(3), 0, "start 0");
        s.schedule(Time(3), "end of transmission");
        s.pop_until(Time(2));
        s.schedule_start(Time(3), 2, "start 2");
        s.schedule_start(Time(3), 1, "start 1");
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(Time(3)).map(|(_, e)| e)).collect();
        assert_eq!(order, ["start 0", "start 1", "start 2", "end of transmission"]);
    }

    /// Numbers of a block taken first keep their events ahead of events queued before them at
    /// the same instant with later numbers (an activation's timers ahead of its packets' events).
    #[test]
    fn a_reserved_block_orders_ahead_of_later_numbers() {
        let mut s = Scheduler::default();
        let mut block = s.reserve_block(3);
        s.schedule(Time(7), "end of transmission");
        s.schedule_reserved(Time(7), block.next().unwrap(), "timer");
        s.schedule_reserved(Time(7), block.next().unwrap(), "second timer");
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(Time(7)).map(|(_, e)| e)).collect();
        assert_eq!(order, ["timer", "second timer", "end of transmission"]);
        assert_eq!(block.count(), 1, "one number of the block left");
    }

    /// Interleaved pushes and pops at random times come out in exactly the order of a sorted
    /// reference, at heap sizes from empty to a few thousand (several levels of the tree).
    #[test]
    fn matches_a_sorted_reference() {
        use crate::rng::Rng;
        use std::collections::BTreeSet;
        let mut rng = Rng::from_seed(7);
        let mut s = Scheduler::default();
        let mut reference = BTreeSet::new();
        let mut now = 0u64;
        for round in 0..20_000u32 {
            let pushes = if round % 5000 < 2500 { 2 } else { 0 };
            for _ in 0..pushes {
                let at = now + (rng.uniform() * 1000.0) as u64;
                let seq = s.reserve();
                s.schedule_reserved(Time(at), seq, seq);
                reference.insert((at, seq));
            }
            let expected = reference.pop_first();
            let got = s.pop_until(Time::MAX).map(|(t, seq)| (t.0, seq));
            assert_eq!(got, expected);
            if let Some((t, _)) = got {
                now = t;
            }
            assert_eq!(s.pending(), reference.len());
        }
    }
}
