//! LEDBAT against RFC 6817's claims (docs/mechanisms.md#ledbat): alone on a path it fills the
//! link while adding a queuing delay of about TARGET (section 2.1: "saturate the bottleneck"
//! while keeping "queuing delay ... at or below TARGET"); beside a loss-based flow that fills
//! a drop-tail buffer beyond TARGET it sees a queue above TARGET, shrinks, and yields
//! (section 2.1: "yield quickly to ... standard TCP").

mod common;
use common::*;
use quench_core::RunResult;
use serde_json::{json, Value};

/// Wire bytes of a full segment (1460 B of payload and 40 B of headers).
const PACKET_BYTES: f64 = 1500.0;
const BOTTLENECK_BPS: f64 = 10e6;
const TARGET_S: f64 = 0.100;

/// A 10 Mb/s bottleneck, 2·(1 + 20 + 1) = 44 ms base RTT (BDP ≈ 37 packets), a drop-tail buffer
/// of 200 packets (240 ms at 10 Mb/s: more than TARGET's 83 packets).
fn path(ccs: &[&str], duration_s: f64) -> Value {
    let qdisc = json!({"kind": "droptail", "limit": "200p"});
    let mut sc = dumbbell(ccs.len(), "1Gbps", "1ms", "10Mbps", "20ms", qdisc);
    sc["duration"] = json!(format!("{duration_s}s"));
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": true, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"rtt_sampling": "every_ack", "sack": true, "send_buffer": "4MB", "receive_window": "4MB"});
    sc["flows"] = json!(ccs
        .iter()
        .enumerate()
        .map(|(i, cc)| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc, "tcp": tcp}))
        .collect::<Vec<_>>());
    sc
}

/// The queuing delay of a mean queue of full segments at the bottleneck.
fn queue_delay_s(packets: f64) -> f64 {
    packets * PACKET_BYTES * 8.0 / BOTTLENECK_BPS
}

/// Alone: slow start overshoots into a loss, the halved window still keeps about 200 packets
/// queued (240 ms), and the window then falls towards TARGET at GAIN·off_target segments per
/// RTT, ever slower as it nears it (85 packets = 102 ms by 90 s). Measured over [120, 150] s:
/// 84.8 packets = 101.8 ms of queue at the bottleneck, RTT − base RTT 102.4 ms, goodput 9.73
/// Mb/s (the payload share of 10 Mb/s is 9.73).
#[test]
fn ledbat_alone_fills_the_link_and_holds_target_delay() {
    let r = run(&path(&["ledbat"], 150.0));
    let q = mean_queue(&r, 120.0, 150.0);
    let delay = queue_delay_s(q);
    let goodput = flow_value(&r, 0, "goodput_bps");
    for t in [1.0, 10.0, 30.0, 60.0, 90.0, 120.0, 150.0] {
        eprintln!("  mean queue over [{}, {t}] s: {:.1} packets", t - 1.0, mean_queue(&r, t - 1.0, t));
    }
    let (rtt, rtt_t) = (f64s(&r, "rtt", "rtt_s"), f64s(&r, "rtt", "time_s"));
    let base = rtt.iter().cloned().fold(f64::INFINITY, f64::min);
    let late: Vec<f64> = rtt.iter().zip(&rtt_t).filter(|(_, &t)| t > 120.0).map(|(x, _)| x - base).collect();
    eprintln!(
        "  RTT − base RTT over [120, 150] s: mean {:.1} ms, min {:.1} ms ({} samples), base {:.1} ms",
        1e3 * late.iter().sum::<f64>() / late.len() as f64,
        1e3 * late.iter().cloned().fold(f64::INFINITY, f64::min),
        late.len(),
        base * 1e3
    );
    eprintln!(
        "LEDBAT alone: mean queue over [120, 150] s {q:.1} packets = {:.1} ms; goodput {:.2} Mb/s",
        delay * 1e3,
        goodput / 1e6
    );
    assert!((delay - TARGET_S).abs() < 0.005, "queuing delay {delay} s, TARGET {TARGET_S} s");
    let rtt_queuing = late.iter().sum::<f64>() / late.len() as f64;
    assert!((rtt_queuing - TARGET_S).abs() < 0.005, "RTT − base RTT {rtt_queuing} s");
    // Payload share of the wire (1460/1500), the slow-start loss and its recovery included.
    assert!(goodput > 0.97 * BOTTLENECK_BPS * 1460.0 / 1500.0, "goodput {goodput}");
}

/// Beside CUBIC on the same drop-tail buffer: CUBIC fills it past TARGET, LEDBAT backs off.
/// Measured over 60 s: LEDBAT 1.71 Mb/s, CUBIC 7.97 Mb/s, a share of 0.18.
#[test]
fn ledbat_yields_to_cubic() {
    let r = run(&path(&["ledbat", "cubic"], 60.0));
    let (ledbat, cubic) = (flow_value(&r, 0, "goodput_bps"), flow_value(&r, 1, "goodput_bps"));
    let share = ledbat / (ledbat + cubic);
    eprintln!("LEDBAT {:.2} Mb/s, CUBIC {:.2} Mb/s: LEDBAT's share {share:.3}", ledbat / 1e6, cubic / 1e6);
    assert!(share < 0.25, "LEDBAT's share {share}");
    assert!(ledbat + cubic > 0.9 * BOTTLENECK_BPS * 1460.0 / 1500.0, "the link must stay busy");
}

/// LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus): `variant = "ledbat++"` on the same controller.
fn plus_plus() -> Value {
    json!({"kind": "ledbat", "variant": "ledbat++"})
}

/// Two flows of `cc`, the second starting 5 s after the first, run for `duration_s`.
fn latecomer(cc: &Value, duration_s: f64) -> RunResult {
    let mut sc = path(&["cubic", "cubic"], duration_s);
    for (i, flow) in sc["flows"].as_array_mut().unwrap().iter_mut().enumerate() {
        flow["cc"] = cc.clone();
        flow["start"] = json!(format!("{}s", 5 * i));
    }
    run(&sc)
}

/// Each flow's goodput over [30, 60] s: the bytes a 60 s run delivered minus those of the same
/// (deterministic) run stopped at 30 s.
fn late_goodputs(cc: &Value) -> Vec<f64> {
    let (full, half) = (latecomer(cc, 60.0), latecomer(cc, 30.0));
    let delivered = |r: &RunResult, i| flow_value(r, i, "bytes_delivered");
    (0..2).map(|i| (delivered(&full, i) - delivered(&half, i)) * 8.0 / 30.0).collect()
}

/// The latecomer advantage (draft-irtf-iccrg-ledbat-plus-plus, its introduction and the
/// slowdowns' section): a LEDBAT flow that starts while another holds a queue measures that
/// queue as part of its base delay and takes the larger share; LEDBAT++'s slowdowns drain the
/// queue so both measure the true base. Over [30, 60] s: RFC 6817 LEDBAT, the latecomer
/// takes the larger share; LEDBAT++, Jain's index above 0.9.
#[test]
fn ledbat_plus_plus_removes_the_latecomer_advantage() {
    let rfc = late_goodputs(&json!("ledbat"));
    let pp = late_goodputs(&plus_plus());
    for (name, g) in [("RFC 6817", &rfc), ("LEDBAT++", &pp)] {
        eprintln!(
            "{name}: first {:.2} Mb/s, latecomer {:.2} Mb/s over [30, 60] s, Jain {:.3}",
            g[0] / 1e6,
            g[1] / 1e6,
            jain(g)
        );
    }
    assert!(rfc[1] > rfc[0], "RFC 6817: the latecomer's share {rfc:?}");
    assert!(jain(&pp) > 0.9, "LEDBAT++: {pp:?}");
    assert!(pp[0] + pp[1] > 0.8 * BOTTLENECK_BPS * 1460.0 / 1500.0, "the link must stay busy: {pp:?}");
}

/// LEDBAT++ beside CUBIC yields as RFC 6817 LEDBAT does: its share over 60 s below 0.2.
#[test]
fn ledbat_plus_plus_yields_to_cubic() {
    let mut sc = path(&["ledbat", "cubic"], 60.0);
    sc["flows"][0]["cc"] = plus_plus();
    let r = run(&sc);
    let (pp, cubic) = (flow_value(&r, 0, "goodput_bps"), flow_value(&r, 1, "goodput_bps"));
    let share = pp / (pp + cubic);
    eprintln!("LEDBAT++ {:.2} Mb/s, CUBIC {:.2} Mb/s: LEDBAT++'s share {share:.3}", pp / 1e6, cubic / 1e6);
    assert!(share < 0.2, "LEDBAT++'s share {share}");
    assert!(pp + cubic > 0.9 * BOTTLENECK_BPS * 1460.0 / 1500.0, "the link must stay busy");
}

/// Alone, LEDBAT++ holds the queue near its 60 ms target, below RFC 6817's 100 ms, and keeps
/// the link busy despite the slowdowns (about 10 % of the time at 2 packets).
#[test]
fn ledbat_plus_plus_alone_holds_its_lower_target() {
    let mut sc = path(&["ledbat"], 60.0);
    sc["flows"][0]["cc"] = plus_plus();
    let r = run(&sc);
    let delay = queue_delay_s(mean_queue(&r, 30.0, 60.0));
    let goodput = flow_value(&r, 0, "goodput_bps");
    eprintln!("LEDBAT++ alone: mean queue over [30, 60] s {:.1} ms; goodput {:.2} Mb/s", delay * 1e3, goodput / 1e6);
    assert!(delay < 0.075, "queuing delay {delay} s");
    assert!(goodput > 0.8 * BOTTLENECK_BPS * 1460.0 / 1500.0, "goodput {goodput}");
}

/// An unknown variant is refused in one line that names the key and the accepted values.
#[test]
fn an_unknown_variant_names_the_key() {
    let mut sc = two_hosts_through_a_router();
    sc["flows"][0]["cc"] = json!({"kind": "ledbat", "variant": "ledbat+"});
    sc["flows"][0]["tcp"] = json!({"rtt_sampling": "every_ack"});
    let e = config_error(&sc);
    eprintln!("{e}");
    assert!(e.path.ends_with("variant"), "{e}");
    assert!(e.message.contains("ledbat++") && !e.to_string().contains('\n'), "{e}");
}
