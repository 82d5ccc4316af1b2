//! RoCEv2 reliable connection (RC) as a NIC runs it beneath DCQCN and HPCC: the transport of
//! the HPCC authors' simulator (alibaba-edu/High-Precision-Congestion-Control, `rdma-hw.cc`:
//! `GetNxtPacket`, `ReceiverCheckSeq`, `ReceiveUdp`, `ReceiveAck`, `RecoverQueue`,
//! `UpdateNextAvail`, `ChangeRate`; `rdma-queue-pair.cc`: `IsWinBound`), with the packet
//! layout of the InfiniBand Architecture Specification (IBTA vol. 1, chapter 9: BTH, AETH;
//! annex A17: RoCEv2 over UDP).
//!
//! Sender (requester): one packet sequence number (PSN) per packet of `mtu` payload bytes.
//! It sends the next PSN when the NIC's pacer allows, at the controller's rate: each packet
//! moves the next departure by its wire size's time at the rate (`UpdateNextAvail`), and a new
//! rate moves the pending departure by the difference of the last packet's times at the two
//! rates (`ChangeRate`). With `window`, it also holds sends while the bytes in flight and the
//! next packet's would exceed the controller's window (`IsWinBound`; the controllers set their
//! window for a sender that sends while a whole packet more fits, as TCP's). An ACK carries
//! the receiver's next expected PSN, cumulative; a NAK too, and the sender then goes back to it
//! and sends everything from there again (go-back-N, `RecoverQueue`: `snd_nxt = snd_una`).
//! Without progress for `rto` (the IBTA local ACK timeout, a fixed interval, not an RTT
//! estimate) it goes back to the oldest unacknowledged PSN as well.
//! Receiver (responder): in-order delivery only. The expected PSN is delivered and counted; an
//! ACK leaves after every `ack_interval` of them and after the transfer's last. A PSN beyond the
//! expected one is discarded, and answered with a NAK naming the expected PSN once until that
//! PSN arrives, or again after `nak_interval` (`ReceiverCheckSeq`: `m_lastNACK`,
//! `m_nackTimer`). A PSN below it (a duplicate) is discarded and answered with an ACK, so that
//! a sender whose ACK was lost does not time out for ever (IBTA 9.9.2: a responder
//! acknowledges duplicate requests; the reference simulator, over lossless fabrics only,
//! ignores them).
//! Congestion feedback: a data packet's CE mark is echoed on the next ACK or NAK (the
//! reference sets its ACK's CNP flag from the data's ECN bits); the controller turns echoes
//! into its own signal (DCQCN counts a CNP at most once per its `cnp_interval`, in
//! `cc/dcqcn.rs`: the one place that limits them). In-band telemetry rides on the data and
//! comes back on the ACKs (`telemetry.rs`), for HPCC. The controller gets one [`AckSample`] per
//! ACK or NAK, with a [`RateSample`] whose `total_delivered` (and `prior_delivered`) is the
//! cumulative ACK, so that HPCC's once-per-round update falls where the reference's
//! `HandleAckHp` puts it (an ACK beyond the `snd_nxt` of the last update). A NAK or a timeout
//! is no congestion signal to the controller (the reference has none; its fabric is lossless).
//!
//! Wire format: UDP (RoCEv2, destination port 4791); data packets carry their PSN in `seq`;
//! ACKs and NAKs carry the expected PSN in `seq` and `ack`; the flags of [`flags`].
//! Owns the RoCE sender's and receiver's state; acts only through its `AgentCx`.

use crate::cc::{AckSample, AnyCc, CcSpec, CongestionControl, PathFacts, RateSample, Window};
use crate::error::ConfigError;
use crate::packet::{ecn, NodeId, Packet, Proto};
use crate::transport::tcp::Connection;
use crate::transport::{
    Admission, Agent, AgentCx, BuiltFlow, DeliveryCounts, Endpoint, FlowBuild, FlowReport, FlowRow, Host, SendCounts,
    Timer, TimerSlot, TransportSpec,
};
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const TIMER_RTO: u8 = 0;
const TIMER_PACE: u8 = 1;
const TIMER_CC: u8 = 2;

/// The meaning of a RoCE packet's `flags` (the BTH opcode and the AETH syndrome, reduced).
pub mod flags {
    /// A data packet (an RDMA WRITE or SEND packet): `seq` is its PSN.
    pub const DATA: u8 = 0x01;
    /// An acknowledgement: `seq` is the next PSN expected, cumulative.
    pub const ACK: u8 = 0x02;
    /// A negative acknowledgement (AETH syndrome "PSN sequence error"): `seq` is the PSN
    /// expected, from which the sender goes back.
    pub const NAK: u8 = 0x04;
    /// The ACK or NAK echoes a CE mark on data that arrived since the previous one.
    pub const CE_ECHO: u8 = 0x08;
}

/// Bytes of a data packet besides its payload, as the IP total length counts them: IPv4 (20),
/// UDP (8), the base transport header (BTH, 12: IBTA vol. 1, 9.2) and the invariant CRC (4).
pub const DATA_HEADER_BYTES: u32 = 20 + 8 + 12 + 4;
/// An ACK or NAK: the data packet's headers and the ACK extended transport header (AETH, 4:
/// IBTA vol. 1, 9.3.4).
pub const ACK_BYTES: u32 = DATA_HEADER_BYTES + 4;
/// The reference simulator's payload per packet (`RdmaHw` attribute `Mtu`, 1000).
pub const DEFAULT_MTU: u32 = 1000;
/// IBTA's largest path MTU, 4096 bytes.
pub const MAX_MTU: u32 = 4096;
/// One ACK per packet (the reference's `ACK_INTERVAL` in its experiments' configuration).
pub const DEFAULT_ACK_INTERVAL: u32 = 1;
/// The largest `ack_interval` accepted: a NIC coalesces a few ACKs, not a window's worth.
pub const MAX_ACK_INTERVAL: u32 = 1024;
/// The reference's `NACK Generation Interval`, 500 µs.
pub const DEFAULT_NAK_INTERVAL: Dur = Dur::from_micros(500);
/// The IBTA local ACK timeout, 4.096 µs · 2^timeout, with the exponent 14 that the perftest
/// tools (`ib_write_bw`) and many NIC drivers default to: 67.1 ms.
pub const DEFAULT_RTO: Dur = Dur(4096 << 14);
/// The longest `rto` and `nak_interval` accepted: the local ACK timeout's largest exponent (31)
/// is hours, but a simulated run is seconds.
pub const MAX_INTERVAL: Dur = Dur::from_secs(60);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoceConfig {
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Packets delivered in order per ACK.
    pub ack_interval: u32,
    /// How long a receiver waits before it NAKs the same expected PSN again.
    pub nak_interval: Dur,
    /// The sender goes back to its oldest unacknowledged PSN after this long without progress.
    pub rto: Dur,
    /// Hold sends by the controller's window as well as by its rate.
    pub window: bool,
}

impl Default for RoceConfig {
    fn default() -> Self {
        RoceConfig {
            mtu: DEFAULT_MTU,
            ack_interval: DEFAULT_ACK_INTERVAL,
            nak_interval: DEFAULT_NAK_INTERVAL,
            rto: DEFAULT_RTO,
            window: true,
        }
    }
}

impl RoceConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mtu == 0 || self.mtu > MAX_MTU {
            return Err(ConfigError::new("mtu", format!("{} must be between 1 and {MAX_MTU}", self.mtu)));
        }
        if self.ack_interval == 0 || self.ack_interval > MAX_ACK_INTERVAL {
            let why = format!("{} must be between 1 and {MAX_ACK_INTERVAL} packets", self.ack_interval);
            return Err(ConfigError::new("ack_interval", why));
        }
        if self.nak_interval > MAX_INTERVAL {
            return Err(ConfigError::new("nak_interval", "must be at most 60s"));
        }
        if self.rto.is_zero() || self.rto > MAX_INTERVAL {
            return Err(ConfigError::new("rto", "must be positive and at most 60s"));
        }
        Ok(())
    }
}

/// A packet of this connection with `flags`, `seq` and `payload` bytes, and the
/// connection's shim (the telemetry header, after the transport headers as HPCC's NIC puts it).
fn packet(conn: &Connection, seq: u64, payload: u32, flags: u8) -> Packet {
    let mut p = conn.segment(seq, seq, payload, flags, 0);
    p.proto = Proto::Udp;
    let headers = if flags & flags::DATA != 0 { DATA_HEADER_BYTES + payload } else { ACK_BYTES };
    p.size = (headers + conn.shim as u32) as u16;
    p
}

#[derive(Clone, Debug, Default)]
pub struct RoceSenderStats {
    /// Packets, bytes, resent packets, timeouts and RTT samples, as every transfer counts them.
    pub sent: SendCounts,
    /// NAKs received: each a go-back-N.
    pub naks: u64,
    /// ACKs received (NAKs not counted).
    pub acks: u64,
}

/// A PSN sent and not yet acknowledged: when, and whether it was sent before (Karn's rule).
#[derive(Clone, Copy, Debug)]
struct Sent {
    at: Time,
    again: bool,
}

pub struct RoceSender {
    conn: Connection,
    cfg: RoceConfig,
    cc: AnyCc,
    w: Window,
    /// Transfer size in bytes and packets; unlimited when None.
    bytes: Option<u64>,
    packets: Option<u64>,
    /// The oldest unacknowledged PSN, the next to send, and one past the highest ever sent.
    snd_una: u64,
    snd_nxt: u64,
    high: u64,
    /// PSNs `snd_una..high`, in order.
    sent: VecDeque<Sent>,
    telemetry: bool,
    own_clock: bool,
    /// The pacer: the rate, the earliest next departure, and the last packet's size and start.
    rate: BitRate,
    next_avail: Time,
    last: Option<(Time, u32)>,
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: TimerSlot,
    pace: TimerSlot,
    clock: TimerSlot,
    pub stats: RoceSenderStats,
}

impl RoceSender {
    /// A sender of `bytes` (unlimited when None) driven by `cc`, starting at `line_rate`.
    pub fn new(conn: Connection, cfg: RoceConfig, cc: AnyCc, bytes: Option<u64>, line_rate: BitRate) -> Self {
        let caps = cc.capabilities();
        let mss = cfg.mtu as u64;
        let w =
            Window { cwnd: cc.initial_window(mss) * mss, ssthresh: u64::MAX, mss, flight: 0, peer_window: u64::MAX };
        RoceSender {
            conn,
            packets: bytes.map(|b| b.div_ceil(mss)),
            bytes,
            cfg,
            cc,
            w,
            snd_una: 0,
            snd_nxt: 0,
            high: 0,
            sent: VecDeque::new(),
            telemetry: caps.telemetry.is_some(),
            own_clock: caps.own_clock,
            rate: BitRate(line_rate.0.max(1)),
            next_avail: Time::ZERO,
            last: None,
            srtt: None,
            rttvar: Dur::ZERO,
            rto: TimerSlot::default(),
            pace: TimerSlot::default(),
            clock: TimerSlot::default(),
            stats: RoceSenderStats::default(),
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// The pacing rate now.
    pub fn rate(&self) -> BitRate {
        self.rate
    }

    fn finished(&self) -> bool {
        self.packets.is_some_and(|n| self.snd_una >= n)
    }

    /// Payload bytes of packet `psn`.
    fn payload(&self, psn: u64) -> u32 {
        let mtu = self.cfg.mtu as u64;
        self.bytes.map_or(mtu, |b| b.saturating_sub(psn * mtu).min(mtu)) as u32
    }

    /// Payload bytes of the PSNs below `psn`.
    fn bytes_before(&self, psn: u64) -> u64 {
        let upto = psn * self.cfg.mtu as u64;
        self.bytes.map_or(upto, |b| upto.min(b))
    }

    fn flight(&self) -> u64 {
        self.bytes_before(self.snd_nxt) - self.bytes_before(self.snd_una)
    }

    /// Send what the pacer and the window allow now; if the pacer holds the next packet, wake
    /// for it. A window-bound sender waits for an ACK.
    fn output(&mut self, cx: &mut AgentCx<impl Host>) {
        while self.packets.is_none_or(|n| self.snd_nxt < n) {
            let payload = self.payload(self.snd_nxt) as u64;
            if self.cfg.window && self.snd_nxt > self.snd_una && self.flight() + payload > self.w.cwnd {
                return;
            }
            if cx.now < self.next_avail {
                self.pace.arm(TIMER_PACE, self.next_avail, cx);
                return;
            }
            // The NIC takes the next packet only when the port can send it: none of this
            // flow's waits in the host's queue (a PFC pause holds it there).
            if cx.host_queued() > Bytes(0) {
                cx.wake_on_host_room();
                return;
            }
            if !self.send(self.snd_nxt, cx) {
                return;
            }
            self.snd_nxt += 1;
        }
    }

    /// Send `psn`; false if the host's queue refused it (other flows of the host filled it):
    /// the packet is kept, and offered again one packet time later.
    fn send(&mut self, psn: u64, cx: &mut AgentCx<impl Host>) -> bool {
        let payload = self.payload(psn);
        let mut p = packet(&self.conn, psn, payload, flags::DATA);
        // RoCEv2 NICs with congestion control mark their data ECN-capable.
        p.ecn = ecn::ECT0;
        let size = p.size as u32;
        if cx.send(p) == Admission::Refused {
            self.next_avail = cx.now + self.rate.tx_time(Bytes(size as u64));
            self.pace.arm(TIMER_PACE, self.next_avail, cx);
            return false;
        }
        let again = psn < self.high;
        self.stats.sent.sent(payload as u64, again);
        let record = Sent { at: cx.now, again };
        if again {
            self.sent[(psn - self.snd_una) as usize] = record;
        } else {
            self.sent.push_back(record);
            self.high = psn + 1;
        }
        self.last = Some((cx.now, size));
        self.next_avail = cx.now + self.rate.tx_time(Bytes(size as u64));
        if !self.rto.is_armed() {
            self.rto.arm(TIMER_RTO, cx.now + self.cfg.rto, cx);
        }
        true
    }

    /// A new rate from the controller: the pending departure moves by the last packet's time at
    /// the new rate less at the old (the reference's `ChangeRate`).
    fn set_rate(&mut self, rate: BitRate, cx: &mut AgentCx<impl Host>) {
        let rate = BitRate(rate.0.max(1));
        if rate == self.rate {
            return;
        }
        if let Some((at, size)) = self.last {
            self.next_avail = at + rate.tx_time(Bytes(size as u64));
        }
        self.rate = rate;
        if self.pace.is_armed() {
            self.pace.arm(TIMER_PACE, self.next_avail.max(cx.now), cx);
        }
    }

    /// RFC 6298's smoothed RTT, for the controller (DCQCN's window) and the flows table.
    fn rtt_sample(&mut self, sample: Dur, cx: &mut AgentCx<impl Host>) {
        self.stats.sent.rtt_sample(sample);
        let (srtt, rttvar) = match self.srtt {
            None => (sample, Dur(sample.0 / 2)),
            Some(s) => (Dur((7 * s.0 + sample.0) / 8), Dur((3 * self.rttvar.0 + s.0.abs_diff(sample.0)) / 4)),
        };
        (self.srtt, self.rttvar) = (Some(srtt), rttvar);
        let (now, rto) = (cx.now, self.cfg.rto);
        cx.rec().rtt(now, self.conn.flow, sample, srtt, rto);
    }

    /// An ACK or NAK naming `epsn` as the receiver's next expected PSN.
    fn on_feedback(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let epsn = pkt.seq.min(self.high);
        // A NAK below what an ACK already acknowledged was overtaken (paths that reorder):
        // going back for it would resend packets the receiver has.
        let stale = epsn < self.snd_una;
        let prior_inflight = self.flight();
        let mut acked = 0;
        let mut rtt = None;
        if epsn > self.snd_una {
            let newest = self.sent[(epsn - 1 - self.snd_una) as usize];
            if !newest.again {
                rtt = Some(cx.now - newest.at);
                self.rtt_sample(cx.now - newest.at, cx);
            }
            acked = self.bytes_before(epsn) - self.bytes_before(self.snd_una);
            self.sent.drain(..(epsn - self.snd_una) as usize);
            self.snd_una = epsn;
            self.snd_nxt = self.snd_nxt.max(epsn);
            self.restart_rto(cx);
        }
        if pkt.has_flag(flags::NAK) {
            self.stats.naks += 1;
            if !stale {
                // Go back: everything from the expected PSN is sent again.
                self.snd_nxt = self.snd_una;
            }
        } else {
            self.stats.acks += 1;
        }
        let ce = pkt.has_flag(flags::CE_ECHO);
        self.control(acked, rtt, ce, prior_inflight, pkt, cx);
        if self.finished() {
            self.rto.cancel();
            self.pace.cancel();
            self.clock.cancel();
            return;
        }
        self.output(cx);
    }

    /// The timeout runs from the last progress while any PSN is unacknowledged.
    fn restart_rto(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.high > self.snd_una {
            self.rto.arm(TIMER_RTO, cx.now + self.cfg.rto, cx);
        } else {
            self.rto.cancel();
        }
    }

    /// The controller's turn on one ACK or NAK. A CE echo is the controller's congestion
    /// notification even on feedback that acknowledges nothing new: its bytes then count as
    /// one packet's.
    fn control(
        &mut self,
        acked: u64,
        rtt: Option<Dur>,
        ce: bool,
        prior_inflight: u64,
        pkt: &Packet,
        cx: &mut AgentCx<impl Host>,
    ) {
        let delivered = self.bytes_before(self.snd_una);
        self.w.flight = self.flight();
        let rs = RateSample {
            now: cx.now,
            delivered: acked,
            prior_delivered: delivered,
            total_delivered: delivered,
            acked_sacked: acked,
            rtt,
            inflight: self.w.flight,
            prior_inflight,
            srtt: self.srtt,
            ..RateSample::default()
        };
        let telemetry = if self.telemetry { cx.telemetry(pkt.uid) } else { None };
        let sample = AckSample {
            now: cx.now,
            acked,
            rtt,
            srtt: self.srtt,
            ece_bytes: if ce { acked.max(self.w.mss) } else { 0 },
            ack_delay: None,
            rate: Some(&rs),
            telemetry: telemetry.as_ref(),
        };
        let out = self.cc.on_ack(&mut self.w, &sample);
        if let Some(rate) = out.pacing_rate {
            self.set_rate(rate, cx);
        }
        self.arm_clock(cx);
    }

    /// Wake at the controller's own clock's next change (DCQCN's rate timers).
    fn arm_clock(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.own_clock || self.finished() {
            return;
        }
        match self.cc.wake_at() {
            Some(at) => self.clock.arm(TIMER_CC, at.max(cx.now), cx),
            None => self.clock.cancel(),
        }
    }

    fn on_clock(&mut self, cx: &mut AgentCx<impl Host>) {
        self.w.flight = self.flight();
        let out = self.cc.on_wake(&mut self.w, cx.now);
        if let Some(rate) = out.pacing_rate {
            self.set_rate(rate, cx);
        }
        self.arm_clock(cx);
        self.output(cx);
    }

    /// No progress for `rto`: go back to the oldest unacknowledged PSN.
    fn on_timeout(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.high <= self.snd_una {
            return;
        }
        self.stats.sent.timeouts += 1;
        self.snd_nxt = self.snd_una;
        self.rto.arm(TIMER_RTO, cx.now + self.cfg.rto, cx);
        self.output(cx);
    }
}

impl Endpoint for RoceSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.rto.is_armed() && !self.pace.is_armed() && !self.clock.is_armed()
    }
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        cx.count_host_queue();
        self.output(cx);
    }
    fn on_host_room(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.finished() {
            self.output(cx);
        }
    }
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(flags::ACK) || pkt.has_flag(flags::NAK) {
            self.on_feedback(&pkt, cx);
        }
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        match timer.kind {
            TIMER_RTO if self.rto.on_expiry(timer, cx) => self.on_timeout(cx),
            TIMER_PACE if self.pace.on_expiry(timer, cx) => self.output(cx),
            TIMER_CC if self.clock.on_expiry(timer, cx) => self.on_clock(cx),
            _ => {}
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct RoceReceiverStats {
    /// Bytes delivered, data packets received and completion, as every transfer counts them.
    pub delivery: DeliveryCounts,
    /// Packets beyond the expected PSN, discarded.
    pub out_of_order: u64,
    /// Packets below the expected PSN, discarded.
    pub duplicates: u64,
    pub acks_sent: u64,
    pub naks_sent: u64,
}

pub struct RoceReceiver {
    conn: Connection,
    ack_interval: u32,
    nak_interval: Dur,
    bytes: Option<u64>,
    packets: Option<u64>,
    /// The next PSN expected (the reference's `ReceiverNextExpectedSeq`).
    epsn: u64,
    /// In-order packets since the last ACK.
    unacked: u32,
    /// A CE mark arrived since the last ACK or NAK.
    ce: bool,
    /// The expected PSN last NAKed, and when (`m_lastNACK`, `m_nackTimer`).
    last_nak: Option<(u64, Time)>,
    pub stats: RoceReceiverStats,
}

impl RoceReceiver {
    pub fn new(conn: Connection, cfg: &RoceConfig, bytes: Option<u64>) -> Self {
        RoceReceiver {
            conn,
            ack_interval: cfg.ack_interval,
            nak_interval: cfg.nak_interval,
            packets: bytes.map(|b| b.div_ceil(cfg.mtu as u64)),
            bytes,
            epsn: 0,
            unacked: 0,
            ce: false,
            last_nak: None,
            stats: RoceReceiverStats::default(),
        }
    }

    fn reply(&mut self, kind: u8, cx: &mut AgentCx<impl Host>) {
        let echo = if std::mem::take(&mut self.ce) { flags::CE_ECHO } else { 0 };
        cx.send(packet(&self.conn, self.epsn, 0, kind | echo));
        self.unacked = 0;
        if kind == flags::NAK {
            self.stats.naks_sent += 1;
        } else {
            self.stats.acks_sent += 1;
        }
    }

    fn on_data(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.stats.delivery.packets_received += 1;
        self.ce |= pkt.ecn == ecn::CE;
        if pkt.seq == self.epsn {
            self.epsn += 1;
            self.unacked += 1;
            self.stats.delivery.delivered(pkt.payload as u64, self.bytes, cx.now);
            if self.unacked >= self.ack_interval || self.packets == Some(self.epsn) {
                self.reply(flags::ACK, cx);
            }
        } else if pkt.seq > self.epsn {
            self.stats.out_of_order += 1;
            let again = self.last_nak.is_none_or(|(psn, at)| psn != self.epsn || cx.now >= at + self.nak_interval);
            if again {
                self.last_nak = Some((self.epsn, cx.now));
                self.reply(flags::NAK, cx);
            }
        } else {
            self.stats.duplicates += 1;
            self.reply(flags::ACK, cx);
        }
    }
}

impl Endpoint for RoceReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        true
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(flags::DATA) {
            self.on_data(&pkt, cx);
        }
    }
    fn on_timer(&mut self, _timer: Timer, _cx: &mut AgentCx<impl Host>) {}
}

/// A RoCE transfer: `{ kind = "roce", src, dst, bytes, cc = "dcqcn", roce = { mtu = 1000 } }`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoceFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    /// Transfer size; unlimited when absent.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    #[serde(default)]
    pub start: Dur,
    /// The NIC's congestion controller: "dcqcn" (the default) or "hpcc".
    #[serde(default = "default_cc", deserialize_with = "crate::cc::deserialize_cc")]
    pub cc: CcSpec,
    #[serde(default)]
    pub roce: RoceConfig,
}

fn default_cc() -> CcSpec {
    CcSpec::Dcqcn(Default::default())
}

/// The controllers a RoCE NIC runs: rate-based, from ECN echoes or telemetry.
const CONTROLLERS: [&str; 2] = ["dcqcn", "hpcc"];

impl TransportSpec for RoceFlowSpec {
    crate::transport::common_flow_keys!();
    fn validate(&self) -> Result<(), ConfigError> {
        if !CONTROLLERS.contains(&self.cc.kind()) {
            let why = format!("`{}` is not a RoCE NIC's controller: expected `dcqcn` or `hpcc`", self.cc.kind());
            return Err(ConfigError::new("cc", why));
        }
        self.roce.validate().map_err(|e| e.within("roce"))
    }
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        let mut cc = self.cc.build().map_err(|e| e.within("cc"))?;
        let caps = cc.capabilities();
        let shim = caps.telemetry.map_or(0, |h| h.wire_bytes());
        let path: PathFacts =
            cx.path_facts((DATA_HEADER_BYTES + shim + self.roce.mtu) as u64, (ACK_BYTES + shim) as u64);
        cc.take_path(&path);
        cx.check_path(None)?;
        cx.check_return_path()?;
        let bytes = self.bytes.map(|b| b.0);
        let (forward, backward) = cx.connections_with_shim(shim);
        let sender = RoceSender::new(forward, self.roce.clone(), cc, bytes, path.line_rate);
        Ok(BuiltFlow {
            sender: Agent::RoceSender(Box::new(sender)),
            receiver: Agent::RoceReceiver(Box::new(RoceReceiver::new(backward, &self.roce, bytes))),
            cc: self.cc.kind(),
            bytes,
            telemetry: caps.telemetry,
        })
    }
}

/// The flows table's `fast_retransmits` counts the NAKs (each a go-back-N),
/// `reordered_segments` the packets the receiver discarded beyond a gap and
/// `duplicate_segments` those below it; `final_cwnd_bytes` is the controller's window.
impl FlowReport for RoceSender {
    type Receiver = RoceReceiver;
    fn report(&self, rx: &RoceReceiver, r: &mut FlowRow) {
        r.fill_transfer(&self.stats.sent, &rx.stats.delivery, self.srtt(), self.w.cwnd as f64);
        r.fast_retransmits = self.stats.naks;
        r.reordered_segments = rx.stats.out_of_order;
        r.duplicate_segments = rx.stats.duplicates;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::dcqcn::DcqcnConfig;
    use crate::packet::AgentId;
    use crate::trace::Recorder;
    use crate::transport::ScriptedHost;

    const GBPS: BitRate = BitRate(1_000_000_000);

    fn conn() -> Connection {
        Connection::for_tests(0, 1)
    }

    fn at(host: &mut ScriptedHost, t: u64) -> AgentCx<'_, ScriptedHost> {
        host.now = Time(t);
        AgentCx::new(Time(t), AgentId(0), NodeId(0), host)
    }

    fn sender(bytes: u64, cfg: RoceConfig) -> RoceSender {
        let cc = CcSpec::Dcqcn(DcqcnConfig { line_rate: Some(GBPS), ..Default::default() }).build().unwrap();
        RoceSender::new(conn(), cfg, cc, Some(bytes), GBPS)
    }

    fn psns(h: &ScriptedHost) -> Vec<u64> {
        h.sent.iter().map(|p| p.seq).collect()
    }

    /// 1044-byte packets at 1 Gb/s leave 8352 ns apart: the first at once, the next when the
    /// pacer's timer comes due and the host's queue holds none of the flow's packets.
    #[test]
    fn sender_paces_wire_bytes_at_the_rate() {
        let mut s = sender(3000, RoceConfig::default());
        let mut host = ScriptedHost::new(Recorder::default());
        s.on_start(&mut at(&mut host, 0));
        assert_eq!(psns(&host), vec![0]);
        assert_eq!(host.sent[0].size as u32, DATA_HEADER_BYTES + 1000);
        assert_eq!(host.sent[0].ecn, ecn::ECT0);
        let (due, timer) = *host.timers.iter().find(|(_, t)| t.kind == TIMER_PACE).unwrap();
        assert_eq!(due, Time(8352));
        // PSN 0 still waits in the host's queue: the NIC holds PSN 1 until it leaves.
        s.on_timer(timer, &mut at(&mut host, due.0));
        assert_eq!((psns(&host), host.wants_room), (vec![0], true));
        host.queued = Some(0);
        s.on_host_room(&mut at(&mut host, due.0 + 1));
        assert_eq!(psns(&host), vec![0, 1]);
    }

    /// A NAK naming PSN 1 after PSNs 0..4 were sent acknowledges PSN 0 and sends 1, 2, 3 again.
    #[test]
    fn a_nak_goes_back_to_the_psn_it_names() {
        let mut s = sender(4000, RoceConfig::default());
        let mut host = ScriptedHost::new(Recorder::default());
        for k in 0..4 {
            s.output(&mut at(&mut host, 10_000 * k));
        }
        assert_eq!(psns(&host), vec![0, 1, 2, 3]);
        let nak = packet(&conn(), 1, 0, flags::NAK);
        s.on_packet(nak, &mut at(&mut host, 50_000));
        for k in 6..9 {
            s.output(&mut at(&mut host, 10_000 * k));
        }
        assert_eq!(psns(&host), vec![0, 1, 2, 3, 1, 2, 3]);
        assert_eq!((s.stats.naks, s.stats.sent.retransmitted_segments), (1, 3));
        assert_eq!(s.snd_una, 1);
        // An ACK for PSN 3, then a NAK for PSN 2 that it overtook: no second go-back.
        s.on_packet(packet(&conn(), 3, 0, flags::ACK), &mut at(&mut host, 90_000));
        s.on_packet(packet(&conn(), 2, 0, flags::NAK), &mut at(&mut host, 91_000));
        assert_eq!((s.snd_una, s.snd_nxt, s.stats.naks), (3, 4, 2));
    }

    /// The receiver discards PSN 2 and 3 after a gap at 1, NAKs once for 1, and ACKs again in
    /// order once 1 arrives; a CE mark is echoed on the next reply only.
    #[test]
    fn receiver_naks_once_per_gap_and_echoes_ce() {
        let mut r = RoceReceiver::new(conn(), &RoceConfig::default(), Some(4000));
        let mut host = ScriptedHost::new(Recorder::default());
        let data = |psn: u64, ce: bool| {
            let mut p = packet(&conn(), psn, 1000, flags::DATA);
            p.ecn = if ce { ecn::CE } else { ecn::ECT0 };
            p
        };
        for (t, psn, ce) in [(1, 0, false), (2, 2, true), (3, 3, false), (4, 1, false), (5, 2, false), (6, 3, false)] {
            r.on_packet(data(psn, ce), &mut at(&mut host, t));
        }
        let replies: Vec<(u8, u64)> = host.sent.iter().map(|p| (p.flags, p.seq)).collect();
        let nak_ce = flags::NAK | flags::CE_ECHO;
        assert_eq!(replies, vec![(flags::ACK, 1), (nak_ce, 1), (flags::ACK, 2), (flags::ACK, 3), (flags::ACK, 4)]);
        assert_eq!((r.stats.out_of_order, r.stats.naks_sent), (2, 1));
        assert_eq!(r.stats.delivery.completed, Some(Time(6)));
        assert!(host.sent.iter().all(|p| p.size as u32 == ACK_BYTES));
    }

    /// Every key outside its range is refused, naming the key.
    #[test]
    fn bad_keys_are_named() {
        let bad = [
            ("mtu", RoceConfig { mtu: 0, ..Default::default() }),
            ("mtu", RoceConfig { mtu: 4097, ..Default::default() }),
            ("ack_interval", RoceConfig { ack_interval: 0, ..Default::default() }),
            ("nak_interval", RoceConfig { nak_interval: Dur::from_secs(61), ..Default::default() }),
            ("rto", RoceConfig { rto: Dur::ZERO, ..Default::default() }),
        ];
        for (key, cfg) in bad {
            assert_eq!(cfg.validate().unwrap_err().path, key);
        }
        assert!(RoceConfig::default().validate().is_ok());
    }
}
