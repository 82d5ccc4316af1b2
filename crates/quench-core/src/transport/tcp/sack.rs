//! The SACK scoreboard of a sender (RFC 2018 blocks, RFC 6675 loss recovery): the byte ranges
//! above snd_una that the receiver reported holding, and the queries RFC 6675 needs —
//! IsLost (by the bytes rule: more than (DupThresh − 1)·SMSS bytes SACKed above a sequence
//! number), the next hole to repair, the highest SACKed octet (NextSeg rule 3's bound), the
//! highest hole (rule 4's rescue), and unSACKed byte counts for SetPipe. All queries walk
//! the few blocks there are, never the window, so they stay cheap at any bandwidth.
//! An ACK's first block may be a D-SACK (RFC 2883): `dsack` tells it apart, `reported` gives
//! the blocks that report data held above the cumulative ACK.
//! Owns the SACKed ranges of the send sequence space and the reading of an ACK's blocks. It
//! sends nothing: the sender's recovery asks it.

use crate::packet::SackBlocks;
use crate::ranges::FrontVec;

/// The D-SACK block an ACK carries, if any (RFC 2883 section 4, as Linux's
/// `tcp_check_dsack`): its first block, when that lies below the cumulative ACK `ack` or
/// within the second block. A receiver without D-SACK never sends such a first block: its
/// blocks lie above the ACK and apart.
pub fn dsack(blocks: &SackBlocks, ack: u64) -> Option<(u64, u64)> {
    let mut ranges = blocks.ranges(ack);
    let first = ranges.next()?;
    let within_second = ranges.next().is_some_and(|(s, e)| s <= first.0 && first.1 <= e);
    (first.0 < ack || within_second).then_some(first)
}

/// The blocks that report data held above `ack`: every block but a D-SACK one, which tells
/// of a duplicate, never of data newly held.
pub fn reported(blocks: &SackBlocks, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
    blocks.ranges(ack).skip(dsack(blocks, ack).is_some() as usize)
}

/// Both lists drop their front lazily (`ranges::FrontVec`): the cumulative ACK takes blocks
/// from the front while new ones join at the back.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// SACKed ranges [start, end), sorted and disjoint, all above snd_una.
    blocks: FrontVec<(u64, u64)>,
    /// Running totals: `cum[i + 1] - cum[i]` is the size of `blocks[i]` (one entry more than
    /// `blocks`; the base `cum[0]` is arbitrary). Counting SACKed bytes in a range is then two
    /// binary searches: after a burst of losses there are thousands of blocks, and SetPipe
    /// runs for every segment sent in recovery.
    cum: FrontVec<u64>,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard { blocks: FrontVec::default(), cum: FrontVec::from(vec![0]) }
    }
}

impl Scoreboard {
    /// Forget everything below the cumulative ACK.
    pub fn advance(&mut self, snd_una: u64) {
        let gone = self.blocks.partition_point(|&(_, e)| e <= snd_una);
        if gone > 0 {
            self.blocks.drop_front(gone);
            self.cum.drop_front(gone);
        }
        if let Some(first) = self.blocks.first_mut() {
            if first.0 < snd_una {
                self.cum[0] += snd_una - first.0;
                first.0 = snd_una;
            }
        }
    }

    /// Record a reported block, merging with its neighbours (as `ranges::insert`).
    pub fn add(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let i = self.blocks.partition_point(|&(_, e)| e < start);
        let mut j = i;
        let (mut lo, mut hi) = (start, end);
        while j < self.blocks.len() && self.blocks[j].0 <= hi {
            lo = lo.min(self.blocks[j].0);
            hi = hi.max(self.blocks[j].1);
            j += 1;
        }
        // The merged block covers the blocks it replaces, so it never holds fewer bytes.
        let grown = (hi - lo) - (self.cum[j] - self.cum[i]);
        self.blocks.replace(i..j, (lo, hi));
        let merged_end = self.cum[i] + (hi - lo);
        self.cum.replace(i + 1..j + 1, merged_end);
        for c in &mut self.cum[i + 2..] {
            *c += grown;
        }
    }

    /// SACKed bytes within [a, b).
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        let first = self.blocks.partition_point(|&(_, e)| e <= a);
        let past = self.blocks.partition_point(|&(s, _)| s < b);
        if a >= b || first >= past {
            return 0;
        }
        let (lo, hi) = (self.blocks[first].0, self.blocks[past - 1].1);
        self.cum[past] - self.cum[first] - a.saturating_sub(lo) - hi.saturating_sub(b)
    }

    /// UnSACKed bytes within [a, b).
    pub fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        b.saturating_sub(a) - self.sacked_in(a, b)
    }

    /// The end of the SACKed block containing `seq`, if any.
    pub fn block_end_containing(&self, seq: u64) -> Option<u64> {
        crate::ranges::containing(&self.blocks, seq).map(|i| self.blocks[i].1)
    }

    /// RFC 6675 IsLost by the bytes rule: every sequence number below the returned bound has
    /// more than `threshold` bytes SACKed above it. 0 when nothing is lost.
    pub fn lost_below(&self, threshold: u64) -> u64 {
        let mut above = 0;
        for &(s, e) in self.blocks.iter().rev() {
            // Within [s, e), octet q has above + (e − 1 − q) SACKed octets beyond it.
            if above + (e - s) > threshold {
                return e - 1 - (threshold - above);
            }
            above += e - s;
        }
        0
    }

    /// The unSACKed ranges within [a, b), in order: what an ACK or a new block covering
    /// [a, b) delivers for the first time (delivery-rate estimation counts each byte once).
    pub fn holes_in(&self, a: u64, b: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let skip = self.blocks.partition_point(|&(_, e)| e <= a);
        let mut blocks = self.blocks[skip..].iter();
        let mut seq = a;
        std::iter::from_fn(move || {
            while seq < b {
                let lo = seq;
                let hi = match blocks.next() {
                    // The hole ends where the next block starts; the walk resumes past it.
                    Some(&(s, e)) if s < b => {
                        seq = seq.max(e);
                        s
                    }
                    _ => {
                        seq = b;
                        b
                    }
                };
                if lo < hi {
                    return Some((lo, hi));
                }
            }
            None
        })
    }

    /// One past the highest SACKed octet (RFC 6675 NextSeg rule 1.b's bound), if any.
    pub fn sacked_end(&self) -> Option<u64> {
        self.blocks.last().map(|&(_, e)| e)
    }

    /// The highest unSACKed range within [a, b): where the highest outstanding unSACKed
    /// sequence number lies (RFC 6675 NextSeg rule 4). Blocks are disjoint and apart, so the
    /// walk down from `b` ends within two steps.
    pub fn last_hole(&self, a: u64, b: u64) -> Option<(u64, u64)> {
        let below = self.blocks.partition_point(|&(s, _)| s < b);
        let mut hi = b;
        for &(s, e) in self.blocks[..below].iter().rev() {
            if hi <= a {
                return None;
            }
            if e < hi {
                return Some((e.max(a), hi));
            }
            hi = s; // the block reaches up to `hi`: the hole, if any, ends where it starts
        }
        (a < hi).then_some((a, hi))
    }

    /// The first unSACKed sequence number in [from, limit). Blocks ending at or below `from`
    /// cannot hold it, so the walk starts at the first block past `from` (and, blocks being
    /// disjoint and apart, ends within two steps).
    pub fn next_hole(&self, from: u64, limit: u64) -> Option<u64> {
        let mut seq = from;
        let skip = self.blocks.partition_point(|&(_, e)| e <= from);
        for &(s, e) in &self.blocks[skip..] {
            if seq >= limit {
                return None;
            }
            if seq < s {
                return Some(seq);
            }
            seq = seq.max(e);
        }
        (seq < limit).then_some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 2883 section 4's examples: a first block below the ACK (section 4.1.1), one within
    /// the second block (4.1.3), and ordinary blocks (none).
    #[test]
    fn a_dsack_block_is_told_apart() {
        let blocks = |b: &[(i32, i32)]| {
            let mut out = SackBlocks::default();
            out.offsets[..b.len()].copy_from_slice(b);
            out
        };
        let below = blocks(&[(-1000, -500), (500, 1000)]);
        assert_eq!(dsack(&below, 4000), Some((3000, 3500)));
        assert_eq!(reported(&below, 4000).collect::<Vec<_>>(), vec![(4500, 5000)]);
        let within = blocks(&[(1000, 1500), (500, 2000), (3000, 3500)]);
        assert_eq!(dsack(&within, 4000), Some((5000, 5500)));
        assert_eq!(reported(&within, 4000).collect::<Vec<_>>(), vec![(4500, 6000), (7000, 7500)]);
        let plain = blocks(&[(3000, 3500), (500, 2000)]);
        assert_eq!(dsack(&plain, 4000), None);
        assert_eq!(reported(&plain, 4000).count(), 2);
        assert_eq!(dsack(&SackBlocks::default(), 4000), None);
    }

    #[test]
    fn holes_are_the_unsacked_parts_of_a_range() {
        let mut sb = Scoreboard::default();
        sb.add(200, 300);
        sb.add(400, 500);
        let holes = |a, b| sb.holes_in(a, b).collect::<Vec<_>>();
        assert_eq!(holes(100, 600), vec![(100, 200), (300, 400), (500, 600)]);
        assert_eq!(holes(250, 450), vec![(300, 400)]);
        assert_eq!(holes(200, 300), vec![]);
        assert_eq!(holes(150, 250), vec![(150, 200)]);
        assert_eq!(holes(0, 100), vec![(0, 100)]);
        assert_eq!(holes(450, 460), vec![]);
    }

    const MSS: u64 = 1000;

    /// Segments 1..=10 of 1000 bytes starting at seq 1; the receiver holds 3, 4, 6, 7, 8.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        b.add(2001, 4001);
        b.add(5001, 8001);
        b
    }

    #[test]
    fn merges_and_trims() {
        let mut b = board();
        b.add(4001, 5001); // fills the gap between the two blocks
        assert_eq!(*b.blocks, [(2001, 8001)]);
        b.advance(3001);
        assert_eq!(*b.blocks, [(3001, 8001)]);
        b.advance(9001);
        assert!(b.blocks.is_empty());
    }

    #[test]
    fn is_lost_by_the_bytes_rule() {
        // DupThresh 3: lost when more than 2·MSS octets beyond it are SACKed. Octet 5999 has
        // 6000..=8000 (2001) beyond it, octet 6000 only 2000: the bound is 6000, so segment 5
        // (4001..=5000) is lost and so are 1 and 2.
        let b = board();
        assert_eq!(b.lost_below(2 * MSS), 6000);
        assert_eq!(b.next_hole(1, 6000), Some(1)); // segment 1
        assert_eq!(b.next_hole(2001, 6000), Some(4001)); // segment 5, skipping 3 and 4
        assert_eq!(b.next_hole(5001, 6000), None);
        assert_eq!(b.next_hole(8001, 20_000), Some(8001));
    }

    #[test]
    fn counts_for_set_pipe() {
        let b = board();
        assert_eq!(b.sacked_in(1, 10_001), 5000);
        assert_eq!(b.unsacked_in(1, 10_001), 5000);
        assert_eq!(b.unsacked_in(1, 6001), 3000); // segments 1, 2, 5
        assert_eq!(b.block_end_containing(5500), Some(8001));
        assert_eq!(b.block_end_containing(4500), None);
    }

    /// The queries by their definitions, one block at a time (the reference for the indexed
    /// versions above).
    fn naive_sacked_in(blocks: &[(u64, u64)], a: u64, b: u64) -> u64 {
        blocks.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum()
    }
    fn naive_next_hole(blocks: &[(u64, u64)], from: u64, limit: u64) -> Option<u64> {
        (from..limit).find(|q| !blocks.iter().any(|&(s, e)| s <= *q && *q < e))
    }

    fn naive_last_hole(blocks: &[(u64, u64)], a: u64, b: u64) -> Option<(u64, u64)> {
        let held = |q: u64| blocks.iter().any(|&(s, e)| s <= q && q < e);
        let hi = (a..b).rev().find(|&q| !held(q))? + 1;
        let lo = (a..hi).rev().find(|&q| held(q)).map_or(a, |q| q + 1);
        Some((lo, hi))
    }

    #[test]
    fn the_highest_hole_and_sacked_octet() {
        // Segments 1 and 2, 5, 9 and 10 unSACKed (snd_max 10 001).
        let b = board();
        assert_eq!(b.sacked_end(), Some(8001));
        assert_eq!(b.last_hole(1, 10_001), Some((8001, 10_001)));
        assert_eq!(b.last_hole(1, 8001), Some((4001, 5001)));
        assert_eq!(b.last_hole(1, 4001), Some((1, 2001)));
        assert_eq!(b.last_hole(2001, 4001), None);
        assert_eq!(b.last_hole(4500, 6000), Some((4500, 5001)));
        assert_eq!(Scoreboard::default().last_hole(5, 9), Some((5, 9)));
        assert_eq!(Scoreboard::default().sacked_end(), None);
    }

    /// Random SACK blocks, cumulative ACKs and queries: the indexed scoreboard answers every
    /// query exactly as the definitions do, and its blocks match `ranges::insert`'s.
    #[test]
    fn indexed_queries_match_definitions() {
        let mut rng = crate::rng::Rng::from_seed(7);
        let mut b = Scoreboard::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut una = 0;
        for step in 0..3000 {
            if step % 50 == 49 {
                una += rng.range_inclusive(0, 300);
                reference.retain(|&(_, e)| e > una);
                if let Some(first) = reference.first_mut() {
                    first.0 = first.0.max(una);
                }
                b.advance(una);
            } else {
                let start = una + rng.range_inclusive(0, 2000);
                let end = start + rng.range_inclusive(0, 60);
                let mut merged = FrontVec::from(reference);
                crate::ranges::insert(&mut merged, start, end);
                reference = merged.to_vec();
                b.add(start, end);
            }
            assert_eq!(*b.blocks, reference);
            let a = una + rng.range_inclusive(0, 2100);
            let z = a + rng.range_inclusive(0, 400);
            assert_eq!(b.sacked_in(a, z), naive_sacked_in(&reference, a, z), "sacked_in({a}, {z})");
            assert_eq!(b.sacked_in(z, a), 0);
            assert_eq!(b.next_hole(a, z), naive_next_hole(&reference, a, z), "next_hole({a}, {z})");
            assert_eq!(b.last_hole(a, z), naive_last_hole(&reference, a, z), "last_hole({a}, {z})");
            assert_eq!(b.sacked_end(), reference.last().map(|r| r.1));
            let inside = reference.iter().find(|&&(s, e)| s <= a && a < e).map(|&(_, e)| e);
            assert_eq!(b.block_end_containing(a), inside);
        }
    }
}
