//! The router-assisted ideal (PCP's "fair queueing" baseline) against closed forms: a lone flow
//! completes in a handshake, its serialization and one trip; flows that start together split
//! the link equally; and Poisson arrivals of exponentially sized flows see processor sharing,
//! E[T] = E[x]/(1 − ρ) (M/G/1-PS, Kleinrock 1976 §4.4), plus each flow's fixed 1.5 RTTs.

mod common;

use common::{config_error, f64s, link_value, run, strs};
use serde_json::{json, Value};

const RATE_BPS: f64 = 10e6;
/// One-way delay of the a–r–b path: 2 ms + 8 ms.
const ONE_WAY_S: f64 = 0.010;
const HEADERS: f64 = 40.0;
const MSS: f64 = 1460.0;

fn path(qdisc: Value) -> Value {
    json!({
        "hosts": ["a", "b"], "routers": ["r"],
        "links": [
            {"from": "a", "to": "r", "rate": "1Gbps", "delay": "2ms"},
            {"from": "r", "to": "b", "rate": "10Mbps", "delay": "8ms", "qdisc": qdisc}
        ]
    })
}

fn advertising_fq() -> Value {
    json!({"kind": "fq", "limit": "100p", "advertise_rate": true})
}

fn scenario(qdisc: Value, duration: &str, flows: Value, workloads: Value) -> Value {
    let mut s = path(qdisc);
    s["duration"] = json!(duration);
    s["flows"] = flows;
    s["workloads"] = workloads;
    s
}

fn wire_bits(payload: f64) -> f64 {
    8.0 * (payload + (payload / MSS).ceil() * HEADERS)
}

#[test]
fn a_lone_flow_takes_a_handshake_its_serialization_and_one_trip() {
    let bytes = 1_000_000.0;
    let flows = json!([{"kind": "assisted", "src": "a", "dst": "b", "bytes": "1000000B"}]);
    let r = run(&scenario(advertising_fq(), "5s", flows, json!([])));
    let response = f64s(&r, "flows", "response_time_s")[0];
    let floor = 3.0 * ONE_WAY_S + wire_bits(bytes) / RATE_BPS;
    // Pacing at exactly the link rate leaves no queue; the 1 Gb/s access hop adds 12 µs per
    // packet only for the last one.
    assert!((response - floor).abs() / floor < 0.005, "response {response:.5} s, floor {floor:.5} s");
    assert_eq!(link_value(&r, "r->b", "dropped_packets"), 0.0);
}

#[test]
fn flows_starting_together_share_the_link_equally() {
    let flows: Vec<Value> =
        (0..4).map(|i| json!({"kind": "assisted", "src": "a", "dst": "b", "name": format!("f{i}")})).collect();
    let r = run(&scenario(advertising_fq(), "10s", json!(flows), json!([])));
    let goodput = f64s(&r, "flows", "goodput_bps");
    let share = RATE_BPS * MSS / (MSS + HEADERS) / 4.0;
    for (name, g) in strs(&r, "flows", "name").iter().zip(&goodput) {
        assert!((g - share).abs() / share < 0.01, "{name}: {g:.0} b/s against {share:.0}");
    }
    assert_eq!(link_value(&r, "r->b", "dropped_packets"), 0.0);
}

#[test]
fn poisson_flows_see_processor_sharing() {
    // ρ = λ·E[size]·8/C ≈ 2.5/s × 250 KB × 8 / 10 Mb/s = 0.5 (headers add 2.7 %). The service
    // time of a flow of x payload bytes is wire_bits(x)/C. Flows last 10 RTTs on average, so
    // the one-RTT lag of the stamps (a leaving flow's share idles until the others' next stamp)
    // costs little.
    let (arrivals, mean_bytes) = (2.5, 250_000.0);
    let workloads = json!([{"pairs": [["a", "b"]], "arrival_rate": arrivals, "stop": "590s",
                            "size": {"dist": "exponential", "mean": "250000B"}, "flow": {"kind": "assisted"}}]);
    let r = run(&scenario(advertising_fq(), "600s", json!([]), workloads));
    let sizes = f64s(&r, "flows", "bytes_requested");
    let response = f64s(&r, "flows", "response_time_s");
    let starts = f64s(&r, "flows", "start_s");
    let measured: Vec<usize> = (0..sizes.len()).filter(|&i| starts[i] > 10.0).collect();
    assert!(measured.iter().all(|&i| response[i].is_finite()), "every flow completes");
    let mean = |f: &dyn Fn(usize) -> f64| measured.iter().map(|&i| f(i)).sum::<f64>() / measured.len() as f64;
    let service = mean(&|i| wire_bits(sizes[i]) / RATE_BPS);
    let rho = arrivals * wire_bits(mean_bytes) / RATE_BPS;
    let expected = service / (1.0 - rho) + 3.0 * ONE_WAY_S;
    let observed = mean(&|i| response[i]);
    eprintln!("mean response {observed:.4} s, processor sharing {expected:.4} s");
    assert!((observed - expected).abs() / expected < 0.10, "mean response {observed:.4} s, PS {expected:.4} s");
    assert_eq!(link_value(&r, "r->b", "dropped_packets"), 0.0);
}

#[test]
fn without_an_advertising_router_a_flow_still_completes_at_one_packet_per_rtt() {
    let flows = json!([{"kind": "assisted", "src": "a", "dst": "b", "bytes": "14600B"}]);
    let r = run(&scenario(json!({"kind": "droptail", "limit": "100p"}), "5s", flows, json!([])));
    let response = f64s(&r, "flows", "response_time_s")[0];
    // Ten packets, one per 20 ms RTT after the handshake: about 1 + 9 RTTs + one trip.
    assert!((0.20..0.23).contains(&response), "response {response}");
}

#[test]
fn bad_parameters_name_the_key() {
    let flows = json!([{"kind": "assisted", "src": "a", "dst": "b", "assisted": {"rto_rtts": 0.5}}]);
    let e = config_error(&scenario(advertising_fq(), "1s", flows, json!([])));
    assert_eq!(e.path, "flows[0].assisted.rto_rtts", "{e}");
}

#[test]
fn a_flow_learns_of_one_opened_during_its_handshake_one_rtt_into_its_data() {
    // A's SYN passes the router alone (told 10 Mb/s); B's passes 5 ms later (told 5). A's
    // data start at 20 ms; its first data packet asks again, passes the router at 22 ms and
    // brings back 5 Mb/s at 40 ms, so A's excess of 5 Mb/s reaches the router for at most
    // 42 − 22 ms: 100 kbit, 8 packets (the peak is exactly that). Asking only an RTT after
    // the data start instead kept the SYN's stamp for two RTTs: peak 23.
    let flows = json!([
        {"kind": "assisted", "src": "a", "dst": "b", "name": "a"},
        {"kind": "assisted", "src": "a", "dst": "b", "name": "b", "start": "5ms"}
    ]);
    let r = run(&scenario(advertising_fq(), "1s", flows, json!([])));
    let peak = link_value(&r, "r->b", "max_backlog_packets");
    assert!(peak <= 8.0, "peak backlog {peak} packets");
    assert_eq!(link_value(&r, "r->b", "dropped_packets"), 0.0);
}

#[test]
fn lost_echoes_do_not_freeze_the_rate() {
    // A long flow, then a second from 2 s: the first must learn its halved share although 10 %
    // of ACKs (echoes among them) are lost. A rate frozen at the whole link would overflow
    // FQ's buffer with the first flow's packets.
    let flows = json!([
        {"kind": "assisted", "src": "a", "dst": "b", "name": "long"},
        {"kind": "assisted", "src": "a", "dst": "b", "name": "late", "bytes": "2000000B", "start": "2s"}
    ]);
    let mut s = scenario(advertising_fq(), "10s", flows, json!([]));
    s["links"][1]["reverse_loss"] = json!(0.1);
    let r = run(&s);
    assert!(f64s(&r, "flows", "response_time_s")[1].is_finite(), "the late flow completes");
    let overflow = link_value(&r, "r->b", "drops_overflow");
    assert_eq!(overflow, 0.0, "packets overflowed the FQ buffer");
}
#[test]
fn a_flow_completes_through_random_loss_of_data_requests_and_acks() {
    let mut s = scenario(
        advertising_fq(),
        "30s",
        json!([{"kind": "assisted", "src": "a", "dst": "b", "bytes": "2000000B"}]),
        json!([]),
    );
    s["links"][1]["loss"] = json!(0.02);
    s["links"][1]["reverse_loss"] = json!(0.02);
    let r = run(&s);
    let response = f64s(&r, "flows", "response_time_s")[0];
    let floor = 3.0 * ONE_WAY_S + wire_bits(2e6) / RATE_BPS;
    assert!(response.is_finite(), "the transfer completes");
    assert!(f64s(&r, "flows", "retransmitted_segments")[0] > 0.0);
    // Losses cost dup-ACK resends and the odd timeout, not the rate: a lost request or echo
    // is given up after a timeout, so stamps keep coming.
    assert!(response < 1.5 * floor, "response {response:.3} s against floor {floor:.3} s");
}
