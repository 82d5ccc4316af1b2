//! Congestion control, apart from TCP's reliability machinery (smoltcp's split). TCP owns the
//! sequence space, timers and loss detection; a controller owns how the window grows, how far
//! it falls, and, if it likes, the rate at which the sender paces.
//!
//! The interface, as Linux's `tcp_congestion_ops` and quinn's `Controller`:
//! - [`Capabilities`], returned once as data and read when the sender is built (Linux's
//!   `flags` such as `TCP_CONG_NEEDS_ECN`): the loss-recovery procedure after three duplicate
//!   ACKs (what distinguishes Tahoe, Reno and NewReno), the ECN feedback and codepoint, the RTT
//!   sampling and the delivery-rate samples it needs, the window after a timeout.
//! - `on_ack`, the one per-ACK entry point, with one [`AckSample`]: bytes delivered, bytes with
//!   ECN-Echo, the RTT sample and smoothed RTT, and the [`RateSample`] (delivered and lost
//!   counts over an interval) when the controller asked for it. It sets the window and may
//!   return a pacing rate. A window controller (Reno to DCTCP) is called for ACKs of new data
//!   outside loss recovery, and TCP's recovery procedures do the rest; one that asks for rate
//!   samples (BBR, `Capabilities::rate_samples`) is called on every ACK, in every state, after
//!   the sender's loss detection, and sets the window itself (Linux's `cong_control` hook).
//! - `on_congestion`, the one congestion-event entry point: a [`Signal`] (duplicate ACKs,
//!   timeout, ECN-Echo, local drop) and the slow-start threshold it leaves.
//! - `metrics`, a controller-neutral record for the `pacing` table ([`ControllerMetrics`],
//!   Linux's `get_info`, quinn's `ControllerMetrics`).
//!
//! Adding a controller is one file (config with `deny_unknown_fields`, `new(&cfg)`, the trait
//! impl, tests) plus one line in `registry!` below. Must not touch: the sender's state; it sees
//! only the [`Window`] and the samples.

pub mod bbr;
pub mod bbr3;
pub mod copa;
pub mod cubic;
pub mod cubic_linux;
pub mod dcqcn;
pub mod dctcp;
pub mod fast;
pub mod growth;
pub mod hpcc;
pub mod hystart;
pub mod hystart_linux;
pub mod ledbat;
pub mod lia;
pub mod newreno;
pub mod olia;
pub mod prague;
pub mod reno;
pub mod swift;
pub mod tahoe;
pub mod vegas;
pub mod vivace;

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::telemetry::IntRecord;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};

/// The window variables a controller reads and writes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Bytes sent and not yet acknowledged.
    pub flight: u64,
    /// The peer's advertised receive window.
    pub peer_window: u64,
}

/// What one ACK tells the controller: the one per-ACK record every controller gets.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample<'a> {
    pub now: Time,
    /// Bytes newly acknowledged cumulatively (0 on a duplicate ACK).
    pub acked: u64,
    /// An RTT measurement carried by this ACK, if any (Karn's rule applied).
    pub rtt: Option<Dur>,
    /// The sender's smoothed RTT (RFC 6298) after this ACK, once it has a sample.
    pub srtt: Option<Dur>,
    /// Of `acked`, the bytes this ACK acknowledges with ECN-Echo set: all of them or none
    /// (RFC 8257 section 3.3's "bytes acknowledged with ECE"; zero without ECN).
    pub ece_bytes: u64,
    /// How long the receiver held this ACK after the data it acknowledges arrived (QUIC's ACK
    /// Delay, RFC 9000 section 13.2.5; Swift's remote-host delay): carried inside the
    /// simulation, not on the wire, only for a controller with `Capabilities::ack_delay`.
    pub ack_delay: Option<Dur>,
    /// The delivery-rate sample, with the bytes delivered and newly lost and the sender's
    /// phase: measured only for a controller with `Capabilities::rate_samples`.
    pub rate: Option<&'a RateSample>,
    /// The in-band telemetry this ACK echoes (`telemetry.rs`: each switch's queue, transmitted
    /// bytes, time and rate as the acknowledged data passed), only for a controller with
    /// `Capabilities::telemetry`, and only on an ACK that carries an echo.
    pub telemetry: Option<&'a IntRecord>,
}

/// What ECN-Echo on an ACK means, and so how the receiver sets it (the controller says which).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnFeedback {
    /// RFC 3168: ECE from a CE mark until CWR arrives; the sender reduces once per window by
    /// the controller's `on_congestion(Signal::EcnEcho)`.
    #[default]
    Rfc3168,
    /// RFC 8257 section 3.2: ECE mirrors the CE mark of the data it acknowledges (an immediate
    /// ACK whenever the CE state changes), so that the controller can count marked bytes
    /// from `AckSample::ece_bytes`; the once-per-window reduction stays the sender's.
    Accurate,
}

/// Where the sender stands in congestion control, as a model-based controller sees it
/// (Linux's `tcp_ca_state`, coarsened to what BBR v1 branches on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaPhase {
    /// Nothing suspected, or duplicate ACKs below the threshold.
    #[default]
    Open,
    /// Reducing the window for ECN-Echo or a local drop.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout, until its window is acknowledged.
    Loss,
}

/// What one ACK tells a model-based controller: a delivery-rate sample
/// (draft-cheng-iccrg-delivery-rate-estimation-02 section 3; Linux `struct rate_sample`,
/// `tcp_rate.c`) and the sender's state after the ACK. Byte counts are payload bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub now: Time,
    /// Bytes delivered over `interval` (the sample's numerator).
    pub delivered: u64,
    /// The sample's interval (the longer of its send and ACK phases); None when the ACK
    /// delivered nothing new or the interval is shorter than the minimum RTT (draft section
    /// 3.3: such a sample would overestimate the rate).
    pub interval: Option<Dur>,
    /// The connection's delivered count when the sampled segment was sent: a round trip has
    /// passed once this reaches the count at the round's start (BBR's round counting).
    pub prior_delivered: u64,
    /// The connection's delivered count after this ACK.
    pub total_delivered: u64,
    /// The sampled segment was sent while the application, not the network, limited sending.
    pub app_limited: bool,
    /// Bytes this ACK newly delivered, cumulatively or by SACK.
    pub acked_sacked: u64,
    /// Bytes this ACK newly marks lost (RFC 6675 IsLost).
    pub losses: u64,
    /// The RTT of the most recently sent segment this ACK delivered that was never
    /// retransmitted (Linux's `rs->rtt_us`).
    pub rtt: Option<Dur>,
    /// Bytes in flight after this ACK (RFC 6675 pipe with SACK, else snd_max − snd_una),
    /// counting `sent_before_control`.
    pub inflight: u64,
    /// Of `inflight`, the bytes the sender transmitted in response to this ACK before this
    /// sample reached the controller: RFC 6675's recovery sends on a duplicate ACK, a fast
    /// retransmission. Linux transmits only after the controller's turn (`tcp_ack` calls
    /// `tcp_cong_control` before `tcp_xmit_recovery`), so its in-flight leaves them out.
    pub sent_before_control: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_inflight: u64,
    /// The sender's smoothed RTT (RFC 6298), once it has a sample.
    pub srtt: Option<Dur>,
    pub phase: CaPhase,
}

/// A controller's answer to one ACK, besides the window it sets (a window controller's is the
/// default: no pacing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckResponse {
    /// The pacing rate of payload; None: no pacing.
    pub pacing_rate: Option<BitRate>,
    /// Samples taken until what is in flight now is delivered are to be marked app-limited
    /// (BBR's PROBE_RTT: its deliberately low rate must not lower the bandwidth estimate).
    pub app_limited: bool,
}

/// A controller's state as the `pacing` table records it, whatever the controller (Linux's
/// `get_info`, quinn's `ControllerMetrics`); written when it changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControllerMetrics {
    pub pacing_rate: BitRate,
    /// The bandwidth estimate (payload).
    pub bandwidth: BitRate,
    pub min_rtt: Option<Dur>,
    /// The state machine's mode, an index into [`PACING_MODES`].
    pub mode: u8,
    /// The phase within the mode's gain cycle (BBR's PROBE_BW: 0-7), 0 elsewhere.
    pub cycle_phase: u8,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
}

/// The modes a controller's [`ControllerMetrics::mode`] names, the `pacing` table's category:
/// BBR's state machine, so far the only one; a controller with modes of its own appends them.
pub const PACING_MODES: &[&str] = &bbr::MODE_NAMES;

/// The `pacing` table's name for the metrics record.
pub type ModelState = ControllerMetrics;

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Three duplicate ACKs.
    DupAcks,
    /// The retransmission timer expired.
    Timeout,
    /// An ACK carried ECN-Echo.
    EcnEcho,
    /// The sender's own host refused a segment (Linux: NET_XMIT_DROP, then CWR).
    LocalDrop,
}

/// Which procedure follows the third duplicate ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Tahoe: retransmit the missing segment and slow-start from one segment.
    SlowStart,
    /// Reno fast recovery (RFC 5681): window inflation, leave on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): stay until everything outstanding at loss time is acknowledged.
    NewReno,
}

/// What a controller needs from the sender, fixed for its life: returned once as data and read
/// when the flow and its sender are built (Linux's `tcp_congestion_ops.flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The procedure that follows the third duplicate ACK.
    pub recovery: Recovery,
    /// The ECN feedback this controller needs from the receiver.
    pub ecn_feedback: EcnFeedback,
    /// The ECT codepoint on this controller's ECN-capable data (`packet::ecn`): ECT(0) for a
    /// Classic controller (RFC 3168), ECT(1) for a scalable one (RFC 9331 section 4.1).
    pub ect_codepoint: u8,
    /// Every packet of an ECN connection carries the ECT codepoint, the SYN, the SYN-ACK, pure
    /// ACKs and retransmissions included, rather than new data only (RFC 3168 section
    /// 6.1.1/6.1.5). Linux does so for a controller flagged `TCP_CONG_NEEDS_ECN`
    /// (`tcp_assign_congestion_control` sets ECT on the socket, `tcp_ecn_send_syn` before the
    /// SYN) and clears it again when the handshake does not agree on ECN.
    pub ect_on_every_packet: bool,
    /// The mechanism that needs an RTT sample on every ACK (HyStart++, Vegas), if any: the
    /// flow's `tcp.rtt_sampling = "every_ack"` provides them; checked when the flow is built.
    pub rtt_every_ack_needed_by: Option<&'static str>,
    /// The controller is model-based: the sender measures a delivery-rate sample per ACK and
    /// calls `on_ack` on every ACK, in every state, after its loss detection; the controller
    /// sets the window itself and may pace (Linux's `cong_control`).
    pub rate_samples: bool,
    /// The window after a retransmission timeout, in segments (RFC 5681's loss window: 1).
    pub loss_window_segments: u8,
    /// The receiver reports its ACK delay (`AckSample::ack_delay`) to a model-based controller
    /// (one with `rate_samples`), so that it can separate fabric from endpoint delay (Swift).
    pub ack_delay: bool,
    /// The flow's data gathers in-band telemetry at every switch and its ACKs echo it
    /// (`AckSample::telemetry`, HPCC), in this header, for a model-based controller.
    pub telemetry: Option<crate::telemetry::IntHeader>,
    /// The controller acts by clocks of its own as well as on ACKs (DCQCN's rate timers): the
    /// sender asks `wake_at` after each of its answers and calls `on_wake` then, for a
    /// model-based controller.
    pub own_clock: bool,
    /// The controller's reference is a Linux module with a `cong_control` hook (BBR, BBRv3),
    /// for which Linux's sender writes no window of its own in recovery: no PRR
    /// (`tcp_cwnd_reduction` is not called), no reset at its end (`tcp_end_cwnd_reduction`
    /// returns first). Without SACK
    /// the sender keeps Linux's emulation of SACK for it (`sender/reno_sack.rs`:
    /// `tcp_add_reno_sack`, `tcp_remove_reno_sacks`, `tcp_newreno_mark_lost`): each duplicate
    /// ACK leaves the flight and counts as delivered, and the head is marked lost.
    pub linux_cong_control: bool,
}

impl Capabilities {
    /// A Classic window controller's: RFC 3168 ECN on new data with ECT(0), RTT samples as
    /// the flow takes them, no rate samples, a one-segment loss window.
    pub const fn window(recovery: Recovery) -> Self {
        Capabilities {
            recovery,
            ecn_feedback: EcnFeedback::Rfc3168,
            ect_codepoint: crate::packet::ecn::ECT0,
            ect_on_every_packet: false,
            rtt_every_ack_needed_by: None,
            rate_samples: false,
            loss_window_segments: 1,
            ack_delay: false,
            telemetry: None,
            own_clock: false,
            linux_cong_control: false,
        }
    }
}

pub trait CongestionControl {
    /// What the controller needs from the sender (read once, when the sender is built).
    fn capabilities(&self) -> Capabilities;
    /// Initial window in segments.
    fn initial_window(&self, mss: u64) -> u64;
    /// One ACK: update the window (and the controller's own state) from the record.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse;
    /// A congestion event: the slow-start threshold after it. The sender applies it as its
    /// procedure for the signal says (fast recovery, the loss window, once per window for ECN).
    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64;
    /// The controller's state for the `pacing` table; None for one without (window controllers).
    fn metrics(&self) -> Option<ControllerMetrics> {
        None
    }
    /// The flow's own seeded random stream, for a controller that draws (BBR's first gain
    /// phase); handed over once, before the connection opens.
    fn take_random_stream(&mut self, _rng: Rng) {}
    /// What the flow's path is like when idle (Swift's per-hop target scaling, HPCC's base
    /// RTT and line rate), handed over once, when the flow is built.
    fn take_path(&mut self, _path: &PathFacts) {}
    /// When the controller's own clock next changes what it sets, if it will
    /// (`Capabilities::own_clock`).
    fn wake_at(&self) -> Option<Time> {
        None
    }
    /// The controller's own clock came due at `now`: update the window, and say the pacing
    /// rate now.
    fn on_wake(&mut self, _w: &mut Window, _now: Time) -> AckResponse {
        AckResponse::default()
    }
}

/// The flow's forward path as the network was built, before any packet crossed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathFacts {
    /// Routers on the forward path (the links less one), as an IP TTL would count them.
    pub hops: u8,
    /// A full segment's round trip on the idle path: its serialization at every hop and the
    /// propagation out, an ACK's back.
    pub base_rtt: Dur,
    /// The rate of the sender's own link (its NIC's line rate).
    pub line_rate: BitRate,
}

/// RFC 5681 eq. 4: half the flight size, at least two segments.
pub fn half_flight(w: &Window) -> u64 {
    (w.flight / 2).max(2 * w.mss)
}

/// RFC 5681 section 3.1 initial window: 2, 3 or 4 segments by segment size.
pub fn rfc5681_initial_window(mss: u64) -> u64 {
    match mss {
        m if m > 2190 => 2,
        m if m > 1095 => 3,
        _ => 4,
    }
}

/// Slow start and congestion avoidance as RFC 5681 with appropriate byte counting (RFC 3465):
/// below ssthresh grow by the bytes acked up to `abc_limit` segments per ACK (L = 2 lets a
/// delayed-ACK receiver's sender double per RTT); above it grow by about one segment per RTT.
pub fn aimd_growth(w: &mut Window, acked: u64, abc_limit: u64) {
    if w.cwnd < w.ssthresh {
        w.cwnd += acked.min(abc_limit * w.mss);
    } else {
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
    }
}

/// A controller's place in `AnyCc`: inline, or `boxed` behind a pointer (see the registry).
macro_rules! cc_slot {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, boxed) => {
        Box<$ty>
    };
}

macro_rules! registry {
    ($($variant:ident: $name:literal => $module:ident::$ty:ident($cfg:ident) $($boxed:ident)?),+ $(,)?) => {
        /// A controller as written in a scenario: `"newreno"` or `{ kind = "newreno", ... }`.
        #[derive(Clone, Debug, Serialize)]
        // Deserialize: `tagged::deserialize_by_kind!` below, so that an error inside keeps its path.
        #[serde(tag = "kind")]
        pub enum CcSpec {
            $(#[serde(rename = $name)] $variant($module::$cfg),)+
        }

        pub enum AnyCc {
            $($variant(cc_slot!($module::$ty $(, $boxed)?)),)+
        }

        $crate::tagged::deserialize_by_kind!(CcSpec, $($name => $variant),+);

        impl CcSpec {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            pub fn build(&self) -> Result<AnyCc, ConfigError> {
                match self {
                    $(CcSpec::$variant(cfg) => Ok(AnyCc::$variant($module::$ty::new(cfg)?.into())),)+
                }
            }
            pub fn kind(&self) -> &'static str {
                match self { $(CcSpec::$variant(_) => $name,)+ }
            }
        }

        impl CongestionControl for AnyCc {
            fn capabilities(&self) -> Capabilities {
                match self { $(AnyCc::$variant(c) => c.capabilities(),)+ }
            }
            #[inline]
            fn initial_window(&self, mss: u64) -> u64 {
                match self { $(AnyCc::$variant(c) => c.initial_window(mss),)+ }
            }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
                match self { $(AnyCc::$variant(c) => c.on_ack(w, s),)+ }
            }
            #[inline]
            fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
                match self { $(AnyCc::$variant(c) => c.on_congestion(w, signal),)+ }
            }
            fn metrics(&self) -> Option<ControllerMetrics> {
                match self { $(AnyCc::$variant(c) => c.metrics(),)+ }
            }
            fn take_random_stream(&mut self, rng: Rng) {
                match self { $(AnyCc::$variant(c) => c.take_random_stream(rng),)+ }
            }
            fn take_path(&mut self, path: &PathFacts) {
                match self { $(AnyCc::$variant(c) => c.take_path(path),)+ }
            }
            fn wake_at(&self) -> Option<Time> {
                match self { $(AnyCc::$variant(c) => c.wake_at(),)+ }
            }
            fn on_wake(&mut self, w: &mut Window, now: Time) -> AckResponse {
                match self { $(AnyCc::$variant(c) => c.on_wake(w, now),)+ }
            }
        }
    };
}

// A controller whose state is larger than the window controllers' few fields is `boxed`, so
// that every sender holds `AnyCc` at the size of its largest inline variant rather than of
// BBR (a sender per flow: at 10,000 flows their size is memory and cache misses).
registry! {
    Tahoe: "tahoe" => tahoe::Tahoe(TahoeConfig),
    Reno: "reno" => reno::Reno(RenoConfig),
    NewReno: "newreno" => newreno::NewReno(NewRenoConfig),
    Fast: "fast" => fast::Fast(FastConfig) boxed,
    Vegas: "vegas" => vegas::Vegas(VegasConfig) boxed,
    Cubic: "cubic" => cubic::Cubic(CubicConfig) boxed,
    Dctcp: "dctcp" => dctcp::Dctcp(DctcpConfig) boxed,
    Bbr: "bbr" => bbr::Bbr(BbrConfig) boxed,
    Bbr3: "bbr3" => bbr3::Bbr3(Bbr3Config) boxed,
    Prague: "prague" => prague::Prague(PragueConfig) boxed,
    Ledbat: "ledbat" => ledbat::Ledbat(LedbatConfig) boxed,
    Copa: "copa" => copa::Copa(CopaConfig) boxed,
    Swift: "swift" => swift::Swift(SwiftConfig) boxed,
    Hpcc: "hpcc" => hpcc::Hpcc(HpccConfig) boxed,
    Dcqcn: "dcqcn" => dcqcn::Dcqcn(DcqcnConfig) boxed,
    Vivace: "vivace" => vivace::Vivace(VivaceConfig) boxed,
    Lia: "lia" => lia::Lia(LiaConfig) boxed,
    Olia: "olia" => olia::Olia(OliaConfig) boxed,
}

impl Default for CcSpec {
    fn default() -> Self {
        CcSpec::NewReno(Default::default())
    }
}

/// Accept a bare name (`cc = "reno"`) as well as a table (`cc = { kind = "reno", ... }`).
pub fn deserialize_cc<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CcSpec, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    let v = match v {
        serde_json::Value::String(name) => serde_json::json!({ "kind": name }),
        other => other,
    };
    CcSpec::deserialize(v).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod linux_flags_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tables_both_parse() {
        #[derive(Deserialize)]
        struct T {
            #[serde(deserialize_with = "deserialize_cc")]
            cc: CcSpec,
        }
        let t: T = serde_json::from_str(r#"{"cc":"tahoe"}"#).unwrap();
        assert_eq!(t.cc.kind(), "tahoe");
        let t: T = serde_json::from_str(r#"{"cc":{"kind":"newreno","initial_window":10}}"#).unwrap();
        assert_eq!(t.cc.build().unwrap().initial_window(1460), 10);
        let e = serde_json::from_str::<T>(r#"{"cc":"bbrx"}"#).err().unwrap().to_string();
        assert!(e.contains("unknown variant `bbrx`"), "{e}");
    }

    #[test]
    fn initial_window_follows_rfc5681() {
        assert_eq!(rfc5681_initial_window(536), 4);
        assert_eq!(rfc5681_initial_window(1460), 3);
        assert_eq!(rfc5681_initial_window(4000), 2);
    }
}
