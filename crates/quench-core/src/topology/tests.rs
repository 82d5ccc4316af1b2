//! Generated fabrics routed end to end through the builder, against closed forms: the number
//! of equal-cost paths between hosts, the spread of flows (ECMP) and of one flow's packets
//! (spraying) over a switch's uplinks, and routes unchanged where switches keep `first`.
//! Tests only: they build worlds from scenarios and read their routes; they change no engine code.

use crate::packet::{FlowId, LinkId, NodeId, Packet, Proto};
use crate::qdisc::harness::packet;
use crate::routing::MultipathPolicy;
use crate::scenario::Scenario;
use crate::world::World;
use serde_json::{json, Value};
use std::time::Instant;

fn world(topology: Value) -> World {
    let sc = json!({"duration": "1s", "topologies": [topology]});
    crate::builder::build(&Scenario::from_json(&sc.to_string()).unwrap()).unwrap()
}

fn fat_tree(k: u64, multipath: &str) -> World {
    world(json!({"kind": "fat_tree", "k": k, "rate": "1Gbps", "delay": "1us", "multipath": multipath}))
}

fn node(w: &World, name: &str) -> NodeId {
    NodeId(w.nodes.iter().position(|n| n.name == name).unwrap_or_else(|| panic!("no node {name}")) as u32)
}

/// Paths from `at` to `dst` over every node's equal-cost next hops.
fn paths(w: &World, at: NodeId, dst: NodeId) -> u64 {
    if at == dst {
        return 1;
    }
    w.routes.next_hops(at, dst).iter().map(|l| paths(w, w.links[l.index()].to, dst)).sum()
}

/// A packet of flow `flow` from `src` to `dst`.
fn flow_packet(src: NodeId, dst: NodeId, flow: u32) -> Packet {
    Packet { src, dst, flow: FlowId(flow), proto: Proto::Tcp, ..packet(0, flow, 1500) }
}

/// Hosts h0 (pod 0, edge 0) and: h1 (same edge), h[k/2] (same pod, next edge), h[(k/2)²]
/// (next pod). Al-Fares et al. section 3.3: (k/2)² paths between pods, k/2 within a pod.
#[test]
fn equal_cost_paths_match_the_closed_forms() {
    for k in [4u64, 6, 8] {
        let w = fat_tree(k, "ecmp");
        let half = k / 2;
        let h = |i: u64| node(&w, &format!("h{i}"));
        assert_eq!(paths(&w, h(0), h(1)), 1, "k = {k}, same edge switch");
        assert_eq!(paths(&w, h(0), h(half)), half, "k = {k}, same pod");
        assert_eq!(paths(&w, h(0), h(half * half)), half * half, "k = {k}, other pod");
        assert_eq!(paths(&w, h(k * half * half - 1), h(0)), half * half, "k = {k}, last host to first");
    }
    let w = world(json!({"kind": "leaf_spine", "hosts_per_leaf": 4, "leaves": 3, "spines": 5,
                         "rate": "10Gbps", "delay": "1us"}));
    assert_eq!(paths(&w, node(&w, "h0"), node(&w, "h11")), 5, "one path per spine");
    assert_eq!(paths(&w, node(&w, "h0"), node(&w, "h3")), 1, "same leaf");
}

/// The uplink `at` routes `pkt` over, as an index among its equal-cost set to `pkt.dst`.
fn uplink(w: &mut World, at: NodeId, pkt: &Packet) -> usize {
    let set: Vec<LinkId> = w.routes.next_hops(at, pkt.dst);
    let l = w.routes.route(at, pkt, crate::units::Time::ZERO).unwrap();
    set.iter().position(|&s| s == l).expect("the choice is one of the equal-cost next hops")
}

/// Whether `counts` (draws of n uniform choices over counts.len() bins) lie within four
/// binomial standard deviations of even.
fn within_binomial_spread(counts: &[u64]) -> bool {
    let n: u64 = counts.iter().sum();
    let p = 1.0 / counts.len() as f64;
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    counts.iter().all(|&c| (c as f64 - mean).abs() <= 4.0 * sd)
}

/// ECMP on a k = 8 fat-tree: 8,000 flows from a host to hosts of other pods spread over its
/// edge switch's four uplinks within the binomial spread of even, and at the aggregation
/// switch above over its four; a flow's packets take one path.
#[test]
fn ecmp_spreads_flows_evenly_and_keeps_each_on_one_path() {
    let mut w = fat_tree(8, "ecmp");
    let (src, tor, agg) = (node(&w, "h0"), node(&w, "tor0"), node(&w, "agg0_0"));
    let flows = 8000u32;
    let (mut at_tor, mut at_agg) = (vec![0u64; 4], vec![0u64; 4]);
    for f in 0..flows {
        let dst = node(&w, &format!("h{}", 16 + f % 112));
        let pkt = flow_packet(src, dst, f);
        let first = uplink(&mut w, tor, &pkt);
        assert!((0..5).all(|_| uplink(&mut w, tor, &pkt) == first), "flow {f} changed path");
        at_tor[first] += 1;
        at_agg[uplink(&mut w, agg, &pkt)] += 1;
    }
    eprintln!("flows per uplink: edge {at_tor:?}, aggregation {at_agg:?}");
    assert!(within_binomial_spread(&at_tor), "{at_tor:?}");
    assert!(within_binomial_spread(&at_agg), "{at_agg:?}");
}

/// Spraying: one flow's packets go round robin over the four uplinks, exactly even; random
/// spraying is even within the binomial spread.
#[test]
fn spraying_spreads_one_flows_packets() {
    for (policy, exact) in [("spray", true), ("spray_random", false)] {
        let mut w = fat_tree(8, policy);
        let (tor, pkt) = (node(&w, "tor0"), flow_packet(node(&w, "h0"), node(&w, "h100"), 7));
        let mut counts = vec![0u64; 4];
        for _ in 0..4000 {
            counts[uplink(&mut w, tor, &pkt)] += 1;
        }
        eprintln!("{policy}: packets per uplink {counts:?}");
        if exact {
            assert_eq!(counts, [1000; 4]);
        }
        assert!(within_binomial_spread(&counts), "{policy}: {counts:?}");
    }
}

/// Per-flow spraying (`spray_flow`) on a k = 8 fat-tree, where a flow to another pod has 4
/// edge uplinks and 4 aggregation uplinks to choose from, 16 paths. Hand computation: the edge
/// switch's turn for the flow steps once per packet, so each run of 4 packets (a cycle) takes
/// the 4 uplinks once each; an aggregation switch gets one packet of each edge cycle, so its
/// own cycle of 4 spans 16 of the flow's packets, which therefore cross the 16 paths once each.
/// Each cycle's order is drawn anew (the 24 orders of 4 uplinks come up evenly over 1,000
/// cycles), two flows' orders differ, and another flow's packets in between change neither
/// (`spray`'s one turn per switch would tie them to each other).
#[test]
fn per_flow_spraying_cycles_each_flows_own_order() {
    let mut w = fat_tree(8, "spray_flow");
    let tor = node(&w, "tor0");
    let (a, b) = (flow_packet(node(&w, "h0"), node(&w, "h100"), 7), flow_packet(node(&w, "h1"), node(&w, "h64"), 8));
    let (mut orders_a, mut orders_b) = (Vec::new(), Vec::new());
    for _ in 0..1000 {
        let (mut cycle_a, mut cycle_b) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            cycle_a.push(uplink(&mut w, tor, &a));
            cycle_b.push(uplink(&mut w, tor, &b));
        }
        for cycle in [&cycle_a, &cycle_b] {
            let mut sorted = cycle.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2, 3], "a cycle takes each uplink once: {cycle:?}");
        }
        orders_a.push(cycle_a);
        orders_b.push(cycle_b);
    }
    assert_ne!(orders_a, orders_b, "two flows' orders differ");
    let mut per_order = std::collections::BTreeMap::new();
    for order in &orders_a {
        *per_order.entry(order.clone()).or_insert(0u64) += 1;
    }
    let counts: Vec<u64> = per_order.into_values().collect();
    eprintln!("spray_flow: cycles per order of the 4 uplinks {counts:?}");
    assert_eq!(counts.len(), 24, "every order comes up");
    assert!(within_binomial_spread(&counts), "{counts:?}");

    let mut w = fat_tree(8, "spray_flow");
    let pkt = flow_packet(node(&w, "h0"), node(&w, "h100"), 7);
    for block in 0..100 {
        let mut crossed = std::collections::BTreeSet::new();
        for _ in 0..16 {
            let up = w.routes.route(tor, &pkt, crate::units::Time::ZERO).unwrap();
            let agg = w.links[up.index()].to;
            crossed.insert((up, w.routes.route(agg, &pkt, crate::units::Time::ZERO).unwrap()));
        }
        assert_eq!(crossed.len(), 16, "block {block}: 16 packets cross the 16 paths once each");
    }
}

/// `permuted` draws each of the 6 orders of 3 next hops evenly over 6,000 seeds, and each
/// draw is a permutation.
#[test]
fn per_flow_orders_are_uniform_permutations() {
    let mut counts = std::collections::BTreeMap::new();
    for seed in 0..6000u64 {
        let order: Vec<u64> =
            (0..3).map(|i| crate::routing::permuted(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 3, i)).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2], "seed {seed}: {order:?}");
        *counts.entry(order).or_insert(0u64) += 1;
    }
    let counts: Vec<u64> = counts.into_values().collect();
    assert_eq!(counts.len(), 6);
    assert!(within_binomial_spread(&counts), "{counts:?}");
}

/// With `first`, a fabric's switches route every packet by the table, as listed routers do.
#[test]
fn first_keeps_the_tables_route() {
    let mut w = fat_tree(4, "first");
    assert_eq!(w.routes.multipath_entries(), (0, 0));
    for f in 0..64u32 {
        let (src, dst) = (NodeId(f % 16), NodeId((f * 7 + 3) % 16));
        if src == dst {
            continue;
        }
        let pkt = flow_packet(src, dst, f);
        for at in 16..w.nodes.len() as u32 {
            assert_eq!(w.routes.route(NodeId(at), &pkt, crate::units::Time::ZERO), w.routes.next_hop(NodeId(at), dst));
        }
    }
    let sc = json!({"duration": "1s", "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps",
                    "delay": "1us"}], "multipath": {"core0": "spray", "agg0_0": "first"}});
    let w = crate::builder::build(&Scenario::from_json(&sc.to_string()).unwrap()).unwrap();
    assert_eq!(w.routes.next_hops(node(&w, "agg0_0"), node(&w, "h15")).len(), 1, "overridden to first");
    assert_eq!(w.routes.next_hops(node(&w, "agg1_0"), node(&w, "h15")).len(), 2);
}

/// A k = 16 fat-tree (1,024 hosts, 320 switches, 6,144 links) builds in well under a second,
/// its multipath state a few hundred kilobytes. The bound is loose (shared test machines);
/// docs/design.md quotes the measured time.
#[test]
fn a_k16_fat_tree_builds_quickly() {
    let started = Instant::now();
    let w = fat_tree(16, "ecmp");
    let took = started.elapsed();
    let (sets, entries) = w.routes.multipath_entries();
    eprintln!(
        "k = 16: built in {took:?}; {} nodes, {} links, {} table entries, {sets} equal-cost sets, {entries} multipath entries",
        w.nodes.len(),
        w.links.len(),
        w.routes.table_entries()
    );
    assert_eq!((w.nodes.len(), w.links.len()), (1024 + 320, 6144));
    assert!(took.as_secs_f64() < 2.0, "{took:?}");
    assert!(sets < 1000 && entries <= 320 * 320, "{sets} sets, {entries} entries");
}

/// A switch's forwarding state grows with its ports and the fabric's leaves (edge switches),
/// not with hosts: per switch, a table row and an equal-cost group index per destination
/// column (every switch is one; hosts are reached through their edge switch), and the shared
/// equal-cost sets. k = 4, 8, 16: 20, 80 and 320 columns, so 2·(5k²/4) entries a switch, under
/// 5 per leaf (k²/2) and port (k) together; 9k²/4 sets of at most k/2 links for the whole
/// fabric. Measured, not timed (docs/benchmarks.md, "Fabrics against htsim").
#[test]
fn forwarding_state_per_switch_grows_with_ports_and_leaves() {
    for k in [4u64, 8, 16] {
        let w = fat_tree(k, "ecmp");
        let switches = (5 * k * k / 4) as usize;
        let (sets, group_entries) = w.routes.multipath_entries();
        let per_switch = (w.routes.table_entries() + group_entries) / switches;
        let leaves = (k * k / 2) as usize;
        let bytes = 4 * per_switch;
        eprintln!("k = {k}: {per_switch} entries ({bytes} B) per switch, {sets} equal-cost sets shared by all");
        assert_eq!(per_switch, 2 * switches, "a row and a group index per column");
        assert!(per_switch <= 5 * (k as usize + leaves), "k = {k}: {per_switch} entries per switch");
        assert!(sets <= 4 * switches, "k = {k}: {sets} sets");
    }
}

#[test]
fn errors_name_the_key() {
    let build = |sc: Value| crate::builder::build(&Scenario::from_json(&sc.to_string()).unwrap());
    let ft = json!({"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "1us"});
    let e = build(json!({"duration": "1s", "topologies": [ft, ft]})).err().unwrap();
    assert_eq!(e.path, "topologies[1]");
    assert!(e.message.contains("declared twice") && e.message.contains("prefix"), "{e}");
    let e =
        build(json!({"duration": "1s", "topologies": [{"kind": "fat_tree", "k": 5, "rate": "1Gbps", "delay": "1us"}]}));
    assert_eq!(e.err().unwrap().path, "topologies[0].k");
    let bad_tier = json!({"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "1us", "core": {"rate": "0bps"}});
    assert_eq!(
        build(json!({"duration": "1s", "topologies": [bad_tier]})).err().unwrap().path,
        "topologies[0].core.rate"
    );
    let huge = json!({"kind": "leaf_spine", "hosts_per_leaf": 4096, "leaves": 4096, "spines": 1, "rate": "1Gbps", "delay": "1us"});
    let e = build(json!({"duration": "1s", "topologies": [huge]})).err().unwrap();
    assert_eq!(e.path, "topologies[0]");
    assert!(e.message.contains("links"), "{e}");
    let e = build(json!({"duration": "1s", "topologies": [ft], "multipath": {"h0": "ecmp"}})).err().unwrap();
    assert_eq!(e.path, "multipath.h0");
    let e = Scenario::from_json(&json!({"duration": "1s", "topologies": [{"kind": "torus"}]}).to_string()).unwrap_err();
    assert_eq!(e.path, "topologies[0].kind");
    assert_eq!(MultipathPolicy::default(), MultipathPolicy::First);
}

/// Listed hosts and links join a generated fabric: an outside host, linked to two core
/// switches, reaches the fabric's hosts by the first of its links (a host does not choose) and
/// is reached through either of its core switches.
#[test]
fn listed_nodes_and_links_compose_with_a_fabric() {
    let sc = json!({"duration": "1s", "hosts": ["outside"],
        "links": [{"from": "outside", "to": "core0", "rate": "1Gbps", "delay": "1ms"},
                  {"from": "outside", "to": "core2", "rate": "1Gbps", "delay": "1ms"}],
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "1us"}],
        "flows": [{"kind": "tcp", "src": "outside", "dst": "h7"}]});
    let w = crate::builder::build(&Scenario::from_json(&sc.to_string()).unwrap()).unwrap();
    assert_eq!(paths(&w, node(&w, "outside"), node(&w, "h7")), 1);
    assert_eq!(
        paths(&w, node(&w, "h7"), node(&w, "outside")),
        2,
        "up through either aggregation switch to its core switch"
    );
}

/// A tier's `down_qdisc` is the queue of its links' downward direction (towards the hosts):
/// on the access tier the switch's port to the host gets it, the host's own link keeps
/// `qdisc`; without it both directions take `qdisc`.
#[test]
fn down_qdisc_sets_the_switch_port_towards_the_hosts() {
    let access = json!({"qdisc": {"kind": "droptail", "limit": "1000p"}, "down_qdisc": {"kind": "step"}});
    let w = world(json!({"kind": "leaf_spine", "hosts_per_leaf": 2, "leaves": 2, "spines": 1,
                         "rate": "1Gbps", "delay": "1us", "access": access}));
    let kind = |from: &str, to: &str| {
        let l = w.links.iter().find(|l| l.from == node(&w, from) && l.to == node(&w, to)).unwrap();
        l.qdisc.kind()
    };
    assert_eq!((kind("h0", "tor0"), kind("tor0", "h0")), ("droptail", "step"));
    assert_eq!((kind("tor0", "spine0"), kind("spine0", "tor0")), ("droptail", "droptail"));
    let bad = json!({"kind": "leaf_spine", "hosts_per_leaf": 2, "leaves": 2, "spines": 1, "rate": "1Gbps",
                     "delay": "1us", "access": {"down_qdisc": {"kind": "step", "threshold": "5p", "limit": "2p"}}});
    let sc = json!({"duration": "1s", "topologies": [bad]});
    let e = crate::builder::build(&Scenario::from_json(&sc.to_string()).unwrap()).err().unwrap();
    assert!(e.path.starts_with("topologies[0].access.down_qdisc"), "{e}");
}
