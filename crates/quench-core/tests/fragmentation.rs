//! IP fragmentation end to end, packet-rate links and echo paths
//! (docs/mechanisms.md#ip-fragmentation).

mod common;
use common::*;
use serde_json::{json, Value};

fn node_value(r: &quench_core::RunResult, node: &str, col: &str) -> f64 {
    let i = strs(r, "nodes", "name").iter().position(|n| n == node).unwrap();
    f64s(r, "nodes", col)[i]
}

/// a -> g (1500 MTU) -> b over a 250-byte-MTU link, fragmenting with `rule`.
fn small_mtu_path(rule: &str, flow: Value) -> Value {
    json!({
        "duration": "60s", "hosts": ["a", "b"], "routers": ["g"],
        "links": [{"from": "a", "to": "g", "rate": "10Mbps", "delay": "1ms"},
                  {"from": "g", "to": "b", "rate": "64kbps", "delay": "10ms", "mtu": "250B",
                   "fragmentation": rule, "qdisc": {"kind": "droptail", "limit": "200p"}}],
        "flows": [flow]
    })
}

#[test]
fn tcp_over_a_small_mtu_fragments_every_segment_and_reassembles_it() {
    for (rule, per_segment) in [("unaligned", 3.0), ("rfc791", 3.0)] {
        let flow = json!({"kind": "tcp", "src": "a", "dst": "b", "cc": "tahoe", "bytes": "51200B",
                          "tcp": {"mss": 512, "receive_window": 4096, "delayed_ack": {"enabled": false}}});
        let r = run(&small_mtu_path(rule, flow));
        assert_eq!(flow_value(&r, 0, "bytes_delivered"), 51_200.0, "{rule}");
        let segments = flow_value(&r, 0, "packets_sent"); // data segments (the 40-byte SYN fits)
        assert_eq!(node_value(&r, "g", "datagrams_fragmented"), segments, "{rule}");
        assert_eq!(node_value(&r, "g", "fragments_created"), per_segment * segments, "{rule}");
        assert_eq!(node_value(&r, "b", "datagrams_reassembled"), segments, "{rule}");
        assert_eq!(node_value(&r, "b", "reassembly_held_bytes"), 0.0);
        // On the small link every data packet is a fragment of at most 250 bytes.
        assert!(link_value(&r, "g->b", "departed_bytes") <= 250.0 * link_value(&r, "g->b", "departed_packets"));
    }
}

/// Lose fragments at random: a datagram survives only if all of its k fragments do, so the
/// delivered fraction is (1 − p)^k; lost pieces are discarded whole at the reassembly timeout.
#[test]
fn a_lost_fragment_loses_the_whole_datagram() {
    let p: f64 = 0.05;
    let mut sc = small_mtu_path(
        "rfc791",
        json!({"kind": "udp", "src": "a", "dst": "b", "rate": "48kbps", "size": "600B", "stop": "3000s"}),
    );
    sc["duration"] = json!("3020s");
    sc["links"][1]["loss"] = json!(p);
    sc["links"][1]["rate"] = json!("1Mbps");
    let r = run(&sc);
    let sent = flow_value(&r, 0, "packets_sent");
    let delivered = flow_value(&r, 0, "packets_received");
    // 628-byte datagrams: 224 + 224 + 180 bytes of IP payload -> k = 3 fragments.
    assert_eq!(node_value(&r, "g", "fragments_created"), 3.0 * sent);
    let expected = (1.0 - p).powi(3);
    let sigma = (expected * (1.0 - expected) / sent).sqrt();
    let measured = delivered / sent;
    assert!((measured - expected).abs() < 4.0 * sigma, "delivered {measured:.4} vs (1-p)^3 = {expected:.4}");
    // Every incomplete datagram was discarded by its timer, freeing its buffer.
    let lost_fragments = link_value(&r, "g->b", "drops_link_loss");
    assert!(node_value(&r, "b", "reassembly_timeouts") >= (sent - delivered) * 0.99);
    assert_eq!(node_value(&r, "b", "reassembly_held_bytes"), 0.0);
    assert!(lost_fragments >= sent - delivered);
}

#[test]
fn a_packet_rate_limit_caps_packets_per_second_whatever_their_size() {
    // 40-byte datagrams at 1 Mb/s would take 0.32 ms each; the channel allows 9.1 packets/s.
    let sc = json!({
        "duration": "100s", "hosts": ["a", "b"],
        "links": [{"from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "packet_rate": 9.1,
                   "qdisc": {"kind": "droptail", "limit": "100000p"}}],
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": "100kbps", "size": "12B"}]
    });
    let r = run(&sc);
    let departed = link_value(&r, "a->b", "departed_packets");
    assert!((departed - 910.0).abs() <= 1.0, "{departed} packets in 100 s");
    assert!((link_value(&r, "a->b", "utilization") - 1.0).abs() < 1e-3);
}

/// An echo path: the sender s and receiver r both sit behind gateway g; the only way from
/// either to the other is out through the bottleneck g->e and back e->h, so data and ACKs
/// share the bottleneck queue (as in Crowcroft's echo tests).
#[test]
fn on_an_echo_path_data_and_acks_share_the_bottleneck_queue() {
    let one_way = |from: &str, to: &str, rate: &str| json!({"from": from, "to": to, "rate": rate, "delay": "1ms", "duplex": false});
    let sc = json!({
        "duration": "30s", "hosts": ["s", "r"], "routers": ["g", "e", "h"],
        "links": [one_way("s", "g", "10Mbps"), one_way("r", "g", "10Mbps"), one_way("g", "e", "100kbps"),
                  one_way("e", "h", "100kbps"), one_way("h", "s", "10Mbps"), one_way("h", "r", "10Mbps")],
        "flows": [{"kind": "tcp", "src": "s", "dst": "r", "cc": "reno", "bytes": "100KB"}]
    });
    let r = run(&sc);
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), 100_000.0);
    let data = flow_value(&r, 0, "packets_sent");
    let through = link_value(&r, "g->e", "departed_packets");
    // Every data segment and every ACK (and the SYN-ACK) crossed g->e.
    assert!(through > data * 1.3, "g->e carried {through} packets for {data} data segments");
    assert_eq!(link_value(&r, "s->g", "departed_packets"), data + 1.0); // and the SYN
}
