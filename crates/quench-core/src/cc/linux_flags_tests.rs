//! Each controller's `capabilities()`, and whether it paces, against what the corresponding
//! Linux congestion-control module declares. The expected values are read from Linux's sources
//! (v6.6 `net/ipv4/`, `include/net/tcp.h`; Prague from the L4S team's out-of-tree
//! `net/ipv4/tcp_prague.c`), one row per module, in Linux's own terms:
//!
//! - `needs_ecn`: `.flags` has `TCP_CONG_NEEDS_ECN` ("Requires ECN/ECT set on all packets",
//!   `tcp.h`), so `tcp_assign_congestion_control`/`tcp_ecn_send_syn` put ECT on every packet:
//!   our `ect_on_every_packet`.
//! - `ce_echo_per_segment`: the receiver echoes each segment's CE state rather than RFC 3168's
//!   latch: DCTCP's `dctcp_cwnd_event` on `CA_EVENT_ECN_IS_CE`/`CA_EVENT_ECN_NO_CE` through
//!   `dctcp_ece_ack_update` (`tcp_dctcp.h`), Prague's `TCP_CONG_NEEDS_ACCECN`: our
//!   `EcnFeedback::Accurate`.
//! - `ect1`: data carries ECT(1): Prague's `prague_init` sets `TCP_ECN_ECT_1`: our
//!   `ect_codepoint`.
//! - `cong_control`: the module has a `.cong_control` hook, called on every ACK with the
//!   `rate_sample` (`tcp_cong_control` in `tcp_input.c`), instead of `.cong_avoid`: our
//!   `rate_samples`.
//! - `pacing`: `.init` sets `sk_pacing_status` to `SK_PACING_NEEDED` (`bbr_init`,
//!   `prague_init`) and the module sets `sk_pacing_rate`: our `on_ack` answers with a pacing
//!   rate.
//!
//! Controllers without a Linux module (Tahoe, FAST, LEDBAT, Copa) have no row. Where ours
//! departs from Linux on purpose, the departure is listed with its reason, so that the test
//! fails both when a controller drifts from Linux and when a listed departure is closed.
//! Tests only: it builds each controller from its defaults and reads its declarations; it drives no
//! sender and no world.

use super::*;
use crate::packet::ecn;
use crate::rng::Rng;

/// What a Linux congestion-control module declares, in the terms above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LinuxFlags {
    needs_ecn: bool,
    ce_echo_per_segment: bool,
    ect1: bool,
    cong_control: bool,
    pacing: bool,
}

const NONE: LinuxFlags =
    LinuxFlags { needs_ecn: false, ce_echo_per_segment: false, ect1: false, cong_control: false, pacing: false };

/// (our controller, Linux module, what the module declares).
const LINUX: &[(&str, &str, LinuxFlags)] = &[
    // tcp_cong.c `tcp_reno`: `.flags = TCP_CONG_NON_RESTRICTED`, `.cong_avoid =
    // tcp_reno_cong_avoid`; no `.init`. Linux's Reno recovers as NewReno does; both map here.
    ("reno", "tcp_cong.c tcp_reno", NONE),
    ("newreno", "tcp_cong.c tcp_reno", NONE),
    // tcp_cubic.c `cubictcp`: no `.flags`, `.cong_avoid = cubictcp_cong_avoid`.
    ("cubic", "tcp_cubic.c cubictcp", NONE),
    // tcp_vegas.c `tcp_vegas`: no `.flags`, `.cong_avoid = tcp_vegas_cong_avoid`.
    ("vegas", "tcp_vegas.c tcp_vegas", NONE),
    // tcp_dctcp.c `dctcp`: `.flags = TCP_CONG_NEEDS_ECN`, `.cwnd_event = dctcp_cwnd_event`
    // (CE echo per segment), `.cong_avoid = tcp_reno_cong_avoid`; ECT(0) (`INET_ECN_xmit`).
    (
        "dctcp",
        "tcp_dctcp.c dctcp",
        LinuxFlags { needs_ecn: true, ce_echo_per_segment: true, ect1: false, cong_control: false, pacing: false },
    ),
    // tcp_bbr.c `tcp_bbr_cong_ops`: `.flags = TCP_CONG_NON_RESTRICTED`, `.cong_control =
    // bbr_main`; `bbr_init` sets `SK_PACING_NEEDED`, `bbr_set_pacing_rate` the rate.
    ("bbr", "tcp_bbr.c tcp_bbr_cong_ops", LinuxFlags { cong_control: true, pacing: true, ..NONE }),
    // tcp_prague.c `prague`: `.flags = TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN |
    // TCP_CONG_NON_RESTRICTED`, `.cong_control = prague_cong_control`; `prague_init` sets
    // `TCP_ECN_ECT_1` and `SK_PACING_NEEDED`, `prague_update_pacing_rate` the rate.
    (
        "prague",
        "tcp_prague.c prague",
        LinuxFlags { needs_ecn: true, ce_echo_per_segment: true, ect1: true, cong_control: true, pacing: true },
    ),
];

/// Where our controller departs from its Linux module on purpose: (controller, flag, why).
const DEPARTURES: &[(&str, &str, &str)] = &[
    // prague.rs "Left out": ECT on the handshake and pure ACKs is not modelled.
    ("prague", "needs_ecn", "ECT(1) on data only"),
    // prague.rs "Left out": a window controller on DCTCP's rule, without the rate sample...
    ("prague", "cong_control", "a window controller"),
    // ...and without a controller-set pacing rate (`tcp.pacing` paces at cwnd/srtt).
    ("prague", "pacing", "no controller-set pacing rate"),
];

fn controller(name: &str) -> AnyCc {
    let spec: CcSpec = serde_json::from_value(serde_json::json!({ "kind": name })).unwrap();
    let mut cc = spec.build().unwrap();
    cc.take_random_stream(Rng::from_seed(1));
    cc
}

/// Whether the controller answers ACKs with a pacing rate: a few ACKs of a 1,460-byte segment
/// 10 ms apart, with a rate sample when the controller asks for one.
fn paces(cc: &mut AnyCc) -> bool {
    let mss = 1460;
    let mut w = Window { cwnd: 10 * mss, ssthresh: u64::MAX, mss, flight: 10 * mss, peer_window: u64::MAX };
    let rate_samples = cc.capabilities().rate_samples;
    (1..=20u64).any(|i| {
        let now = Time::ZERO + Dur::from_millis(10 * i);
        let rtt = Some(Dur::from_millis(10));
        let rs = RateSample {
            now,
            delivered: mss,
            interval: rtt,
            prior_delivered: (i - 1) * mss,
            total_delivered: i * mss,
            acked_sacked: mss,
            rtt,
            inflight: w.flight,
            prior_inflight: w.flight,
            srtt: rtt,
            ..RateSample::default()
        };
        let s = AckSample {
            now,
            acked: mss,
            rtt,
            srtt: rtt,
            ece_bytes: 0,
            rate: rate_samples.then_some(&rs),
            ack_delay: None,
            telemetry: None,
        };
        cc.on_ack(&mut w, &s).pacing_rate.is_some()
    })
}

fn ours(name: &str) -> LinuxFlags {
    let mut cc = controller(name);
    let caps = cc.capabilities();
    LinuxFlags {
        needs_ecn: caps.ect_on_every_packet,
        ce_echo_per_segment: caps.ecn_feedback == EcnFeedback::Accurate,
        ect1: caps.ect_codepoint == ecn::ECT1,
        cong_control: caps.rate_samples,
        pacing: paces(&mut cc),
    }
}

fn flag(f: &LinuxFlags, name: &str) -> bool {
    match name {
        "needs_ecn" => f.needs_ecn,
        "ce_echo_per_segment" => f.ce_echo_per_segment,
        "ect1" => f.ect1,
        "cong_control" => f.cong_control,
        "pacing" => f.pacing,
        _ => unreachable!("{name}"),
    }
}

const FLAGS: [&str; 5] = ["needs_ecn", "ce_echo_per_segment", "ect1", "cong_control", "pacing"];

#[test]
fn capabilities_match_the_linux_modules_flags() {
    let mut differ = Vec::new();
    for &(name, module, linux) in LINUX {
        let ours = ours(name);
        for f in FLAGS {
            if flag(&ours, f) != flag(&linux, f) {
                differ.push((name, f, module));
            }
        }
    }
    let listed: Vec<(&str, &str)> = DEPARTURES.iter().map(|&(c, f, _)| (c, f)).collect();
    let found: Vec<(&str, &str)> = differ.iter().map(|&(c, f, _)| (c, f)).collect();
    assert_eq!(found, listed, "differences from Linux (controller, flag): {differ:?}");
}

/// Every controller with a Linux row is one the registry builds, and the ECN codepoints the
/// flags are read from are RFC 3168's (ECT(0) = 0b10, ECT(1) = 0b01).
#[test]
fn the_rows_name_registered_controllers() {
    for &(name, _, _) in LINUX {
        assert!(CcSpec::NAMES.contains(&name), "{name}");
    }
    assert_eq!((ecn::ECT0, ecn::ECT1), (0b10, 0b01));
}
