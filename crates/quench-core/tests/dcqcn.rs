//! DCQCN against its paper's claims (Zhu et al., SIGCOMM 2015, section 5; docs/mechanisms.md#dcqcn):
//! over switches that mark ECN on the instantaneous queue (RED with `w_q = 1`, `kmin`, `kmax`,
//! `pmax`), a flow that starts late converges to the same rate as the one already running, the
//! queue stays near the marking thresholds and nothing is dropped.

mod common;
use common::*;
use serde_json::json;

const LINE_RATE_BPS: f64 = 10e9;
/// The payload share of a full segment on the wire (1460 of 1500 bytes).
const PAYLOAD_SHARE: f64 = 1460.0 / 1500.0;
const RUN_S: f64 = 0.2;
const SECOND_START_S: f64 = 0.02;

/// Two senders into one receiver through a 10 Gb/s dumbbell with 1 µs links, the bottleneck
/// marking as DCQCN's switches: RED on the instantaneous queue between 5 and 200 KB with a
/// marking probability of at most 1 % there (the paper's Kmin, Kmax and Pmax), in a 2000-packet
/// buffer. Every packet acknowledged (RoCE's NIC does).
fn two_flows() -> quench_core::RunResult {
    let red = json!({"kind": "red", "mode": "bytes", "min_th": "5KB", "max_th": "200KB", "max_p": 0.01, "w_q": 1.0,
                     "signal": "mark", "spacing": "fj93", "limit": "3MB"});
    let mut sc = dumbbell(2, "10Gbps", "1us", "10Gbps", "1us", red);
    sc["duration"] = json!(format!("{}ms", RUN_S * 1e3));
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "16MB", "receive_window": "16MB", "sack": true,
                     "delayed_ack": {"enabled": false}});
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "cc": "dcqcn", "tcp": tcp},
        {"kind": "tcp", "src": "s1", "dst": "d", "cc": "dcqcn", "tcp": tcp, "start": format!("{}ms", SECOND_START_S * 1e3)},
    ]);
    run(&sc)
}

/// Each flow's goodput while both run. The flows table's goodput is over each flow's own
/// lifetime; the first flow runs alone at the link's rate until the second starts (DCQCN starts
/// at line rate), so its bytes then are that rate times the head start.
#[test]
fn a_late_flow_converges_to_the_first_ones_rate() {
    let r = two_flows();
    let bytes0 = flow_value(&r, 0, "goodput_bps") * RUN_S;
    let bytes1 = flow_value(&r, 1, "goodput_bps") * (RUN_S - SECOND_START_S);
    let link = (bytes0 + bytes1) / RUN_S;
    let shared = RUN_S - SECOND_START_S;
    let (rate0, rate1) = ((bytes0 - link * SECOND_START_S) / shared, bytes1 / shared);
    let drops = link_value(&r, "r1->r2", "dropped_packets");
    let marks = link_value(&r, "r1->r2", "marked_packets");
    let queue = mean_queue(&r, 0.05, RUN_S);
    eprintln!(
        "DCQCN: while both run {:.3} / {:.3} Gb/s, Jain {:.4}, link {:.3} of the line's payload rate, \
         marks {marks}, drops {drops}, mean queue {queue:.1} packets",
        rate0 / 1e9,
        rate1 / 1e9,
        jain(&[rate0, rate1]),
        link / (LINE_RATE_BPS * PAYLOAD_SHARE)
    );
    assert_eq!(drops, 0.0);
    assert!(marks > 0.0, "the marks are DCQCN's signal");
    assert!(jain(&[rate0, rate1]) > 0.99);
    for rate in [rate0, rate1] {
        check_rel("a flow's goodput against an equal share", rate, link / 2.0, 0.1);
    }
}
