//! Copa against its paper's claims (Arun, Balakrishnan, NSDI 2018, sections 2.1 and 2.3;
//! docs/mechanisms.md#copa): at equilibrium `λ = 1/(δ·dq)`, so a lone flow's rate times its
//! queuing delay, the packets it keeps queued, is 1/δ (2 packets for δ = 0.5), while the link
//! stays busy; the competitive mode leaves that unchanged alone and, beside a buffer-filling
//! CUBIC, takes a far larger share than the default mode.

mod common;
use common::*;
use serde_json::{json, Value};

const BOTTLENECK_BPS: f64 = 10e6;

/// A 10 Mb/s bottleneck, 44 ms base RTT, a buffer Copa never fills.
fn lone_copa(delta: f64, mode: &str) -> quench_core::RunResult {
    let qdisc = json!({"kind": "droptail", "limit": "1000p"});
    let mut sc = dumbbell(1, "1Gbps", "1ms", "10Mbps", "20ms", qdisc);
    sc["duration"] = json!("30s");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB"});
    let cc = json!({"kind": "copa", "delta": delta, "mode": mode});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": cc, "tcp": tcp}]);
    run(&sc)
}

/// Measured over [10, 30] s: δ = 0.5, 2.75 packets, utilization 0.993; δ = 0.1, 13.5 packets,
/// utilization 0.996: about 1.35/δ, the queue oscillating above the 1/δ that RTTstanding, its
/// least over srtt/2, sees at equilibrium.
#[test]
fn lone_copa_keeps_about_one_over_delta_packets_queued_and_fills_the_link() {
    for delta in [0.5, 0.1] {
        let r = lone_copa(delta, "default");
        let q = mean_queue(&r, 10.0, 30.0);
        let goodput = flow_value(&r, 0, "goodput_bps");
        let utilization = goodput / (BOTTLENECK_BPS * 1460.0 / 1500.0);
        eprintln!(
            "Copa δ = {delta}: mean queue over [10, 30] s {q:.2} packets (1/δ = {}), utilization {utilization:.3}",
            1.0 / delta
        );
        assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0, "the buffer must not overflow");
        assert!(q > 0.8 / delta && q < 1.6 / delta, "mean queue {q} packets for δ = {delta}");
        assert!(utilization > 0.9, "utilization {utilization}");
    }
}

/// Copa (`cc`) beside CUBIC on the 10 Mb/s, 44 ms dumbbell with a deep 300-packet buffer
/// (8 BDP) for 60 s: Copa's share of the two goodputs.
fn copa_share_beside_cubic(cc: Value) -> f64 {
    let qdisc = json!({"kind": "droptail", "limit": "300p"});
    let mut sc = dumbbell(2, "1Gbps", "1ms", "10Mbps", "20ms", qdisc);
    sc["duration"] = json!("60s");
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "sack": true});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": cc, "tcp": tcp},
                         {"kind": "tcp", "src": "s1", "dst": "d", "cc": "cubic", "tcp": tcp}]);
    let r = run(&sc);
    let (copa, cubic) = (flow_value(&r, 0, "goodput_bps"), flow_value(&r, 1, "goodput_bps"));
    copa / (copa + cubic)
}

/// Section 2.3: beside a buffer-filling CUBIC the queue never empties, so the competitive mode
/// raises 1/δ and takes a far larger share than the default mode, which yields.
#[test]
fn competitive_copa_holds_its_own_beside_cubic_where_the_default_mode_yields() {
    let default_share = copa_share_beside_cubic(json!("copa"));
    let competitive_share = copa_share_beside_cubic(json!({"kind": "copa", "mode": "competitive"}));
    eprintln!(
        "Copa's share beside CUBIC, 300-packet buffer: default {default_share:.3}, competitive {competitive_share:.3}"
    );
    assert!(default_share < 0.2, "default share {default_share}");
    assert!(competitive_share > 2.0 * default_share, "competitive {competitive_share}, default {default_share}");
}

/// Alone, the queue empties every few RTTs, so the competitive mode stays in the default mode:
/// the same standing queue within noise.
#[test]
fn lone_competitive_copa_keeps_the_default_modes_queue() {
    let default_queue = mean_queue(&lone_copa(0.5, "default"), 10.0, 30.0);
    let competitive_queue = mean_queue(&lone_copa(0.5, "competitive"), 10.0, 30.0);
    eprintln!("lone Copa δ = 0.5: mean queue default {default_queue:.2}, competitive {competitive_queue:.2} packets");
    assert!(
        (competitive_queue - default_queue).abs() < 0.25 * default_queue,
        "{competitive_queue} against {default_queue}"
    );
}
