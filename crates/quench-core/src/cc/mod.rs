//! Congestion control, apart from TCP's reliability machinery (smoltcp's split). TCP owns the
//! sequence space, timers and loss detection; a controller owns how the window grows and how
//! far it falls. `recovery()` tells TCP which loss-recovery procedure to run after three
//! duplicate ACKs, because that is what distinguishes Tahoe, Reno and NewReno.
//!
//! Two kinds of controller share the trait, as in Linux's `tcp_congestion_ops`. A window
//! controller (Reno to DCTCP) grows the window per ACK (`on_ack`) and says how far it falls
//! (`ssthresh_after`); TCP's recovery procedures do the rest. A model-based controller (BBR)
//! answers `model_based()` with true: the sender then measures a [`RateSample`] on every ACK
//! (delivery-rate estimation, `transport/tcp/sender/rate.rs`) and hands it to `control`, which
//! sets the window in every state and returns the pacing rate (Linux's `cong_control` hook).
//!
//! Adding a controller is one file (config with `deny_unknown_fields`, `new(&cfg)`, the trait
//! impl, tests) plus one line in `registry!` below.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod fast;
pub mod hystart;
pub mod newreno;
pub mod prague;
pub mod reno;
pub mod tahoe;
pub mod vegas;

use crate::error::ConfigError;
use crate::rng::Rng;
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

/// What one ACK of new data tells the controller.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// An RTT measurement carried by this ACK, if any (Karn's rule applied).
    pub rtt: Option<Dur>,
    /// The sender's smoothed RTT (RFC 6298) after this ACK, once it has a sample.
    pub srtt: Option<Dur>,
    /// Of `acked`, the bytes this ACK acknowledges with ECN-Echo set: all of them or none
    /// (RFC 8257 section 3.3's "bytes acknowledged with ECE"; zero without ECN).
    pub ece_bytes: u64,
}

/// What ECN-Echo on an ACK means, and so how the receiver sets it (the controller says which).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnFeedback {
    /// RFC 3168: ECE from a CE mark until CWR arrives; the sender reduces once per window by
    /// the controller's `ssthresh_after(Signal::EcnEcho)`.
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

/// A model-based controller's answer to one ACK, besides the window it sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelOutput {
    /// The pacing rate of payload; None: no pacing.
    pub pacing_rate: Option<BitRate>,
    /// Samples taken until what is in flight now is delivered are to be marked app-limited
    /// (BBR's PROBE_RTT: its deliberately low rate must not lower the bandwidth estimate).
    pub app_limited: bool,
}

/// A model-based controller's state as the `pacing` table records it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelState {
    pub pacing_rate: BitRate,
    /// The bandwidth estimate (payload).
    pub bandwidth: BitRate,
    pub min_rtt: Option<Dur>,
    /// The state machine's mode, an index into the controller's own list of mode names.
    pub mode: u8,
    /// The phase within the mode's gain cycle (BBR's PROBE_BW: 0-7), 0 elsewhere.
    pub cycle_phase: u8,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
}

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

pub trait CongestionControl {
    fn recovery(&self) -> Recovery;
    /// Initial window in segments.
    fn initial_window(&self, mss: u64) -> u64;
    /// Grow the window for an ACK of new data outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample);
    /// The slow-start threshold after a congestion signal.
    fn ssthresh_after(&mut self, w: &Window, signal: Signal) -> u64;
    /// The window after a retransmission timeout (the loss window).
    fn window_after_timeout(&self, w: &Window) -> u64 {
        w.mss
    }
    /// The ECN feedback this controller needs from the receiver.
    fn ecn_feedback(&self) -> EcnFeedback {
        EcnFeedback::Rfc3168
    }
    /// True for a model-based controller: the sender builds a rate sample per ACK and calls
    /// `control` (and never `on_ack`).
    fn model_based(&self) -> bool {
        false
    }
    /// A model-based controller's response to every ACK, new or duplicate, in every state,
    /// after the sender's loss detection: set `w.cwnd`, return the pacing rate.
    fn control(&mut self, _w: &mut Window, _rs: &RateSample) -> ModelOutput {
        ModelOutput::default()
    }
    /// A model-based controller's state, for the `pacing` table.
    fn model_state(&self) -> Option<ModelState> {
        None
    }
    /// The flow's own seeded random stream, for a controller that draws (BBR's first gain
    /// phase); handed over once, before the connection opens.
    fn take_random_stream(&mut self, _rng: Rng) {}
    /// The mechanism that needs an RTT sample on every ACK (HyStart++, Vegas), if any: the
    /// flow's `tcp.rtt_sampling = "every_ack"` provides them; checked when the flow is built.
    fn rtt_every_ack_needed_by(&self) -> Option<&'static str> {
        None
    }
    /// The ECT codepoint on this controller's ECN-capable data (`packet::ecn`): ECT(0) for a
    /// Classic controller (RFC 3168), ECT(1) for a scalable one (RFC 9331 section 4.1).
    fn ect_codepoint(&self) -> u8 {
        crate::packet::ecn::ECT0
    }
    /// Whether every packet of an ECN connection carries the ECT codepoint, the SYN, the
    /// SYN-ACK, pure ACKs and retransmissions included, rather than new data only (RFC 3168
    /// section 6.1.1/6.1.5). Linux does so for a controller flagged `TCP_CONG_NEEDS_ECN`
    /// (`tcp_assign_congestion_control` sets ECT on the socket, `tcp_ecn_send_syn` before the
    /// SYN) and clears it again when the handshake does not agree on ECN.
    fn ect_on_every_packet(&self) -> bool {
        false
    }
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
            #[inline]
            fn recovery(&self) -> Recovery {
                match self { $(AnyCc::$variant(c) => c.recovery(),)+ }
            }
            #[inline]
            fn initial_window(&self, mss: u64) -> u64 {
                match self { $(AnyCc::$variant(c) => c.initial_window(mss),)+ }
            }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
                match self { $(AnyCc::$variant(c) => c.on_ack(w, s),)+ }
            }
            #[inline]
            fn ssthresh_after(&mut self, w: &Window, signal: Signal) -> u64 {
                match self { $(AnyCc::$variant(c) => c.ssthresh_after(w, signal),)+ }
            }
            #[inline]
            fn window_after_timeout(&self, w: &Window) -> u64 {
                match self { $(AnyCc::$variant(c) => c.window_after_timeout(w),)+ }
            }
            fn ecn_feedback(&self) -> EcnFeedback {
                match self { $(AnyCc::$variant(c) => c.ecn_feedback(),)+ }
            }
            #[inline]
            fn model_based(&self) -> bool {
                match self { $(AnyCc::$variant(c) => c.model_based(),)+ }
            }
            #[inline]
            fn control(&mut self, w: &mut Window, rs: &RateSample) -> ModelOutput {
                match self { $(AnyCc::$variant(c) => c.control(w, rs),)+ }
            }
            fn model_state(&self) -> Option<ModelState> {
                match self { $(AnyCc::$variant(c) => c.model_state(),)+ }
            }
            fn take_random_stream(&mut self, rng: Rng) {
                match self { $(AnyCc::$variant(c) => c.take_random_stream(rng),)+ }
            }
            fn rtt_every_ack_needed_by(&self) -> Option<&'static str> {
                match self { $(AnyCc::$variant(c) => c.rtt_every_ack_needed_by(),)+ }
            }
            fn ect_codepoint(&self) -> u8 {
                match self { $(AnyCc::$variant(c) => c.ect_codepoint(),)+ }
            }
            fn ect_on_every_packet(&self) -> bool {
                match self { $(AnyCc::$variant(c) => c.ect_on_every_packet(),)+ }
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
    Prague: "prague" => prague::Prague(PragueConfig) boxed,
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
