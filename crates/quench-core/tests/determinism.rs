//! Determinism: a run is a pure function of the scenario and its seed. Reference: equality —
//! the same seed must reproduce every table and every pcap byte; another seed must change the
//! result of a scenario that draws random numbers (Poisson arrivals and Bernoulli link loss).

mod common;
use common::*;
use quench_core::table::{Column, Table};
use serde_json::json;

/// Bit-for-bit equality of two sets of tables, NaN included (tables use NaN for undefined
/// values such as the mean sojourn of a link that sent nothing, and NaN != NaN under `==`).
/// Returns the first difference.
fn identical(a: &[Table], b: &[Table]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} tables vs {}", a.len(), b.len()));
    }
    for (ta, tb) in a.iter().zip(b) {
        if ta.name != tb.name || ta.columns.len() != tb.columns.len() {
            return Err(format!("table {} vs {}", ta.name, tb.name));
        }
        for ((na, ca), (nb, cb)) in ta.columns.iter().zip(&tb.columns) {
            let same = na == nb
                && match (ca, cb) {
                    (Column::F64(x), Column::F64(y)) => {
                        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
                    }
                    _ => ca == cb,
                };
            if !same {
                return Err(format!("{}.{na} differs", ta.name));
            }
        }
    }
    Ok(())
}

fn scenario(seed: u64) -> serde_json::Value {
    let mut sc = dumbbell(2, "100Mbps", "1ms", "5Mbps", "10ms", json!({"kind": "droptail", "limit": "30p"}));
    sc["seed"] = json!(seed);
    sc["duration"] = json!("5s");
    sc["links"][2]["loss"] = json!(0.01);
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno"},
        {"kind": "udp", "src": "s1", "dst": "d", "pattern": "poisson", "rate": "2Mbps", "size": "500B"}
    ]);
    sc["record"] = json!({"sojourn": true, "segments": true, "pcap": ["r1->r2", "r2->d"]});
    sc
}

#[test]
fn same_seed_gives_identical_results() {
    let (a, b) = (run(&scenario(11)), run(&scenario(11)));
    assert!(a.table("drops").rows() > 0 && a.table("segments").rows() > 0);
    identical(&a.tables, &b.tables).unwrap();
    assert_eq!(a.pcaps.len(), 2);
    assert!(a.pcaps.iter().all(|(_, bytes)| bytes.len() > 24), "pcaps hold packets");
    assert_eq!(a.pcaps, b.pcaps);
    assert_eq!(a.events_executed, b.events_executed);
}

#[test]
fn another_seed_gives_different_results() {
    let (a, b) = (run(&scenario(11)), run(&scenario(12)));
    for t in ["links", "flows", "queue", "drops", "segments"] {
        assert!(
            identical(std::slice::from_ref(a.table(t)), std::slice::from_ref(b.table(t))).is_err(),
            "table {t} did not change"
        );
    }
    assert!(a.pcaps != b.pcaps, "pcaps did not change");
}
