//! Loss recovery of the TCP sender, apart from its output and ACK paths: the classic
//! duplicate-ACK procedures (Tahoe fast retransmit, Reno and NewReno fast recovery) and the
//! SACK-based one of RFC 6675 (sections 4 and 5: NextSeg's four rules, SetPipe, IsLost by the
//! bytes rule) with Limited Transmit (RFC 3042). See the module header of `sender` for the
//! rules, and `next_seg`/`rescue` for where quench departs from RFC 6675's wording.
//! Part of `TcpSender`: owns the duplicate-ACK count, the recovery point and HighRxt/RescueRxt of
//! `LossRecovery`, and sets the window on entering and leaving recovery. It reaches the host only
//! through its `AgentCx`, never the world or the receiver.

use super::super::config::NewRenoTimer;
use super::super::LimitedTransmit;
use super::super::TcpTimer;
use super::{CaState, TcpSender};
use crate::cc::{CongestionControl, Recovery, Signal};
use crate::trace::TcpEvent;
use crate::transport::{AgentCx, Host};

/// Which rule of RFC 6675's NextSeg (section 4) chose a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NextSeg {
    /// Rule 1: a hole above HighRxt that IsLost (with RACK: marked lost).
    Lost,
    /// Rule 2: new data.
    NewData,
    /// Rule 3: a hole above HighRxt below the highest SACKed octet, not (yet) IsLost.
    BelowSacked,
    /// Rule 4: the rescue retransmission of the highest unSACKed segment.
    Rescue,
}

impl TcpSender {
    pub(super) fn on_dupack(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.loss.reno.is_some() {
            return self.reno_on_dupack(cx);
        }
        if self.loss.sack && self.in_recovery() {
            if let Some(sndcnt) = self.prr_sndcnt() {
                self.prr_allow(sndcnt, cx);
            }
            return self.sack_output(cx);
        }
        self.loss.dupacks += 1;
        if self.loss.ca == CaState::Open {
            self.loss.ca = CaState::Disorder;
        }
        let threshold = self.cfg.dupack_threshold;
        if self.loss.sack {
            // RACK (`rack.rs`) replaces the duplicate count by its own loss marks.
            let (by_count, lost) = match self.loss.rack.as_ref() {
                Some(r) => (false, r.lost_bytes() > 0),
                None => (
                    self.loss.dupacks >= threshold,
                    self.loss.scoreboard.lost_below(self.lost_threshold()) > self.send.snd_una,
                ),
            };
            if (by_count || lost) && self.past_recovery_point() {
                return self.enter_sack_recovery(cx);
            }
        } else if self.loss.dupacks >= threshold {
            return self.on_dupack_beyond_limit(cx);
        }
        if self.loss.dupacks < threshold {
            match self.cfg.limited_transmit {
                LimitedTransmit::Off => {}
                LimitedTransmit::Rfc3042 => self.limited_transmit(cx),
                LimitedTransmit::Rfc6675 => self.limited_transmit_by_pipe(cx),
            }
        }
    }

    /// Classic (non-SACK) reactions to the third and later duplicate ACKs.
    pub(super) fn on_dupack_beyond_limit(&mut self, cx: &mut AgentCx<impl Host>) {
        let threshold = self.cfg.dupack_threshold;
        match self.loss.recovery {
            Recovery::SlowStart if self.loss.dupacks == threshold => self.tahoe_fast_retransmit(cx),
            Recovery::Reno | Recovery::NewReno if self.in_recovery() => {
                match self.prr_sndcnt() {
                    Some(sndcnt) => self.prr_allow(sndcnt, cx),
                    // A model-based controller owns the window in recovery too (Linux never
                    // inflates cwnd for BBR): inflating it here would feed BBR's packet
                    // conservation, which keeps the larger of cwnd and what is in flight, one
                    // more segment per duplicate ACK for a whole round.
                    None if self.pacing.model.is_some() => {}
                    None => {
                        self.w.cwnd += self.w.mss; // inflate: one more segment has left the network
                        self.record_window(cx);
                    }
                }
                self.output(cx);
            }
            Recovery::Reno if self.loss.dupacks == threshold => self.enter_fast_recovery(cx),
            // RFC 6582 section 3.2 step 2: no new recovery for data sent before the last one.
            Recovery::NewReno if self.loss.dupacks == threshold && self.past_recovery_point() => {
                self.enter_fast_recovery(cx)
            }
            _ => {}
        }
    }

    /// ssthresh for a loss found by duplicate ACKs (with `w.flight` set): the controller's,
    /// unless the loss lies in the window of an ECN reduction, which has already reduced for
    /// that window (`SenderEcn::reducing`; RFC 3168 section 6.1.2).
    pub(super) fn loss_ssthresh(&mut self) -> u64 {
        if self.ecn.reducing(self.send.snd_una) {
            return self.w.ssthresh;
        }
        self.cc.on_congestion(&self.w, Signal::DupAcks)
    }

    pub(super) fn tahoe_fast_retransmit(&mut self, cx: &mut AgentCx<impl Host>) {
        self.loss.ca = CaState::Disorder; // a loss response supersedes CWR, as in Linux
        self.w.flight = self.flight();
        self.w.ssthresh = self.loss_ssthresh();
        self.w.cwnd = self.w.mss;
        self.stats.fast_retransmits += 1;
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::FastRetransmit);
        self.record_window(cx);
        self.timers.cancel(TcpTimer::Retransmit);
        // Refused by the host (a Linux host): the segment stays at the send head, and the timer
        // armed next resends it, as Linux's retransmit timer does.
        self.send_at_once(self.send.snd_una, cx);
        self.arm_retransmit(cx);
    }

    /// A fast recovery's episode begins: the flight and ssthresh at entry, the recovery point,
    /// the state, and the count and event of the fast retransmission it makes.
    pub(super) fn begin_recovery_episode(&mut self, cx: &mut AgentCx<impl Host>) {
        self.w.flight = self.flight();
        self.w.ssthresh = self.loss_ssthresh();
        self.loss.recover_end = self.send.snd_max;
        self.loss.ca = CaState::Recovery { partial_ack_seen: false }; // supersedes CWR, as in Linux
        self.stats.fast_retransmits += 1;
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::FastRetransmit);
    }

    pub(super) fn enter_fast_recovery(&mut self, cx: &mut AgentCx<impl Host>) {
        self.begin_recovery_episode(cx);
        self.prr_start();
        let prr = self.prr_sndcnt();
        let retransmitted = self.send_at_once(self.send.snd_una, cx).map_or(0, |end| end - self.send.snd_una);
        self.arm_retransmit(cx);
        match prr {
            // PRR: the fast retransmission is part of this ACK's sndcnt.
            Some(sndcnt) => self.prr_allow(sndcnt.saturating_sub(retransmitted), cx),
            None => {
                self.w.cwnd = self.w.ssthresh + self.cfg.dupack_threshold as u64 * self.w.mss;
                self.record_window(cx);
            }
        }
        self.output(cx);
    }

    /// A partial ACK in NewReno recovery: resend the next hole and deflate.
    pub(super) fn on_partial_ack(&mut self, acked: u64, cx: &mut AgentCx<impl Host>) {
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::PartialAckRetransmit);
        let prr = self.prr_sndcnt();
        let retransmitted = self.send_at_once(self.send.snd_una, cx).map_or(0, |end| end - self.send.snd_una);
        if let Some(sndcnt) = prr {
            // PRR instead of deflation: the retransmission is part of this ACK's sndcnt.
            self.w.cwnd = self.send.snd_nxt - self.send.snd_una + sndcnt.saturating_sub(retransmitted);
        } else {
            self.w.cwnd = self.w.cwnd.saturating_sub(acked).max(self.w.mss);
            if acked >= self.w.mss {
                self.w.cwnd += self.w.mss;
            }
        }
        let first = self.loss.ca == (CaState::Recovery { partial_ack_seen: false });
        if first || self.cfg.newreno_timer == NewRenoTimer::SlowButSteady {
            self.loss.ca = CaState::Recovery { partial_ack_seen: true };
            self.arm_retransmit(cx);
        }
        self.record_window(cx);
    }

    /// With SACK, the end of the SACKed block that holds `seq`, if one does.
    pub(super) fn sacked_block_end(&self, seq: u64) -> Option<u64> {
        if self.loss.sack {
            self.loss.scoreboard.block_end_containing(seq)
        } else {
            None
        }
    }

    /// RFC 6675 IsLost threshold: more than (DupThresh − 1)·SMSS bytes SACKed above.
    pub(super) fn lost_threshold(&self) -> u64 {
        (self.cfg.dupack_threshold as u64 - 1) * self.w.mss
    }

    /// The pipe of a SACK sender now (RFC 6675 section 4's SetPipe): what is outstanding, less
    /// what is SACKed or deemed lost, plus what was resent; lost by RFC 6675's IsLost, or by
    /// RACK's marks (the unSACKed bytes less those marked lost and not yet resent, Linux's
    /// `tcp_packets_in_flight`).
    pub(super) fn sack_pipe(&self) -> u64 {
        match self.loss.rack.as_ref() {
            Some(r) => self.loss.scoreboard.unsacked_in(self.send.snd_una, self.send.snd_max) - r.lost_bytes(),
            None => self.pipe(self.loss.scoreboard.lost_below(self.lost_threshold()).min(self.send.snd_max)),
        }
    }

    /// RFC 6675 SetPipe from the scoreboard: unSACKed octets not presumed lost, plus those
    /// retransmitted (below HighRxt).
    pub(super) fn pipe(&self, lost_end: u64) -> u64 {
        let (una, max) = (self.send.snd_una, self.send.snd_max);
        let sb = &self.loss.scoreboard;
        sb.unsacked_in(una, max) - sb.unsacked_in(una, lost_end.clamp(una, max))
            + sb.unsacked_in(una, self.loss.high_rxt.clamp(una, max))
    }

    /// RFC 6675 section 5 step (C): while the pipe leaves room for the segment NextSeg
    /// (section 4) returns, send it. C.2: a retransmission by rule 1 or 3 moves HighRxt to its
    /// end (and counts in the pipe from then on); C.3: new data moves HighData (snd_max).
    pub(super) fn sack_output(&mut self, cx: &mut AgentCx<impl Host>) {
        let send_limit = self.w.peer_window.min(self.cfg.send_buffer.0);
        loop {
            // The lowest lost segment not yet resent and the pipe: by RFC 6675's IsLost above
            // HighRxt, or the lowest segment RACK marked lost.
            let (lost, pipe) = match self.loss.rack.as_mut() {
                Some(r) => {
                    let hole = r.next_lost();
                    (hole, self.loss.scoreboard.unsacked_in(self.send.snd_una, self.send.snd_max) - r.lost_bytes())
                }
                None => {
                    let lost_end = self.loss.scoreboard.lost_below(self.lost_threshold()).min(self.send.snd_max);
                    (
                        self.loss.scoreboard.next_hole(self.loss.high_rxt.max(self.send.snd_una), lost_end),
                        self.pipe(lost_end),
                    )
                }
            };
            let Some((next, rule)) = self.next_seg(lost, send_limit) else { break };
            let len = (self.segment_at(next).0 as u64).max(1);
            if pipe + len > self.w.cwnd || self.send_held(cx) {
                break;
            }
            let Some(end) = self.transmit(next, cx) else { break };
            match rule {
                NextSeg::NewData => {
                    self.send.snd_nxt = end;
                    self.send.snd_max = end;
                }
                NextSeg::Lost | NextSeg::BelowSacked => self.loss.high_rxt = end,
                // RescueRxt = RecoveryPoint (HighData when recovery began); HighRxt unchanged.
                NextSeg::Rescue => self.loss.rescue_rxt = Some(self.loss.recover_end - 1),
            }
        }
        if !self.timers.is_armed(TcpTimer::Retransmit) {
            self.arm_retransmit(cx);
        }
    }

    /// RFC 6675 section 4 NextSeg, given rule 1's answer (`lost`: the lowest IsLost hole above
    /// HighRxt, or RACK's lowest mark). Rule 2: new data, if the receiver's window and the send
    /// buffer take it. Without RACK, rules 3 and 4, the "last resort" that keeps the ACK clock
    /// going when nothing is deemed lost and no new data can go: a tail loss with fewer than
    /// DupThresh segments SACKed above it would otherwise wait for the RTO. With RACK, quench
    /// follows Linux (`tcp_xmit_retransmit_queue` resends only what is marked lost) and leaves
    /// the tail to RACK's timer and the loss probe.
    fn next_seg(&self, lost: Option<u64>, send_limit: u64) -> Option<(u64, NextSeg)> {
        if let Some(seq) = lost {
            return Some((seq, NextSeg::Lost));
        }
        if self.send.snd_nxt < self.send.data_end + self.send.finite as u64 {
            let len = (self.segment_at(self.send.snd_nxt).0 as u64).max(1);
            if self.flight() + len <= send_limit {
                return Some((self.send.snd_nxt, NextSeg::NewData));
            }
        }
        if self.loss.rack.is_some() {
            return None;
        }
        // Rule 3: the first unSACKed sequence number above HighRxt (1.a) and below the highest
        // SACKed octet (1.b), whether IsLost or not.
        let from = self.loss.high_rxt.max(self.send.snd_una);
        if let Some(seq) = self.loss.scoreboard.sacked_end().and_then(|end| self.loss.scoreboard.next_hole(from, end)) {
            return Some((seq, NextSeg::BelowSacked));
        }
        self.rescue()
    }

    /// NextSeg rule 4: once per recovery, when HighACK (the highest octet cumulatively
    /// acknowledged, snd_una − 1) is above RescueRxt (set at the start of recovery to the last
    /// octet of the first retransmission, so not before that retransmission is acknowledged),
    /// the segment holding the highest outstanding unSACKed sequence number. Segments are
    /// counted from the start of the hole that holds it (everything quench sends is cut from
    /// snd_una in MSS steps), and the FIN rides with the last data byte. Where quench departs
    /// from the RFC's wording, two bounds against resending what is not lost:
    /// - only data sent before recovery began (below RecoveryPoint): data sent during recovery
    ///   has been out for less than the RTT that would tell, and when a finite transfer ends
    ///   in recovery its last segment is in flight, not lost (without this bound the
    ///   overshoot run of `tests/tcp_sack.rs` resends it). FreeBSD (`tcp_sack_partialack`)
    ///   goes further and rescues only when nothing at all was sent during recovery.
    /// - not a hole that rule 1 or 3 already resent in this recovery (below HighRxt): a third
    ///   copy within one RTT of the second (rule 3's resend followed by a partial ACK).
    fn rescue(&self) -> Option<(u64, NextSeg)> {
        if self.loss.rescue_rxt.is_some_and(|r| self.send.snd_una.saturating_sub(1) <= r) {
            return None;
        }
        let (lo, hi) =
            self.loss.scoreboard.last_hole(self.send.snd_una, self.loss.recover_end.min(self.send.snd_max))?;
        if hi <= self.loss.high_rxt {
            return None;
        }
        let last = if hi > self.send.data_end && self.send.data_end > lo { self.send.data_end } else { hi };
        Some((lo + (last - 1 - lo) / self.w.mss * self.w.mss, NextSeg::Rescue))
    }

    pub(super) fn enter_sack_recovery(&mut self, cx: &mut AgentCx<impl Host>) {
        self.w.flight = self.flight();
        self.w.ssthresh = self.loss_ssthresh();
        self.w.cwnd = self.w.ssthresh;
        self.loss.recover_end = self.send.snd_max;
        self.loss.ca = CaState::Recovery { partial_ack_seen: false }; // supersedes CWR, as in Linux
        self.stats.fast_retransmits += 1;
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::FastRetransmit);
        self.prr_start();
        match self.prr_sndcnt() {
            // PRR: the fast retransmission below is part of this ACK's sndcnt.
            Some(sndcnt) => self.prr_allow(sndcnt, cx),
            None => self.record_window(cx),
        }
        // RFC 6675 section 5 step (4.3): retransmit the first segment presumed lost (with RACK,
        // the lowest one marked; Linux's `tcp_xmit_retransmit_queue` sends it whatever the pipe).
        self.tlp_end_episode();
        // RescueRxt: the last octet of that segment (no rescue before it is acknowledged).
        let first = self.loss.rack.as_mut().map_or(Some(self.send.snd_una), |r| r.next_lost());
        if let Some(seq) = first {
            let (len, fin) = self.segment_at(seq);
            self.loss.rescue_rxt = Some(seq + len as u64 + fin as u64 - 1);
        }
        if let Some(end) = first.and_then(|seq| self.send_at_once(seq, cx)) {
            self.loss.high_rxt = end;
        }
        self.arm_retransmit(cx);
        self.sack_output(cx);
    }

    /// A new recovery may start: the cumulative ACK is past the last recovery's or timeout's
    /// `recover` (RFC 6582, RFC 6675's RecoveryPoint), the highest sequence number sent when it
    /// began; `recover_end` is one past it.
    /// - Without SACK, RFC 6582 section 3.2 step 4 defines the test exactly: the ACK "covers
    ///   more than recover when ack_number − 1 > recover", at least one octet beyond it, so
    ///   `snd_una > recover_end`. An ACK of exactly `recover_end` does not qualify: after a
    ///   timeout the go-back-N resends of data the receiver already holds bring duplicates of
    ///   that ACK, which must not trigger a fast retransmit (RFC 6582 section 4). (The RFC
    ///   starts `recover` at the ISS, which taken literally refuses a fast retransmit of the
    ///   first data segment, acknowledged by ISS + 1; `recover_end` starts at 0, the ISS, as
    ///   if `recover` were ISS − 1.)
    /// - With SACK, RFC 6675 section 5.1 after a timeout: no new recovery until HighACK (the
    ///   highest octet acknowledged, snd_una − 1) ≥ RecoveryPoint (recover_end − 1), so
    ///   `snd_una >= recover_end`; section 5 says "beyond the last value of RecoveryPoint"
    ///   without defining the point compared, and quench reads it the same way, as Linux
    ///   does for a SACK connection (`tcp_try_undo_recovery` holds the state at
    ///   snd_una = high_seq for Reno only) and ns-3 does (`m_highRxAckMark >= m_recover`):
    ///   the SACK blocks above the hole say the loss is of data sent after the last recovery
    ///   began. RACK's marks likewise.
    pub(super) fn past_recovery_point(&self) -> bool {
        if self.loss.sack {
            self.send.snd_una >= self.loss.recover_end
        } else {
            self.send.snd_una > self.loss.recover_end
        }
    }

    /// Recovery's window is acknowledged: deflate to ssthresh (RFC 5681 3.2 step 6, RFC 6582
    /// 3.2 step 3, RFC 6675 section 5). With Linux's emulation of SACK the controller keeps
    /// its window (`reno_sack.rs`): BBR restores its own on its next turn.
    pub(super) fn exit_recovery(&mut self, cx: &mut AgentCx<impl Host>) {
        self.loss.ca = CaState::Open;
        self.loss.dupacks = 0;
        if let Some(r) = self.loss.reno.as_mut() {
            return r.reset();
        }
        // A `cong_control` module's window is its own at the end of recovery too (Linux's
        // `tcp_end_cwnd_reduction` returns before setting it); the controller restores it.
        if self.cc.capabilities().linux_cong_control {
            return;
        }
        self.w.cwnd = self.w.ssthresh;
        self.record_window(cx);
    }

    /// RFC 3042: on the first and second duplicate ACK, one new segment if the receiver's
    /// window allows, without touching cwnd.
    pub(super) fn limited_transmit(&mut self, cx: &mut AgentCx<impl Host>) {
        let (len, _) = self.segment_at(self.send.snd_nxt);
        let allowance = self.w.cwnd + self.loss.dupacks as u64 * self.w.mss;
        let limit = self.w.peer_window.min(self.cfg.send_buffer.0).min(allowance);
        if self.send.snd_nxt == self.send.snd_max
            && len > 0
            && self.flight() + len as u64 <= limit
            && !self.send_held(cx)
        {
            if let Some(end) = self.transmit(self.send.snd_nxt, cx) {
                self.send.snd_nxt = end;
                self.send.snd_max = end;
            }
        }
    }

    /// RFC 6675 section 5 step (3): (3.1) HighRxt = HighACK (quench's `high_rxt` is read as at
    /// least snd_una everywhere), (3.2) SetPipe, (3.3) while cwnd − pipe ≥ one segment and the
    /// receiver's window and the send buffer take it, one new segment, then back to (3.2).
    pub(super) fn limited_transmit_by_pipe(&mut self, cx: &mut AgentCx<impl Host>) {
        let send_limit = self.w.peer_window.min(self.cfg.send_buffer.0);
        while self.send.snd_nxt == self.send.snd_max {
            let (len, _) = self.segment_at(self.send.snd_nxt);
            let len = len as u64;
            if len == 0 || self.sack_pipe() + len > self.w.cwnd || self.flight() + len > send_limit {
                break;
            }
            if self.send_held(cx) {
                break;
            }
            let Some(end) = self.transmit(self.send.snd_nxt, cx) else { break };
            self.send.snd_nxt = end;
            self.send.snd_max = end;
        }
    }
}
