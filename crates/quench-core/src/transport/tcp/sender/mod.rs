//! The sending side of a TCP connection.
//!
//! Output (`output`): send while `flight + len <= min(cwnd, peer window, send buffer)`, full
//! segments only except the last; the FIN rides on the last data segment. Timing: one segment
//! per window is timed (BSD), and Karn's rule discards the timing of anything retransmitted;
//! with `tcp.rtt_sampling = "every_ack"` every new ACK times the newest segment it covers,
//! a retransmission timed from its own send as RFC 7323 timestamps would.
//! With `tcp.burstiness_control` a send also waits until the burstiness B(n) of the last RTT
//! is under its threshold (`burst.rs`); with `tcp.pacing`, one segment every srtt/cwnd (`pacing.rs`).
//! A model-based controller (BBR) instead sees a delivery-rate sample on every ACK (`rate.rs`),
//! sets the window itself in every state, and paces sends at the rate it returns.
//!
//! ACK processing is split in steps: handshake, duplicate ACK, new ACK (RTT sample, recovery
//! or window growth, timer), then output. Loss recovery after `dupack_threshold` duplicates
//! follows the controller's [`Recovery`]:
//! - SlowStart (Tahoe): resend the missing segment with `cwnd = 1 segment`, restore snd_nxt.
//! - Reno (RFC 5681 3.2): `cwnd = ssthresh + 3·MSS`, +MSS per further duplicate, deflate to
//!   ssthresh on the next new ACK.
//! - NewReno (RFC 6582): as Reno, but a partial ACK resends the next hole, deflates by the
//!   amount acked (+MSS if ≥ MSS) and restarts the timer on the first partial ACK only;
//!   recovery ends when `recover` (the highest sequence number sent at loss time) is
//!   acknowledged, and no new recovery starts until an ACK covers more than it (RFC 6582's
//!   "ack_number − 1 > recover": `snd_una > recover_end`, `recover_end` one past `recover`;
//!   with SACK, RFC 6675 section 5.1's `snd_una >= recover_end`, `past_recovery_point`).
//! - With `tcp.sack` (Reno/NewReno): RFC 6675 — enter recovery on the third duplicate ACK or
//!   when the scoreboard says snd_una is lost, `cwnd = ssthresh`, and send while
//!   `pipe + segment <= cwnd` what NextSeg returns: (1) lost holes above HighRxt, (2) new data,
//!   (3) unSACKed holes above HighRxt below the highest SACK, (4) once per recovery, a rescue
//!   of the highest unSACKed segment (`recovery.rs`).
//!
//! With `tcp.limited_transmit`, each of the first two duplicate ACKs releases one new segment
//! (RFC 3042), or, with `"rfc6675"` and SACK, each duplicate ACK before recovery releases what
//! the pipe leaves room for in cwnd (RFC 6675 section 5 step 3). On timeout: back off,
//! `ssthresh` from the controller, `cwnd` = loss window, go back N (skipping SACKed ranges).
//!
//! The sender's state is split by concern, each part with its invariants written on it: the
//! sequence space and connection state (`SendState`), loss detection and recovery
//! (`LossRecovery`, owned by `recovery.rs`, `prr.rs`, `rack.rs`, `tlp.rs`, `local_drop.rs`),
//! RTT measurement (`RttTiming`), what holds a send and the rate machinery (`Pacing`), the ECN
//! state (`ecn.rs`), the timers (`timers.rs`) and the controller's window (`cc::Window`).
//!
//! Must not touch: the world, the receiver or another flow. The sender acts only through its
//! `AgentCx` (send, timers, records); its controller sees only the `cc::Window` and the samples.

mod clock;
mod cwnd_limited;
mod dsack;
mod local_drop;
mod monitor;
mod prr;
mod rack;
mod rate;
mod recovery;
mod reno_sack;
mod small_queues;
#[cfg(test)]
mod tests;
mod timers;
mod tlp;

use super::burst::Burstiness;
use super::config::{CwndLimitedGrowth, LocalDropReaction, RttSampling, TcpConfig};
use super::ecn::SenderEcn;
use super::pacing::{Pacer, RatePacer};
use super::quench::{QuenchReaction, Squid, BSD43_OUTSTANDING_FRACTION};
use super::rtt::RttEstimator;
use super::sack::Scoreboard;
use super::{Connection, TcpTimer};
use crate::cc::{
    AckSample, AnyCc, CaPhase, CongestionControl, ControllerMetrics, RateSample, Recovery, Signal, Window,
};
use crate::packet::{tcp_flags, ts_clock, NodeId, Packet};
use crate::telemetry::IntRecord;
use crate::trace::TcpEvent;
use crate::transport::{Admission, AgentCx, Endpoint, Host, SendCounts, Timer};
use crate::units::{Dur, Time};
use std::collections::VecDeque;
use std::sync::Arc;
use tlp::TlpAck;

/// Sequence number of the first data byte (the SYN occupies 0).
const FIRST_DATA_SEQ: u64 = 1;
/// Data end of an unlimited transfer: far beyond anything a run can send.
const UNLIMITED_END: u64 = u64::MAX / 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    Established,
    Closed,
    Aborted,
}

/// Where the sender stands in congestion control, each state with its own data (Linux's
/// `tcp_ca_state`). What a state changes is said where the sender branches on it: SACK
/// recovery sends from the scoreboard, Recovery holds window growth, CWR shrinks the window
/// as it is acknowledged. Disorder and Loss change nothing in the rules implemented so far;
/// they say what the sender knows (duplicate ACKs seen; a timeout's window not yet
/// acknowledged), for the recovery mechanisms that do branch on them (RFC 6937 PRR, RFC 8985
/// RACK-TLP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    /// Nothing suspected.
    Open,
    /// Duplicate ACKs have come, fewer than the threshold (or too old to act on).
    Disorder,
    /// The window is being reduced for a local drop (`local_drop.rs`).
    Cwr(local_drop::Cwr),
    /// Fast recovery, until `recover` is acknowledged. NewReno restarts the retransmission
    /// timer on the first partial ACK only (RFC 6582 section 3.2 step 5).
    Recovery { partial_ack_seen: bool },
    /// A retransmission timeout's window (up to `recover`) is not yet acknowledged.
    Loss,
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub start: Option<Time>,
    pub established: Option<Time>,
    /// When the FIN was acknowledged.
    pub closed: Option<Time>,
    /// Segments, bytes, retransmissions, timeouts and RTT samples, as every transfer counts them.
    pub sent: SendCounts,
    pub retransmitted_bytes: u64,
    pub fast_retransmits: u64,
    /// Window reductions for ECN-Echo (RFC 3168).
    pub ecn_reductions: u64,
    /// ACKs that carried a D-SACK block (RFC 2883).
    pub dsacks_received: u64,
}

/// The sequence space and the connection's progress (RFC 793's send variables).
///
/// Invariants: `snd_una <= snd_nxt <= snd_max`; `snd_max <= data_end + finite` (the FIN takes
/// one sequence number after the data); before the handshake completes all three are 0, after
/// it at least `FIRST_DATA_SEQ`. `snd_nxt < snd_max` only while going back N after a timeout.
struct SendState {
    state: State,
    /// Sequence number one past the last data byte (where the FIN goes).
    data_end: u64,
    /// The application's transfer has an end (a FIN follows the data).
    finite: bool,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// The SYN was sent again (its answer then gives no RTT sample without timestamps).
    syn_retransmitted: bool,
    /// `tcp.local_drop = "linux_cwr"`: the host's queue refused a segment in this activation,
    /// and nothing more is offered until the next one (`local_drop.rs`).
    host_refused: bool,
    /// The SYN's option bytes and whether it carries timestamps: the sender's own support,
    /// whatever the peer agrees to (`options::syn_options`); kept this small since the sender's
    /// size is per flow.
    syn_option_bytes: u8,
    syn_timestamps: bool,
}

/// Loss detection and recovery: the congestion state, the duplicate ACKs, the SACK scoreboard
/// and the optional mechanisms (PRR, RACK-TLP). `recovery.rs`, `prr.rs`, `rack.rs`, `tlp.rs`
/// and `local_drop.rs` own it.
///
/// Invariants: `high_rxt` and `rescue_rxt` lie within `[snd_una, recover_end)` during a SACK
/// recovery; `lost_mark <= snd_max`; `prr` is `Some` exactly when `tcp.recovery` asks for PRR,
/// `rack` when `sack` and `tcp.loss_detection` is RACK, `tlp` when RACK with the probe.
struct LossRecovery {
    ca: CaState,
    /// Duplicate ACKs since the last new ACK (counted in every state).
    dupacks: u32,
    /// The controller's recovery procedure and loss window in segments after a timeout
    /// (`cc::Capabilities`, read once when the sender is built).
    recovery: Recovery,
    loss_window_segments: u8,
    /// SACK-based recovery is on (tcp.sack and a controller with fast recovery).
    sack: bool,
    /// One past RFC 6582's `recover` (RFC 6675's RecoveryPoint), the highest sequence number
    /// sent when the last recovery or timeout began: snd_max then. Recovery ends with the ACK
    /// of `recover_end` (all the data up to and including `recover`); when a new one may
    /// start is `past_recovery_point`. 0 before any.
    recover_end: u64,
    scoreboard: Scoreboard,
    /// RFC 6675 HighRxt: the end of the highest retransmission in this recovery.
    high_rxt: u64,
    /// RFC 6675 RescueRxt, as the RFC keeps it (an octet, not one past): no rescue
    /// retransmission (NextSeg rule 4) until snd_una − 1 is above it.
    rescue_rxt: Option<u64>,
    /// The highest sequence number presumed lost so far (RFC 6675 IsLost): a rate sample's
    /// losses are the bytes newly presumed lost below it.
    lost_mark: u64,
    /// `tcp.recovery = "prr"`: RFC 6937's state of the current recovery (`prr.rs`).
    prr: Option<Box<prr::Prr>>,
    /// `tcp.loss_detection = "rack"`: RACK's per-segment send times and loss marks (`rack.rs`),
    /// and the tail loss probe (`tlp.rs`).
    rack: Option<Box<rack::Rack>>,
    tlp: Option<Box<tlp::Tlp>>,
    /// Without SACK, for a controller that asks for it: Linux's emulation of SACK
    /// (`reno_sack.rs`).
    reno: Option<Box<reno_sack::RenoSack>>,
}

/// RTT measurement and the retransmission timeout (RFC 6298, RFC 7323 timestamps).
///
/// Invariants: at most one of `timed` (one timed segment per window) and `send_times` (every
/// segment, `rtt_sampling = "every_ack"` without timestamps) is in use; `send_times` is in
/// sequence order and holds only first transmissions above snd_una, or a retransmission's own
/// time (RFC 7323 semantics); nothing retransmitted is timed (Karn).
struct RttTiming {
    rtt: RttEstimator,
    /// The timed segment: (sequence number, send time).
    timed: Option<(u64, Time)>,
    /// `rtt_sampling = "every_ack"`: (end sequence, send time) of every first transmission in
    /// flight, in sequence order.
    send_times: VecDeque<(u64, Time)>,
    /// `tcp.timestamps`: the peer's latest TSval (echoed on every segment) and the TSecr of
    /// the ACK being processed (its RTT sample, RFC 7323 section 4.1).
    ts_recent: u32,
    ack_echo: Option<u32>,
    /// The controller reads the receiver's ACK delay (`Capabilities::ack_delay`).
    ack_delay: bool,
    /// The controller reads the ACKs' in-band telemetry (`Capabilities::telemetry`).
    telemetry: bool,
    /// The controller acts by a clock of its own too (`Capabilities::own_clock`, `clock.rs`).
    controller_clock: bool,
}

/// What may hold a send until a time, and a model-based controller's rate machinery.
///
/// Invariants: `squid` is `Some` exactly with `tcp.source_quench = "squid"`, `pacer` with
/// `tcp.pacing`, `burst` with `tcp.burstiness_control`, `model` for a controller with rate
/// samples. Each is boxed: a sender without it holds a pointer, not its state.
struct Pacing {
    squid: Option<Box<SquidPacing>>,
    /// `tcp.burstiness_control`: the burstiness history and the wake-up of a deferred send.
    burst: Option<Box<Burstiness>>,
    /// `tcp.pacing`; its deferred sends share the burstiness wake-up.
    pacer: Option<Box<Pacer>>,
    model: Option<Box<ModelPacing>>,
}

/// RFC 1016's pacing (`tcp.source_quench = "squid"`): the inter-datagram delay, and when the
/// last data segment left.
#[derive(Default)]
struct SquidPacing {
    delay: Squid,
    last_data_send: Option<Time>,
}

/// A model-based controller's delivery-rate samples, its pacing at the rate it sets (only at
/// a rate it set), and the state last written to the `pacing` table.
struct ModelPacing {
    rate: rate::RateSampler,
    pacer: RatePacer,
    recorded: Option<ControllerMetrics>,
}

impl Pacing {
    /// The delivery-rate sampler, for a controller with rate samples.
    fn rate(&mut self) -> Option<&mut rate::RateSampler> {
        self.model.as_mut().map(|m| &mut m.rate)
    }

    /// The pacing at the controller's rate, for a controller with rate samples.
    fn model_pacer(&self) -> Option<&RatePacer> {
        self.model.as_ref().map(|m| &m.pacer)
    }
}

/// A TCP sender, its state split by concern: each part's invariants are written on it, and
/// each file of `sender/` works on the parts it names.
pub struct TcpSender {
    conn: Connection,
    /// What the handshake agreed, shared with every sender that agreed the same.
    cfg: Arc<TcpConfig>,
    cc: AnyCc,
    send: SendState,
    w: Window,
    loss: LossRecovery,
    timing: RttTiming,
    /// Every timer of the sender, by kind (`timers.rs`).
    timers: timers::TimerTable,
    pacing: Pacing,
    ecn: SenderEcn,
    /// How the window was used in the current round, with `tcp.cwnd_limited_growth = "linux"`
    /// (`cwnd_limited.rs`).
    cwnd_use: Option<Box<cwnd_limited::CwndUse>>,
    pub stats: SenderStats,
}

impl TcpSender {
    /// `bytes`: the application's transfer size, or `None` for an unlimited bulk source.
    /// `own` is the opening end's configuration; the sender runs what the handshake agrees
    /// (`options::agreed`), its SYN carrying its own options.
    pub fn new(conn: Connection, own: TcpConfig, cc: AnyCc, bytes: Option<u64>) -> Self {
        let agreed = Arc::new(super::options::agreed(&own));
        TcpSender::with_agreed(conn, &own, agreed, cc, bytes)
    }

    /// [`TcpSender::new`] with what the handshake agrees already made (`options::agreed` of
    /// `own`), and shared with other flows' senders (`FlowBuild::shared`).
    pub fn with_agreed(conn: Connection, own: &TcpConfig, cfg: Arc<TcpConfig>, cc: AnyCc, bytes: Option<u64>) -> Self {
        debug_assert!(*cfg == super::options::agreed(own), "the agreed configuration is the one `own` agrees to");
        let syn_options = super::options::syn_options(own);
        let mss = conn.segment_payload(&cfg) as u64;
        let rtt = RttEstimator::new(cfg.rto.clone());
        let window = cfg.send_buffer.0;
        let caps = cc.capabilities();
        let sack = cfg.sack && caps.recovery != Recovery::SlowStart;
        // The optional mechanisms are boxed: absent, each costs the sender a pointer rather
        // than its whole state (a sender per flow; 10,000 flows are 10,000 senders).
        let model = caps.rate_samples.then(|| {
            let rate = rate::RateSampler::new(mss, FIRST_DATA_SEQ);
            Box::new(ModelPacing { rate, pacer: RatePacer::default(), recorded: None })
        });
        let rack = (sack && cfg.loss_detection.rack()).then(|| Box::new(rack::Rack::new(mss, FIRST_DATA_SEQ)));
        let tlp = (sack && cfg.loss_detection.tlp()).then(Box::default);
        let reno = (!sack && caps.linux_cong_control && caps.rate_samples && caps.recovery == Recovery::NewReno)
            .then(Box::default);
        TcpSender {
            conn,
            cc,
            send: SendState {
                state: State::Idle,
                data_end: bytes.map_or(UNLIMITED_END, |b| FIRST_DATA_SEQ + b),
                finite: bytes.is_some(),
                snd_una: 0,
                snd_nxt: 0,
                snd_max: 0,
                syn_retransmitted: false,
                host_refused: false,
                syn_option_bytes: syn_options.bytes() as u8,
                syn_timestamps: syn_options.timestamps,
            },
            w: Window { cwnd: mss, ssthresh: u64::MAX, mss, flight: 0, peer_window: window },
            loss: LossRecovery {
                ca: CaState::Open,
                dupacks: 0,
                recovery: caps.recovery,
                loss_window_segments: caps.loss_window_segments,
                sack,
                recover_end: 0,
                scoreboard: Scoreboard::default(),
                high_rxt: 0,
                rescue_rxt: None,
                lost_mark: 0,
                // Linux never runs PRR (`tcp_cwnd_reduction`) for a `cong_control` module.
                prr: prr::Prr::new(cfg.recovery).filter(|_| !caps.linux_cong_control).map(Box::new),
                rack,
                tlp,
                reno,
            },
            timing: RttTiming {
                rtt,
                timed: None,
                send_times: VecDeque::new(),
                ts_recent: 0,
                ack_echo: None,
                ack_delay: caps.ack_delay,
                telemetry: caps.telemetry.is_some(),
                controller_clock: caps.own_clock && caps.rate_samples,
            },
            timers: timers::TimerTable::default(),
            pacing: Pacing {
                squid: (cfg.source_quench == QuenchReaction::Squid).then(Box::default),
                burst: cfg
                    .burstiness_control
                    .as_ref()
                    .map(|b| Box::new(Burstiness::new(b, mss + (super::HEADERS + cfg.option_bytes()) as u64))),
                pacer: cfg.pacing.then(Box::default),
                model,
            },
            ecn: SenderEcn::new(caps.ect_codepoint, caps.ect_on_every_packet),
            cwnd_use: (cfg.cwnd_limited_growth == CwndLimitedGrowth::Linux).then(Box::default),
            stats: SenderStats::default(),
            cfg,
        }
    }

    pub fn window(&self) -> Window {
        self.w
    }
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.timing.rtt
    }
    pub fn bytes_acked(&self) -> u64 {
        self.send.snd_una.saturating_sub(FIRST_DATA_SEQ).min(self.send.data_end - FIRST_DATA_SEQ)
    }
    pub fn is_aborted(&self) -> bool {
        self.send.state == State::Aborted
    }

    /// A subflow of a multipath connection (`transport/mptcp.rs`): it has no data of its own
    /// and sends no FIN; the connection's scheduler hands it data with [`TcpSender::assign`].
    /// `own` and `agreed` as for [`TcpSender::with_agreed`].
    pub(crate) fn subflow(conn: Connection, own: &TcpConfig, agreed: Arc<TcpConfig>, cc: AnyCc) -> Self {
        let mut s = TcpSender::with_agreed(conn, own, agreed, cc, None);
        (s.send.finite, s.send.data_end) = (false, FIRST_DATA_SEQ);
        s
    }

    /// Bytes handed to this subflow so far (its data runs from 0 to this, subflow-relative).
    pub(crate) fn assigned(&self) -> u64 {
        self.send.data_end - FIRST_DATA_SEQ
    }

    /// Append `bytes` to the subflow's data; `push` sends what the window allows.
    pub(crate) fn assign(&mut self, bytes: u64) {
        self.send.data_end += bytes;
    }

    /// Send what the window allows of the data assigned.
    pub(crate) fn push(&mut self, cx: &mut AgentCx<impl Host>) {
        self.output(cx);
    }

    /// Whether a scheduler may hand this subflow a segment more: it is established, has sent
    /// everything assigned to it, and its window has room for a full segment beyond what is in
    /// flight (Linux's `tcp_cwnd_test` as `mptcp_sched.c`'s default scheduler asks it).
    pub(crate) fn has_room(&self) -> bool {
        self.send.state == State::Established
            && self.send.snd_max >= self.send.data_end
            && !self.ecn.waiting_for_timer
            && self.inflight() + self.w.mss <= self.limit_window()
    }

    fn record_window(&mut self, cx: &mut AgentCx<impl Host>) {
        let now = cx.now;
        cx.rec().cwnd(now, self.conn.flow, self.w.cwnd, self.w.ssthresh);
    }

    fn limit_window(&self) -> u64 {
        self.w.cwnd.min(self.w.peer_window).min(self.cfg.send_buffer.0)
    }

    /// Length and FIN flag of the segment starting at `seq`.
    fn segment_at(&self, seq: u64) -> (u32, bool) {
        let len = (self.send.data_end.saturating_sub(seq)).min(self.w.mss) as u32;
        let fin = self.send.finite && seq + len as u64 == self.send.data_end;
        (len, fin)
    }

    /// Offer the segment at `seq` to the host and, once it is taken, account for it; returns
    /// the sequence number after it, or None if the host's queue refused it and the sender
    /// treats that as Linux does (`tcp.local_drop = "linux_cwr"`: the segment stays unsent).
    fn transmit(&mut self, seq: u64, cx: &mut AgentCx<impl Host>) -> Option<u64> {
        let (len, fin) = self.segment_at(seq);
        let flags = tcp_flags::ACK | if fin { tcp_flags::FIN } else { 0 };
        let retransmit = seq < self.send.snd_max;
        let mut pkt = self.conn.segment(seq, 1, len, flags, self.cfg.receive_window.0);
        self.stamp_timestamp(&mut pkt);
        pkt.frag.dont = self.cfg.dont_fragment;
        self.ecn.stamp_segment(&mut pkt, retransmit);
        self.watch_send(seq, len, retransmit, cx);
        let admission = cx.send(pkt);
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, seq, len, false, retransmit);
        if admission == Admission::Refused && self.cfg.local_drop == LocalDropReaction::LinuxCwr {
            self.on_local_drop(cx);
            return None;
        }
        self.ecn.sent(&pkt);
        if let Some(m) = self.pacing.model.as_mut() {
            m.rate.on_send(seq, len, cx.now, self.send.snd_una == self.send.snd_max);
            m.pacer.on_send(cx.now, len as u64);
        }
        if let Some(r) = self.loss.rack.as_mut() {
            r.on_send(seq, len, cx.now);
        }
        if let Some(p) = self.loss.prr.as_mut() {
            if matches!(self.loss.ca, CaState::Recovery { .. }) {
                p.on_sent(len as u64);
            }
        }
        if let Some(b) = self.pacing.burst.as_mut() {
            b.on_send(seq + len as u64 + fin as u64, cx.now);
        }
        if let Some(p) = self.pacing.pacer.as_mut() {
            p.on_send(cx.now, self.w.cwnd as f64 / self.w.mss as f64, self.timing.rtt.path_srtt());
        }
        self.stats.sent.sent(len as u64, retransmit);
        if retransmit {
            self.stats.retransmitted_bytes += len as u64;
            if self.timing.timed.is_some_and(|(s, _)| s >= seq) {
                self.timing.timed = None; // Karn: never time a retransmitted segment
            }
            if self.times_every_send() {
                self.time_retransmission(seq + len as u64 + fin as u64, cx.now);
            }
        } else if self.times_every_send() {
            self.timing.send_times.push_back((seq + len as u64 + fin as u64, cx.now));
        } else if self.timing.timed.is_none() {
            self.timing.timed = Some((seq, cx.now));
        }
        Some(seq + len as u64 + fin as u64)
    }

    /// `rtt_sampling = "every_ack"` keeps the send time of every segment; with the timestamp
    /// option the ACKs bring the times back themselves.
    fn times_every_send(&self) -> bool {
        self.cfg.rtt_sampling == RttSampling::EveryAck && !self.cfg.timestamps
    }

    /// The timestamp option on an outgoing segment: TSval is its send time, TSecr the peer's
    /// latest TSval (RFC 7323 section 3.2).
    fn stamp_timestamp(&self, pkt: &mut Packet) {
        if self.cfg.timestamps {
            (pkt.ts_on, pkt.ts_ecr) = (true, self.timing.ts_recent);
            pkt.size += self.cfg.option_bytes() as u16;
        }
    }

    /// The sender's side of RFC 7323 section 4.3 for an arriving segment: remember its TSval,
    /// and its TSecr as the RTT sample of this ACK.
    fn note_timestamp(&mut self, pkt: &Packet) {
        self.timing.ack_echo = None;
        if self.cfg.timestamps && pkt.ts_on {
            let tsval = ts_clock(pkt.sent_at);
            if tsval.wrapping_sub(self.timing.ts_recent) as i32 >= 0 {
                self.timing.ts_recent = tsval;
            }
            self.timing.ack_echo = Some(pkt.ts_ecr);
        }
    }

    /// When the segment an echo of `ecr` stands for was sent: `now` less the clock ticks since.
    fn echoed_send_time(&self, ecr: u32, now: Time) -> Time {
        let ticks = ts_clock(now).wrapping_sub(ecr) as u64;
        Time(now.0.saturating_sub(ticks * (crate::units::NS_PER_SEC / crate::packet::TS_CLOCK_HZ)))
    }

    /// Timestamp semantics (RFC 7323 section 4.3: a segment that fills a hole is the one
    /// echoed): a retransmission is timed from its own send. Timings of segments at or above it
    /// are dropped, since an ACK covering them now echoes the retransmission, not them.
    fn time_retransmission(&mut self, end: u64, now: Time) {
        while self.timing.send_times.back().is_some_and(|&(e, _)| e >= end) {
            self.timing.send_times.pop_back();
        }
        self.timing.send_times.push_back((end, now));
    }

    fn arm_retransmit(&mut self, cx: &mut AgentCx<impl Host>) {
        let at = self.timing.rtt.expiry(cx.now, self.timing.rtt.rto());
        self.timers.arm(TcpTimer::Retransmit, at, cx);
    }

    fn in_recovery(&self) -> bool {
        matches!(self.loss.ca, CaState::Recovery { .. })
    }

    /// The one gate a segment passes once the window has room for it, on every path where the
    /// window releases sends: new data (`output`, and after a timeout its go-back-N), Limited
    /// Transmit of both kinds, and RFC 6675's recovery loop with its rescue (`sack_output`).
    /// Each mechanism that may hold a send answers, and one that holds until a time arms its
    /// wake-up. The host's queue refused a segment in this activation (Linux stops
    /// `tcp_write_xmit`); SQuID's inter-datagram delay (RFC 1016: every datagram); pacing and
    /// burstiness control; the bytes already queued in the host (`small_queues.rs`), whose
    /// wake-up is the host's. (RFC 3168's one-segment wait is not a hold of one segment but a
    /// stop of new data until the timer: `output` asks it first.) The only sends that do not
    /// ask are the single segments of `send_at_once`.
    #[inline]
    fn send_held(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        self.send.host_refused || self.paced_until_later(cx) || self.burst_held(cx) || self.host_queue_full(cx)
    }

    /// One segment that a loss signal or a timer sends at once, without asking `send_held`:
    /// the fast retransmission that opens a recovery (Tahoe, Reno, NewReno, RFC 6675 step 4.3),
    /// NewReno's retransmission on a partial ACK, and the tail loss probe (a retransmission, or
    /// new data when some is waiting). Each is one segment whose timing is the signal's own;
    /// the classic procedures keep no scoreboard from which a held retransmission could be sent
    /// later, and RFC 6675's would resend it by rule 1 only at the next ACK or wake-up. Linux
    /// differs by at most one pacing gap: it sends a retransmitting loss probe unpaced
    /// (`tcp_send_loss_probe`) but paces a probe of new data (`tcp_write_xmit`) and the first
    /// retransmission of a recovery (`tcp_xmit_retransmit_queue` asks `tcp_pacing_check`).
    fn send_at_once(&mut self, seq: u64, cx: &mut AgentCx<impl Host>) -> Option<u64> {
        self.transmit(seq, cx)
    }

    /// Send what the window allows.
    fn output(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.send.state != State::Established {
            return;
        }
        if self.loss.sack && self.in_recovery() {
            return self.sack_output(cx);
        }
        if self.ecn.waiting_for_timer {
            return;
        }
        let snd_max_before = self.send.snd_max;
        let mut sent = 0;
        // Without SACK, the head Linux's emulation marked lost goes first (`reno_sack.rs`).
        let head_sent = self.reno_resend_head(cx);
        // The window bounds what is in flight; the receiver's window and the send buffer, the
        // sequence space sent above snd_una (the same count but with the emulation).
        let rwnd = self.w.peer_window.min(self.cfg.send_buffer.0);
        while head_sent && self.send.snd_nxt < self.send.data_end + self.send.finite as u64 {
            if let Some(end) = self.sacked_block_end(self.send.snd_nxt) {
                self.send.snd_nxt = end; // the receiver has it: going back N need not resend it
                continue;
            }
            let len = self.segment_at(self.send.snd_nxt).0 as u64;
            let outstanding = self.send.snd_nxt - self.send.snd_una;
            if self.window_flight() + len > self.w.cwnd || outstanding + len > rwnd || self.send_held(cx) {
                break;
            }
            if let Some(squid) = self.pacing.squid.as_mut() {
                squid.last_data_send = Some(cx.now);
            }
            let Some(next) = self.transmit(self.send.snd_nxt, cx) else { break };
            sent += 1;
            self.send.snd_nxt = next;
            self.send.snd_max = self.send.snd_max.max(self.send.snd_nxt);
            // A loss probe's timer stands in for the retransmission timer (`tlp.rs`).
            if !self.timers.rto_pending() {
                self.arm_retransmit(cx);
            }
        }
        self.check_app_limited();
        self.note_window_use(sent);
        if self.send.snd_max > snd_max_before {
            self.tlp_schedule(cx);
        }
    }

    /// The application has no more data while the window has room: the rate samples of what
    /// is sent until then measure the application, not the path (draft-cheng-iccrg-delivery-
    /// rate-estimation section 3.4, Linux `tcp_rate_check_app_limited`).
    fn check_app_limited(&mut self) {
        let flight = if self.loss.reno.is_some() { self.window_flight() } else { self.flight() };
        let exhausted = self.send.snd_nxt >= self.send.data_end + self.send.finite as u64;
        let Some(r) = self.pacing.rate() else { return };
        if exhausted && flight < self.w.cwnd {
            r.mark_app_limited(flight);
        }
    }

    /// SQuID pacing: true (and a wake-up armed) if the inter-datagram delay forbids sending now.
    fn paced_until_later(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        let Some(squid) = self.pacing.squid.as_mut() else { return false };
        squid.delay.decay(cx.now);
        let next = match squid.last_data_send {
            Some(t) if !squid.delay.delay().is_zero() => t + squid.delay.delay(),
            _ => return false,
        };
        if cx.now >= next {
            return false;
        }
        if !self.timers.is_armed(TcpTimer::Pace) {
            self.timers.arm(TcpTimer::Pace, next, cx);
        }
        true
    }

    /// Burstiness control or pacing (plain, or at a model-based controller's rate): true (and
    /// a wake-up armed) if any forbids sending now.
    fn burst_held(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        let paced = self
            .pacing
            .pacer
            .as_ref()
            .and_then(|p| p.hold_until(cx.now))
            .max(self.pacing.model_pacer().and_then(|p| p.hold_until(cx.now)));
        let burst = self.pacing.burst.as_mut().and_then(|b| {
            b.refresh_rate(cx.now, self.w.cwnd as f64 / self.w.mss as f64, self.timing.rtt.path_srtt());
            b.hold_until(cx.now)
        });
        let Some(until) = paced.max(burst) else { return false };
        self.timers.arm(TcpTimer::Burst, until, cx);
        true
    }

    fn send_syn(&mut self, cx: &mut AgentCx<impl Host>) {
        let flags = tcp_flags::SYN | SenderEcn::syn_flags(self.cfg.ecn);
        let mut syn = self.conn.segment(0, 0, 0, flags, self.cfg.receive_window.0);
        syn.ecn = SenderEcn::syn_codepoint(self.cfg.ecn, self.ecn.ect_on_every_packet, self.ecn.ect_codepoint);
        syn.size += self.send.syn_option_bytes as u16;
        if self.send.syn_timestamps {
            (syn.ts_on, syn.ts_ecr) = (true, 0);
        }
        cx.send(syn);
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, 0, 0, false, self.send.syn_retransmitted);
        self.arm_retransmit(cx);
    }

    fn on_syn_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.timers.cancel(TcpTimer::Retransmit);
        if let Some(ecr) = self.timing.ack_echo {
            // The echo says which SYN the answer is to, a retransmitted one included.
            let sent = self.echoed_send_time(ecr, cx.now);
            self.take_rtt_sample(sent, cx);
        } else if !self.send.syn_retransmitted {
            let start = self.stats.start.unwrap_or(cx.now);
            self.take_rtt_sample(start, cx);
        }
        self.send.state = State::Established;
        self.stats.established = Some(cx.now);
        self.ecn.on_syn_ack(self.cfg.ecn, pkt);
        self.send.snd_una = FIRST_DATA_SEQ;
        self.send.snd_nxt = FIRST_DATA_SEQ;
        self.send.snd_max = FIRST_DATA_SEQ;
        self.loss.recover_end = 0; // no recovery yet: every ACK is past it (`past_recovery_point`)
        self.w.peer_window = pkt.window as u64;
        self.w.cwnd = self.cc.initial_window(self.w.mss) * self.w.mss;
        self.record_window(cx);
        self.output(cx);
    }

    /// Time the segment sent at `sent` that this ACK acknowledges: the timer's sample (in ticks,
    /// if any) and the path's (exact; `RttEstimator::path_srtt`).
    fn take_rtt_sample(&mut self, sent: Time, cx: &mut AgentCx<impl Host>) {
        let m = self.timing.rtt.measure(sent, cx.now);
        self.timing.rtt.sample(m);
        self.timing.rtt.path_sample(cx.now - sent);
        if let Some(r) = self.loss.rack.as_mut() {
            r.note_rtt(m);
        }
        self.stats.sent.rtt_sample(m);
        let srtt = self.timing.rtt.srtt().unwrap_or(m);
        let now = cx.now;
        cx.rec().rtt(now, self.conn.flow, m, srtt, self.timing.rtt.rto());
    }

    fn flight(&self) -> u64 {
        self.send.snd_max - self.send.snd_una
    }

    /// FlightSize for the ssthresh of a retransmission timeout. With SACK, RFC 6675's pipe:
    /// the data above a hole that the receiver has SACKed is no longer in the network, and a
    /// timeout during a long recovery (a retransmission lost again) comes after many RTTs of
    /// new data sent above the hole. Counted as in flight (`snd_max − snd_una`), it set
    /// ssthresh to several times what the path holds (a 100 Mb/s, 100 ms path with a 417-packet
    /// buffer: 4790 segments against 1250), and the slow start that followed overshot into the
    /// next timeout, every 2.6 s. ns-3 takes BytesInFlight (the pipe) here too; Linux keeps the
    /// ssthresh that recovery set.
    fn flight_at_timeout(&self) -> u64 {
        if self.loss.sack {
            self.sack_pipe()
        } else {
            self.flight()
        }
    }

    fn rtt_sample_for(&mut self, ack: u64, cx: &mut AgentCx<impl Host>) -> Option<Dur> {
        let sent = match self.cfg.rtt_sampling {
            // RFC 7323 section 4.1: every ACK of new data times the segment it echoes; valid
            // for retransmissions too (Karn's rule is not needed, RFC 6298 section 3).
            _ if self.cfg.timestamps => Some(self.echoed_send_time(self.timing.ack_echo?, cx.now)),
            RttSampling::TimedSegment => match self.timing.timed {
                Some((seq, sent)) if ack > seq => self.timing.timed.take().map(|_| sent),
                _ => None,
            },
            RttSampling::EveryAck => self.newest_timing_acked(ack),
        }?;
        self.take_rtt_sample(sent, cx);
        // The controller reads the path's delay as it is (Linux's RTT in microseconds, a NIC's
        // timestamps): a timer tick coarsens the retransmission timer's estimator only, as
        // BSD's `t_rtt` counted ticks for the timer and nothing else read it.
        Some(cx.now - sent)
    }

    /// Drop the timings an ACK up to `ack` covers; the send time of the newest of them.
    fn newest_timing_acked(&mut self, ack: u64) -> Option<Time> {
        let mut newest = None;
        while let Some(&(end, sent)) = self.timing.send_times.front() {
            if end > ack {
                break;
            }
            newest = Some(sent);
            self.timing.send_times.pop_front();
        }
        newest
    }

    /// `ece`: the ACK carries ECN-Echo on a connection that negotiated ECN. Returns the ACK's
    /// RTT sample, if it carries one.
    fn on_new_ack(&mut self, ack: u64, ece: bool, cx: &mut AgentCx<impl Host>) -> Option<Dur> {
        let acked = ack - self.send.snd_una;
        let flight_before = self.flight();
        let rtt = self.rtt_sample_for(ack, cx);
        self.send.snd_una = ack;
        self.send.snd_nxt = self.send.snd_nxt.max(ack);
        if let Some(b) = self.pacing.burst.as_mut() {
            b.on_ack(ack);
        }
        if self.loss.sack {
            self.loss.scoreboard.advance(ack);
        }
        if self.in_recovery() {
            // RFC 6675 and RFC 6582 leave recovery when `recover` is acknowledged (RFC 6582
            // 3.2 step 3: "all of the data up to and including recover"); Reno
            // (RFC 5681 3.2 step 6) on the first new ACK; NewReno resends on a partial ACK.
            // Linux's emulation holds Recovery while snd_una is exactly `recover` + 1
            // (`reno_sack.rs`), and leaves it on the first ACK above.
            let exits = ack >= self.loss.recover_end + self.loss.reno.is_some() as u64
                || (!self.loss.sack && self.loss.recovery == Recovery::Reno);
            if exits {
                self.exit_recovery(cx);
            } else if self.loss.reno.is_some() {
                self.reno_on_partial_ack(ack, cx);
            } else if !self.loss.sack {
                self.on_partial_ack(acked, cx);
            } else if let Some(sndcnt) = self.prr_sndcnt() {
                self.prr_allow(sndcnt, cx);
            }
        } else {
            self.loss.dupacks = 0;
            if let Some(r) = self.loss.reno.as_mut() {
                r.reset(); // `tcp_reset_reno_sack` on an advancing ACK outside recovery
            }
            // A timeout's window ends with the ACK of its last octet (RFC 6675 section 5.1).
            if self.loss.ca == CaState::Disorder || (self.loss.ca == CaState::Loss && ack >= self.loss.recover_end) {
                self.loss.ca = CaState::Open;
            }
            // Linux 2.4-2.6 `tcp_ack` grows the window only if it was full when the ACK came
            // (`prior_in_flight >= snd_cwnd` in packets; in bytes: no room for another segment).
            let window_was_full = flight_before + self.w.mss > self.w.cwnd;
            self.w.flight = self.flight();
            let cwnd_before = self.w.cwnd;
            let ece_bytes = if ece { acked } else { 0 };
            let srtt = self.timing.rtt.path_srtt();
            let ack =
                AckSample { now: cx.now, acked, rtt, srtt, ece_bytes, ack_delay: None, rate: None, telemetry: None };
            self.cc.on_ack(&mut self.w, &ack);
            if !self.may_grow(window_was_full) {
                self.w.cwnd = self.w.cwnd.min(cwnd_before);
            }
            self.cwr_after_ack(cwnd_before);
            self.w.cwnd = self.w.cwnd.min(self.cfg.send_buffer.0.max(self.w.mss));
            if self.pacing.model.is_none() {
                self.record_window(cx); // a model-based controller's window is recorded after `control`
            }
        }
        let partial_ack_armed = self.loss.ca == CaState::Recovery { partial_ack_seen: true };
        if self.send.snd_una >= self.send.snd_max {
            self.timers.cancel(TcpTimer::Retransmit);
        } else if self.loss.sack || !partial_ack_armed {
            self.arm_retransmit(cx);
        }
        if self.send.finite && self.send.snd_una > self.send.data_end {
            self.send.state = State::Closed;
            self.stats.closed = Some(cx.now);
            self.timers.cancel(TcpTimer::Retransmit);
            self.timers.cancel(TcpTimer::Probe);
            self.timers.cancel(TcpTimer::Reorder);
        }
        rtt
    }

    fn on_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let cwnd_at_signal = self.w.cwnd;
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, pkt.ack, 0, true, false);
        let window_update = self.w.peer_window != pkt.window as u64;
        self.w.peer_window = pkt.window as u64;
        if pkt.ack > self.send.snd_max || pkt.ack < self.send.snd_una {
            return; // acknowledges nothing we sent, or is older than what we know
        }
        let prr_before = self.prr_before_ack();
        let duplicate = pkt.ack == self.send.snd_una && self.send.snd_max > self.send.snd_una && pkt.payload == 0;
        let prior_inflight = self.pacing.model.is_some().then(|| self.rate_deliver(pkt, duplicate, now));
        self.rack_deliver(pkt, cx.now);
        // The SACKed bytes before this ACK, wanted only to tell a pure duplicate at the end of
        // a probe's episode (`tlp_on_ack`).
        let at_probe_end = self.loss.tlp.as_ref().is_some_and(|t| t.probe_end() == Some(pkt.ack));
        let sacked_before = at_probe_end.then(|| self.loss.scoreboard.sacked_in(self.send.snd_una, self.send.snd_max));
        let dsack_of_probe = self.dsack_on_ack(pkt);
        if self.loss.sack {
            for (start, end) in super::sack::reported(&pkt.sack, pkt.ack) {
                self.loss.scoreboard.add(start.max(self.send.snd_una), end.min(self.send.snd_max));
            }
        }
        self.prr_note_delivered(pkt.ack, prr_before, duplicate);
        if pkt.ack == self.send.snd_una {
            if let Some(before) = sacked_before.filter(|_| self.send.state == State::Established) {
                let newly_sacked = self.loss.scoreboard.sacked_in(self.send.snd_una, self.send.snd_max) > before;
                let pure_duplicate = pkt.payload == 0 && !window_update && !newly_sacked;
                self.tlp_on_ack(pkt.ack, TlpAck { dsack_of_probe, pure_duplicate }, cx);
            }
            self.rack_detect(cx);
            if self.send.snd_max > self.send.snd_una && pkt.payload == 0 {
                self.on_dupack(cx);
            }
            self.on_ecn_echo(pkt, cwnd_at_signal, cx);
            if let Some(prior_inflight) = prior_inflight {
                let telemetry = self.telemetry_of(pkt, cx);
                let facts = AckSample { now: cx.now, telemetry: telemetry.as_ref(), ..AckSample::default() };
                self.model_control(prior_inflight, facts, cx);
                self.output(cx);
            }
            return;
        }
        let ece = self.ecn.negotiated && pkt.has_flag(tcp_flags::ECE);
        let acked = pkt.ack - self.send.snd_una;
        let rtt = self.on_new_ack(pkt.ack, ece, cx);
        if self.loss.rack.is_some() && self.send.state == State::Established {
            self.tlp_on_ack(pkt.ack, TlpAck { dsack_of_probe, pure_duplicate: false }, cx);
            if self.rack_detect(cx) {
                self.prr_loss_found(cx);
                self.rack_start_recovery(cx);
            }
        }
        self.on_ecn_echo(pkt, cwnd_at_signal, cx);
        if let Some(prior_inflight) = prior_inflight {
            let ece_bytes = if ece { acked } else { 0 };
            let telemetry = self.telemetry_of(pkt, cx);
            self.model_control(
                prior_inflight,
                AckSample {
                    now: cx.now,
                    acked,
                    rtt,
                    ece_bytes,
                    ack_delay: self.ack_delay_of(pkt),
                    telemetry: telemetry.as_ref(),
                    ..AckSample::default()
                },
                cx,
            );
        }
        self.output(cx);
        self.tlp_schedule(cx);
    }

    /// The receiver's ACK delay this ACK carries, for a controller that reads it.
    fn ack_delay_of(&self, pkt: &Packet) -> Option<Dur> {
        if self.timing.ack_delay {
            pkt.ack_delay()
        } else {
            None
        }
    }

    /// The in-band telemetry this ACK echoes, for a controller that reads it.
    fn telemetry_of(&self, pkt: &Packet, cx: &AgentCx<impl Host>) -> Option<IntRecord> {
        if self.timing.telemetry {
            cx.telemetry(pkt.uid)
        } else {
            None
        }
    }

    /// Bytes in flight as RFC 6675's pipe with SACK (Linux `tcp_packets_in_flight`), as
    /// Linux's emulation of SACK counts them without (`reno_sack.rs`), else everything
    /// unacknowledged.
    fn inflight(&self) -> u64 {
        if self.loss.sack {
            self.sack_pipe()
        } else if self.loss.reno.is_some() {
            self.window_flight()
        } else {
            self.flight()
        }
    }

    /// Pass what this ACK delivers for the first time to the rate sampler: the holes of the
    /// scoreboard below the cumulative ACK and within each SACK block (so a SACKed segment is
    /// counted once, not again when the cumulative ACK passes it); without SACK, what Linux's
    /// emulation credits (`reno_sack.rs`), if the sender keeps it. Returns the bytes in flight
    /// before the ACK.
    fn rate_deliver(&mut self, pkt: &Packet, duplicate: bool, now: Time) -> u64 {
        let prior_inflight = self.inflight();
        let (una, max) = (self.send.snd_una, self.send.snd_max);
        let reno_credit = self.loss.reno.is_some().then(|| self.reno_delivered(duplicate, pkt.ack - una));
        let Some(r) = self.pacing.rate() else { return prior_inflight };
        if self.loss.sack {
            for (a, b) in self.loss.scoreboard.holes_in(una, pkt.ack) {
                r.deliver(a, b);
            }
            for (start, end) in super::sack::reported(&pkt.sack, pkt.ack) {
                for (a, b) in self.loss.scoreboard.holes_in(start.max(pkt.ack), end.min(max)) {
                    r.deliver(a, b);
                }
            }
        } else if let Some(credit) = reno_credit {
            if duplicate {
                r.deliver_duplicate(credit, now);
            } else {
                r.deliver_cumulative(una, pkt.ack, credit);
            }
        } else {
            r.deliver(una, pkt.ack);
        }
        r.advance(pkt.ack);
        prior_inflight
    }

    /// Bytes newly presumed lost (RFC 6675 IsLost) since the last call.
    fn newly_lost(&mut self) -> u64 {
        if !self.loss.sack {
            return self.loss.reno.as_mut().map_or(0, |r| r.take_newly_lost());
        }
        if let Some(r) = self.loss.rack.as_mut() {
            return r.take_newly_lost();
        }
        let lost_end = self.loss.scoreboard.lost_below(self.lost_threshold()).min(self.send.snd_max);
        let from = self.loss.lost_mark.max(self.send.snd_una);
        self.loss.lost_mark = self.loss.lost_mark.max(lost_end);
        if lost_end > from {
            self.loss.scoreboard.unsacked_in(from, lost_end)
        } else {
            0
        }
    }

    /// A model-based controller's turn after an ACK (Linux `tcp_cong_control` with a
    /// `cong_control` hook): the rate sample, the window and pacing rate it sets. `facts`: what
    /// the ACK itself says (bytes acknowledged, with ECE, its RTT sample).
    fn model_control(&mut self, prior_inflight: u64, facts: AckSample<'_>, cx: &mut AgentCx<impl Host>) {
        let losses = self.newly_lost();
        let inflight = self.inflight();
        let phase = match self.loss.ca {
            CaState::Open | CaState::Disorder => CaPhase::Open,
            CaState::Cwr(_) => CaPhase::Cwr,
            CaState::Recovery { .. } => CaPhase::Recovery,
            CaState::Loss => CaPhase::Loss,
        };
        self.w.flight = self.flight();
        let Some(model) = self.pacing.model.as_mut() else { return };
        let rs = RateSample {
            losses,
            inflight,
            prior_inflight,
            srtt: self.timing.rtt.path_srtt(),
            phase,
            ..model.rate.sample(cx.now)
        };
        let ack = AckSample { srtt: rs.srtt, rate: Some(&rs), ..facts };
        let out = self.cc.on_ack(&mut self.w, &ack);
        if out.app_limited {
            model.rate.mark_app_limited(inflight);
        }
        model.pacer.set_rate(out.pacing_rate);
        self.w.cwnd = self.w.cwnd.min(self.cfg.send_buffer.0.max(self.w.mss));
        self.record_window(cx);
        self.arm_controller_clock(cx);
        let state = self.cc.metrics();
        let model = self.pacing.model.as_mut().expect("checked above");
        if state != model.recorded {
            model.recorded = state;
            if let Some(m) = state {
                let now = cx.now;
                cx.rec().pacing(now, self.conn.flow, &m);
            }
        }
    }

    /// RFC 3168 section 6.1.2: halve at most once per window for ECN-Echo, retransmitting
    /// nothing; with a one-segment window, reset the timer and wait for it instead. The
    /// window reduced is the one in force when the ACK arrived (the ACK itself grows nothing).
    fn on_ecn_echo(&mut self, pkt: &Packet, cwnd_at_signal: u64, cx: &mut AgentCx<impl Host>) {
        // RFC 3168's once per window asks whether the ACK covers an octet sent after the last
        // reduction (`ack > recover_end`: the octet at recover_end itself), a different
        // question from RFC 6582's; Linux likewise holds CWR until something above high_seq
        // is acknowledged (`tcp_fastretrans_alert`).
        if !self.ecn.wants_reduction(pkt, self.in_recovery(), self.loss.recover_end) {
            return;
        }
        self.w.flight = self.flight();
        // The controller reduces the window the ACK found, as Linux's `tcp_enter_cwr` does
        // before any growth for that ACK (a controller's rule may scale cwnd: DCTCP, Prague).
        self.w.cwnd = cwnd_at_signal;
        self.w.ssthresh = self.cc.on_congestion(&self.w, Signal::EcnEcho);
        if cwnd_at_signal <= self.w.mss {
            self.w.cwnd = self.w.mss;
            self.ecn.waiting_for_timer = true;
            self.arm_retransmit(cx);
        } else {
            self.w.cwnd = cwnd_at_signal.min(self.w.ssthresh);
        }
        self.ecn.reduced(self.send.snd_max);
        self.tlp_end_episode_on_cwr();
        self.stats.ecn_reductions += 1;
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::EcnReduction);
        self.record_window(cx);
    }

    /// The retransmission timer expired: the end of an ECN one-segment wait when nothing is
    /// outstanding, otherwise a timeout.
    fn on_retransmit_timer(&mut self, cx: &mut AgentCx<impl Host>) {
        if std::mem::take(&mut self.ecn.waiting_for_timer) && self.send.snd_una >= self.send.snd_max {
            return self.output(cx);
        }
        self.on_retransmit_timeout(cx);
    }

    fn on_retransmit_timeout(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.timing.rtt.back_off() {
            self.send.state = State::Aborted;
            let now = cx.now;
            cx.rec().event(now, self.conn.flow, TcpEvent::Aborted);
            return;
        }
        self.stats.sent.timeouts += 1;
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::Timeout);
        self.timing.timed = None;
        self.timing.send_times.clear();
        if let Some(r) = self.loss.rack.as_mut() {
            r.on_timeout();
            self.timers.cancel(TcpTimer::Reorder);
        }
        self.tlp_end_episode();
        if let Some(r) = self.loss.reno.as_mut() {
            r.reset();
        }
        if let Some(b) = self.pacing.burst.as_mut() {
            b.on_timeout();
        }
        if let Some(p) = self.pacing.pacer.as_mut() {
            p.on_timeout();
        }
        if self.send.state == State::SynSent {
            self.send.syn_retransmitted = true;
            self.send_syn(cx);
            return;
        }
        self.w.flight = self.flight_at_timeout();
        self.w.ssthresh = self.cc.on_congestion(&self.w, Signal::Timeout);
        self.w.cwnd = self.loss.loss_window_segments as u64 * self.w.mss;
        self.loss.ca = CaState::Loss;
        self.loss.dupacks = 0;
        self.loss.recover_end = self.send.snd_max;
        self.loss.high_rxt = self.send.snd_una;
        self.send.snd_nxt = self.send.snd_una; // go back N
        self.record_window(cx);
        self.output(cx);
    }
}

impl Endpoint for TcpSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    /// A Source Quench acts only on an established connection.
    fn is_quiescent(&self) -> bool {
        self.send.state != State::Established && self.timers.all_idle()
    }

    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = false;
        if self.send.state != State::Idle {
            return;
        }
        self.send.state = State::SynSent;
        self.stats.start = Some(cx.now);
        self.count_host_queue(cx);
        self.send_syn(cx);
    }

    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = false;
        self.note_timestamp(&pkt);
        match self.send.state {
            State::SynSent if pkt.has_flag(tcp_flags::SYN) && pkt.has_flag(tcp_flags::ACK) => self.on_syn_ack(&pkt, cx),
            State::Established if !pkt.has_flag(tcp_flags::SYN) => self.on_ack(&pkt, cx),
            _ => {}
        }
        self.watch_ack(&pkt, cx);
    }

    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = false;
        match self.timers.on_expiry(timer, cx) {
            Some(TcpTimer::Retransmit) => self.on_retransmit_timer(cx),
            Some(TcpTimer::Pace | TcpTimer::Burst) => self.output(cx),
            Some(TcpTimer::Reorder) => self.on_reorder_timer(cx),
            Some(TcpTimer::Probe) => self.on_probe_timer(cx),
            Some(TcpTimer::Controller) => self.on_controller_clock(cx),
            Some(TcpTimer::DelayedAck) | None => {}
        }
    }

    fn on_host_room(&mut self, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = false;
        self.output(cx);
    }

    fn on_source_quench(&mut self, cx: &mut AgentCx<impl Host>) {
        self.send.host_refused = false;
        if self.send.state != State::Established {
            return;
        }
        let mss = self.w.mss;
        match self.cfg.source_quench {
            QuenchReaction::Ignore => return,
            QuenchReaction::Tahoe => self.w.cwnd = mss,
            QuenchReaction::Bsd43 => {
                let outstanding = (self.send.snd_nxt - self.send.snd_una) as f64;
                self.w.cwnd = ((BSD43_OUTSTANDING_FRACTION * outstanding) as u64).max(mss);
            }
            QuenchReaction::Rfc1122 => {
                self.w.flight = self.flight();
                self.w.ssthresh = self.cc.on_congestion(&self.w, Signal::Timeout);
                self.w.cwnd = self.loss.loss_window_segments as u64 * self.w.mss;
            }
            QuenchReaction::Squid => {
                if let Some(squid) = self.pacing.squid.as_mut() {
                    squid.delay.on_quench(cx.now);
                }
            }
        }
        let now = cx.now;
        cx.rec().event(now, self.conn.flow, TcpEvent::SourceQuench);
        self.record_window(cx);
    }
}
