//! The receiver and the handshake as Linux has them, checked by hand on tiny paths: Linux's
//! quick-ack mode (net/ipv4/tcp_input.c), the options a SYN carries in its size (Linux's
//! `tcp_options_write`), and options used only when both ends support them (RFC 2018 section
//! 2, RFC 7323 section 3.2, RFC 3168 section 6.1.1).
//! Path: host a, 100 Mb/s and 1 ms to router r, 8 Mb/s and 10 ms on to host b (each link both
//! ways), no loss unless a test shrinks the bottleneck's queue: a drop at the sender's own
//! host queue would be a local drop, which the linux profile does not lose.

mod common;
use common::*;
use serde_json::{json, Value};

/// Linux's payload of a full segment with timestamps on a 1500-byte MTU.
const PAYLOAD: u64 = 1448;

fn two_hosts(limit: &str, tcp: Value, bytes: u64) -> Value {
    json!({
        "duration": "5s", "hosts": ["a", "b"], "routers": ["r"],
        "links": [{"from": "a", "to": "r", "rate": "100Mbps", "delay": "1ms"},
                  {"from": "r", "to": "b", "rate": "8Mbps", "delay": "10ms",
                   "qdisc": {"kind": "droptail", "limit": limit}}],
        "flows": [{"kind": "tcp", "src": "a", "dst": "b", "bytes": format!("{bytes}B"), "cc": "newreno",
                   "tcp": tcp}]
    })
}

/// The packets and bytes the receiver sent: everything on b->r.
fn receiver_sent(r: &quench_core::RunResult) -> (f64, f64) {
    (link_value(r, "b->r", "departed_packets"), link_value(r, "b->r", "departed_bytes"))
}

/// 40 full segments, no loss, IW 10 growing each round, so no window ends on an odd segment
/// and no delayed-ACK timer fires. With quick-ack: the first 16 segments are ACKed one by
/// one (TCP_MAX_QUICKACKS; 6 MiB / (2 · 1448) grants more), the other 24 in pairs (the 40th
/// carries the FIN): 16 + 12 = 28 ACKs and the SYN-ACK. Without: 20 ACKs and the SYN-ACK.
#[test]
fn quick_ack_acks_the_first_sixteen_segments_one_by_one() {
    let bytes = 40 * PAYLOAD;
    let r = run(&two_hosts("1000p", json!({"profile": "linux"}), bytes));
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), bytes as f64);
    assert_eq!(receiver_sent(&r).0, 1.0 + 16.0 + 12.0);
    let off = json!({"profile": "linux", "delayed_ack": {"quick_ack": false}});
    let r = run(&two_hosts("1000p", off, bytes));
    assert_eq!(receiver_sent(&r).0, 1.0 + 20.0);
}

/// The rfc profile has no quick-ack (RFC 1122 4.2.3.2's every-second-segment rule only).
#[test]
fn the_rfc_profile_acks_every_second_segment_from_the_start() {
    let r = run(&two_hosts("1000p", json!({"profile": "rfc", "mss": 1448}), 40 * PAYLOAD));
    assert_eq!(receiver_sent(&r).0, 1.0 + 20.0);
}

/// The linux SYN: 20 + 20 + 20 option bytes (mss, sackOK + TS, nop + wscale); the SYN-ACK
/// the same. Every ACK: 40 + 12 (timestamps), no SACK blocks without loss. The sender's
/// link: the SYN, then 40 full segments of 1500 bytes.
#[test]
fn linux_syns_carry_twenty_option_bytes() {
    let r = run(&two_hosts("1000p", json!({"profile": "linux"}), 40 * PAYLOAD));
    let (acks, ack_bytes) = receiver_sent(&r);
    assert_eq!(ack_bytes, 60.0 + 52.0 * (acks - 1.0));
    assert_eq!(link_value(&r, "a->r", "departed_bytes"), 60.0 + 40.0 * 1500.0);
}

/// A receiver without SACK or timestamps: its SYN-ACK carries only mss and wscale (48 bytes),
/// its ACKs no option at all (40 bytes) even after losses, where the default receiver's carry
/// SACK blocks; the sender then fills whole 1460-byte segments (no timestamp option) while
/// its SYN still offers everything (60 bytes).
#[test]
fn a_receiver_without_sack_or_timestamps_sends_neither() {
    let bytes = 400 * 1460;
    let tcp = json!({"profile": "linux", "receiver": {"sack": false, "timestamps": false}});
    let r = run(&two_hosts("5p", tcp, bytes));
    assert!(link_value(&r, "r->b", "dropped_packets") > 0.0, "the 5-packet queue should overflow");
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), bytes as f64);
    let (acks, ack_bytes) = receiver_sent(&r);
    assert_eq!(ack_bytes, 48.0 + 40.0 * (acks - 1.0), "no option on any ACK");
    let data = link_value(&r, "a->r", "departed_packets") - 1.0;
    let retransmitted = flow_value(&r, 0, "retransmitted_segments");
    assert_eq!(data, 400.0 + retransmitted, "whole 1460-byte segments");
    assert_eq!(link_value(&r, "a->r", "departed_bytes"), 60.0 + 1500.0 * data);
    let r = run(&two_hosts("5p", json!({"profile": "linux"}), bytes));
    let (acks, ack_bytes) = receiver_sent(&r);
    let drops = link_value(&r, "r->b", "dropped_packets");
    assert!(
        ack_bytes > 60.0 + 52.0 * (acks - 1.0),
        "the default receiver SACKs: {ack_bytes} B in {acks} ACKs, {drops} drops"
    );
}

/// ECN requested by the sender but not supported by the receiver: the SYN-ACK declines, no
/// segment is ECN-capable, and a marking RED drops instead (RFC 3168 section 6.1.1).
#[test]
fn a_receiver_without_ecn_declines_it() {
    let red = json!({"kind": "red", "mode": "packets", "min_th": 5, "max_th": 15, "limit": 30,
                     "max_p": 0.1, "signal": "mark"});
    let mut sc = two_hosts("30p", json!({"profile": "linux", "ecn": true}), 2_000_000);
    sc["links"][1]["qdisc"] = red;
    let r = run(&sc);
    assert!(link_value(&r, "r->b", "marked_packets") > 0.0, "both ends agree: marks");
    sc["flows"][0]["tcp"]["receiver"] = json!({"ecn": false});
    let r = run(&sc);
    assert_eq!(link_value(&r, "r->b", "marked_packets"), 0.0);
    assert!(link_value(&r, "r->b", "drops_early") > 0.0, "the same decisions are drops");
}
