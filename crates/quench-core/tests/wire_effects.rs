//! The wire's effects (`wire.rs`) measured from the outside, on a UDP constant-bit-rate flow
//! a -> r1 -> r2 -> b whose middle link r1->r2 carries the effect, against closed forms:
//! - Gilbert-Elliott loss: the long-run rate π_G(1−k) + π_B(1−h), π_B = p/(p+r), and for the
//!   simple Gilbert model the mean loss burst 1/r (Gilbert 1960; netem's `loss gemodel`);
//! - jitter: the one-way delay's mean and standard deviation against the law's, and reordering
//!   present with `reorder` on and absent with it off;
//! - corruption: the corrupted count against n·p, never delivered, never a queue drop.
//!
//! Packets are read from pcap captures, so nothing here trusts the link's own counters: the
//! capture on a->r1 gives each datagram's send time and IP identification (the packet's uid,
//! consecutive for a lone UDP flow), the capture on r2->b, a 10 Gb/s link that never queues at
//! these rates, its arrival at r2. A burst is a run of consecutive identifications missing at r2.
//! Figures are printed (`-- --nocapture`) for docs/validation.md.

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

/// Datagrams of 1000 bytes every 100 µs (80 Mb/s) for `secs` seconds over r1->r2 with
/// `effect` merged into that link's keys.
fn cbr_over(effect: Value, secs: u64, seed: u64) -> Value {
    let mut mid = json!({"from": "r1", "to": "r2", "rate": "1Gbps", "delay": "10ms"});
    for (k, v) in effect.as_object().unwrap() {
        mid[k] = v.clone();
    }
    json!({
        "duration": format!("{}s", secs), "seed": seed,
        "hosts": ["a", "b"], "routers": ["r1", "r2"],
        "links": [{"from": "a", "to": "r1", "rate": "10Gbps", "delay": "1ms"}, mid,
                  {"from": "r2", "to": "b", "rate": "10Gbps", "delay": "1ms"}],
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": "80Mbps", "size": "972B"}],
        "record": {"pcap": ["a->r1", "r2->b"], "queues": false, "cwnd": false, "rtt": false}
    })
}

/// (time in s, IP identification) of every packet in a pcap capture (LINKTYPE_RAW: each record
/// a 16-byte header, then the IPv4 header whose bytes 4..6 are the identification).
fn packets(pcap: &[u8]) -> Vec<(f64, u16)> {
    let mut out = Vec::new();
    let mut at = 24;
    let u32le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    while at + 16 <= pcap.len() {
        let (sec, frac, incl) = (u32le(&pcap[at..]), u32le(&pcap[at + 4..]), u32le(&pcap[at + 8..]) as usize);
        let magic = u32le(pcap);
        let scale = if magic == 0xa1b2_3c4d { 1e-9 } else { 1e-6 };
        let data = &pcap[at + 16..at + 16 + incl];
        out.push((sec as f64 + frac as f64 * scale, u16::from_be_bytes([data[4], data[5]])));
        at += 16 + incl;
    }
    out
}

fn capture(r: &RunResult, link: &str) -> Vec<(f64, u16)> {
    let (_, bytes) = r.pcaps.iter().find(|(l, _)| l == link).unwrap_or_else(|| panic!("no capture of {link}"));
    packets(bytes)
}

/// Each captured packet's index in sending order, unwrapping the 16-bit identification
/// around the index of the packet seen just before (reordering is local).
fn send_indices(ids: &[(f64, u16)], first: u16) -> Vec<i64> {
    let mut last = 0i64;
    ids.iter()
        .map(|&(_, id)| {
            let delta = id.wrapping_sub(first).wrapping_sub(last as u16) as i16 as i64;
            last += delta;
            last
        })
        .collect()
}

/// The sent packets and, in sending order, whether each reached r2.
fn fates(r: &RunResult) -> Vec<bool> {
    let sent = capture(r, "a->r1");
    let got = send_indices(&capture(r, "r2->b"), sent[0].1);
    let mut reached = vec![false; sent.len()];
    for k in got {
        reached[k as usize] = true;
    }
    // Packets still in flight at the end are neither: drop the last 100 ms of sends.
    reached.truncate(sent.len() - 1000);
    reached
}

/// Loss rate and (number of bursts, mean burst length) from packet fates.
fn losses(reached: &[bool]) -> (f64, u64, f64) {
    let lost = reached.iter().filter(|&&x| !x).count() as u64;
    let bursts = reached.windows(2).filter(|w| w[0] && !w[1]).count() as u64 + (!reached[0]) as u64;
    (lost as f64 / reached.len() as f64, bursts, lost as f64 / bursts as f64)
}

/// The simple Gilbert model, p = 0.01, r = 0.3, over 1.2·10⁵ datagrams: loss rate
/// π_B = 1/31 = 0.0323 and bursts of mean 1/r = 3.33. Standard errors: the loss indicator is a
/// two-state chain with lag-one correlation λ = 1 − p − r, so the rate's variance is
/// π(1−π)(1+λ)/((1−λ)n); a burst is geometric, variance (1−r)/r², over the bursts counted.
#[test]
fn simple_gilbert_loss_rate_and_burst_length() {
    let (p, r) = (0.01, 0.3);
    let loss = json!({"model": "gilbert-elliott", "p": p, "r": r, "h": 0.0, "k": 1.0});
    let res = run(&cbr_over(json!({"loss": loss}), 12, 1));
    let reached = fates(&res);
    let n = reached.len() as f64;
    let (rate, bursts, mean_burst) = losses(&reached);
    let pi = p / (p + r);
    let lambda = 1.0 - p - r;
    let se_rate = (pi * (1.0 - pi) * (1.0 + lambda) / ((1.0 - lambda) * n)).sqrt();
    let se_burst = ((1.0 - r) / (r * r) / bursts as f64).sqrt();
    println!("simple Gilbert p={p} r={r}: n={n} loss rate {rate:.5} (closed form {pi:.5}, se {se_rate:.5}); {bursts} bursts, mean {mean_burst:.3} (1/r = {:.3}, se {se_burst:.3})", 1.0 / r);
    assert!(n >= 1e5);
    assert!((rate - pi).abs() < 4.0 * se_rate);
    assert!((mean_burst - 1.0 / r).abs() < 4.0 * se_burst);
    // The link's counter agrees with the capture.
    let counted = link_value(&res, "r1->r2", "drops_link_loss");
    assert!((counted / n - rate).abs() < 0.002, "counter {counted} vs capture rate {rate}");
}

/// Full Gilbert-Elliott, p = 0.02, r = 0.2, h = 0.5, k = 0.99: rate
/// (10/11)(0.01) + (1/11)(0.5) = 0.05455. The chain's variance inflation (1+λ)/(1−λ) with
/// λ = 0.78 bounds the rate's standard error: √(π(1−π)·8.1/n).
#[test]
fn gilbert_elliott_loss_rate() {
    let loss = json!({"model": "gilbert-elliott", "p": 0.02, "r": 0.2, "h": 0.5, "k": 0.99});
    let reached = fates(&run(&cbr_over(json!({"loss": loss}), 12, 2)));
    let n = reached.len() as f64;
    let (rate, _, _) = losses(&reached);
    let pi = (10.0 / 11.0) * 0.01 + (1.0 / 11.0) * 0.5;
    let se = (pi * (1.0 - pi) * (1.78 / 0.22) / n).sqrt();
    println!("Gilbert-Elliott p=0.02 r=0.2 h=0.5 k=0.99: n={n} loss rate {rate:.5} (closed form {pi:.5}, se {se:.5})");
    assert!((rate - pi).abs() < 4.0 * se);
}

/// Bernoulli loss of 0.05: rate within the binomial standard error, bursts of mean 1/(1−p).
#[test]
fn bernoulli_loss_is_memoryless() {
    let q = 0.05;
    let reached = fates(&run(&cbr_over(json!({"loss": q}), 12, 3)));
    let n = reached.len() as f64;
    let (rate, bursts, mean_burst) = losses(&reached);
    let se = (q * (1.0 - q) / n).sqrt();
    let want_burst = 1.0 / (1.0 - q);
    let se_burst = (q / ((1.0 - q) * (1.0 - q)) / bursts as f64).sqrt();
    println!("Bernoulli {q}: n={n} loss rate {rate:.5} (se {se:.5}); mean burst {mean_burst:.4} (closed form {want_burst:.4})");
    assert!((rate - q).abs() < 4.0 * se);
    assert!((mean_burst - want_burst).abs() < 4.0 * se_burst);
}

/// One-way delays a->r2 (s) and the count of reordered deliveries: packets reaching r2 after
/// one sent later.
fn delays_and_reordering(r: &RunResult) -> (Vec<f64>, usize) {
    let sent = capture(r, "a->r1");
    let got = capture(r, "r2->b");
    let idx = send_indices(&got, sent[0].1);
    let delays = got.iter().zip(&idx).map(|(&(t, _), &k)| t - sent[k as usize].0).collect();
    let mut highest = -1;
    let mut reordered = 0;
    for &k in &idx {
        reordered += (k < highest) as usize;
        highest = highest.max(k);
    }
    (delays, reordered)
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (m, (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt())
}

/// The fixed part of the delay a->r2: 1 ms + 10 ms of propagation, and 1000-byte
/// transmissions at 10 Gb/s and at 1 Gb/s.
const FIXED_DELAY: f64 = 0.011 + 8000.0 / 10e9 + 8000.0 / 1e9;

/// Jitter of σ = 2 ms (uniform: deviation σ/√3; normal: σ) with reordering: mean 11 ms plus
/// transmissions, the deviation as the law's, within 4 standard errors (σ/√n for the mean,
/// σ/√(2n) for the deviation, the normal's, larger than the uniform's). Packets 100 µs apart
/// with ms of jitter overtake each other.
#[test]
fn jitter_delay_moments_and_reordering() {
    for (dist, sd) in [("uniform", 0.002 / 3f64.sqrt()), ("normal", 0.002)] {
        let jitter = json!({"sigma": "2ms", "dist": dist});
        let r = run(&cbr_over(json!({"jitter": jitter}), 10, 4));
        let (d, reordered) = delays_and_reordering(&r);
        let n = d.len() as f64;
        let (m, s) = mean_sd(&d);
        println!("jitter {dist} σ=2ms: n={n} mean {m:.6} s (closed form {FIXED_DELAY:.6}), sd {s:.6} s (closed form {sd:.6}), reordered deliveries {reordered}");
        assert!(n >= 9e4);
        assert!((m - FIXED_DELAY).abs() < 4.0 * sd / n.sqrt(), "{dist} mean {m}");
        assert!((s - sd).abs() < 4.0 * sd / (2.0 * n).sqrt(), "{dist} sd {s}");
        assert!(reordered > 0);
    }
}

/// Without reordering, no packet reaches r2 after one sent later, and no delay is below the
/// fixed part minus σ (the draw's lower end for uniform).
#[test]
fn jitter_without_reordering_keeps_order() {
    let jitter = json!({"sigma": "2ms", "dist": "uniform", "reorder": false});
    let r = run(&cbr_over(json!({"jitter": jitter}), 10, 5));
    let (d, reordered) = delays_and_reordering(&r);
    let (m, s) = mean_sd(&d);
    println!(
        "jitter uniform σ=2ms reorder=false: n={} mean {m:.6} s, sd {s:.6} s, reordered deliveries {reordered}",
        d.len()
    );
    assert_eq!(reordered, 0);
    assert!(d.iter().all(|&x| x >= FIXED_DELAY - 0.002 - 1e-9));
}

/// Corruption of 0.02 over 10⁵ datagrams: the corrupted count against n·p within 4 binomial
/// standard errors √(np(1−p)); corrupted packets never reach r2, are in the drops table under
/// their own reason, and are no queue drop.
#[test]
fn corruption_is_counted_apart_and_not_delivered() {
    let q = 0.02;
    let res = run(&cbr_over(json!({"corrupt": q}), 12, 6));
    let corrupted = link_value(&res, "r1->r2", "drops_corrupted");
    let departed = link_value(&res, "r1->r2", "departed_packets");
    let in_flight = link_value(&res, "r1->r2", "in_flight_packets");
    let arrived = departed - in_flight; // reached the far end, corrupted or not
    let se = (arrived * q * (1.0 - q)).sqrt();
    println!("corrupt {q}: {arrived} packets crossed, {corrupted} corrupted (n·p = {:.1}, se {se:.1})", arrived * q);
    assert!((corrupted - arrived * q).abs() < 4.0 * se);
    assert_eq!(link_value(&res, "r1->r2", "dropped_packets"), 0.0, "not a queue drop");
    assert_eq!(link_value(&res, "r1->r2", "drops_link_loss"), 0.0);
    // The capture at r2 misses exactly the corrupted ones.
    let got = capture(&res, "r2->b").len() as f64;
    assert_eq!(got + corrupted, arrived);
    let reasons = u64s(&res, "drops", "reason");
    let code = quench_core::names::drop_reasons().iter().position(|&r| r == "corrupted").unwrap() as u64;
    assert_eq!(reasons.iter().filter(|&&c| c == code).count() as f64, corrupted);
    assert_eq!(flow_value(&res, 0, "packets_received") + link_value(&res, "r2->b", "in_flight_packets"), got);
}

/// Links without the models show no corruption column; one with them does.
#[test]
fn corruption_column_only_where_a_link_corrupts() {
    let plain = run(&cbr_over(json!({}), 1, 1));
    assert!(plain.table("links").column("drops_corrupted").is_none());
    let with = run(&cbr_over(json!({"reverse_corrupt": 0.1}), 1, 1));
    assert!(with.table("links").column("drops_corrupted").is_some());
}

#[test]
fn bad_keys_are_named() {
    let mut sc = two_hosts_through_a_router();
    sc["links"][0]["loss"] = json!({"model": "gilbert-elliott", "p": 0.1, "r": 1.2});
    expect_error(sc, "links[0].loss.r", "not in [0, 1]");
    let mut sc = two_hosts_through_a_router();
    sc["links"][1]["reverse_loss"] = json!({"model": "gilbert-elliott", "p": 0.0, "r": 0.0});
    expect_error(sc, "links[1].reverse_loss.r", "p + r");
    let mut sc = two_hosts_through_a_router();
    sc["links"][0]["loss"] = json!({"model": "gilbert", "p": 0.1, "r": 0.1});
    expect_error(sc, "links[0].loss.model", "unknown loss model");
    let mut sc = two_hosts_through_a_router();
    sc["links"][0]["corrupt"] = json!(1.5);
    expect_error(sc, "links[0].corrupt", "not in [0, 1]");
    let mut sc = two_hosts_through_a_router();
    sc["links"][0]["jitter"] = json!({"sigma": "2ms", "dist": "cauchy"});
    expect_error(sc, "links[0].jitter.dist", "unknown variant");
}

/// A TCP flow (NewReno with SACK, 10 Mb/s, 40 ms RTT) over 1 % loss, Bernoulli against the
/// simple Gilbert model with the same mean (r = 0.5: bursts of 2; p = 0.01·0.5/0.99), over
/// five seeds of 60 s. Bursts of losses fall within one window, one recovery and one halving
/// for two losses, so at one rate, burst loss costs TCP less than memoryless loss.
#[test]
fn tcp_over_burst_loss_against_bernoulli() {
    let goodput = |loss: Value| -> f64 {
        (1..=5)
            .map(|seed| {
                let sc = json!({
                    "duration": "60s", "seed": seed, "hosts": ["a", "b"], "routers": ["r"],
                    "links": [{"from": "a", "to": "r", "rate": "100Mbps", "delay": "1ms"},
                              {"from": "r", "to": "b", "rate": "10Mbps", "delay": "19ms", "loss": loss,
                               "qdisc": {"kind": "droptail", "limit": "100p"}}],
                    "flows": [{"kind": "tcp", "src": "a", "dst": "b", "cc": "newreno", "tcp": {"sack": true}}],
                    "record": {"queues": false, "cwnd": false, "rtt": false}
                });
                flow_value(&run(&sc), 0, "goodput_bps")
            })
            .sum::<f64>()
            / 5.0
    };
    let p = 0.01 * 0.5 / 0.99;
    let bernoulli = goodput(json!(0.01));
    let gilbert = goodput(json!({"model": "gilbert-elliott", "p": p, "r": 0.5}));
    println!(
        "TCP NewReno+SACK, 10 Mb/s, 40 ms, 1 % loss: Bernoulli {:.3} Mb/s, Gilbert (bursts of 2) {:.3} Mb/s ({:+.1} %)",
        bernoulli / 1e6,
        gilbert / 1e6,
        100.0 * (gilbert / bernoulli - 1.0)
    );
    assert!(gilbert > bernoulli);
}

/// Scripted losses (`{model = "list"}`, ns-3's ReceiveListErrorModel): of the datagrams sent,
/// exactly the 3rd, 4th and 10th to cross r1->r2 never reach r2, and the link counts three
/// losses on the wire.
#[test]
fn a_list_loses_exactly_the_listed_transmissions() {
    let r = run(&cbr_over(json!({"loss": {"model": "list", "packets": [3, 4, 10]}}), 1, 1));
    let lost: Vec<usize> = fates(&r).iter().enumerate().filter(|(_, reached)| !**reached).map(|(i, _)| i + 1).collect();
    assert_eq!(lost, vec![3, 4, 10]);
    assert_eq!(link_value(&r, "r1->r2", "drops_link_loss"), 3.0);
}

/// A TCP flow (the rfc profile: NewReno without SACK) loses one data segment by script, in the
/// middle of its third window: the third duplicate ACK retransmits it, no timeout follows, and
/// the one drop on record is that loss on r1->r2.
#[test]
fn a_scripted_loss_gives_one_fast_retransmit() {
    let mut sc = dumbbell(1, "100Mbps", "1ms", "10Mbps", "10ms", json!({"kind": "droptail", "limit": "100p"}));
    sc["links"][1]["loss"] = json!({"model": "list", "packets": [12]});
    sc["duration"] = json!("2s");
    sc["record"] = json!({"drops": true, "queues": false, "cwnd": false, "rtt": false});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno", "bytes": "200KB",
                          "tcp": {"profile": "rfc"}}]);
    let r = run(&pin_rfc_profile(&sc));
    assert_eq!(flow_value(&r, 0, "fast_retransmits"), 1.0);
    assert_eq!(flow_value(&r, 0, "timeouts"), 0.0);
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 1.0);
    assert_eq!(u64s(&r, "drops", "link"), vec![link_row(&r, "r1->r2") as u64]);
    assert!(flow_value(&r, 0, "completion_s").is_finite());
}
