//! Senders held by their bytes queued in their own host (`tcp.small_queues`,
//! docs/mechanisms.md#small-queues), end to end: a rate-based sender that paces faster than its
//! host's link fills the host's queue without it, and with an RDMA NIC's rule keeps one packet
//! waiting there while the link still sends back to back.

mod common;
use common::*;
use serde_json::{json, Value};

const HOST_LINK_BPS: f64 = 1e9;
const RUN_S: f64 = 0.02;
/// The payload share of a full segment on the wire (1460 of 1500 bytes).
const PAYLOAD_SHARE: f64 = 1460.0 / 1500.0;

/// One DCQCN sender whose line rate is set to 10 Gb/s behind a 1 Gb/s host link with a
/// 1000-packet queue; the rest of the path is 10 Gb/s. Nothing marks, so the rate stays at
/// 10 Gb/s and only the host's link holds the sender back.
fn faster_than_its_link(small_queues: Value) -> quench_core::RunResult {
    let mut sc = dumbbell(1, "10Gbps", "1us", "10Gbps", "1us", json!({"kind": "droptail", "limit": 1000}));
    sc["links"][0] = json!({"from": "s0", "to": "r1", "rate": "1Gbps", "delay": "1us",
                            "qdisc": {"kind": "droptail", "limit": 1000}});
    sc["duration"] = json!(format!("{}ms", RUN_S * 1e3));
    sc["record"] = json!({"cwnd": false, "rtt": false, "drops": true});
    let tcp = json!({"send_buffer": "16MB", "receive_window": "16MB", "sack": true,
                     "delayed_ack": {"enabled": false}, "small_queues": small_queues});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": {"kind": "dcqcn", "line_rate": "10Gbps"},
                          "tcp": tcp}]);
    run(&sc)
}

#[test]
fn an_rdma_nic_keeps_one_packet_waiting_and_its_link_busy() {
    let unheld = faster_than_its_link(json!(false));
    let nic = faster_than_its_link(json!("nic"));
    let (drops, backlog) =
        (link_value(&unheld, "s0->r1", "dropped_packets"), link_value(&unheld, "s0->r1", "max_backlog_packets"));
    let goodput = flow_value(&nic, 0, "goodput_bps");
    eprintln!(
        "unheld: {drops} drops, largest backlog {backlog} packets; nic: {} drops, largest backlog {}, \
         goodput {:.4} of the host link's payload rate",
        link_value(&nic, "s0->r1", "dropped_packets"),
        link_value(&nic, "s0->r1", "max_backlog_packets"),
        goodput / (HOST_LINK_BPS * PAYLOAD_SHARE)
    );
    assert!(drops > 0.0 && backlog == 1000.0, "without the rule the host's queue overflows");
    assert_eq!(link_value(&nic, "s0->r1", "dropped_packets"), 0.0);
    assert_eq!(link_value(&nic, "s0->r1", "max_backlog_packets"), 1.0, "one packet waits behind the one sent");
    // Back to back from the first data segment: the handshake's round trip and the last
    // segment's flight are all the run loses.
    check_rel("goodput against the host link's payload rate", goodput, HOST_LINK_BPS * PAYLOAD_SHARE, 0.01);
}
