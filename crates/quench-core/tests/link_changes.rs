//! Links that change (`changes.rs`, `capacity.rs`), measured from the outside against closed
//! forms and against the fixed links they must equal:
//! - a one-step rate trace is a fixed-rate link: every table identical;
//! - a rate change under a constant-bit-rate flow: departures at the old rate, then at the new
//!   one, and the excess dropped once the queue is full;
//! - a Mahimahi trace of one opportunity per millisecond delivers one full-size packet per
//!   opportunity, two per millisecond twice as many;
//! - a link that fails and comes back on a diamond: the packets in flight on it are cut, those
//!   routed to it before routing converges are dropped, every drop is counted, the flow takes
//!   the other path, then returns;
//! - a periodic delay change shows in the RTT samples of a TCP flow;
//! - on a k = 4 fat-tree under ECMP, a failed aggregation-core link carries nothing once
//!   routing has converged, and the permutation's flows go on.
//!
//! Figures are printed (`-- --nocapture`) for docs/validation.md.

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

/// Datagrams of `ip_bytes` (IP) at `rate` from a to b over a -> r1 -> r2 -> b, the middle link
/// given by `mid` (its keys merged into a 10 ms link of `mid_rate`).
fn cbr(rate: &str, ip_bytes: u64, mid_rate: &str, mid: Value, secs: u64) -> Value {
    let mut link = json!({"from": "r1", "to": "r2", "rate": mid_rate, "delay": "10ms",
                          "qdisc": {"kind": "droptail", "limit": 100}});
    for (k, v) in mid.as_object().unwrap() {
        link[k] = v.clone();
    }
    json!({
        "duration": format!("{secs}s"), "seed": 1,
        "hosts": ["a", "b"], "routers": ["r1", "r2"],
        "links": [{"from": "a", "to": "r1", "rate": "10Gbps", "delay": "1ms"}, link,
                  {"from": "r2", "to": "b", "rate": "10Gbps", "delay": "1ms"}],
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": rate, "size": format!("{}B", ip_bytes - 28)}],
        "record": {"queues": false, "cwnd": false, "rtt": false}
    })
}

/// Drops of a reason on a link, counted in the drops table over [from, to) seconds.
fn drops_between(r: &RunResult, link: &str, reason: &str, from: f64, to: f64) -> usize {
    let code = quench_core::names::drop_reasons().iter().position(|n| *n == reason).unwrap() as u64;
    let row = link_row(r, link) as u64;
    let (t, l, why) = (f64s(r, "drops", "time_s"), u64s(r, "drops", "link"), u64s(r, "drops", "reason"));
    (0..t.len()).filter(|&i| l[i] == row && why[i] == code && t[i] >= from && t[i] < to).count()
}

/// A TCP flow through a bottleneck whose capacity is a one-step rate trace at the link's own
/// rate is the same run as through the fixed link: every column of every table equal.
#[test]
fn a_one_step_rate_trace_is_the_fixed_link() {
    let scenario = |capacity: Option<Value>| {
        let mut sc = dumbbell(2, "1Gbps", "1ms", "20Mbps", "10ms", json!({"kind": "droptail", "limit": 60}));
        sc["duration"] = json!("5s");
        sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "cubic"},
                             {"kind": "tcp", "src": "s1", "dst": "d", "cc": "reno", "start": "0.3s"}]);
        if let Some(c) = capacity {
            let n = sc["links"].as_array().unwrap().len();
            sc["links"][n - 2]["capacity"] = c.clone();
            sc["links"][n - 2]["reverse_capacity"] = c;
        }
        sc
    };
    let fixed = run(&scenario(None));
    let traced = run(&scenario(Some(json!({"rates": [[0, 20_000_000]]}))));
    for table in ["flows", "links"] {
        let (a, b) = (fixed.table(table), traced.table(table));
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "table {table}");
    }
    assert!(flow_value(&fixed, 0, "bytes_delivered") > 5e6, "the flows ran");
}

/// 8 Mb/s of 1000-byte datagrams (1000 a second) over 10 Mb/s, which falls to 5 Mb/s (625 a
/// second) at 5 s, under a 100-packet drop-tail queue: 5000 departures in the first 5 s, then
/// 625 a second while the queue fills at 375 a second and, full after 0.27 s, drops 375 a
/// second. Written as a schedule and as a rate trace, both within a packet of the closed form.
#[test]
fn a_rate_change_under_constant_bit_rate() {
    let schedule = json!({"schedule": [{"at": "5s", "rate": "5Mbps"}]});
    let trace = json!({"capacity": {"rates": [["0s", "10Mbps"], ["5s", "5Mbps"]]}});
    for (form, mid) in [("schedule", schedule), ("trace", trace)] {
        let r = run(&cbr("8Mbps", 1000, "10Mbps", mid, 10));
        let departed = link_value(&r, "r1->r2", "departed_packets");
        let dropped = link_value(&r, "r1->r2", "drops_overflow");
        let (want_departed, want_dropped) = (5000.0 + 625.0 * 5.0, 375.0 * 5.0 - 100.0);
        println!(
            "rate change ({form}): departed {departed} (closed form {want_departed}), dropped {dropped} ({want_dropped})"
        );
        assert!((departed - want_departed).abs() <= 2.0, "{form}: departed {departed}");
        assert!((dropped - want_dropped).abs() <= 2.0, "{form}: dropped {dropped}");
        assert_eq!(drops_between(&r, "r1->r2", "overflow", 0.0, 5.0), 0);
        assert_link_identities(&r);
    }
}

/// Full-size datagrams (1500 bytes, 1504 with the TUN header: one opportunity each) offered at
/// 40 Mb/s to a Mahimahi link of one opportunity per millisecond: 1000 delivered a second, as
/// Mahimahi delivers them; twice the opportunities, twice the packets.
#[test]
fn a_mahimahi_trace_delivers_one_packet_per_opportunity() {
    for per_ms in [1u32, 2] {
        let ms: Vec<u32> = (1..=100).flat_map(|t| std::iter::repeat_n(t, per_ms as usize)).collect();
        let mid = json!({"capacity": {"opportunities_ms": ms}, "qdisc": {"kind": "droptail", "limit": 1000}});
        let r = run(&cbr("40Mbps", 1500, "12Mbps", mid, 10));
        let departed = link_value(&r, "r1->r2", "departed_packets");
        let want = 10_000.0 * per_ms as f64;
        println!("mahimahi {per_ms}/ms: departed {departed} in 10 s (closed form {want})");
        // The queue holds the excess; the last opportunities of the run may end past its end.
        assert!((departed - want).abs() <= 1.0, "{per_ms}/ms: departed {departed}");
        assert_link_identities(&r);
    }
}

/// a -> r1 -> {r2 | r3} -> r4 -> b, both paths two hops; routing takes r2's (declared first).
/// r1<->r2 fails at 2 s and returns at 4 s; routing converges 50 ms after each. A 1000
/// datagram/s flow over 100 Mb/s links (no queue): the ~10 datagrams in the 10 ms pipe of
/// r1->r2 are cut, the 50 sent while routing converges dropped as `link_down`, nothing else
/// is lost, and r1->r3 carries the flow from 2.05 s to 4.05 s.
#[test]
fn a_failed_link_drops_what_is_on_it_until_routing_converges() {
    let link = |a: &str, b: &str| json!({"from": a, "to": b, "rate": "100Mbps", "delay": "10ms"});
    let mut r1r2 = link("r1", "r2");
    r1r2["schedule"] = json!([{"at": "2s", "up": false}, {"at": "4s", "up": true}]);
    let sc = json!({
        "duration": "6s", "seed": 1, "routing_convergence": "50ms",
        "hosts": ["a", "b"], "routers": ["r1", "r2", "r3", "r4"],
        "links": [link("a", "r1"), r1r2, link("r1", "r3"), link("r2", "r4"), link("r3", "r4"), link("r4", "b")],
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": "8Mbps", "size": "972B"}],
        "record": {"queues": false, "cwnd": false, "rtt": false}
    });
    let r = run(&sc);
    let cut = link_value(&r, "r1->r2", "drops_link_cut");
    let down = link_value(&r, "r1->r2", "drops_link_down");
    let detour = link_value(&r, "r1->r3", "departed_packets");
    let sent = link_value(&r, "a->r1", "departed_packets");
    let received = link_value(&r, "r4->b", "delivered_packets");
    let in_flight: f64 = strs(&r, "links", "name").iter().map(|n| link_value(&r, n, "in_flight_packets")).sum();
    println!(
        "link failure: cut {cut} (10 ms of 1000/s: ~10), link_down {down} (50 ms: ~50), detour {detour} \
         (2 s: ~2000), sent {sent}, received {received}, in flight {in_flight}"
    );
    assert!((cut - 10.0).abs() <= 1.0, "cut {cut}");
    assert!((down - 50.0).abs() <= 1.0, "link_down {down}");
    assert!((detour - 2000.0).abs() <= 2.0, "detour {detour}");
    assert_eq!(sent, received + cut + down + in_flight, "every datagram delivered, dropped or in flight");
    assert_eq!(drops_between(&r, "r1->r2", "link_cut", 2.0, 2.0 + 1e-9), cut as usize, "cut when it fails");
    assert_link_identities(&r);
}

/// A periodic delay change: the bottleneck's one-way delay alternates 10 ms / 40 ms every 2 s
/// (a satellite handover in one line). A TCP flow's RTT samples follow: the least RTT of each
/// period is 2·(1 + d + 1) ms plus transmissions, d the period's delay.
#[test]
fn a_periodic_delay_change_shows_in_the_rtt() {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "10ms", json!({"kind": "droptail", "limit": 1000}));
    sc["duration"] = json!("8s");
    sc["links"][1]["schedule"] = json!([{"at": "2s", "every": "2s", "delay": ["40ms", "10ms"]}]);
    // A 64 KB receive window (at most 22 Mb/s over these RTTs) keeps the 100 Mb/s link unqueued.
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "cubic", "tcp": {"receive_window": "64KB"}}]);
    sc["record"] = json!({"rtt": true, "queues": false, "cwnd": false});
    let r = run(&sc);
    let (t, rtt) = (f64s(&r, "rtt", "time_s"), f64s(&r, "rtt", "rtt_s"));
    for (period, d) in [(0, 0.010), (1, 0.040), (2, 0.010), (3, 0.040)] {
        // Samples of ACKs for data sent after the change: skip the first RTT of each period.
        let (from, to) = (2.0 * period as f64 + 0.2, 2.0 * (period + 1) as f64);
        let least = (0..t.len()).filter(|&i| t[i] >= from && t[i] < to).map(|i| rtt[i]).fold(f64::INFINITY, f64::min);
        let base = 2.0 * (0.002 + d);
        println!("delay period {period} (d = {d} s): least RTT {least:.6} s, propagation {base:.6} s");
        assert!(least >= base && least < base + 0.002, "period {period}: least RTT {least}");
    }
}

/// A k = 4 fat-tree under ECMP with one long TCP flow per host (host i to host i + 5). The
/// first aggregation-core cable of pod 0 fails at 0.5 s for good, routing converging 1 ms
/// later: the failed link accepts nothing after it fails (its arrivals beyond those of the
/// same run stopped at 0.5 s are all `link_down` drops, of the 1 ms before convergence), every
/// flow delivers more after the failure, and the fabric keeps over 80 % of its aggregate
/// goodput. (Some flows starve with or without the failure: CUBIC over drop-tail on ECMP
/// collisions, the unfairness Raiciu et al. report.)
#[test]
fn a_failed_fabric_link_leaves_the_equal_cost_sets() {
    let scenario = |secs: f64, fail: bool| {
        let flows: Vec<Value> = (0..16)
            .map(|i| json!({"kind": "tcp", "src": format!("h{i}"), "dst": format!("h{}", (i + 5) % 16), "cc": "cubic"}))
            .collect();
        let mut sc = json!({
            "duration": format!("{secs}s"), "seed": 3, "routing_convergence": "1ms",
            "topologies": [{"kind": "fat_tree", "k": 4, "rate": "1Gbps", "delay": "10us",
                            "qdisc": {"kind": "droptail", "limit": 100}, "multipath": "ecmp"}],
            "flows": flows,
            "record": {"queues": false, "cwnd": false, "rtt": false}
        });
        if fail {
            sc["link_changes"] = json!([{"link": FAILED, "at": "0.5s", "up": false}]);
        }
        sc
    };
    const FAILED: &str = "agg0_0->core0";
    let healthy = run(&scenario(2.0, false));
    let failed = run(&scenario(2.0, true));
    let before = run(&scenario(0.5, false));
    for link in [FAILED, "core0->agg0_0"] {
        let arrived = link_value(&failed, link, "arrived_packets");
        let refused = link_value(&failed, link, "drops_link_down");
        let until = link_value(&before, link, "arrived_packets");
        println!("{link}: arrived {arrived} ({refused} refused while down), {until} by 0.5 s");
        assert!(until > 0.0, "{link} carried traffic before it failed");
        assert!(arrived - refused <= until, "{link} took packets after it failed");
    }
    let goodput = |r: &RunResult| f64s(r, "flows", "bytes_delivered");
    let (g_failed, g_healthy) = (goodput(&failed), goodput(&healthy));
    let (sum_failed, sum_healthy): (f64, f64) = (g_failed.iter().sum(), g_healthy.iter().sum());
    println!("aggregate delivered: {sum_failed} bytes with the failure, {sum_healthy} without");
    let g_before = goodput(&before);
    let stalled: Vec<usize> = (0..16).filter(|&i| g_failed[i] <= g_before[i]).collect();
    assert!(stalled.is_empty(), "flows {stalled:?} delivered nothing after the failure");
    assert!(sum_failed > 0.8 * sum_healthy);
    assert_link_identities(&failed);
}

/// Bad changes and traces are refused with one line naming the key.
#[test]
fn bad_changes_and_traces_name_their_key() {
    let base = || cbr("1Mbps", 1000, "10Mbps", json!({}), 10);
    let with = |key: &str, value: Value| {
        let mut sc = base();
        sc["links"][1][key] = value;
        sc
    };
    expect_error(with("schedule", json!([{"at": "1s"}])), "links[1].schedule[0]", "changes nothing");
    expect_error(with("schedule", json!([{"at": "20s", "up": false}])), "links[1].schedule[0].at", "after the run");
    expect_error(
        with("schedule", json!([{"link": "a->r1", "up": false}])),
        "links[1].schedule[0].link",
        "names no link",
    );
    let mut traced = with("capacity", json!({"rates": [[0, 1e6]]}));
    traced["links"][1]["schedule"] = json!([{"at": "1s", "rate": "2Mbps"}]);
    expect_error(traced, "links[1].schedule[0].rate", "follows its trace");
    expect_error(with("capacity", json!({"rates": [[1, 1e6]]})), "links[1].capacity.rates", "from time 0");
    expect_error(with("capacity", json!({})), "links[1].capacity", "give one of");
    expect_error(
        with("capacity", json!({"opportunities_ms": [5, 3]})),
        "links[1].capacity.opportunities_ms",
        "comes before",
    );
    let mut named = base();
    named["link_changes"] = json!([{"link": "r1->r9", "at": "1s", "up": false}]);
    expect_error(named, "link_changes[0].link", "no link 'r1->r9'");
    let mut unnamed = base();
    unnamed["link_changes"] = json!([{"at": "1s", "up": false}]);
    expect_error(unnamed, "link_changes[0].link", "names the link");
}
