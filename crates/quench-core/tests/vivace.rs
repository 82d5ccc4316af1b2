//! PCC Vivace against its paper's claims (Dong et al., NSDI 2018, sections 5.1-5.2;
//! docs/mechanisms.md#vivace): a lone flow fills a bottleneck while keeping a smaller standing
//! queue than CUBIC, which fills the buffer; and under random loss, which its utility charges
//! only at c·L per Mb/s, it keeps the link busy where CUBIC's window collapses.

mod common;
use common::*;
use serde_json::{json, Value};

const BOTTLENECK_BPS: f64 = 10e6;
/// Wire bytes of a full segment (MSS 1460 + 40 header bytes).
const PACKET_BYTES: f64 = 1500.0;
const FROM_S: f64 = 10.0;
const TO_S: f64 = 30.0;

/// One flow over a 10 Mb/s, 44 ms base-RTT dumbbell with a 100-packet drop-tail buffer
/// (about 2.7 BDP) and `loss` random loss on the bottleneck; SACK on, so that losses are
/// marked for the utility.
fn lone(cc: Value, loss: f64) -> quench_core::RunResult {
    let qdisc = json!({"kind": "droptail", "limit": "100p"});
    let mut sc = dumbbell(1, "1Gbps", "1ms", "10Mbps", "20ms", qdisc);
    sc["links"][1]["loss"] = json!(loss);
    sc["duration"] = json!("30s");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "sack": true});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": cc, "tcp": tcp}]);
    run(&sc)
}

/// Mean queuing delay at the bottleneck over [10, 30] s (ms) and the flow's utilization.
fn queue_ms_and_utilization(r: &quench_core::RunResult) -> (f64, f64) {
    let q = mean_queue(r, FROM_S, TO_S);
    let goodput = flow_value(r, 0, "goodput_bps");
    (q * PACKET_BYTES * 8.0 / BOTTLENECK_BPS * 1e3, goodput / (BOTTLENECK_BPS * 1460.0 / PACKET_BYTES))
}

#[test]
fn vivace_fills_the_link_with_a_smaller_queue_than_cubic() {
    let r = lone(json!("vivace"), 0.0);
    let (queue_ms, utilization) = queue_ms_and_utilization(&r);
    let drops = link_value(&r, "r1->r2", "dropped_packets");
    eprintln!("Vivace: mean queuing delay {queue_ms:.2} ms, utilization {utilization:.3}, drops {drops}");
    let r = lone(json!("cubic"), 0.0);
    let (cubic_ms, cubic_utilization) = queue_ms_and_utilization(&r);
    eprintln!("CUBIC: mean queuing delay {cubic_ms:.2} ms, utilization {cubic_utilization:.3}");
    assert!(utilization > 0.8, "utilization {utilization}");
    assert!(queue_ms < 0.5 * cubic_ms, "Vivace {queue_ms} ms against CUBIC's {cubic_ms} ms");
}

#[test]
fn vivace_keeps_the_link_busy_under_one_percent_random_loss_where_cubic_collapses() {
    let r = lone(json!("vivace"), 0.01);
    let (_, utilization) = queue_ms_and_utilization(&r);
    let r = lone(json!("cubic"), 0.01);
    let (_, cubic_utilization) = queue_ms_and_utilization(&r);
    eprintln!("1 % random loss: Vivace utilization {utilization:.3}, CUBIC {cubic_utilization:.3}");
    assert!(utilization > 0.7, "Vivace utilization {utilization}");
    assert!(cubic_utilization < 0.5 * utilization, "CUBIC {cubic_utilization}");
}
