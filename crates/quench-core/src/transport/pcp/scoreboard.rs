//! Loss recovery state: which segments are outstanding, delivered or lost.
//!
//! Every ACK echoes the send time of the packet that triggered it, so the sender knows exactly
//! which transmission arrived: the echo is the selective acknowledgement, and no SACK blocks
//! are needed. A transmission is declared lost once `threshold` packets sent after it have
//! been delivered (RFC 6675's DupThresh applied to send order, as RACK does), so a lost
//! retransmission is detected like any other loss; a retransmission timeout declares every
//! undelivered transmission lost. Lost segments are resent first, at the pacing rate.
//! Owns the record of transmissions and their fates. It sends nothing and sees no packet: the
//! sender asks it what to resend.

use crate::units::Time;
use std::collections::{BTreeSet, VecDeque};

#[derive(Clone, Copy, Debug)]
struct Seg {
    delivered: bool,
    lost: bool,
    /// Transmission order of this segment's latest transmission.
    last_order: u64,
}

#[derive(Clone, Copy, Debug)]
struct Tx {
    sent_at: Time,
    seg: u64,
    order: u64,
}

#[derive(Debug)]
pub struct Scoreboard {
    mss: u64,
    first_seq: u64,
    /// Transfer size in bytes; unlimited when None.
    total: Option<u64>,
    threshold: u64,
    /// First segment not cumulatively acknowledged.
    pub una: u64,
    /// First segment never sent.
    pub next_new: u64,
    /// State of segments una..next_new.
    segs: VecDeque<Seg>,
    /// Unresolved transmissions in send order (send times strictly increase).
    txs: VecDeque<Tx>,
    retx: BTreeSet<u64>,
    order: u64,
    highest_delivered: Option<u64>,
}

impl Scoreboard {
    pub fn new(mss: u32, first_seq: u64, total: Option<u64>, threshold: u32) -> Self {
        Scoreboard {
            mss: mss as u64,
            first_seq,
            total,
            threshold: threshold as u64,
            una: 0,
            next_new: 0,
            segs: VecDeque::new(),
            txs: VecDeque::new(),
            retx: BTreeSet::new(),
            order: 0,
            highest_delivered: None,
        }
    }

    fn total_segs(&self) -> Option<u64> {
        self.total.map(|b| b.div_ceil(self.mss))
    }

    pub fn seq_of(&self, seg: u64) -> u64 {
        self.first_seq + seg * self.mss
    }

    pub fn seg_len(&self, seg: u64) -> u32 {
        let start = seg * self.mss;
        let end = self.total.map_or(start + self.mss, |t| t.min(start + self.mss));
        end.saturating_sub(start) as u32
    }

    /// Segments never sent (u64::MAX when unlimited).
    pub fn unsent(&self) -> u64 {
        self.total_segs().map_or(u64::MAX, |n| n - self.next_new)
    }

    /// Next segment to transmit: the oldest lost one, else new data if the window allows.
    pub fn next_to_send(&self, window: u64) -> Option<(u64, bool)> {
        if let Some(&seg) = self.retx.first() {
            return Some((seg, true));
        }
        if self.unsent() == 0 {
            return None;
        }
        let end = self.seq_of(self.next_new) + self.seg_len(self.next_new) as u64;
        (end - self.seq_of(self.una) <= window).then_some((self.next_new, false))
    }

    /// Record a transmission; returns its order.
    pub fn on_send(&mut self, seg: u64, sent_at: Time) -> u64 {
        let order = self.order;
        self.order += 1;
        if seg == self.next_new {
            self.segs.push_back(Seg { delivered: false, lost: false, last_order: order });
            self.next_new += 1;
        } else if let Some(s) = self.seg_mut(seg) {
            s.lost = false;
            s.last_order = order;
            self.retx.remove(&seg);
        }
        self.txs.push_back(Tx { sent_at, seg, order });
        order
    }

    fn seg_mut(&mut self, seg: u64) -> Option<&mut Seg> {
        seg.checked_sub(self.una).and_then(|i| self.segs.get_mut(i as usize))
    }

    /// The transmission sent at `sent_at` arrived. Returns its order if still tracked.
    pub fn on_echo(&mut self, sent_at: Time) -> Option<u64> {
        let i = self.txs.partition_point(|t| t.sent_at < sent_at);
        let tx = *self.txs.get(i).filter(|t| t.sent_at == sent_at)?;
        if let Some(s) = self.seg_mut(tx.seg) {
            s.delivered = true;
            if s.lost {
                s.lost = false; // delivered after all: no need to resend
                self.retx.remove(&tx.seg);
            }
        }
        self.highest_delivered = Some(self.highest_delivered.map_or(tx.order, |h| h.max(tx.order)));
        Some(tx.order)
    }

    pub fn highest_delivered(&self) -> Option<u64> {
        self.highest_delivered
    }

    /// Cumulative ACK: every byte before `ack` arrived.
    pub fn on_cum_ack(&mut self, ack: u64) {
        let acked_segs = ack.saturating_sub(self.first_seq).div_ceil(self.mss).min(self.next_new);
        while self.una < acked_segs {
            self.segs.pop_front();
            self.retx.remove(&self.una);
            self.una += 1;
        }
    }

    /// Declare lost what `threshold` later deliveries overtook; returns their send times.
    pub fn detect_losses(&mut self) -> Vec<Time> {
        let mut lost = Vec::new();
        let Some(high) = self.highest_delivered else { return lost };
        while let Some(&tx) = self.txs.front() {
            if tx.order + self.threshold > high {
                break;
            }
            self.txs.pop_front();
            if self.mark_lost(tx) {
                lost.push(tx.sent_at);
            }
        }
        lost
    }

    /// A retransmission timeout: every unresolved transmission is lost.
    pub fn on_timeout(&mut self) -> Vec<Time> {
        let txs: Vec<Tx> = self.txs.drain(..).collect();
        txs.into_iter().filter(|&tx| self.mark_lost(tx)).map(|tx| tx.sent_at).collect()
    }

    /// Mark `tx`'s segment lost if this is its latest transmission and it did not arrive.
    fn mark_lost(&mut self, tx: Tx) -> bool {
        let Some(s) = self.seg_mut(tx.seg) else { return false };
        if s.delivered || s.lost || s.last_order != tx.order {
            return false;
        }
        s.lost = true;
        self.retx.insert(tx.seg);
        true
    }

    /// Anything sent and not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> bool {
        self.una < self.next_new
    }

    pub fn all_acked(&self) -> bool {
        self.total_segs().is_some_and(|n| self.una >= n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    #[test]
    fn segments_window_and_cumulative_ack() {
        // 2500 bytes in 1000-byte segments: 1000, 1000, 500; data starts at seq 1.
        let mut b = Scoreboard::new(1000, 1, Some(2500), 3);
        assert_eq!((b.seg_len(0), b.seg_len(2), b.seq_of(2)), (1000, 500, 2001));
        assert_eq!(b.next_to_send(2000), Some((0, false)));
        b.on_send(0, t(1));
        b.on_send(1, t(2));
        assert_eq!(b.next_to_send(2000), None); // the window holds two segments
        assert_eq!(b.next_to_send(2500), Some((2, false)));
        b.on_cum_ack(1001);
        assert_eq!(b.una, 1);
        b.on_send(2, t(3));
        assert_eq!(b.unsent(), 0);
        b.on_cum_ack(2501);
        assert!(b.all_acked() && !b.outstanding());
    }

    #[test]
    fn loss_detected_after_three_later_deliveries_then_resent_first() {
        let mut b = Scoreboard::new(1000, 1, None, 3);
        for i in 0..5 {
            b.on_send(i, t(i + 1));
        }
        // Segment 1 (sent at 2 ms) is lost; 0, 2, 3 arrive: only two deliveries overtook it.
        for ms in [1, 3, 4] {
            b.on_echo(t(ms));
            assert!(b.detect_losses().is_empty());
        }
        b.on_cum_ack(1001);
        b.on_echo(t(5)); // the third later delivery
        assert_eq!(b.detect_losses(), vec![t(2)]);
        assert_eq!(b.next_to_send(u64::MAX), Some((1, true)));
        b.on_send(1, t(6));
        assert_eq!(b.next_to_send(u64::MAX), Some((5, false)));
        b.on_echo(t(6));
        b.on_cum_ack(5001);
        assert_eq!(b.una, 5);
    }

    #[test]
    fn lost_retransmission_is_detected_again() {
        let mut b = Scoreboard::new(1000, 1, None, 1);
        b.on_send(0, t(1));
        b.on_send(1, t(2));
        b.on_echo(t(2));
        assert_eq!(b.detect_losses(), vec![t(1)]);
        b.on_send(0, t(3)); // the retransmission is lost too
        b.on_send(2, t(4));
        b.on_echo(t(4));
        assert_eq!(b.detect_losses(), vec![t(3)]);
        assert_eq!(b.next_to_send(u64::MAX), Some((0, true)));
    }

    #[test]
    fn timeout_declares_every_undelivered_transmission_lost() {
        let mut b = Scoreboard::new(1000, 1, None, 3);
        for i in 0..3 {
            b.on_send(i, t(i + 1));
        }
        b.on_echo(t(2));
        assert_eq!(b.on_timeout(), vec![t(1), t(3)]);
        assert_eq!(b.next_to_send(u64::MAX), Some((0, true)));
    }
}
