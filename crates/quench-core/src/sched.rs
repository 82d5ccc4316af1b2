//! The event queue: a binary heap keyed by (time, rank), where an event's rank is a function
//! of its own content (its class, the component it belongs to, a sub-key; see [`Ranked`]), so
//! events due at the same instant run in an order that does not depend on when they were
//! queued, and every run is deterministic. Events are small typed values, never closures;
//! timers are cancelled lazily by generation number in their owner.
//!
//! Owns the order and the heap; what an event means, and so its rank, is its owner's
//! (`world.rs`). The order is described and argued in docs/design.md ("Simultaneous events").

use crate::units::Time;

/// An event's place among events due at the same instant, taken from its content alone: the
/// event and the instant it is due at.
pub trait Ranked {
    fn rank(&self, at: Time) -> u64;
}

/// Bits of a rank below the class: 32 for a component id, [`SUB_KEY_BITS`] for a sub-key.
const CLASS_SHIFT: u32 = 60;
/// Bits of a rank for a sub-key within a component (e.g. a timer's kind and generation).
pub const SUB_KEY_BITS: u32 = 28;

/// A rank packed as class (4 bits) | component id (32 bits) | sub-key (28 bits): the whole
/// equal-time order in the low half of the heap's u128 key, compared in one operation.
#[inline(always)]
pub const fn rank(class: u8, component: u32, sub_key: u32) -> u64 {
    debug_assert!(class < 16 && sub_key < 1 << SUB_KEY_BITS);
    (class as u64) << CLASS_SHIFT | (component as u64) << SUB_KEY_BITS | sub_key as u64
}

/// Plain numbers rank as themselves (the event-queue benchmark's events).
impl Ranked for u32 {
    fn rank(&self, _at: Time) -> u64 {
        *self as u64
    }
}

/// The (time, rank) order packed into one integer, compared in a single operation.
#[inline(always)]
fn key(at: Time, rank: u64) -> u128 {
    (at.0 as u128) << 64 | rank as u128
}

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// A binary min-heap on `key` whose popped root is removed lazily. Handling an event nearly
/// always queues another one first (a link's next arrival, its next end of transmission), so
/// the new entry simply takes the vacated root's place: one sift instead of the removal's
/// and the insertion's two. Two pending entries share a key only if their events are equal
/// (or one is a stale timer, see `world.rs`), so the pop order is the (time, rank) order
/// whatever the heap's shape.
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
    executed: u64,
    /// The largest key popped so far: how far the run has gone in the (time, rank) order.
    current: u128,
    /// Test builds only: events held back and queued in another order (see [`PushOrder`]).
    #[cfg(test)]
    held: Held<E>,
}

impl<E: Copy + Ranked> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler {
            heap: Heap::with_capacity(1024),
            executed: 0,
            current: 0,
            #[cfg(test)]
            held: Held { order: PUSH_ORDER.with(|o| o.get()), entries: Vec::new() },
        }
    }
}

impl<E: Copy + Ranked> Scheduler<E> {
    /// Queue `event` at `at`; among events due then it takes the place its rank gives it. An
    /// event queued for the current instant with a rank below the current event's runs next.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at.0 >= (self.current >> 64) as u64, "an event scheduled in the past");
        let entry = Entry { key: key(at, event.rank(at)), event };
        #[cfg(test)]
        if self.held.order != PushOrder::AsScheduled {
            self.held.entries.push(entry);
            return;
        }
        self.heap.push(entry);
    }

    /// Whether `event`, due at `at`, would already have run: it precedes, in the (time, rank)
    /// order, an event already popped. An event foreseen before its instant came (a link's
    /// deferred end of transmission) would have been popped before every later-ranked event
    /// of its instant, even those popped after an earlier-ranked event queued late at that
    /// instant (an arrival over a link without delay): so the largest key popped, not the
    /// last, tells whether it has run, and deferring it changes nothing.
    pub fn has_passed(&self, at: Time, event: &E) -> bool {
        key(at, event.rank(at)) < self.current
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        #[cfg(test)]
        self.release_held();
        self.heap.peek().map(|e| Time((e.key >> 64) as u64))
    }

    /// The next event if it is due at or before `horizon`. Inlined into the run loop: called
    /// once per event, its call and the copy of its returned event cost as much as its body.
    #[inline]
    pub fn pop_until(&mut self, horizon: Time) -> Option<(Time, E)> {
        #[cfg(test)]
        self.release_held();
        let e = self.heap.take_root_if(|k| k <= key(horizon, u64::MAX))?;
        self.executed += 1;
        self.current = self.current.max(e.key);
        Some((Time((e.key >> 64) as u64), e.event))
    }

    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }
}

/// The order in which a test build queues the events scheduled between two pops (those one
/// handler schedules): the results must not depend on it. Release builds have no such mode.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PushOrder {
    AsScheduled,
    Reversed,
    /// A seeded random permutation.
    Shuffled(u64),
}

#[cfg(test)]
thread_local! {
    /// The push order of the schedulers this thread makes from now on.
    static PUSH_ORDER: std::cell::Cell<PushOrder> = const { std::cell::Cell::new(PushOrder::AsScheduled) };
}

/// Make the schedulers this thread creates from now on queue events in `order`.
#[cfg(test)]
pub(crate) fn set_push_order(order: PushOrder) {
    PUSH_ORDER.with(|o| o.set(order));
}

#[cfg(test)]
struct Held<E> {
    order: PushOrder,
    entries: Vec<Entry<E>>,
}

#[cfg(test)]
impl<E: Copy + Ranked> Scheduler<E> {
    /// Queue the held events in the test's order.
    fn release_held(&mut self) {
        let mut held = std::mem::take(&mut self.held.entries);
        match self.held.order {
            PushOrder::AsScheduled => {}
            PushOrder::Reversed => held.reverse(),
            PushOrder::Shuffled(seed) => {
                let mut rng = crate::rng::Rng::from_seed(seed ^ self.executed);
                for i in (1..held.len()).rev() {
                    held.swap(i, rng.range_inclusive(0, i as u64) as usize);
                }
            }
        }
        for entry in held.drain(..) {
            self.heap.push(entry);
        }
        self.held.entries = held;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test events: (class, component, sub-key), ranked as the world ranks its own.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Ev(u8, u32, u32);

    impl Ranked for Ev {
        fn rank(&self, _at: Time) -> u64 {
            rank(self.0, self.1, self.2)
        }
    }

    fn drain<E: Copy + Ranked>(s: &mut Scheduler<E>, horizon: Time) -> Vec<E> {
        std::iter::from_fn(|| s.pop_until(horizon).map(|(_, e)| e)).collect()
    }

    #[test]
    fn orders_by_time_then_rank() {
        let mut s = Scheduler::default();
        s.schedule(Time(5), Ev(1, 0, 0));
        s.schedule(Time(1), Ev(2, 0, 0));
        s.schedule(Time(5), Ev(0, 9, 0));
        s.schedule(Time(1), Ev(0, 3, 1));
        s.schedule(Time(1), Ev(0, 3, 0));
        s.schedule(Time(9), Ev(0, 0, 0));
        assert_eq!(drain(&mut s, Time(8)), [Ev(0, 3, 0), Ev(0, 3, 1), Ev(2, 0, 0), Ev(0, 9, 0), Ev(1, 0, 0)]);
        assert_eq!(s.peek_time(), Some(Time(9)));
        assert_eq!(s.executed(), 5);
    }

    /// The class is the most significant field, then the component, then the sub-key, at
    /// their extreme values: no field spills into another.
    #[test]
    fn rank_fields_do_not_overlap() {
        let top_sub = (1 << SUB_KEY_BITS) - 1;
        assert!(rank(0, u32::MAX, top_sub) < rank(1, 0, 0));
        assert!(rank(6, 7, top_sub) < rank(6, 8, 0));
        assert!(rank(15, u32::MAX, top_sub) > rank(15, u32::MAX, top_sub - 1));
        assert_eq!(rank(15, u32::MAX, top_sub), u64::MAX);
    }

    /// An event foreseen for an instant has passed once a later-ranked event of that instant
    /// has run, even after an earlier-ranked one queued at that instant ran after it.
    #[test]
    fn has_passed_follows_the_furthest_key() {
        let mut s = Scheduler::default();
        s.schedule(Time(5), Ev(2, 0, 0));
        let foreseen = Ev(1, 4, 0);
        assert!(!s.has_passed(Time(5), &foreseen));
        s.pop_until(Time(5));
        assert!(s.has_passed(Time(5), &foreseen) && !s.has_passed(Time(5), &Ev(3, 0, 0)));
        s.schedule(Time(5), Ev(0, 0, 0));
        assert_eq!(drain(&mut s, Time(5)), [Ev(0, 0, 0)]);
        assert!(s.has_passed(Time(5), &foreseen), "the late, earlier-ranked event moved nothing back");
        assert!(!s.has_passed(Time(6), &Ev(0, 0, 0)));
    }

    /// The same events queued in any order come out in one order.
    #[test]
    fn pop_order_does_not_depend_on_push_order() {
        let events: Vec<(u64, Ev)> = (0..200u32).map(|i| ((i % 7) as u64, Ev((i % 5) as u8, i % 11, i / 55))).collect();
        let mut orders = vec![];
        for order in [PushOrder::AsScheduled, PushOrder::Reversed, PushOrder::Shuffled(1), PushOrder::Shuffled(2)] {
            set_push_order(order);
            let mut s = Scheduler::default();
            for &(t, e) in &events {
                s.schedule(Time(t), e);
            }
            orders.push(drain(&mut s, Time::MAX));
        }
        set_push_order(PushOrder::AsScheduled);
        assert!(orders.windows(2).all(|w| w[0] == w[1]));
        let mut sorted = events.clone();
        sorted.sort_by_key(|(t, e)| key(Time(*t), e.rank(Time(*t))));
        assert_eq!(orders[0], sorted.into_iter().map(|(_, e)| e).collect::<Vec<_>>());
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
        let mut next = 0u32;
        for round in 0..20_000u32 {
            let pushes = if round % 5000 < 2500 { 2 } else { 0 };
            for _ in 0..pushes {
                let at = now + (rng.uniform() * 1000.0) as u64;
                s.schedule(Time(at), next);
                reference.insert((at, next));
                next += 1;
            }
            let expected = reference.pop_first();
            let got = s.pop_until(Time::MAX).map(|(t, e)| (t.0, e));
            assert_eq!(got, expected);
            if let Some((t, _)) = got {
                now = t;
            }
            assert_eq!(s.pending(), reference.len());
        }
    }
}
