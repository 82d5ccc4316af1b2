//! NDP: the receiver-driven transport of Handley, Raiciu, Agache, Voinescu, Moore, Antichi and
//! Wojcik, "Re-architecting datacenter networks and stacks for low latency and high
//! performance" (SIGCOMM 2017), as htsim models it (sim/ndp.cpp). It relies on switches that
//! trim rather than drop (`qdisc/trim.rs`) and on per-packet spraying across the fabric's
//! paths (the routing policy `spray`, a property of the network, not of this module).
//!
//! Sender: no handshake; it sends `initial_window` packets at line rate at once, then one
//! packet per PULL: a packet NACKed (its payload was trimmed on the way) first, else new data.
//! PULLs carry the flow's pull counter, cumulative, so the sender sends as many packets as the
//! counter advanced and a PULL lost is made up by the next (htsim's `pull_packets`). A packet
//! neither ACKed nor NACKed within the retransmission timeout (a header dropped, the rare
//! loss) is sent again at once.
//! Receiver: ACKs each data packet, NACKs each trimmed header, and for every arrival queues
//! one PULL. The PULLs of every NDP flow into one host leave through one pacer that spaces
//! them one full packet's transmission time apart at the receiver's access link rate, so that
//! the senders together send what that link carries (htsim's `NdpPullPacer`, one per host).
//! The pacer is the time its next PULL may leave, shared by the host's receivers
//! ([`FlowBuild::host_shared`]): each receiver keeps its own PULLs and their departure times.
//!
//! Wire format: IP protocol 254 (RFC 3692), the NDP bits of `packet::ndp`: data packets carry
//! their first byte's offset in `seq`; an ACK or NACK names the packet in `seq` and carries the
//! cumulative ACK in `ack`; a PULL carries the pull counter in `seq`. Every packet without
//! payload is `ndp::HEADER_BYTES` (64, htsim's) long.
//! Owns the NDP sender's and receiver's state; acts only through its `AgentCx`.

use crate::error::ConfigError;
use crate::packet::{ndp, NodeId, Packet, Proto};
use crate::ranges::FrontVec;
use crate::transport::tcp::Connection;
use crate::transport::{
    Agent, AgentCx, BuiltFlow, DeliveryCounts, Endpoint, FlowBuild, FlowReport, FlowRow, Host, SendCounts, Timer,
    TimerSlot, TransportSpec,
};
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

const TIMER_RTO: u8 = 0;
const TIMER_PULL: u8 = 1;

/// htsim's initial window: 15 packets (`NdpSrc`'s `_cwnd`, main_ndp.cpp's `-cwnd` default),
/// about a base RTT of data at 10 Gb/s in its fat tree.
pub const DEFAULT_INITIAL_WINDOW: u32 = 15;
/// Payload of a full packet: 1500 bytes on the wire with the 64-byte header.
pub const DEFAULT_MSS: u32 = 1500 - ndp::HEADER_BYTES;
/// htsim's retransmission timeout before any RTT sample (`NdpSrc`: `_rto = timeFromMs(20)`).
pub const INITIAL_RTO: Dur = Dur::from_millis(20);
/// htsim's floor on the timeout (`DEFAULT_RTO_MIN`, 5000 us, sim/ndp.h).
pub const DEFAULT_MIN_RTO: Dur = Dur::from_millis(5);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NdpConfig {
    /// Payload bytes per data packet.
    pub mss: u32,
    /// Packets sent at once when the flow starts, before any PULL.
    pub initial_window: u32,
    /// Smallest retransmission timeout (htsim's `_min_rto`).
    pub min_rto: Dur,
    /// Rate the receiver paces its PULLs at; the receiver's access link's when absent.
    pub pull_rate: Option<BitRate>,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            mss: DEFAULT_MSS,
            initial_window: DEFAULT_INITIAL_WINDOW,
            min_rto: DEFAULT_MIN_RTO,
            pull_rate: None,
        }
    }
}

impl NdpConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let max = u16::MAX as u32 - ndp::HEADER_BYTES;
        if self.mss == 0 || self.mss > max {
            return Err(ConfigError::new("mss", format!("{} must be between 1 and {max}", self.mss)));
        }
        if self.initial_window == 0 {
            return Err(ConfigError::new("initial_window", "must be at least 1 packet (nothing would start the flow)"));
        }
        if self.min_rto.is_zero() {
            return Err(ConfigError::new("min_rto", "must be positive"));
        }
        if self.pull_rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("pull_rate", "must be positive"));
        }
        Ok(())
    }
}

fn packet(conn: &Connection, seq: u64, ack: u64, payload: u32, flags: u8) -> Packet {
    let mut p = conn.segment(seq, ack, payload, flags, 0);
    p.proto = Proto::Ndp;
    p.size = (ndp::HEADER_BYTES + payload) as u16;
    p
}

#[derive(Clone, Debug, Default)]
pub struct NdpSenderStats {
    /// Packets, bytes, retransmissions, timeouts and RTT samples, as every transfer counts them.
    pub sent: SendCounts,
    /// NACKs received: each a packet trimmed on the way.
    pub nacks: u64,
    pub pulls: u64,
}

/// A packet sent and neither ACKed nor NACKed yet.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    sent_at: Time,
    retransmitted: bool,
}

pub struct NdpSender {
    conn: Connection,
    cfg: NdpConfig,
    /// One past the last byte; unlimited transfers have none.
    end: Option<u64>,
    next_new: u64,
    in_flight: BTreeMap<u64, InFlight>,
    /// Every send as (time, offset), in the order sent: the front entry still in flight with
    /// that send time is the oldest packet in flight (the others, ACKed, NACKed or sent again
    /// since, are dropped from the front as they reach it), so the timer's deadline costs no
    /// search of `in_flight`.
    sends: VecDeque<(Time, u64)>,
    /// NACKed packets, to send again at the next PULLs (lowest offset first, as htsim).
    nacked: BTreeSet<u64>,
    acked: FrontVec<(u64, u64)>,
    acked_to: u64,
    /// PULLs answered with a packet (htsim's `_last_pull`).
    pulled: u64,
    /// The highest pull counter received (htsim's `_max_pull`). Above `pulled` when a PULL found
    /// nothing to send: with packets sprayed, a trimmed packet's PULL can overtake its NACK on
    /// the way back, and the NACK then spends the PULL it is owed.
    max_pull: u64,
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: TimerSlot,
    pub stats: NdpSenderStats,
}

impl NdpSender {
    pub fn new(conn: Connection, cfg: NdpConfig, bytes: Option<u64>) -> Self {
        NdpSender {
            conn,
            cfg,
            end: bytes,
            next_new: 0,
            in_flight: BTreeMap::new(),
            sends: VecDeque::new(),
            nacked: BTreeSet::new(),
            acked: FrontVec::default(),
            acked_to: 0,
            pulled: 0,
            max_pull: 0,
            srtt: None,
            rttvar: Dur::ZERO,
            rto: TimerSlot::default(),
            stats: NdpSenderStats::default(),
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// RFC 6298's estimator, as htsim's `processAck` (srtt + 4·rttvar), floored at `min_rto`.
    fn rto_interval(&self) -> Dur {
        match self.srtt {
            None => INITIAL_RTO.max(self.cfg.min_rto),
            Some(s) => (s + Dur(4 * self.rttvar.0)).max(self.cfg.min_rto),
        }
    }

    fn payload_at(&self, seq: u64) -> u32 {
        self.end.map_or(self.cfg.mss as u64, |end| (end - seq).min(self.cfg.mss as u64)) as u32
    }

    fn send_data(&mut self, seq: u64, retransmit: bool, cx: &mut AgentCx<impl Host>) {
        let payload = self.payload_at(seq);
        cx.send(packet(&self.conn, seq, 0, payload, ndp::DATA));
        self.stats.sent.sent(payload as u64, retransmit);
        self.in_flight.insert(seq, InFlight { sent_at: cx.now, retransmitted: retransmit });
        self.sends.push_back((cx.now, seq));
        self.arm_rto(cx);
    }

    /// One packet for one PULL: a NACKed one first, else new data. False if none is left.
    fn send_one(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        if let Some(seq) = self.nacked.pop_first() {
            self.send_data(seq, true, cx);
            return true;
        }
        if self.end.is_some_and(|end| self.next_new >= end) {
            return false;
        }
        let seq = self.next_new;
        self.next_new += self.payload_at(seq) as u64;
        self.send_data(seq, false, cx);
        true
    }

    /// Whether packets wait to be sent: NACKed ones or new data.
    fn has_pending(&self) -> bool {
        !self.nacked.is_empty() || self.end.is_none_or(|end| self.next_new < end)
    }

    /// The timer runs for the oldest packet in flight's deadline; with none in flight but
    /// packets waiting, a timeout from now, in case the PULL that would release them was lost
    /// (a header queue full on the way back) and no arrival is left to send another.
    fn arm_rto(&mut self, cx: &mut AgentCx<impl Host>) {
        let oldest = self.oldest_send();
        debug_assert_eq!(oldest, self.in_flight.values().map(|f| f.sent_at).min());
        match oldest {
            Some(oldest) => self.rto.arm(TIMER_RTO, oldest + self.rto_interval(), cx),
            None if self.has_pending() => self.rto.arm(TIMER_RTO, cx.now + self.rto_interval(), cx),
            None => self.rto.cancel(),
        }
    }

    /// When the oldest packet in flight was sent.
    fn oldest_send(&mut self) -> Option<Time> {
        while let Some(&(at, seq)) = self.sends.front() {
            if self.in_flight.get(&seq).is_some_and(|f| f.sent_at == at) {
                return Some(at);
            }
            self.sends.pop_front();
        }
        None
    }

    fn on_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let Some(f) = self.in_flight.remove(&pkt.seq) else { return };
        if !f.retransmitted {
            self.rtt_sample(cx.now - f.sent_at, cx);
        }
        let end = pkt.seq + self.payload_at(pkt.seq) as u64;
        crate::ranges::insert(&mut self.acked, pkt.seq, end);
        self.acked_to = crate::ranges::advance(&mut self.acked, self.acked_to);
        self.arm_rto(cx);
    }

    fn rtt_sample(&mut self, sample: Dur, cx: &mut AgentCx<impl Host>) {
        self.stats.sent.rtt_sample(sample);
        let (srtt, rttvar) = match self.srtt {
            None => (sample, Dur(sample.0 / 2)),
            Some(s) => {
                let dev = s.0.abs_diff(sample.0);
                (Dur((7 * s.0 + sample.0) / 8), Dur((3 * self.rttvar.0 + dev) / 4))
            }
        };
        (self.srtt, self.rttvar) = (Some(srtt), rttvar);
        let (now, rto) = (cx.now, self.rto_interval());
        cx.rec().rtt(now, self.conn.flow, sample, srtt, rto);
    }

    fn on_nack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.stats.nacks += 1;
        if self.in_flight.remove(&pkt.seq).is_some() {
            self.nacked.insert(pkt.seq);
            self.arm_rto(cx);
            self.answer_pulls(cx);
        }
    }

    fn on_pull(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.stats.pulls += 1;
        self.max_pull = self.max_pull.max(pkt.seq);
        self.answer_pulls(cx);
    }

    /// One packet per PULL received and not yet answered; a PULL that finds nothing to send
    /// stays owed, as in htsim's `pull_packets` and `processNack`.
    fn answer_pulls(&mut self, cx: &mut AgentCx<impl Host>) {
        while self.pulled < self.max_pull && self.send_one(cx) {
            self.pulled += 1;
        }
    }

    /// Send again every packet in flight longer than the timeout; with none in flight, send
    /// one waiting packet as if a PULL had come (its ACK or NACK brings the receiver's PULLs
    /// back).
    fn on_timeout(&mut self, cx: &mut AgentCx<impl Host>) {
        self.stats.sent.timeouts += 1;
        let deadline = self.rto_interval();
        let late: Vec<u64> =
            self.in_flight.iter().filter(|(_, f)| cx.now - f.sent_at >= deadline).map(|(s, _)| *s).collect();
        if self.in_flight.is_empty() {
            self.send_one(cx);
        }
        for seq in late {
            self.send_data(seq, true, cx);
        }
        self.arm_rto(cx);
    }
}

impl Endpoint for NdpSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.rto.is_armed()
    }
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        for _ in 0..self.cfg.initial_window {
            if !self.send_one(cx) {
                break;
            }
        }
    }
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(ndp::ACK) {
            self.on_ack(&pkt, cx);
        } else if pkt.has_flag(ndp::NACK) {
            self.on_nack(&pkt, cx);
        } else if pkt.has_flag(ndp::PULL) {
            self.on_pull(&pkt, cx);
        }
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if timer.kind == TIMER_RTO && self.rto.on_expiry(timer, cx) {
            self.on_timeout(cx);
        }
    }
}

/// A host's pull pacer: when its next PULL may leave. Shared by every NDP receiver on the
/// host (one value per host, `FlowBuild::host_shared`); the run is single-threaded, so the
/// lock is never contended.
#[derive(Clone, Debug, Default)]
pub struct PullPacer(Arc<Mutex<Time>>);

impl PullPacer {
    /// Reserve the next departure at or after `now`; the one after waits `spacing` more.
    fn reserve(&self, now: Time, spacing: Dur) -> Time {
        let mut next_free = self.0.lock().expect("a pacer is never poisoned: the run is single-threaded");
        let at = (*next_free).max(now);
        *next_free = at + spacing;
        at
    }
}

#[derive(Clone, Debug, Default)]
pub struct NdpReceiverStats {
    /// Bytes delivered, whole data packets received and completion, as every transfer counts them.
    pub delivery: DeliveryCounts,
    /// Trimmed headers received (each NACKed).
    pub trimmed: u64,
    pub pulls_sent: u64,
}

pub struct NdpReceiver {
    conn: Connection,
    expected: Option<u64>,
    held: FrontVec<(u64, u64)>,
    rcv_nxt: u64,
    pacer: PullPacer,
    /// One full packet's time at the pull rate.
    pull_spacing: Dur,
    /// Departure times of this flow's PULLs waiting in the pacer, earliest first.
    pulls: VecDeque<Time>,
    pull_counter: u64,
    /// PULLs the flow needs beside its trims: its packets less the initial window (none for
    /// an unlimited transfer, which always needs more).
    pulls_needed: Option<u64>,
    /// PULLs queued so far (sent or waiting).
    pulls_queued: u64,
    timer: TimerSlot,
    pub stats: NdpReceiverStats,
}

impl NdpReceiver {
    /// A receiver of `expected` bytes (unlimited when None) from a sender of `cfg`, its PULLs
    /// spaced by `pull_spacing` in the host's `pacer`.
    pub fn new(conn: Connection, expected: Option<u64>, cfg: &NdpConfig, pacer: PullPacer, pull_spacing: Dur) -> Self {
        let packets = expected.map(|b| b.div_ceil(cfg.mss as u64));
        NdpReceiver {
            pulls_needed: packets.map(|p| p.saturating_sub(cfg.initial_window as u64)),
            pulls_queued: 0,
            conn,
            expected,
            held: FrontVec::default(),
            rcv_nxt: 0,
            pacer,
            pull_spacing,
            pulls: VecDeque::new(),
            pull_counter: 0,
            timer: TimerSlot::default(),
            stats: Default::default(),
        }
    }

    fn complete(&self) -> bool {
        self.stats.delivery.completed.is_some()
    }

    fn on_data(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(ndp::TRIMMED) {
            self.stats.trimmed += 1;
            cx.send(packet(&self.conn, pkt.seq, self.rcv_nxt, 0, ndp::NACK));
        } else {
            self.stats.delivery.packets_received += 1;
            crate::ranges::insert(&mut self.held, pkt.seq, pkt.seq + pkt.payload as u64);
            let before = self.rcv_nxt;
            self.rcv_nxt = crate::ranges::advance(&mut self.held, before);
            self.stats.delivery.delivered(self.rcv_nxt - before, self.expected, cx.now);
            cx.send(packet(&self.conn, pkt.seq, self.rcv_nxt, 0, ndp::ACK));
        }
        if self.pull_wanted() {
            self.queue_pull(cx);
        }
    }

    /// Whether the sender has a packet left for one more PULL: each trimmed packet must be sent
    /// again, and each packet beyond the initial window needs a PULL. A PULL more would hold a
    /// place in the host's pacer that another flow could use (htsim's pacer drops a finished
    /// flow's PULLs, `release_pulls`, to the same end).
    fn pull_wanted(&self) -> bool {
        !self.complete() && self.pulls_needed.is_none_or(|n| self.pulls_queued < n + self.stats.trimmed)
    }

    fn queue_pull(&mut self, cx: &mut AgentCx<impl Host>) {
        self.pulls_queued += 1;
        let at = self.pacer.reserve(cx.now, self.pull_spacing);
        if at <= cx.now && self.pulls.is_empty() {
            return self.send_pull(cx);
        }
        self.pulls.push_back(at);
        let first = self.pulls[0];
        self.timer.arm(TIMER_PULL, first, cx);
    }

    fn send_pull(&mut self, cx: &mut AgentCx<impl Host>) {
        self.pull_counter += 1;
        self.stats.pulls_sent += 1;
        cx.send(packet(&self.conn, self.pull_counter, self.rcv_nxt, 0, ndp::PULL));
    }

    /// Release the PULLs due now; a flow that completed meanwhile sends none.
    fn release_pulls(&mut self, cx: &mut AgentCx<impl Host>) {
        while self.pulls.front().is_some_and(|&at| at <= cx.now) {
            self.pulls.pop_front();
            if !self.complete() {
                self.send_pull(cx);
            }
        }
        if let Some(&next) = self.pulls.front() {
            self.timer.arm(TIMER_PULL, next, cx);
        }
    }
}

impl Endpoint for NdpReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.timer.is_armed()
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(ndp::DATA) {
            self.on_data(&pkt, cx);
        }
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if timer.kind == TIMER_PULL && self.timer.on_expiry(timer, cx) {
            self.release_pulls(cx);
        }
    }
}

/// An NDP transfer: `{ kind = "ndp", src, dst, bytes, ndp = { initial_window = 15 } }`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdpFlowSpec {
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
    pub ndp: NdpConfig,
}

impl TransportSpec for NdpFlowSpec {
    crate::transport::common_flow_keys!();
    fn validate(&self) -> Result<(), ConfigError> {
        self.ndp.validate().map_err(|e| e.within("ndp"))
    }
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        cx.check_path(None)?;
        cx.check_return_path()?;
        let pull_rate = self.ndp.pull_rate.or(cx.last_hop_rate()).expect("check_path found a route");
        let full_packet = Bytes((self.ndp.mss + ndp::HEADER_BYTES) as u64);
        let spacing = pull_rate.tx_time(full_packet);
        let pacer: PullPacer = cx.host_shared(cx.dst, PullPacer::default);
        let bytes = self.bytes.map(|b| b.0);
        let (forward, backward) = cx.connections();
        Ok(BuiltFlow {
            sender: Agent::NdpSender(Box::new(NdpSender::new(forward, self.ndp.clone(), bytes))),
            receiver: Agent::NdpReceiver(Box::new(NdpReceiver::new(backward, bytes, &self.ndp, pacer, spacing))),
            cc: "",
            bytes,
            telemetry: None,
        })
    }
}

/// NDP has no congestion window: `final_cwnd_bytes` is the initial window; the flows table's
/// `fast_retransmits` counts the NACKs (packets trimmed on the way and sent again at a PULL).
impl FlowReport for NdpSender {
    type Receiver = NdpReceiver;
    fn report(&self, rx: &NdpReceiver, r: &mut FlowRow) {
        let window = (self.cfg.initial_window * self.cfg.mss) as f64;
        r.fill_transfer(&self.stats.sent, &rx.stats.delivery, self.srtt(), window);
        r.fast_retransmits = self.stats.nacks;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::AgentId;
    use crate::trace::Recorder;
    use crate::transport::ScriptedHost;

    fn conn() -> Connection {
        Connection::for_tests(0, 1)
    }

    fn at(host: &mut ScriptedHost, t: u64) -> AgentCx<'_, ScriptedHost> {
        host.now = Time(t);
        AgentCx::new(Time(t), AgentId(0), NodeId(0), host)
    }

    fn reply(flags: u8, seq: u64) -> Packet {
        packet(&conn(), seq, 0, 0, flags)
    }

    /// The initial window goes out at once; a NACK's packet is resent at the next PULL before
    /// new data; a PULL whose counter jumps by two sends two packets.
    #[test]
    fn sender_serves_pulls_with_nacked_packets_first() {
        let cfg = NdpConfig { mss: 1000, initial_window: 3, ..NdpConfig::default() };
        let mut s = NdpSender::new(conn(), cfg, Some(10_000));
        let mut host = ScriptedHost::new(Recorder::default());
        s.on_start(&mut at(&mut host, 0));
        let seqs = |h: &ScriptedHost| h.sent.iter().map(|p| p.seq).collect::<Vec<_>>();
        assert_eq!(seqs(&host), vec![0, 1000, 2000]);
        assert!(host.sent.iter().all(|p| p.size == 1064 && p.proto == Proto::Ndp));
        s.on_packet(reply(ndp::NACK, 1000), &mut at(&mut host, 10));
        s.on_packet(reply(ndp::PULL, 1), &mut at(&mut host, 11));
        s.on_packet(reply(ndp::PULL, 3), &mut at(&mut host, 12));
        assert_eq!(seqs(&host), vec![0, 1000, 2000, 1000, 3000, 4000]);
        assert_eq!((s.stats.sent.retransmitted_segments, s.stats.nacks), (1, 1));
    }

    /// PULLs lost: the initial window is ACKed, no PULL comes, data is left. The timer, armed
    /// from the last ACK, sends one packet as a PULL would; with nothing left it stays off.
    #[test]
    fn sender_with_data_left_and_no_pull_sends_one_at_the_timeout() {
        let cfg = NdpConfig { mss: 1000, initial_window: 2, ..NdpConfig::default() };
        let mut s = NdpSender::new(conn(), cfg, Some(3000));
        let mut host = ScriptedHost::new(Recorder::default());
        s.on_start(&mut at(&mut host, 0));
        s.on_packet(reply(ndp::ACK, 0), &mut at(&mut host, 10_000));
        s.on_packet(reply(ndp::ACK, 1000), &mut at(&mut host, 10_000));
        assert!(s.rto.is_armed(), "2000..3000 is still to send");
        // The expiry queued for the window's deadline finds the later one and re-queues itself.
        let deadline = Time(10_000) + s.rto_interval();
        let (early, timer) = *host.timers.last().unwrap();
        s.on_timer(timer, &mut at(&mut host, early.0));
        assert_eq!(host.sent.len(), 2, "nothing sent before the deadline");
        let (due, timer) = *host.timers.last().unwrap();
        assert_eq!(due, deadline);
        s.on_timer(timer, &mut at(&mut host, due.0));
        assert_eq!(host.sent.last().map(|p| (p.seq, p.payload)), Some((2000, 1000)));
        assert_eq!(s.stats.sent.timeouts, 1);
        s.on_packet(reply(ndp::ACK, 2000), &mut at(&mut host, due.0 + 10_000));
        assert!(!s.rto.is_armed() && s.is_quiescent());
    }

    /// Sprayed, a trimmed packet's PULL can arrive before its NACK: the whole flow is in
    /// flight, so the PULL finds nothing to send; the NACK then resends the packet at once
    /// (htsim's `processNack` spends the owed PULL) instead of at the timeout.
    #[test]
    fn a_pull_that_overtakes_its_nack_is_spent_by_the_nack() {
        let cfg = NdpConfig { mss: 1000, initial_window: 3, ..NdpConfig::default() };
        let mut s = NdpSender::new(conn(), cfg, Some(3000));
        let mut host = ScriptedHost::new(Recorder::default());
        s.on_start(&mut at(&mut host, 0));
        s.on_packet(reply(ndp::PULL, 1), &mut at(&mut host, 10));
        assert_eq!(host.sent.len(), 3, "all 3 packets already sent: the PULL is owed");
        s.on_packet(reply(ndp::NACK, 1000), &mut at(&mut host, 11));
        assert_eq!(host.sent.last().map(|p| (p.seq, p.payload)), Some((1000, 1000)));
        assert_eq!((host.sent.len(), s.stats.sent.timeouts), (4, 0));
        // The owed PULL is spent: a second NACK waits for the next PULL.
        s.on_packet(reply(ndp::NACK, 2000), &mut at(&mut host, 12));
        assert_eq!(host.sent.len(), 4);
        s.on_packet(reply(ndp::PULL, 2), &mut at(&mut host, 13));
        assert_eq!(host.sent.last().map(|p| p.seq), Some(2000));
    }

    /// A receiver ACKs data, NACKs a trimmed header, and spaces its PULLs by the pacer.
    #[test]
    fn receiver_acks_nacks_and_paces_pulls() {
        let cfg = NdpConfig { mss: 1000, initial_window: 1, ..NdpConfig::default() };
        let mut r = NdpReceiver::new(conn(), Some(3000), &cfg, PullPacer::default(), Dur(1200));
        let mut host = ScriptedHost::new(Recorder::default());
        let data = |seq: u64, trimmed: bool| {
            let mut p = packet(&conn(), seq, 0, 1000, ndp::DATA);
            if trimmed {
                (p.flags, p.payload, p.size) = (ndp::DATA | ndp::TRIMMED, 0, 64);
            }
            p
        };
        r.on_packet(data(0, false), &mut at(&mut host, 100));
        r.on_packet(data(1000, true), &mut at(&mut host, 100));
        let kinds: Vec<(u8, u64)> = host.sent.iter().map(|p| (p.flags, p.seq)).collect();
        assert_eq!(kinds, vec![(ndp::ACK, 0), (ndp::PULL, 1), (ndp::NACK, 1000)]);
        assert_eq!(host.timers.last().map(|(t, _)| t.0), Some(1300), "second PULL one spacing later");
        r.on_timer(host.timers[0].1, &mut at(&mut host, 1300));
        assert_eq!(host.sent.last().map(|p| (p.flags, p.seq)), Some((ndp::PULL, 2)));
        assert_eq!(r.stats.trimmed, 1);
    }
}
