//! Congestion control, apart from TCP's reliability machinery (smoltcp's split). TCP owns the
//! sequence space, timers and loss detection; a controller owns how the window grows and how
//! far it falls. `recovery()` tells TCP which loss-recovery procedure to run after three
//! duplicate ACKs, because that is what distinguishes Tahoe, Reno and NewReno.
//!
//! Adding a controller is one file (config with `deny_unknown_fields`, `new(&cfg)`, the trait
//! impl, tests) plus one line in `registry!` below.

pub mod cubic;
pub mod dctcp;
pub mod fast;
pub mod newreno;
pub mod prague;
pub mod reno;
pub mod tahoe;
pub mod vegas;

use crate::error::ConfigError;
use crate::units::{Dur, Time};
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
    /// The ECT codepoint on this controller's ECN-capable data (`packet::ecn`): ECT(0) for a
    /// Classic controller (RFC 3168), ECT(1) for a scalable one (RFC 9331 section 4.1).
    fn ect_codepoint(&self) -> u8 {
        crate::packet::ecn::ECT0
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

macro_rules! registry {
    ($($variant:ident: $name:literal => $module:ident::$ty:ident($cfg:ident)),+ $(,)?) => {
        /// A controller as written in a scenario: `"newreno"` or `{ kind = "newreno", ... }`.
        #[derive(Clone, Debug, Serialize)]
        // Deserialize: `tagged::deserialize_by_kind!` below, so that an error inside keeps its path.
        #[serde(tag = "kind")]
        pub enum CcSpec {
            $(#[serde(rename = $name)] $variant($module::$cfg),)+
        }

        pub enum AnyCc {
            $($variant($module::$ty),)+
        }

        $crate::tagged::deserialize_by_kind!(CcSpec, $($name => $variant),+);

        impl CcSpec {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            pub fn build(&self) -> Result<AnyCc, ConfigError> {
                match self {
                    $(CcSpec::$variant(cfg) => Ok(AnyCc::$variant($module::$ty::new(cfg)?)),)+
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
            fn ect_codepoint(&self) -> u8 {
                match self { $(AnyCc::$variant(c) => c.ect_codepoint(),)+ }
            }
        }
    };
}

registry! {
    Tahoe: "tahoe" => tahoe::Tahoe(TahoeConfig),
    Reno: "reno" => reno::Reno(RenoConfig),
    NewReno: "newreno" => newreno::NewReno(NewRenoConfig),
    Fast: "fast" => fast::Fast(FastConfig),
    Vegas: "vegas" => vegas::Vegas(VegasConfig),
    Cubic: "cubic" => cubic::Cubic(CubicConfig),
    Dctcp: "dctcp" => dctcp::Dctcp(DctcpConfig),
    Prague: "prague" => prague::Prague(PragueConfig),
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
        let e = serde_json::from_str::<T>(r#"{"cc":"bbr"}"#).err().unwrap().to_string();
        assert!(e.contains("unknown variant `bbr`"), "{e}");
    }

    #[test]
    fn initial_window_follows_rfc5681() {
        assert_eq!(rfc5681_initial_window(536), 4);
        assert_eq!(rfc5681_initial_window(1460), 3);
        assert_eq!(rfc5681_initial_window(4000), 2);
    }
}
