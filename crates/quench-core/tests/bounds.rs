//! Bounded and safe: every quantity out of its range (`limits.rs`) is refused when the scenario
//! is read or built, naming its key, instead of being clamped, wrapped, or left to hang the run
//! or exhaust memory; and messages name the key and the accepted forms, never an internal type
//! or a position in the internal JSON text.

mod common;
use common::*;
use serde_json::{json, Value};

fn base() -> Value {
    two_hosts_through_a_router()
}

/// The error of `sc`: its key must be `path`, its message must contain `words` and must not
/// mention serde's internals or the internal JSON text.
fn expect(sc: Value, path: &str, words: &str) {
    let e = expect_error(sc, path, words);
    for internal in ["untagged", "variant of", " at line ", "Raw", "SizeSpec", "FlowSize"] {
        assert!(!e.message.contains(internal), "'{e}' mentions '{internal}'");
    }
}

fn with(path: &[&str], value: Value) -> Value {
    let mut sc = base();
    let mut at = &mut sc;
    for key in path {
        at = match key.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[*key],
        };
    }
    *at = value;
    sc
}

#[test]
fn out_of_range_values_are_refused_not_clamped() {
    expect(with(&["links", "0", "rate"], json!("1e30bps")), "links[0].rate", "does not fit in 64 bits");
    expect(with(&["links", "0", "rate"], json!("20Tbps")), "links[0].rate", "fastest rate");
    expect(with(&["links", "0", "rate"], json!(1e30)), "links[0].rate", "does not fit in 64 bits");
    expect(with(&["links", "0", "delay"], json!("18446744073709551616ns")), "links[0].delay", "64 bits");
    expect(with(&["links", "0", "delay"], json!("2000000s")), "links[0].delay", "longest duration");
    expect(with(&["links", "0", "framing_overhead"], json!("1e30B")), "links[0].framing_overhead", "64 bits");
    expect(with(&["links", "0", "framing_overhead"], json!("1MB")), "links[0].framing_overhead", "65535B");
    expect(with(&["links", "0", "mtu"], json!("100000B")), "links[0].mtu", "largest IPv4 datagram");
    expect(with(&["duration"], json!("18446744073709551616ns")), "duration", "64 bits");
    expect(with(&["duration"], json!(1e7)), "duration", "longest duration");
    expect(
        with(&["links", "1", "qdisc"], json!({"kind": "droptail", "limit": "99999999999p"})),
        "links[1].qdisc.limit",
        "packets",
    );
    expect(with(&["links", "0", "packet_rate"], json!(1e12)), "links[0].packet_rate", "packets per second");
}

#[test]
fn a_rate_too_fast_for_nanosecond_time_is_refused_with_the_reason() {
    expect(with(&["links", "0", "rate"], json!("1Tbps")), "links[0].rate", "rounds to 0 ns");
    let udp = json!({"kind": "udp", "src": "a", "dst": "b", "rate": "9Tbps", "size": "10B"});
    expect(with(&["flows", "0"], udp), "flows[0].rate", "rounds to 0 ns");
    // 300 Gbit/s passes for 20-byte packets (0.53 ns) and a 1500-byte datagram.
    let mut sc = with(&["links", "0", "rate"], json!("300Gbps"));
    sc["flows"][0] = json!({"kind": "udp", "src": "a", "dst": "b", "rate": "1Gbps"});
    let built = quench_core::Scenario::from_json(&sc.to_string()).and_then(|s| quench_core::Simulation::new(&s));
    assert!(built.is_ok(), "{:?}", built.err());
}

#[test]
fn a_workload_beyond_the_flow_budget_is_refused_and_the_budget_can_be_raised() {
    let w = json!([{"pairs": [["a", "b"]], "arrival_rate": 1e30, "size": "10KB", "flow": {"kind": "tcp"}}]);
    expect(with(&["workloads"], w), "budget.flows", "about 1.000e30 flows");
    // 2·10⁷ flows/s for 0.6 s: over the default budget of 10⁷, within a raised one.
    let w = json!([{"pairs": [["a", "b"]], "arrival_rate": 2e7, "size": "10KB", "flow": {"kind": "tcp"},
                    "start": "0.4s"}]);
    let over = with(&["workloads"], w);
    expect(over.clone(), "budget.flows", "about 1.200e7 flows");
    let mut raised = over;
    raised["budget"] = json!({"flows": 20_000_000});
    assert!(quench_core::Simulation::from_json(&raised.to_string()).is_ok());
    raised["budget"] = json!({"flows": 2_000_000_000u64});
    expect(raised, "budget.flows", "outside 1 to 1e9");
}

/// Arrivals are drawn as the run goes: an eight-day workload at 5 arrivals/s (3.5·10⁶ flows)
/// builds, and after its first 10 s only the flows that have arrived exist.
#[test]
fn a_long_workload_creates_its_flows_as_they_arrive() {
    let w = json!([{"pairs": [["a", "b"]], "arrival_rate": 5, "size": "10KB", "flow": {"kind": "tcp"}}]);
    let mut sc = with(&["workloads"], w);
    sc["duration"] = json!("691200s");
    let mut sim = quench_core::Simulation::from_json(&sc.to_string()).expect("an eight-day workload builds");
    sim.run_until(quench_core::Time::ZERO + quench_core::Dur::from_secs(10));
    let flows = sim.finish().table("flows").rows();
    // One listed flow plus Poisson(50) arrivals: within 5σ of 51.
    assert!((16..=86).contains(&flows), "{flows} flows after 10 s");
}

#[test]
fn wrong_types_list_the_accepted_forms() {
    expect(with(&["links", "0", "rate"], json!(true)), "links[0].rate", "expected a rate such as \"10Mbps\"");
    expect(with(&["links", "0", "delay"], json!([1])), "links[0].delay", "found a list");
    let w =
        json!([{"pairs": [["a", "b"]], "arrival_rate": 1, "size": {"dist": "exponential"}, "flow": {"kind": "tcp"}}]);
    expect(with(&["workloads"], w), "workloads[0].size", "missing field `mean`");
    let w = json!([{"pairs": [["a", "b"]], "arrival_rate": 1, "size": false, "flow": {"kind": "tcp"}}]);
    expect(with(&["workloads"], w), "workloads[0].size", "\"lognormal\" | \"pareto\"");
    let udp = json!({"kind": "udp", "src": "a", "dst": "b", "rate": "1Mbps", "size": [1]});
    expect(with(&["flows", "0"], udp), "flows[0].size", "\"empirical\" | \"websearch\"");
    let red = json!({"kind": "red", "w_q": true});
    expect(with(&["links", "1", "qdisc"], red), "links[1].qdisc.w_q", "or \"auto\"");
    let red = json!({"kind": "red", "min_th": {}});
    expect(with(&["links", "1", "qdisc"], red), "links[1].qdisc.min_th", "found a table");
}

#[test]
fn messages_carry_no_position_in_the_internal_text() {
    let e = config_error(&with(&["links", "0", "duplex"], json!("yes")));
    assert_eq!(e.path, "links[0].duplex");
    assert!(!e.message.contains("line"), "{e}");
}
