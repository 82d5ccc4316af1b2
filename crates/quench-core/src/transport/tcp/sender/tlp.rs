//! Tail Loss Probe (RFC 8985 section 7; docs/mechanisms.md#rack-tlp), part of
//! `tcp.loss_detection = "rack"`: when the ACKs stop while data is outstanding, the sender
//! sends one probe segment after a probe timeout (PTO) instead of waiting for the RTO, so that
//! the probe's ACK (with SACK) lets RACK find the lost tail and fast recovery repair it.
//!
//! Scheduling (section 7.2): after new data is sent (not a probe) or an ACK advances SND.UNA,
//! while the sender is in neither fast nor RTO recovery and nothing is SACKed, the PTO timer
//! stands in for the RTO timer: `PTO = 2·SRTT`, plus the worst-case delayed ACK `WCDelAckT`
//! when one segment is in flight (with `tcp.probe_timeout = "linux"`, plus 2 ms otherwise, as
//! Linux's `tcp_schedule_loss_probe`), 1 s before any RTT sample; never later than the RTO
//! would have fired. Sending (7.3): on expiry, a new segment if one is ready and the receiver's window
//! allows (cwnd does not limit it), else the highest segment sent again; one probe per episode
//! (`TLP.end_seq` set until the episode ends), and the RTO timer rearmed from the probe.
//! Detection (7.4): the episode ends when SND.UNA reaches `TLP.end_seq` (or fast recovery,
//! a timeout or an ECN-Echo reduction starts, which reduce the window themselves: Linux's
//! `tcp_init_cwnd_reduction` clears `tlp_high_seq` for each, `tcp_enter_cwr` included, so
//! that a tail lost after ECN-Echo is probed again rather than left to the RTO); if the probe was a
//! retransmission, either it or the original was lost and the sender reduces its window once
//! (ssthresh from the controller, cwnd = ssthresh, as Linux's `tcp_process_tlp_ack`). The
//! case of both arriving (a spurious probe, section 7.4.1) also reduces the window: the
//! probe's D-SACK (`tcp.dsack`) is kept only from RACK's reordering window (`dsack.rs`).
//! Part of `TcpSender`: owns the probe's episode (`Tlp`, in `LossRecovery`) and arms the PTO in the
//! RTO's place. It reaches the host only through its `AgentCx`, never the world or the receiver.

use super::super::config::ProbeTimeout;
use super::super::TcpTimer;
use super::{CaState, TcpSender};
use crate::cc::{CongestionControl, Signal};
use crate::trace::TcpEvent;
use crate::transport::{AgentCx, Host};
use crate::units::{Dur, Time};

/// RFC 8985 section 7.2: WCDelAckT, the worst-case delayed-ACK timer of the receiver,
/// RECOMMENDED 200 ms (RFC 1122's limit is 500 ms; 200 ms is Linux's `TCP_DELACK_MAX`).
pub(crate) const WC_DEL_ACK_T: Dur = Dur::from_millis(200);
/// RFC 8985 section 7.2: the PTO before any RTT sample.
const PTO_WITHOUT_SRTT: Dur = Dur::from_secs(1);
/// RFC 8985 section 7.2: PTO = 2·SRTT.
const PTO_SRTT_MULTIPLE: u64 = 2;
/// Linux's `TCP_TIMEOUT_MIN` (include/net/tcp.h: 2 jiffies at HZ = 1000; `TCP_TIMEOUT_MIN_US`
/// in later kernels), which `tcp_schedule_loss_probe` adds to 2·SRTT when more than one packet
/// is out.
const LINUX_TIMEOUT_MIN: Dur = Dur::from_millis(2);

/// What an ACK says beside its cumulative acknowledgement, for `tlp_on_ack`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TlpAck {
    /// It D-SACKs the probe: one segment ending at TLP.end_seq (Linux's `FLAG_DSACK_TLP`).
    pub dsack_of_probe: bool,
    /// It acknowledges nothing new, SACKs no new data and carries none (Linux's test: none
    /// of `FLAG_SND_UNA_ADVANCED`, `FLAG_NOT_DUP`, `FLAG_DATA_SACKED`).
    pub pure_duplicate: bool,
}

/// The state of TLP (RFC 8985 section 7.1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tlp {
    /// TLP.end_seq: SND.NXT when the probe of the current episode was sent.
    end_seq: Option<u64>,
    /// TLP.is_retrans: that probe resent old data.
    is_retrans: bool,
    pub probes: u64,
    /// Episodes that ended with a probe retransmission repairing a loss.
    pub recoveries: u64,
}

impl Tlp {
    /// TLP.end_seq while an episode lasts (a D-SACK ending there is the probe's duplicate).
    pub(super) fn probe_end(&self) -> Option<u64> {
        self.end_seq
    }
}

/// RFC 8985 section 7.2 `TLP_calc_PTO`: the probe timeout from `now`, given SRTT, whether one
/// segment is in flight, when the RTO timer would fire and the rule for more than one segment.
pub(crate) fn pto(srtt: Option<Dur>, one_segment: bool, now: Time, rto_expiry: Time, rule: ProbeTimeout) -> Dur {
    let beyond_two_srtt = match (one_segment, rule) {
        (true, _) => WC_DEL_ACK_T,
        (false, ProbeTimeout::Rfc8985) => Dur::ZERO,
        (false, ProbeTimeout::Linux) => LINUX_TIMEOUT_MIN,
    };
    let pto = match srtt {
        Some(s) => Dur(PTO_SRTT_MULTIPLE * s.0) + beyond_two_srtt,
        None => PTO_WITHOUT_SRTT,
    };
    pto.min(rto_expiry.saturating_sub(now))
}

impl TcpSender {
    /// Section 7.2: arm the PTO in place of the RTO timer if a probe may be scheduled now.
    pub(super) fn tlp_schedule(&mut self, cx: &mut AgentCx<impl Host>) {
        let Some(tlp) = self.loss.tlp.as_ref() else { return };
        let eligible = matches!(self.loss.ca, CaState::Open | CaState::Disorder | CaState::Cwr(_))
            && self.send.snd_max > self.send.snd_una
            && self.loss.scoreboard.sacked_in(self.send.snd_una, self.send.snd_max) == 0
            && tlp.end_seq.is_none();
        if !eligible {
            return;
        }
        let one_segment = self.flight() <= self.w.mss + self.send.finite as u64;
        // The RTO that would fire: the one last armed, still running or stood in for by a
        // pending probe timer (sends meanwhile do not restart it).
        let rto_expiry = if self.timers.rto_pending() {
            self.timers.rto_deadline()
        } else {
            self.timing.rtt.expiry(cx.now, self.timing.rtt.rto())
        };
        let at = cx.now + pto(self.timing.rtt.srtt(), one_segment, cx.now, rto_expiry, self.cfg.probe_timeout);
        self.timers.cancel(TcpTimer::Retransmit);
        self.timers.arm(TcpTimer::Probe, at, cx);
    }

    /// Section 7.3 `TLP_send_probe`, at the PTO's expiry.
    pub(super) fn on_probe_timer(&mut self, cx: &mut AgentCx<impl Host>) {
        let probing = matches!(self.loss.ca, CaState::Open | CaState::Disorder | CaState::Cwr(_))
            && self.send.snd_max > self.send.snd_una
            && self.loss.tlp.as_ref().is_some_and(|t| t.end_seq.is_none());
        if probing {
            let (len, _) = self.segment_at(self.send.snd_nxt);
            let unsent = self.send.snd_nxt < self.send.data_end + self.send.finite as u64;
            let window = self.w.peer_window.min(self.cfg.send_buffer.0);
            let new_data = unsent && self.send.snd_nxt == self.send.snd_max && self.flight() + len as u64 <= window;
            let seq = if new_data { self.send.snd_nxt } else { self.last_segment_start() };
            if let Some(end) = self.send_at_once(seq, cx) {
                if new_data {
                    self.send.snd_nxt = end;
                    self.send.snd_max = end;
                }
                let snd_max = self.send.snd_max;
                if let Some(t) = self.loss.tlp.as_mut() {
                    (t.end_seq, t.is_retrans) = (Some(snd_max), !new_data);
                    t.probes += 1;
                }
                let now = cx.now;
                cx.rec().event(now, self.conn.flow, TcpEvent::LossProbe);
            }
        }
        // "After attempting to send a loss probe, regardless of whether a loss probe was sent,
        // the sender MUST re-arm the RTO timer, not the PTO timer, if FlightSize is not zero."
        if self.send.snd_max > self.send.snd_una {
            self.arm_retransmit(cx);
        }
    }

    /// Where the highest segment sent so far starts (segments lie `mss` apart from the first
    /// data byte; a FIN's sequence number rides on the last one).
    fn last_segment_start(&self) -> u64 {
        let last = self.send.snd_max.min(self.send.data_end).max(super::FIRST_DATA_SEQ + 1) - 1;
        super::FIRST_DATA_SEQ + (last - super::FIRST_DATA_SEQ) / self.w.mss * self.w.mss
    }

    /// Section 7.4 `TLP_process_ack`, as Linux's `tcp_process_tlp_ack` decides it, for an ACK
    /// of `ack` (`facts`: what else the ACK says). Once the ACK reaches TLP.end_seq the episode
    /// ends without a reduction if the probe sent new data, or if the ACK D-SACKs the probe
    /// (its original arrived too), or if it is a pure duplicate (the same, from a receiver that
    /// sends no D-SACK); it ends with one window reduction when an ACK goes beyond
    /// TLP.end_seq (the probe repaired a loss). An ACK of exactly TLP.end_seq that advances
    /// the window or carries new SACK data decides nothing: the probe or its original arrived,
    /// and the next ACK tells which.
    pub(super) fn tlp_on_ack(&mut self, ack: u64, facts: TlpAck, cx: &mut AgentCx<impl Host>) {
        let recovering = self.in_recovery() || self.loss.ca == CaState::Loss;
        let Some(t) = self.loss.tlp.as_mut() else { return };
        let Some(end) = t.end_seq else { return };
        if ack < end {
            return;
        }
        let repaired = t.is_retrans && !facts.dsack_of_probe;
        if repaired && ack == end && !facts.pure_duplicate {
            return;
        }
        t.end_seq = None;
        if !repaired || ack == end || recovering {
            return; // no loss, or recovery's own reduction already applies
        }
        t.recoveries += 1;
        self.w.flight = self.flight();
        self.w.ssthresh = self.cc.on_congestion(&self.w, Signal::DupAcks);
        self.w.cwnd = self.w.cwnd.min(self.w.ssthresh);
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::ProbeRecovery);
        self.record_window(cx);
    }

    /// Fast recovery or a retransmission timeout ends any probe episode: their own window
    /// reduction takes over (Linux clears `tlp_high_seq` in `tcp_init_cwnd_reduction`).
    pub(super) fn tlp_end_episode(&mut self) {
        self.tlp_end_episode_on_cwr();
        self.timers.cancel(TcpTimer::Probe);
    }

    /// An ECN-Echo reduction (Linux's `tcp_enter_cwr`, through `tcp_init_cwnd_reduction`) ends
    /// the probe's episode too, so that the next ACK of new data may schedule another probe.
    /// No probe timer runs during an episode (one is armed only outside one), so none is
    /// cancelled here, and an ACK that advances nothing rearms none, as in Linux (only an ACK
    /// that sets `FLAG_SET_XMIT_TIMER` reaches `tcp_schedule_loss_probe`).
    pub(super) fn tlp_end_episode_on_cwr(&mut self) {
        if let Some(t) = self.loss.tlp.as_mut() {
            t.end_seq = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    /// RFC 8985 section 7.2 by hand: SRTT 100 ms gives 200 ms, 400 ms with one segment in
    /// flight; 1 s before a sample; capped at the RTO's expiry.
    #[test]
    fn the_probe_timeout_follows_section_7_2() {
        let now = Time::ZERO + ms(1000);
        let far = Time::ZERO + ms(10_000);
        let rfc = ProbeTimeout::Rfc8985;
        assert_eq!(pto(Some(ms(100)), false, now, far, rfc), ms(200));
        assert_eq!(pto(Some(ms(100)), true, now, far, rfc), ms(400));
        assert_eq!(pto(None, false, now, far, rfc), ms(1000));
        assert_eq!(pto(Some(ms(100)), true, now, now + ms(300), rfc), ms(300));
    }

    /// Linux's `tcp_schedule_loss_probe` by hand: `(srtt_us >> 2)` (2·SRTT) plus
    /// `TCP_TIMEOUT_MIN` with more than one packet out, plus `TCP_RTO_MIN` (200 ms, RFC 8985's
    /// WCDelAckT) with one; `TCP_TIMEOUT_INIT` before a sample; the RTO's remainder caps it.
    /// In a datacenter the 2 ms dominates: SRTT 25 µs gives 2.05 ms, not 50 µs.
    #[test]
    fn linux_adds_two_milliseconds_with_more_than_one_segment_out() {
        let now = Time::ZERO + ms(1000);
        let far = Time::ZERO + ms(10_000);
        let linux = ProbeTimeout::Linux;
        assert_eq!(pto(Some(ms(100)), false, now, far, linux), ms(202));
        assert_eq!(pto(Some(ms(100)), true, now, far, linux), ms(400));
        assert_eq!(pto(Some(Dur::from_micros(25)), false, now, far, linux), Dur::from_micros(2_050));
        assert_eq!(pto(None, false, now, far, linux), ms(1000));
        assert_eq!(pto(Some(ms(100)), false, now, now + ms(150), linux), ms(150));
    }
}
