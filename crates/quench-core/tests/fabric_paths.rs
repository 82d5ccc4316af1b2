//! Flowlet switching, flows pinned to named paths, and flows that start when others complete,
//! end to end.
//! References: a hand count of the links a pinned path crosses on a k = 4 fat-tree (Al-Fares
//! et al., SIGCOMM 2008: a path between pods is 6 links each way), the lone-flow ideal FCT of
//! `fct.rs` (exact to the nanosecond at 1 Gb/s for a flow within its initial window), and
//! for flowlets the argument of Kandula et al. (CCR 2007): a flowlet that waits longer than the
//! paths' delay skew before moving cannot overtake its predecessors; the flows table's
//! `reordered_segments` and `duplicate_segments` against a byte-by-byte count of the arrivals
//! the flow monitor shows at the receiver's link (without loss, with scripted losses, and with
//! the spurious retransmissions deep reordering causes).

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn fat_tree(flows: Value) -> Value {
    json!({
        "duration": "1s",
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "10us",
                        "qdisc": {"kind": "droptail", "limit": "100p"}, "multipath": "ecmp"}],
        "flows": flows,
        "record": {"flow_links": true, "queues": false, "cwnd": false, "rtt": false}
    })
}

/// The names of the links flow `flow` arrived at (from `flow_links`).
fn links_of(r: &quench_core::RunResult, flow: u64) -> BTreeSet<String> {
    let names = strs(r, "links", "name");
    let ids = u64s(r, "links", "link");
    let (fl, link, arrived) =
        (u64s(r, "flow_links", "flow"), u64s(r, "flow_links", "link"), u64s(r, "flow_links", "arrived_packets"));
    (0..fl.len())
        .filter(|&i| fl[i] == flow && arrived[i] > 0)
        .map(|i| names[ids.iter().position(|&l| l == link[i]).unwrap()].clone())
        .collect()
}

fn hops(path: &[&str]) -> BTreeSet<String> {
    path.windows(2).map(|w| format!("{}->{}", w[0], w[1])).collect()
}

/// h0 (pod 0) to h5 (pod 1) over aggregation switch 1 of each pod and core 3, out of the four
/// equal-cost paths; back over aggregation 0 and core 1.
const THERE: [&str; 7] = ["h0", "tor0", "agg0_1", "core3", "agg1_1", "tor2", "h5"];
const BACK: [&str; 7] = ["h5", "tor2", "agg1_0", "core1", "agg0_0", "tor0", "h0"];

#[test]
fn a_pinned_flow_crosses_exactly_its_named_links() {
    let r = run(&fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5", "bytes": "200KB",
                                  "path": THERE, "reverse_path": BACK}])));
    assert!(f64s(&r, "flows", "completion_s")[0].is_finite());
    let want: BTreeSet<String> = hops(&THERE).union(&hops(&BACK)).cloned().collect();
    assert_eq!(want.len(), 12);
    assert_eq!(links_of(&r, 0), want);
}

/// Without `reverse_path` the data follows the path and the ACKs the fabric's routes (ECMP):
/// the forward links are the named ones, whatever the seed.
#[test]
fn acks_of_a_flow_pinned_one_way_follow_the_routes() {
    for seed in [1, 2, 3] {
        let mut sc = fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5", "bytes": "200KB", "path": THERE}]));
        sc["seed"] = json!(seed);
        let r = run(&sc);
        let crossed = links_of(&r, 0);
        assert_eq!(crossed.len(), 12, "one path each way");
        let up_and_down: BTreeSet<String> = hops(&THERE);
        assert!(up_and_down.is_subset(&crossed), "seed {seed}: {crossed:?}");
    }
}

#[test]
fn a_path_that_skips_a_link_is_refused_naming_the_key() {
    let skip = ["h0", "tor0", "core3", "agg1_1", "tor2", "h5"];
    let sc = fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5"},
                             {"kind": "tcp", "src": "h0", "dst": "h5", "path": skip}]));
    expect_error(sc, "flows[1].path[2]", "no link joins 'tor0' to 'core3'");
    let sc = fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5", "path": ["h0", "tor0", "h1"]}]));
    expect_error(sc, "flows[0].path[2]", "must end at 'h5'");
    let sc = fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5", "reverse_path": THERE}]));
    expect_error(sc, "flows[0].reverse_path[0]", "must start at 'h5'");
    let sc = fat_tree(json!([{"kind": "tcp", "src": "h0", "dst": "h5", "path": ["h0", "tor0", "agg9", "h5"]}]));
    expect_error(sc, "flows[0].path[2]", "no host or router named 'agg9'");
}

/// A chain a -> b -> c of 10 kB flows (within the initial window) on the idle fabric, as a
/// ring passes data on: each starts exactly when the previous completes (c 1 ms later, its
/// `start`), and each takes its lone-flow ideal (handshake, then the window's segments store
/// and forward: `fct.rs`), but for b: b's SYN leaves h5 in the instant a's receiver there
/// sends its last ACK, and waits behind it on h5's access link, one 52-byte ACK (IP, TCP and
/// timestamp headers) at 1 Gb/s: 416 ns. c starts a millisecond after b's last ACK left.
#[test]
fn a_chain_of_flows_starts_each_when_the_previous_completes() {
    let tcp = json!({"profile": "linux"});
    let r = run(&fat_tree(json!([
        {"kind": "tcp", "name": "a", "src": "h0", "dst": "h5", "bytes": 10000, "tcp": tcp},
        {"kind": "tcp", "name": "b", "src": "h5", "dst": "h10", "bytes": 10000, "tcp": tcp, "after": ["a"]},
        {"kind": "tcp", "name": "c", "src": "h10", "dst": "h1", "bytes": 10000, "tcp": tcp, "after": ["b"],
         "start": "1ms"}
    ])));
    let (start, done) = (f64s(&r, "flows", "start_s"), f64s(&r, "flows", "completion_s"));
    let (response, ideal) = (f64s(&r, "flows", "response_time_s"), f64s(&r, "flows", "ideal_fct_s"));
    eprintln!("start {start:?}\ncompletion {done:?}\nideal {ideal:?}");
    assert_eq!(start[0], 0.0);
    assert_eq!((start[1] * 1e9).round(), (done[0] * 1e9).round(), "b starts at a's completion");
    assert_eq!((start[2] * 1e9).round(), ((done[1] + 1e-3) * 1e9).round(), "c starts 1 ms after b's completion");
    let behind_an_ack_ns = 52.0 * 8.0;
    for (f, wait_ns) in [(0, 0.0), (1, behind_an_ack_ns), (2, 0.0)] {
        assert_eq!((response[f] * 1e9).round(), (ideal[f] * 1e9).round() + wait_ns, "flow {f}");
    }
    // fct.rs's closed form for 10 kB across pods: 327.904 us with 52-byte SYNs, plus the
    // linux SYN's and SYN-ACK's 8 more option bytes (mss, wscale) on 6 links each way at
    // 1 Gb/s: 12 · 64 ns.
    assert!((ideal[0] - (327.904e-6 + 12.0 * 64e-9)).abs() < 1e-12, "{}", ideal[0]);
    let chain_s = ideal[0] + ideal[1] + behind_an_ack_ns * 1e-9 + 1e-3 + ideal[2];
    assert!((done[2] - chain_s).abs() < 1e-12, "{} vs {chain_s}", done[2]);
}

#[test]
fn a_flow_whose_predecessor_never_completes_never_starts() {
    let r = run(&fat_tree(json!([
        {"kind": "tcp", "name": "endless", "src": "h0", "dst": "h5"},
        {"kind": "tcp", "name": "next", "src": "h5", "dst": "h0", "bytes": 1000, "after": ["endless"]}
    ])));
    assert!(f64s(&r, "flows", "completion_s")[1].is_nan());
    assert!(f64s(&r, "flows", "slowdown")[1].is_nan());
    assert_eq!(u64s(&r, "flows", "packets_sent")[1], 0);
}

#[test]
fn a_cycle_of_dependencies_is_refused() {
    let sc = fat_tree(json!([
        {"kind": "tcp", "name": "a", "src": "h0", "dst": "h5", "bytes": 1000, "after": ["c"]},
        {"kind": "tcp", "name": "b", "src": "h5", "dst": "h10", "bytes": 1000, "after": ["a"]},
        {"kind": "tcp", "name": "c", "src": "h10", "dst": "h0", "bytes": 1000, "after": ["b"]}
    ]));
    expect_error(sc, "flows[0].after", "a cycle: a -> c -> b -> a");
    let sc = fat_tree(json!([{"kind": "tcp", "name": "a", "src": "h0", "dst": "h5", "after": ["z"]}]));
    expect_error(sc, "flows[0].after[0]", "no listed flow named 'z'");
}

/// Host a to host b through switch s, which reaches t over m1 (5 us each way) or m2 (30 us
/// each way): the paths' one-way delays differ by 50 us. s splits a's TCP flow into flowlets.
/// The flow's receive window (two segments) leaves it idle for most of each round trip
/// (over 200 us, the access links taking 100 us each way), so each window is a flowlet under
/// a 100 us gap; its two segments, 12 us apart at 1 Gb/s, are two under a 10 us gap.
fn diamond(gap: &str) -> Value {
    let link = |from: &str, to: &str, delay: &str| json!({"from": from, "to": to, "rate": "1Gbps", "delay": delay, "qdisc": {"kind": "droptail", "limit": "1000p"}});
    json!({
        "duration": "200ms", "seed": 4,
        "hosts": ["a", "b"], "routers": ["s", "m1", "m2", "t"],
        "links": [link("a", "s", "100us"), link("s", "m1", "5us"), link("m1", "t", "5us"),
                  link("s", "m2", "30us"), link("m2", "t", "30us"), link("t", "b", "100us")],
        "multipath": {"s": "flowlet"},
        "flowlet_gap": gap,
        "flows": [{"kind": "tcp", "name": "f", "src": "a", "dst": "b", "bytes": "1MB",
                   "tcp": {"profile": "linux", "receive_window": 2896}}],
        "record": {"flow_links": true, "monitor_flow": {"flow": "f"}, "queues": false, "cwnd": false, "rtt": false}
    })
}

/// The flow monitor's event, link, sequence number and payload length columns.
fn monitor_columns(r: &quench_core::RunResult) -> (Vec<String>, Vec<u64>, Vec<u64>, Vec<u64>) {
    (
        strs(r, "flow_monitor", "event"),
        u64s(r, "flow_monitor", "link"),
        u64s(r, "flow_monitor", "seq"),
        u64s(r, "flow_monitor", "len"),
    )
}

/// Data segments that reached b's link behind a segment with a higher sequence number (from
/// the flow monitor's arrivals at link t->b): the receiver's reordering.
fn reordered(r: &quench_core::RunResult) -> (u64, u64) {
    let last = link_row(r, "t->b") as u64;
    let (event, link, seq, len) = monitor_columns(r);
    let (mut highest, mut late, mut arrived) = (0, 0, 0);
    for i in (0..event.len()).filter(|&i| event[i] == "arrive" && link[i] == last && len[i] > 0) {
        arrived += 1;
        if seq[i] < highest {
            late += 1;
        }
        highest = highest.max(seq[i]);
    }
    (late, arrived)
}

/// A gap above the 50 us skew: the flow moves between the paths (both carry it) and no
/// segment overtakes another; a gap below it (the positive control): segments arrive out of
/// order. No loss either way (1000-packet buffers): every late arrival is reordering.
#[test]
fn flowlets_longer_than_the_delay_skew_do_not_reorder() {
    for (gap, reorders) in [("100us", false), ("10us", true)] {
        let r = run(&diamond(gap));
        assert!(f64s(&r, "flows", "completion_s")[0].is_finite());
        assert_eq!(u64s(&r, "flows", "retransmitted_segments")[0], 0, "{gap}: no loss");
        let crossed = links_of(&r, 0);
        assert!(crossed.contains("s->m1") && crossed.contains("s->m2"), "{gap}: both paths carry the flow");
        let (late, arrived) = reordered(&r);
        eprintln!("gap {gap}: {late} of {arrived} data segments arrived out of order");
        assert_eq!(late > 0, reorders, "gap {gap}: {late} of {arrived} segments out of order");
        // The receiver's own count is the monitor's: without loss every late arrival carries
        // new data below the highest received, and nothing arrives twice.
        assert_eq!(u64s(&r, "flows", "reordered_segments")[0], late, "{gap}: the receiver counts the late arrivals");
        assert_eq!(u64s(&r, "flows", "duplicate_segments")[0], 0, "{gap}: no segment arrives twice");
    }
}

/// The receiver's (reordered, duplicate) counts worked out from the flow monitor: the data
/// packets that reached link t->b and were not dropped there reach b in that order (the link is
/// FIFO and loses nothing on the wire); each is reordered if it brings a byte not seen before
/// below the highest byte seen, duplicate if it brings no byte not seen before. Bytes are kept
/// one by one, independently of the receiver's ranges.
fn receiver_counts_from_monitor(r: &quench_core::RunResult) -> (u64, u64) {
    let last = link_row(r, "t->b") as u64;
    let (event, link, seq, len) = monitor_columns(r);
    // (seq, len, dropped) of each data arrival at t->b; a drop there is of the latest arrival of
    // its sequence number (a drop-tail queue drops at the arrival).
    let mut arrivals: Vec<(u64, u64, bool)> = Vec::new();
    for i in (0..event.len()).filter(|&i| link[i] == last && len[i] > 0) {
        match event[i].as_str() {
            "arrive" => arrivals.push((seq[i], len[i], false)),
            "drop" => {
                arrivals.iter_mut().rev().find(|a| a.0 == seq[i] && !a.2).expect("a drop follows its arrival").2 = true
            }
            _ => {}
        }
    }
    let mut seen = vec![false; 1 << 21];
    let (mut highest, mut reordered, mut duplicate) = (0, 0, 0);
    for &(s, n, _) in arrivals.iter().filter(|a| !a.2) {
        let (s, e) = (s as usize, (s + n) as usize);
        if seen[s..e].iter().all(|&b| b) {
            duplicate += 1;
        } else if (s..e.min(highest)).any(|b| !seen[b]) {
            reordered += 1;
        }
        seen[s..e].iter_mut().for_each(|b| *b = true);
        highest = highest.max(e);
    }
    (reordered, duplicate)
}

/// With losses as well as reordering (four transmissions across s->m1 lost on the wire by
/// script, Linux's RACK-TLP recovering them), the flows table's counts equal those worked out
/// from the monitor, hole-filling retransmissions among the reordered.
#[test]
fn reordered_and_duplicate_segments_match_the_monitor_under_loss() {
    let mut sc = diamond("10us");
    sc["flows"][0]["tcp"]["profile"] = json!("linux");
    sc["links"][1]["loss"] = json!({"model": "list", "packets": [10, 20, 21, 30]});
    sc["duration"] = json!("2s");
    let r = run(&sc);
    assert_eq!(link_value(&r, "s->m1", "drops_link_loss"), 4.0);
    assert!(f64s(&r, "flows", "completion_s")[0].is_finite());
    let (reordered, duplicate) = receiver_counts_from_monitor(&r);
    let retransmitted = u64s(&r, "flows", "retransmitted_segments")[0];
    eprintln!("4 losses: {reordered} reordered, {duplicate} duplicate, {retransmitted} retransmitted");
    assert_eq!(u64s(&r, "flows", "reordered_segments")[0], reordered);
    assert_eq!(u64s(&r, "flows", "duplicate_segments")[0], duplicate);
}

/// Without loss but with a window of many segments (the default receive window), the 10 us
/// flowlets reorder deeper than Linux's loss detection tolerates at first: the sender resends
/// segments that were only late. Nothing is dropped, so every retransmission is spurious: each
/// resent segment reaches b twice, the later copy a duplicate; the counts equal the monitor's.
#[test]
fn spurious_retransmissions_of_reordered_segments_arrive_as_duplicates() {
    let mut sc = diamond("10us");
    sc["flows"][0]["tcp"] = json!({"profile": "linux"});
    let r = run(&sc);
    let dropped: u64 = u64s(&r, "links", "dropped_packets").iter().sum();
    assert_eq!(dropped, 0, "no loss");
    let (reordered, duplicate) = receiver_counts_from_monitor(&r);
    let retransmitted = u64s(&r, "flows", "retransmitted_segments")[0];
    eprintln!("no loss: {reordered} reordered, {duplicate} duplicate, {retransmitted} retransmitted");
    assert!(retransmitted > 0, "reordering triggers retransmissions");
    assert_eq!(u64s(&r, "flows", "duplicate_segments")[0], retransmitted, "every retransmission spurious");
    assert_eq!(u64s(&r, "flows", "duplicate_segments")[0], duplicate);
    assert_eq!(u64s(&r, "flows", "reordered_segments")[0], reordered);
}

/// A gap longer than any pause of the flow: one flowlet, one path, as ECMP would keep it.
#[test]
fn a_gap_longer_than_every_pause_keeps_one_path() {
    let r = run(&diamond("1s"));
    let crossed = links_of(&r, 0);
    let paths = ["s->m1", "s->m2"].iter().filter(|l| crossed.contains(**l)).count();
    assert_eq!(paths, 1, "{crossed:?}");
    assert_eq!(reordered(&r).0, 0);
    assert_eq!(u64s(&r, "flows", "reordered_segments")[0], 0);
    assert_eq!(u64s(&r, "flows", "duplicate_segments")[0], 0);
}

/// A permutation on the fat-tree (every host sends 500 kB to the host 5 on) completes with
/// every switch splitting flows into flowlets at CONGA's 500 us, their next hops drawn over
/// the equal-cost set: the flows' packets leave the 8 edge switches by more of their 16 uplinks
/// than one route per switch would take. Linux's TCP (SACK, RACK, a 200 ms minimum RTO) completes every flow within the run.
#[test]
fn a_permutation_completes_under_flowlet_switching() {
    let flows: Vec<Value> = (0..16)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("h{i}"), "dst": format!("h{}", (i + 5) % 16),
                        "bytes": "500KB", "tcp": {"profile": "linux"}})
        })
        .collect();
    let mut sc = fat_tree(json!(flows));
    sc["topologies"][0]["multipath"] = json!("flowlet");
    let r = run(&sc);
    let done = f64s(&r, "flows", "completion_s");
    assert!(done.iter().all(|c| c.is_finite()), "{done:?}");
    let uplinks: BTreeSet<String> =
        (0..16).flat_map(|f| links_of(&r, f)).filter(|l| l.starts_with("tor") && l.contains("->agg")).collect();
    // One uplink per edge switch would be a single route's choice; the draws spread them.
    assert!(uplinks.len() > 8, "flowlets left the 8 edge switches by {} uplinks: {uplinks:?}", uplinks.len());
}

#[test]
fn the_flowlet_gap_is_range_checked() {
    let mut sc = diamond("0us");
    expect_error(sc.clone(), "flowlet_gap", "must be positive");
    sc["flowlet_gap"] = json!("2s");
    expect_error(sc, "flowlet_gap", "at most 1 s");
}
