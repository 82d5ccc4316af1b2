//! Poisson flow workloads end to end: the arrivals become flows of the flows table, each flow's
//! response time is measured from its first SYN to its last byte delivered, and a workload's
//! errors name the workload key that caused them.

mod common;

use common::{config_error, f64s, run, strs};
use serde_json::{json, Value};

/// One 10 Mb/s, 10 ms link between a and b (and c, d on the same router) with a workload of
/// `size`-byte TCP flows at `rate` per second.
fn scenario(rate: f64, size: &str, duration: &str) -> Value {
    json!({
        "duration": duration, "seed": 5,
        "hosts": ["a", "b", "c", "d"], "routers": ["r"],
        "links": [
            {"from": "a", "to": "r", "rate": "10Mbps", "delay": "10ms"},
            {"from": "c", "to": "r", "rate": "10Mbps", "delay": "10ms"},
            {"from": "r", "to": "b", "rate": "1Gbps", "delay": "0ms"},
            {"from": "r", "to": "d", "rate": "1Gbps", "delay": "0ms"}
        ],
        "workloads": [{"name": "web", "pairs": [["a", "b"], ["c", "d"]], "arrival_rate": rate, "size": size,
                       "flow": {"kind": "tcp", "cc": "newreno", "tcp": {"mss": 1000, "delayed_ack": {"enabled": false}}}}]
    })
}

#[test]
fn a_one_segment_flow_takes_three_one_way_delays_and_its_serializations() {
    // Hand computation: SYN (40 B) a→r at 10 Mb/s: 32 µs + 10 ms, r→b at 1 Gb/s: 0.32 µs; the
    // SYN-ACK back the same way; then the 1040-byte segment: 832 µs + 10 ms + 8.32 µs.
    // Total 30 ms + 2·(32 + 0.32) µs + 832 + 8.32 µs = 30.904960 ms.
    let expected = 0.030_904_96;
    let r = run(&scenario(2.0, "1000B", "30s"));
    let names = strs(&r, "flows", "name");
    assert!(names.len() > 30, "{} arrivals in 30 s at 2/s", names.len());
    assert!(names.iter().enumerate().all(|(k, n)| *n == format!("web.{k}")));
    let mut response: Vec<f64> = f64s(&r, "flows", "response_time_s");
    response.sort_by(f64::total_cmp);
    // Flows rarely overlap at this load; the fastest and the median flow see an empty path.
    assert!((response[0] - expected).abs() < 1e-9, "fastest {}", response[0]);
    assert!((response[response.len() / 2] - expected).abs() < 1e-9, "median {}", response[response.len() / 2]);
}

#[test]
fn every_arrival_completes_and_starts_when_drawn() {
    let r = run(&scenario(20.0, "50KB", "10s"));
    let starts = f64s(&r, "flows", "start_s");
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "arrivals in time order");
    let n = starts.len() as f64;
    // Poisson(200): within 4σ.
    assert!((n - 200.0).abs() < 4.0 * 200f64.sqrt(), "{n} flows");
    let completed = f64s(&r, "flows", "completion_s").iter().filter(|c| c.is_finite()).count() as f64;
    // Only flows that arrived in the last second or so may still be running.
    assert!(completed >= n - 10.0, "{completed} of {n} completed");
}

#[test]
fn same_seed_same_workload() {
    let a = run(&scenario(20.0, "50KB", "3s"));
    let b = run(&scenario(20.0, "50KB", "3s"));
    let bits = |r| f64s(r, "flows", "response_time_s").iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn errors_name_the_workload_key() {
    let mut s = scenario(50.0, "1KB", "1s");
    s["workloads"][0]["pairs"][1][1] = json!("zz");
    let e = config_error(&s);
    assert_eq!(e.path, "workloads[0].pairs[1][1]", "{e}");
    let mut s = scenario(50.0, "1KB", "1s");
    s["workloads"][0]["flow"]["cc"] = json!("nosuch");
    let e = config_error(&s);
    assert!(e.path == "workloads[0].flow.cc.kind" && e.message.contains("nosuch"), "{e}");
    let mut s = scenario(2.0, "1KB", "1s");
    s["workloads"][0]["size"] = json!("0B");
    assert_eq!(config_error(&s).path, "workloads[0].size");
}

/// The workload of `sc` written out as listed flows: the same arrivals (drawn by the engine's
/// own `WorkloadSpec::arrivals`), names, starts and sizes, with the template's other keys.
fn listed_equivalent(sc: &Value) -> Value {
    let w: quench_core::WorkloadSpec = serde_json::from_value(sc["workloads"][0].clone()).unwrap();
    let duration: quench_core::Dur = serde_json::from_value(sc["duration"].clone()).unwrap();
    let arrivals = w.arrivals(sc["seed"].as_u64().unwrap(), 0, duration);
    let flows: Vec<Value> = arrivals
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let mut f = sc["workloads"][0]["flow"].clone();
            let (src, dst) = &w.pairs[a.pair];
            f["name"] = json!(format!("{}.{k}", w.name.as_deref().unwrap()));
            f["src"] = json!(src);
            f["dst"] = json!(dst);
            f["start"] = json!(format!("{}ns", a.at.0));
            f["bytes"] = json!(format!("{}B", a.bytes));
            f
        })
        .collect();
    let mut listed = sc.clone();
    listed.as_object_mut().unwrap().remove("workloads");
    listed["flows"] = json!(flows);
    listed
}

/// Every table of two runs, compared column by column, bit for bit.
fn assert_same_tables(a: &quench_core::RunResult, b: &quench_core::RunResult) {
    assert_eq!(a.events_executed, b.events_executed, "events executed");
    for t in &a.tables {
        let u = b.table(&t.name);
        assert_eq!(t.rows(), u.rows(), "rows of {}", t.name);
        for (name, col) in &t.columns {
            let other = u.column(name).unwrap();
            let bits = |c: &quench_core::table::Column| format!("{c:?}");
            assert!(bits(col) == bits(other), "{}.{name} differs", t.name);
        }
    }
}

/// A workload's arrivals are built when they arrive and reclaimed when done, while listed flows
/// live for the whole run: both must give the same run, bit for bit, on a congested bottleneck
/// (drops, retransmissions, timeouts) for TCP and PCP, and under a Source Quench gateway.
#[test]
fn a_workload_runs_exactly_as_its_flows_listed() {
    let congested = |flow: Value, qdisc: Value| {
        let mut sc = scenario(40.0, "60KB", "8s");
        sc["links"][0]["rate"] = json!("2Mbps");
        sc["links"][0]["qdisc"] = qdisc.clone();
        sc["links"][1]["qdisc"] = qdisc;
        sc["workloads"][0]["flow"] = flow;
        sc["workloads"][0]["size"] = json!({"dist": "pareto", "mean": "60KB", "shape": 1.5});
        sc
    };
    let droptail = json!({"kind": "droptail", "limit": "10p"});
    let cases = [
        congested(json!({"kind": "tcp", "cc": "newreno"}), droptail.clone()),
        congested(json!({"kind": "tcp", "cc": "reno", "tcp": {"sack": true}}), json!({"kind": "red"})),
        congested(json!({"kind": "pcp"}), droptail),
        congested(json!({"kind": "tcp", "cc": "tahoe"}), json!({"kind": "fuzzball"})),
    ];
    for sc in &cases {
        let (arrived, listed) = (run(sc), run(&listed_equivalent(sc)));
        let drops: f64 = f64s(&arrived, "links", "dropped_packets").iter().sum();
        assert!(drops > 0.0, "the bottleneck drops ({})", sc["workloads"][0]["flow"]);
        assert_same_tables(&arrived, &listed);
    }
}

/// Finished arrivals are reclaimed: after 200 s of 10 flows/s, about 2000 arrivals, the flows
/// whose endpoints are still held are the few in progress.
#[test]
fn finished_arrivals_are_reclaimed() {
    let mut sim = quench_core::Simulation::from_json(&scenario(10.0, "20KB", "200s").to_string()).unwrap();
    sim.run_until(quench_core::Time::ZERO + quench_core::Dur::from_secs(200));
    let held = sim.arrivals_held();
    let total = sim.finish().table("flows").rows();
    assert!(total > 1800, "{total} arrivals");
    assert!(held < 20, "{held} of {total} arrivals still held");
}

/// A workload that offers more than its path carries piles up arrivals; the active-flow budget
/// stops the arrivals with an error naming its key instead of letting memory grow without end.
#[test]
fn too_many_arrivals_in_progress_stop_the_run_with_the_budget_key() {
    let mut sc = scenario(200.0, "1MB", "20s");
    sc["budget"] = json!({"active_flows": 50});
    let mut sim = quench_core::Simulation::from_json(&sc.to_string()).unwrap();
    sim.run_until(quench_core::Time::ZERO + quench_core::Dur::from_secs(20));
    let e = sim.budget_exceeded().expect("200 arrivals/s of 1 MB over 10 Mb/s: far more than 50 at once");
    assert_eq!(e.path, "budget.active_flows", "{e}");
    assert!(e.message.contains("more than 50 workload arrivals in progress"), "{e}");
    assert!(sim.arrivals_held() <= 50, "no arrival is built past the budget: {} held", sim.arrivals_held());
    // Within the budget, the same workload at a load the path carries runs clean.
    let mut light = scenario(5.0, "50KB", "20s");
    light["budget"] = json!({"active_flows": 50});
    let mut sim = quench_core::Simulation::from_json(&light.to_string()).unwrap();
    sim.run_until(quench_core::Time::ZERO + quench_core::Dur::from_secs(20));
    assert!(sim.budget_exceeded().is_none());
}
