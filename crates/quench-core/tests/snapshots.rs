//! Snapshots (`record.snapshots`): the counters at chosen instants, from which any window's
//! statistics follow by difference.
//!
//! References: the run's own summary tables (a snapshot at the end is the links and flows
//! tables), a constant-rate source (a window of a CBR stream carries rate × width, within one
//! datagram), and the run without snapshots (taking them changes nothing).

mod common;
use common::*;
use serde_json::{json, Value};

/// Two TCP flows through a 10 Mb/s drop-tail bottleneck and a 2 Mb/s CBR stream beside them.
fn scenario(snapshots: Value) -> Value {
    let mut sc = dumbbell(3, "100Mbps", "1ms", "10Mbps", "20ms", json!({"kind": "droptail", "limit": "40p"}));
    sc["duration"] = json!("6s");
    sc["seed"] = json!(3);
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d"},
        {"kind": "tcp", "src": "s1", "dst": "d", "start": "1s"},
        {"kind": "udp", "src": "s2", "dst": "d", "rate": "2Mbps", "size": "972B"}
    ]);
    if !snapshots.is_null() {
        sc["record"] = json!({ "snapshots": snapshots });
    }
    sc
}

fn rows_at(r: &quench_core::RunResult, table: &str, t: f64) -> Vec<usize> {
    let times = f64s(r, table, "time_s");
    (0..times.len()).filter(|&i| times[i] == t).collect()
}

#[test]
fn a_snapshot_at_the_end_is_the_summary_tables() {
    let r = run(&scenario(json!("1500ms")));
    // 1.5, 3, 4.5, 6 s: the last one at the run's end.
    let times = f64s(&r, "link_snapshots", "time_s");
    let mut distinct = times.clone();
    distinct.dedup();
    assert_eq!(distinct, vec![1.5, 3.0, 4.5, 6.0]);
    let end = rows_at(&r, "link_snapshots", 6.0);
    assert_eq!(end.len(), u64s(&r, "links", "link").len());
    for col in ["arrived_packets", "departed_bytes", "dropped_packets", "marked_packets", "backlog_packets"] {
        let snap = u64s(&r, "link_snapshots", col);
        assert_eq!(end.iter().map(|&i| snap[i]).collect::<Vec<_>>(), u64s(&r, "links", col), "{col}");
    }
    let (busy, util) = (f64s(&r, "link_snapshots", "busy_s"), f64s(&r, "links", "utilization"));
    let (integral, mean) = (f64s(&r, "link_snapshots", "backlog_packet_s"), f64s(&r, "links", "mean_backlog_packets"));
    for (k, &i) in end.iter().enumerate() {
        assert!((busy[i] / 6.0 - util[k]).abs() < 1e-12, "utilization of link {k}");
        assert!((integral[i] / 6.0 - mean[k]).abs() < 1e-9, "mean backlog of link {k}");
    }
    let fend = rows_at(&r, "flow_snapshots", 6.0);
    let delivered = u64s(&r, "flow_snapshots", "bytes_delivered");
    assert_eq!(fend.iter().map(|&i| delivered[i]).collect::<Vec<_>>(), u64s(&r, "flows", "bytes_delivered"));
}

#[test]
fn taking_snapshots_changes_nothing_else() {
    let with = run(&scenario(json!(["500ms", "2s", "2.000000001s"])));
    let without = run(&scenario(Value::Null));
    for table in ["links", "flows", "queue", "drops", "cwnd"] {
        assert_eq!(format!("{:?}", with.table(table)), format!("{:?}", without.table(table)), "{table}");
    }
    assert_eq!(u64s(&without, "link_snapshots", "link").len(), 0);
}

#[test]
fn a_window_of_a_constant_rate_stream_carries_rate_times_width() {
    let r = run(&scenario(json!(["2s", "5s"])));
    // 2 Mb/s counts IP datagrams of 972 + 28 bytes: 250 per second, 750 in the 3 s window, on
    // the source's access link (which never drops) and at the source.
    let access = link_row(&r, "s2->r1") as u64;
    let (link, departed) = (u64s(&r, "link_snapshots", "link"), u64s(&r, "link_snapshots", "departed_bytes"));
    let at = |t: f64| rows_at(&r, "link_snapshots", t).into_iter().find(|&i| link[i] == access).unwrap();
    let datagrams = (departed[at(5.0)] - departed[at(2.0)]) as f64 / 1000.0;
    assert!((datagrams - 750.0).abs() <= 1.0, "{datagrams} datagrams across the access link");
    let (flow, sent) = (u64s(&r, "flow_snapshots", "flow"), u64s(&r, "flow_snapshots", "bytes_sent"));
    let at = |t: f64| rows_at(&r, "flow_snapshots", t).into_iter().find(|&i| flow[i] == 2).unwrap();
    let datagrams = (sent[at(5.0)] - sent[at(2.0)]) as f64 / 972.0;
    assert!((datagrams - 750.0).abs() <= 1.0, "{datagrams} datagrams sent");
}

#[test]
fn bad_instants_are_refused_with_the_key() {
    expect_error(scenario(json!("0s")), "record.snapshots", "must be positive");
    expect_error(scenario(json!(["2s", "1s"])), "record.snapshots", "must increase");
    expect_error(scenario(json!("1ns")), "record.snapshots", "more than the 1000000 allowed");
}
