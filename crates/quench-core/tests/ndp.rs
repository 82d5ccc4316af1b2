//! NDP over trimming queues (Handley et al., SIGCOMM 2017), end to end, against closed forms:
//! one flow alone finishes at the line rate from its first packet (its bytes at the bottleneck
//! plus the first packet's one-way delay); an incast of N senders into one receiver through
//! trimming switches completes every flow without a timeout, the last within 10 % of the total
//! bytes at the receiver's link rate plus a round trip (the paper's incast figure), where TCP
//! over drop-tail queues of the same size times out; and every packet sent is accounted for.
//! Run with `--nocapture` for the figures docs/validation.md reports.

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

/// 10 Gb/s everywhere, 1 µs per link: a data-centre star.
const RATE_BPS: f64 = 10e9;
const LINK_DELAY_S: f64 = 1e-6;
/// NDP's full packet on the wire and its payload (`packet::ndp::HEADER_BYTES` = 64).
const FULL: f64 = 1500.0;
const MSS: u64 = 1436;
const HEADER: f64 = 64.0;

fn tx_s(bytes: f64) -> f64 {
    bytes * 8.0 / RATE_BPS
}

/// Run, checking the link identities a trimming queue keeps: packets as every queue; bytes
/// with the payload trimmed off (between one byte and a full payload per trim, none where
/// nothing was trimmed).
fn run_trimming(sc: &Value) -> RunResult {
    let r = quench_core::Simulation::from_json(&sc.to_string()).unwrap_or_else(|e| panic!("{e}")).run();
    let c = |col: &str| u64s(&r, "links", col);
    let (arr, dep, drop, back) =
        (c("arrived_packets"), c("departed_packets"), c("dropped_packets"), c("backlog_packets"));
    let (arr_b, dep_b, drop_b, back_b) =
        (c("arrived_bytes"), c("departed_bytes"), c("dropped_bytes"), c("backlog_bytes"));
    let trims = c("marked_packets");
    for i in 0..arr.len() {
        assert_eq!(arr[i], dep[i] + drop[i] + back[i], "link {i}: packets");
        let cut = arr_b[i] - dep_b[i] - drop_b[i] - back_b[i];
        assert!((trims[i]..=trims[i] * MSS).contains(&cut), "link {i}: {cut} bytes cut by {} trims", trims[i]);
    }
    r
}

/// Hosts s0..s{n-1} and d around one switch; every link 10 Gb/s, 1 µs. The switch's ports
/// have `qdisc`; the hosts' own queues are drop-tail of 1000 packets (a host's queue is not a
/// switch's: htsim's hosts send through a plain FIFO too).
fn star(n: usize, qdisc: &Value) -> Value {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    hosts.push("d".into());
    let links: Vec<Value> = hosts
        .iter()
        .map(|h| json!({"from": h, "to": "sw", "rate": "10Gbps", "delay": "1us", "reverse_qdisc": qdisc}))
        .collect();
    json!({"duration": "1s", "hosts": hosts, "routers": ["sw"], "links": links, "flows": []})
}

fn trim() -> Value {
    json!({"kind": "trim"})
}

/// One flow alone: no trim, no retransmission, and the receiver's last byte at the closed
/// form: the first packet's one-way delay (serialized at both hops, two propagation delays)
/// then every other packet one after the other at the line rate. The initial window (15
/// packets, 18 µs) covers the round trip (about 6.5 µs), so the line stays busy from the start.
#[test]
fn a_lone_flow_finishes_at_the_line_rate_from_the_first_packet() {
    for bytes in [14_360u64, 143_600, 1_000_000] {
        let mut sc = star(1, &trim());
        sc["flows"] = json!([{"kind": "ndp", "src": "s0", "dst": "d", "bytes": format!("{bytes}B")}]);
        let r = run_trimming(&sc);
        let packets = bytes.div_ceil(MSS);
        let last = (bytes - (packets - 1) * MSS) as f64 + HEADER;
        // The first packet crosses both hops, the others follow it back to back.
        let closed = match packets {
            1 => 2.0 * (tx_s(last) + LINK_DELAY_S),
            n => 2.0 * (tx_s(FULL) + LINK_DELAY_S) + (n - 2) as f64 * tx_s(FULL) + tx_s(last),
        };
        let fct = flow_value(&r, 0, "response_time_s");
        eprintln!("lone flow {bytes} B: fct {:.3} us, closed form {:.3} us", fct * 1e6, closed * 1e6);
        assert!((fct - closed).abs() <= tx_s(FULL), "{bytes} B: fct {fct} vs {closed}");
        // The flows table's ideal (`fct.rs`) is the same closed form.
        assert!((flow_value(&r, 0, "ideal_fct_s") - closed).abs() < 1e-12);
        assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
        assert_eq!(flow_value(&r, 0, "bytes_delivered"), bytes as f64);
    }
}

/// Sizes from 64 KB to 450 KB, spread evenly over the senders.
fn incast_sizes(n: usize) -> Vec<u64> {
    (0..n).map(|i| 64_000 + (450_000 - 64_000) * i as u64 / (n as u64 - 1).max(1)).collect()
}

fn incast(n: usize, kind: &str, qdisc: &Value) -> Value {
    let mut sc = star(n, qdisc);
    let flows: Vec<Value> = incast_sizes(n)
        .iter()
        .enumerate()
        .map(|(i, b)| json!({"kind": kind, "src": format!("s{i}"), "dst": "d", "bytes": format!("{b}B")}))
        .collect();
    sc["flows"] = json!(flows);
    sc
}

/// The ideal last completion: every flow's wire bytes (full packets of 1500 bytes, the last
/// shorter) back to back at the receiver's link, plus a base round trip.
fn incast_ideal_s(n: usize) -> f64 {
    let wire: u64 = incast_sizes(n).iter().map(|b| b + b.div_ceil(MSS) * HEADER as u64).sum();
    let rtt = 2.0 * (2.0 * (tx_s(FULL) + LINK_DELAY_S));
    tx_s(wire as f64) + rtt
}

fn last_fct(r: &RunResult) -> f64 {
    f64s(r, "flows", "response_time_s").into_iter().fold(0.0, f64::max)
}

fn sum(r: &RunResult, col: &str) -> f64 {
    f64s(r, "flows", col).iter().sum()
}

#[test]
fn incast_completes_every_flow_near_the_ideal_without_timeouts() {
    for n in [8, 16, 32] {
        let r = run_trimming(&incast(n, "ndp", &trim()));
        let fcts = f64s(&r, "flows", "response_time_s");
        assert!(fcts.iter().all(|f| f.is_finite()), "N={n}: every flow completes: {fcts:?}");
        let (last, ideal) = (last_fct(&r), incast_ideal_s(n));
        let trimmed = link_value(&r, "sw->d", "marked_packets");
        eprintln!(
            "NDP incast N={n}: last fct {:.1} us, ideal {:.1} us ({:+.2} %), trims at sw->d {trimmed}, \
             NACKs {}, timeouts {}",
            last * 1e6,
            ideal * 1e6,
            (last / ideal - 1.0) * 100.0,
            sum(&r, "fast_retransmits"),
            sum(&r, "timeouts")
        );
        assert_eq!(sum(&r, "timeouts"), 0.0, "N={n}: no timeout");
        assert!(trimmed > 0.0, "N={n}: the incast must overflow the 8-packet data queue");
        check_rel(&format!("NDP incast N={n}: last completion"), last, ideal, 0.10);
    }
}

/// The same incast with TCP (the Linux profile) over drop-tail queues of NDP's 8 packets:
/// the burst overflows the receiver's queue, and flows wait out retransmission timeouts.
#[test]
fn tcp_over_the_same_drop_tail_incast_times_out() {
    for n in [8, 16, 32] {
        let mut sc = incast(n, "tcp", &json!({"kind": "droptail", "limit": "8p"}));
        for f in sc["flows"].as_array_mut().unwrap() {
            f["tcp"] = json!({"profile": "linux"});
        }
        sc["duration"] = json!("5s");
        let r = run(&sc);
        let (last, ideal) = (last_fct(&r), incast_ideal_s(n));
        let timeouts = sum(&r, "timeouts");
        eprintln!(
            "TCP incast N={n}: last fct {:.1} us, ideal {:.1} us ({:.1}x), drops at sw->d {}, timeouts {timeouts}",
            last * 1e6,
            ideal * 1e6,
            last / ideal,
            link_value(&r, "sw->d", "dropped_packets")
        );
        assert!(timeouts > 0.0, "N={n}: TCP times out");
        assert!(last > 2.0 * ideal, "N={n}: and finishes far from the ideal");
    }
}

/// Conservation: every data packet a sender sent either arrived whole (the receiver counts it),
/// or was trimmed on the way (a NACK the sender counts, one per trim at a switch), or was lost
/// (a header dropped; its retransmission timed out). With no header dropped: sent = received
/// whole + trimmed, and the retransmissions are exactly the NACKed packets.
#[test]
fn every_packet_sent_is_received_whole_or_trimmed() {
    let r = run_trimming(&incast(16, "ndp", &trim()));
    let sent = sum(&r, "packets_sent");
    let whole = sum(&r, "packets_received");
    let nacks = sum(&r, "fast_retransmits");
    let trims: f64 = f64s(&r, "links", "marked_packets").iter().sum();
    let header_drops: f64 = f64s(&r, "links", "dropped_packets").iter().sum();
    eprintln!("conservation: sent {sent} = received whole {whole} + trimmed {trims}; NACKs {nacks}");
    assert_eq!(header_drops, 0.0);
    assert_eq!(sent, whole + trims);
    assert_eq!(nacks, trims);
    assert_eq!(sum(&r, "retransmitted_segments"), nacks);
}

#[test]
fn bad_ndp_and_trim_keys_are_named() {
    let mut sc = star(1, &trim());
    sc["flows"] = json!([{"kind": "ndp", "src": "s0", "dst": "d", "ndp": {"initial_window": 0}}]);
    expect_error(sc.clone(), "flows[0].ndp.initial_window", "at least 1");
    let mut sc = star(1, &json!({"kind": "trim", "header_weight": 0}));
    sc["flows"] = json!([{"kind": "ndp", "src": "s0", "dst": "d"}]);
    let e = config_error(&sc);
    assert!(e.path.ends_with("header_weight"), "{e}");
}

/// An incast across a leaf-spine fabric whose routers spray every packet over the four
/// spines: 16 senders in two other leaves into h0, every link 10 Gb/s and 1 µs, every port
/// trimming (the access tier's too, so a sender's own 8-packet queue trims part of its initial
/// window). Ideal: the wire bytes at h0's link plus the 4-hop base round trip.
#[test]
fn incast_across_a_sprayed_leaf_spine_completes_near_the_ideal() {
    let n = 16;
    let flows: Vec<Value> = incast_sizes(n)
        .iter()
        .enumerate()
        .map(|(i, b)| json!({"kind": "ndp", "src": format!("h{}", 8 + i), "dst": "h0", "bytes": format!("{b}B")}))
        .collect();
    let sc = json!({
        "duration": "1s",
        "topologies": [{"kind": "leaf_spine", "hosts_per_leaf": 8, "leaves": 3, "spines": 4,
                        "rate": "10Gbps", "delay": "1us", "qdisc": trim(), "multipath": "spray"}],
        "flows": flows
    });
    let r = run_trimming(&sc);
    let wire: u64 = incast_sizes(n).iter().map(|b| b + b.div_ceil(MSS) * HEADER as u64).sum();
    let ideal = tx_s(wire as f64) + 2.0 * 4.0 * (tx_s(FULL) + LINK_DELAY_S);
    let last = last_fct(&r);
    let trims: f64 = f64s(&r, "links", "marked_packets").iter().sum();
    eprintln!(
        "leaf-spine NDP incast N={n}: last fct {:.1} us, ideal {:.1} us ({:+.2} %), trims {trims}, timeouts {}",
        last * 1e6,
        ideal * 1e6,
        (last / ideal - 1.0) * 100.0,
        sum(&r, "timeouts")
    );
    assert!(f64s(&r, "flows", "response_time_s").iter().all(|f| f.is_finite()));
    assert_eq!(sum(&r, "timeouts"), 0.0);
    check_rel("leaf-spine NDP incast N=16: last completion", last, ideal, 0.10);
}
