//! Shared helpers of the validation suite: scenarios are written as JSON (the same shape the
//! Python API and scenario files use) and run through the public `Simulation` API only.
#![allow(dead_code)]

use quench_core::table::Column;
use quench_core::{ConfigError, RunResult, Simulation};
use serde_json::Value;

/// The validation suite was written for the plain RFC sender and pins it: every TCP flow
/// (listed, or a workload's template) that names no `tcp.profile` gets `"rfc"`. A test of
/// another profile names it.
pub fn pin_rfc_profile(scenario: &Value) -> Value {
    let mut sc = scenario.clone();
    let pin = |flow: &mut Value| {
        if !matches!(flow.get("kind").and_then(Value::as_str), Some("tcp" | "mptcp")) {
            return;
        }
        let tcp = flow.as_object_mut().unwrap().entry("tcp").or_insert_with(|| serde_json::json!({}));
        if let Some(t) = tcp.as_object_mut() {
            t.entry("profile").or_insert_with(|| "rfc".into());
        }
    };
    if let Some(flows) = sc.get_mut("flows").and_then(Value::as_array_mut) {
        flows.iter_mut().for_each(&pin);
    }
    if let Some(workloads) = sc.get_mut("workloads").and_then(Value::as_array_mut) {
        workloads.iter_mut().filter_map(|w| w.get_mut("flow")).for_each(&pin);
    }
    sc
}

/// Build and run a scenario (its TCP and MPTCP flows pinned to the `rfc` profile unless they name one),
/// checking the link accounting identities on the way out: every validation run doubles as an
/// accounting check.
pub fn run(scenario: &Value) -> RunResult {
    let scenario = &pin_rfc_profile(scenario);
    let r = Simulation::from_json(&scenario.to_string())
        .unwrap_or_else(|e| panic!("scenario rejected: {e}\n{scenario:#}"))
        .run();
    assert_link_identities(&r);
    r
}

/// Build a scenario expected to be invalid and return the error.
pub fn config_error(scenario: &Value) -> ConfigError {
    let scenario = &pin_rfc_profile(scenario);
    match Simulation::from_json(&scenario.to_string()) {
        Ok(_) => panic!("scenario accepted, expected an error:\n{scenario:#}"),
        Err(e) => e,
    }
}

/// A valid scenario to break one key of: hosts a and b through router r, one TCP flow.
pub fn two_hosts_through_a_router() -> Value {
    serde_json::json!({
        "duration": "1s", "hosts": ["a", "b"], "routers": ["r"],
        "links": [{"from": "a", "to": "r", "rate": "10Mbps", "delay": "1ms"},
                  {"from": "r", "to": "b", "rate": "10Mbps", "delay": "1ms"}],
        "flows": [{"kind": "tcp", "src": "a", "dst": "b"}]
    })
}

/// The error of `sc`, whose key must be `path` and whose message must contain `words`.
pub fn expect_error(sc: Value, path: &str, words: &str) -> ConfigError {
    let e = config_error(&sc);
    eprintln!("{e}");
    assert_eq!(e.path, path, "wrong key in: {e}");
    assert!(e.message.contains(words), "message of '{e}' should mention '{words}'");
    e
}

pub fn f64s(r: &RunResult, table: &str, col: &str) -> Vec<f64> {
    r.table(table).f64s(col)
}

pub fn strs(r: &RunResult, table: &str, col: &str) -> Vec<String> {
    match r.table(table).column(col) {
        Some(Column::Str(v)) => v.clone(),
        other => panic!("{table}.{col} is not a string column: {other:?}"),
    }
}

pub fn u64s(r: &RunResult, table: &str, col: &str) -> Vec<u64> {
    match r.table(table).column(col) {
        Some(Column::U64(v)) => v.clone(),
        Some(Column::U32(v)) => v.iter().map(|&x| x as u64).collect(),
        Some(Column::U8(v)) => v.iter().map(|&x| x as u64).collect(),
        other => panic!("{table}.{col} is not an integer column: {other:?}"),
    }
}

/// Row index of the link named "from->to" in the `links` table.
pub fn link_row(r: &RunResult, name: &str) -> usize {
    strs(r, "links", "name").iter().position(|n| n == name).unwrap_or_else(|| panic!("no link {name}"))
}

/// One value of the `links` table.
pub fn link_value(r: &RunResult, link: &str, col: &str) -> f64 {
    f64s(r, "links", col)[link_row(r, link)]
}

/// One value of the `flows` table.
pub fn flow_value(r: &RunResult, flow: usize, col: &str) -> f64 {
    f64s(r, "flows", col)[flow]
}

/// Conservation of packets and bytes on every link (the identities of link.rs, checked from
/// the outside on the published table):
///   arrived = departed + dropped (in queue) + backlog     (packets and bytes)
///   departed = delivered + lost on the wire + corrupted + cut + in flight  (packets)
pub fn assert_link_identities(r: &RunResult) {
    let names = strs(r, "links", "name");
    let c = |col: &str| u64s(r, "links", col);
    let (arr, dep, drop, back) =
        (c("arrived_packets"), c("departed_packets"), c("dropped_packets"), c("backlog_packets"));
    let (arr_b, dep_b, drop_b, back_b) =
        (c("arrived_bytes"), c("departed_bytes"), c("dropped_bytes"), c("backlog_bytes"));
    let (deliv, lost, flying) = (c("delivered_packets"), c("drops_link_loss"), c("in_flight_packets"));
    // The corruption column is there only when some link corrupts, the cut one only when
    // some link may go down.
    let optional = |col: &str| match r.table("links").column(col) {
        Some(_) => c(col),
        None => vec![0; names.len()],
    };
    let (corrupted, cut) = (optional("drops_corrupted"), optional("drops_link_cut"));
    for (i, name) in names.iter().enumerate() {
        assert_eq!(
            arr[i],
            dep[i] + drop[i] + back[i],
            "link {name}: arrived != departed + dropped + backlog (packets)"
        );
        assert_eq!(
            arr_b[i],
            dep_b[i] + drop_b[i] + back_b[i],
            "link {name}: arrived != departed + dropped + backlog (bytes)"
        );
        assert_eq!(
            dep[i],
            deliv[i] + lost[i] + corrupted[i] + cut[i] + flying[i],
            "link {name}: departed != delivered + lost + corrupted + cut + in flight"
        );
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 for equal shares, 1/n when one takes all.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

pub fn rel_err(measured: f64, reference: f64) -> f64 {
    (measured - reference).abs() / reference.abs()
}

/// Report a reference comparison on stderr (shown with `--nocapture`) and assert it.
pub fn check_rel(what: &str, measured: f64, reference: f64, tol: f64) {
    let e = rel_err(measured, reference);
    eprintln!(
        "{what}: measured {measured:.6e}, reference {reference:.6e}, error {:.2}% (tolerance {:.1}%)",
        e * 100.0,
        tol * 100.0
    );
    assert!(
        e <= tol,
        "{what}: measured {measured}, reference {reference}: {:.2}% off, tolerance {:.1}%",
        e * 100.0,
        tol * 100.0
    );
}

/// A dumbbell: senders s0..s{n-1} -> router r1 -> (bottleneck) -> router r2 -> receiver d.
/// Access links are `access_rate` with `access_delay`; the bottleneck is r1->r2.
pub fn dumbbell(n: usize, access_rate: &str, access_delay: &str, rate: &str, delay: &str, qdisc: Value) -> Value {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    hosts.push("d".into());
    let mut links: Vec<Value> = (0..n)
        .map(|i| serde_json::json!({"from": format!("s{i}"), "to": "r1", "rate": access_rate, "delay": access_delay}))
        .collect();
    links.push(serde_json::json!({"from": "r1", "to": "r2", "rate": rate, "delay": delay, "qdisc": qdisc}));
    links.push(serde_json::json!({"from": "r2", "to": "d", "rate": access_rate, "delay": access_delay}));
    serde_json::json!({"hosts": hosts, "routers": ["r1", "r2"], "links": links, "flows": []})
}

/// Event codes of the `tcp_events` table (their names: quench_core::names::TCP_EVENTS).
pub mod event {
    pub const TIMEOUT: u64 = 0;
    pub const FAST_RETRANSMIT: u64 = 1;
    pub const PARTIAL_ACK_RETRANSMIT: u64 = 2;
    pub const RACK_LOST: u64 = 7;
    pub const LOSS_PROBE: u64 = 8;
    pub const PROBE_RECOVERY: u64 = 9;
}

/// Time-weighted mean of the recorded queue (packets) over [from, to] seconds: the queue table's
/// level held from each row to the next (a one-link queue record).
pub fn mean_queue(r: &RunResult, from: f64, to: f64) -> f64 {
    let (t, q) = (f64s(r, "queue", "time_s"), f64s(r, "queue", "packets"));
    let (mut area, mut level, mut last) = (0.0, 0.0, from);
    for (&ti, &qi) in t.iter().zip(&q) {
        if ti > to {
            break;
        }
        if ti > from {
            area += level * (ti - last);
            last = ti;
        }
        level = qi;
    }
    area += level * (to - last);
    area / (to - from)
}
