//! Whole runs do not depend on the order in which one handler queues its events: each scenario
//! runs with the events of every handler queued as scheduled, reversed and in seeded random
//! orders (`sched::PushOrder`, test builds only), and every table, capture and event count
//! must be bit-identical. Owns nothing of the engine; touches the scheduler's test mode only.

use crate::sched::{set_push_order, PushOrder};
use crate::Simulation;
use serde_json::{json, Value};

/// Every output of a run, to the bit: the tables' Debug text holds each float's exact
/// value (shortest round-trip form), and the captures and the event count are compared whole.
fn outputs(scenario: &Value, order: PushOrder) -> (String, Vec<(String, Vec<u8>)>, u64) {
    set_push_order(order);
    let sim = Simulation::from_json(&scenario.to_string()).expect("a valid scenario");
    let r = sim.run();
    set_push_order(PushOrder::AsScheduled);
    (format!("{:?}", r.tables), r.pcaps, r.events_executed)
}

fn assert_order_free(scenario: Value) {
    let reference = outputs(&scenario, PushOrder::AsScheduled);
    assert!(reference.2 > 1000, "the scenario runs ({} events)", reference.2);
    for order in [PushOrder::Reversed, PushOrder::Shuffled(1), PushOrder::Shuffled(2)] {
        let got = outputs(&scenario, order);
        assert!(got == reference, "{order:?} changed the results of {scenario}");
    }
}

/// `n` senders into one bottleneck with `qdisc`, equal access links, so that ends of
/// transmission and arrivals coincide to the nanosecond.
fn dumbbell(n: usize, qdisc: Value, flows: Vec<Value>) -> Value {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    hosts.push("d".into());
    let mut links: Vec<Value> =
        (0..n).map(|i| json!({"from": format!("s{i}"), "to": "r1", "rate": "100Mbps", "delay": "1ms"})).collect();
    links.push(json!({"from": "r1", "to": "r2", "rate": "10Mbps", "delay": "10ms", "qdisc": qdisc}));
    links.push(json!({"from": "r2", "to": "d", "rate": "100Mbps", "delay": "1ms"}));
    json!({"duration": "3s", "seed": 4, "hosts": hosts, "routers": ["r1", "r2"], "links": links, "flows": flows,
           "record": {"sojourn": true, "segments": true, "pcap": ["r1->r2"]}})
}

fn tcp_flows(n: usize, cc: &str) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc, "tcp": {"sack": true}}))
        .collect()
}

#[test]
fn tcp_over_red_and_codel() {
    assert_order_free(dumbbell(4, json!({"kind": "red"}), tcp_flows(4, "newreno")));
    assert_order_free(dumbbell(4, json!({"kind": "codel"}), tcp_flows(4, "cubic")));
}

/// A bottleneck whose wire reorders (1 ms of uniform jitter, a packet per event on the wire)
/// and corrupts: packets land at equal instants on the wire's own events.
#[test]
fn tcp_over_a_jittered_corrupting_wire() {
    let mut scenario = dumbbell(3, json!({"kind": "droptail", "limit": "30p"}), tcp_flows(3, "cubic"));
    let bottleneck = &mut scenario["links"][3];
    bottleneck["jitter"] = json!({"sigma": "1ms", "dist": "uniform"});
    bottleneck["corrupt"] = json!(0.001);
    assert_order_free(scenario);
}

/// A constant-bit-rate source exactly at the bottleneck's rate beside TCP flows: its timers
/// fall on the bottleneck's ends of transmission.
#[test]
fn line_rate_source_beside_tcp() {
    let mut flows = tcp_flows(2, "newreno");
    flows.push(json!({"kind": "udp", "src": "s2", "dst": "d", "rate": "10Mbps", "size": "1250B"}));
    assert_order_free(dumbbell(3, json!({"kind": "droptail", "limit": "20p"}), flows));
}

fn fat_tree(multipath: &str) -> Value {
    let flows: Vec<Value> = (0..16)
        .map(|i| json!({"kind": "tcp", "src": format!("h{i}"), "dst": format!("h{}", (i + 5) % 16), "bytes": "300KB"}))
        .collect();
    json!({
        "duration": "1s", "seed": 3,
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "10us",
                        "qdisc": {"kind": "droptail", "limit": "50p"}, "multipath": multipath}],
        "flows": flows,
        "record": {"flow_links": true}
    })
}

#[test]
fn fat_tree_with_ecmp_and_spraying() {
    assert_order_free(fat_tree("ecmp"));
    assert_order_free(fat_tree("spray_flow"));
}

/// A fabric link fails and comes back while flows run; routing converges 1 ms after each
/// change, so changes, reroutes, arrivals and drops of a link that is down share instants.
#[test]
fn link_failure_and_reroute() {
    let mut scenario = fat_tree("ecmp");
    scenario["routing_convergence"] = json!("1ms");
    scenario["link_changes"] = json!([
        {"link": "agg0_0->core0", "at": "2ms", "up": false},
        {"link": "agg0_0->core0", "at": "6ms", "up": true}
    ]);
    assert_order_free(scenario);
}

/// Lossless incast: eight DCTCP senders into one port of a PFC switch, pause and resume frames
/// crossing ends of transmission and arrivals at equal instants.
#[test]
fn pfc_incast() {
    let mut hosts: Vec<String> = (0..8).map(|i| format!("h{i}")).collect();
    hosts.push("d".into());
    let mut links: Vec<Value> =
        (0..8).map(|i| json!({"from": format!("h{i}"), "to": "s", "rate": "10Gbps", "delay": "1us"})).collect();
    links.push(json!({"from": "s", "to": "d", "rate": "10Gbps", "delay": "1us",
                      "qdisc": {"kind": "step", "limit": "300KB", "threshold": "40KB"}}));
    let tcp = json!({"sack": true, "delayed_ack": {"enabled": false}});
    let flows: Vec<Value> = (0..8)
        .map(
            |i| json!({"kind": "tcp", "src": format!("h{i}"), "dst": "d", "cc": "dctcp", "bytes": "500KB", "tcp": tcp}),
        )
        .collect();
    assert_order_free(json!({
        "duration": "20ms", "seed": 1, "hosts": hosts, "routers": ["s"], "links": links, "flows": flows,
        "pfc": {"xoff": "20KB"}, "record": {"monitors": true}
    }));
}

/// Senders held by their own host's queue (the linux profile's TCP Small Queues): a packet
/// leaving the host wakes its sender at the instant of the host link's end of transmission.
#[test]
fn senders_held_by_their_host_queue() {
    let flows: Vec<Value> = (0..3)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "tcp": {"profile": "linux"}}))
        .collect();
    assert_order_free(dumbbell(3, json!({"kind": "droptail", "limit": "30p"}), flows));
}

#[test]
fn workload_arrivals() {
    assert_order_free(json!({
        "duration": "5s", "seed": 5,
        "hosts": ["a", "b", "c", "d"], "routers": ["r"],
        "links": [
            {"from": "a", "to": "r", "rate": "10Mbps", "delay": "10ms"},
            {"from": "c", "to": "r", "rate": "10Mbps", "delay": "10ms"},
            {"from": "r", "to": "b", "rate": "10Mbps", "delay": "1ms", "qdisc": {"kind": "droptail", "limit": "10p"}},
            {"from": "r", "to": "d", "rate": "1Gbps", "delay": "0ms"}
        ],
        "workloads": [{"name": "web", "pairs": [["a", "b"], ["c", "b"], ["c", "d"]], "arrival_rate": 20.0,
                       "size": "30KB", "flow": {"kind": "tcp", "cc": "newreno"}}]
    }));
}

/// Within a class, the instant's arbitration permutes the ids (keys stay unique) and hands
/// any two components the first place at about half the instants, whatever their ids.
#[test]
fn arbitration_permutes_ids_and_rotates_ties() {
    use crate::units::Time;
    use crate::world::arbitration;
    for at in (0..1_000u64).map(|i| Time(i * 1_237)) {
        let mut ranks: Vec<u32> = (0..64).map(|id| arbitration(at, id)).collect();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), 64, "a permutation at {at:?}");
    }
    let instants = 10_000u64;
    for (a, b) in [(0, 1), (3, 4), (0, 63), (7, 1_000_000)] {
        let first = (0..instants).filter(|i| arbitration(Time(i * 1_000), a) < arbitration(Time(i * 1_000), b)).count();
        let share = first as f64 / instants as f64;
        assert!((0.47..=0.53).contains(&share), "{a} before {b} at {share} of the instants");
    }
}
