//! Proportional Rate Reduction (RFC 6937, and RFC 9937 which obsoletes it; docs/mechanisms.md#prr),
//! `tcp.recovery = "prr"`, `"prr_crb"` or `"prr_rfc9937"`: how much a sender in fast recovery may
//! send on each ACK, so that the window
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
//!
//! `"prr_rfc9937"` follows RFC 9937 sections 6.1-6.3 (`"prr"` and `"prr_crb"` stay RFC 6937's):
//! RecoverFS leaves out the bytes SACKed before the ACK that starts recovery; an ACK whose
//! DeliveredData is 0 sends nothing; the bound is `MAX(prr_delivered − prr_out, DeliveredData)`
//! (PRR-CRB) plus one MSS on a SafeACK (PRR-SSRB: the ACK advances snd.una and indicates no
//! further loss, as Linux's `tcp_cwnd_reduction` tests `FLAG_SND_UNA_ADVANCED` and no newly
//! lost packet); `prr_out = 0` with a zero sndcnt sends one MSS (the fast retransmission);
//! without SACK, DeliveredData stops at RecoverFS and the duplicate ACKs' estimate in the pipe
//! is at most RecoverFS. The CEIL stays in whole segments, as Linux (the RFC counts bytes).
//! Part of `TcpSender`: owns RFC 6937's state of the current recovery (`Prr`, in `LossRecovery`)
//! and sets the window while recovery lasts. It reaches the host only through its `AgentCx`, never
//! the world or the receiver.

use super::super::config::RecoveryReduction;
use super::TcpSender;
use crate::transport::{AgentCx, Host};

/// The state of one recovery episode, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prr {
    conservative: bool,
    /// RFC 9937's rules (`tcp.recovery = "prr_rfc9937"`); RFC 6937's otherwise.
    rfc9937: bool,
    /// RecoverFS: FlightSize (snd.nxt − snd.una) when recovery began; with RFC 9937, less what
    /// was SACKed before the ACK that began it.
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
    /// That DeliveredData is estimated from duplicate ACKs (no SACK).
    estimated: bool,
    /// RFC 9937's SafeACK for the ACK being processed: it advances snd.una and, so far,
    /// indicates no further loss.
    safe: bool,
    /// What the SafeACK's segment added to this ACK's sndcnt (0 or up to one MSS), for a loss
    /// found after sndcnt was computed to take back.
    slow_start_extra: u64,
}

impl Prr {
    pub fn new(reduction: RecoveryReduction) -> Option<Prr> {
        match reduction {
            RecoveryReduction::Standard => None,
            RecoveryReduction::Prr => Some(Prr::default()),
            RecoveryReduction::PrrCrb => Some(Prr { conservative: true, ..Prr::default() }),
            RecoveryReduction::PrrRfc9937 => Some(Prr { rfc9937: true, ..Prr::default() }),
        }
    }

    /// Recovery begins on the ACK being processed (its DeliveredData already noted), with
    /// `flight` = snd.nxt − snd.una and `sacked` bytes SACKed above snd.una after it. RFC 6937
    /// section 3: RecoverFS = FlightSize. RFC 9937 section 6.1: less the bytes SACKed before
    /// this ACK (they never count in DeliveredData, so prr_delivered could not reach
    /// RecoverFS), which is `flight − sacked + DeliveredData` (this ACK's newly SACKed and
    /// newly acknowledged bytes counted back), at least one MSS; without SACK, FlightSize.
    pub fn start(&mut self, flight: u64, sacked: u64, mss: u64) {
        let recover_fs = if self.rfc9937 && !self.estimated {
            (flight + self.delivered).saturating_sub(sacked).max(mss)
        } else {
            flight // without SACK nothing is SACKed, and a duplicate ACK acknowledges nothing
        };
        (self.recover_fs, self.prr_delivered, self.prr_out) = (recover_fs, 0, 0);
    }

    /// The ACK being processed reports `bytes` delivered (with SACK: the change in snd.una
    /// plus the change in SACKed bytes).
    pub fn deliver(&mut self, bytes: u64) {
        self.delivered = bytes;
        (self.estimated, self.safe, self.slow_start_extra) = (false, false, 0);
    }

    /// Without SACK, a duplicate ACK reports one segment delivered (RFC 6937 section 2).
    pub fn deliver_dupack(&mut self, mss: u64) {
        self.dupack_credit += mss;
        self.deliver(mss);
        self.estimated = true;
    }

    /// Without SACK, an ACK that advances snd.una by `acked` reports that less what the
    /// duplicate ACKs before it already counted.
    pub fn deliver_advance(&mut self, acked: u64) {
        let counted = self.dupack_credit.min(acked);
        self.dupack_credit -= counted;
        self.deliver(acked - counted);
        self.estimated = true;
    }

    /// RFC 9937's SafeACK: the ACK being processed advances snd.una (`advances`) and has
    /// indicated no new loss so far.
    pub fn ack_advances(&mut self, advances: bool) {
        self.safe = advances;
    }

    /// A loss found on the ACK being processed after its sndcnt was computed: it was no
    /// SafeACK; the bytes its slow-start segment added, to take off the allowance.
    pub fn withdraw_slow_start_segment(&mut self) -> u64 {
        self.safe = false;
        std::mem::take(&mut self.slow_start_extra)
    }

    /// Bytes counted as delivered by duplicate ACKs and not yet covered by snd.una: an estimate
    /// of the data above the hole that has left the network, for the pipe without SACK.
    /// RFC 9937 section 6.2 caps it at RecoverFS against misbehaving receivers.
    pub fn dupack_credit(&self) -> u64 {
        if self.rfc9937 {
            self.dupack_credit.min(self.recover_fs)
        } else {
            self.dupack_credit
        }
    }

    /// The ACK being processed leaves `pipe` bytes in the network: how many bytes may be sent
    /// in response (`sndcnt`, never negative).
    pub fn sndcnt(&mut self, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        let mut delivered = std::mem::take(&mut self.delivered);
        if self.rfc9937 && self.estimated {
            // RFC 9937 section 6.2: without SACK, DeliveredData never takes prr_delivered past
            // RecoverFS (duplicate ACKs a receiver could send at will, [Savage99]).
            delivered = delivered.min(self.recover_fs.saturating_sub(self.prr_delivered));
        }
        if self.rfc9937 && delivered == 0 {
            // RFC 9937 section 6.2: `if (DeliveredData is 0) Return`, before the forced
            // retransmission: an ACK that reports nothing new sends nothing.
            return 0;
        }
        self.prr_delivered += delivered;
        if pipe > ssthresh {
            // The proportional part, CEIL taken in whole segments.
            let target =
                (self.prr_delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs.max(1) as u128 * mss as u128);
            let sndcnt = (target as u64 * mss).saturating_sub(self.prr_out);
            return self.force_first(sndcnt, mss);
        }
        let banked = self.prr_delivered.saturating_sub(self.prr_out);
        if !self.rfc9937 {
            let limit = if self.conservative { banked } else { banked.max(delivered) + mss };
            return (ssthresh - pipe).min(limit);
        }
        // RFC 9937 section 6.2: PRR-CRB by default, SSRB's segment on a SafeACK.
        let crb = self.force_first((ssthresh - pipe).min(banked.max(delivered)), mss);
        if !self.safe {
            return crb;
        }
        let ssrb = self.force_first((ssthresh - pipe).min(banked.max(delivered) + mss), mss);
        self.slow_start_extra = ssrb - crb;
        ssrb
    }

    /// RFC 9937 section 6.2: `if (prr_out is 0 AND SndCnt is 0) SndCnt = SMSS`, the fast
    /// retransmission on entering recovery whatever the pipe. RFC 6937 has no such rule.
    fn force_first(&self, sndcnt: u64, mss: u64) -> u64 {
        if self.rfc9937 && self.prr_out == 0 && sndcnt == 0 {
            mss
        } else {
            sndcnt
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
        let pipe = if self.loss.sack {
            self.sack_pipe()
        } else {
            let credit = self.loss.prr.as_ref()?.dupack_credit();
            self.flight().saturating_sub(credit)
        };
        let (ssthresh, mss) = (self.w.ssthresh, self.w.mss);
        Some(self.loss.prr.as_mut()?.sndcnt(pipe, ssthresh, mss))
    }

    /// Let `allowance` more bytes out: cwnd becomes what the output loop counts as in flight
    /// (the pipe with SACK, snd.nxt − snd.una without) plus the allowance.
    pub(super) fn prr_allow(&mut self, allowance: u64, cx: &mut AgentCx<impl Host>) {
        let counted = if self.loss.sack { self.sack_pipe() } else { self.send.snd_nxt - self.send.snd_una };
        self.w.cwnd = counted + allowance;
        self.record_window(cx);
    }

    /// What `prr_note_delivered` needs from before an ACK's SACK blocks enter the scoreboard:
    /// the SACKed bytes above snd.una and, for RFC 9937 with RFC 6675's loss detection, the end
    /// of what IsLost marks (to tell whether the ACK indicates a further loss).
    pub(super) fn prr_before_ack(&self) -> (u64, u64) {
        match self.loss.prr.as_deref() {
            Some(p) if self.loss.sack => {
                let sacked = self.loss.scoreboard.sacked_in(self.send.snd_una, self.send.snd_max);
                let lost_end = if p.rfc9937 && self.loss.rack.is_none() { self.rfc6675_lost_end() } else { 0 };
                (sacked, lost_end)
            }
            _ => (0, 0),
        }
    }

    /// The end of the octets RFC 6675's IsLost marks (all of them below it not SACKed).
    fn rfc6675_lost_end(&self) -> u64 {
        self.loss.scoreboard.lost_below(self.lost_threshold()).min(self.send.snd_max)
    }

    /// The DeliveredData of an ACK up to `ack` (RFC 6937 section 2), noted before the sender
    /// acts on it, with `before` from `prr_before_ack`. RFC 9937's SafeACK (section 6.2) is
    /// noted too: with SACK, the ACK advances snd.una and IsLost marks no octet it did not mark
    /// before (with RACK, whose marks come after sndcnt, `prr_loss_found` takes the segment
    /// back). Without SACK no ACK is safe: a partial ACK indicates the loss of the segment at
    /// the new snd.una (RFC 6582 section 3.2 step 3), the full ACK ends recovery.
    pub(super) fn prr_note_delivered(&mut self, ack: u64, before: (u64, u64), duplicate: bool) {
        let Some(rfc9937) = self.loss.prr.as_ref().map(|p| p.rfc9937) else { return };
        let (sacked_before, lost_end_before) = before;
        let safe = rfc9937 && self.loss.sack && ack > self.send.snd_una && {
            // Octets IsLost marks now and did not before this ACK's blocks: a new loss.
            let from = lost_end_before.max(ack);
            self.loss.rack.is_some() || self.loss.scoreboard.unsacked_in(from, self.rfc6675_lost_end().max(from)) == 0
        };
        let sacked_after = if self.loss.sack { self.loss.scoreboard.sacked_in(ack, self.send.snd_max) } else { 0 };
        let (una, mss, sack) = (self.send.snd_una, self.w.mss, self.loss.sack);
        let Some(p) = self.loss.prr.as_mut() else { return };
        if sack {
            p.deliver((ack - una + sacked_after).saturating_sub(sacked_before));
        } else if duplicate {
            p.deliver_dupack(mss);
        } else {
            p.deliver_advance(ack - una);
        }
        p.ack_advances(safe);
    }

    /// RACK marked losses on the ACK being processed, after its sndcnt was set or before the
    /// recovery they start: with RFC 9937 the ACK is no SafeACK, and a slow-start segment it
    /// was given comes off the window.
    pub(super) fn prr_loss_found(&mut self, cx: &mut AgentCx<impl Host>) {
        let Some(extra) = self.loss.prr.as_mut().map(|p| p.withdraw_slow_start_segment()) else { return };
        if extra > 0 && self.in_recovery() {
            self.w.cwnd = self.w.cwnd.saturating_sub(extra);
            self.record_window(cx);
        }
    }

    /// Recovery begins: RecoverFS from snd.nxt − snd.una and the SACKed bytes above snd.una.
    pub(super) fn prr_start(&mut self) {
        let flight = self.flight();
        let sacked =
            if self.loss.sack { self.loss.scoreboard.sacked_in(self.send.snd_una, self.send.snd_max) } else { 0 };
        let mss = self.w.mss;
        if let Some(p) = self.loss.prr.as_mut() {
            p.start(flight, sacked, mss);
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
        p.start(20 * MSS, 0, MSS);
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

    /// RFC 6937 section 3.1's burst of losses from ACK 17 on: pipe 4 segments, ssthresh 10.
    /// `ack(p, k)` brings ACK k's news to `p`; the segments PRR then sends are returned, each
    /// adding one to pipe while the ACK takes one away.
    fn sends_in_the_burst(p: &mut Prr, mut ack: impl FnMut(&mut Prr, usize)) -> Vec<u64> {
        let mut pipe = 4 * MSS;
        (0..3)
            .map(|k| {
                ack(p, k);
                let n = p.sndcnt(pipe, 10 * MSS, MSS) / MSS;
                p.on_sent(n * MSS);
                pipe += n * MSS - MSS;
                n
            })
            .collect()
    }

    /// RFC 6937 section 3.1's burst of 15 losses: pipe falls to 4 segments under ssthresh 10,
    /// and PRR-CRB sends what is delivered (one per ACK) while PRR-SSRB sends one more per ACK.
    #[test]
    fn reduction_bounds_after_a_burst_loss() {
        for (reduction, expected) in [(RecoveryReduction::PrrCrb, [1, 1, 1]), (RecoveryReduction::Prr, [2, 2, 2])] {
            let mut p = Prr::new(reduction).unwrap();
            p.start(20 * MSS, 0, MSS);
            let sent = sends_in_the_burst(&mut p, |p, _| p.deliver(MSS));
            // The RFC's rows (acks 17-19): CRB "R R R", SSRB "2R 2R 2R".
            assert_eq!(sent, expected, "{reduction:?}");
        }
    }

    /// RFC 9937 section 6.2's reduction bound: PRR-CRB, `MAX(prr_delivered − prr_out,
    /// DeliveredData)`, plus one MSS (PRR-SSRB) only on a SafeACK, one that advances snd.una and
    /// indicates no further loss. RFC 6937 section 3.1's burst of 15 losses (pipe 4 segments,
    /// ssthresh 10, RecoverFS 20), each ACK delivering one segment. By hand: ACK 1,
    /// prr_delivered 1, prr_out 0: CRB MAX(1, 1) = 1, SSRB 2, both under ssthresh − pipe = 6;
    /// ACK 2: prr_delivered 2, prr_out 1 (2): MAX(1 (0), 1) = 1, SSRB 2; ACK 3 the same. With
    /// SACK alone (duplicate ACKs, not safe) one segment per ACK, with snd.una advancing and no
    /// new loss two: the two cases differ by one MSS on every ACK.
    #[test]
    fn rfc9937_adds_the_slow_start_segment_only_on_a_safe_ack() {
        for (safe, expected) in [(false, [1, 1, 1]), (true, [2, 2, 2])] {
            let mut p = Prr::new(RecoveryReduction::PrrRfc9937).unwrap();
            p.deliver(MSS);
            p.start(20 * MSS, 0, MSS);
            let sent = sends_in_the_burst(&mut p, |p, k| {
                if k > 0 {
                    p.deliver(MSS);
                }
                p.ack_advances(safe);
            });
            assert_eq!(sent, expected, "safe {safe}");
        }
    }

    /// A new loss on an ACK that advances snd.una takes the slow-start segment back (RACK marks
    /// after the ACK's sndcnt is known): what is left is PRR-CRB's.
    #[test]
    fn rfc9937_a_new_loss_withdraws_the_slow_start_segment() {
        let mut p = Prr::new(RecoveryReduction::PrrRfc9937).unwrap();
        p.deliver(MSS);
        p.start(20 * MSS, 0, MSS);
        p.ack_advances(true);
        assert_eq!(p.sndcnt(4 * MSS, 10 * MSS, MSS), 2 * MSS);
        assert_eq!(p.withdraw_slow_start_segment(), MSS);
        assert_eq!(p.withdraw_slow_start_segment(), 0, "once");
        // RFC 6937's SSRB gives its segment on every ACK and never takes it back.
        let mut p = Prr::new(RecoveryReduction::Prr).unwrap();
        p.deliver(MSS);
        p.start(20 * MSS, 0, MSS);
        assert_eq!(p.sndcnt(4 * MSS, 10 * MSS, MSS), 2 * MSS);
        assert_eq!(p.withdraw_slow_start_segment(), 0);
    }

    /// RFC 9937 section 6.2: an ACK that delivers nothing new sends nothing (`if (DeliveredData
    /// is 0) Return`), where RFC 6937's SSRB still allows MAX(prr_delivered − prr_out, 0) + MSS.
    /// First ACK: 3 segments delivered, pipe 7, ssthresh 10: both send ssthresh − pipe = 3. The
    /// next ACK delivers nothing while pipe has fallen to 5 (a loss marked by a timer).
    #[test]
    fn rfc9937_an_ack_delivering_nothing_sends_nothing() {
        for (reduction, expected) in [(RecoveryReduction::Prr, MSS), (RecoveryReduction::PrrRfc9937, 0)] {
            let mut p = Prr::new(reduction).unwrap();
            p.deliver(3 * MSS);
            p.start(20 * MSS, 0, MSS);
            p.ack_advances(true);
            assert_eq!(p.sndcnt(7 * MSS, 10 * MSS, MSS), 3 * MSS, "{reduction:?}");
            p.on_sent(3 * MSS);
            p.deliver(0);
            p.ack_advances(true);
            assert_eq!(p.sndcnt(5 * MSS, 10 * MSS, MSS), expected, "{reduction:?}");
            assert_eq!(p.prr_delivered, 3 * MSS);
        }
    }

    /// RFC 9937 section 6.2: `if (prr_out is 0 AND SndCnt is 0) SndCnt = SMSS`, the fast
    /// retransmission forced on entering recovery. Pipe already at ssthresh (10 segments, with
    /// much SACKed before the third duplicate ACK): the bound MIN(ssthresh − pipe, ...) is 0,
    /// RFC 6937 sends nothing, RFC 9937 one segment; once prr_out > 0 the rule is off.
    #[test]
    fn rfc9937_forces_the_fast_retransmission() {
        for (reduction, expected) in [(RecoveryReduction::Prr, 0), (RecoveryReduction::PrrRfc9937, MSS)] {
            let mut p = Prr::new(reduction).unwrap();
            p.deliver(MSS);
            p.start(20 * MSS, 0, MSS);
            assert_eq!(p.sndcnt(10 * MSS, 10 * MSS, MSS), expected, "{reduction:?}");
            p.on_sent(MSS);
            p.deliver(MSS);
            assert_eq!(p.sndcnt(10 * MSS, 10 * MSS, MSS), 0, "{reduction:?}");
        }
    }

    /// RFC 9937 section 6.2, without SACK: duplicate ACKs past RecoverFS deliver nothing. RecoverFS
    /// 5 segments, ssthresh 2, pipe held above it, one duplicate ACK after another: the
    /// proportional part CEIL(k·2/5) − prr_out sends 1 0 1 0 0 in both; from the sixth ACK RFC
    /// 6937 goes on (1 0 1: CEIL(12/5) = 3, CEIL(16/5) = 4), RFC 9937 sends nothing.
    #[test]
    fn rfc9937_duplicate_acks_deliver_no_more_than_recover_fs() {
        for (reduction, expected) in [
            (RecoveryReduction::Prr, [1, 0, 1, 0, 0, 1, 0, 1]),
            (RecoveryReduction::PrrRfc9937, [1, 0, 1, 0, 0, 0, 0, 0]),
        ] {
            let mut p = Prr::new(reduction).unwrap();
            let mut sent = vec![];
            for k in 0..8 {
                p.deliver_dupack(MSS);
                if k == 0 {
                    p.start(5 * MSS, 0, MSS);
                }
                let n = p.sndcnt(3 * MSS, 2 * MSS, MSS);
                p.on_sent(n);
                sent.push(n / MSS);
            }
            assert_eq!(sent, expected, "{reduction:?}");
            let credit = if reduction == RecoveryReduction::Prr { 8 } else { 5 };
            assert_eq!(p.dupack_credit(), credit * MSS, "the pipe's estimate, {reduction:?}");
        }
    }

    /// RFC 9937 section 6.1: RecoverFS = snd.nxt − snd.una less the bytes SACKed before the
    /// ACK that starts recovery (they never count in DeliveredData), this ACK's delivery
    /// included. 20 segments outstanding before the third duplicate ACK, 2 of them SACKed by the
    /// first two, the third SACKs one more: after that ACK snd.nxt − snd.una is 20, 3 are
    /// SACKed, DeliveredData 1, RecoverFS = 20 − 3 + 1 = 18 (RFC 6937: 20). Every other segment
    /// is delivered one per ACK with pipe held above ssthresh 10: the 18 segments of the episode
    /// bring the proportional part to CEIL(18·10/18) = 10 = ssthresh, RFC 6937's to
    /// CEIL(18·10/20) = 9.
    #[test]
    fn rfc9937_recover_fs_leaves_out_what_was_sacked_before_recovery() {
        for (reduction, recover_fs, total) in
            [(RecoveryReduction::Prr, 20 * MSS, 9), (RecoveryReduction::PrrRfc9937, 18 * MSS, 10)]
        {
            let mut p = Prr::new(reduction).unwrap();
            p.deliver(MSS);
            p.start(20 * MSS, 3 * MSS, MSS);
            assert_eq!(p.recover_fs, recover_fs, "{reduction:?}");
            let mut out = 0;
            for k in 0..18 {
                if k > 0 {
                    p.deliver(MSS);
                }
                let n = p.sndcnt(12 * MSS, 10 * MSS, MSS);
                p.on_sent(n);
                out += n;
            }
            assert_eq!(out, total * MSS, "{reduction:?}");
        }
    }
}
