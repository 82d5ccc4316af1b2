//! Error paths: a bad scenario is rejected with a ConfigError whose path names the offending
//! key (reference: the scenario itself — the key we broke).

mod common;
use common::*;
use serde_json::{json, Value};

fn base() -> Value {
    two_hosts_through_a_router()
}

fn expect(sc: Value, path: &str, words: &str) {
    expect_error(sc, path, words);
}

#[test]
fn unknown_qdisc_kind() {
    let mut sc = base();
    sc["links"][1]["qdisc"] = json!({"kind": "fifo-ish", "limit": "10p"});
    expect(sc, "links[1].qdisc.kind", "unknown variant `fifo-ish`");
}

#[test]
fn zero_rate() {
    let mut sc = base();
    sc["links"][1]["rate"] = json!("0Mbps");
    expect(sc, "links[1].rate", "positive");
}

#[test]
fn negative_rate() {
    let mut sc = base();
    sc["links"][0]["rate"] = json!("-5Mbps");
    expect(sc, "links[0].rate", "non-negative");
}

#[test]
fn unreachable_destination() {
    let mut sc = base();
    sc["hosts"] = json!(["a", "b", "c", "d"]);
    sc["links"] = json!([{"from": "a", "to": "r", "rate": "10Mbps", "delay": "1ms"},
                         {"from": "r", "to": "b", "rate": "10Mbps", "delay": "1ms"},
                         {"from": "c", "to": "d", "rate": "10Mbps", "delay": "1ms"}]);
    sc["flows"] =
        json!([{"kind": "tcp", "src": "a", "dst": "b"}, {"kind": "udp", "src": "a", "dst": "d", "rate": "1Mbps"}]);
    expect(sc, "flows[1].dst", "unreachable");
}

#[test]
fn unit_typo() {
    let mut sc = base();
    sc["links"][0]["rate"] = json!("10Mbsp");
    expect(sc, "links[0].rate", "unknown unit 'Mbsp'");
}

#[test]
fn unknown_field() {
    let mut sc = base();
    sc["links"][1]["bandwidth"] = json!("10Mbps");
    expect(sc, "links[1].bandwidth", "unknown field `bandwidth`");
    let mut sc = base();
    sc["flows"][0]["tcp"] = json!({"msss": 1000});
    // Inside a table tagged by `kind` (flows, qdiscs, controllers; `tagged.rs`).
    expect(sc, "flows[0].tcp.msss", "unknown field `msss`");
    let mut sc = base();
    sc["flows"][0]["tcp"] = json!({"sack": "yes"});
    expect(sc, "flows[0].tcp.sack", "expected a boolean");
    let mut sc = base();
    sc["flows"][0]["cc"] = json!({"kind": "fast", "alpha": "many"});
    expect(sc, "flows[0].cc.alpha", "invalid type");
    let mut sc = base();
    sc["links"][1]["qdisc"] = json!({"kind": "red", "min_th": "x"});
    expect(sc, "links[1].qdisc.min_th", "not a number");
    let mut sc = base();
    sc["flows"][0]["tcp"] = json!({"newreno_timer": "patient"});
    expect(sc, "flows[0].tcp.newreno_timer", "unknown variant `patient`");
}

#[test]
fn flow_from_a_router() {
    let mut sc = base();
    sc["flows"][0]["src"] = json!("r");
    expect(sc, "flows[0].src", "router");
}

#[test]
fn mss_larger_than_the_path_mtu_with_dont_fragment() {
    // Without don't-fragment the segment is fragmented (tests/fragmentation.rs); with it, the
    // scenario cannot work and is rejected, naming the MSS.
    let mut sc = base();
    sc["links"][1]["mtu"] = json!("576B");
    sc["flows"][0]["tcp"] = json!({"mss": 1460, "dont_fragment": true});
    expect(sc, "flows[0].tcp.mss", "MTU");
}
