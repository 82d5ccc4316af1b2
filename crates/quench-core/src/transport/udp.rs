//! UDP sources and sinks. A source sends datagrams from `start` to `stop` with constant
//! spacing (CBR) or exponential spacing (Poisson), at a mean rate given in bit/s of IP
//! datagrams, with a fixed or distributed payload size. The sink counts what arrives and
//! measures one-way delay.

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

/// Datagram payload size: fixed, or drawn per datagram. Written out untagged; read by hand so
/// that a value of neither form gets a list of the accepted forms.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(Bytes),
    Drawn(SizeDistribution),
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::tagged::fixed_or_drawn(
            d,
            "a size such as \"1500B\", or a table {dist = \"uniform\", min = ..., max = ...}, \
             {dist = \"exponential\", mean = ...} or {dist = \"choice\", values = [...]}",
        )
        .map(|v| match v {
            Ok(b) => SizeSpec::Fixed(b),
            Err(dist) => SizeSpec::Drawn(dist),
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDistribution {
    /// Uniform on [min, max] bytes.
    Uniform { min: Bytes, max: Bytes },
    /// Exponential with this mean, rounded to whole bytes, at least 1 byte and at most the
    /// largest UDP payload (a tail beyond it, e^(−65507/mean), is cut there).
    Exponential { mean: Bytes },
    /// One of `values` with the given `weights` (equal when absent).
    Choice {
        values: Vec<Bytes>,
        #[serde(default)]
        weights: Vec<f64>,
    },
}

impl SizeSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |b: Bytes, path: &str| {
            if b.0 == 0 || b.0 > MAX_UDP_PAYLOAD {
                Err(ConfigError::new(path, format!("payload {b} must be between 1 and {MAX_UDP_PAYLOAD} bytes")))
            } else {
                Ok(())
            }
        };
        match self {
            SizeSpec::Fixed(b) => check(*b, ""),
            SizeSpec::Drawn(SizeDistribution::Exponential { mean }) => check(*mean, "mean"),
            SizeSpec::Drawn(SizeDistribution::Uniform { min, max }) => {
                check(*min, "min")?;
                check(*max, "max")?;
                if min > max {
                    return Err(ConfigError::new("min", "must not exceed max"));
                }
                Ok(())
            }
            SizeSpec::Drawn(SizeDistribution::Choice { values, weights }) => {
                if values.is_empty() {
                    return Err(ConfigError::new("values", "needs at least one size"));
                }
                for v in values {
                    check(*v, "values")?;
                }
                if !weights.is_empty()
                    && (weights.len() != values.len() || weights.iter().any(|w| !w.is_finite() || *w < 0.0))
                {
                    return Err(ConfigError::new("weights", "must be one non-negative weight per value"));
                }
                Ok(())
            }
        }
    }

    /// The smallest payload this spec can draw.
    fn smallest(&self) -> Bytes {
        match self {
            SizeSpec::Fixed(b) => *b,
            SizeSpec::Drawn(SizeDistribution::Uniform { min, .. }) => *min,
            SizeSpec::Drawn(SizeDistribution::Exponential { .. }) => Bytes(1),
            SizeSpec::Drawn(SizeDistribution::Choice { values, .. }) => {
                values.iter().copied().min().unwrap_or_default()
            }
        }
    }

    /// Mean payload in bytes, as written (to turn a bit rate into a datagram rate; for an
    /// exponential, the mean before rounding and truncation).
    pub fn mean(&self) -> f64 {
        match self {
            SizeSpec::Fixed(b) => b.0 as f64,
            SizeSpec::Drawn(SizeDistribution::Uniform { min, max }) => (min.0 + max.0) as f64 / 2.0,
            SizeSpec::Drawn(SizeDistribution::Exponential { mean }) => mean.0 as f64,
            SizeSpec::Drawn(SizeDistribution::Choice { values, weights }) => {
                let w = |i: usize| weights.get(i).copied().unwrap_or(1.0);
                let total: f64 = (0..values.len()).map(w).sum();
                values.iter().enumerate().map(|(i, v)| v.0 as f64 * w(i)).sum::<f64>() / total
            }
        }
    }
}

/// A size spec made ready to draw from: a weighted choice keeps its cumulative weights, so a
/// draw is a binary search with no allocation.
enum SizeSampler {
    Fixed(u64),
    Uniform { min: u64, max: u64 },
    Exponential { mean: f64 },
    Choice { values: Vec<u64>, cumulative: Vec<f64> },
}

impl SizeSampler {
    fn new(spec: &SizeSpec) -> Self {
        match spec {
            SizeSpec::Fixed(b) => SizeSampler::Fixed(b.0),
            SizeSpec::Drawn(SizeDistribution::Uniform { min, max }) => SizeSampler::Uniform { min: min.0, max: max.0 },
            SizeSpec::Drawn(SizeDistribution::Exponential { mean }) => SizeSampler::Exponential { mean: mean.0 as f64 },
            SizeSpec::Drawn(SizeDistribution::Choice { values, weights }) => {
                let cumulative = (0..values.len())
                    .scan(0.0, |sum, i| {
                        *sum += weights.get(i).copied().unwrap_or(1.0);
                        Some(*sum)
                    })
                    .collect();
                SizeSampler::Choice { values: values.iter().map(|v| v.0).collect(), cumulative }
            }
        }
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeSampler::Fixed(b) => *b,
            SizeSampler::Uniform { min, max } => rng.range_inclusive(*min, *max),
            SizeSampler::Exponential { mean } => (rng.exponential(*mean).round() as u64).clamp(1, MAX_UDP_PAYLOAD),
            SizeSampler::Choice { values, cumulative } => {
                // The first value whose cumulative weight exceeds u (zero weights never win).
                let u = rng.uniform() * cumulative[cumulative.len() - 1];
                let i = cumulative.partition_point(|&c| c <= u).min(values.len() - 1);
                values[i]
            }
        }
    }
}

pub struct UdpSource {
    flow: FlowId,
    node: NodeId,
    dst: NodeId,
    peer: AgentId,
    pattern: Pattern,
    size: SizeSampler,
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
    pub size: SizeSpec,
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
            size: SizeSampler::new(&p.size),
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
    /// Payload size: "1000B", or { dist = "uniform", min, max } / { dist = "choice", values }.
    #[serde(default = "default_payload")]
    pub size: SizeSpec,
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
fn default_payload() -> SizeSpec {
    SizeSpec::Fixed(DEFAULT_UDP_PAYLOAD)
}

impl TransportSpec for UdpFlowSpec {
    crate::transport::common_flow_keys!();
    fn validate(&self) -> Result<(), ConfigError> {
        if self.rate.0 == 0 {
            return Err(ConfigError::new("rate", "must be positive"));
        }
        self.size.validate().map_err(|e| e.within("size"))?;
        // The gap between datagrams is their wire size over the rate, in whole nanoseconds: a
        // gap that rounds to 0 ns would send forever without time advancing.
        let smallest = Bytes(self.size.smallest().0 + (IP_HEADER + UDP_HEADER) as u64);
        if let Some(why) = limits::too_fast_for_nanoseconds(self.rate, smallest, "the smallest datagram") {
            return Err(ConfigError::new("rate", why));
        }
        if self.stop.is_some_and(|s| s <= self.start) {
            return Err(ConfigError::new("stop", "must be after start"));
        }
        Ok(())
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
            sender: Agent::UdpSource(UdpSource::new(params, rng)),
            receiver: Agent::UdpSink(UdpSink { node: cx.dst, ..Default::default() }),
            cc: "",
            bytes: None,
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

    fn draws(spec: &SizeSpec, n: usize) -> Vec<u64> {
        let sampler = SizeSampler::new(spec);
        let mut rng = Rng::from_seed(3);
        (0..n).map(|_| sampler.draw(&mut rng)).collect()
    }

    /// A weighted choice draws each value with probability weight/total (within 4σ of the
    /// binomial count over 40,000 draws) and never a zero-weight one; its mean is the weighted
    /// mean.
    #[test]
    fn weighted_choice_draws_in_proportion() {
        let spec = SizeSpec::Drawn(SizeDistribution::Choice {
            values: vec![Bytes(100), Bytes(200), Bytes(1500)],
            weights: vec![1.0, 0.0, 3.0],
        });
        let n = 40_000;
        let d = draws(&spec, n);
        let count = |v: u64| d.iter().filter(|&&x| x == v).count() as f64;
        let sigma = (n as f64 * 0.25 * 0.75).sqrt();
        assert!((count(100) - n as f64 / 4.0).abs() < 4.0 * sigma, "{}", count(100));
        assert_eq!(count(200), 0.0);
        assert_eq!(count(100) + count(1500), n as f64);
        assert_eq!(spec.mean(), (100.0 + 3.0 * 1500.0) / 4.0);
    }

    /// Exponential sizes: whole bytes of at least one, with the mean of the rounded
    /// distribution (the mean 1000 B within 1 %, 4σ over 40,000 draws).
    #[test]
    fn exponential_sizes_have_their_mean() {
        let spec = SizeSpec::Drawn(SizeDistribution::Exponential { mean: Bytes(1000) });
        let d = draws(&spec, 40_000);
        let mean = d.iter().sum::<u64>() as f64 / d.len() as f64;
        assert!((mean - 1000.0).abs() < 20.0, "{mean}");
        assert!(d.iter().all(|&x| (1..=MAX_UDP_PAYLOAD).contains(&x)));
        let zero = SizeSpec::Drawn(SizeDistribution::Exponential { mean: Bytes(0) });
        assert_eq!(zero.validate().err().unwrap().path, "mean");
    }
}
