//! Accounting identities on a scenario that exercises every term at once: queue overflow,
//! Bernoulli loss on the wire, and a run that ends with packets still queued and in flight.
//! Reference: conservation of packets and bytes (see common::assert_link_identities, which
//! every other test in this suite also applies to its own runs).

mod common;
use common::*;
use serde_json::json;

#[test]
fn identities_hold_with_overflow_loss_and_packets_left_in_the_network() {
    let mut sc = dumbbell(3, "100Mbps", "1ms", "2Mbps", "30ms", json!({"kind": "droptail", "limit": "20p"}));
    sc["duration"] = json!("3.0137s"); // an odd end time: the run stops mid-transmission
    sc["links"][3]["loss"] = json!(0.02);
    sc["links"][3]["reverse_loss"] = json!(0.05);
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "cc": "reno"},
        {"kind": "tcp", "src": "s1", "dst": "d", "cc": "tahoe"},
        {"kind": "udp", "src": "s2", "dst": "d", "pattern": "poisson", "rate": "1Mbps",
         "size": {"dist": "uniform", "min": "100B", "max": "1400B"}}
    ]);
    let r = run(&sc); // run() asserts the identities on every link
    let l = "r1->r2";
    assert!(link_value(&r, l, "dropped_packets") > 0.0, "overflow exercised");
    assert!(link_value(&r, l, "drops_link_loss") > 0.0, "wire loss exercised");
    assert!(link_value(&r, "r2->r1", "drops_link_loss") > 0.0, "reverse loss exercised");
    assert!(link_value(&r, l, "backlog_packets") > 0.0, "packets left queued");
    assert!(link_value(&r, l, "in_flight_packets") > 0.0, "packets left in flight");
    // The drop trace agrees with the counters.
    let drops_on_l = u64s(&r, "drops", "link").iter().filter(|&&k| k as usize == link_row(&r, l)).count() as f64;
    assert_eq!(drops_on_l, link_value(&r, l, "dropped_packets") + link_value(&r, l, "drops_link_loss"));
}
