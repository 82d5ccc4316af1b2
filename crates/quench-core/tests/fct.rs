//! The flows table's ideal completion time and slowdown (`fct.rs`) against closed forms of a
//! k = 4 fat-tree (Al-Fares et al., SIGCOMM 2008): a path between pods crosses host-edge,
//! edge-aggregation, aggregation-core and back down, 6 links each way.
//!
//! At 1 Gb/s a byte takes 8 ns, so every serialization is a whole number of nanoseconds and
//! the simulated completion and the closed form agree to the nanosecond.

mod common;
use common::*;
use serde_json::{json, Value};

/// Links each way between hosts in different pods of a fat-tree.
const HOPS_ACROSS_PODS: f64 = 6.0;
/// Links each way between hosts on the same edge switch.
const HOPS_SAME_EDGE: f64 = 2.0;
const DELAY_S: f64 = 10e-6;
const NS_PER_BYTE: f64 = 8.0; // at 1 Gb/s
/// IP and TCP headers and the timestamp option (on in the linux profile, which the flows
/// name): every segment's.
const OVERHEAD: f64 = 20.0 + 20.0 + 12.0;
/// The linux profile's SYN and SYN-ACK: IP and TCP headers and the options Linux's
/// `tcp_options_write` lays out (MSS 4, SACK-permitted with timestamps 12, NOP and window
/// scale 4).
const SYN_BYTES: f64 = 20.0 + 20.0 + 20.0;

fn fat_tree(flows: Value) -> Value {
    json!({
        "duration": "1s",
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "10us",
                        "qdisc": {"kind": "droptail", "limit": "100p"}, "multipath": "ecmp"}],
        "flows": flows,
    })
}

fn lone(src: &str, dst: &str, bytes: u64) -> Value {
    fat_tree(json!([{"kind": "tcp", "src": src, "dst": dst, "cc": "cubic", "bytes": bytes,
                        "tcp": {"profile": "linux"}}]))
}

/// The closed form: a round trip of the handshake's packets (SYN, SYN-ACK), then the first
/// segment over every hop and the others back to back (equal rates: no hop is slower).
fn closed_form_s(hops: f64, bytes: u64) -> f64 {
    let payload = 1448.0; // mss 1460 less the timestamp option
    let segments = (bytes as f64 / payload).ceil();
    let wire = bytes as f64 + segments * OVERHEAD;
    let first = (bytes as f64).min(payload) + OVERHEAD;
    let base_rtt = 2.0 * hops * DELAY_S + 2.0 * hops * SYN_BYTES * NS_PER_BYTE * 1e-9;
    base_rtt + hops * DELAY_S + (hops * first + wire - first) * NS_PER_BYTE * 1e-9
}

#[test]
fn the_base_rtt_across_pods_is_twelve_links_of_header_only_packets() {
    // 1 payload byte: 53 B on the wire. 12 x 10 us + 12 x 60 B x 8 ns = 125.76 us of
    // handshake, then 6 x 10 us + 6 x 53 B x 8 ns = 62.544 us of data.
    let r = run(&lone("h0", "h5", 1));
    let ideal = f64s(&r, "flows", "ideal_fct_s")[0];
    assert!((ideal - 188.304e-6).abs() < 1e-12, "{ideal}");
    assert!((ideal - closed_form_s(HOPS_ACROSS_PODS, 1)).abs() < 1e-12);
}

/// A flow within its initial window (10 segments) meets nothing on the idle fabric: it
/// completes exactly in its ideal time, slowdown 1.
#[test]
fn a_lone_flow_in_its_initial_window_completes_in_its_ideal_time() {
    for (dst, hops) in [("h5", HOPS_ACROSS_PODS), ("h1", HOPS_SAME_EDGE)] {
        for bytes in [1u64, 1448, 1449, 10_000, 14_480] {
            let r = run(&lone("h0", dst, bytes));
            let response = f64s(&r, "flows", "response_time_s")[0];
            let ideal = f64s(&r, "flows", "ideal_fct_s")[0];
            let want = closed_form_s(hops, bytes);
            assert!((ideal - want).abs() < 1e-12, "h0->{dst} {bytes} B: ideal {ideal} vs closed form {want}");
            assert_eq!((response * 1e9).round(), (ideal * 1e9).round(), "h0->{dst} {bytes} B");
            assert!((f64s(&r, "flows", "slowdown")[0] - 1.0).abs() < 1e-9);
        }
    }
}

/// Past the initial window the flow waits for ACKs: slower than the ideal, which assumes the
/// whole transfer in flight at once.
#[test]
fn a_flow_past_its_initial_window_takes_longer_than_its_ideal() {
    let r = run(&lone("h0", "h5", 200_000));
    let slowdown = f64s(&r, "flows", "slowdown")[0];
    assert!(slowdown > 1.0, "{slowdown}");
}

/// Flows without a size, or of a transport other than TCP, have no ideal; an unfinished flow
/// has no slowdown.
#[test]
fn undefined_ideals_and_slowdowns_are_nan() {
    let r = run(&fat_tree(json!([
        {"kind": "tcp", "src": "h0", "dst": "h5", "tcp": {"profile": "linux"}},
        {"kind": "udp", "src": "h1", "dst": "h6", "rate": "1Mbps"},
        {"kind": "tcp", "src": "h2", "dst": "h7", "bytes": "1GB", "tcp": {"profile": "linux"}},
    ])));
    let ideal = f64s(&r, "flows", "ideal_fct_s");
    let slowdown = f64s(&r, "flows", "slowdown");
    assert!(ideal[0].is_nan() && ideal[1].is_nan() && ideal[2].is_finite(), "{ideal:?}");
    assert!(slowdown.iter().all(|s| s.is_nan()), "{slowdown:?}");
}
