//! ICMP Source Quench end to end: a Fuzzball gateway quenches, the message crosses the
//! network, and the host reacts as the chosen rule says (docs/mechanisms.md#fuzzball-gateway).

mod common;
use common::*;
use serde_json::{json, Value};

const MSS: f64 = 512.0;
const SOURCE_QUENCH_EVENT: u64 = 5;

/// Two TCP connections from `src` to `sink` through a Fuzzball gateway onto a 9600 bit/s line.
fn gateway(reaction: &str, quench: bool) -> Value {
    let fuzzball = json!({"kind": "fuzzball", "quench": quench, "threshold": 1.5, "max_rate": 1.0});
    let tcp = json!({"mss": 512, "receive_window": 2048, "source_quench": reaction,
                     "rto": {"k": 2, "tick": "500ms", "initial": "3s"}});
    json!({
        "duration": "200s", "hosts": ["src", "sink"], "routers": ["gw"],
        "links": [{"from": "src", "to": "gw", "rate": "10Mbps", "delay": "50us",
                   "qdisc": {"kind": "droptail"}, "reverse_qdisc": fuzzball},
                  {"from": "gw", "to": "sink", "rate": "9600bps", "delay": "1ms",
                   "qdisc": fuzzball, "reverse_qdisc": {"kind": "droptail"}}],
        "flows": [{"kind": "tcp", "src": "src", "dst": "sink", "cc": "tahoe", "tcp": tcp},
                  {"kind": "tcp", "src": "src", "dst": "sink", "cc": "tahoe", "tcp": tcp, "start": "0.1s"}]
    })
}

/// (time, cwnd, ssthresh) rows of one flow.
fn window_trace(r: &quench_core::RunResult, flow: u32) -> Vec<(f64, f64, f64)> {
    let t = f64s(r, "cwnd", "time_s");
    let f = u64s(r, "cwnd", "flow");
    let c = f64s(r, "cwnd", "cwnd");
    let s = f64s(r, "cwnd", "ssthresh");
    (0..t.len()).filter(|&i| f[i] == flow as u64).map(|i| (t[i], c[i], s[i])).collect()
}

fn quench_times(r: &quench_core::RunResult, flow: u64) -> Vec<f64> {
    let t = f64s(r, "tcp_events", "time_s");
    let f = u64s(r, "tcp_events", "flow");
    let e = u64s(r, "tcp_events", "event");
    (0..t.len()).filter(|&i| e[i] == SOURCE_QUENCH_EVENT && f[i] == flow).map(|i| t[i]).collect()
}

#[test]
fn tahoe_quench_sets_cwnd_to_one_segment_and_leaves_ssthresh() {
    let r = run(&gateway("tahoe", true));
    let quenches = quench_times(&r, 0);
    assert!(quenches.len() > 20, "expected a steady stream of quenches, got {}", quenches.len());
    let trace = window_trace(&r, 0);
    for q in quenches {
        let i =
            trace.iter().position(|&(t, c, _)| t == q && c == MSS).expect("a cwnd record of one segment at the quench");
        assert!(i > 0);
        assert_eq!(trace[i].2, trace[i - 1].2, "ssthresh changed by a quench at {q}");
    }
    assert_eq!(link_value(&r, "gw->sink", "dropped_packets"), 0.0);
}

#[test]
fn every_connection_to_the_quoted_destination_is_quenched() {
    // 4.3BSD in_pcbnotify: one message reaches both connections from src to sink.
    let r = run(&gateway("tahoe", true));
    assert_eq!(quench_times(&r, 0), quench_times(&r, 1));
}

#[test]
fn rfc1122_reacts_as_a_timeout_without_retransmitting() {
    let mut scenario = gateway("rfc1122", true);
    scenario["record"] = json!({"segments": true});
    let r = run(&scenario);
    let trace = window_trace(&r, 0);
    let q = quench_times(&r, 0);
    assert!(!q.is_empty());
    let seg_time = f64s(&r, "segments", "time_s");
    let rexmit = u64s(&r, "segments", "retransmit");
    for t in q {
        let &(_, cwnd, ssthresh) = trace.iter().rev().find(|&&(tt, _, _)| tt == t).unwrap();
        assert_eq!(cwnd, MSS);
        assert_eq!(ssthresh, 2.0 * MSS); // Tahoe's timeout rule: max(min(wnd, cwnd)/2, 2 segments)
        assert!(!(0..seg_time.len()).any(|i| seg_time[i] == t && rexmit[i] == 1), "retransmitted at a quench");
    }
}

#[test]
fn ignoring_hosts_keep_their_window_and_quench_less_disables_messages() {
    let ignore = run(&gateway("ignore", true));
    assert!(quench_times(&ignore, 0).is_empty());
    let off = run(&gateway("tahoe", false));
    assert!(quench_times(&off, 0).is_empty());
    // Quenching shortens the line's queue: the mean sojourn falls.
    let on = run(&gateway("tahoe", true));
    assert!(link_value(&on, "gw->sink", "mean_sojourn_s") < 0.9 * link_value(&off, "gw->sink", "mean_sojourn_s"));
}

#[test]
fn squid_paces_the_sender() {
    let r = run(&gateway("squid", true));
    let plain = run(&gateway("ignore", true));
    // RFC 1016's delay (at least I = 75 ms between datagrams) keeps fewer packets queued.
    assert!(
        link_value(&r, "gw->sink", "mean_backlog_packets") < link_value(&plain, "gw->sink", "mean_backlog_packets")
    );
    assert!(link_value(&r, "gw->sink", "utilization") > 0.95);
}
