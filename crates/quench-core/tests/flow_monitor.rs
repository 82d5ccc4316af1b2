//! The high-frequency monitor (`record.monitor_flow`, trace/flow_monitor.rs) checked against
//! the engine's other recorders: the segments table (sends and ACKs) and the queue table
//! (what each arriving packet found), inside the chosen window and nowhere else.

mod common;
use common::*;
use serde_json::{json, Value};

const START: f64 = 0.1;
const STOP: f64 = 0.9;

fn scenario(tcp: Value, monitor: Option<Value>) -> Value {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "100p"}));
    sc["duration"] = json!("1s");
    let mut record = json!({"queues": true, "cwnd": false, "rtt": false, "segments": true, "links": ["r1->r2"]});
    if let Some(m) = monitor {
        record["monitor_flow"] = m;
    }
    sc["record"] = record;
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "name": "bulk", "cc": "newreno", "tcp": tcp}]);
    sc
}

fn window() -> Value {
    json!({"flow": "bulk", "start": format!("{START}s"), "stop": format!("{STOP}s")})
}

fn rows_of(r: &quench_core::RunResult, event: &str) -> Vec<usize> {
    strs(r, "flow_monitor", "event").iter().enumerate().filter(|(_, e)| *e == event).map(|(i, _)| i).collect()
}

#[test]
fn monitor_matches_the_segment_and_queue_records_inside_its_window() {
    let r = run(&scenario(json!({"send_buffer": "1MB", "receive_window": "1MB"}), Some(window())));
    let t = f64s(&r, "flow_monitor", "time_s");
    assert!(t.iter().all(|&x| (START..STOP).contains(&x)), "rows outside the window");
    // Sends and ACKs: the same instants and sequence numbers as the segments table.
    let (st, sseq, slen, sack) = (
        f64s(&r, "segments", "time_s"),
        u64s(&r, "segments", "seq"),
        u64s(&r, "segments", "len"),
        u64s(&r, "segments", "is_ack"),
    );
    let in_window = |i: usize| (START..STOP).contains(&st[i]);
    let data: Vec<(f64, u64)> =
        (0..st.len()).filter(|&i| in_window(i) && sack[i] == 0 && slen[i] > 0).map(|i| (st[i], sseq[i])).collect();
    let acks: Vec<(f64, u64)> =
        (0..st.len()).filter(|&i| in_window(i) && sack[i] == 1).map(|i| (st[i], sseq[i])).collect();
    let (mseq, mack) = (u64s(&r, "flow_monitor", "seq"), u64s(&r, "flow_monitor", "ack"));
    let sends: Vec<(f64, u64)> =
        rows_of(&r, "send").into_iter().chain(rows_of(&r, "retransmit")).map(|i| (t[i], mseq[i])).collect();
    let mut sends_sorted = sends.clone();
    sends_sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert!(data.len() > 100, "{} sends in the window", data.len());
    assert_eq!(sends_sorted, data);
    let monitor_acks: Vec<(f64, u64)> = rows_of(&r, "ack").into_iter().map(|i| (t[i], mack[i])).collect();
    assert_eq!(monitor_acks, acks);
    // Arrivals at the bottleneck: an admitted packet that found q packets makes the queue
    // table record q + 1 at its arrival instant (the drop-tail limit is 100: a full queue drops).
    let link = link_row(&r, "r1->r2") as u64;
    let (qt, ql) = (f64s(&r, "queue", "time_s"), u64s(&r, "queue", "packets"));
    let (mlink, mqueue) = (u64s(&r, "flow_monitor", "link"), u64s(&r, "flow_monitor", "queue"));
    let arrivals: Vec<usize> = rows_of(&r, "arrive").into_iter().filter(|&i| mlink[i] == link).collect();
    assert!(arrivals.len() > 100, "{} arrivals", arrivals.len());
    let mut k = 0;
    let mut busy = 0;
    for &i in &arrivals {
        while k < qt.len() && qt[k] < t[i] {
            k += 1;
        }
        let same = (k..qt.len()).take_while(|&j| qt[j] == t[i]).any(|j| ql[j] == mqueue[i] + 1);
        assert!(same || mqueue[i] == 100, "arrival at {} found {} packets; no such queue row", t[i], mqueue[i]);
        busy += (mqueue[i] > 0) as usize;
    }
    assert!(busy > 20, "the window should contain queueing");
}

#[test]
fn burstiness_of_every_send_is_under_the_threshold() {
    let threshold = 10.0;
    let tcp = json!({"send_buffer": "1MB", "receive_window": "1MB",
        "burstiness_control": {"threshold": threshold, "rate": "cwnd/rtt"}});
    let r = run(&scenario(tcp, Some(window())));
    let b = f64s(&r, "flow_monitor", "b");
    let sends = rows_of(&r, "send");
    assert!(sends.len() > 300, "{} sends", sends.len());
    assert!(sends.iter().all(|&i| b[i] >= 1.0 && b[i] < threshold), "a send with B >= threshold");
    assert!(sends.iter().any(|&i| b[i] > 2.0), "B should vary");
}

#[test]
fn monitor_is_off_by_default_and_rejects_unknown_flows() {
    let r = run(&scenario(json!({}), None));
    assert_eq!(r.table("flow_monitor").rows(), 0);
    let e = config_error(&scenario(json!({}), Some(json!({"flow": "nope"}))));
    assert_eq!(e.path, "record.monitor_flow.flow", "{e}");
    let e = config_error(&scenario(json!({}), Some(json!({"flow": "bulk", "start": "2s", "stop": "1s"}))));
    assert_eq!(e.path, "record.monitor_flow.stop", "{e}");
}

/// A drop row names the dropped segment: at a full drop-tail queue the arriving segment is
/// discarded at its arrival instant, so each drop row has the `seq` and `len` of an arrival row
/// at the same link and instant, and the sender later retransmits that `seq`.
#[test]
fn drop_rows_carry_the_dropped_segment() {
    let r = run(&scenario(json!({"send_buffer": "1MB", "receive_window": "1MB"}), Some(window())));
    let t = f64s(&r, "flow_monitor", "time_s");
    let (mseq, mlen, mlink) =
        (u64s(&r, "flow_monitor", "seq"), u64s(&r, "flow_monitor", "len"), u64s(&r, "flow_monitor", "link"));
    let drops = rows_of(&r, "drop");
    assert!(!drops.is_empty(), "the window should hold drops at the full queue");
    let arrivals = rows_of(&r, "arrive");
    let retransmits: Vec<u64> = rows_of(&r, "retransmit").into_iter().map(|i| mseq[i]).collect();
    for &d in &drops {
        assert_eq!(mlen[d], 1460, "drop at {} has len {}", t[d], mlen[d]);
        let arrived = arrivals.iter().any(|&a| t[a] == t[d] && mlink[a] == mlink[d] && mseq[a] == mseq[d]);
        assert!(arrived, "drop at {} of seq {}: no arrival row of it", t[d], mseq[d]);
    }
    assert!(drops.iter().any(|&d| retransmits.contains(&mseq[d])), "no dropped seq was retransmitted");
}
