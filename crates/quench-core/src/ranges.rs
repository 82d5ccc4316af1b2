//! Sorted, disjoint [start, end) ranges: the shape shared by a TCP receiver's reassembly
//! queue, a sender's SACK scoreboard and an IP reassembly buffer.

/// Insert [start, end) into `list` (sorted, disjoint), merging every range it touches.
pub fn insert<T: Ord + Copy>(list: &mut Vec<(T, T)>, start: T, end: T) {
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
    list.splice(i..j, [(lo, hi)]);
}

/// Take every leading range that starts at or before `next` (so is contiguous with it) and
/// return how far `next` then reaches: a receiver's in-order point after a reassembly insert.
pub fn advance<T: Ord + Copy>(list: &mut Vec<(T, T)>, mut next: T) -> T {
    let taken = list.partition_point(|&(start, _)| start <= next);
    for &(_, end) in &list[..taken] {
        next = next.max(end);
    }
    list.drain(..taken);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_overlapping_and_touching_ranges() {
        let mut v: Vec<(u64, u64)> = vec![];
        insert(&mut v, 10, 20);
        insert(&mut v, 30, 40);
        assert_eq!(v, vec![(10, 20), (30, 40)]);
        insert(&mut v, 20, 25); // touches the first
        assert_eq!(v, vec![(10, 25), (30, 40)]);
        insert(&mut v, 5, 35); // swallows both
        assert_eq!(v, vec![(5, 40)]);
        insert(&mut v, 50, 50); // empty: ignored
        insert(&mut v, 0, 2);
        assert_eq!(v, vec![(0, 2), (5, 40)]);
    }

    #[test]
    fn advance_takes_the_ranges_contiguous_with_the_point() {
        let mut v: Vec<(u64, u64)> = vec![(5, 8), (10, 12), (20, 30)];
        assert_eq!(advance(&mut v, 3), 3, "a gap before the first range");
        assert_eq!(v.len(), 3);
        assert_eq!(advance(&mut v, 5), 8, "touching: taken");
        assert_eq!(v, vec![(10, 12), (20, 30)]);
        assert_eq!(advance(&mut v, 25), 30, "the point inside later ranges: all up to it taken");
        assert!(v.is_empty());
        let mut old = vec![(1u64, 4u64)];
        assert_eq!(advance(&mut old, 9), 9, "data already delivered is dropped, the point stays");
        assert!(old.is_empty());
    }
}
