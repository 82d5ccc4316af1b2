//! TCP profiles (`tcp.profile`): named sets of defaults for a TCP flow's `tcp` table and its
//! controller, so that "the TCP of a current Linux kernel" or "the plain RFC sender" is one key.
//! A profile fills only what the scenario leaves out: every key written in the flow's `tcp` or
//! `cc` table overrides it. What this module owns: the profiles' values with their sources, and
//! the merge of a flow's written keys over them (`resolve`); it builds nothing.
//!
//! - `linux` (the default): a current Linux kernel's defaults (net/ipv4 sysctls and constants,
//!   cited at each value), CUBIC with Linux's HyStart (`hystart = "linux"`, tcp_cubic.c's
//!   `hystart = 1`, `hystart_detect = 3`) and an initial window of 10; Reno, NewReno, CUBIC,
//!   DCTCP and Prague grow as Linux's `tcp_slow_start` and `tcp_cong_avoid_ai` do (`growth =
//!   "linux"`: every acknowledged segment counts, in slow start and in congestion avoidance),
//!   and only while the window limits the sends (`cwnd_limited_growth = "linux"`); TCP Small
//!   Queues hold what a socket leaves in its host (`small_queues = "linux"`); the tail loss
//!   probe waits Linux's 2 ms beyond 2·SRTT (`probe_timeout = "linux"`); the receiver sends
//!   D-SACKs and RACK's reordering window adapts to them (`dsack = true`); without SACK, every
//!   partial ACK restarts the retransmission timer (`newreno_timer = "slow_but_steady"`).
//! - `ns3`: ns-3 3.44's defaults (src/internet/model: tcp-socket.cc, tcp-socket-base.cc,
//!   tcp-l4-protocol.cc, tcp-cubic.cc), so that a cross-check with ns-3 needs one line.
//! - `rfc`: the plain standards-track sender (RFC 5681 NewReno per RFC 6582, RFC 6298 timers
//!   with a 1 s minimum, RFC 1122 delayed ACKs, no options), and the historic behaviours the
//!   seed experiments build on by naming their controller and timers.
//!
//! Where quench cannot yet do what Linux does, the profile takes the nearest mechanism quench
//! has, and says so: delayed ACKs use Linux's minimum ACK timeout and its quick-ack mode but
//! not its adaptation of the timeout (`quickack.rs`); CUBIC's congestion avoidance counts
//! acknowledged segments as Linux's does but computes its target in floating point from the
//! smoothed RTT, not with `bictcp_update`'s integer `cnt` from the minimum RTT (of which it
//! takes the 5 % per RTT floor while no plateau is known); don't-fragment stays off, since
//! quench has no path MTU discovery to shrink the MSS where Linux's would. The ns3 profile
//! keeps RFC 3465's 2 segments per ACK in slow start and leaves HyStart off (see `fill_cc`).

use super::config::{
    CwndLimitedGrowth, DelayedAckConfig, LimitedTransmit, LocalDropReaction, LossDetection, NewRenoTimer, ProbeTimeout,
    RecoveryReduction, RtoConfig, RttSampling, SmallQueues, TcpConfig,
};
use crate::error::ConfigError;
use crate::packet::TCP_TIMESTAMP_OPTION;
use crate::units::{Bytes, Dur};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Linux `TCP_INIT_CWND` (include/net/tcp.h; RFC 6928): 10 segments.
const LINUX_INITIAL_WINDOW: u64 = 10;
/// Linux `TCP_RTO_MIN` (include/net/tcp.h): HZ/5.
const LINUX_RTO_MIN: Dur = Dur::from_millis(200);
/// Linux `TCP_RTO_MAX` (include/net/tcp.h): 120 s.
const LINUX_RTO_MAX: Dur = Dur::from_secs(120);
/// Linux `TCP_TIMEOUT_INIT` (include/net/tcp.h; RFC 6298): 1 s.
const LINUX_RTO_INITIAL: Dur = Dur::from_secs(1);
/// Linux `sysctl_tcp_retries2` (Documentation/networking/ip-sysctl.rst): 15. Linux turns it into
/// a time (`tcp_model_timeout`: what 15 backoffs from `TCP_RTO_MIN` take, about 924.6 s); quench
/// counts the backoffs themselves.
const LINUX_MAX_BACKOFFS: u32 = 15;
/// Linux `TCP_ATO_MIN` / `TCP_DELACK_MIN` (include/net/tcp.h): HZ/25, the delayed-ACK timeout
/// a connection starts with.
const LINUX_DELAYED_ACK_TIMEOUT: Dur = Dur::from_millis(40);
/// Linux `tcp_wmem[2]` (net/ipv4/tcp.c, `tcp_init`): 4 MiB, the most the send buffer grows to.
const LINUX_SEND_BUFFER: Bytes = Bytes(4 << 20);
/// Linux `tcp_rmem[2]` (net/ipv4/tcp.c, `tcp_init`): 6 MiB, the most the receive buffer grows to;
/// Linux advertises less than its buffer (`tcp_win_from_space`), quench the whole of it.
const LINUX_RECEIVE_WINDOW: Bytes = Bytes(6 << 20);
/// Controllers whose Linux module grows by `tcp_slow_start` and `tcp_cong_avoid_ai`
/// (`tcp_reno_cong_avoid`: tcp_cong.c's Reno, tcp_dctcp.c; `cubictcp_cong_avoid`; Prague's
/// Reno-style increase), the ones with a `growth` key.
const LINUX_GROWTH: [&str; 5] = ["reno", "newreno", "cubic", "dctcp", "prague"];
/// ns-3 `TcpSocket::InitialCwnd`: 10 segments.
const NS3_INITIAL_WINDOW: u64 = 10;
/// Controllers whose first window is their own design, not a host's setting: HPCC starts at
/// line rate for one base RTT (Li et al. 2019, section 3.3) and DCQCN at line rate (Zhu et al.
/// 2015, section 3.1), which no profile's segment count may replace.
const OWN_INITIAL_WINDOW: &[&str] = &["hpcc", "dcqcn"];
/// ns-3 `TcpSocket::SegmentSize`: 536 bytes of payload (RFC 879's default MSS); ns-3 adds the
/// timestamp option on top, where quench's `mss` includes it (Linux's accounting).
const NS3_MSS: u32 = 536 + TCP_TIMESTAMP_OPTION;
/// ns-3 `TcpSocket::SndBufSize` and `RcvBufSize`: 128 KiB.
const NS3_BUFFER: Bytes = Bytes(128 << 10);
/// ns-3 `TcpSocket::DataRetries`: 6 retransmissions before the connection gives up.
const NS3_MAX_BACKOFFS: u32 = 6;
/// Controllers that cannot work without ECN: DCTCP (RFC 8257 section 3: "DCTCP requires
/// ECN") and Prague (L4S, RFC 9331). Their Linux modules set `TCP_CONG_NEEDS_ECN` (tcp_dctcp.c,
/// and tcp_prague.c out of tree), so the connection negotiates ECN whatever `tcp_ecn` says, and
/// ns-3's `TcpDctcp::Init` turns its socket's `UseEcn` on: every profile does the same. DCQCN's
/// only signal is the switches' ECN mark (Zhu et al. 2015, section 3), so it is one of them.
const NEEDS_ECN: [&str; 3] = ["dctcp", "prague", "dcqcn"];

/// A named set of TCP defaults (`tcp.profile`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// A current Linux kernel's defaults.
    #[default]
    Linux,
    /// ns-3 3.44's defaults.
    Ns3,
    /// The plain RFC sender, as quench's experiments of the 1988-2006 papers assume.
    Rfc,
}

impl Profile {
    pub const NAMES: [&'static str; 3] = ["linux", "ns3", "rfc"];

    /// The `tcp` table this profile gives a flow that writes none of its keys.
    pub fn tcp(self) -> TcpConfig {
        match self {
            Profile::Rfc => TcpConfig::default(),
            Profile::Linux => TcpConfig {
                profile: Profile::Linux,
                send_buffer: LINUX_SEND_BUFFER,
                receive_window: LINUX_RECEIVE_WINDOW,
                rto: RtoConfig {
                    min: LINUX_RTO_MIN,
                    max: LINUX_RTO_MAX,
                    initial: LINUX_RTO_INITIAL,
                    max_backoffs: LINUX_MAX_BACKOFFS,
                    ..RtoConfig::default()
                },
                // Quick-ack mode (`quickack.rs`): every segment ACKed at the start of a connection.
                delayed_ack: DelayedAckConfig {
                    timeout: LINUX_DELAYED_ACK_TIMEOUT,
                    quick_ack: true,
                    ..DelayedAckConfig::default()
                },
                // `tcp_sack` = 1, `tcp_timestamps` = 1 (ip-sysctl.rst).
                sack: true,
                timestamps: true,
                rtt_sampling: RttSampling::EveryAck,
                // In Disorder Linux sends new data while `tcp_packets_in_flight` (the pipe)
                // leaves room in cwnd: RFC 6675's form of Limited Transmit.
                limited_transmit: LimitedTransmit::Rfc6675,
                // `tcp_recovery` = 1 (RACK) and `tcp_early_retrans` = 3 (TLP), ip-sysctl.rst;
                // the probe waits 2·SRTT + `TCP_TIMEOUT_MIN` (`tcp_schedule_loss_probe`).
                loss_detection: LossDetection::Rack,
                probe_timeout: ProbeTimeout::Linux,
                // Without SACK (`tcp.sack = false`), every ACK that advances snd_una rearms the
                // RTO (`tcp_set_xmit_timer`; no loss probe without SACK): RFC 6582's
                // Slow-but-Steady variant.
                newreno_timer: NewRenoTimer::SlowButSteady,
                // `tcp_dsack` = 1 (ip-sysctl.rst): duplicates reported (`tcp_dsack_set`), and
                // RACK's window adapts to them (`tcp_rack_update_reo_wnd`).
                dsack: true,
                // TCP Small Queues (`tcp_small_queue_check`, on since 3.6): the socket stops
                // writing while more than about 1 ms at its pacing rate waits in its host.
                small_queues: SmallQueues::Linux,
                // `tcp_is_cwnd_limited` (tcp_cong_avoid's gate): with TSQ holding the sends,
                // a window that does not limit them must not grow.
                cwnd_limited_growth: CwndLimitedGrowth::Linux,
                // `tcp_cwnd_reduction` (tcp_input.c): the slow-start bound only on an ACK that
                // advances snd_una without a new loss, as RFC 9937 states it.
                recovery: RecoveryReduction::PrrRfc9937,
                // `tcp_transmit_skb` enters CWR when the qdisc drops the segment.
                local_drop: LocalDropReaction::LinuxCwr,
                ..TcpConfig::default()
            },
            Profile::Ns3 => TcpConfig {
                profile: Profile::Ns3,
                mss: NS3_MSS,
                send_buffer: NS3_BUFFER,
                receive_window: NS3_BUFFER,
                // `MinRto` 1 s, `RttEstimator::InitialEstimation` 1 s, the RTO's ×4 variance
                // (tcp-socket-base.cc), and a 60 s ceiling on the backed-off RTO.
                rto: RtoConfig { max_backoffs: NS3_MAX_BACKOFFS, ..RtoConfig::default() },
                // `Sack` and `Timestamp` true; `DelAckCount` 2 and `DelAckTimeout` 200 ms.
                sack: true,
                timestamps: true,
                rtt_sampling: RttSampling::EveryAck,
                // With SACK, ns-3 sends while cwnd exceeds BytesInFlight (the pipe): RFC 6675's
                // form (its `LimitedTransmit` attribute acts only without SACK).
                limited_transmit: LimitedTransmit::Rfc6675,
                // `TcpL4Protocol::RecoveryType` = TcpPrrRecovery; no RACK in ns-3.
                recovery: RecoveryReduction::Prr,
                ..TcpConfig::default()
            },
        }
    }

    /// The controller of a flow that names none.
    fn default_cc(self) -> Value {
        match self {
            // `tcp_congestion_control` = "cubic" (net/ipv4/Kconfig, DEFAULT_TCP_CONG).
            Profile::Linux => serde_json::json!({ "kind": "cubic" }),
            // `TcpL4Protocol::SocketType` = TcpCubic.
            Profile::Ns3 => serde_json::json!({ "kind": "cubic" }),
            Profile::Rfc => serde_json::json!({ "kind": "newreno" }),
        }
    }

    /// Fill the keys of a controller's table that this profile sets and the flow left out.
    fn fill_cc(self, cc: &mut Map<String, Value>) {
        let initial_window = match self {
            Profile::Linux => LINUX_INITIAL_WINDOW,
            Profile::Ns3 => NS3_INITIAL_WINDOW,
            Profile::Rfc => return,
        };
        let kind = cc.get("kind").and_then(Value::as_str);
        if !kind.is_some_and(|k| OWN_INITIAL_WINDOW.contains(&k)) {
            fill(cc, "initial_window", Value::from(initial_window));
        }
        if self == Profile::Linux {
            Self::fill_linux_growth(cc);
        }
    }

    /// tcp_cubic.c's `hystart` = 1 (the ns3 profile leaves HyStart off: `quench ns3`
    /// translates only its absence), and Linux's per-segment growth for the controllers that
    /// use it, with CUBIC's jiffy clock (`hz`) where its arithmetic is Linux's, so that a
    /// resolved scenario shows the clock it runs on. ns-3 3.44 grows otherwise
    /// (`TcpCubic::IncreaseWindow` adds every acknowledged segment in slow start without
    /// stopping at ssthresh and drops the rest of the ACK; `TcpNewReno::CongestionAvoidance`
    /// adds SMSS²/cwnd per ACK), so the ns3 profile keeps the rfc5681 rule. A flow that writes
    /// `abc_limit` asks for RFC 3465's rule and keeps it.
    fn fill_linux_growth(cc: &mut Map<String, Value>) {
        let kind = cc.get("kind").and_then(Value::as_str).unwrap_or_default().to_owned();
        if kind == "cubic" {
            fill(cc, "hystart", Value::from("linux"));
        }
        let abc_written = cc.get("abc_limit").is_some_and(|v| !v.is_null());
        if LINUX_GROWTH.contains(&kind.as_str()) && !abc_written {
            fill(cc, "growth", Value::from("linux"));
        }
        if kind == "cubic" && cc.get("growth").and_then(Value::as_str) == Some("linux") {
            fill(cc, "hz", Value::from(crate::cc::cubic_linux::DEFAULT_HZ));
        }
    }

    /// The profile's SACK-based mechanisms stand down where the flow turned SACK off, or named
    /// Tahoe, which has no fast recovery for them to serve: loss detection by duplicate ACKs
    /// (RACK needs SACK, RFC 8985 section 3) and Limited Transmit by RFC 3042's count (the
    /// pipe of RFC 6675 needs SACK), as a Linux connection without SACK falls back to counting
    /// duplicate ACKs (`tcp_add_reno_sack`). Keys the flow wrote are left alone.
    fn fit_sackless(self, written: &mut Map<String, Value>, cc_kind: Option<&str>) {
        let sack_off = written.get("sack") == Some(&Value::Bool(false)) || cc_kind == Some("tahoe");
        if self == Profile::Rfc || !sack_off {
            return;
        }
        fill(written, "loss_detection", Value::from("dupack"));
        fill(written, "limited_transmit", Value::Bool(true));
    }
}

/// Set `key` unless the table has it. A `null` is kept: it is how a resolved scenario writes an
/// option left at the controller's own default (RFC 5681's initial window under `rfc`), and
/// it must read back the same.
fn fill(table: &mut Map<String, Value>, key: &str, value: Value) {
    table.entry(key).or_insert(value);
}

/// Merge `over` into `base`, key by key, tables recursively.
fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// A flow's `tcp` and `cc` values after its profile: the profile's tables with the flow's
/// written keys over them. `tcp` must be a table (or absent); `cc` a name, a table or absent.
pub fn resolve(tcp: Option<Value>, cc: Option<Value>) -> Result<(Value, Value), ConfigError> {
    let mut written = match tcp {
        None => Map::new(),
        Some(Value::Object(t)) => t,
        Some(other) => {
            return Err(ConfigError::new("tcp", format!("expected a table, found {}", crate::units::describe(&other))))
        }
    };
    let profile = match written.remove("profile") {
        None => Profile::default(),
        Some(v) => Profile::deserialize(&v).map_err(|_| {
            let why = format!("unknown profile {v}: expected one of {}", Profile::NAMES.join(", "));
            ConfigError::new("tcp.profile", why)
        })?,
    };
    let mut cc = match cc {
        None => profile.default_cc(),
        Some(Value::String(name)) => serde_json::json!({ "kind": name }),
        Some(other) => other,
    };
    if let Value::Object(table) = &mut cc {
        profile.fill_cc(table);
    }
    let Ok(Value::Object(mut tcp)) = serde_json::to_value(profile.tcp()) else {
        unreachable!("a TcpConfig serializes to a table")
    };
    let cc_kind = cc.get("kind").and_then(Value::as_str);
    fill_tcp_for_cc(&mut written, cc_kind)?;
    profile.fit_sackless(&mut written, cc_kind);
    merge(&mut tcp, written);
    Ok((Value::Object(tcp), cc))
}

/// Fill the `tcp` keys that depend on the controller: ECN for one that needs it, in every
/// profile; a flow that writes `ecn = false` for it is refused rather than run as another
/// controller (without ECN, DCTCP is Reno with a useless estimator).
fn fill_tcp_for_cc(tcp: &mut Map<String, Value>, cc_kind: Option<&str>) -> Result<(), ConfigError> {
    let Some(kind) = cc_kind.filter(|k| NEEDS_ECN.contains(k)) else {
        return Ok(());
    };
    if tcp.get("ecn") == Some(&Value::Bool(false)) {
        let why = format!("{kind} needs ECN (RFC 8257 section 3, Linux's TCP_CONG_NEEDS_ECN): leave ecn on");
        return Err(ConfigError::new("tcp.ecn", why));
    }
    fill(tcp, "ecn", Value::Bool(true));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resolved(tcp: Value, cc: Value) -> (TcpConfig, Value) {
        let (tcp, cc) = resolve((!tcp.is_null()).then_some(tcp), (!cc.is_null()).then_some(cc)).unwrap();
        (serde_json::from_value(tcp).unwrap(), cc)
    }

    /// A flow that writes nothing gets Linux: CUBIC with Linux's HyStart and growth and IW 10,
    /// SACK, timestamps, RACK-TLP with Linux's probe timeout, TCP Small Queues, growth only
    /// while the window limits, PRR, 200 ms minimum RTO, 40 ms delayed-ACK timeout.
    #[test]
    fn nothing_written_is_linux() {
        let (tcp, cc) = resolved(Value::Null, Value::Null);
        assert_eq!(tcp.profile, Profile::Linux);
        assert_eq!(
            cc,
            json!({"kind": "cubic", "initial_window": 10, "hystart": "linux", "growth": "linux", "hz": 1000})
        );
        assert!(tcp.sack && tcp.timestamps && !tcp.ecn);
        assert_eq!(tcp.loss_detection, LossDetection::Rack);
        assert_eq!(tcp.probe_timeout, ProbeTimeout::Linux);
        assert_eq!(tcp.newreno_timer, NewRenoTimer::SlowButSteady);
        assert!(tcp.dsack, "tcp_dsack = 1");
        assert_eq!(tcp.small_queues, SmallQueues::Linux);
        assert_eq!(tcp.cwnd_limited_growth, CwndLimitedGrowth::Linux);
        assert_eq!(tcp.recovery, RecoveryReduction::PrrRfc9937);
        assert_eq!((tcp.rto.min, tcp.rto.initial, tcp.rto.max), (LINUX_RTO_MIN, Dur::from_secs(1), LINUX_RTO_MAX));
        assert_eq!(tcp.delayed_ack.timeout, Dur::from_millis(40));
        assert!(tcp.delayed_ack.quick_ack, "Linux's quick-ack mode");
        assert_eq!(tcp.segment_payload(), 1448, "Linux's payload with timestamps on a 1500-byte MTU");
    }

    /// Written keys win, in nested tables too; the rfc profile is quench's plain sender.
    #[test]
    fn written_keys_override_the_profile() {
        let (tcp, cc) = resolved(json!({"sack": false, "rto": {"min": "1s"}}), json!("newreno"));
        assert!(!tcp.sack && tcp.timestamps);
        assert_eq!((tcp.rto.min, tcp.rto.max), (Dur::from_secs(1), LINUX_RTO_MAX));
        assert_eq!(cc, json!({"kind": "newreno", "initial_window": 10, "growth": "linux"}));
        let (_, cc) = resolved(json!({}), json!({"kind": "cubic", "hystart": false, "initial_window": 4}));
        assert_eq!(cc, json!({"kind": "cubic", "hystart": false, "initial_window": 4, "growth": "linux", "hz": 1000}));
        // A written clock is kept; none is filled where the arithmetic is RFC 9438's.
        let (_, cc) = resolved(json!({}), json!({"kind": "cubic", "hz": 250}));
        assert_eq!(cc["hz"], json!(250));
        // A written abc_limit keeps RFC 3465's rule; HyStart++ stays available by name.
        let (_, cc) = resolved(json!({}), json!({"kind": "dctcp", "abc_limit": 2}));
        assert_eq!(cc, json!({"kind": "dctcp", "abc_limit": 2, "initial_window": 10}));
        // A null (a resolved scenario's "left at the default") is not a written limit.
        let (_, cc) = resolved(json!({}), json!({"kind": "reno", "abc_limit": null}));
        assert_eq!(cc, json!({"kind": "reno", "abc_limit": null, "initial_window": 10, "growth": "linux"}));
        let (_, cc) = resolved(json!({}), json!({"kind": "cubic", "hystart": "rfc9406", "growth": "rfc5681"}));
        assert_eq!(cc, json!({"kind": "cubic", "hystart": "rfc9406", "growth": "rfc5681", "initial_window": 10}));
        // Controllers without Linux's Reno-style growth get no growth key.
        let (_, cc) = resolved(json!({}), json!("vegas"));
        assert_eq!(cc, json!({"kind": "vegas", "initial_window": 10}));
        // HPCC's first window is line rate for one base RTT: no profile sets it.
        let (_, cc) = resolved(json!({}), json!("hpcc"));
        assert_eq!(cc, json!({"kind": "hpcc"}));
        let (tcp, cc) = resolved(json!({"profile": "rfc"}), Value::Null);
        assert_eq!(serde_json::to_value(&tcp).unwrap(), serde_json::to_value(Profile::Rfc.tcp()).unwrap());
        assert_eq!(cc, json!({"kind": "newreno"}));
    }

    /// Every profile turns ECN on for a controller that needs it (Linux's
    /// `TCP_CONG_NEEDS_ECN`, ns-3's `TcpDctcp::Init`); writing it off is refused.
    #[test]
    fn dctcp_and_prague_negotiate_ecn_in_every_profile() {
        for profile in ["linux", "ns3", "rfc"] {
            for cc in ["dctcp", "prague"] {
                assert!(resolved(json!({"profile": profile}), json!(cc)).0.ecn, "{profile} {cc}");
            }
        }
        assert!(!resolved(json!({"profile": "rfc"}), json!("newreno")).0.ecn);
        let e = resolve(Some(json!({"ecn": false})), Some(json!("dctcp"))).unwrap_err().to_string();
        assert!(e.starts_with("tcp.ecn: dctcp needs ECN"), "{e}");
    }

    /// ns-3 3.44: CUBIC (HyStart left off, see `fill_cc`), IW 10, 536 bytes of payload, SACK and timestamps, PRR, no RACK, 1 s
    /// minimum RTO.
    #[test]
    fn the_ns3_profile_is_ns3s_defaults() {
        let (tcp, cc) = resolved(json!({"profile": "ns3"}), Value::Null);
        assert_eq!(cc, json!({"kind": "cubic", "initial_window": 10}));
        assert_eq!(tcp.segment_payload(), 536, "ns-3's SegmentSize, the option on top");
        assert_eq!((tcp.send_buffer, tcp.receive_window), (Bytes(131_072), Bytes(131_072)));
        assert!(tcp.sack && tcp.timestamps && !tcp.ecn);
        assert_eq!((tcp.loss_detection, tcp.recovery), (LossDetection::Dupack, RecoveryReduction::Prr));
        assert!(!tcp.dsack, "TcpSocketBase sends no D-SACK");
        assert_eq!((tcp.rto.min, tcp.rto.max, tcp.rto.max_backoffs), (Dur::from_secs(1), Dur::from_secs(60), 6));
        assert_eq!(tcp.delayed_ack.timeout, Dur::from_millis(200));
        assert!(!tcp.delayed_ack.quick_ack, "tcp-socket-base.cc delays from the first segment");
    }

    /// SACK turned off (or Tahoe named) under Linux: duplicate ACKs and RFC 3042 instead of
    /// the profile's RACK and pipe-based Limited Transmit, unless written.
    #[test]
    fn without_sack_the_profile_falls_back_to_duplicate_acks() {
        for (tcp, cc) in [(json!({"sack": false}), json!("cubic")), (json!({}), json!("tahoe"))] {
            let (t, _) = resolved(tcp, cc);
            assert_eq!((t.loss_detection, t.limited_transmit), (LossDetection::Dupack, LimitedTransmit::Rfc3042));
        }
        let (t, _) = resolved(json!({"sack": false, "limited_transmit": false}), json!("cubic"));
        assert_eq!(t.limited_transmit, LimitedTransmit::Off);
        let (t, _) = resolved(json!({}), json!("cubic"));
        assert_eq!(t.loss_detection, LossDetection::Rack);
    }

    #[test]
    fn an_unknown_profile_is_named() {
        let e = resolve(Some(json!({"profile": "bsd"})), None).unwrap_err();
        assert_eq!(e.path, "tcp.profile");
        assert!(e.message.starts_with("unknown profile \"bsd\""), "{}", e.message);
    }
}
