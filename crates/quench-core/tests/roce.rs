//! RoCEv2 reliable connection with go-back-N (`transport/roce.rs`; docs/mechanisms.md#roce):
//! - a lone flow at line rate meets its closed form;
//! - one scripted loss traced by hand: the NAK, the PSNs sent again, counted exactly;
//! - holes in a long transfer each cost the packets sent behind them (closed form), a lost
//!   last packet the timeout; under random loss every byte still arrives once, in order;
//! - two DCQCN flows over RoCE on a bottleneck made lossless by PFC converge to equal rates
//!   with nothing dropped; HPCC over RoCE shares the link as well;
//! - bad input names its key.
//!
//! Run with `--nocapture` for the figures docs/validation.md reports.

mod common;
use common::*;
use serde_json::{json, Value};

/// Wire bytes of a full data packet: 1000 payload behind IPv4, UDP, BTH and ICRC (44).
const PACKET: f64 = 1044.0;
/// An ACK or NAK: 48 bytes (AETH added).
const ACK: f64 = 48.0;
const RATE: f64 = 10e9;

/// `a` -> router `r` -> `b`, 10 Gb/s and 1 µs each way, with `loss` on `a->r`.
fn line(flow: Value, loss: Value, duration: &str) -> Value {
    json!({
        "duration": duration, "seed": 1, "hosts": ["a", "b"], "routers": ["r"],
        "links": [{"from": "a", "to": "r", "rate": "10Gbps", "delay": "1us", "loss": loss},
                  {"from": "r", "to": "b", "rate": "10Gbps", "delay": "1us"}],
        "flows": [flow]
    })
}

fn roce(bytes: &str, roce: Value) -> Value {
    json!({"kind": "roce", "src": "a", "dst": "b", "bytes": bytes, "cc": "dcqcn", "roce": roce})
}

/// 100 packets alone: the first crosses both hops (store and forward), the other 99 follow one
/// packet time apart. The pacer rounds each packet's 835.2 ns up to 836 ns, 0.1 % slower.
#[test]
fn a_lone_flow_meets_its_closed_form() {
    let r = run(&line(roce("100000B", json!({})), json!(0.0), "1ms"));
    let closed = 2.0 * (PACKET * 8.0 / RATE + 1e-6) + 99.0 * PACKET * 8.0 / RATE;
    let done = flow_value(&r, 0, "completion_s");
    check_rel("lone RoCE flow's completion against the closed form", done, closed, 2e-3);
    assert_eq!(flow_value(&r, 0, "ideal_fct_s"), closed);
    assert_eq!(u64s(&r, "flows", "bytes_delivered"), vec![100_000]);
    assert_eq!(u64s(&r, "flows", "retransmitted_segments"), vec![0]);
    assert_eq!(strs(&r, "flows", "kind"), vec!["roce"]);
    assert_eq!(strs(&r, "flows", "cc"), vec!["dcqcn"]);
}

/// The hand trace. PSN k leaves `a` at 836·k ns (the pacer's 835.2 ns rounded up); the 5th
/// transmission on `a->r`, PSN 4, is lost. PSN 5 (sent at 4,180 ns) reaches `b` at
/// 4,180 + 2 · (835.2 + 1,000) = 7,850.4 ns, out of order: `b` discards it and NAKs PSN 4; the
/// NAK (48 bytes, 38.4 ns a hop) reaches `a` at 7,850.4 + 2 · 1,038.4 = 9,927.2 ns. By then
/// `a` has sent PSNs 0 to 11 (PSN 11 at 9,196 ns, PSN 12 would leave at 10,032 ns) and the ACK
/// for PSN 3 (at 8,255.2 ns) has come back: it goes back to PSN 4 and sends 4 to 19 again
/// from 10,032 ns on. Resent: PSNs 4..=11, 8 packets; `b` discards PSNs 5..=11 (7) and NAKs once.
#[test]
fn one_loss_goes_back_to_the_hole_by_hand() {
    let loss = json!({"model": "list", "packets": [5]});
    let r = run(&line(roce("20000B", json!({})), loss, "1ms"));
    let got = |col: &str| flow_value(&r, 0, col);
    eprintln!(
        "one loss: sent {}, resent {}, NAKs {}, discarded out of order {}, timeouts {}, completion {:.4} us",
        got("packets_sent"),
        got("retransmitted_segments"),
        got("fast_retransmits"),
        got("reordered_segments"),
        got("timeouts"),
        got("completion_s") * 1e6
    );
    assert_eq!(got("retransmitted_segments"), 8.0);
    assert_eq!(got("packets_sent"), 28.0);
    assert_eq!(got("fast_retransmits"), 1.0, "one NAK");
    assert_eq!(got("reordered_segments"), 7.0);
    assert_eq!(got("timeouts"), 0.0);
    assert_eq!(got("bytes_delivered"), 20_000.0);
    // PSN 19 leaves at 10,032 + 15 · 836 ns and crosses both hops.
    let closed = (10_032.0 + 15.0 * 836.0) * 1e-9 + 2.0 * (PACKET * 8.0 / RATE + 1e-6);
    check_rel("completion after the go-back", got("completion_s"), closed, 1e-4);
}

/// The packets a hole costs on this path, by the trace above: the lost one, the one behind it
/// whose arrival shows the hole, and those sent while that one and its NAK travel, one round
/// trip of a packet and a NAK: 2 + floor((2·(835.2 + 1000) + 2·(38.4 + 1000)) / 836) =
/// 2 + floor(5747.2 / 836) = 8.
fn resent_per_hole() -> f64 {
    let one_way = |bytes: f64| 2.0 * (bytes * 8.0 / RATE * 1e9 + 1000.0);
    2.0 + ((one_way(PACKET) + one_way(ACK)) / 836.0).floor()
}

/// Three holes far apart in 2,000 packets each cost `resent_per_hole` packets; the last
/// packet lost has nothing behind it to reveal the hole, so the timeout (100 µs here) resends
/// it alone.
#[test]
fn each_hole_costs_the_packets_behind_it_and_a_tail_loss_the_timeout() {
    let per_hole = resent_per_hole();
    assert_eq!(per_hole, 8.0);
    // Transmission numbers: PSN 99, then PSN 599 and 1199 (8 resends earlier each).
    let loss = json!({"model": "list", "packets": [100, 608, 1216]});
    let r = run(&line(roce("2000000B", json!({"rto": "100us"})), loss, "10ms"));
    let got = |col: &str| flow_value(&r, 0, col);
    eprintln!(
        "three holes: resent {} (closed form {}), NAKs {}, timeouts {}",
        got("retransmitted_segments"),
        3.0 * per_hole,
        got("fast_retransmits"),
        got("timeouts")
    );
    assert_eq!(got("retransmitted_segments"), 3.0 * per_hole);
    assert_eq!((got("fast_retransmits"), got("timeouts")), (3.0, 0.0));
    assert_eq!(got("bytes_delivered"), 2_000_000.0);

    // The 20th and last packet lost: no later packet arrives to show the gap.
    let loss = json!({"model": "list", "packets": [20]});
    let r = run(&line(roce("20000B", json!({"rto": "100us"})), loss, "1ms"));
    let got = |col: &str| flow_value(&r, 0, col);
    assert_eq!((got("retransmitted_segments"), got("timeouts"), got("fast_retransmits")), (1.0, 1.0, 0.0));
    assert_eq!(got("bytes_delivered"), 20_000.0);
    let sent_last = 19.0 * 836e-9;
    assert!(got("completion_s") > sent_last + 100e-6, "{}", got("completion_s"));
}

/// Random loss of 0.5 % on the data's first link: every byte arrives once and in order; every
/// NAK costs at least the hole and, the holes being far apart on average, near the closed
/// form's packets each.
#[test]
fn under_random_loss_every_byte_arrives() {
    let r = run(&line(roce("2000000B", json!({"rto": "100us"})), json!(0.005), "20ms"));
    let got = |col: &str| flow_value(&r, 0, col);
    let lost = link_value(&r, "a->r", "drops_link_loss");
    let (resent, naks) = (got("retransmitted_segments"), got("fast_retransmits"));
    eprintln!(
        "0.5 % loss: {lost} lost, {naks} NAKs, {} timeouts, {resent} resent ({:.2} per NAK, closed form {} per isolated hole)",
        got("timeouts"),
        resent / naks,
        resent_per_hole()
    );
    assert_eq!(got("bytes_delivered"), 2_000_000.0);
    assert!(lost > 0.0 && naks > 0.0);
    assert!(resent >= naks + got("timeouts"));
    assert!(resent <= lost * resent_per_hole() + got("timeouts") * 2000.0);
}

/// Two flows into receiver `d` over a 10 Gb/s dumbbell with 1 µs links, the second starting at
/// 20 ms; the bottleneck marks as DCQCN's switches do (RED on the instantaneous queue, 5 to
/// 200 KB, at most 1 %), in a buffer of `limit`; with `pfc`, the routers pause an upstream link
/// once 20 KB from it are held.
fn two_flows(cc: &str, limit: &str, pfc: bool) -> quench_core::RunResult {
    let red = json!({"kind": "red", "mode": "bytes", "min_th": "5KB", "max_th": "200KB", "max_p": 0.01, "w_q": 1.0,
                     "signal": "mark", "spacing": "fj93", "limit": limit});
    let mut sc = dumbbell(2, "10Gbps", "1us", "10Gbps", "1us", red);
    sc["duration"] = json!("200ms");
    sc["seed"] = json!(1);
    sc["flows"] = json!([
        {"kind": "roce", "src": "s0", "dst": "d", "cc": cc},
        {"kind": "roce", "src": "s1", "dst": "d", "cc": cc, "start": "20ms"},
    ]);
    if pfc {
        sc["pfc"] = json!({"xoff": "20KB"});
    }
    run(&sc)
}

/// Each flow's goodput while both run (the first ran alone at the link's rate before).
fn shared_rates(r: &quench_core::RunResult) -> (f64, f64, f64) {
    let (run_s, start_s) = (0.2, 0.02);
    let bytes0 = flow_value(r, 0, "goodput_bps") * run_s;
    let bytes1 = flow_value(r, 1, "goodput_bps") * (run_s - start_s);
    let link = (bytes0 + bytes1) / run_s;
    let shared = run_s - start_s;
    ((bytes0 - link * start_s) / shared, bytes1 / shared, link)
}

#[test]
fn dcqcn_over_roce_converges_on_a_lossless_bottleneck() {
    let r = two_flows("dcqcn", "100KB", true);
    let (rate0, rate1, link) = shared_rates(&r);
    let drops: f64 = f64s(&r, "links", "dropped_packets").iter().sum();
    let pauses: f64 = f64s(&r, "links", "pfc_pauses").iter().sum();
    let marks = link_value(&r, "r1->r2", "marked_packets");
    let resent: f64 = f64s(&r, "flows", "retransmitted_segments").iter().sum();
    eprintln!(
        "DCQCN over RoCE with PFC: while both run {:.3} / {:.3} Gb/s, Jain {:.4}, link {:.3} of the payload rate, \
         marks {marks}, pauses {pauses}, drops {drops}, resent {resent}",
        rate0 / 1e9,
        rate1 / 1e9,
        jain(&[rate0, rate1]),
        link / (RATE * 1000.0 / PACKET)
    );
    assert_eq!(drops, 0.0);
    assert_eq!(resent, 0.0);
    assert!(pauses > 0.0, "PFC keeps the bottleneck lossless by pausing");
    assert!(marks > 0.0, "the marks are DCQCN's signal");
    // The same buffer without PFC drops, and go-back-N resends behind each drop.
    let lossy = two_flows("dcqcn", "100KB", false);
    let lossy_drops: f64 = f64s(&lossy, "links", "dropped_packets").iter().sum();
    let lossy_resent: f64 = f64s(&lossy, "flows", "retransmitted_segments").iter().sum();
    eprintln!("without PFC: drops {lossy_drops}, resent {lossy_resent}");
    assert!(lossy_drops > 0.0 && lossy_resent >= lossy_drops);
    assert!(jain(&[rate0, rate1]) > 0.99);
    for rate in [rate0, rate1] {
        check_rel("a flow's goodput against an equal share", rate, link / 2.0, 0.1);
    }
}

#[test]
fn hpcc_over_roce_shares_the_bottleneck() {
    let r = two_flows("hpcc", "100KB", true);
    let (rate0, rate1, link) = shared_rates(&r);
    let drops: f64 = f64s(&r, "links", "dropped_packets").iter().sum();
    eprintln!(
        "HPCC over RoCE with PFC: while both run {:.3} / {:.3} Gb/s, Jain {:.4}, link {:.3} of the payload rate, drops {drops}",
        rate0 / 1e9,
        rate1 / 1e9,
        jain(&[rate0, rate1]),
        link / (RATE * 1000.0 / PACKET)
    );
    assert_eq!(drops, 0.0);
    assert!(jain(&[rate0, rate1]) > 0.99);
}

#[test]
fn bad_keys_are_named() {
    let sc = |flow: Value| line(flow, json!(0.0), "1ms");
    expect_error(sc(roce("1KB", json!({"mtu": 0}))), "flows[0].roce.mtu", "between 1 and 4096");
    expect_error(sc(roce("1KB", json!({"ack_interval": 2000}))), "flows[0].roce.ack_interval", "between 1 and 1024");
    expect_error(sc(roce("1KB", json!({"rto": "0s"}))), "flows[0].roce.rto", "positive");
    let cubic = json!({"kind": "roce", "src": "a", "dst": "b", "cc": "cubic"});
    expect_error(sc(cubic), "flows[0].cc", "dcqcn");
}
