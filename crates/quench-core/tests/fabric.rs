//! Generated fabrics end to end: a permutation of TCP flows on a k = 4 fat-tree (every host
//! sends one flow and receives one) runs to completion under every multipath policy, with
//! the queue disciplines and controllers of listed links, none of them written for fabrics.
//! Reference: closed forms of the fat-tree (Al-Fares et al., SIGCOMM 2008): a flow between
//! pods crosses 6 links each way, and under ECMP exactly those 12.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Hosts of a k = 4 fat-tree.
const HOSTS: u64 = 16;
/// Each flow's host `i` sends to host `i + SHIFT`: 5 hosts on, always another edge switch and,
/// but for pods' last hosts, another pod.
const SHIFT: u64 = 5;

fn permutation(multipath: &str, cc: &str, qdisc: Value) -> Value {
    let tcp = if cc == "dctcp" { json!({"sack": true, "ecn": true}) } else { json!({"sack": true}) };
    let flows: Vec<Value> = (0..HOSTS)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("h{i}"), "dst": format!("h{}", (i + SHIFT) % HOSTS),
                        "cc": cc, "bytes": "500KB", "tcp": tcp})
        })
        .collect();
    json!({
        "duration": "2s", "seed": 3,
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "10us", "qdisc": qdisc,
                        "multipath": multipath, "core": {"rate": "400Mbps"}}],
        "flows": flows,
        "record": {"flow_links": true, "queues": false, "cwnd": false, "rtt": false}
    })
}

/// Per flow, the links it crossed (from `flow_links`).
fn links_per_flow(r: &quench_core::RunResult) -> BTreeMap<u64, usize> {
    let mut per_flow = BTreeMap::new();
    for f in u64s(r, "flow_links", "flow") {
        *per_flow.entry(f).or_default() += 1;
    }
    per_flow
}

fn pods_apart(i: u64) -> bool {
    i / 4 != (i + SHIFT) % HOSTS / 4
}

#[test]
fn a_permutation_completes_under_ecmp_with_each_flow_on_one_path() {
    let r = run(&permutation("ecmp", "cubic", json!({"kind": "droptail", "limit": "100p"})));
    let done = f64s(&r, "flows", "completion_s");
    assert_eq!(done.len() as u64, HOSTS);
    assert!(done.iter().all(|c| c.is_finite()), "every flow completes: {done:?}");
    for (f, crossed) in links_per_flow(&r) {
        let want = if pods_apart(f) { 12 } else { 8 };
        assert_eq!(crossed, want, "flow {f}: one path each way (data and ACKs)");
    }
}

/// Spraying spreads each flow over every equal-cost path; TCP (SACK) rides out the reordering.
#[test]
fn a_permutation_completes_when_packets_are_sprayed() {
    for qdisc in [json!({"kind": "droptail", "limit": "100p"}), json!({"kind": "fq_codel"})] {
        let r = run(&permutation("spray", "newreno", qdisc.clone()));
        let done = f64s(&r, "flows", "completion_s");
        assert!(done.iter().all(|c| c.is_finite()), "{qdisc}: every flow completes: {done:?}");
        for (f, crossed) in links_per_flow(&r) {
            if pods_apart(f) {
                assert!(crossed > 12, "{qdisc}: flow {f} was sprayed over more than one path ({crossed} links)");
            }
        }
    }
}

#[test]
fn a_fabric_run_is_deterministic() {
    for policy in ["spray_random", "spray_flow"] {
        let sc = permutation(
            policy,
            "dctcp",
            json!({"kind": "red", "min_th": 20, "max_th": 21, "max_p": 1.0, "w_q": 1.0,
                                                    "limit": "100p", "signal": "mark", "forced": "mark"}),
        );
        let (a, b) = (run(&sc), run(&sc));
        assert_eq!(f64s(&a, "flows", "completion_s"), f64s(&b, "flows", "completion_s"), "{policy}");
        assert_eq!(u64s(&a, "flow_links", "arrived_packets"), u64s(&b, "flow_links", "arrived_packets"), "{policy}");
        assert!(f64s(&a, "flows", "completion_s").iter().all(|c| c.is_finite()), "{policy}");
    }
}
