//! TCP parameters, per connection. `TcpConfig::default()` is the plain RFC sender (the `rfc`
//! profile); a scenario's flow starts from its profile (`profile.rs`, Linux unless it names
//! another) and the keys it writes. The 1988 behaviours are one setting away (`rto.k = 2`,
//! `rto.tick = "500ms"`, `cc = "tahoe"`).
//! Plain parameters, checked once when the flow is built; it holds no run-time state and builds
//! nothing.

use super::burst::BurstControlConfig;
use super::profile::Profile;
use super::quench::QuenchReaction;
use crate::error::ConfigError;
use crate::packet::TCP_TIMESTAMP_OPTION;
use crate::units::{Bytes, Dur};
use serde::{Deserialize, Serialize};

/// RFC 879's default TCP MSS would be 536; 1460 fills a 1500-byte Ethernet MTU.
const DEFAULT_MSS: u32 = 1460;
/// Default send buffer and receive window: large enough not to limit a 1 Gb/s, 30 ms path.
const DEFAULT_WINDOW: Bytes = Bytes(4 << 20);
/// RFC 5681 section 3.2: three duplicate ACKs signal a loss.
const DEFAULT_DUPACK_THRESHOLD: u32 = 3;
/// The smallest segment payload that leaves room for any data (RFC 791's 68-byte minimum
/// datagram minus 40 bytes of headers).
const MIN_MSS: u32 = 8;
/// The largest payload a 65535-byte IPv4 datagram can carry after 40 bytes of headers.
const MAX_MSS: u32 = 65_495;
/// The largest window TCP advertises: 65 535 scaled by the largest shift, 14 (RFC 7323
/// section 2.3). SACK blocks are kept as signed 32-bit offsets from the ACK on that bound.
const MAX_RECEIVE_WINDOW: Bytes = Bytes(65_535 << 14);

/// RFC 6298 section 2 and the revised 1988 paper: `rto = srtt + 4·rttvar`.
const DEFAULT_RTO_K: u16 = 4;
/// RFC 6298 section 2.4's lower bound and section 2.1's RTO before a sample: 1 s.
const ONE_SECOND: Dur = Dur::from_secs(1);
/// RFC 6298 section 2.5 allows an upper bound of at least 60 s.
const DEFAULT_MAX_RTO: Dur = Dur::from_secs(60);
/// Tahoe's TCP_MAXRXTSHIFT.
const DEFAULT_MAX_BACKOFFS: u32 = 12;
/// RFC 1122 4.2.3.2: an ACK for at least every second full-sized segment.
const DEFAULT_DELACK_SEGMENTS: u32 = 2;
/// RFC 1122 4.2.3.2: under 500 ms; the BSD fast timeout's 200 ms.
const DEFAULT_DELACK_TIMEOUT: Dur = Dur::from_millis(200);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtoConfig {
    /// Variance multiplier: `rto = srtt + k·rttvar`. 4 per RFC 6298 and the revised 1988 paper;
    /// 2 in the SIGCOMM '88 paper and 4.3BSD-Tahoe.
    pub k: u16,
    /// Lower bound (RFC 6298 section 2.4: 1 s; Tahoe TCPTV_MIN: 1 s).
    pub min: Dur,
    /// Upper bound (RFC 6298 allows >= 60 s; Tahoe TCPTV_REXMTMAX: 64 s).
    pub max: Dur,
    /// RTO before the first sample (RFC 6298 section 2.1: 1 s; Tahoe: 3 s via TCPTV_SRTTDFLT).
    pub initial: Dur,
    /// Timer granularity: 0 for exact timers, "500ms" for the BSD slow timeout. With ticks,
    /// RTT samples count tick boundaries crossed (+1, as BSD's t_rtt) and timers fire on ticks.
    pub tick: Dur,
    /// Which tick a timer fires on (`TickRule`); only with a tick. Written back only when not
    /// the default, so a scenario without it reads and writes as before.
    #[serde(skip_serializing_if = "TickRule::is_default")]
    pub tick_rule: TickRule,
    /// Give up after this many consecutive backoffs (Tahoe TCP_MAXRXTSHIFT = 12).
    pub max_backoffs: u32,
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            k: DEFAULT_RTO_K,
            min: ONE_SECOND,
            max: DEFAULT_MAX_RTO,
            initial: ONE_SECOND,
            tick: Dur::ZERO,
            tick_rule: TickRule::Bsd,
            max_backoffs: DEFAULT_MAX_BACKOFFS,
        }
    }
}

/// Which tick boundary a timer of length `d` armed at `a` fires on (`rto.tick_rule`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TickRule {
    /// BSD's slow timeout: the timer is a count of `ceil(d / tick)` ticks, decremented at each
    /// boundary (4.4BSD tcp_slowtimo), so it fires on the boundary that count of ticks after the
    /// one `a` falls in: up to one tick before `a + d`.
    #[default]
    #[serde(rename = "bsd")]
    Bsd,
    /// The first boundary after the deadline `a + d`, never before it: Linux's timer wheel
    /// (kernel/time/timer.c, calc_index: `expires = (expires >> LVL_SHIFT(lvl)) + 1`, the
    /// level's granularity as the tick) and htsim's TcpRtxTimerScanner (tcp.cpp,
    /// TcpSrc::rtx_timer_hook: `now > _RFC2988_RTO_timeout`, checked every scan period).
    #[serde(rename = "after")]
    After,
}

impl TickRule {
    pub fn is_default(&self) -> bool {
        *self == TickRule::Bsd
    }
}

impl RtoConfig {
    /// A tick rule other than BSD's needs a tick to act on.
    pub fn validate_tick_rule(&self) -> Result<(), ConfigError> {
        if !self.tick_rule.is_default() && self.tick.is_zero() {
            return Err(ConfigError::new("rto.tick_rule", "needs a coarse timer (rto.tick > 0)"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelayedAckConfig {
    pub enabled: bool,
    /// ACK at once when this many full-sized segments are unacknowledged (RFC 1122: 2).
    pub segments: u32,
    /// Otherwise ACK when this timer expires (RFC 1122: < 500 ms; BSD fast timeout 200 ms).
    pub timeout: Dur,
    /// Linux's quick-ack mode (`quickack.rs`): every segment ACKed at once at the start of the
    /// connection, after the receiver was idle longer than its RTO, after duplicate data and
    /// on the first CE mark. Off by default (RFC 1122 has none; nor has ns-3); on in `linux`.
    /// Written back only when on, so a scenario without it reads and writes as before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub quick_ack: bool,
}

impl Default for DelayedAckConfig {
    fn default() -> Self {
        DelayedAckConfig {
            enabled: true,
            segments: DEFAULT_DELACK_SEGMENTS,
            timeout: DEFAULT_DELACK_TIMEOUT,
            quick_ack: false,
        }
    }
}

/// What the receiving end of a connection supports (`tcp.receiver`): each option is used only
/// when both ends support it, as RFC 2018 section 2 (SACK-permitted on both SYNs), RFC 7323
/// section 3.2 (timestamps on both SYNs) and RFC 3168 section 6.1.1 (an ECN-setup SYN-ACK)
/// state. The flow's own `sack`, `timestamps` and `ecn` are the sending end's. Each defaults to
/// true: a receiver that agrees to what the sender asks, as Linux's defaults do (`tcp_sack`,
/// `tcp_timestamps`, `tcp_ecn` = 2). Written back only when one is false.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReceiverSupport {
    pub sack: bool,
    pub timestamps: bool,
    pub ecn: bool,
}

impl Default for ReceiverSupport {
    fn default() -> Self {
        ReceiverSupport { sack: true, timestamps: true, ecn: true }
    }
}

impl ReceiverSupport {
    fn agrees_to_all(&self) -> bool {
        *self == ReceiverSupport::default()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// Every key defaults to `TcpConfig::default()`'s value (the `rfc` profile's), but for
// `profile`: a table without it names the scenario's default profile (`Profile::default()`).
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// The named set of defaults the other keys start from (`profile.rs`): `"linux"` (a
    /// scenario's default), `"ns3"` or `"rfc"` (`TcpConfig::default()`'s). Where the comments
    /// below say "default", they mean the `rfc` profile's value.
    #[serde(default)]
    pub profile: Profile,
    /// Maximum segment size: payload bytes per segment.
    pub mss: u32,
    /// Sender window limit: at most this many bytes outstanding.
    pub send_buffer: Bytes,
    /// The window the receiver advertises.
    pub receive_window: Bytes,
    pub rto: RtoConfig,
    pub delayed_ack: DelayedAckConfig,
    pub dupack_threshold: u32,
    /// Selective acknowledgements (RFC 2018) with RFC 6675 loss recovery for Reno/NewReno;
    /// off in the `rfc` profile so the named algorithms run as published (Tahoe ignores it).
    pub sack: bool,
    /// Limited Transmit: new segments on the duplicate ACKs before loss recovery starts
    /// (`false`, `true` or `"rfc3042"`, `"rfc6675"`).
    pub limited_transmit: LimitedTransmit,
    /// Set don't-fragment on every segment (path MTU discovery style); by default a segment
    /// larger than a link's MTU is fragmented, as in 1988.
    pub dont_fragment: bool,
    /// Reaction to ICMP Source Quench: ignore (default, RFC 6633), tahoe, bsd43, rfc1122, squid.
    pub source_quench: QuenchReaction,
    /// Explicit Congestion Notification (RFC 3168): request it on the SYN, mark new data
    /// ECT(0) when the peer agrees, react to ECE once per window, echo CE as ECE.
    pub ecn: bool,
    /// Which ACKs carry an RTT sample: one timed segment per window (BSD, the default) or
    /// every ACK of never-retransmitted data (what delay-based control such as FAST needs).
    pub rtt_sampling: RttSampling,
    /// Burstiness control (Wei, Hegde, Low 2005): send a packet only while the burstiness of
    /// the last RTT is under a threshold (`{ threshold = 10, rate = "cwnd/rtt" }`); off when absent.
    pub burstiness_control: Option<BurstControlConfig>,
    /// Plain pacing: one full segment every srtt/cwnd instead of a burst per ACK (the second
    /// control of Wei, Hegde, Low 2005); combines with burstiness control (both must allow).
    pub pacing: bool,
    /// What the sender learns when its own host's transmit queue refuses a segment: nothing
    /// (`"loss"`, the default: it is found like any network loss), or Linux's answer
    /// (`"linux_cwr"`: the segment stays unsent and the window enters CWR, `local_drop.rs`).
    pub local_drop: LocalDropReaction,
    /// When the window may grow (`sender/cwnd_limited.rs`): on every ACK (`false`, the default,
    /// as ns-2 and ns-3), only on an ACK that arrived while it was full (`true`, Linux 2.4-2.6's
    /// `tcp_ack`), or while the window limited the sends of the current round or, in slow start,
    /// is under twice the most sent in it (`"linux"`, `tcp_is_cwnd_limited`). Decreases always
    /// apply.
    pub cwnd_limited_growth: CwndLimitedGrowth,
    /// How much is sent per ACK during fast recovery: `"standard"` (the recovery procedure's
    /// own rules, the default), `"prr"` (RFC 6937 Proportional Rate Reduction with the
    /// slow-start reduction bound), `"prr_crb"` (with the conservative bound) or
    /// `"prr_rfc9937"` (RFC 9937's PRR: the conservative bound, the slow-start one on an ACK
    /// that advances snd.una and indicates no further loss).
    pub recovery: RecoveryReduction,
    /// How a SACK sender finds losses: `"dupack"` (RFC 6675, the default, ns-3's only choice),
    /// `"rack"` (RFC 8985 RACK with the tail loss probe, Linux's default) or `"rack_no_tlp"`.
    pub loss_detection: LossDetection,
    /// The tail loss probe's timeout beyond 2·SRTT while more than one segment is in flight
    /// (`sender/tlp.rs`): none (`"rfc8985"`, the default, RFC 8985 section 7.2) or Linux's
    /// `TCP_TIMEOUT_MIN` of 2 ms (`"linux"`, `tcp_schedule_loss_probe`).
    #[serde(skip_serializing_if = "ProbeTimeout::is_rfc8985")]
    pub probe_timeout: ProbeTimeout,
    /// When NewReno without SACK restarts the retransmission timer during fast recovery
    /// (RFC 6582 section 4.2): on the first partial ACK only (`"impatient"`, the default, the
    /// RFC's recommendation) or on every partial ACK (`"slow_but_steady"`, Linux's rule:
    /// `tcp_set_xmit_timer` rearms the RTO on every ACK that advances snd_una, since its tail
    /// loss probe, which needs SACK, never stands in for it).
    #[serde(skip_serializing_if = "NewRenoTimer::is_impatient")]
    pub newreno_timer: NewRenoTimer,
    /// D-SACK (RFC 2883): the receiver reports a duplicate segment in the first SACK block of
    /// its next ACK, and a RACK sender widens its reordering window in the round trips that
    /// bring one (RFC 8985 section 6.2 step 4, `sender/rack.rs`). Acts only where SACK is
    /// agreed. Off by default (ns-3 3.44's `TcpSocketBase` sends none); on in `linux`
    /// (`tcp_dsack` = 1).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dsack: bool,
    /// The timestamp option (RFC 7323) on every segment: 12 more header bytes, taken from the
    /// payload of a full segment as Linux does (`mss` stays the payload without options), and
    /// an RTT sample from the echoed timestamp on every ACK of new data, retransmissions
    /// included. Off in the `rfc` profile; on in `linux` and `ns3`.
    pub timestamps: bool,
    /// The receiving end's support of SACK, timestamps and ECN (`ReceiverSupport`).
    #[serde(skip_serializing_if = "ReceiverSupport::agrees_to_all")]
    pub receiver: ReceiverSupport,
    /// Whether the sender holds its sends by its bytes queued in its own host
    /// (`sender/small_queues.rs`): not at all (`false`, the default), as Linux's TCP Small
    /// Queues do (`"linux"`), or as an RDMA NIC takes a queue pair's packets, one at a time
    /// when the port can send it (`"nic"`).
    #[serde(skip_serializing_if = "SmallQueues::is_off")]
    pub small_queues: SmallQueues,
}

/// When the window may grow (`tcp.cwnd_limited_growth`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CwndLimitedGrowth {
    /// On every ACK (`false`).
    #[default]
    Off,
    /// Only on an ACK that arrived while the window was full (`true`): Linux 2.4-2.6 `tcp_ack`,
    /// `prior_in_flight >= snd_cwnd`.
    FullAtAck,
    /// Only while `tcp_is_cwnd_limited` holds (`"linux"`): the window limited a send since the
    /// round began, or, in slow start, it is under twice the most in flight in the round.
    Linux,
}

impl Serialize for CwndLimitedGrowth {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CwndLimitedGrowth::Off => s.serialize_bool(false),
            CwndLimitedGrowth::FullAtAck => s.serialize_bool(true),
            CwndLimitedGrowth::Linux => s.serialize_str("linux"),
        }
    }
}

impl<'de> Deserialize<'de> for CwndLimitedGrowth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FlagOrRule::read(d, "expected false, true or \"linux\"", |form| match form {
            FlagOrRule::Flag(false) => Some(CwndLimitedGrowth::Off),
            FlagOrRule::Flag(true) => Some(CwndLimitedGrowth::FullAtAck),
            FlagOrRule::Rule(r) if r == "linux" => Some(CwndLimitedGrowth::Linux),
            FlagOrRule::Rule(_) => None,
        })
    }
}

/// A key written as a boolean or as a rule's name (`tcp.limited_transmit`,
/// `tcp.cwnd_limited_growth`, `tcp.small_queues`): what it may be read as.
#[derive(Deserialize)]
#[serde(untagged)]
enum FlagOrRule {
    Flag(bool),
    Rule(String),
}

impl FlagOrRule {
    /// Read the key and let `pick` name its value; a form `pick` does not know is refused with
    /// `expected` (the forms the key takes).
    fn read<'de, D: serde::Deserializer<'de>, T>(
        d: D,
        expected: &str,
        pick: impl FnOnce(&FlagOrRule) -> Option<T>,
    ) -> Result<T, D::Error> {
        let form = FlagOrRule::deserialize(d).map_err(|_| serde::de::Error::custom(expected))?;
        pick(&form).ok_or_else(|| {
            serde::de::Error::custom(match form {
                FlagOrRule::Rule(r) => format!("unknown rule {r:?}: {expected}"),
                FlagOrRule::Flag(f) => format!("{f} is not a rule here: {expected}"),
            })
        })
    }
}

/// What the sender lets wait in its host's queue (`tcp.small_queues`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SmallQueues {
    /// Anything its window allows (`false`).
    #[default]
    Off,
    /// Linux's TCP Small Queues (`"linux"`): no new send while more than the limit of
    /// `tcp_small_queue_check` waits.
    Linux,
    /// An RDMA NIC's (`"nic"`): no new send while one of its packets waits.
    Nic,
}

impl SmallQueues {
    pub fn is_off(&self) -> bool {
        *self == SmallQueues::Off
    }
}

impl Serialize for SmallQueues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SmallQueues::Off => s.serialize_bool(false),
            SmallQueues::Linux => s.serialize_str("linux"),
            SmallQueues::Nic => s.serialize_str("nic"),
        }
    }
}

impl<'de> Deserialize<'de> for SmallQueues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FlagOrRule::read(d, "expected false, \"linux\" or \"nic\"", |form| match form {
            FlagOrRule::Flag(false) => Some(SmallQueues::Off),
            FlagOrRule::Rule(r) if r == "linux" => Some(SmallQueues::Linux),
            FlagOrRule::Rule(r) if r == "nic" => Some(SmallQueues::Nic),
            _ => None,
        })
    }
}

/// New data on the duplicate ACKs before loss recovery starts (`tcp.limited_transmit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitedTransmit {
    /// None (`false`): the window alone decides.
    #[default]
    Off,
    /// RFC 3042 (`true` or `"rfc3042"`): one new segment on each of the first two duplicate
    /// ACKs, while FlightSize stays within cwnd plus two segments.
    Rfc3042,
    /// RFC 6675 section 5 step (3) (`"rfc6675"`, SACK only): on each duplicate ACK before
    /// recovery, new segments while the pipe (RFC 6675 section 4's SetPipe, which leaves out
    /// what is SACKed or deemed lost) leaves a segment's room in cwnd, so a duplicate ACK that
    /// SACKs two segments releases two. ns-3 and Linux send by the pipe in this phase too.
    Rfc6675,
}

/// `false` and `true` as before the rules had names, so written scenarios read back the same.
impl Serialize for LimitedTransmit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LimitedTransmit::Off => s.serialize_bool(false),
            LimitedTransmit::Rfc3042 => s.serialize_bool(true),
            LimitedTransmit::Rfc6675 => s.serialize_str("rfc6675"),
        }
    }
}

impl<'de> Deserialize<'de> for LimitedTransmit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FlagOrRule::read(d, "expected true, false, \"rfc3042\" or \"rfc6675\"", |form| match form {
            FlagOrRule::Flag(false) => Some(LimitedTransmit::Off),
            FlagOrRule::Flag(true) => Some(LimitedTransmit::Rfc3042),
            FlagOrRule::Rule(r) if r == "rfc3042" => Some(LimitedTransmit::Rfc3042),
            FlagOrRule::Rule(r) if r == "rfc6675" => Some(LimitedTransmit::Rfc6675),
            FlagOrRule::Rule(_) => None,
        })
    }
}

/// A sender's reaction to a drop in its own host's first queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalDropReaction {
    /// The sender is not told: the segment is lost as if a router had dropped it (ns-2, ns-3).
    #[default]
    Loss,
    /// Linux 2.4-2.6: the qdisc's NET_XMIT_DROP makes `tcp_transmit_skb` call `tcp_enter_cwr`
    /// and `tcp_write_xmit` stop with the segment still at the send head.
    LinuxCwr,
}

/// RTT sampling policy of a sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    /// One segment per window is timed (4.3BSD `t_rtt`); Karn's rule discards retransmissions.
    #[default]
    TimedSegment,
    /// Every new ACK times the newest segment it acknowledges, as RFC 7323 timestamps would:
    /// a retransmission is timed from its own send and replaces the timings above it.
    EveryAck,
}

/// How the sender paces its sending during fast recovery (`tcp.recovery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryReduction {
    /// The window rules of the recovery procedure itself: RFC 6675's `pipe < cwnd` with
    /// SACK, RFC 5681/6582 inflation and deflation without.
    #[default]
    Standard,
    /// RFC 6937 PRR with the slow-start reduction bound (PRR-SSRB).
    Prr,
    /// RFC 6937 PRR with the conservative reduction bound (PRR-CRB).
    PrrCrb,
    /// RFC 9937 PRR: PRR-CRB, SSRB's segment only on a SafeACK, RecoverFS without what was
    /// SACKed before recovery, nothing sent on an ACK that delivers nothing, the fast
    /// retransmission forced.
    #[serde(rename = "prr_rfc9937")]
    PrrRfc9937,
}

/// How a SACK sender decides that a segment is lost (`tcp.loss_detection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// RFC 6675: DupThresh duplicate ACKs, or more than (DupThresh − 1)·SMSS bytes SACKed above
    /// (ns-3's only choice; quench's default, so that existing results stand).
    #[default]
    Dupack,
    /// RFC 8985 RACK with the tail loss probe (Linux's default since 4.18).
    Rack,
    /// RACK without the tail loss probe.
    RackNoTlp,
}

/// The tail loss probe's timeout (`tcp.probe_timeout`), both 2·SRTT plus the worst-case
/// delayed ACK with one segment in flight, 1 s before an RTT sample and never past the RTO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeTimeout {
    /// RFC 8985 section 7.2's `TLP_calc_PTO`: 2·SRTT with more than one segment in flight.
    #[default]
    Rfc8985,
    /// Linux's `tcp_schedule_loss_probe`: 2·SRTT + `TCP_TIMEOUT_MIN` (2 ms) with more than one
    /// segment in flight, so that a probe never fires within a timer's granularity of the
    /// round trip, however short it is.
    Linux,
}

/// NewReno's retransmission timer in fast recovery (`tcp.newreno_timer`, RFC 6582 section 4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoTimer {
    /// Restarted on the first partial ACK only: a recovery of more holes than fit in one RTO
    /// ends in a timeout, and the go-back-N that follows repairs the rest.
    #[default]
    Impatient,
    /// Restarted on every partial ACK: the recovery repairs one hole per round trip however
    /// many there are (Linux, `tcp_rearm_rto` from `tcp_set_xmit_timer`).
    SlowButSteady,
}

impl NewRenoTimer {
    pub fn is_impatient(&self) -> bool {
        *self == NewRenoTimer::Impatient
    }
}

impl ProbeTimeout {
    pub fn is_rfc8985(&self) -> bool {
        *self == ProbeTimeout::Rfc8985
    }
}

impl LossDetection {
    pub fn rack(self) -> bool {
        self != LossDetection::Dupack
    }
    pub fn tlp(self) -> bool {
        self == LossDetection::Rack
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            profile: Profile::Rfc,
            mss: DEFAULT_MSS,
            send_buffer: DEFAULT_WINDOW,
            receive_window: DEFAULT_WINDOW,
            rto: RtoConfig::default(),
            delayed_ack: DelayedAckConfig::default(),
            dupack_threshold: DEFAULT_DUPACK_THRESHOLD,
            sack: false,
            limited_transmit: LimitedTransmit::Off,
            dont_fragment: false,
            source_quench: QuenchReaction::Ignore,
            ecn: false,
            rtt_sampling: RttSampling::TimedSegment,
            burstiness_control: None,
            pacing: false,
            local_drop: LocalDropReaction::Loss,
            cwnd_limited_growth: CwndLimitedGrowth::Off,
            recovery: RecoveryReduction::Standard,
            loss_detection: LossDetection::Dupack,
            probe_timeout: ProbeTimeout::Rfc8985,
            newreno_timer: NewRenoTimer::Impatient,
            dsack: false,
            timestamps: false,
            receiver: ReceiverSupport::default(),
            small_queues: SmallQueues::Off,
        }
    }
}

impl TcpConfig {
    /// Payload bytes of a full segment: `mss` less the timestamp option when it is on (Linux's
    /// `tcp_current_mss`: options come out of the segment, the packet size stays).
    pub fn segment_payload(&self) -> u32 {
        self.mss - self.option_bytes()
    }

    /// Option bytes on every segment (the timestamp option; SACK blocks come on top on ACKs).
    pub fn option_bytes(&self) -> u32 {
        if self.timestamps {
            TCP_TIMESTAMP_OPTION
        } else {
            0
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_MSS..=MAX_MSS).contains(&self.mss) {
            return Err(ConfigError::new("mss", format!("{} bytes is outside [{MIN_MSS}, {MAX_MSS}]", self.mss)));
        }
        for (field, w) in [("send_buffer", self.send_buffer), ("receive_window", self.receive_window)] {
            if w.0 < self.mss as u64 {
                return Err(ConfigError::new(field, format!("{w} cannot hold one {}-byte segment", self.mss)));
            }
        }
        if self.receive_window.0 > MAX_RECEIVE_WINDOW.0 {
            let why = format!("{} is more than TCP can advertise ({MAX_RECEIVE_WINDOW})", self.receive_window);
            return Err(ConfigError::new("receive_window", why));
        }
        let rto = &self.rto;
        if !(1..=16).contains(&rto.k) {
            return Err(ConfigError::new("rto.k", "must be between 1 and 16 (2 or 4 in practice)"));
        }
        if rto.min.is_zero() || rto.min > rto.max {
            return Err(ConfigError::new("rto.min", format!("must be positive and at most rto.max ({})", rto.max)));
        }
        if rto.initial.is_zero() {
            return Err(ConfigError::new("rto.initial", "must be positive"));
        }
        rto.validate_tick_rule()?;
        if self.delayed_ack.enabled && (self.delayed_ack.segments == 0 || self.delayed_ack.timeout.is_zero()) {
            return Err(ConfigError::new("delayed_ack", "segments and timeout must be positive when enabled"));
        }
        if self.dupack_threshold == 0 {
            return Err(ConfigError::new("dupack_threshold", "must be at least 1"));
        }
        if self.timestamps && self.mss < MIN_MSS + TCP_TIMESTAMP_OPTION {
            let why =
                format!("the {TCP_TIMESTAMP_OPTION}-byte option leaves no room for data in a {}-byte mss", self.mss);
            return Err(ConfigError::new("timestamps", why));
        }
        if self.limited_transmit == LimitedTransmit::Rfc6675 && !self.sack {
            // RFC 6675's pipe counts what the receiver SACKed.
            return Err(ConfigError::new(
                "limited_transmit",
                "\"rfc6675\" sends by the SACK pipe: set tcp.sack = true",
            ));
        }
        if self.loss_detection.rack() && !self.sack {
            // RFC 8985 section 3: RACK judges by SACKed segments' send times.
            return Err(ConfigError::new("loss_detection", "RACK needs SACK: set tcp.sack = true"));
        }
        self.burstiness_control.as_ref().map_or(Ok(()), BurstControlConfig::validate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Each flag-or-rule key reads its booleans and names, and refuses anything else naming
    /// the forms it takes.
    #[test]
    fn flag_or_rule_keys_read_their_forms_and_refuse_the_rest() {
        assert_eq!(read::<LimitedTransmit>("true"), Ok(LimitedTransmit::Rfc3042));
        assert_eq!(read::<LimitedTransmit>("\"rfc6675\""), Ok(LimitedTransmit::Rfc6675));
        assert_eq!(read::<CwndLimitedGrowth>("true"), Ok(CwndLimitedGrowth::FullAtAck));
        assert_eq!(read::<CwndLimitedGrowth>("\"linux\""), Ok(CwndLimitedGrowth::Linux));
        assert_eq!(read::<SmallQueues>("false"), Ok(SmallQueues::Off));
        assert_eq!(read::<SmallQueues>("\"nic\""), Ok(SmallQueues::Nic));
        let e = read::<SmallQueues>("true").unwrap_err();
        assert!(e.starts_with("true is not a rule here: expected false, \"linux\" or \"nic\""), "{e}");
        let e = read::<CwndLimitedGrowth>("\"bsd\"").unwrap_err();
        assert!(e.starts_with("unknown rule \"bsd\": expected false, true or \"linux\""), "{e}");
        let e = read::<LimitedTransmit>("3").unwrap_err();
        assert!(e.starts_with("expected true, false, \"rfc3042\" or \"rfc6675\""), "{e}");
    }

    /// `dsack` is written back only when on (so the other profiles' outputs keep their
    /// keys); the receive window is refused beyond what TCP can advertise, 65 535 << 14.
    #[test]
    fn dsack_is_written_only_when_on_and_the_window_is_bounded() {
        let plain = serde_json::to_string(&TcpConfig::default()).unwrap();
        assert!(!plain.contains("dsack"), "{plain}");
        let on = TcpConfig { dsack: true, ..Default::default() };
        assert!(serde_json::to_string(&on).unwrap().contains(r#""dsack":true"#));
        let widest = TcpConfig { receive_window: MAX_RECEIVE_WINDOW, ..Default::default() };
        assert!(widest.validate().is_ok());
        let wider = TcpConfig { receive_window: Bytes(MAX_RECEIVE_WINDOW.0 + 1), ..Default::default() };
        assert_eq!(wider.validate().unwrap_err().path, "receive_window");
    }

    /// `rto.tick_rule` reads its two names, is written back only when "after", and needs a
    /// tick.
    #[test]
    fn tick_rule_reads_refuses_and_needs_a_tick() {
        assert_eq!(read::<TickRule>("\"after\""), Ok(TickRule::After));
        assert!(read::<TickRule>("\"linux\"").unwrap_err().starts_with("unknown variant `linux`"));
        let plain = serde_json::to_string(&RtoConfig::default()).unwrap();
        assert!(!plain.contains("tick_rule"), "{plain}");
        let after: RtoConfig = read(r#"{"tick": "10ms", "tick_rule": "after"}"#).unwrap();
        assert_eq!((after.tick, after.tick_rule), (Dur::from_millis(10), TickRule::After));
        assert!(serde_json::to_string(&after).unwrap().contains(r#""tick_rule":"after""#));
        let tcp =
            TcpConfig { rto: RtoConfig { tick_rule: TickRule::After, ..Default::default() }, ..Default::default() };
        assert_eq!(tcp.validate().unwrap_err().path, "rto.tick_rule");
        let tcp = TcpConfig { rto: after, ..Default::default() };
        assert!(tcp.validate().is_ok());
    }
}
