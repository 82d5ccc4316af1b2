//! The event queue: a binary heap keyed by (time, insertion sequence), so events due at the same
//! instant run first-in first-out and every run is deterministic. Events are small typed values,
//! never closures; timers are cancelled lazily by generation number in their owner.
//!
//! A sequence number can be reserved when an event is foreseen and the event queued later
//! under it (or never, when its owner can show that it would change nothing): its place among
//! equal-time events is then the one it had when foreseen, so results do not depend on it.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The (time, sequence) order packed into one integer, compared in a single operation.
fn key(at: Time, seq: u64) -> u128 {
    (at.0 as u128) << 64 | seq as u128
}

struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    executed: u64,
    /// Key of the event last popped: the position of the run in the (time, sequence) order.
    current: u128,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler { heap: BinaryHeap::with_capacity(1024), next_seq: 0, executed: 0, current: 0 }
    }
}

impl<E> Scheduler<E> {
    pub fn schedule(&mut self, at: Time, event: E) {
        let seq = self.reserve();
        self.schedule_reserved(at, seq, event);
    }

    /// Take the sequence number an event scheduled now would get, without queueing it.
    pub fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Queue an event under a sequence number taken earlier with [`Scheduler::reserve`].
    pub fn schedule_reserved(&mut self, at: Time, seq: u64, event: E) {
        debug_assert!(key(at, seq) > self.current, "an event scheduled in the past");
        self.heap.push(Entry { key: key(at, seq), event });
    }

    /// Whether an event at (at, seq) would already have run: it precedes the one last popped.
    pub fn has_passed(&self, at: Time, seq: u64) -> bool {
        key(at, seq) < self.current
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time((e.key >> 64) as u64))
    }

    /// The next event if it is due at or before `horizon`.
    pub fn pop_until(&mut self, horizon: Time) -> Option<(Time, E)> {
        if self.heap.peek()?.key > key(horizon, u64::MAX) {
            return None;
        }
        self.executed += 1;
        let e = self.heap.pop()?;
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
}
