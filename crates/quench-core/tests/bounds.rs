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

/// The process's virtual memory in bytes (Linux), which counts memory reserved but not yet
/// touched: what an up-front reservation would show.
fn virtual_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// A device queue reserves room for a driver ring's worth of packets and grows as packets
/// arrive: a 10⁹-packet one (the most a buffer may hold) builds at once, without the ~100 GB
/// that reserving its limit would take.
#[test]
fn a_huge_device_queue_reserves_no_memory_up_front() {
    let mut sc = base();
    sc["links"][1]["device_queue"] = json!(1_000_000_000u64);
    let before = virtual_memory();
    let started = std::time::Instant::now();
    let sim = quench_core::Simulation::from_json(&sc.to_string()).expect("a 1e9-packet device queue builds");
    let took = started.elapsed();
    let grown = virtual_memory().zip(before).map(|(after, before)| after.saturating_sub(before));
    eprintln!("built in {took:?}, virtual memory grew by {grown:?} bytes");
    assert!(took.as_secs_f64() < 1.0, "{took:?}");
    // Other tests run in threads of this process: 1 GB leaves them room and is 1% of 100 GB.
    assert!(grown.is_none_or(|g| g < 1 << 30), "grew by {grown:?} bytes");
    drop(sim);
}

#[test]
fn controller_periods_have_a_floor_and_gains_a_ceiling() {
    for kind in ["pie", "fq_pie", "dualpi2"] {
        let q = |key: &str, v: Value| json!({"kind": kind, key: v});
        let shortest = "100us, the shortest update period";
        expect(with(&["links", "1", "qdisc"], q("tupdate", json!("1ns"))), "links[1].qdisc.tupdate", shortest);
        expect(with(&["links", "1", "qdisc"], q("tupdate", json!("99us"))), "links[1].qdisc.tupdate", "100us");
        for key in ["alpha", "beta"] {
            let path = format!("links[1].qdisc.{key}");
            expect(with(&["links", "1", "qdisc"], q(key, json!(1e300))), &path, "more than 1000, the largest");
            expect(with(&["links", "1", "qdisc"], q(key, json!(0))), &path, "not a positive gain");
        }
        // At the floor and the ceiling, the scenario builds.
        let edge = json!({"kind": kind, "tupdate": "100us", "alpha": 1e3, "beta": 1e3});
        let built = quench_core::Simulation::from_json(&with(&["links", "1", "qdisc"], edge).to_string());
        assert!(built.is_ok(), "{kind}: {:?}", built.err());
    }
}

#[test]
fn codel_mtu_is_at_most_the_largest_datagram() {
    for kind in ["codel", "fq_codel"] {
        let q = json!({"kind": kind, "mtu": "1000000000B"});
        expect(with(&["links", "1", "qdisc"], q), "links[1].qdisc.mtu", "the largest IPv4 datagram");
    }
    let q = json!({"kind": "codel", "mtu": "65535B"});
    assert!(quench_core::Simulation::from_json(&with(&["links", "1", "qdisc"], q).to_string()).is_ok());
}

#[test]
fn choice_weights_must_sum_to_a_finite_number() {
    let size = json!({"dist": "choice", "values": ["100B", "1000B"], "weights": [1e308, 1e308]});
    let udp = json!({"kind": "udp", "src": "a", "dst": "b", "rate": "1Mbps", "size": size});
    expect(with(&["flows", "0"], udp), "flows[0].size.weights", "sum, inf, is not a finite number");
}

/// A source that sends at a rate of its own costs events whatever the network does with its
/// packets: 1 Tbit/s of 1 KB datagrams for 10 s into a 10 Mbit/s path is about 1.2·10⁹ of them.
#[test]
fn a_rate_driven_source_beyond_the_packet_budget_is_refused_naming_both_keys() {
    let udp = |rate: &str| json!({"kind": "udp", "src": "a", "dst": "b", "pattern": "poisson", "rate": rate, "size": "1000B"});
    let mut sc = with(&["flows", "0"], udp("1Tbps"));
    sc["duration"] = json!("10s");
    let started = std::time::Instant::now();
    let e = expect_error(sc.clone(), "flows[0].rate", "about 1.216e9 packets");
    assert!(e.message.contains("budget.packets, 1e8"), "{e}");
    assert!(started.elapsed().as_secs_f64() < 1.0);
    // Two sources are counted together; the one sending the most is named.
    sc["flows"] = json!([udp("1Mbps"), udp("60Gbps"), udp("40Gbps")]);
    expect(sc.clone(), "flows[1].rate", "about 1.216e8 packets");
    sc["budget"] = json!({"packets": 200_000_000u64});
    assert!(quench_core::Simulation::from_json(&sc.to_string()).is_ok());
    sc["budget"] = json!({"packets": 0});
    expect(sc, "budget.packets", "outside 1 to 1e12");
}

/// A streaming run that writes its records and captures: 20 s of a TCP flow over 10 Mbit/s with
/// the first link captured, into a fresh folder.
fn recording_run(budget: Option<u64>, name: &str) -> (quench_core::Simulation, std::path::PathBuf) {
    let mut sc = base();
    sc["duration"] = json!("20s");
    sc["record"] = json!({"segments": true, "pcap": ["a->r"]});
    if let Some(bytes) = budget {
        sc["budget"] = json!({"record_bytes": bytes});
    }
    let dir = std::env::temp_dir().join(format!("quench-bounds-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut sim = quench_core::Simulation::from_json(&sc.to_string()).unwrap();
    sim.stream_to(&dir.join("spill"), &[("a->r".to_string(), dir.join("a-r.pcap"))]).unwrap();
    (sim, dir)
}

fn bytes_under(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { bytes_under(&p) } else { std::fs::metadata(&p).unwrap().len() })
        .sum()
}

/// `budget.record_bytes`: a run stops at the first look (every 100 ms of simulated time) that
/// finds more bytes streamed to disk than the budget, so a killed or runaway run cannot fill
/// the disk before anything is final; the same run under the default budget (10⁹) reaches its
/// end. At 10 Mbit/s a 100 ms step captures at most 1.25·10⁶ bits of packets, so the folder
/// exceeds the budget by less than one step's capture plus the 16-byte record headers.
#[test]
fn a_run_stops_once_its_streamed_records_pass_the_record_budget() {
    let budget = 300_000;
    let (mut sim, dir) = recording_run(Some(budget), "small");
    sim.run_until(sim.end());
    let e = sim.budget_exceeded().expect("the run passed its record budget").clone();
    assert_eq!(e.path, "budget.record_bytes", "{e}");
    assert!(e.message.contains("more than budget.record_bytes, 3e5"), "{e}");
    assert!(sim.now() < sim.end(), "stopped at {:?}", sim.now());
    let on_disk = bytes_under(&dir);
    assert!(on_disk > budget && on_disk < budget + 200_000, "{on_disk} bytes on disk");
    let stopped_at = sim.now();
    sim.run_until(sim.end()); // stays stopped
    assert_eq!(sim.now(), stopped_at);
    std::fs::remove_dir_all(&dir).unwrap();

    let (mut sim, dir) = recording_run(None, "default");
    sim.run_until(sim.end());
    assert!(sim.budget_exceeded().is_none() && sim.now() == sim.end());
    assert!(bytes_under(&dir) > 4 * budget);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_record_budget_has_a_range() {
    let mut sc = base();
    sc["budget"] = json!({"record_bytes": 0});
    expect(sc.clone(), "budget.record_bytes", "outside 1 to 1e14");
    sc["budget"] = json!({"record_bytes": 100_000_000_000_001u64});
    expect(sc, "budget.record_bytes", "outside 1 to 1e14");
}

/// A workload fills each arrival's `bytes`; a UDP source has none (it sends until it stops):
/// refused naming the template's kind, not the key the workload itself adds.
#[test]
fn a_workload_of_a_transport_without_a_size_is_refused_naming_its_kind() {
    let mut sc = base();
    sc["workloads"] = json!([{"pairs": [["a", "b"]], "arrival_rate": 10, "size": "1MB",
        "flow": {"kind": "udp", "rate": "1Tbps", "pattern": "poisson"}}]);
    expect(sc, "workloads[0].flow.kind", "a `udp` flow has no size (`bytes`)");
}
