//! The device queue under a qdisc (`device_queue = N`, link.rs) checked end to end. Under a
//! drop-tail FIFO of L packets, a device queue of N packets makes one FIFO of L + N: an
//! arrival is dropped exactly when L + N packets wait, and packets leave in arrival order, so
//! every flow's result and the bottleneck's counts equal those of a plain FIFO of L + N. An
//! AQM above it sees only its own part: RED's instantaneous queue never exceeds L. With no
//! device queue nothing is written for it and nothing changes (the bit-identity harness).

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

fn scenario(qdisc: Value, device_queue: Option<u32>) -> Value {
    let mut sc = dumbbell(3, "100Mbps", "1ms", "10Mbps", "10ms", qdisc);
    sc["duration"] = json!("10s");
    if let Some(n) = device_queue {
        sc["links"][3]["device_queue"] = json!(n);
    }
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno"},
        {"kind": "tcp", "src": "s1", "dst": "d", "cc": "cubic", "start": "0.3s"},
        {"kind": "udp", "src": "s2", "dst": "d", "rate": "2Mbps", "pattern": "poisson"},
    ]);
    sc["record"] = json!({"monitors": true, "links": ["r1->r2"]});
    sc
}

#[test]
fn a_device_queue_under_a_fifo_is_one_longer_fifo() {
    let with = run(&scenario(json!({"kind": "droptail", "limit": "20p"}), Some(8)));
    let plain = run(&scenario(json!({"kind": "droptail", "limit": "28p"}), None));
    assert_link_identities(&with);
    for col in ["bytes_delivered", "packets_sent", "retransmitted_segments", "timeouts"] {
        assert_eq!(u64s(&with, "flows", col), u64s(&plain, "flows", col), "flows.{col}");
    }
    for col in ["departed_packets", "dropped_packets", "max_backlog_packets"] {
        let (a, b) = (link_value(&with, "r1->r2", col), link_value(&plain, "r1->r2", col));
        assert_eq!(a, b, "r1->r2 {col}");
    }
    assert!(link_value(&with, "r1->r2", "dropped_packets") > 10.0, "the FIFO should overflow");
    assert_eq!(link_value(&with, "r1->r2", "max_backlog_packets"), 28.0);
    the_queueing_time_splits_between_qdisc_and_device_queue(&with, &plain);
}

/// The links table's split of queueing time (`mean_qdisc_sojourn_s`, `mean_device_sojourn_s`,
/// `max_device_sojourn_s`): the two parts add up to the time in the whole queue, which is the
/// plain FIFO's of L + N; a packet waits in the device queue for at most the N transmissions
/// ahead of it, each at most a full frame (1500 B at 10 Mb/s: 1.2 ms), and a link without a
/// device queue spent it all in the qdisc. Runs without any device queue have no such columns.
fn the_queueing_time_splits_between_qdisc_and_device_queue(with: &RunResult, plain: &RunResult) {
    let v = |col: &str| link_value(with, "r1->r2", col);
    let (qdisc, device, all) = (v("mean_qdisc_sojourn_s"), v("mean_device_sojourn_s"), v("mean_sojourn_s"));
    assert!(device > 0.0 && qdisc > 0.0, "both parts of the queue were used: {qdisc} {device}");
    assert!(((qdisc + device) - all).abs() <= 1e-12 * all, "{qdisc} + {device} against {all}");
    assert_eq!(all, link_value(plain, "r1->r2", "mean_sojourn_s"), "one FIFO of L + N");
    let full_frame_s = 1500.0 * 8.0 / 10e6;
    assert!(v("max_device_sojourn_s") <= 8.0 * full_frame_s + 1e-12, "{}", v("max_device_sojourn_s"));
    assert_eq!(link_value(with, "s0->r1", "mean_device_sojourn_s"), 0.0);
    let access = (link_value(with, "s0->r1", "mean_qdisc_sojourn_s"), link_value(with, "s0->r1", "mean_sojourn_s"));
    assert_eq!(access.0, access.1);
    let columns = &plain.tables.iter().find(|t| t.name == "links").expect("a links table").columns;
    assert!(columns.iter().all(|(name, _)| !name.contains("device")), "no device columns without one");
}

#[test]
fn red_sees_only_its_own_part_of_the_queue() {
    let red = json!({"kind": "red", "min_th": 5, "max_th": 15, "limit": "30p"});
    let r = run(&scenario(red.clone(), Some(10)));
    assert_link_identities(&r);
    let (names, values) = (strs(&r, "monitors", "name"), f64s(&r, "monitors", "value"));
    let found: Vec<f64> = names.iter().zip(&values).filter(|(n, _)| *n == "arrival_queue").map(|(_, v)| *v).collect();
    assert!(!found.is_empty());
    // RED's own queue stays within its limit of 30 (an arrival that finds 30 overflows); the
    // link's backlog, with the device queue's 10 beneath, reaches 40.
    let most = found.iter().cloned().fold(0.0, f64::max);
    assert_eq!(most, 30.0, "RED should fill up to its limit");
    assert_eq!(link_value(&r, "r1->r2", "max_backlog_packets"), 40.0);
}

#[test]
fn a_device_queue_is_written_only_when_set_and_range_checked() {
    let json = |sc: &Value| quench_core::Simulation::from_json(&sc.to_string()).map(|_| ()).err();
    let sc = scenario(json!({"kind": "droptail", "limit": "20p"}), None);
    let written = quench_core::Scenario::from_json(&sc.to_string()).unwrap().to_json();
    assert!(!written.contains("device_queue"));
    let sc = scenario(json!({"kind": "droptail", "limit": "20p"}), Some(3));
    assert!(json(&sc).is_none());
    assert!(quench_core::Scenario::from_json(&sc.to_string()).unwrap().to_json().contains("\"device_queue\": 3"));
    let e = json(&scenario(json!({"kind": "droptail"}), Some(2_000_000_000))).expect("refused");
    assert_eq!(e.path, "links[3].device_queue", "{e}");
}

/// A qdisc that releases packets only at its ticks (a dummynet pipe of 5 Mb/s on the 10 Mb/s
/// link, which answers "not before the next tick") keeps the link going through a device
/// queue: a bulk TCP flow alone delivers within 5 % of what it delivers without the device
/// queue (each above 80 % of the pipe's 5 Mb/s over 10 s), and the link's identities hold.
#[test]
fn a_ticking_qdisc_keeps_the_link_going() {
    let pipe = json!({"kind": "dummynet", "bandwidth": "5Mbps", "limit": "50p"});
    let delivered = |device| {
        let mut sc = scenario(pipe.clone(), device);
        sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno"}]);
        let r = run(&sc);
        assert_link_identities(&r);
        u64s(&r, "flows", "bytes_delivered")[0] as f64 * 8.0
    };
    let (without, with) = (delivered(None), delivered(Some(3)));
    assert!(without > 0.8 * 5e6 * 10.0 && with > 0.8 * 5e6 * 10.0, "{without} and {with} bits");
    assert!((with / without - 1.0).abs() < 0.05, "{with} against {without} bits");
}

/// Every queue discipline with its defaults runs over a device queue of 5 without stalling:
/// the two TCP flows and the UDP source deliver at least 40 % of the 10 Mb/s bottleneck over
/// 10 s together, with or without the device queue, and the link's identities hold. (This is
/// a liveness check: docs/validation.md lists what each delivers.)
#[test]
fn every_qdisc_runs_over_a_device_queue() {
    for kind in quench_core::names::QDISCS {
        let mut qdisc = json!({"kind": kind});
        if *kind == "dummynet" {
            qdisc["bandwidth"] = json!("10Mbps");
        }
        for device in [None, Some(5)] {
            let r = run(&scenario(qdisc.clone(), device));
            assert_link_identities(&r);
            let bits: f64 = u64s(&r, "flows", "bytes_delivered").iter().map(|&b| b as f64 * 8.0).sum();
            assert!(bits > 0.4 * 10e6 * 10.0, "{kind}, device queue {device:?}: {bits} bits");
        }
    }
}
