//! Fair queueing end to end (fq, drr, sfq) on a 10 Mb/s dumbbell: backlogged UDP flows with
//! different packet sizes and rates each get C/N (Jain index ≥ 0.99), a flow below its fair
//! share gets all it sends (max-min fairness), and TCP flows with different RTTs share fairly
//! over fq but not over drop-tail. References: DKS '89 (docs/mechanisms.md#fair-queueing), SV95,
//! McKenney '90; the max-min allocation is computed by hand below.

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

/// Bottleneck rate, bit/s.
const C_BPS: f64 = 10e6;
/// IP + UDP headers (RFC 791, RFC 768): a UDP payload of p bytes is a p + 28 byte datagram.
const UDP_IP_HEADERS: u64 = 28;
const DURATION_S: f64 = 20.0;

fn disciplines() -> Vec<Value> {
    vec![
        json!({"kind": "fq", "limit": "100p"}),
        json!({"kind": "drr", "limit": "100p", "quantum": "1500B"}),
        json!({"kind": "sfq", "limit": "100p", "buckets": 1024, "quantum": "1500B", "perturb": "5s"}),
    ]
}

/// CBR UDP flows s_i -> d with IP datagram sizes `sizes` at `rates` (bit/s of datagrams).
fn udp_dumbbell(qdisc: Value, sizes: &[u64], rates: &[&str]) -> Value {
    let mut sc = dumbbell(sizes.len(), "100Mbps", "1ms", "10Mbps", "10ms", qdisc);
    sc["duration"] = json!(format!("{DURATION_S}s"));
    sc["flows"] = (0..sizes.len())
        .map(|i| {
            json!({"kind": "udp", "src": format!("s{i}"), "dst": "d", "rate": rates[i],
                   "size": format!("{}B", sizes[i] - UDP_IP_HEADERS), "start": format!("{}ms", i)})
        })
        .collect();
    sc
}

/// Throughput of each UDP flow in IP bit/s (what the bottleneck divides).
fn udp_throughputs(r: &RunResult, sizes: &[u64]) -> Vec<f64> {
    let received = u64s(r, "flows", "packets_received");
    sizes.iter().zip(&received).map(|(s, n)| (s * n * 8) as f64 / DURATION_S).collect()
}

#[test]
fn backlogged_udp_flows_with_different_sizes_get_equal_shares() {
    let sizes = [200, 576, 1500];
    let rates = ["5Mbps", "8Mbps", "12Mbps"];
    let fair = C_BPS / sizes.len() as f64;
    for q in disciplines() {
        let kind = q["kind"].as_str().unwrap().to_string();
        let r = run(&udp_dumbbell(q, &sizes, &rates));
        let x = udp_throughputs(&r, &sizes);
        let j = jain(&x);
        eprintln!("{kind}: throughputs {x:.0?} bit/s, Jain {j:.5}");
        assert!(j >= 0.99, "{kind}: Jain {j}");
        for (i, xi) in x.iter().enumerate() {
            check_rel(&format!("{kind} flow {i} vs C/N"), *xi, fair, 0.005);
        }
    }
    let r = run(&udp_dumbbell(json!({"kind": "droptail", "limit": "100p"}), &sizes, &rates));
    let x = udp_throughputs(&r, &sizes);
    eprintln!("droptail: throughputs {x:.0?} bit/s, Jain {:.5}", jain(&x));
    assert!(jain(&x) < 0.95, "drop-tail shares roughly in proportion to the offered rates");
}

/// Max-min by hand: 1 Mb/s < C/3, so the small flow is satisfied and the other two split the
/// remaining 9 Mb/s: 4.5 Mb/s each.
#[test]
fn a_flow_below_its_fair_share_gets_all_it_sends() {
    let sizes = [576, 1500, 200];
    let rates = ["1Mbps", "8Mbps", "8Mbps"];
    let expected = [1e6, 4.5e6, 4.5e6];
    for q in disciplines() {
        let kind = q["kind"].as_str().unwrap().to_string();
        let r = run(&udp_dumbbell(q, &sizes, &rates));
        let x = udp_throughputs(&r, &sizes);
        eprintln!("{kind}: throughputs {x:.0?} bit/s");
        let light_drops = u64s(&r, "drops", "flow").iter().filter(|&&f| f == 0).count();
        assert_eq!(light_drops, 0, "{kind}: the light flow lost packets");
        for i in 0..3 {
            check_rel(&format!("{kind} flow {i} vs max-min share"), x[i], expected[i], 0.005);
        }
    }
}

/// Four NewReno flows whose base RTTs are 24, 44, 84 and 164 ms (access delays 1, 6, 16,
/// 36 ms each way, plus the 10 ms bottleneck and 1 ms egress).
fn tcp_rtt_dumbbell(qdisc: Value) -> Value {
    let delays = ["1ms", "6ms", "16ms", "36ms"];
    let mut sc = dumbbell(delays.len(), "100Mbps", "1ms", "10Mbps", "10ms", qdisc);
    sc["duration"] = json!("60s");
    for (i, d) in delays.iter().enumerate() {
        sc["links"][i]["delay"] = json!(d);
    }
    sc["flows"] = (0..delays.len())
        .map(|i| {
            json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": "newreno",
                        "start": format!("{}ms", 13 * i)})
        })
        .collect();
    sc
}

#[test]
fn tcp_flows_with_different_rtts_share_fairly_over_fq_but_not_drop_tail() {
    let goodput = |q: Value| f64s(&run(&tcp_rtt_dumbbell(q)), "flows", "goodput_bps");
    let dt = goodput(json!({"kind": "droptail", "limit": "100p"}));
    eprintln!("droptail: goodput {dt:.0?} bit/s, Jain {:.4}", jain(&dt));
    assert!(jain(&dt) < 0.95, "drop-tail Jain {}", jain(&dt));
    for q in disciplines() {
        let kind = q["kind"].as_str().unwrap().to_string();
        let x = goodput(q);
        eprintln!("{kind}: goodput {x:.0?} bit/s, Jain {:.4}", jain(&x));
        assert!(jain(&x) >= 0.95, "{kind}: Jain {}", jain(&x));
    }
}

#[test]
fn bad_parameters_are_rejected_naming_the_key() {
    let sc = |q: Value| udp_dumbbell(q, &[1500], &["1Mbps"]);
    let cases = [
        (json!({"kind": "drr", "quantum": "0B"}), "links[1].qdisc.quantum"),
        (json!({"kind": "sfq", "quantum": 0}), "links[1].qdisc.quantum"),
        (json!({"kind": "fq", "limit": "0p"}), "links[1].qdisc.limit"),
        (json!({"kind": "drr", "limit": "0B"}), "links[1].qdisc.limit"),
        (json!({"kind": "sfq", "buckets": 0}), "links[1].qdisc.buckets"),
        (json!({"kind": "fq", "quantum": "1500B"}), "links[1].qdisc.quantum"),
    ];
    for (q, path) in cases {
        let e = config_error(&sc(q.clone()));
        eprintln!("{q}: {e}");
        assert_eq!(e.path, path, "{q}: {e}");
    }
    let e = config_error(&sc(json!({"kind": "fq", "quantum": "1500B"})));
    assert!(e.message.contains("unknown field `quantum`"), "{e}");
}
