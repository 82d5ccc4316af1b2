//! The per-packet one-way delay record (`record.delay`, `trace/delay.rs`) against a closed
//! form: on a path that never queues, every datagram's one-way delay is the sum of its
//! serializations and propagation delays, exactly; a TCP flow's ACKs, which carry no data, are
//! not recorded; an unknown name is refused naming its place in the list.

mod common;
use common::*;
use serde_json::json;

/// 1000-byte datagrams (972 payload + 28 header bytes) at 8 Mb/s, one every 1 ms, a -> r -> b:
/// 100 Mb/s and 1 ms, then 10 Mb/s and 5 ms. Nothing queues (8 < 10 Mb/s), so each takes
/// 80 us + 1 ms + 800 us + 5 ms = 6.88 ms.
#[test]
fn a_datagrams_delay_is_its_serializations_and_propagation() {
    let sc = json!({
        "duration": "1s", "seed": 1,
        "hosts": ["a", "b"], "routers": ["r"],
        "links": [{"from": "a", "to": "r", "rate": "100Mbps", "delay": "1ms"},
                  {"from": "r", "to": "b", "rate": "10Mbps", "delay": "5ms"}],
        "flows": [{"kind": "udp", "name": "voip", "src": "a", "dst": "b", "rate": "8Mbps", "size": "972B"},
                  {"kind": "tcp", "name": "bulk", "src": "b", "dst": "a", "bytes": "30KB"}],
        "record": {"delay": ["voip"]}
    });
    let r = run(&pin_rfc_profile(&sc));
    let delays = f64s(&r, "delay", "delay_s");
    let (sent, arrived) = (f64s(&r, "delay", "sent_s"), f64s(&r, "delay", "time_s"));
    // Sent at 0, 1, ..., 993 ms: the last 6 ms of sends are still on their way at 1 s.
    assert_eq!(delays.len(), 994);
    assert!(delays.iter().all(|d| (d - 6.88e-3).abs() < 1e-12), "{:?}", &delays[..3]);
    assert!(sent.iter().zip(&arrived).zip(&delays).all(|((s, a), d)| (a - s - d).abs() < 1e-12));
    assert!(u64s(&r, "delay", "size").iter().all(|&s| s == 1000));
    assert!(u64s(&r, "delay", "flow").iter().all(|&f| f == 0), "only the named flow");
}

/// A TCP flow's data segments are recorded and its ACKs are not: as many rows as data
/// packets received.
#[test]
fn a_tcp_flows_data_is_recorded_and_its_acks_are_not() {
    let mut sc = two_hosts_through_a_router();
    sc["duration"] = json!("2s");
    sc["flows"] = json!([{"kind": "tcp", "name": "bulk", "src": "a", "dst": "b", "bytes": "100KB"}]);
    sc["record"] = json!({"delay": ["bulk"]});
    let r = run(&pin_rfc_profile(&sc));
    let rows = f64s(&r, "delay", "delay_s").len() as f64;
    let segments = (100_000f64 / 1460.0).ceil();
    assert!(rows >= segments, "{rows} rows for {segments} segments");
    assert!(u64s(&r, "delay", "size").iter().all(|&s| s > 40), "no bare ACK or SYN");
}

#[test]
fn an_unknown_flow_is_refused_naming_its_place() {
    let mut sc = two_hosts_through_a_router();
    sc["flows"] = json!([{"kind": "tcp", "name": "bulk", "src": "a", "dst": "b"}]);
    sc["record"] = json!({"delay": ["bulk", "voip"]});
    expect_error(sc, "record.delay[1]", "no listed flow named 'voip'");
}
