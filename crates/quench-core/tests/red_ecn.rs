//! RED and ECN end to end on a dumbbell: ECN-capable TCP is marked instead of dropped, each
//! sender halves at most once per window (successive reductions at least one base RTT apart),
//! the RED monitors are recorded, and the accounting identities hold (common::run).
//! Reference: RFC 3168 sections 5 and 6.1.2; docs/mechanisms.md#red and #ecn.

mod common;
use common::*;
use serde_json::{json, Value};

/// Base RTT of the dumbbell below: 2·(5 + 20 + 5) ms.
const BASE_RTT_S: f64 = 0.060;
const ECN_REDUCTION: u64 = 4;

fn red_dumbbell(ecn: bool) -> Value {
    let red = json!({"kind": "red", "mode": "bytes", "min_th": "20KB", "max_th": "80KB", "limit": "120KB",
                     "max_p": 0.1, "mean_packet_size": "1500B", "signal": "mark"});
    let mut sc = dumbbell(8, "100Mbps", "5ms", "10Mbps", "20ms", red);
    sc["duration"] = json!("20s");
    sc["flows"] = (0..8)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "start": format!("{}ms", 7 * i),
                        "tcp": {"ecn": ecn}})
        })
        .collect();
    sc
}

#[test]
fn ecn_flows_are_marked_not_dropped_and_reduce_once_per_window() {
    let r = run(&red_dumbbell(true));
    let l = "r1->r2";
    let marks = link_value(&r, l, "marked_packets");
    assert!(marks > 50.0, "marks {marks}");
    assert_eq!(link_value(&r, l, "drops_early"), 0.0, "every data packet is ECN-capable");
    assert!(link_value(&r, l, "utilization") > 0.9);
    let times = f64s(&r, "tcp_events", "time_s");
    let (flows, kinds) = (u64s(&r, "tcp_events", "flow"), u64s(&r, "tcp_events", "event"));
    let mut reductions = 0;
    for f in 0..8u64 {
        let t: Vec<f64> =
            (0..times.len()).filter(|&i| flows[i] == f && kinds[i] == ECN_REDUCTION).map(|i| times[i]).collect();
        assert!(t.len() > 2, "flow {f} reduced {} times", t.len());
        let closest = t.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
        eprintln!("flow {f}: {} ECN reductions, closest pair {closest:.4} s apart", t.len());
        assert!(closest >= BASE_RTT_S, "flow {f}: two reductions {closest} s apart, within one RTT");
        reductions += t.len();
    }
    assert!(reductions as f64 <= marks, "at most one reduction per mark");
}

#[test]
fn without_ecn_the_same_decisions_are_drops() {
    let r = run(&red_dumbbell(false));
    let l = "r1->r2";
    assert_eq!(link_value(&r, l, "marked_packets"), 0.0);
    assert!(link_value(&r, l, "drops_early") > 50.0);
    assert!(!u64s(&r, "tcp_events", "event").contains(&ECN_REDUCTION));
}

#[test]
fn red_reports_its_average_and_max_p() {
    let mut sc = red_dumbbell(true);
    let red = &mut sc["links"][8]["qdisc"];
    red["adapt"] = json!("feng1999");
    let r = run(&sc);
    let names = strs(&r, "monitors", "name");
    let values = f64s(&r, "monitors", "value");
    let on_l = u64s(&r, "monitors", "link");
    let row = link_row(&r, "r1->r2") as u64;
    let series = |name: &str| -> Vec<f64> {
        (0..names.len()).filter(|&i| names[i] == name && on_l[i] == row).map(|i| values[i]).collect()
    };
    let (avg, max_p) = (series("avg_queue"), series("max_p"));
    let arrivals = link_value(&r, "r1->r2", "arrived_packets") as usize;
    assert_eq!(avg.len(), arrivals, "one average per arrival");
    assert!(avg.iter().all(|&a| (0.0..=120_000.0).contains(&a)));
    assert!(max_p.len() >= 2 && max_p[0] == 0.1, "max_p {max_p:?}");
}
