//! The SACK scoreboard of a sender (RFC 2018 blocks, RFC 6675 loss recovery): the byte ranges
//! above snd_una that the receiver reported holding, and the queries RFC 6675 needs —
//! IsLost (by the bytes rule: more than (DupThresh − 1)·SMSS bytes SACKed above a sequence
//! number), the next hole to repair, and unSACKed byte counts for SetPipe. All queries walk
//! the few blocks there are, never the window, so they stay cheap at any bandwidth.

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges [start, end), sorted and disjoint, all above snd_una.
    blocks: Vec<(u64, u64)>,
}

impl Scoreboard {
    /// Forget everything below the cumulative ACK.
    pub fn advance(&mut self, snd_una: u64) {
        self.blocks.retain(|&(_, e)| e > snd_una);
        if let Some(first) = self.blocks.first_mut() {
            first.0 = first.0.max(snd_una);
        }
    }

    /// Record a reported block, merging with its neighbours.
    pub fn add(&mut self, start: u64, end: u64) {
        crate::ranges::insert(&mut self.blocks, start, end);
    }

    /// SACKed bytes within [a, b).
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        self.blocks.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum()
    }

    /// UnSACKed bytes within [a, b).
    pub fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        b.saturating_sub(a) - self.sacked_in(a, b)
    }

    /// The end of the SACKed block containing `seq`, if any.
    pub fn block_end_containing(&self, seq: u64) -> Option<u64> {
        self.blocks.iter().find(|&&(s, e)| s <= seq && seq < e).map(|&(_, e)| e)
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

    /// The first unSACKed sequence number in [from, limit).
    pub fn next_hole(&self, from: u64, limit: u64) -> Option<u64> {
        let mut seq = from;
        for &(s, e) in &self.blocks {
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
        assert_eq!(b.blocks, vec![(2001, 8001)]);
        b.advance(3001);
        assert_eq!(b.blocks, vec![(3001, 8001)]);
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
}
