//! Router-assisted rate control: the "fair queueing" ideal of PCP's evaluation (NSDI '06 §4.1;
//! docs/mechanisms.md#router-assisted-ideal): one control packet per RTT stamped by the router
//! with the flow's fair rate and its queue; the host sends at that rate and compensates. It is the
//! baseline that shows what an endpoint could do if the network told it its share.
//!
//! Wire format: IP protocol 253 (RFC 3692, reserved for experimentation), a TCP-shaped
//! 20-byte header. The sender's SYN and one data packet per RTT carry `RATE_REQUEST` with
//! `window = u32::MAX` (kbit/s) and `ack = 0`; every advertising router on the way lowers
//! `window` to the flow's fair rate and raises `ack` to the bytes the flow has queued there
//! (`qdisc/rate_advert.rs`). The receiver echoes both in its ACK (flag `RATE_ECHO`, the rate
//! in `window`, the queue in `seq`; `ack` stays the cumulative acknowledgement). The last data
//! packet carries FIN, which tells routers the flow is gone.
//!
//! Sender: paced packets (equal spacing) at `rate = fair − queue·8/srtt` (the flow's own queue
//! drains within one RTT), never below one packet per RTT. A path with no advertising router
//! leaves the request unstamped; the flow then stays at that floor. Loss recovery, which the
//! ideal rarely needs: the third duplicate ACK resends the first unacknowledged packet; a
//! timeout of `rto_rtts`·srtt (at least `min_rto`, doubling per consecutive timeout) goes back
//! to the first unacknowledged byte.
//! Owns the assisted sender's and receiver's state. Like every endpoint it acts only through its
//! `AgentCx`, never on the world or a router's queue; the router side is `qdisc/rate_advert.rs`,
//! which shares only the wire constants.

use crate::error::ConfigError;
use crate::packet::{tcp_flags, NodeId, Packet, Proto};
use crate::ranges::FrontVec;
use crate::transport::tcp::Connection;
use crate::transport::{
    Agent, AgentCx, BuiltFlow, DeliveryCounts, Endpoint, FlowBuild, FlowReport, FlowRow, Host, SendCounts, Timer,
    TimerSlot, TransportSpec,
};
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};

/// The request for a rate stamp (TCP's URG bit position; the transport has no urgent data).
pub const RATE_REQUEST: u8 = 0x20;
/// An ACK echoing a stamp (TCP's PSH bit position).
pub const RATE_ECHO: u8 = 0x08;
/// An unstamped rate field: no router has lowered it.
pub const UNSTAMPED: u32 = u32::MAX;
/// Rate fields are in kbit/s (32 bits reach 4 Tb/s).
pub const RATE_UNIT_BPS: u64 = 1000;
/// Header bytes of every packet: IPv4 20 + a TCP-shaped 20.
const HEADERS: u32 = 40;
/// The SYN occupies sequence number 0; data starts after it (as quench's TCP and PCP).
const FIRST_DATA_SEQ: u64 = 1;
/// Duplicate ACKs that trigger a resend (RFC 5681's threshold).
const DUPACK_THRESHOLD: u32 = 3;
/// Resend the SYN after this long without an answer (RFC 6298's initial RTO).
const SYN_TIMEOUT: Dur = Dur::from_secs(1);

const TIMER_PACE: u8 = 0;
const TIMER_RTO: u8 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AssistedConfig {
    /// Payload bytes per data packet (1460 fills a 1500-byte MTU, as TCP's default).
    pub mss: u32,
    /// Retransmission timeout as a multiple of the smoothed RTT.
    pub rto_rtts: f64,
    /// Smallest retransmission timeout (RFC 6298's 1 s is tuned for TCP's RTT variance; the
    /// paced ideal has little, so 200 ms as Linux's TCP minimum).
    pub min_rto: Dur,
}

impl Default for AssistedConfig {
    fn default() -> Self {
        AssistedConfig { mss: 1460, rto_rtts: 3.0, min_rto: Dur::from_millis(200) }
    }
}

impl AssistedConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mss == 0 || self.mss + HEADERS > u16::MAX as u32 {
            return Err(ConfigError::new(
                "mss",
                format!("{} must be between 1 and {}", self.mss, u16::MAX as u32 - HEADERS),
            ));
        }
        if !(self.rto_rtts.is_finite() && self.rto_rtts >= 1.0) {
            return Err(ConfigError::new(
                "rto_rtts",
                "must be at least 1 (a timeout shorter than an RTT fires spuriously)",
            ));
        }
        let rtts = "the most round trips a waiting period may span";
        crate::limits::check_at_most("rto_rtts", self.rto_rtts, crate::limits::MAX_RTT_MULTIPLE, rtts)?;
        if self.min_rto.is_zero() {
            return Err(ConfigError::new("min_rto", "must be positive"));
        }
        Ok(())
    }
}

fn packet(conn: &Connection, seq: u64, ack: u64, payload: u32, flags: u8, window: u32) -> Packet {
    let mut p = conn.segment(seq, ack, payload, flags, window as u64);
    p.proto = Proto::Assisted;
    p
}

#[derive(Clone, Debug, Default)]
pub struct AssistedSenderStats {
    /// Segments, bytes, retransmissions, timeouts and RTT samples, as every transfer counts them.
    pub sent: SendCounts,
    pub stamps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    Established,
}

pub struct AssistedSender {
    conn: Connection,
    cfg: AssistedConfig,
    /// One past the last data byte; unlimited transfers have none.
    end: Option<u64>,
    state: State,
    rate: BitRate,
    srtt: Option<Dur>,
    /// The outstanding stamp request: its send time.
    request_sent_at: Option<Time>,
    next_request_at: Time,
    snd_una: u64,
    snd_nxt: u64,
    /// Highest byte sent so far (a go-back after a timeout resends up to it).
    snd_max: u64,
    dupacks: u32,
    consecutive_timeouts: u32,
    pace: TimerSlot,
    rto: TimerSlot,
    next_send_at: Time,
    pub stats: AssistedSenderStats,
}

impl AssistedSender {
    pub fn new(conn: Connection, cfg: AssistedConfig, bytes: Option<u64>) -> Self {
        AssistedSender {
            conn,
            end: bytes.map(|b| FIRST_DATA_SEQ + b),
            state: State::Idle,
            rate: BitRate(0),
            srtt: None,
            request_sent_at: None,
            next_request_at: Time::ZERO,
            snd_una: FIRST_DATA_SEQ,
            snd_nxt: FIRST_DATA_SEQ,
            snd_max: FIRST_DATA_SEQ,
            dupacks: 0,
            consecutive_timeouts: 0,
            pace: TimerSlot::default(),
            rto: TimerSlot::default(),
            next_send_at: Time::ZERO,
            stats: AssistedSenderStats::default(),
            cfg,
        }
    }

    pub fn rate(&self) -> BitRate {
        self.rate
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    fn segment_bits(&self) -> u64 {
        8 * (self.cfg.mss + HEADERS) as u64
    }

    /// One packet per RTT: the rate that keeps a delay and stamp signal alive.
    fn floor_rate(&self, srtt: Dur) -> BitRate {
        BitRate::from_bits_per(self.segment_bits(), srtt)
    }

    fn send_syn(&mut self, cx: &mut AgentCx<impl Host>) {
        self.request_sent_at = Some(cx.now);
        cx.send(packet(&self.conn, 0, 0, 0, tcp_flags::SYN | RATE_REQUEST, UNSTAMPED));
        self.rto.arm(TIMER_RTO, cx.now + SYN_TIMEOUT, cx);
    }

    /// Apply an echoed stamp: the fair rate less what drains the flow's queue in one RTT.
    fn on_stamp(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let Some(sent) = self.request_sent_at.take() else { return };
        let sample = cx.now - sent;
        self.stats.sent.rtt_sample(sample);
        // RFC 6298's gain of 1/8 smooths the per-RTT samples.
        let srtt = self.srtt.map_or(sample, |s| Dur((s.0 * 7 + sample.0) / 8));
        self.srtt = Some(srtt);
        let now = cx.now;
        cx.rec().rtt(now, self.conn.flow, sample, srtt, self.rto_interval());
        let floor = self.floor_rate(srtt);
        if pkt.window == UNSTAMPED {
            self.rate = floor;
            return;
        }
        self.stats.stamps += 1;
        let fair = pkt.window as u64 * RATE_UNIT_BPS;
        let drain = BitRate::from_bits_per(8 * pkt.seq, srtt).0;
        self.rate = BitRate(fair.saturating_sub(drain)).max(floor);
    }

    fn rto_interval(&self) -> Dur {
        let base = self.srtt.map_or(SYN_TIMEOUT, |s| Dur::from_secs_f64(s.as_secs_f64() * self.cfg.rto_rtts));
        Dur(base.max(self.cfg.min_rto).0 << self.consecutive_timeouts.min(16))
    }

    /// A request goes out once per RTT; one that got no echo within a timeout (the request or
    /// its echo was lost) is given up, or the rate would freeze.
    fn request_due(&self, now: Time) -> bool {
        let lost = self.request_sent_at.is_some_and(|sent| now - sent > self.rto_interval());
        (self.request_sent_at.is_none() || lost) && now >= self.next_request_at
    }

    fn has_data(&self) -> bool {
        self.end.is_none_or(|end| self.snd_nxt < end)
    }

    /// Send the next packet if pacing allows, and schedule the one after.
    fn pump(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.state != State::Established || !self.has_data() {
            return;
        }
        if cx.now < self.next_send_at {
            self.pace.arm(TIMER_PACE, self.next_send_at, cx);
            return;
        }
        let payload = self.end.map_or(self.cfg.mss as u64, |end| (end - self.snd_nxt).min(self.cfg.mss as u64));
        let mut flags = tcp_flags::ACK;
        let last = self.end.is_some_and(|end| self.snd_nxt + payload == end);
        if last {
            flags |= tcp_flags::FIN;
        }
        if self.request_due(cx.now) {
            flags |= RATE_REQUEST;
            self.request_sent_at = Some(cx.now);
            self.next_request_at = cx.now + self.srtt.unwrap_or(Dur::ZERO);
        }
        let window = if flags & RATE_REQUEST != 0 { UNSTAMPED } else { 0 };
        cx.send(packet(&self.conn, self.snd_nxt, 0, payload as u32, flags, window));
        self.stats.sent.sent(payload, self.snd_nxt < self.snd_max);
        self.snd_nxt += payload;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if !self.rto.is_armed() {
            self.rto.arm(TIMER_RTO, cx.now + self.rto_interval(), cx);
        }
        self.next_send_at = cx.now + BitRate(self.rate.0.max(1)).tx_time(Bytes(payload + HEADERS as u64));
        if self.has_data() {
            self.pace.arm(TIMER_PACE, self.next_send_at, cx);
        }
    }

    fn on_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(RATE_ECHO) {
            self.on_stamp(pkt, cx);
        }
        if pkt.ack > self.snd_una {
            self.snd_una = pkt.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.dupacks = 0;
            self.consecutive_timeouts = 0;
            if self.snd_una >= self.snd_max && !self.has_data() {
                self.rto.cancel();
            } else {
                self.rto.arm(TIMER_RTO, cx.now + self.rto_interval(), cx);
            }
        } else if pkt.ack == self.snd_una && self.snd_una < self.snd_max {
            self.dupacks += 1;
            if self.dupacks == DUPACK_THRESHOLD {
                self.resend_first(cx);
            }
        }
    }

    /// Resend the first unacknowledged packet out of pacing order.
    fn resend_first(&mut self, cx: &mut AgentCx<impl Host>) {
        let payload = self.end.map_or(self.cfg.mss as u64, |end| (end - self.snd_una).min(self.cfg.mss as u64));
        let last = self.end.is_some_and(|end| self.snd_una + payload == end);
        let flags = tcp_flags::ACK | if last { tcp_flags::FIN } else { 0 };
        cx.send(packet(&self.conn, self.snd_una, 0, payload as u32, flags, 0));
        self.stats.sent.sent(payload, true);
    }

    fn on_timeout(&mut self, cx: &mut AgentCx<impl Host>) {
        self.stats.sent.timeouts += 1;
        self.consecutive_timeouts += 1;
        self.request_sent_at = None;
        match self.state {
            State::SynSent => self.send_syn(cx),
            State::Established => {
                self.snd_nxt = self.snd_una;
                self.dupacks = 0;
                self.rto.arm(TIMER_RTO, cx.now + self.rto_interval(), cx);
                self.next_send_at = cx.now;
                self.pump(cx);
            }
            State::Idle => {}
        }
    }
}

impl Endpoint for AssistedSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.pace.is_armed() && !self.rto.is_armed()
    }
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        self.state = State::SynSent;
        self.send_syn(cx);
    }
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        match self.state {
            State::SynSent if pkt.has_flag(tcp_flags::SYN) => {
                self.state = State::Established;
                self.rto.cancel();
                self.consecutive_timeouts = 0;
                self.on_stamp(&pkt, cx);
                // The SYN's request left an RTT ago, so the next is due now: the first data
                // packet asks again, and a flow that opened during the handshake is counted
                // one RTT after data start rather than two.
                self.next_request_at = cx.now;
                self.next_send_at = cx.now;
                self.pump(cx);
            }
            State::Established if !pkt.has_flag(tcp_flags::SYN) => self.on_ack(&pkt, cx),
            _ => {}
        }
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        match timer.kind {
            TIMER_PACE if self.pace.on_expiry(timer, cx) => self.pump(cx),
            TIMER_RTO if self.rto.on_expiry(timer, cx) => self.on_timeout(cx),
            _ => {}
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct AssistedReceiverStats {
    /// Bytes delivered, packets received and completion, as every transfer counts them.
    pub delivery: DeliveryCounts,
}

/// Reassembles, ACKs every packet at once, and echoes stamps.
pub struct AssistedReceiver {
    conn: Connection,
    rcv_nxt: u64,
    held: FrontVec<(u64, u64)>,
    expected: Option<u64>,
    pub stats: AssistedReceiverStats,
}

impl AssistedReceiver {
    pub fn new(conn: Connection, expected: Option<u64>) -> Self {
        AssistedReceiver {
            conn,
            rcv_nxt: FIRST_DATA_SEQ,
            held: FrontVec::default(),
            expected,
            stats: Default::default(),
        }
    }

    fn reply(&self, pkt: &Packet, flags: u8, cx: &mut AgentCx<impl Host>) {
        let (echo, rate, queue) = if pkt.has_flag(RATE_REQUEST) { (RATE_ECHO, pkt.window, pkt.ack) } else { (0, 0, 0) };
        cx.send(packet(&self.conn, queue, self.rcv_nxt, 0, flags | echo, rate));
    }

    fn on_data(&mut self, pkt: &Packet, now: Time) {
        self.stats.delivery.packets_received += 1;
        let (start, end) = (pkt.seq, pkt.seq + pkt.payload as u64);
        crate::ranges::insert(&mut self.held, start, end);
        let before = self.rcv_nxt;
        self.rcv_nxt = crate::ranges::advance(&mut self.held, before);
        self.stats.delivery.delivered(self.rcv_nxt - before, self.expected, now);
    }
}

impl Endpoint for AssistedReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    /// It arms no timer.
    fn is_quiescent(&self) -> bool {
        true
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(tcp_flags::SYN) {
            return self.reply(&pkt, tcp_flags::SYN | tcp_flags::ACK, cx);
        }
        if pkt.payload > 0 {
            self.on_data(&pkt, cx.now);
        }
        self.reply(&pkt, tcp_flags::ACK, cx);
    }
    fn on_timer(&mut self, _timer: Timer, _cx: &mut AgentCx<impl Host>) {}
}

/// A flow of the router-assisted ideal (PCP's "fair queueing" baseline): it sends at the fair
/// rate that advertising routers (`fq` with `advertise_rate`) stamp into its requests.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssistedFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    /// Transfer size; unlimited when absent.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    #[serde(default)]
    pub start: Dur,
    #[serde(default)]
    pub assisted: AssistedConfig,
}

impl TransportSpec for AssistedFlowSpec {
    crate::transport::common_flow_keys!();
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        self.assisted.validate().map_err(|e| e.within("assisted"))?;
        cx.check_path(None)?;
        cx.check_return_path()?;
        let bytes = self.bytes.map(|b| b.0);
        let (forward, backward) = cx.connections();
        Ok(BuiltFlow {
            sender: Agent::AssistedSender(Box::new(AssistedSender::new(forward, self.assisted.clone(), bytes))),
            receiver: Agent::AssistedReceiver(Box::new(AssistedReceiver::new(backward, bytes))),
            cc: "",
            bytes,
            telemetry: None,
        })
    }
}

/// The assisted ideal has no window either: `final_cwnd_bytes` is its rate times srtt.
impl FlowReport for AssistedSender {
    type Receiver = AssistedReceiver;
    fn report(&self, rx: &AssistedReceiver, r: &mut FlowRow) {
        let cwnd = self.srtt().map_or(f64::NAN, |d| self.rate().bytes_in(d));
        r.fill_transfer(&self.stats.sent, &rx.stats.delivery, self.srtt(), cwnd);
    }
}
