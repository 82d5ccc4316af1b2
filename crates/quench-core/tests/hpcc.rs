//! HPCC against its paper's claims (Li et al., SIGCOMM 2019, sections 3 and 5;
//! docs/mechanisms.md#hpcc): with in-band telemetry from every switch, HPCC holds the
//! bottleneck near its target utilization η with a queue near zero, under an incast as with two
//! flows, where a loss-based controller fills the buffer; and its flows share fairly.

mod common;
use common::*;
use serde_json::{json, Value};

const LINE_RATE_BPS: f64 = 10e9;
/// Wire bytes of a full segment (MSS 1460 + 40 header bytes).
const PACKET_BYTES: f64 = 1500.0;
/// The measurement window, seconds: after the start-up at line rate has settled.
const FROM_S: f64 = 0.01;
const TO_S: f64 = 0.05;

/// `n` senders into one receiver through a 10 Gb/s dumbbell with 1 µs links (base RTT about
/// 10 µs) and a 2000-packet drop-tail buffer (2.4 ms at line rate), as Swift's incast test.
/// SACK and RACK: a loss-based flow whose retransmission is lost in start-up's overflow finds
/// it again, rather than idling through the rfc profile's 1 s minimum RTO (which, within the
/// measurement window, would leave the buffer empty whatever the controller).
fn incast(n: usize, cc: Value) -> quench_core::RunResult {
    let qdisc = json!({"kind": "droptail", "limit": "2000p"});
    let mut sc = dumbbell(n, "10Gbps", "1us", "10Gbps", "1us", qdisc);
    sc["duration"] = json!("50ms");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "sack": true, "loss_detection": "rack", "delayed_ack": {"enabled": false}});
    sc["flows"] = (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc.clone(), "tcp": tcp}))
        .collect::<Vec<_>>()
        .into();
    run(&sc)
}

/// Mean queue at the bottleneck over the window, in packets; the link's utilization over the
/// run; each flow's goodput.
fn figures(r: &quench_core::RunResult, n: usize) -> (f64, f64, Vec<f64>) {
    let q = mean_queue(r, FROM_S, TO_S);
    let utilization = link_value(r, "r1->r2", "utilization");
    (q, utilization, (0..n).map(|i| flow_value(r, i, "goodput_bps")).collect())
}

/// 2-to-1 and 16-to-1: HPCC's queue stays within a few packets (CUBIC's fills the 2000-packet
/// buffer), nothing is dropped, the flows share alike, and the link runs near η (16 flows hold
/// windows under one segment, paced, and a queue of one or two packets stands in for part of
/// the utilization in HPCC's estimate).
#[test]
fn hpcc_holds_the_queue_near_zero_at_eta_where_cubic_fills_the_buffer() {
    for (n, least_utilization, most_queue) in [(2, 0.93, 1.0), (16, 0.85, 5.0)] {
        let r = incast(n, json!("hpcc"));
        let (queue, utilization, goodputs) = figures(&r, n);
        let drops = link_value(&r, "r1->r2", "dropped_packets");
        eprintln!(
            "HPCC {n}-to-1: mean queue {queue:.2} packets ({:.2} µs), utilization {utilization:.3}, drops {drops}, Jain {:.4}",
            queue * PACKET_BYTES * 8.0 / LINE_RATE_BPS * 1e6,
            jain(&goodputs)
        );
        assert_eq!(drops, 0.0);
        assert!(queue < most_queue, "{n} flows: queue {queue} packets");
        assert!(utilization > least_utilization && utilization < 1.0, "{n} flows: utilization {utilization}");
        assert!(jain(&goodputs) > 0.99, "{goodputs:?}");
        let r = incast(n, json!("cubic"));
        let (cubic_queue, _, _) = figures(&r, n);
        eprintln!("CUBIC {n}-to-1: mean queue {cubic_queue:.2} packets");
        assert!(cubic_queue > 100.0 * queue.max(1.0), "CUBIC's queue {cubic_queue}");
    }
}

/// The utilization HPCC settles at follows η: two flows with η = 0.8 and 0.95 run the link
/// within 0.02 of it (the additive step, 50 Mb/s per round, adds 0.5 % on this path).
#[test]
fn utilization_follows_eta() {
    for eta in [0.8, 0.95] {
        let r = incast(2, json!({"kind": "hpcc", "eta": eta}));
        let (queue, utilization, _) = figures(&r, 2);
        eprintln!("HPCC eta {eta}: utilization {utilization:.4}, queue {queue:.3} packets");
        assert!((utilization - eta).abs() < 0.02, "eta {eta}: utilization {utilization}");
    }
}
