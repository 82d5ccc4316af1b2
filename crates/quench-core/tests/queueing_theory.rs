//! Queueing theory: a drop-tail link fed by a Poisson stream of fixed-size packets is an M/D/1
//! queue. Reference: the Pollaczek–Khinchine mean-value formula, for deterministic service
//! time S and utilization ρ = λS:  W_q = ρ·S / (2(1 − ρ))  (Kleinrock, Queueing Systems I,
//! eq. 5.73 with E[S²] = S²). The link's `mean_sojourn_s` is exactly W_q: the time from
//! enqueue to the start of transmission.

mod common;
use common::*;
use serde_json::json;

/// 1250-byte IP datagrams (1222 B payload + 28 B UDP/IP headers) on a 10 Mb/s link: S = 1 ms.
const PAYLOAD: u64 = 1222;
const RATE_BPS: f64 = 10e6;
const SERVICE_S: f64 = 1250.0 * 8.0 / RATE_BPS;
/// Seed chosen once (not tuned): the first value tried.
const SEED: u64 = 20240601;

fn md1(rho: f64, packets: f64) {
    let duration = packets * SERVICE_S / rho;
    let sc = json!({
        "seed": SEED,
        "duration": format!("{duration}s"),
        "hosts": ["src", "dst"],
        // The source sits directly on the queue, so arrivals are exactly Poisson.
        "links": [{"from": "src", "to": "dst", "rate": "10Mbps", "delay": "1ms",
                   "qdisc": {"kind": "droptail", "limit": "100000p"}}],
        "flows": [{"kind": "udp", "src": "src", "dst": "dst", "pattern": "poisson",
                   "rate": format!("{}bps", rho * RATE_BPS), "size": format!("{PAYLOAD}B")}],
        "record": {"queues": false, "drops": false, "cwnd": false, "rtt": false}
    });
    let r = run(&sc);
    let l = "src->dst";
    assert_eq!(link_value(&r, l, "dropped_packets"), 0.0, "the buffer must be effectively infinite");
    let departed = link_value(&r, l, "departed_packets");
    assert!(departed >= packets * 0.98, "only {departed} packets");
    let w_ref = rho * SERVICE_S / (2.0 * (1.0 - rho));
    check_rel(&format!("M/D/1 rho={rho} mean wait W_q [s]"), link_value(&r, l, "mean_sojourn_s"), w_ref, 0.03);
    check_rel(&format!("M/D/1 rho={rho} utilization"), link_value(&r, l, "utilization"), rho, 0.01);
}

/// ρ = 0.5: W_q = 0.5 ms. 200k packets.
#[test]
fn md1_mean_wait_matches_pollaczek_khinchine_at_rho_0_5() {
    md1(0.5, 200_000.0);
}

/// ρ = 0.8: W_q = 2 ms. 400k packets: the waiting-time autocorrelation grows like 1/(1−ρ)²,
/// so the standard error of the mean is about 1% here (M/M/1's asymptotic-variance formula,
/// an upper bound for M/D/1, gives 1.5%), leaving the 3% tolerance at 2–3 standard errors.
#[test]
fn md1_mean_wait_matches_pollaczek_khinchine_at_rho_0_8() {
    md1(0.8, 400_000.0);
}
