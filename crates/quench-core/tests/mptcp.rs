//! Multipath TCP (RFC 8684) with coupled congestion control (RFC 6356 LIA), end to end.

mod common;
use common::*;
use serde_json::{json, Value};

fn two_paths(flows: Value) -> Value {
    json!({
        "duration": "2s", "hosts": ["a", "b"], "routers": ["r"],
        "links": [{"from": "a", "to": "r", "rate": "10Mbps", "delay": "1ms"},
                  {"from": "r", "to": "b", "rate": "10Mbps", "delay": "1ms"}],
        "flows": flows
    })
}

#[test]
fn smoke() {
    let r = run(&two_paths(json!([{"kind": "mptcp", "src": "a", "dst": "b", "bytes": "1MB", "subflows": 4}])));
    for c in ["bytes_delivered", "completion_s", "retransmitted_segments", "final_cwnd_bytes", "srtt_s"] {
        eprintln!("{c}: {:?}", f64s(&r, "flows", c));
    }
}

const K: u64 = 8;
const TCP: &str = r#"{"sack": true, "rto": {"min": "1ms"}}"#;

fn permutation(flow: Value) -> Value {
    json!({
        "duration": "0.1s", "seed": 1,
        "topologies": [{"kind": "fat_tree", "k": K, "rate": "1Gbps", "delay": "10us",
                        "qdisc": {"kind": "droptail", "limit": "100p"}, "multipath": "ecmp"}],
        "workloads": [{"matrix": "permutation", "size": "10GB", "flow": flow, "name": "perm"}],
        "record": {"queues": false, "cwnd": false, "rtt": false, "segments": false, "drops": false, "sojourn": false}
    })
}

#[test]
fn fabric() {
    let tcp: Value = serde_json::from_str(TCP).unwrap();
    let ideal = (K * K * K / 4) as f64 * 1e9 * 1460.0 / 1500.0;
    for (label, flow) in [
        ("tcp", json!({"kind": "tcp", "cc": "newreno", "tcp": tcp})),
        ("mptcp lia 8", json!({"kind": "mptcp", "subflows": 8, "tcp": tcp})),
        ("mptcp uncoupled 8", json!({"kind": "mptcp", "subflows": 8, "coupling": "uncoupled", "tcp": tcp})),
    ] {
        let t = std::time::Instant::now();
        let r = run(&permutation(flow));
        let g = f64s(&r, "flows", "goodput_bps");
        let sum: f64 = g.iter().sum();
        let min = g.iter().cloned().fold(f64::MAX, f64::min);
        eprintln!(
            "{label}: {} flows, aggregate {:.2} Gb/s = {:.3} of ideal, min {:.0} Mb/s, retx {}, wall {:?}",
            g.len(),
            sum / 1e9,
            sum / ideal,
            min / 1e6,
            f64s(&r, "flows", "retransmitted_segments").iter().sum::<f64>(),
            t.elapsed()
        );
    }
}
