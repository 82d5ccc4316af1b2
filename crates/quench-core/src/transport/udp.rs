//! UDP sources and sinks. A source sends datagrams from `start` to `stop` with constant
//! spacing (CBR) or exponential spacing (Poisson), at a mean rate given in bit/s of IP
//! datagrams, with a fixed or distributed payload size. The sink counts what arrives and
//! measures one-way delay.
//! Owns the source's schedule and random draws and the sink's counts. Both act only through their
//! `AgentCx`, never on the world.

use crate::dist::{Bounds, Sampler, Size};
use crate::error::ConfigError;
use crate::limits;
use crate::packet::{ecn, AgentId, FlowId, NodeId, Packet, Proto, IP_HEADER, UDP_HEADER};
use crate::rng::{Rng, StreamKind};
use crate::transport::{
    Agent, AgentCx, BuiltFlow, Endpoint, FlowBuild, FlowReport, FlowRow, Host, Timer, TimerSlot, TransportSpec,
};
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};

const TIMER_NEXT_DATAGRAM: u8 = 0;
/// The largest UDP payload of an IPv4 datagram (65535 − 20 − 8).
const MAX_UDP_PAYLOAD: u64 = 65_507;

/// The ECN codepoint a UDP source puts on its datagrams (RFC 3168 section 5; ECT(1) is the
/// L4S identifier of RFC 9331 section 4.1). An open-loop source ignores marks: this only
/// says which queue and which marking rules its datagrams meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UdpEcn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
}

impl UdpEcn {
    pub fn codepoint(self) -> u8 {
        match self {
            UdpEcn::NotEct => ecn::NOT_ECT,
            UdpEcn::Ect0 => ecn::ECT0,
            UdpEcn::Ect1 => ecn::ECT1,
        }
    }
}

/// Inter-departure pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Cbr,
    Poisson,
}

/// The payloads a UDP source may draw: at least a byte, at most the largest UDP payload
/// (an unbounded distribution's tail is cut there; a table reaching beyond it is refused).
pub const PAYLOAD_BOUNDS: Bounds = Bounds { min: 1, max: MAX_UDP_PAYLOAD, what: "UDP payload" };

pub struct UdpSource {
    flow: FlowId,
    node: NodeId,
    dst: NodeId,
    peer: AgentId,
    pattern: Pattern,
    size: Sampler,
    /// Mean time between datagrams, in seconds.
    mean_gap: f64,
    stop: Time,
    /// The ECN codepoint of every datagram.
    ecn: u8,
    rng: Rng,
    next: TimerSlot,
    seq: u64,
    pub sent_packets: u64,
    pub sent_bytes: u64,
}

pub struct UdpSourceParams {
    pub flow: FlowId,
    pub node: NodeId,
    pub dst: NodeId,
    pub peer: AgentId,
    pub pattern: Pattern,
    pub rate: BitRate,
    pub size: Size,
    pub stop: Time,
    pub ecn: UdpEcn,
}

impl UdpSource {
    pub fn new(p: UdpSourceParams, rng: Rng) -> Self {
        let mean_datagram_bits = (p.size.mean() + (IP_HEADER + UDP_HEADER) as f64) * 8.0;
        UdpSource {
            flow: p.flow,
            node: p.node,
            dst: p.dst,
            peer: p.peer,
            pattern: p.pattern,
            mean_gap: mean_datagram_bits / p.rate.0 as f64,
            size: p.size.sampler(PAYLOAD_BOUNDS),
            stop: p.stop,
            ecn: p.ecn.codepoint(),
            rng,
            next: TimerSlot::default(),
            seq: 0,
            sent_packets: 0,
            sent_bytes: 0,
        }
    }

    fn gap(&mut self) -> Dur {
        match self.pattern {
            Pattern::Cbr => Dur::from_secs_f64(self.mean_gap),
            Pattern::Poisson => Dur::from_secs_f64(self.rng.exponential(self.mean_gap)),
        }
    }

    fn send_one(&mut self, cx: &mut AgentCx<impl Host>) {
        let payload = self.size.draw(&mut self.rng) as u32;
        let pkt = Packet {
            uid: 0,
            seq: self.seq,
            ack: 0,
            sent_at: cx.now,
            enqueued_at: cx.now,
            src: self.node,
            dst: self.dst,
            flow: self.flow,
            dst_agent: self.peer,
            size: (IP_HEADER + UDP_HEADER + payload) as u16,
            payload: payload as u16,
            window: 0,
            proto: Proto::Udp,
            flags: 0,
            ecn: self.ecn,
            sack: Default::default(),
            frag: Default::default(),
            ts_on: false,
            ts_ecr: 0,
        };
        self.seq += 1;
        self.sent_packets += 1;
        self.sent_bytes += payload as u64;
        cx.send(pkt);
    }

    fn schedule_next(&mut self, cx: &mut AgentCx<impl Host>) {
        let at = cx.now + self.gap();
        if at < self.stop {
            self.next.arm(TIMER_NEXT_DATAGRAM, at, cx);
        }
    }
}

impl Endpoint for UdpSource {
    fn node(&self) -> NodeId {
        self.node
    }
    fn is_quiescent(&self) -> bool {
        !self.next.is_armed()
    }
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        if cx.now < self.stop {
            self.send_one(cx);
            self.schedule_next(cx);
        }
    }
    fn on_packet(&mut self, _pkt: Packet, _cx: &mut AgentCx<impl Host>) {}
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if self.next.on_expiry(timer, cx) {
            self.send_one(cx);
            self.schedule_next(cx);
        }
    }
}

#[derive(Default)]
pub struct UdpSink {
    pub node: NodeId,
    pub received_packets: u64,
    pub received_bytes: u64,
    pub delay_sum: Dur,
    pub delay_max: Dur,
    pub first_arrival: Option<Time>,
    pub last_arrival: Option<Time>,
}

impl Endpoint for UdpSink {
    fn node(&self) -> NodeId {
        self.node
    }
    /// It arms no timer.
    fn is_quiescent(&self) -> bool {
        true
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        let delay = cx.now - pkt.sent_at;
        self.received_packets += 1;
        self.received_bytes += pkt.payload as u64;
        self.delay_sum = self.delay_sum + delay;
        self.delay_max = self.delay_max.max(delay);
        self.first_arrival.get_or_insert(cx.now);
        self.last_arrival = Some(cx.now);
    }
    fn on_timer(&mut self, _timer: Timer, _cx: &mut AgentCx<impl Host>) {}
}

/// Payload size of a UDP flow that names none (an arbitrary round default).
const DEFAULT_UDP_PAYLOAD: Bytes = Bytes(1000);

/// A UDP stream at a mean rate in bit/s of IP datagrams.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    #[serde(default = "default_pattern")]
    pub pattern: Pattern,
    pub rate: BitRate,
    /// Payload size: "1000B", or a distribution (`dist.rs`: { dist = "uniform", min, max },
    /// { dist = "exponential", mean }, { dist = "empirical", cdf }, ...), drawn per datagram.
    #[serde(default = "default_payload")]
    pub size: Size,
    #[serde(default)]
    pub start: Dur,
    /// When the source stops; the end of the run when absent.
    #[serde(default)]
    pub stop: Option<Dur>,
    /// ECN codepoint of the datagrams: "not_ect" (default), "ect0" or "ect1".
    #[serde(default)]
    pub ecn: UdpEcn,
}

fn default_pattern() -> Pattern {
    Pattern::Cbr
}
fn default_payload() -> Size {
    Size::Fixed(DEFAULT_UDP_PAYLOAD)
}

impl TransportSpec for UdpFlowSpec {
    crate::transport::common_flow_keys!();
    fn validate(&self) -> Result<(), ConfigError> {
        if self.rate.0 == 0 {
            return Err(ConfigError::new("rate", "must be positive"));
        }
        self.size.validate(PAYLOAD_BOUNDS).map_err(|e| e.within("size"))?;
        // The gap between datagrams is their wire size over the rate, in whole nanoseconds: a
        // gap that rounds to 0 ns would send forever without time advancing.
        let smallest = Bytes(self.size.smallest(PAYLOAD_BOUNDS).0 + (IP_HEADER + UDP_HEADER) as u64);
        if let Some(why) = limits::too_fast_for_nanoseconds(self.rate, smallest, "the smallest datagram") {
            return Err(ConfigError::new("rate", why));
        }
        if self.stop.is_some_and(|s| s <= self.start) {
            return Err(ConfigError::new("stop", "must be after start"));
        }
        Ok(())
    }
    /// The mean rate over the mean datagram (payload and headers) for as long as it sends.
    fn expected_packets(&self, end: Dur) -> f64 {
        let stop = self.stop.map_or(end, |s| s.min(end));
        let seconds = Dur(stop.0.saturating_sub(self.start.0)).as_secs_f64();
        let datagram_bits = (self.size.mean() + (IP_HEADER + UDP_HEADER) as f64) * 8.0;
        self.rate.0 as f64 / datagram_bits * seconds
    }
    /// No acknowledgements, so only the forward path must exist.
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        cx.check_path(None)?;
        let params = UdpSourceParams {
            flow: cx.id,
            node: cx.src,
            dst: cx.dst,
            peer: cx.receiver,
            pattern: self.pattern,
            rate: self.rate,
            size: self.size.clone(),
            stop: self.stop.map_or(cx.end, |s| Time::ZERO + s),
            ecn: self.ecn,
        };
        let rng = Rng::stream(cx.seed, StreamKind::Agent, cx.sender.0 as u64);
        Ok(BuiltFlow {
            sender: Agent::UdpSource(Box::new(UdpSource::new(params, rng))),
            receiver: Agent::UdpSink(Box::new(UdpSink { node: cx.dst, ..Default::default() })),
            cc: "",
            bytes: None,
            telemetry: None,
        })
    }
}

impl FlowReport for UdpSource {
    type Receiver = UdpSink;
    fn report(&self, k: &UdpSink, r: &mut FlowRow) {
        r.bytes_sent = self.sent_bytes;
        r.bytes_delivered = k.received_bytes;
        r.packets_sent = self.sent_packets;
        r.segments_sent = self.sent_packets;
        r.packets_received = k.received_packets;
        r.mean_delay_s = k.delay_sum.as_secs_f64() / k.received_packets as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(json: &str) -> Size {
        serde_json::from_str(json).unwrap()
    }

    /// Exponential payloads: whole bytes from 1 to the largest UDP payload, with the mean of
    /// the rounded distribution (the mean 1000 B within 20 B, 4σ over 40,000 draws).
    #[test]
    fn exponential_payloads_have_their_mean() {
        let sampler = size(r#"{"dist":"exponential","mean":"1000B"}"#).sampler(PAYLOAD_BOUNDS);
        let mut rng = Rng::from_seed(3);
        let d: Vec<u64> = (0..40_000).map(|_| sampler.draw(&mut rng)).collect();
        let mean = d.iter().sum::<u64>() as f64 / d.len() as f64;
        assert!((mean - 1000.0).abs() < 20.0, "{mean}");
        assert!(d.iter().all(|&x| (1..=MAX_UDP_PAYLOAD).contains(&x)));
        let zero = size(r#"{"dist":"exponential","mean":"0B"}"#);
        assert_eq!(zero.validate(PAYLOAD_BOUNDS).err().unwrap().path, "mean");
    }

    /// A table of flow sizes beyond a UDP payload is refused for datagrams, naming the key; a
    /// CDF of payloads within it is accepted.
    #[test]
    fn payload_tables_must_fit_a_datagram() {
        let e = size(r#"{"dist":"websearch"}"#).validate(PAYLOAD_BOUNDS).unwrap_err();
        assert_eq!(e.path, "dist");
        assert!(e.message.contains("65507"), "{e}");
        let ok = size(r#"{"dist":"empirical","cdf":[[64,0.5],[1472,1]]}"#);
        assert!(ok.validate(PAYLOAD_BOUNDS).is_ok());
        assert_eq!(ok.smallest(PAYLOAD_BOUNDS), Bytes(64));
    }
}
