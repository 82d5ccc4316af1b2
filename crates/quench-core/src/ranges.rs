//! Sorted, disjoint [start, end) ranges: the shape shared by a TCP receiver's reassembly
//! queue, a sender's SACK scoreboard and an IP reassembly buffer.
//!
//! A receiver's list and a sender's scoreboard are used at both ends: a segment beyond the
//! holes extends or follows the last range, and a repaired hole (the cumulative ACK) takes the
//! first. With a window of tens of thousands of segments there are thousands of ranges, and a
//! `Vec` shifted all of them on every repair: one flow on a 10 Gb/s dumbbell spent 42 % of its
//! run moving them (docs/benchmarks.md, "Large windows: the range lists"). The lists are
//! therefore [`FrontVec`]s, whose front is removed in amortised constant time while every
//! query still sees one contiguous slice.
//! Owns the ranges only: it knows no packet, sequence-number wrap or clock; its users say what a
//! range means.

use std::ops::{Deref, DerefMut, Range};

/// A `Vec` whose leading elements are removed lazily: [`FrontVec::drop_front`] moves a start
/// index, and the dead prefix is reclaimed once it is at least half of the storage, which
/// moves fewer live elements than were removed since the last reclaim: a removal costs
/// amortised constant time. It reads as the slice of its live elements.
#[derive(Clone, Debug)]
pub struct FrontVec<T> {
    items: Vec<T>,
    /// Index in `items` of the first live element.
    first: usize,
}

impl<T> Default for FrontVec<T> {
    fn default() -> Self {
        FrontVec { items: Vec::new(), first: 0 }
    }
}

impl<T> From<Vec<T>> for FrontVec<T> {
    fn from(items: Vec<T>) -> Self {
        FrontVec { items, first: 0 }
    }
}

impl<T> Deref for FrontVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.items[self.first..]
    }
}

impl<T> DerefMut for FrontVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[self.first..]
    }
}

impl<T> FrontVec<T> {
    /// Remove the first `n` live elements (`n` at most their number).
    pub fn drop_front(&mut self, n: usize) {
        debug_assert!(n <= self.len(), "dropping more than the live elements");
        self.first += n;
        if self.first == self.items.len() {
            self.items.clear();
            self.first = 0;
        } else if 2 * self.first >= self.items.len() {
            self.items.drain(..self.first);
            self.first = 0;
        }
    }

    /// Replace the live elements `within` (possibly none) by `value`: `Vec::splice` with one
    /// element.
    pub fn replace(&mut self, within: Range<usize>, value: T) {
        let (start, end) = (self.first + within.start, self.first + within.end);
        if start == end {
            self.items.insert(start, value);
        } else {
            self.items[start] = value;
            self.items.drain(start + 1..end);
        }
    }
}

/// Insert [start, end) into `list` (sorted, disjoint), merging every range it touches.
pub fn insert<T: Ord + Copy>(list: &mut FrontVec<(T, T)>, start: T, end: T) {
    if start >= end {
        return;
    }
    let i = list.partition_point(|&(_, e)| e < start);
    let mut j = i;
    let (mut lo, mut hi) = (start, end);
    while j < list.len() && list[j].0 <= hi {
        lo = lo.min(list[j].0);
        hi = hi.max(list[j].1);
        j += 1;
    }
    list.replace(i..j, (lo, hi));
}

/// Index of the range of `list` (sorted, disjoint) that holds `point`, if one does.
pub fn containing<T: Ord + Copy>(list: &[(T, T)], point: T) -> Option<usize> {
    let i = list.partition_point(|&(_, e)| e <= point);
    (i < list.len() && list[i].0 <= point).then_some(i)
}

/// Take every leading range that starts at or before `next` (so is contiguous with it) and
/// return how far `next` then reaches: a receiver's in-order point after a reassembly insert.
pub fn advance<T: Ord + Copy>(list: &mut FrontVec<(T, T)>, mut next: T) -> T {
    let taken = list.partition_point(|&(start, _)| start <= next);
    for &(_, end) in &list[..taken] {
        next = next.max(end);
    }
    list.drop_front(taken);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[(u64, u64)]) -> FrontVec<(u64, u64)> {
        FrontVec::from(v.to_vec())
    }

    #[test]
    fn merges_overlapping_and_touching_ranges() {
        let mut v = FrontVec::default();
        insert(&mut v, 10, 20);
        insert(&mut v, 30, 40);
        assert_eq!(*v, [(10, 20), (30, 40)]);
        insert(&mut v, 20, 25); // touches the first
        assert_eq!(*v, [(10, 25), (30, 40)]);
        insert(&mut v, 5, 35); // swallows both
        assert_eq!(*v, [(5, 40)]);
        insert(&mut v, 50, 50); // empty: ignored
        insert(&mut v, 0, 2);
        assert_eq!(*v, [(0, 2), (5, 40)]);
    }

    #[test]
    fn advance_takes_the_ranges_contiguous_with_the_point() {
        let mut v = list(&[(5, 8), (10, 12), (20, 30)]);
        assert_eq!(advance(&mut v, 3), 3, "a gap before the first range");
        assert_eq!(v.len(), 3);
        assert_eq!(advance(&mut v, 5), 8, "touching: taken");
        assert_eq!(*v, [(10, 12), (20, 30)]);
        assert_eq!(advance(&mut v, 25), 30, "the point inside later ranges: all up to it taken");
        assert!(v.is_empty());
        let mut old = list(&[(1, 4)]);
        assert_eq!(advance(&mut old, 9), 9, "data already delivered is dropped, the point stays");
        assert!(old.is_empty());
    }

    #[test]
    fn containing_finds_the_range_of_a_point() {
        let v = list(&[(5, 8), (10, 12)]);
        let found: Vec<_> = (0..14).map(|p| containing(&v, p)).collect();
        let mut expected = vec![None; 14];
        expected[5..8].fill(Some(0));
        expected[10..12].fill(Some(1));
        assert_eq!(found, expected, "ends are exclusive");
    }

    /// The front is dropped lazily and the storage reclaimed once the dead prefix is half of
    /// it; the live elements read the same throughout, and `replace` indexes them, not the
    /// storage.
    #[test]
    fn front_vec_drops_lazily_and_reclaims() {
        let mut v = FrontVec::from((0..10).collect::<Vec<u32>>());
        v.drop_front(3);
        assert_eq!(*v, [3, 4, 5, 6, 7, 8, 9]);
        assert_eq!((v.first, v.items.len()), (3, 10), "lazily");
        v.replace(1..3, 45);
        assert_eq!(*v, [3, 45, 6, 7, 8, 9]);
        v.replace(0..0, 2);
        assert_eq!(*v, [2, 3, 45, 6, 7, 8, 9]);
        v.drop_front(4);
        assert_eq!(*v, [7, 8, 9]);
        assert_eq!((v.first, v.items.len()), (0, 3), "reclaimed at half");
        v.drop_front(3);
        assert!(v.is_empty() && v.items.is_empty());
    }

    /// Against a bitmap of the points covered: after every insert and advance the list is the
    /// bitmap's maximal runs in order, however much of its storage is a dead prefix (ranges
    /// taken from the front and added at the back, as a receiver does).
    #[test]
    fn matches_a_bitmap_reference() {
        use crate::rng::Rng;
        const SPAN: usize = 400;
        let mut rng = Rng::from_seed(11);
        let mut v = FrontVec::default();
        let mut covered = [false; SPAN];
        let mut next = 0usize;
        for round in 0..20_000 {
            let start = next + (rng.uniform() * 60.0) as usize;
            let end = (start + 1 + (rng.uniform() * 8.0) as usize).min(SPAN);
            if start < end {
                insert(&mut v, start as u64, end as u64);
                covered[start..end].iter_mut().for_each(|c| *c = true);
            }
            if round % 3 == 0 {
                let reached = advance(&mut v, next as u64) as usize;
                let mut expected = next;
                while expected < SPAN && covered[expected] {
                    expected += 1;
                }
                assert_eq!(reached, expected);
                next = reached;
            }
            let runs: Vec<(u64, u64)> = (next..SPAN)
                .filter(|&p| covered[p] && (p == next || !covered[p - 1]))
                .map(|p| (p as u64, (p..SPAN).find(|&q| !covered[q]).unwrap_or(SPAN) as u64))
                .collect();
            assert_eq!(*v, runs, "round {round}");
            if next + 70 >= SPAN {
                (v, covered, next) = (FrontVec::default(), [false; SPAN], 0);
            }
        }
    }
}
