//! Unit tests of the sender driven by hand through a scripted host: congestion-state
//! transitions and the Linux host's local drop.

use super::super::config::{LocalDropReaction, TcpConfig};
use super::super::{Connection, TcpTimer};
use super::{CaState, TcpSender};
use crate::cc::CcSpec;
use crate::packet::{tcp_flags, AgentId, FlowId, NodeId, Packet};
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
        let conn = Connection { flow: FlowId(0), local: NodeId(0), remote: NodeId(1), peer: AgentId(1) };
        let cfg = TcpConfig { mss: MSS as u32, local_drop, ..Default::default() };
        let cc: CcSpec = serde_json::from_str(cc).unwrap();
        let tx = TcpSender::new(conn, cfg, cc.build().unwrap(), None);
        Script { tx, host: ScriptedHost::new(Recorder::new(RecordConfig::default(), vec![])) }
    }

    fn act(&mut self, now: Time, f: impl FnOnce(&mut TcpSender, &mut AgentCx<ScriptedHost>)) {
        self.host.now = now;
        let mut cx = AgentCx::new(now, AgentId(0), NodeId(0), &mut self.host);
        f(&mut self.tx, &mut cx);
    }

    fn ack(&mut self, now_ms: u64, seq: u64, flags: u8) {
        let mut p: Packet = crate::qdisc::harness::packet(0, 0, 40);
        (p.ack, p.flags, p.payload, p.window) = (seq, tcp_flags::ACK | flags, 0, 1 << 20);
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
    assert_eq!(s.tx.ca, CaState::Open);
    assert_eq!(s.tx.snd_max, 1 + 4 * MSS);
    s.ack(200, 1, 0);
    assert_eq!(s.tx.ca, CaState::Disorder);
    s.ack(201, 1, 0);
    s.ack(202, 1, 0);
    assert_eq!(s.tx.ca, CaState::Recovery { partial_ack_seen: false });
    let recover = s.tx.recover;
    s.ack(300, 1 + MSS, 0);
    assert_eq!(s.tx.ca, CaState::Recovery { partial_ack_seen: true }, "a partial ACK");
    s.ack(400, recover, 0);
    assert_eq!(s.tx.ca, CaState::Open);
    assert_eq!(s.tx.w.cwnd, s.tx.w.ssthresh);
}

/// A timeout enters Loss until its window (snd_max at the timeout) is acknowledged.
#[test]
fn a_timeout_holds_loss_until_its_window_is_acknowledged() {
    let mut s = Script::new(NEWRENO, LocalDropReaction::Loss);
    s.establish();
    // Expiries queued for an earlier deadline re-queue themselves for the current one.
    let mut at = Time::ZERO;
    while s.tx.stats.timeouts == 0 {
        let (due, timer) = s.host.timers.pop().expect("a retransmission timer is pending");
        at = due;
        s.act(due, |tx, cx| tx.on_timer(timer, cx));
    }
    assert_eq!(s.tx.ca, CaState::Loss);
    let recover = s.tx.recover;
    s.ack(at.0 / 1_000_000 + 100, 1 + MSS, 0);
    assert_eq!(s.tx.ca, CaState::Loss, "part of the window is still unacknowledged");
    s.ack(at.0 / 1_000_000 + 200, recover, 0);
    assert_eq!(s.tx.ca, CaState::Open);
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
    assert_eq!(s.tx.stats.segments_sent, 0);
    assert_eq!((s.tx.snd_nxt, s.tx.snd_max), (1, 1));
    assert!(matches!(s.tx.ca, CaState::Cwr(_)));
    let (probe, timer) = *s.host.timers.last().expect("a probe is armed");
    assert_eq!(TcpTimer::of(timer), Some(TcpTimer::Burst));
    assert_eq!(probe, ms(100) + s.tx.rtt.rto());
    s.host.refuse = false;
    s.act(probe, |tx, cx| tx.on_timer(Timer { kind: timer.kind, generation: timer.generation }, cx));
    assert!(s.tx.stats.segments_sent >= 1 && s.tx.snd_nxt > 1);
}
