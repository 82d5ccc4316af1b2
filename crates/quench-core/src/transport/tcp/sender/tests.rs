//! Unit tests of the sender driven by hand through a scripted host: congestion-state
//! transitions and the Linux host's local drop.
//! Tests only: the sender is driven through a `ScriptedHost`, never a world or a link.

use super::super::config::{
    CwndLimitedGrowth, LocalDropReaction, LossDetection, RecoveryReduction, SmallQueues, TcpConfig,
};
use super::super::{Connection, TcpTimer, HEADERS};
use super::{CaState, TcpSender};
use crate::cc::CcSpec;
use crate::packet::{tcp_flags, AgentId, NodeId, Packet};
use crate::trace::{RecordConfig, Recorder};
use crate::transport::{AgentCx, Endpoint, ScriptedHost, Timer};
use crate::units::{Dur, Time};

const MSS: u64 = 1000;

struct Script {
    tx: TcpSender,
    host: ScriptedHost,
}

impl Script {
    fn new(cc: &str, local_drop: LocalDropReaction) -> Self {
        Script::with(cc, TcpConfig { mss: MSS as u32, local_drop, ..Default::default() })
    }

    fn with(cc: &str, cfg: TcpConfig) -> Self {
        let conn = Connection::for_tests(0, 1);
        let cc: CcSpec = serde_json::from_str(cc).unwrap();
        let tx = TcpSender::new(conn, cfg, cc.build().unwrap(), None);
        Script { tx, host: ScriptedHost::new(Recorder::new(RecordConfig::default(), vec![], 0)) }
    }

    fn act(&mut self, now: Time, f: impl FnOnce(&mut TcpSender, &mut AgentCx<ScriptedHost>)) {
        self.host.now = now;
        let mut cx = AgentCx::new(now, AgentId(0), NodeId(0), &mut self.host);
        f(&mut self.tx, &mut cx);
    }

    fn ack(&mut self, now_ms: u64, seq: u64, flags: u8) {
        self.sack(now_ms, seq, flags, None);
    }

    /// An ACK of `seq` with one SACK block `[start, end)` when given.
    fn sack(&mut self, now_ms: u64, seq: u64, flags: u8, block: Option<(u64, u64)>) {
        let mut p: Packet = crate::qdisc::harness::packet(0, 0, 40);
        (p.ack, p.flags, p.payload, p.window) = (seq, tcp_flags::ACK | flags, 0, 1 << 20);
        if let Some((start, end)) = block {
            p.sack.offsets[0] = ((start as i64 - seq as i64) as i32, (end as i64 - seq as i64) as i32);
        }
        self.act(ms(now_ms), |tx, cx| tx.on_packet(p, cx));
    }

    /// SYN at 0, SYN-ACK at 100 ms: four segments (the initial window) go out.
    fn establish(&mut self) {
        self.act(Time::ZERO, |tx, cx| tx.on_start(cx));
        self.ack(100, 1, tcp_flags::SYN);
    }
}

fn ms(v: u64) -> Time {
    Time::ZERO + Dur::from_millis(v)
}

const NEWRENO: &str = r#"{"kind":"newreno","initial_window":4}"#;

/// Duplicate ACKs: Disorder, then Recovery at the third (RFC 6582); a partial ACK stays in
/// Recovery; the ACK of `recover` returns to Open with cwnd = ssthresh.
#[test]
fn duplicate_acks_lead_through_disorder_and_recovery_back_to_open() {
    let mut s = Script::new(NEWRENO, LocalDropReaction::Loss);
    s.establish();
    assert_eq!(s.tx.loss.ca, CaState::Open);
    assert_eq!(s.tx.send.snd_max, 1 + 4 * MSS);
    s.ack(200, 1, 0);
    assert_eq!(s.tx.loss.ca, CaState::Disorder);
    s.ack(201, 1, 0);
    s.ack(202, 1, 0);
    assert_eq!(s.tx.loss.ca, CaState::Recovery { partial_ack_seen: false });
    let recover = s.tx.loss.recover_end;
    s.ack(300, 1 + MSS, 0);
    assert_eq!(s.tx.loss.ca, CaState::Recovery { partial_ack_seen: true }, "a partial ACK");
    s.ack(400, recover, 0);
    assert_eq!(s.tx.loss.ca, CaState::Open);
    assert_eq!(s.tx.w.cwnd, s.tx.w.ssthresh);
}

/// A timeout enters Loss until its window (snd_max at the timeout) is acknowledged.
#[test]
fn a_timeout_holds_loss_until_its_window_is_acknowledged() {
    let mut s = Script::new(NEWRENO, LocalDropReaction::Loss);
    s.establish();
    // Expiries queued for an earlier deadline re-queue themselves for the current one.
    let mut at = Time::ZERO;
    while s.tx.stats.sent.timeouts == 0 {
        let (due, timer) = s.host.timers.pop().expect("a retransmission timer is pending");
        at = due;
        s.act(due, |tx, cx| tx.on_timer(timer, cx));
    }
    assert_eq!(s.tx.loss.ca, CaState::Loss);
    let recover = s.tx.loss.recover_end;
    s.ack(at.0 / 1_000_000 + 100, 1 + MSS, 0);
    assert_eq!(s.tx.loss.ca, CaState::Loss, "part of the window is still unacknowledged");
    s.ack(at.0 / 1_000_000 + 200, recover, 0);
    assert_eq!(s.tx.loss.ca, CaState::Open);
}

/// A refused segment commits nothing, and nothing more is offered in that activation: the
/// host saw exactly one offer, the sender counts no segment, keeps snd_nxt at the first data
/// byte and enters CWR. With nothing in flight, a probe is due one RTO later; there the
/// segment the host takes is committed.
#[test]
fn a_refused_segment_is_never_committed() {
    let mut s = Script::new(NEWRENO, LocalDropReaction::LinuxCwr);
    s.act(Time::ZERO, |tx, cx| tx.on_start(cx));
    s.host.refuse = true;
    let offers_before = s.host.offers;
    s.ack(100, 1, tcp_flags::SYN);
    assert_eq!(s.host.offers - offers_before, 1, "one offer, then the activation stops");
    assert_eq!(s.tx.stats.sent.segments_sent, 0);
    assert_eq!((s.tx.send.snd_nxt, s.tx.send.snd_max), (1, 1));
    assert!(matches!(s.tx.loss.ca, CaState::Cwr(_)));
    let (probe, timer) = *s.host.timers.last().expect("a probe is armed");
    assert_eq!(TcpTimer::of(timer), Some(TcpTimer::Burst));
    assert_eq!(probe, ms(100) + s.tx.timing.rtt.rto());
    s.host.refuse = false;
    s.act(probe, |tx, cx| tx.on_timer(Timer { kind: timer.kind, generation: timer.generation }, cx));
    assert!(s.tx.stats.sent.segments_sent >= 1 && s.tx.send.snd_nxt > 1);
}

/// What the sender sent in response to one ACK, as RFC 6937's example tables write it: "R" a
/// retransmission, "N" a new segment, "-" nothing.
fn sends(sent: &[Packet], snd_max_before: u64) -> String {
    let s: String = sent.iter().map(|p| if p.seq < snd_max_before { 'R' } else { 'N' }).collect();
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}

/// RFC 6937 section 3.1's single loss, driven through the sender: cwnd = FlightSize = 20
/// segments, segment 0 lost, Limited Transmit (a new segment on each of the first two
/// duplicate ACKs), SACK, and one duplicate ACK per segment 1-19 of the lossy RTT. ssthresh
/// comes from cwnd (CUBIC's rule) with β = 0.5 (the RFC's Reno example: 10) and β = 0.7
/// (CUBIC: 14). RecoverFS = snd.nxt − snd.una = 22 segments (the two Limited Transmit segments
/// included, as the RFC defines it).
///
/// Hand computation (sndcnt = CEIL(prr_delivered·ssthresh/RecoverFS) − prr_out while
/// pipe > ssthresh, else MIN(ssthresh − pipe, MAX(prr_delivered − prr_out, DeliveredData) + 1),
/// in segments; pipe after ACK k before sending = the 21 − k segments above k not SACKed, plus
/// the retransmission, plus what was sent): for β = 0.5, ACK 3 sends R (CEIL(10/22) = 1), then
/// one new segment whenever CEIL(10·(k−2)/22) steps: ACKs 5, 7, 9, 11, 14, 16; at ACK 18 pipe
/// is 10 = ssthresh and the bound allows nothing, at ACK 19 one (pipe 9). Ten segments are
/// sent in the RTT (2 by Limited Transmit, 8 in recovery) and pipe ends at ssthresh exactly.
///
/// The RFC's own row ("N N R - N - N - N - N - N - N - N - - N N", RB "s" on ACKs 18-19) takes
/// RecoverFS as the 20 segments before Limited Transmit, giving one segment on every odd ACK; its
/// pipe row ("... 12 12 11 10") contradicts its sent row at ACKs 17-19 (a send at 17 is needed
/// to hold pipe at 12). The rows agree with ours on ACKs 1-11 and in total and final pipe.
#[test]
fn prr_follows_the_rfc_6937_single_loss_example() {
    for (beta, expected) in
        [(0.5, "N N R - N - N - N - N - - N - N - - N"), (0.7, "N N R N - N N - N N - N - - N N N N N")]
    {
        let cfg = TcpConfig {
            mss: MSS as u32,
            sack: true,
            limited_transmit: super::super::LimitedTransmit::Rfc3042,
            recovery: RecoveryReduction::Prr,
            ..Default::default()
        };
        let cc = format!(r#"{{"kind":"cubic","initial_window":20,"beta":{beta}}}"#);
        let mut s = Script::with(&cc, cfg);
        s.establish();
        assert_eq!(std::mem::take(&mut s.host.sent).len(), 21, "the SYN and 20 segments");
        let mut row = vec![];
        for k in 1..20 {
            let before = s.tx.send.snd_max;
            s.sack(200 + k, 1, 0, Some((1 + MSS, 1 + (k + 1) * MSS)));
            row.push(sends(&std::mem::take(&mut s.host.sent), before));
        }
        assert_eq!(row.join(" "), expected, "beta {beta}");
        let ssthresh = (beta * 20.0) as u64 * MSS;
        assert_eq!(s.tx.w.ssthresh, ssthresh);
        let lost_end = s.tx.loss.scoreboard.lost_below(s.tx.lost_threshold()).min(s.tx.send.snd_max);
        assert_eq!(s.tx.pipe(lost_end), ssthresh, "pipe ends at ssthresh");
        // The retransmission is acknowledged with everything sent before the loss: recovery
        // ends with cwnd = ssthresh.
        s.ack(300, s.tx.loss.recover_end, 0);
        assert_eq!(s.tx.loss.ca, CaState::Open);
        assert_eq!(s.tx.w.cwnd, ssthresh);
    }
}

/// RFC 9937 against RFC 6937 through the sender: 20 segments in flight (CUBIC, β = 0.5:
/// ssthresh 10), segments 0-9 and 16 lost, SACK, no Limited Transmit. Duplicate ACKs SACK
/// segments 10-12 (recovery at the third: IsLost marks 0-9, pipe = 17 unSACKed − 10 lost = 7),
/// then 13, 14, 15; a partial ACK for the retransmitted segment 0 (snd.una + 1 segment, no new
/// mark: a SafeACK); a partial ACK for segment 1 that SACKs 17-19, which makes segment 16 lost
/// (3 segments SACKed above it): not safe.
///
/// By hand, RFC 9937 (RecoverFS = 20 − 3 SACKed + 1 delivered = 18; every ACK has pipe ≤
/// ssthresh, so sndcnt = MIN(ssthresh − pipe, MAX(prr_delivered − prr_out, DeliveredData) [+ 1
/// on a SafeACK]), in segments): duplicate ACKs 3-6, pipe 7, prr_delivered − prr_out = 1:
/// one retransmission each (segments 0-3); the SafeACK, pipe 7 (13 unSACKed − 9 lost + 3
/// resent), MAX(5 − 4, 1) + 1 = 2 (segments 4, 5); the last, DeliveredData 4 (one acknowledged,
/// three SACKed), pipe 9 unSACKed − 9 lost (2-9, 16) + 4 resent = 4, MAX(9 − 6, 4) = 4:
/// segments 6-9. RFC 6937's SSRB adds the segment on every ACK: duplicate ACK 3, MAX(1, 1) + 1
/// = 2; ACK 4, pipe 8, 2; ACKs 5-6, pipe 9, ssthresh − pipe = 1; the SafeACK, pipe 9, 1; the
/// last, pipe 5, MIN(5, MAX(2, 4) + 1) = 5: segments 7, 8, 9, 16 and a new one.
#[test]
fn prr_rfc_9937_adds_the_slow_start_segment_only_on_a_safe_ack() {
    let seg = |k: u64| 1 + k * MSS;
    for (recovery, expected) in
        [(RecoveryReduction::PrrRfc9937, "- - R R R R RR RRRR"), (RecoveryReduction::Prr, "- - RR RR R R R RRRRN")]
    {
        let cfg = TcpConfig { mss: MSS as u32, sack: true, recovery, ..Default::default() };
        let mut s = Script::with(r#"{"kind":"cubic","initial_window":20,"beta":0.5}"#, cfg);
        s.establish();
        std::mem::take(&mut s.host.sent);
        let mut row = vec![];
        // (snd.una after the ACK, its SACK block), in segments.
        let acks =
            [(0, 10, 11), (0, 10, 12), (0, 10, 13), (0, 10, 14), (0, 10, 15), (0, 10, 16), (1, 10, 16), (2, 17, 20)];
        for (k, (una, lo, hi)) in acks.into_iter().enumerate() {
            let before = s.tx.send.snd_max;
            s.sack(200 + k as u64, seg(una), 0, Some((seg(lo), seg(hi))));
            row.push(sends(&std::mem::take(&mut s.host.sent), before));
        }
        assert_eq!(row.join(" "), expected, "{recovery:?}");
        assert_eq!(s.tx.w.ssthresh, 10 * MSS);
    }
}

/// Without SACK, PRR paces NewReno's recovery the same way from duplicate ACKs (each one
/// segment delivered): ACK 3 retransmits, then one new segment per two duplicate ACKs while
/// the estimated pipe exceeds ssthresh (NewReno: half the 20-segment flight, 10).
#[test]
fn prr_without_sack_counts_a_segment_per_duplicate_ack() {
    let cfg = TcpConfig { mss: MSS as u32, recovery: RecoveryReduction::Prr, ..Default::default() };
    let mut s = Script::with(r#"{"kind":"newreno","initial_window":20}"#, cfg);
    s.establish();
    std::mem::take(&mut s.host.sent);
    let mut row = vec![];
    for k in 1..20 {
        let before = s.tx.send.snd_max;
        s.ack(200 + k, 1, 0);
        row.push(sends(&std::mem::take(&mut s.host.sent), before));
    }
    assert_eq!(row.join(" "), "- - R - N - N - N - N - N - - N N N N");
    assert_eq!(s.tx.w.ssthresh, 10 * MSS);
}

// RACK-TLP (RFC 8985) by hand. Every script: MSS 1000, NewReno with a 10-segment initial
// window, SACK; SYN at 0, SYN-ACK at 100 ms (the handshake's sample: SRTT 100 ms, RTO 1 s, its
// 1 s floor), segments 0-9 (segment k starts at 1 + 1000·k) all sent at 100 ms.

fn rack_script(detection: LossDetection, bytes: Option<u64>) -> Script {
    let cfg = TcpConfig { mss: MSS as u32, sack: true, loss_detection: detection, ..Default::default() };
    let conn = Connection::for_tests(0, 1);
    let cc: CcSpec = serde_json::from_str(r#"{"kind":"newreno","initial_window":10}"#).unwrap();
    let tx = TcpSender::new(conn, cfg, cc.build().unwrap(), bytes);
    let mut s = Script { tx, host: ScriptedHost::new(Recorder::new(RecordConfig::default(), vec![], 0)) };
    s.establish();
    s.host.sent.clear();
    s
}

/// Fire every timer due by `until`, in time order (superseded ones fire as no-ops).
fn run_timers(s: &mut Script, until: Time) {
    while let Some(i) =
        (0..s.host.timers.len()).filter(|&i| s.host.timers[i].0 <= until).min_by_key(|&i| s.host.timers[i].0)
    {
        let (due, timer) = s.host.timers.remove(i);
        s.act(due, |tx, cx| tx.on_timer(timer, cx));
    }
}

/// (time in ms, sequence number) of every data segment sent since the last call.
fn sent_since(s: &mut Script) -> Vec<(u64, u64)> {
    std::mem::take(&mut s.host.sent)
        .iter()
        .filter(|p| p.payload > 0)
        .map(|p| (p.sent_at.0 / 1_000_000, p.seq))
        .collect()
}

fn seg(k: u64) -> u64 {
    1 + k * MSS
}

/// Section 6.2 steps 4-5, reordering within the window: segment 1 is SACKed at 200 ms (the
/// RACK segment: sent at 100 ms, RACK.rtt 100 ms); one segment SACKed, so the window is
/// min_RTT/4 = 25 ms and segment 0 is due at 100 + 100 + 25 = 225 ms: the reorder timer is
/// armed for then. Segment 0 arrives at 210 ms (reordered by 10 ms): nothing is marked or
/// resent, and reordering is now seen.
#[test]
fn rack_does_not_mark_a_segment_reordered_within_the_window() {
    let mut s = rack_script(LossDetection::RackNoTlp, None);
    s.sack(200, 1, 0, Some((seg(1), seg(2))));
    let reorder = s.host.timers.iter().find(|(_, t)| TcpTimer::of(*t) == Some(TcpTimer::Reorder)).map(|x| x.0);
    assert_eq!(reorder, Some(ms(225)));
    s.ack(210, seg(2), 0);
    run_timers(&mut s, ms(1000));
    let rack = s.tx.loss.rack.as_ref().unwrap();
    assert_eq!((rack.marked, s.tx.stats.sent.retransmitted_segments, s.tx.stats.fast_retransmits), (0, 0, 0));
    assert!(rack.reo_wnd(true, 0, 3, None) > Dur::ZERO, "reordering seen keeps the window open in recovery");
}

/// Beyond the window: segment 0 never arrives; the reorder timer fires at 225 ms, marks it
/// lost, and fast recovery resends it then (one duplicate ACK only: no count of three).
#[test]
fn rack_marks_a_segment_lost_when_the_reordering_window_has_passed() {
    let mut s = rack_script(LossDetection::RackNoTlp, None);
    s.sack(200, 1, 0, Some((seg(1), seg(2))));
    run_timers(&mut s, ms(224));
    assert_eq!(sent_since(&mut s), vec![]);
    run_timers(&mut s, ms(225));
    assert_eq!(sent_since(&mut s), vec![(225, seg(0))]);
    assert_eq!((s.tx.loss.ca, s.tx.stats.fast_retransmits), (CaState::Recovery { partial_ack_seen: false }, 1));
}

/// A lost retransmission (the scenario RFC 8985 section 3.3.2 gives for RACK): segment 0 is
/// lost; SACKs of segments 1, 2, 3 at 200, 201, 202 ms. At 202 ms three segments are SACKed and
/// no reordering is seen, so the window is 0 and segment 0 (due at 100 + 102 ms) is lost at
/// once: recovery, ssthresh = cwnd = 5 segments, segment 0 resent at 202 ms. SACKs of 4-9 at
/// 203-208 ms bring the pipe down; new segments 10-13 leave at 205-208 ms. The retransmission
/// is lost too. Segment 10's SACK at 305 ms makes it the RACK segment (sent at 205 ms, after
/// the retransmission at 202 ms; RACK.rtt 100 ms): segment 0 is due at 202 + 100 = 302 ms and is
/// marked and resent at 305 ms, with segment 14 beside it (pipe 3 segments, cwnd 5). RFC 6675
/// never resends below HighRxt: the same ACKs leave it waiting for the RTO, 1 s after the
/// retransmission (1202 ms).
#[test]
fn rack_resends_a_lost_retransmission_where_rfc_6675_waits_for_the_rto() {
    for detection in [LossDetection::RackNoTlp, LossDetection::Dupack] {
        let mut s = rack_script(detection, None);
        for (t, k) in [(200, 1), (201, 2), (202, 3)] {
            s.sack(t, 1, 0, Some((seg(1), seg(k + 1))));
        }
        assert_eq!(sent_since(&mut s), vec![(202, seg(0))], "{detection:?}");
        assert_eq!(s.tx.w.cwnd, 5 * MSS);
        for k in 4..10 {
            s.sack(199 + k, 1, 0, Some((seg(1), seg(k + 1))));
        }
        let new: Vec<(u64, u64)> = sent_since(&mut s);
        if detection == LossDetection::RackNoTlp {
            assert_eq!(new, vec![(205, seg(10)), (206, seg(11)), (207, seg(12)), (208, seg(13))]);
        }
        let sent_new = new.len() as u64;
        for k in 10..10 + sent_new {
            s.sack(295 + k, 1, 0, Some((seg(1), seg(k + 1))));
        }
        match detection {
            LossDetection::RackNoTlp => {
                let sent = sent_since(&mut s);
                assert_eq!(&sent[..2], &[(305, seg(0)), (305, seg(14))]);
                let all = s.tx.send.snd_max;
                s.ack(405, all, 0);
                run_timers(&mut s, ms(1202));
                assert_eq!((s.tx.stats.sent.timeouts, s.tx.loss.ca), (0, CaState::Open));
            }
            _ => {
                run_timers(&mut s, ms(1202));
                let sent = sent_since(&mut s);
                assert_eq!(sent.iter().find(|x| x.1 == seg(0)), Some(&(1202, seg(0))), "{sent:?}");
                assert_eq!(s.tx.stats.sent.timeouts, 1);
            }
        }
    }
}

/// An ACK of `seq` carrying the SACK blocks `blocks` in order (a D-SACK first, if any).
fn ack_with_blocks(s: &mut Script, now_ms: u64, seq: u64, blocks: &[(u64, u64)]) {
    let mut p: Packet = crate::qdisc::harness::packet(0, 0, 40);
    (p.ack, p.flags, p.payload, p.window) = (seq, tcp_flags::ACK, 0, 1 << 20);
    for (slot, &(start, end)) in blocks.iter().enumerate() {
        p.sack.offsets[slot] = ((start as i64 - seq as i64) as i32, (end as i64 - seq as i64) as i32);
    }
    s.act(ms(now_ms), |tx, cx| tx.on_packet(p, cx));
}

/// RFC 8985 section 6.2 step 4 with D-SACK (RFC 2883 section 4.2's reordering case). Segment 1
/// is SACKed at 200 ms and segment 0 arrives at 210 ms (reordering seen; RTT samples 100 and
/// 110 ms: min_RTT 100 ms, the window 25 ms). Segment 2 is held back: segment 3's SACK at
/// 211 ms makes it the RACK segment (sent at 100 ms, RACK.rtt 111 ms), so segment 2 is due at
/// 100 + 111 + 25 = 236 ms, marked lost and resent then: a spurious fast retransmission, for
/// its original arrives at 240 ms (ACK of segment 4's start). The retransmission's arrival
/// brings a D-SACK of [segment 2, segment 3) below that ACK at 336 ms: one duplicate of one
/// retransmission, reordering seen, no probe: reo_wnd_mult 1 -> 2 and reo_wnd_persist 16, the
/// window 25 -> 50 ms (min_RTT/4 · 2, under SRTT). A second D-SACK in the same round (SND.UNA
/// not yet past the SND.NXT of the first) changes nothing but the count. The ACK of everything
/// at 400 ms ends the recovery: 15 more exits before the multiplier falls back (counted down
/// to 1 in `rack.rs`'s tests).
#[test]
fn a_dsack_of_a_spurious_retransmission_doubles_the_reordering_window() {
    let mut s = rack_script(LossDetection::RackNoTlp, None);
    s.sack(200, 1, 0, Some((seg(1), seg(2))));
    s.ack(210, seg(2), 0);
    let srtt = Some(Dur::from_millis(100));
    assert_eq!(s.tx.loss.rack.as_ref().unwrap().reo_wnd(false, 0, 3, srtt), Dur::from_millis(25));
    s.sack(211, seg(2), 0, Some((seg(3), seg(4))));
    sent_since(&mut s);
    run_timers(&mut s, ms(235));
    assert!(!sent_since(&mut s).contains(&(235, seg(2))));
    run_timers(&mut s, ms(236));
    assert_eq!(sent_since(&mut s).first(), Some(&(236, seg(2))));
    s.ack(240, seg(4), 0);
    assert_eq!(s.tx.loss.rack.as_ref().unwrap().reo_wnd_state(), (1, 0));
    ack_with_blocks(&mut s, 336, seg(4), &[(seg(2), seg(3))]);
    let rack = s.tx.loss.rack.as_ref().unwrap();
    assert_eq!((rack.reo_wnd_state(), s.tx.stats.dsacks_received), ((2, 16), 1));
    assert_eq!(rack.reo_wnd(false, 0, 3, srtt), Dur::from_millis(50));
    assert_eq!(s.tx.loss.scoreboard.sacked_in(seg(4), seg(20)), 0, "a D-SACK holds no new data");
    ack_with_blocks(&mut s, 337, seg(4), &[(seg(2), seg(3))]);
    let rack = s.tx.loss.rack.as_ref().unwrap();
    assert_eq!((rack.reo_wnd_state(), s.tx.stats.dsacks_received), ((2, 16), 2));
    let all = s.tx.send.snd_max;
    s.ack(400, all, 0);
    assert_eq!(s.tx.loss.ca, CaState::Open);
    assert_eq!(s.tx.loss.rack.as_ref().unwrap().reo_wnd_state(), (2, 15), "one recovery exit of 16");
}

/// Section 7, a tail loss: a 10-segment transfer whose segments 8 and 9 (with the FIN) are
/// lost. Cumulative ACKs at 200-203 ms (the sample at 200 ms keeps SRTT at 100 ms); the last
/// one schedules the probe at 203 + 2·100 = 403 ms (two segments in flight: no delayed-ACK
/// allowance; RTO at 1203 ms). No new data is left, so the probe resends the last segment;
/// its SACK at 503 ms makes it the RACK segment, segment 8 (sent at 100 ms) is overdue and
/// resent at once in fast recovery; no RTO. With one segment in flight (segment 9 alone lost,
/// ACK of 9001 at 200 ms) the probe waits WCDelAckT more: 200 + 200 + 200 = 600 ms.
#[test]
fn tlp_probes_a_tail_loss_at_the_hand_computed_pto() {
    let mut s = rack_script(LossDetection::Rack, Some(10 * MSS));
    for (t, k) in [(200, 2), (201, 4), (202, 6), (203, 8)] {
        s.ack(t, seg(k), 0);
    }
    run_timers(&mut s, ms(402));
    assert_eq!(sent_since(&mut s), vec![]);
    run_timers(&mut s, ms(403));
    assert_eq!(sent_since(&mut s), vec![(403, seg(9))], "the probe: the last segment again");
    s.sack(503, seg(8), 0, Some((seg(9), seg(10) + 1)));
    assert_eq!(sent_since(&mut s), vec![(503, seg(8))]);
    s.ack(603, seg(10) + 1, 0);
    assert_eq!((s.tx.send.state, s.tx.stats.sent.timeouts), (super::State::Closed, 0));
    assert_eq!(s.tx.loss.tlp.as_deref().copied().unwrap().probes, 1);

    let mut s = rack_script(LossDetection::Rack, Some(10 * MSS));
    s.ack(200, seg(9), 0);
    run_timers(&mut s, ms(599));
    assert_eq!(sent_since(&mut s), vec![]);
    run_timers(&mut s, ms(600));
    assert_eq!(sent_since(&mut s), vec![(600, seg(9))]);

    // Without TLP the same tail waits for the RTO: 203 ms + 1 s.
    let mut s = rack_script(LossDetection::Dupack, Some(10 * MSS));
    s.ack(203, seg(8), 0);
    run_timers(&mut s, ms(1203));
    assert_eq!(sent_since(&mut s).first(), Some(&(1203, seg(8))));
    assert_eq!(s.tx.stats.sent.timeouts, 1);
}

/// Section 7.4 as Linux's `tcp_process_tlp_ack` decides it. A 20-segment transfer with a
/// 10-segment send buffer: segments 0-9 go out at 100 ms and fill it, so the probe at
/// 100 + 2·100 = 300 ms (SRTT 100 ms from the handshake) resends segment 9 (TLP.end_seq =
/// segment 10's start). The ACK of all ten at 310 ms reaches TLP.end_seq exactly: the original
/// or the probe arrived, and nothing is decided. Then:
/// - a D-SACK of segment 9 at 320 ms (both arrived): the episode ends, no reduction;
/// - a pure duplicate ACK at 320 ms (both arrived, no D-SACK): the same;
/// - an ACK of segment 10 at 410 ms (beyond TLP.end_seq: the probe repaired a loss): one
///   reduction, cwnd = ssthresh = half the flight at that ACK.
#[test]
fn a_probe_whose_original_arrived_costs_no_window_reduction() {
    let script = || {
        let mut s = rack_script(LossDetection::Rack, Some(20 * MSS));
        std::sync::Arc::make_mut(&mut s.tx.cfg).send_buffer = crate::units::Bytes(10 * MSS);
        run_timers(&mut s, ms(300));
        assert_eq!(sent_since(&mut s).last(), Some(&(300, seg(9))), "the probe resends segment 9");
        s.ack(310, seg(10), 0);
        assert_eq!(
            s.tx.loss.tlp.as_deref().copied().unwrap().probe_end(),
            Some(seg(10)),
            "an ACK of exactly end_seq decides nothing"
        );
        s
    };
    let cwnd_after_ack = script().tx.w.cwnd;

    let mut s = script();
    ack_with_blocks(&mut s, 320, seg(10), &[(seg(9), seg(10))]);
    let t = s.tx.loss.tlp.as_deref().copied().unwrap();
    assert_eq!((t.probe_end(), t.recoveries, s.tx.w.cwnd), (None, 0, cwnd_after_ack), "D-SACK of the probe");

    let mut s = script();
    s.ack(320, seg(10), 0);
    let t = s.tx.loss.tlp.as_deref().copied().unwrap();
    assert_eq!((t.probe_end(), t.recoveries, s.tx.w.cwnd), (None, 0, cwnd_after_ack), "a pure duplicate");

    let mut s = script();
    s.ack(410, seg(11), 0);
    let t = s.tx.loss.tlp.as_deref().copied().unwrap();
    assert_eq!((t.probe_end(), t.recoveries), (None, 1), "an ACK beyond end_seq: the probe repaired a loss");
    assert_eq!(s.tx.w.cwnd, s.tx.w.ssthresh);
    assert!(s.tx.w.cwnd < cwnd_after_ack);
}

// RFC 6675 section 4 NextSeg rules 3 and 4 by hand, on the RACK scripts' set-up with RFC 6675's
// own loss detection: NewReno, IW 10, SACK, a 10-segment transfer (segment 9 carries the FIN:
// it ends at 10 002), all sent at 100 ms; RTO 1 s. Recovery starts at the third duplicate ACK
// with ssthresh = cwnd = half of the 10 001-byte flight = 5000 bytes and resends segment 0
// (HighRxt 1001, RescueRxt 1000: the highest sequence number of that segment).

/// Rule 3: segments 0 and 8 lost. SACKs of 1-3 (200-202 ms) start recovery, those of 4-7
/// (203-206 ms) bring pipe down to 3000 bytes, but nothing can be sent: nothing is IsLost
/// above HighRxt, no new data is left, nothing unSACKed lies between HighRxt and the highest
/// SACKed octet, and HighACK (0) is not above RescueRxt. The SACK of segment 9 at 207 ms puts
/// one SACKed segment (1001 bytes) above segment 8: not IsLost (that needs more than 2000),
/// but rule 3 applies (above HighRxt, below the highest SACKed octet) and pipe is 2000 bytes
/// (segment 8, and segment 0's retransmission), so segment 8 is resent at once. Its
/// retransmission counts twice in pipe (the original is not deemed lost): 3000 bytes. The
/// partial ACK of segments 0-7 (302 ms) finds segment 8 below HighRxt, already resent, and
/// sends nothing; the ACK of everything at 307 ms ends the transfer with no timeout. Without
/// rule 3 segment 8 waits for the RTO: 302 + 1000 ms.
#[test]
fn rfc_6675_rule_3_resends_a_hole_below_the_highest_sack_when_no_new_data_is_left() {
    let mut s = rack_script(LossDetection::Dupack, Some(10 * MSS));
    for k in 1..=7 {
        s.sack(199 + k, 1, 0, Some((seg(1), seg(k + 1))));
    }
    assert_eq!(sent_since(&mut s), vec![(202, seg(0))]);
    assert_eq!(s.tx.w.cwnd, 5 * MSS);
    s.sack(207, 1, 0, Some((seg(9), seg(10) + 1)));
    assert_eq!(sent_since(&mut s), vec![(207, seg(8))], "rule 3 at the ACK that carries the SACK");
    let lost_end = s.tx.loss.scoreboard.lost_below(s.tx.lost_threshold()).min(s.tx.send.snd_max);
    assert_eq!(s.tx.pipe(lost_end), 3 * MSS);
    s.sack(302, seg(8), 0, Some((seg(9), seg(10) + 1)));
    assert_eq!(sent_since(&mut s), vec![], "segment 8 is below HighRxt: neither rule 3 nor a rescue");
    s.ack(307, seg(10) + 1, 0);
    run_timers(&mut s, ms(2000));
    assert_eq!(
        (s.tx.send.state, s.tx.stats.sent.timeouts, s.tx.stats.sent.retransmitted_segments),
        (super::State::Closed, 0, 2)
    );
}

/// Rule 4: segments 0 and 9 (the tail, with the FIN) lost. SACKs of 1-8 (200-207 ms): recovery
/// at 202 ms, then nothing (pipe falls to 2001 bytes, but no rule applies: segment 9 has
/// nothing SACKed above it, so neither rule 1 nor rule 3 reaches it, and HighACK is 0). The
/// partial ACK of segments 0-8 at 302 ms makes HighACK 9000, above RescueRxt (1000): segment 9,
/// holding the highest unSACKed sequence number, is resent as the rescue (pipe 1001 bytes,
/// cwnd 5000), RescueRxt becomes RecoveryPoint (10 001) and no second rescue follows. Its ACK
/// at 402 ms ends the transfer with no timeout; without rule 4 the tail waits for the RTO at
/// 302 + 1000 ms.
#[test]
fn rfc_6675_rule_4_rescues_the_tail_once_after_the_first_partial_ack() {
    let mut s = rack_script(LossDetection::Dupack, Some(10 * MSS));
    for k in 1..=8 {
        s.sack(199 + k, 1, 0, Some((seg(1), seg(k + 1))));
    }
    assert_eq!(sent_since(&mut s), vec![(202, seg(0))]);
    s.ack(302, seg(9), 0);
    assert_eq!(sent_since(&mut s), vec![(302, seg(9))], "the rescue retransmission");
    assert_eq!(s.tx.loss.high_rxt, seg(1), "HighRxt is not updated by a rescue");
    s.ack(303, seg(9), 0);
    assert_eq!(sent_since(&mut s), vec![], "one rescue per recovery");
    s.ack(402, seg(10) + 1, 0);
    run_timers(&mut s, ms(2000));
    assert_eq!(
        (s.tx.send.state, s.tx.stats.sent.timeouts, s.tx.stats.sent.retransmitted_segments),
        (super::State::Closed, 0, 2)
    );
}

/// The boundary of a new recovery, `recover` (the highest sequence number sent when the last
/// one began: 10 000, `recover_end` 10 001). Segment 0 lost of 10 (IW 10); recovery at the
/// third duplicate ACK (202 ms); without SACK, inflation (cwnd 5 + 3 segments, +1 per
/// duplicate) releases segments 10-13 on the sixth to ninth duplicates (205-208 ms); with SACK,
/// RFC 6675's pipe against cwnd = 5 segments releases the same. The ACK of 10 001 at 302 ms is
/// the full ACK (cwnd 5 segments, segment 14 sent). Segment 10 is lost; segments 11-13 bring
/// three duplicates of 10 001 (305-307 ms). With SACK their blocks show a loss of data sent
/// after recovery began, and RFC 6675 section 5.1's HighACK ≥ RecoveryPoint (10 000 ≥ 10 000)
/// lets the third start a new recovery: segment 10 resent at 307 ms. Without SACK, RFC 6582
/// section 3.2 step 4 asks for ack_number − 1 > recover (10 000 > 10 000 fails): they could
/// be duplicates from a go-back-N, and nothing is resent. An ACK one segment further
/// (11 001 at 308 ms, segment 15 sent) and three duplicates of it (309-311 ms) do start one:
/// segment 11 resent at 311 ms.
#[test]
fn a_new_recovery_starts_past_recover_as_rfc_6582_and_rfc_6675_define_it() {
    for sack in [false, true] {
        let cfg = TcpConfig { mss: MSS as u32, sack, ..Default::default() };
        let mut s = Script::with(r#"{"kind":"newreno","initial_window":10}"#, cfg);
        s.establish();
        s.host.sent.clear();
        for k in 1..=9 {
            s.sack(199 + k, 1, 0, sack.then_some((seg(1), seg(k + 1))));
        }
        let want: Vec<(u64, u64)> =
            [(202, 0), (205, 10), (206, 11), (207, 12), (208, 13)].iter().map(|&(t, k)| (t, seg(k))).collect();
        assert_eq!(sent_since(&mut s), want, "sack {sack}");
        assert_eq!(s.tx.loss.recover_end, seg(10), "one past the highest sequence number sent");
        s.ack(302, seg(10), 0);
        assert_eq!((s.tx.loss.ca, s.tx.w.cwnd), (CaState::Open, 5 * MSS));
        assert_eq!(sent_since(&mut s), vec![(302, seg(14))]);
        for k in 11..=13 {
            s.sack(294 + k, seg(10), 0, sack.then_some((seg(11), seg(k + 1))));
        }
        if sack {
            assert_eq!(sent_since(&mut s), vec![(307, seg(10))]);
            assert_eq!((s.tx.stats.fast_retransmits, s.tx.loss.ca), (2, CaState::Recovery { partial_ack_seen: false }));
            continue;
        }
        assert_eq!(sent_since(&mut s), vec![]);
        assert_eq!((s.tx.stats.fast_retransmits, s.tx.loss.ca), (1, CaState::Disorder));
        s.ack(308, seg(11), 0);
        assert_eq!(sent_since(&mut s), vec![(308, seg(15))]);
        for t in 309..=311 {
            s.ack(t, seg(11), 0);
        }
        assert_eq!(sent_since(&mut s), vec![(311, seg(11))]);
        assert_eq!(s.tx.stats.fast_retransmits, 2);
    }
}

/// A sender per flow: at 10,000 flows their state is beyond the caches, so its size is memory
/// and speed. The optional mechanisms (a model-based controller's rate sampler and pacing,
/// RACK, the tail loss probe, PRR, Linux's Reno emulation, burstiness control, plain and
/// RFC 1016 pacing) are boxed, so a sender without them holds a pointer for each, not their
/// state; so is every controller larger than the window controllers' (`cc::AnyCc` is 32 bytes
/// where BBR alone is 264); and the configuration is shared by the senders that agree the same
/// (`FlowBuild::shared`). The receiver likewise.
#[test]
fn senders_stay_small() {
    let size = std::mem::size_of::<TcpSender>();
    assert!(size <= SENDER_BYTES, "TcpSender {size} > {SENDER_BYTES}");
    assert_eq!(std::mem::size_of::<crate::cc::AnyCc>(), 32);
    let receiver = std::mem::size_of::<crate::transport::tcp::TcpReceiver>();
    assert!(receiver <= RECEIVER_BYTES, "TcpReceiver {receiver} > {RECEIVER_BYTES}");
}
/// 792: 1,040 before the configuration was shared (128 bytes to a pointer) and the model-based
/// controllers' pacing (88 bytes) and RFC 1016's (40) were boxed.
const SENDER_BYTES: usize = 792;
/// 376: 496 before the configuration was shared.
const RECEIVER_BYTES: usize = 376;

/// Limited Transmit's two rules on a duplicate ACK that SACKs two segments (a delayed ACK's
/// worth): 10 segments in flight = cwnd, segment 0 lost, the first duplicate ACK SACKs
/// segments 1-2. RFC 3042 releases one new segment (FlightSize up to cwnd + 1 segment on the
/// first duplicate ACK); RFC 6675 section 5 step (3) two (pipe = 10 − 2 SACKed = 8: room for
/// two in cwnd = 10); without Limited Transmit, none. A second duplicate ACK that SACKs
/// segment 3 as well leaves 3 segments SACKed above segment 0, more than (DupThresh − 1)·SMSS:
/// IsLost starts recovery (step 2) under every rule.
#[test]
fn limited_transmit_by_rfc_3042_and_by_rfc_6675s_pipe() {
    use super::super::LimitedTransmit::{Off, Rfc3042, Rfc6675};
    for (rule, expected) in [(Off, "-"), (Rfc3042, "N"), (Rfc6675, "NN")] {
        let cfg = TcpConfig { mss: MSS as u32, sack: true, limited_transmit: rule, ..Default::default() };
        let mut s = Script::with(r#"{"kind":"newreno","initial_window":10}"#, cfg);
        s.establish();
        assert_eq!(std::mem::take(&mut s.host.sent).len(), 11, "the SYN and 10 segments");
        let before = s.tx.send.snd_max;
        s.sack(200, 1, 0, Some((1 + MSS, 1 + 3 * MSS)));
        assert_eq!(sends(&std::mem::take(&mut s.host.sent), before), expected, "{rule:?}");
        assert_eq!(s.tx.loss.ca, CaState::Disorder, "{rule:?}");
        s.sack(201, 1, 0, Some((1 + MSS, 1 + 4 * MSS)));
        assert!(matches!(s.tx.loss.ca, CaState::Recovery { .. }), "{rule:?}");
    }
}

/// A paced sender (one segment every srtt/cwnd: 100 ms / 20 = 5 ms) that has just sent its
/// first segment at 100 ms: Limited Transmit of either kind sends nothing on a duplicate ACK
/// at 101 ms, and the segment goes out at the pacing wake-up at 105 ms. Before the one gate
/// covered it, RFC 6675's Limited Transmit sent whatever the pipe left room for at once (a
/// paced BBR flow: over a hundred segments within a millisecond).
#[test]
fn limited_transmit_of_both_kinds_waits_for_the_pacing_gate() {
    use super::super::LimitedTransmit;
    for limited_transmit in [LimitedTransmit::Rfc3042, LimitedTransmit::Rfc6675] {
        let cfg = TcpConfig { mss: MSS as u32, sack: true, pacing: true, limited_transmit, ..Default::default() };
        let mut s = Script::with(r#"{"kind":"newreno","initial_window":20}"#, cfg);
        s.establish();
        assert_eq!(s.tx.stats.sent.segments_sent, 1, "pacing: one segment, the next 5 ms later");
        s.ack(101, 1, 0);
        assert_eq!(s.tx.stats.sent.segments_sent, 1, "{limited_transmit:?}: held by the gate");
        let wake_up = s.host.timers.iter().rev().find(|(_, t)| TcpTimer::of(*t) == Some(TcpTimer::Burst));
        let (at, timer) = *wake_up.expect("the pacing wake-up");
        assert_eq!(at, ms(105));
        s.act(at, |tx, cx| tx.on_timer(timer, cx));
        assert_eq!(s.tx.stats.sent.segments_sent, 2, "{limited_transmit:?}: sent at the wake-up");
    }
}

/// The single retransmissions a loss signal sends at once do not wait for the pacing gate:
/// the third duplicate ACK, 1 ms after a paced send, brings the fast retransmission then.
#[test]
fn the_fast_retransmission_is_not_held_by_pacing() {
    for sack in [false, true] {
        let cfg = TcpConfig { mss: MSS as u32, sack, pacing: true, ..Default::default() };
        let mut s = Script::with(r#"{"kind":"newreno","initial_window":20}"#, cfg);
        s.establish();
        // Let the paced window out: one segment every 5 ms from 100 ms.
        while s.tx.stats.sent.segments_sent < 4 {
            let (at, timer) = s.host.timers.pop().unwrap();
            s.act(at, |tx, cx| tx.on_timer(timer, cx));
        }
        let last_send = s.host.now;
        for k in 1..=3 {
            s.sack(last_send.0 / 1_000_000 + 1, 1, 0, sack.then_some((1 + MSS, 1 + (k + 1) * MSS)));
        }
        assert_eq!(s.tx.stats.fast_retransmits, 1);
        assert_eq!(s.tx.stats.sent.retransmitted_segments, 1, "sack {sack}: resent 1 ms after a paced send");
    }
}

/// `tcp.small_queues = "nic"`: with one of its packets waiting in the host, the sender sends
/// nothing more and asks to be woken; each wake-up after the host sent the packet on lets
/// one more go, until the window (4 segments) is out and holds the fifth itself.
#[test]
fn an_rdma_nic_takes_one_packet_at_a_time() {
    let cfg = TcpConfig { mss: MSS as u32, small_queues: SmallQueues::Nic, ..Default::default() };
    let mut s = Script::with(NEWRENO, cfg);
    s.establish();
    assert_eq!(s.tx.stats.sent.segments_sent, 1, "the second waits for the first to leave the host");
    assert_eq!(s.host.queued, Some(MSS + HEADERS as u64));
    assert!(s.host.wants_room);
    for sent in 2..=4 {
        (s.host.queued, s.host.wants_room) = (Some(0), false);
        s.act(ms(100), |tx, cx| tx.on_host_room(cx));
        assert_eq!(s.tx.stats.sent.segments_sent, sent);
        assert_eq!(s.host.wants_room, sent < 4, "waits for the host while the window has room");
    }
}

/// `tcp.small_queues = "linux"`, by hand from `tcp_small_queue_check`: an initial window of
/// `iw` segments of 1000 bytes (1040 on the wire), srtt 10 ms from the handshake, in slow
/// start: the pacing rate is 2 × cwnd / srtt. The first two segments go whatever is queued
/// (at most one unacknowledged); each later one while at most `limit` bytes wait.
fn linux_small_queue_sends(iw: u64, syn_ack_ms: u64) -> u64 {
    let cfg = TcpConfig { mss: MSS as u32, small_queues: SmallQueues::Linux, ..Default::default() };
    let mut s = Script::with(&format!(r#"{{"kind":"newreno","initial_window":{iw}}}"#), cfg);
    s.act(Time::ZERO, |tx, cx| tx.on_start(cx));
    s.ack(syn_ack_ms, 1, tcp_flags::SYN);
    assert!(s.host.wants_room, "held by the host, not the window");
    s.tx.stats.sent.segments_sent
}

#[test]
fn linux_small_queues_hold_about_a_millisecond_at_the_pacing_rate() {
    // 1000 segments over 10 ms, doubled: 200,000,000 B/s, >> 10: 195,312 bytes. A send goes
    // while 1040 × k <= 195,312, so k = 0..=187: 188 segments.
    assert_eq!(linux_small_queue_sends(1000, 10), 188);
    // 2000 segments over 1 ms: 3,906,250 B/s >> 10 is above tcp_limit_output_bytes, 1 MiB,
    // which caps an unpaced socket: 1040 × k <= 1,048,576 for k = 0..=1008, 1009 segments.
    assert_eq!(linux_small_queue_sends(2000, 1), 1009);
}

/// `tcp.cwnd_limited_growth = "linux"` by hand from `tcp_is_cwnd_limited`: an initial window of
/// 10 segments and a 4-segment transfer: 4 segments (and the FIN's byte) in flight never
/// fill the window, and in slow start 10 segments are not under twice the 4,001 bytes out,
/// so the ACK of two segments leaves the window at 10 (every ACK grows it to 12 without the
/// rule). A bulk sender with 4 segments' window fills it, so the window grows as without it.
#[test]
fn linux_grows_the_window_only_while_it_limits_the_sends() {
    let window_after_an_ack = |growth: CwndLimitedGrowth, bytes: Option<u64>, iw: u64| {
        let cfg = TcpConfig { mss: MSS as u32, cwnd_limited_growth: growth, ..Default::default() };
        let conn = Connection::for_tests(0, 1);
        let cc: CcSpec = serde_json::from_str(&format!(r#"{{"kind":"newreno","initial_window":{iw}}}"#)).unwrap();
        let mut s = Script::with(NEWRENO, cfg.clone());
        s.tx = TcpSender::new(conn, cfg, cc.build().unwrap(), bytes);
        s.establish();
        s.ack(200, 1 + 2 * MSS, 0);
        s.tx.w.cwnd / MSS
    };
    assert_eq!(window_after_an_ack(CwndLimitedGrowth::Off, Some(4 * MSS), 10), 12);
    assert_eq!(window_after_an_ack(CwndLimitedGrowth::Linux, Some(4 * MSS), 10), 10);
    assert_eq!(window_after_an_ack(CwndLimitedGrowth::Off, None, 4), 6);
    assert_eq!(window_after_an_ack(CwndLimitedGrowth::Linux, None, 4), 6, "a full window grows");
}

/// DCTCP (IW 4, SACK, RACK-TLP, ECN) with SYN at 0 and an ECN-setup SYN-ACK at 100 ms: SRTT
/// 100 ms, segments 0-3 sent at 100 ms, the probe timer at 100 + 2·100 = 300 ms.
fn dctcp_tlp_script() -> Script {
    let cfg =
        TcpConfig { mss: MSS as u32, sack: true, ecn: true, loss_detection: LossDetection::Rack, ..Default::default() };
    let mut s = Script::with(r#"{"kind":"dctcp","initial_window":4}"#, cfg);
    s.act(Time::ZERO, |tx, cx| tx.on_start(cx));
    s.ack(100, 1, tcp_flags::SYN | tcp_flags::ECE);
    assert!(s.tx.ecn.negotiated);
    s.host.sent.clear();
    s
}

/// A probe's episode ends when ECN-Echo starts a window reduction, as Linux's `tcp_enter_cwr`
/// ends it (`tcp_init_cwnd_reduction` clears `tlp_high_seq`), so the tail can be probed again.
/// No ACK by 300 ms: the probe sends new data, segment 4 (TLP.end_seq = segment 5's start).
/// At 310 ms the ACK of segment 0 echoes CE; segments 1-4 are lost. Its sample (210 ms) makes
/// SRTT 100 + (210 − 100)/8 = 113.75 ms, so the next probe is due 2·113.75 ms later, at
/// 537.5 ms (four segments in flight: no delayed-ACK allowance), and sends segment 5. The
/// same ACK without ECE sends segment 5 and leaves the episode open, as it does in Linux
/// (`tcp_send_loss_probe` sends nothing while `tlp_high_seq` is set): with segments 1-5 lost,
/// nothing more is sent before the RTO.
#[test]
fn an_ecn_reduction_ends_the_probe_episode() {
    for ece in [true, false] {
        let mut s = dctcp_tlp_script();
        run_timers(&mut s, ms(300));
        assert_eq!(sent_since(&mut s), vec![(300, seg(4))], "the first probe: new data");
        s.ack(310, seg(1), if ece { tcp_flags::ECE } else { 0 });
        assert_eq!(s.tx.stats.ecn_reductions, ece as u64);
        // Without ECE slow start sends segment 5 (cwnd 5 segments, 4 in flight); with it the
        // window falls to 2 segments (alpha 1: 4·(1 − 1/2)) and nothing is sent.
        let at_ack = if ece { vec![] } else { vec![(310, seg(5))] };
        assert_eq!(sent_since(&mut s), at_ack, "ece {ece}");
        run_timers(&mut s, Time::ZERO + Dur::from_micros(537_499));
        assert_eq!(sent_since(&mut s), vec![], "ece {ece}");
        run_timers(&mut s, Time::ZERO + Dur::from_micros(537_500));
        if ece {
            assert_eq!(sent_since(&mut s), vec![(537, seg(5))], "the second probe");
            assert_eq!((s.tx.loss.tlp.as_deref().copied().unwrap().probes, s.tx.stats.sent.timeouts), (2, 0));
        } else {
            assert_eq!(sent_since(&mut s), vec![]);
            run_timers(&mut s, ms(1400));
            assert_eq!(s.tx.stats.sent.timeouts, 1, "the tail waits for the RTO");
        }
    }
}

/// BBR without SACK, one loss, against Linux's Reno emulation traced by hand (`reno_sack.rs`;
/// tcp_input.c `tcp_add_reno_sack`, `tcp_remove_reno_sacks`, tcp_recovery.c
/// `tcp_newreno_mark_lost`, tcp_bbr.c `bbr_set_cwnd_to_recover_or_restore`). IW 100 (s0-s99
/// sent at 100 ms, nothing in flight before: BBR in STARTUP, no RTT sample yet, so its target is
/// the initial window plus three 64 KB quanta, far above the window); s0 lost; one duplicate
/// ACK per ms from 200 ms for s1-s103, then the ACK of the repair.
///
/// By hand, in segments (in_flight = packets_out − sacked − lost + retransmitted):
/// - dup 1, 2: sacked 1, 2; in_flight 99, 100; STARTUP grows cwnd by the one delivered:
///   101, 102; two new segments each (s100-s103).
/// - dup 3: sacked 3, s0 marked lost (W = packets_out = 104), Recovery; BBR: 102 − 1 lost,
///   then packet conservation, cwnd = in_flight + 1 = (104 − 3 − 1) + 1 = 101 = W − 3. The
///   retransmission of s0 fills the one slot (in_flight 100 → 101); nothing new.
/// - dup 4-103: in_flight 100 after each, conservation max(101, 100 + 1) = 101: one new
///   segment each (s104-s203), exactly one for one.
/// - the ACK of the repair (snd_una = s104 = recover): delivered max(104 − 103, 1) = 1, 104 in
///   all, what the receiver holds; the sample, from the retransmission (delivered 3 when it
///   left), is 101 segments and starts a new round, ending conservation. Recovery is held
///   (Linux leaves it only above `recover`), and STARTUP adds the one delivered: 102. in_flight
///   100 (s104-s203): two new segments.
/// - the next ACK (s104-s105): Open; delivered 2; the restore takes max(102, prior_cwnd 102),
///   and STARTUP adds 2: 104. in_flight 100: four new segments, paced.
#[test]
fn bbr_without_sack_follows_linuxs_reno_emulation_through_one_loss() {
    let cfg = TcpConfig { mss: MSS as u32, send_buffer: crate::units::Bytes(1 << 30), ..Default::default() };
    let mut s = Script::with(r#"{"kind":"bbr","initial_window":100}"#, cfg);
    s.establish();
    assert_eq!(std::mem::take(&mut s.host.sent).len(), 101, "the SYN and 100 segments");
    let segs = |s: &Script| s.tx.w.cwnd / MSS;
    let mut row = vec![];
    let step = |s: &mut Script, t: u64, ack: u64| {
        let before = s.tx.send.snd_max;
        s.ack(t, ack, 0);
        run_timers(s, ms(t) + Dur::from_micros(900));
        sends(&std::mem::take(&mut s.host.sent), before)
    };
    for k in 1..=3 {
        row.push(step(&mut s, 199 + k, 1));
        if k < 3 {
            assert_eq!(segs(&s), 100 + k, "dup {k}");
        }
    }
    assert_eq!(row, ["NN", "NN", "R"]);
    assert_eq!(s.tx.loss.ca, CaState::Recovery { partial_ack_seen: false });
    assert_eq!(s.tx.loss.recover_end, seg(104));
    assert_eq!((segs(&s), s.tx.window_flight() / MSS), (101, 101), "cwnd = W − 3, the retransmission in flight");
    for k in 4..=103 {
        assert_eq!(step(&mut s, 199 + k, 1), "N", "dup {k}: one for one");
        assert_eq!((segs(&s), s.tx.window_flight() / MSS), (101, 101), "dup {k}");
    }
    assert_eq!(s.tx.send.snd_max, seg(204));
    assert_eq!(step(&mut s, 310, seg(104)), "NN");
    assert_eq!(s.tx.loss.ca, CaState::Recovery { partial_ack_seen: false }, "held at recover");
    assert_eq!(segs(&s), 102);
    let delivered = s.tx.pacing.model.as_ref().map(|m| m.rate.total_delivered());
    assert_eq!(delivered, Some(104 * MSS), "what the receiver holds");
    step(&mut s, 311, seg(106));
    assert_eq!(s.tx.loss.ca, CaState::Open);
    assert_eq!(segs(&s), 104);
    // STARTUP's pacing (100 segments over the handshake's 100 ms, × 2.885: one segment per
    // 0.35 ms) spreads the four over 1.05 ms.
    run_timers(&mut s, ms(313));
    assert_eq!(s.tx.send.snd_max, seg(210), "four new segments");
    assert_eq!(s.tx.stats.sent.retransmitted_segments, 1);
}

/// RFC 6582 section 4.2's two timers through a 30-hole NewReno recovery without SACK: 60
/// segments out at 100 ms (RTO 1 s, its floor, from the handshake's 100 ms sample), every
/// other one lost (s0, s2, ..., s58); duplicate ACKs from s1, s3, s5 at 200-202 ms start
/// recovery; one partial ACK per 40 ms round trip from 240 ms, each for one repaired hole
/// and the segment above it, the last (the ACK of `recover`, s60) at 1400 ms.
/// - Impatient (the rfc profile's): the timer restarted on the first partial ACK only expires
///   at 240 ms + 1 s, before the 26th of the 30 partial ACKs.
/// - Slow-but-Steady (Linux's, `tcp_rearm_rto` on every advancing ACK): every partial ACK
///   restarts it, and all 30 holes are repaired without a timeout.
#[test]
fn newreno_timer_impatient_times_out_where_slow_but_steady_repairs_every_hole() {
    use super::super::config::NewRenoTimer;
    for (timer, expected) in [(NewRenoTimer::Impatient, Some(ms(1240))), (NewRenoTimer::SlowButSteady, None)] {
        let cfg = TcpConfig {
            mss: MSS as u32,
            send_buffer: crate::units::Bytes(1 << 30),
            newreno_timer: timer,
            ..Default::default()
        };
        let mut s = Script::with(r#"{"kind":"newreno","initial_window":60}"#, cfg);
        s.establish();
        for k in 0..3 {
            s.ack(200 + k, 1, 0);
        }
        assert_eq!(s.tx.loss.recover_end, seg(60));
        let mut first_timeout = None;
        for j in 1..=30 {
            let t = 240 + 40 * (j - 1);
            run_timers(&mut s, ms(t));
            if s.tx.stats.sent.timeouts > 0 && first_timeout.is_none() {
                first_timeout = Some(s.host.now);
            }
            s.ack(t, seg(2 * j), 0);
        }
        assert_eq!(first_timeout, expected, "{timer:?}");
        if first_timeout.is_none() {
            assert_eq!(s.tx.loss.ca, CaState::Open, "all 30 holes repaired in recovery");
            assert_eq!(s.tx.stats.sent.retransmitted_segments, 30);
        }
    }
}
