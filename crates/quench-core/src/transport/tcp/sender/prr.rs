//! Proportional Rate Reduction (RFC 6937; docs/mechanisms.md#prr), `tcp.recovery = "prr"` or
//! `"prr_crb"`: how much a sender in fast recovery may send on each ACK, so that the window
//! comes down to ssthresh smoothly across the recovery RTT instead of RFC 6675's half window of
//! silence followed by a burst, or NewReno's inflation and deflation.
//!
//! At the start of recovery (RFC 6937 section 3): `prr_delivered = prr_out = 0`,
//! `RecoverFS = snd.nxt − snd.una`. On every ACK during recovery, with DeliveredData the bytes
//! it newly reports delivered (the change in snd.una plus the change in SACKed bytes; without
//! SACK one segment per duplicate ACK, and the change in snd.una less what earlier duplicates
//! already counted on a partial ACK):
//! - while `pipe > ssthresh`: `sndcnt = CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out`
//!   (the proportional part);
//! - otherwise the reduction bound: `sndcnt = MIN(ssthresh − pipe, limit)` with
//!   `limit = MAX(prr_delivered − prr_out, DeliveredData) + MSS` (PRR-SSRB, the slow-start
//!   reduction bound the RFC recommends) or `limit = prr_delivered − prr_out` (PRR-CRB, the
//!   conservative bound).
//!
//! The sender then lets exactly `sndcnt` more bytes out: it sets `cwnd = pipe + sndcnt` for
//! its output loop (as Linux's `tcp_cwnd_reduction` does), and every byte sent during recovery
//! (retransmission or new data) counts in `prr_out`. The CEIL is taken in whole segments, as in
//! the RFC's examples and Linux (which counts packets): a byte-exact CEIL would allow half a
//! segment on the first duplicate ACK of a 2:1 reduction and hold the fast retransmission.

use super::TcpSender;
use crate::transport::{AgentCx, Host};
use serde::{Deserialize, Serialize};

/// How the sender paces its sending during fast recovery (`tcp.recovery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryReduction {
    /// The window rules of the recovery procedure itself: RFC 6675's `pipe < cwnd` with
    /// SACK, RFC 5681/6582 inflation and deflation without.
    #[default]
    Standard,
    /// RFC 6937 PRR with the slow-start reduction bound (PRR-SSRB).
    Prr,
    /// RFC 6937 PRR with the conservative reduction bound (PRR-CRB).
    PrrCrb,
}

/// The state of one recovery episode, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prr {
    conservative: bool,
    /// FlightSize (snd.nxt − snd.una) when recovery began.
    recover_fs: u64,
    /// Bytes the receiver reported delivered during recovery.
    prr_delivered: u64,
    /// Bytes sent during recovery.
    prr_out: u64,
    /// Without SACK: bytes that duplicate ACKs counted as delivered and that the next advance
    /// of snd.una will cover again.
    dupack_credit: u64,
    /// DeliveredData of the ACK being processed.
    delivered: u64,
}

impl Prr {
    pub fn new(reduction: RecoveryReduction) -> Option<Prr> {
        match reduction {
            RecoveryReduction::Standard => None,
            RecoveryReduction::Prr => Some(Prr::default()),
            RecoveryReduction::PrrCrb => Some(Prr { conservative: true, ..Prr::default() }),
        }
    }

    /// Recovery begins with `recover_fs` = snd.nxt − snd.una.
    pub fn start(&mut self, recover_fs: u64) {
        (self.recover_fs, self.prr_delivered, self.prr_out) = (recover_fs, 0, 0);
    }

    /// The ACK being processed reports `bytes` delivered (with SACK: the change in snd.una
    /// plus the change in SACKed bytes).
    pub fn deliver(&mut self, bytes: u64) {
        self.delivered = bytes;
    }

    /// Without SACK, a duplicate ACK reports one segment delivered (RFC 6937 section 2).
    pub fn deliver_dupack(&mut self, mss: u64) {
        self.dupack_credit += mss;
        self.delivered = mss;
    }

    /// Without SACK, an ACK that advances snd.una by `acked` reports that less what the
    /// duplicate ACKs before it already counted.
    pub fn deliver_advance(&mut self, acked: u64) {
        let counted = self.dupack_credit.min(acked);
        self.dupack_credit -= counted;
        self.delivered = acked - counted;
    }

    /// Bytes counted as delivered by duplicate ACKs and not yet covered by snd.una: an estimate
    /// of the data above the hole that has left the network, for the pipe without SACK.
    pub fn dupack_credit(&self) -> u64 {
        self.dupack_credit
    }

    /// The ACK being processed leaves `pipe` bytes in the network: how many bytes may be sent
    /// in response (`sndcnt`, never negative).
    pub fn sndcnt(&mut self, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        let delivered = std::mem::take(&mut self.delivered);
        self.prr_delivered += delivered;
        if pipe > ssthresh {
            // The proportional part, CEIL taken in whole segments.
            let target =
                (self.prr_delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs.max(1) as u128 * mss as u128);
            (target as u64 * mss).saturating_sub(self.prr_out)
        } else {
            let banked = self.prr_delivered.saturating_sub(self.prr_out);
            let limit = if self.conservative { banked } else { banked.max(delivered) + mss };
            (ssthresh - pipe).min(limit)
        }
    }

    /// `bytes` left the host during recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out += bytes;
    }
}

impl TcpSender {
    /// PRR's sndcnt for the ACK being processed; None when PRR is off. The pipe is RFC 6675's
    /// with SACK; without it, the flight less what duplicate ACKs reported delivered (the hole
    /// at snd.una is both lost and retransmitted, and counts once).
    pub(super) fn prr_sndcnt(&mut self) -> Option<u64> {
        let pipe = if self.sack {
            self.sack_pipe()
        } else {
            let credit = self.prr.as_ref()?.dupack_credit();
            self.flight().saturating_sub(credit)
        };
        let (ssthresh, mss) = (self.w.ssthresh, self.w.mss);
        Some(self.prr.as_mut()?.sndcnt(pipe, ssthresh, mss))
    }

    /// Let `allowance` more bytes out: cwnd becomes what the output loop counts as in flight
    /// (the pipe with SACK, snd.nxt − snd.una without) plus the allowance.
    pub(super) fn prr_allow(&mut self, allowance: u64, cx: &mut AgentCx<impl Host>) {
        let counted = if self.sack { self.sack_pipe() } else { self.snd_nxt - self.snd_una };
        self.w.cwnd = counted + allowance;
        self.record_window(cx);
    }

    /// The DeliveredData of an ACK up to `ack` (RFC 6937 section 2), noted before the sender
    /// acts on it: `sacked_before` is the SACKed bytes above snd.una before this ACK's blocks.
    pub(super) fn prr_note_delivered(&mut self, ack: u64, sacked_before: u64, duplicate: bool) {
        let Some(p) = self.prr.as_mut() else { return };
        if self.sack {
            let sacked_after = self.scoreboard.sacked_in(ack, self.snd_max);
            p.deliver((ack - self.snd_una + sacked_after).saturating_sub(sacked_before));
        } else if duplicate {
            p.deliver_dupack(self.w.mss);
        } else {
            p.deliver_advance(ack - self.snd_una);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 section 3.1's single loss with the algorithm alone: 20 segments in flight,
    /// ssthresh 10; every ACK of the recovery RTT delivers one segment, and pipe falls by the
    /// ACK and rises by what is sent. Before pipe reaches ssthresh one segment goes out per
    /// two ACKs; the reduction bound then holds pipe at ssthresh.
    #[test]
    fn a_single_loss_sends_one_segment_per_two_acks() {
        let mut p = Prr::new(RecoveryReduction::Prr).unwrap();
        p.start(20 * MSS);
        let mut pipe = 16 * MSS; // 20 in flight, 3 SACKed, the first lost
        let mut sent = vec![];
        for _ in 0..17 {
            pipe -= if sent.is_empty() { 0 } else { MSS }; // the ACK that entered recovery is counted in the 16
            p.deliver(MSS);
            let n = p.sndcnt(pipe, 10 * MSS, MSS) / MSS;
            p.on_sent(n * MSS);
            pipe += n * MSS;
            sent.push(n);
        }
        // ACKs 3-19 of the RFC's example, without Limited Transmit: the fast retransmission,
        // then one new segment per two ACKs while pipe > ssthresh (PRR), then ssthresh − pipe.
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1]);
        assert_eq!(pipe, 10 * MSS);
    }

    /// RFC 6937 section 3.1's burst of 15 losses: pipe falls to 4 segments under ssthresh 10,
    /// and PRR-CRB sends what is delivered (one per ACK) while PRR-SSRB sends one more per ACK.
    #[test]
    fn reduction_bounds_after_a_burst_loss() {
        for (reduction, expected) in [(RecoveryReduction::PrrCrb, [1, 1, 1]), (RecoveryReduction::Prr, [2, 2, 2])] {
            let mut p = Prr::new(reduction).unwrap();
            p.start(20 * MSS);
            let mut pipe = 4 * MSS;
            let mut sent = vec![];
            for _ in 0..3 {
                p.deliver(MSS);
                let n = p.sndcnt(pipe, 10 * MSS, MSS) / MSS;
                p.on_sent(n * MSS);
                pipe += n * MSS - MSS;
                sent.push(n);
            }
            // The RFC's rows (acks 17-19): CRB "R R R", SSRB "2R 2R 2R".
            assert_eq!(sent, expected, "{reduction:?}");
        }
    }
}
