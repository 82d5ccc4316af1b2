//! Explicit Congestion Notification for TCP (RFC 3168 sections 6.1.1-6.1.5; RFC 2481 before it;
//! docs/mechanisms.md#ecn), kept apart from the reliability code. With `tcp.ecn = true`:
//! - **Negotiation** (6.1.1): the SYN carries ECE|CWR; a receiver that agrees answers with a
//!   SYN-ACK carrying ECE (not CWR). Only then is the connection ECN-capable.
//! - **Sender** (6.1.2, 6.1.4, 6.1.5): new data segments carry ECT(0) (ECT(1) when the
//!   controller is scalable, RFC 9331 section 4.1: `ect_codepoint`); retransmissions, pure
//!   ACKs and the SYN do not, unless the controller asks for ECT on every packet, as Linux's
//!   DCTCP does (`ect_on_every_packet`: the SYN, SYN-ACK and pure ACKs too, and everything
//!   after a handshake that agreed on ECN). On an ACK with ECE the sender reduces at most once per window of
//!   data — not again until data sent after the reduction is acknowledged, and not during loss
//!   recovery (which already reduced for that window): `ssthresh` from the controller's rule
//!   for `Signal::EcnEcho` (half the flight for Reno/NewReno), `cwnd = min(cwnd, ssthresh)`,
//!   nothing retransmitted. The next new data segment carries CWR.
//! - **One-segment window** (6.1.2): if cwnd is already one MSS, it cannot be halved; the sender
//!   resets the retransmission timer and sends no new data until it expires. If data is still
//!   outstanding then, the expiry is an ordinary timeout; otherwise sending resumes.
//! - **Receiver** (6.1.3): from a CE data segment on, every ACK carries ECE until a segment with
//!   CWR arrives (a segment with both CWR and CE starts a new echo).
//!
//! Owns the sender's and the receiver's ECN state. It reads and sets the ECN codepoint and flags of
//! the packets it is handed, but sends nothing and never changes the window: the sender applies the
//! reduction.

use crate::packet::{ecn, tcp_flags, Packet};

/// The sender's ECN state.
#[derive(Clone, Debug, Default)]
pub(crate) struct SenderEcn {
    /// ECN was requested and the peer agreed on the SYN-ACK.
    pub negotiated: bool,
    /// No further reduction for ECE until an ACK goes beyond this sequence number.
    window_end: u64,
    /// A reduction has happened (`window_end` is that reduction's window).
    reduced_once: bool,
    /// Set CWR on the next new data segment.
    cwr_pending: bool,
    /// One-MSS case: no new data until the retransmission timer expires.
    pub waiting_for_timer: bool,
    /// The controller's ECT codepoint and whether every packet carries it
    /// (`cc::Capabilities`), fixed when the sender is built.
    pub ect_codepoint: u8,
    pub ect_on_every_packet: bool,
}

impl SenderEcn {
    /// Before negotiation, for a controller with these ECN capabilities.
    pub fn new(ect_codepoint: u8, ect_on_every_packet: bool) -> Self {
        SenderEcn { ect_codepoint, ect_on_every_packet, ..SenderEcn::default() }
    }

    /// The SYN's flags: ECE|CWR when ECN is requested.
    pub fn syn_flags(requested: bool) -> u8 {
        if requested {
            tcp_flags::ECE | tcp_flags::CWR
        } else {
            0
        }
    }

    /// The SYN's ECN codepoint: ECT when ECN is requested by a controller that wants it on
    /// every packet (Linux sets it on the socket before the SYN), Not-ECT otherwise.
    pub fn syn_codepoint(requested: bool, every_packet: bool, codepoint: u8) -> u8 {
        if requested && every_packet {
            codepoint
        } else {
            ecn::NOT_ECT
        }
    }

    /// Negotiation: the SYN-ACK carries ECE and not CWR.
    pub fn on_syn_ack(&mut self, requested: bool, syn_ack: &Packet) {
        self.negotiated = requested && syn_ack.has_flag(tcp_flags::ECE) && !syn_ack.has_flag(tcp_flags::CWR);
    }

    /// Does this ACK call for a window reduction? (`recover`: the end of the window of the
    /// last loss recovery, which already reduced once.)
    pub fn wants_reduction(&self, ack: &Packet, in_recovery: bool, recover: u64) -> bool {
        self.negotiated
            && ack.has_flag(tcp_flags::ECE)
            && !in_recovery
            && ack.ack > self.window_end
            && ack.ack > recover
    }

    /// A reduction happened with `snd_max` sent so far.
    pub fn reduced(&mut self, snd_max: u64) {
        self.window_end = snd_max;
        self.reduced_once = true;
        self.cwr_pending = true;
    }

    /// Whether the window of the last ECN reduction is still being acknowledged (nothing sent
    /// after it is acknowledged yet, `snd_una` ≤ its end): a loss found now is in a window
    /// already reduced for, and RFC 3168 section 6.1.2 says ssthresh SHOULD NOT be decreased
    /// again within the round trip (Linux's `tcp_enter_recovery` keeps the reduction under way
    /// when it finds the sender in CWR).
    pub fn reducing(&self, snd_una: u64) -> bool {
        self.reduced_once && snd_una <= self.window_end
    }

    /// The controller's ECT codepoint (`codepoint`: ECT(0), or ECT(1) for a scalable
    /// controller) on new data, or on every segment when the controller wants it so
    /// (`every_packet`), and CWR on the first new data segment after a reduction.
    /// [`SenderEcn::stamp`] with the controller's codepoint and scope.
    #[inline]
    pub fn stamp_segment(&self, pkt: &mut Packet, retransmit: bool) {
        self.stamp(pkt, retransmit, self.ect_codepoint, self.ect_on_every_packet)
    }

    pub fn stamp(&self, pkt: &mut Packet, retransmit: bool, codepoint: u8, every_packet: bool) {
        if !self.negotiated {
            return;
        }
        let new_data = !retransmit && pkt.payload > 0;
        if new_data || every_packet {
            pkt.ecn = codepoint;
        }
        if new_data && self.cwr_pending {
            pkt.flags |= tcp_flags::CWR;
        }
    }

    /// A stamped segment left the host: a CWR it carried is said (a refused one never left, so
    /// the next segment carries it, as Linux queues CWR again in `tcp_enter_cwr`).
    pub fn sent(&mut self, pkt: &Packet) {
        if pkt.has_flag(tcp_flags::CWR) {
            self.cwr_pending = false;
        }
    }
}

/// The receiver's ECN state.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReceiverEcn {
    negotiated: bool,
    /// Set ECE on ACKs.
    echo: bool,
    /// RFC 8257 section 3.2 (the sender's controller asks for `EcnFeedback::Accurate`): ECE
    /// mirrors the CE state of the latest data segment, CWR is ignored.
    accurate: bool,
    /// A CE mark was seen and no CWR since (Linux's `TCP_ECN_DEMAND_CWR`): the classic echo.
    demand_cwr: bool,
    /// An ECT or CE segment was seen (Linux's `TCP_ECN_SEEN`).
    seen_ect: bool,
    /// The codepoint of the SYN-ACK and every ACK once ECN is agreed, when the controller
    /// wants ECT on every packet (`CongestionControl::ect_on_every_packet`).
    every_packet: Option<u8>,
}

impl ReceiverEcn {
    /// A SYN arrived: agree if ECN is enabled here and the SYN asks with ECE|CWR. Returns the
    /// extra SYN-ACK flags.
    pub fn on_syn(&mut self, enabled: bool, syn: &Packet) -> u8 {
        self.negotiated = enabled && syn.has_flag(tcp_flags::ECE) && syn.has_flag(tcp_flags::CWR);
        if self.negotiated {
            tcp_flags::ECE
        } else {
            0
        }
    }

    /// The receiver of a connection whose controller gives `feedback` (RFC 8257 section 3.2's
    /// instead of RFC 3168's when `Accurate`) and wants its ACKs to carry `every_packet`'s
    /// codepoint, if any.
    pub fn new(feedback: crate::cc::EcnFeedback, every_packet: Option<u8>) -> Self {
        ReceiverEcn { accurate: feedback == crate::cc::EcnFeedback::Accurate, every_packet, ..Default::default() }
    }

    /// The codepoint of the SYN-ACK and the ACKs: Not-ECT (RFC 3168 section 6.1.4), or ECT
    /// once ECN is agreed for a controller that wants it on every packet.
    pub fn codepoint(&self) -> u8 {
        match self.every_packet {
            Some(codepoint) if self.negotiated => codepoint,
            _ => ecn::NOT_ECT,
        }
    }

    /// With accurate feedback: this segment's CE state differs from the one echoed so far, so
    /// the data received before it must be acknowledged at once with the old state (RFC 8257
    /// section 3.2: a delayed ACK never covers segments of both states).
    pub fn ce_state_changes(&self, pkt: &Packet) -> bool {
        self.accurate && self.negotiated && (pkt.ecn == ecn::CE) != self.echo
    }

    /// A data segment arrived: CWR ends the echo, CE (re)starts it; with accurate feedback the
    /// echo is the segment's CE state. Returns whether Linux's receiver would enter quick-ack
    /// mode for it (`tcp_ecn_check_ce`): a CE mark while no CWR is awaited (`demand_cwr`, set
    /// by CE and cleared by CWR in both feedback modes), or a Not-ECT segment once ECT ones
    /// were seen (a retransmission).
    pub fn on_data(&mut self, pkt: &Packet) -> bool {
        if !self.negotiated {
            return false;
        }
        if pkt.has_flag(tcp_flags::CWR) {
            self.demand_cwr = false;
        }
        let quick_ack = match pkt.ecn {
            ecn::NOT_ECT => self.seen_ect,
            ecn::CE => !std::mem::replace(&mut self.demand_cwr, true),
            _ => false,
        };
        self.seen_ect |= pkt.ecn != ecn::NOT_ECT;
        if self.accurate {
            self.echo = pkt.ecn == ecn::CE;
        } else {
            self.echo = self.demand_cwr;
        }
        quick_ack
    }

    /// Flags an ACK carries.
    pub fn ack_flags(&self) -> u8 {
        if self.echo {
            tcp_flags::ECE
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::harness::packet;

    fn with(flags: u8, ecn_bits: u8) -> Packet {
        let mut p = packet(0, 0, 1040);
        p.flags = flags;
        p.ecn = ecn_bits;
        p
    }

    #[test]
    fn negotiation_needs_both_ends() {
        let mut rx = ReceiverEcn::default();
        let syn = with(tcp_flags::SYN | SenderEcn::syn_flags(true), ecn::NOT_ECT);
        assert_eq!(rx.on_syn(true, &syn), tcp_flags::ECE);
        assert_eq!(rx.on_syn(false, &syn), 0);
        let plain_syn = with(tcp_flags::SYN, ecn::NOT_ECT);
        assert_eq!(rx.on_syn(true, &plain_syn), 0);
        let mut tx = SenderEcn::default();
        tx.on_syn_ack(true, &with(tcp_flags::SYN | tcp_flags::ACK | tcp_flags::ECE, 0));
        assert!(tx.negotiated);
        // A SYN-ACK with ECE and CWR is a reflected SYN, not agreement (RFC 3168 6.1.1).
        tx.on_syn_ack(true, &with(tcp_flags::SYN | tcp_flags::ACK | tcp_flags::ECE | tcp_flags::CWR, 0));
        assert!(!tx.negotiated);
    }

    #[test]
    fn receiver_echoes_from_ce_until_cwr() {
        let mut rx = ReceiverEcn { negotiated: true, ..Default::default() };
        rx.on_data(&with(tcp_flags::ACK, ecn::ECT0));
        assert_eq!(rx.ack_flags(), 0);
        rx.on_data(&with(tcp_flags::ACK, ecn::CE));
        assert_eq!(rx.ack_flags(), tcp_flags::ECE);
        rx.on_data(&with(tcp_flags::ACK, ecn::ECT0));
        assert_eq!(rx.ack_flags(), tcp_flags::ECE); // still echoing
        rx.on_data(&with(tcp_flags::ACK | tcp_flags::CWR, ecn::ECT0));
        assert_eq!(rx.ack_flags(), 0);
        rx.on_data(&with(tcp_flags::ACK | tcp_flags::CWR, ecn::CE));
        assert_eq!(rx.ack_flags(), tcp_flags::ECE); // CWR and CE together: a new echo
    }

    /// Linux's `tcp_ecn_check_ce`: quick-ack mode on a CE mark while no CWR is awaited
    /// (`TCP_ECN_DEMAND_CWR` clear), not on later marks before CWR, again after it; and on a
    /// Not-ECT segment once ECT was seen (a retransmission). Nothing before negotiation.
    #[test]
    fn quick_ack_on_the_first_ce_and_on_retransmissions() {
        let mut rx = ReceiverEcn::default();
        assert!(!rx.on_data(&with(tcp_flags::ACK, ecn::CE)), "ECN not negotiated");
        let mut rx = ReceiverEcn { negotiated: true, ..Default::default() };
        assert!(!rx.on_data(&with(tcp_flags::ACK, ecn::NOT_ECT)), "no ECT seen yet");
        assert!(!rx.on_data(&with(tcp_flags::ACK, ecn::ECT0)));
        assert!(rx.on_data(&with(tcp_flags::ACK, ecn::CE)));
        assert!(!rx.on_data(&with(tcp_flags::ACK, ecn::CE)), "a CWR is still awaited");
        assert!(rx.on_data(&with(tcp_flags::ACK | tcp_flags::CWR, ecn::CE)), "CWR, then a new mark");
        assert!(rx.on_data(&with(tcp_flags::ACK, ecn::NOT_ECT)), "a retransmission");
        let mut accurate = ReceiverEcn::new(crate::cc::EcnFeedback::Accurate, None);
        accurate.negotiated = true;
        assert!(accurate.on_data(&with(tcp_flags::ACK, ecn::CE)));
        assert!(!accurate.on_data(&with(tcp_flags::ACK, ecn::CE)));
    }

    /// RFC 8257 section 3.2: ECE follows each segment's CE mark, and a change of state is
    /// reported before the segment that changes it is acknowledged; CWR plays no part.
    #[test]
    fn accurate_feedback_mirrors_the_ce_state() {
        let mut rx = ReceiverEcn::new(crate::cc::EcnFeedback::Accurate, None);
        rx.negotiated = true;
        let (ce, ect) = (with(tcp_flags::ACK, ecn::CE), with(tcp_flags::ACK, ecn::ECT0));
        assert!(!rx.ce_state_changes(&ect));
        assert!(rx.ce_state_changes(&ce));
        rx.on_data(&ce);
        assert_eq!(rx.ack_flags(), tcp_flags::ECE);
        assert!(!rx.ce_state_changes(&ce));
        rx.on_data(&with(tcp_flags::ACK | tcp_flags::CWR, ecn::CE));
        assert_eq!(rx.ack_flags(), tcp_flags::ECE, "CWR does not end the echo");
        assert!(rx.ce_state_changes(&ect));
        rx.on_data(&ect);
        assert_eq!(rx.ack_flags(), 0);
    }

    #[test]
    fn sender_stamps_ect_on_new_data_and_cwr_once() {
        let mut tx = SenderEcn { negotiated: true, ..Default::default() };
        let mut p = with(tcp_flags::ACK, 0);
        tx.stamp(&mut p, false, ecn::ECT0, false);
        assert_eq!((p.ecn, p.flags & tcp_flags::CWR), (ecn::ECT0, 0));
        tx.reduced(5000);
        let mut r = with(tcp_flags::ACK, 0);
        tx.stamp(&mut r, true, ecn::ECT0, false); // a retransmission: neither ECT nor CWR
        assert_eq!((r.ecn, r.flags & tcp_flags::CWR), (ecn::NOT_ECT, 0));
        let mut n = with(tcp_flags::ACK, 0);
        tx.stamp(&mut n, false, ecn::ECT0, false);
        assert_eq!((n.ecn, n.flags & tcp_flags::CWR), (ecn::ECT0, tcp_flags::CWR));
        // Refused by the host, `n` never left: the next segment carries CWR again.
        let mut again = with(tcp_flags::ACK, 0);
        tx.stamp(&mut again, false, ecn::ECT0, false);
        assert_eq!(again.flags & tcp_flags::CWR, tcp_flags::CWR);
        tx.sent(&again);
        let mut m = with(tcp_flags::ACK, 0);
        tx.stamp(&mut m, false, ecn::ECT0, false);
        assert_eq!(m.flags & tcp_flags::CWR, 0);
        // A scalable controller's codepoint (RFC 9331 section 4.1).
        let mut l = with(tcp_flags::ACK, 0);
        tx.stamp(&mut l, false, ecn::ECT1, false);
        assert_eq!(l.ecn, ecn::ECT1);
        // Once per window: ECE on ACKs up to 5000 is ignored.
        let mut ack = with(tcp_flags::ACK | tcp_flags::ECE, 0);
        ack.ack = 5000;
        assert!(!tx.wants_reduction(&ack, false, 0));
        ack.ack = 5001;
        assert!(tx.wants_reduction(&ack, false, 0));
        assert!(!tx.wants_reduction(&ack, true, 0));
        assert!(!tx.wants_reduction(&ack, false, 6000));
    }

    /// A controller that wants ECT on every packet (Linux's `TCP_CONG_NEEDS_ECN`, DCTCP): the
    /// SYN when ECN is requested, and after an agreeing handshake every segment, a
    /// retransmission and a pure ACK included, with CWR still on new data only; nothing when
    /// the handshake did not agree. The receiver's SYN-ACK and ACKs likewise.
    #[test]
    fn every_packet_ect_covers_control_packets_and_retransmissions() {
        assert_eq!(SenderEcn::syn_codepoint(true, true, ecn::ECT0), ecn::ECT0);
        assert_eq!(SenderEcn::syn_codepoint(true, false, ecn::ECT0), ecn::NOT_ECT);
        assert_eq!(SenderEcn::syn_codepoint(false, true, ecn::ECT0), ecn::NOT_ECT);
        let mut tx = SenderEcn { negotiated: true, ..Default::default() };
        tx.reduced(5000);
        let mut r = with(tcp_flags::ACK, 0);
        tx.stamp(&mut r, true, ecn::ECT0, true);
        assert_eq!((r.ecn, r.flags & tcp_flags::CWR), (ecn::ECT0, 0), "a retransmission: ECT, no CWR");
        let mut pure = with(tcp_flags::ACK, 0);
        pure.payload = 0;
        tx.stamp(&mut pure, false, ecn::ECT0, true);
        assert_eq!((pure.ecn, pure.flags & tcp_flags::CWR), (ecn::ECT0, 0), "a pure ACK: ECT, no CWR");
        let mut n = with(tcp_flags::ACK, 0);
        tx.stamp(&mut n, false, ecn::ECT0, true);
        assert_eq!((n.ecn, n.flags & tcp_flags::CWR), (ecn::ECT0, tcp_flags::CWR));
        let refused = SenderEcn::default();
        let mut d = with(tcp_flags::ACK, 0);
        refused.stamp(&mut d, false, ecn::ECT0, true);
        assert_eq!(d.ecn, ecn::NOT_ECT, "no ECT once the handshake did not agree");

        let asking = with(tcp_flags::SYN | tcp_flags::ECE | tcp_flags::CWR, ecn::ECT0);
        let mut rx = ReceiverEcn::new(crate::cc::EcnFeedback::Accurate, Some(ecn::ECT0));
        assert_eq!(rx.codepoint(), ecn::NOT_ECT, "nothing agreed yet");
        rx.on_syn(true, &asking);
        assert_eq!(rx.codepoint(), ecn::ECT0);
        let mut plain = ReceiverEcn::new(crate::cc::EcnFeedback::Rfc3168, None);
        plain.on_syn(true, &asking);
        assert_eq!(plain.codepoint(), ecn::NOT_ECT, "RFC 3168 section 6.1.4: ACKs are not ECT");
        let mut declined = ReceiverEcn::new(crate::cc::EcnFeedback::Accurate, Some(ecn::ECT0));
        declined.on_syn(true, &with(tcp_flags::SYN, ecn::ECT0));
        assert_eq!(declined.codepoint(), ecn::NOT_ECT);
    }

    /// A TCP sender driven by hand: every packet it emits and every timer it arms is visible.
    mod scripted {
        use super::super::super::{Connection, TcpConfig, TcpSender, TcpTimer};
        use super::*;
        use crate::cc::CcSpec;
        use crate::packet::{AgentId, NodeId};
        use crate::trace::{RecordConfig, Recorder, TcpEvent};
        use crate::transport::{AgentCx, Endpoint, ScriptedHost};
        use crate::units::{Dur, Time};

        const MSS: u64 = 1000;

        fn at(ms: u64) -> Time {
            Time::ZERO + Dur::from_millis(ms)
        }

        struct Script {
            tx: TcpSender,
            host: ScriptedHost,
        }

        impl Script {
            fn new(cc: &str) -> Self {
                let conn = Connection::for_tests(0, 1);
                let cfg = TcpConfig { mss: MSS as u32, ecn: true, ..Default::default() };
                let cc: CcSpec = serde_json::from_str(cc).unwrap();
                let tx = TcpSender::new(conn, cfg, cc.build().unwrap(), None);
                let rec = Recorder::new(RecordConfig::default(), vec![], 0);
                Script { tx, host: ScriptedHost::new(rec) }
            }
            fn with_cx(
                &mut self,
                now: Time,
                f: impl FnOnce(&mut TcpSender, &mut AgentCx<ScriptedHost>),
            ) -> Vec<Packet> {
                self.host.now = now;
                let mut cx = AgentCx::new(now, AgentId(0), NodeId(0), &mut self.host);
                f(&mut self.tx, &mut cx);
                std::mem::take(&mut self.host.sent)
            }
            fn ack(&mut self, now_ms: u64, ack: u64, flags: u8) -> Vec<Packet> {
                let mut p = packet(0, 0, 40);
                (p.ack, p.flags, p.payload, p.window) = (ack, tcp_flags::ACK | flags, 0, 1 << 20);
                self.with_cx(at(now_ms), |tx, cx| tx.on_packet(p, cx))
            }
            fn establish(&mut self) -> Vec<Packet> {
                let (syn, first) = self.open();
                assert_eq!(syn.ecn, ecn::NOT_ECT);
                first
            }
            /// The SYN, and what the sender sends on an agreeing SYN-ACK.
            fn open(&mut self) -> (Packet, Vec<Packet>) {
                let syn = self.with_cx(Time::ZERO, |tx, cx| tx.on_start(cx));
                assert_eq!(syn[0].flags, tcp_flags::SYN | tcp_flags::ECE | tcp_flags::CWR);
                (syn[0], self.ack(100, 1, tcp_flags::SYN | tcp_flags::ECE))
            }
            fn reductions(&self) -> usize {
                self.host.rec.events.event.iter().filter(|&&e| e == TcpEvent::EcnReduction as u8).count()
            }
        }

        #[test]
        fn sender_reduces_once_per_window_without_retransmitting() {
            let mut s = Script::new(r#"{"kind":"newreno","initial_window":4}"#);
            let first = s.establish();
            assert_eq!(first.len(), 4);
            assert!(first.iter().all(|p| p.ecn == ecn::ECT0 && p.flags & tcp_flags::CWR == 0));
            // The ACK of segment 1 echoes CE: flight 3 segments -> ssthresh = max(1.5, 2) = 2
            // segments, cwnd = 2 (not grown by this ACK); nothing retransmitted, nothing new
            // (flight 3 > cwnd 2).
            let sent = s.ack(200, 1 + MSS, tcp_flags::ECE);
            assert!(sent.is_empty());
            assert_eq!((s.tx.window().cwnd, s.tx.window().ssthresh), (2 * MSS, 2 * MSS));
            assert_eq!(s.reductions(), 1);
            // More ECE for data sent before the reduction: the same window, no second halving.
            let sent = s.ack(201, 1 + 2 * MSS, tcp_flags::ECE);
            let sent2 = s.ack(202, 1 + 3 * MSS, tcp_flags::ECE);
            assert_eq!(s.reductions(), 1);
            // The first new segment after the reduction carries CWR, later ones do not.
            let new: Vec<&Packet> = sent.iter().chain(&sent2).collect();
            assert!(!new.is_empty() && new.iter().all(|p| p.seq > 4 * MSS), "no retransmission");
            assert_ne!(new[0].flags & tcp_flags::CWR, 0);
            assert!(new[1..].iter().all(|p| p.flags & tcp_flags::CWR == 0));
            // ECE on an ACK beyond the window at the reduction (1 + 4 MSS): a new reduction.
            s.ack(300, 1 + 5 * MSS, tcp_flags::ECE);
            assert_eq!(s.reductions(), 2);
            assert_eq!(s.tx.stats.sent.retransmitted_segments, 0);
            assert_eq!(s.tx.stats.ecn_reductions, 2);
        }

        /// A loss found within the window of an ECN reduction starts fast recovery (the
        /// segment is resent at once) without decreasing ssthresh again (RFC 3168 section
        /// 6.1.2; Linux keeps its CWR reduction when it enters recovery).
        #[test]
        fn a_loss_within_the_ecn_reductions_window_is_not_a_second_reduction() {
            let mut s = Script::new(r#"{"kind":"newreno","initial_window":10}"#);
            assert_eq!(s.establish().len(), 10);
            // ECE on the ACK of segment 1: flight 9 segments, ssthresh 4.5 segments.
            s.ack(200, 1 + MSS, tcp_flags::ECE);
            assert_eq!(s.tx.window().ssthresh, 4500);
            // Segments 2-5 acknowledged; segment 6 lost: three duplicate ACKs, all for data
            // sent before the reduction. Halving again would take ssthresh to half of the
            // 5-segment flight.
            for (i, t) in (2..=5).zip(201..) {
                s.ack(t, 1 + i * MSS, 0);
            }
            let resent: Vec<Packet> = (210..213).flat_map(|t| s.ack(t, 1 + 5 * MSS, 0)).collect();
            assert!(resent.iter().any(|p| p.seq == 1 + 5 * MSS), "fast retransmission of segment 6");
            assert_eq!(s.tx.stats.fast_retransmits, 1);
            assert_eq!(s.tx.window().ssthresh, 4500, "the ECN reduction's ssthresh stands");
            assert_eq!(s.tx.stats.ecn_reductions, 1);
        }

        /// DCTCP's SYN is ECT(0), and so is its fast retransmission, where a NewReno sender's
        /// SYN and retransmission are Not-ECT.
        #[test]
        fn dctcp_sends_its_syn_and_retransmissions_ect() {
            for (cc, want) in [
                (r#"{"kind":"dctcp","initial_window":4}"#, ecn::ECT0),
                (r#"{"kind":"newreno","initial_window":4}"#, ecn::NOT_ECT),
            ] {
                let mut s = Script::new(cc);
                let (syn, first) = s.open();
                assert_eq!((syn.ecn, first.len()), (want, 4), "{cc}");
                assert!(first.iter().all(|p| p.ecn == ecn::ECT0), "new data is ECT(0) in both");
                // Segment 1 lost: three duplicate ACKs start fast retransmit.
                let mut resent = vec![];
                for ms in 0..3 {
                    resent.extend(s.ack(200 + ms, 1, 0));
                }
                let again: Vec<_> = resent.iter().filter(|p| p.seq == 1).collect();
                assert_eq!(again.len(), 1, "{cc}: the fast retransmission");
                assert_eq!(again[0].ecn, want, "{cc}");
            }
        }

        /// The reduction scales the window the ACK found, not the window that ACK would grow to
        /// (Linux's `tcp_enter_cwr` before any growth): DCTCP with alpha = 1 (every acknowledged
        /// byte marked) and 10 segments in slow start goes to 5 segments, not to half of 11.
        #[test]
        fn the_reduction_scales_the_window_the_ack_found() {
            let mut s = Script::new(r#"{"kind":"dctcp","initial_window":10,"initial_alpha":1.0}"#);
            let (_, first) = s.open();
            assert_eq!((first.len(), s.tx.window().cwnd), (10, 10 * MSS));
            s.ack(200, 1 + MSS, tcp_flags::ECE);
            assert_eq!((s.tx.window().ssthresh, s.tx.window().cwnd), (5 * MSS, 5 * MSS));
            assert_eq!(s.reductions(), 1);
        }

        #[test]
        fn one_segment_window_waits_for_the_retransmission_timer() {
            let mut s = Script::new(r#"{"kind":"tahoe","initial_window":1}"#);
            let first = s.establish();
            assert_eq!(first.len(), 1);
            // ECE on the ACK of the only segment, cwnd = 1 MSS: no new data, the timer is reset.
            let sent = s.ack(200, 1 + MSS, tcp_flags::ECE);
            assert!(sent.is_empty(), "must wait for the timer");
            assert_eq!(s.tx.window().cwnd, MSS);
            let deadline = at(200) + s.tx.rtt_estimator().rto();
            // Run the timer events as the world would: a stale expiry re-queues itself for the
            // moved deadline; nothing is sent before the deadline.
            let mut sent = vec![];
            while sent.is_empty() {
                let (when, timer) = s.host.timers.pop().expect("a retransmission timer is pending");
                assert_eq!(TcpTimer::of(timer), Some(TcpTimer::Retransmit));
                assert!(when <= deadline);
                sent = s.with_cx(when, |tx, cx| tx.on_timer(timer, cx));
                if !sent.is_empty() {
                    assert_eq!(when, deadline, "sent before the reset timer expired");
                }
            }
            // On expiry one new segment goes out with CWR; it is not a timeout.
            assert_eq!(sent.len(), 1);
            assert_eq!(sent[0].seq, 1 + MSS);
            assert_eq!((sent[0].ecn, sent[0].flags & tcp_flags::CWR), (ecn::ECT0, tcp_flags::CWR));
            assert_eq!(s.tx.stats.sent.timeouts, 0);
            assert_eq!(s.tx.stats.sent.retransmitted_segments, 0);
        }
    }
}
