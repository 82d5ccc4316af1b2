//! The event queue: a binary heap keyed by (time, insertion sequence), so events due at the same
//! instant run first-in first-out and every run is deterministic. Events are small typed values,
//! never closures; timers are cancelled lazily by generation number in their owner.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
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
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    executed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler { heap: BinaryHeap::with_capacity(1024), next_seq: 0, executed: 0 }
    }
}

impl<E> Scheduler<E> {
    pub fn schedule(&mut self, at: Time, event: E) {
        self.heap.push(Entry { at, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// The next event if it is due at or before `horizon`.
    pub fn pop_until(&mut self, horizon: Time) -> Option<(Time, E)> {
        if self.heap.peek()?.at > horizon {
            return None;
        }
        self.executed += 1;
        self.heap.pop().map(|e| (e.at, e.event))
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
}
