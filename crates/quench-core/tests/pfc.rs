//! Priority-based flow control (IEEE 802.1Qbb; docs/mechanisms.md#pfc): a pause and resume
//! traced by hand, lossless incast where the same buffer without PFC drops, PFC under DCQCN as
//! RoCE runs it, and a deadlock built from a cyclic buffer dependency (Hu et al., HotNets 2016)
//! found and reported.

mod common;
use common::*;
use serde_json::{json, Value};

/// Host `a` sends 1000-byte datagrams (972 payload + 28 header bytes) back to back at 10 Gb/s
/// through switch `s` to host `c` over a 1 Gb/s link; all delays 1 µs; PFC at `s` with xoff
/// 10,500 bytes (xon then 10,500 - 3,072 = 7,428).
fn one_bottleneck() -> Value {
    json!({
        "duration": "80us", "seed": 1,
        "hosts": ["a", "c"], "routers": ["s"],
        "links": [
            {"from": "a", "to": "s", "rate": "10Gbps", "delay": "1us", "qdisc": {"kind": "droptail", "limit": "10000p"}},
            {"from": "s", "to": "c", "rate": "1Gbps", "delay": "1us", "qdisc": {"kind": "droptail", "limit": "10000p"}}],
        "flows": [{"kind": "udp", "src": "a", "dst": "c", "rate": "20Gbps", "size": "972B"}],
        "pfc": {"xoff": 10500},
        "record": {"monitors": true, "queues": false, "cwnd": false, "rtt": false}
    })
}

/// The trace by hand. Datagram k leaves `a` in [0.8k, 0.8(k+1)] µs and reaches `s` at
/// 1.8 + 0.8k µs; `s` sends datagram j (j ≥ 1) to `c` from 1.8 + 8j µs (datagram 0 passes at
/// once). After datagram k arrives `s` holds k - floor(k/10) of them (at k = 10 the arrival
/// and datagram 1's start coincide): 11 datagrams (11,000 bytes ≥ xoff) first at k = 12,
/// t = 11.4 µs. The pause leaves at once (nothing goes back to `a`), takes 64 bytes at 10 Gb/s
/// (52 ns, rounded up) and 1 µs: `a`'s link stops at 12.452 µs, after datagram 15, which it is
/// sending. `s` then holds at most 15 - 1 = 14 datagrams (14,000 bytes, at 13.8 µs); each start
/// at 1.8 + 8j frees one, and at j = 8 (65.8 µs) it holds 7 (7,000 ≤ 7,428): the resume
/// takes effect at 66.852 µs. Paused for 54.4 µs.
#[test]
fn a_pause_and_its_resume_match_the_hand_trace() {
    let r = run(&one_bottleneck());
    let at = pause_trace(&r, "a->s");
    eprintln!("pause trace of a->s: {at:?}");
    assert_eq!(at.len(), 3, "pause, resume, and the next pause: {at:?}");
    assert!((at[0].0 - 12.452e-6).abs() < 1e-12 && at[0].1 == 1.0, "{at:?}");
    assert!((at[1].0 - 66.852e-6).abs() < 1e-12 && at[1].1 == 0.0, "{at:?}");
    assert_eq!(link_value(&r, "a->s", "pfc_max_ingress_bytes"), 14_000.0);
    assert_eq!(link_value(&r, "a->s", "pfc_pauses"), 2.0);
    assert_eq!(link_value(&r, "s->c", "dropped_packets"), 0.0);
    // The second pause, still in force at 80 µs, counts to the end.
    let paused = link_value(&r, "a->s", "pfc_paused_s");
    assert!((paused - (54.4e-6 + (80e-6 - at[2].0))).abs() < 1e-12, "{paused}");
    assert_eq!(link_value(&r, "s->c", "pfc_pauses"), 0.0, "nothing pauses the switch's own egress");
}

/// The times link `name` was paused (1) and resumed (0).
fn pause_trace(r: &quench_core::RunResult, name: &str) -> Vec<(f64, f64)> {
    let link = link_row(r, name) as u64;
    f64s(r, "monitors", "time_s")
        .into_iter()
        .zip(f64s(r, "monitors", "value"))
        .zip(u64s(r, "monitors", "link"))
        .zip(strs(r, "monitors", "name"))
        .filter(|(((_, _), l), n)| *l == link && n == "pfc_paused")
        .map(|(((t, v), _), _)| (t, v))
        .collect()
}

/// The hand trace's switch, its datagrams fragmented on the way in (`a->s` carries at most
/// 500 bytes: each 1000-byte datagram arrives as three fragments sharing its identification).
/// Every fragment counts apart at the switch's ingress, so the count falls back to `xon` and
/// the pause ends: `s->c` stays busy for the whole run. (Counted by the datagram's
/// identification alone, the fragments after the first were never released, the count never
/// fell, and the link stayed paused from the first pause on.)
#[test]
fn fragments_are_held_and_released_one_by_one() {
    let mut sc = one_bottleneck();
    sc["duration"] = json!("400us");
    sc["links"][0]["mtu"] = json!("500B");
    let r = run(&sc);
    assert!(link_value(&r, "a->s", "pfc_pauses") >= 2.0, "paused again after a resume");
    // 1 Gb/s from the first fragment's arrival (about 2 µs) to the end, less one packet.
    let carried = link_value(&r, "s->c", "departed_bytes");
    let capacity = 1e9 / 8.0 * (400e-6 - 2e-6);
    assert!(carried >= capacity - 1500.0, "s->c carried {carried} of {capacity} bytes");
    assert_eq!(link_value(&r, "s->c", "dropped_packets"), 0.0);
}

/// `n` senders into one receiver through switch `s` (all links 10 Gb/s, 1 µs), each sending
/// `bytes` with `cc`; the switch's egress to the receiver holds `buffer`.
fn incast(n: usize, cc: Value, buffer: &str, pfc: Option<Value>) -> quench_core::RunResult {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("h{i}")).collect();
    hosts.push("d".into());
    let mut links: Vec<Value> =
        (0..n).map(|i| json!({"from": format!("h{i}"), "to": "s", "rate": "10Gbps", "delay": "1us"})).collect();
    let step = json!({"kind": "step", "limit": buffer, "threshold": "40KB"});
    links.push(json!({"from": "s", "to": "d", "rate": "10Gbps", "delay": "1us", "qdisc": step}));
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "sack": true, "delayed_ack": {"enabled": false}});
    let flows: Vec<Value> = (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("h{i}"), "dst": "d", "cc": cc, "bytes": "1MB", "tcp": tcp}))
        .collect();
    let mut sc =
        json!({"duration": "100ms", "seed": 1, "hosts": hosts, "routers": ["s"], "links": links, "flows": flows});
    if let Some(pfc) = pfc {
        sc["pfc"] = pfc;
    }
    run(&sc)
}

fn total(r: &quench_core::RunResult, col: &str) -> f64 {
    f64s(r, "links", col).iter().sum()
}

/// DCQCN starts at line rate (Zhu et al., SIGCOMM 2015): 16 senders of 1 MB overflow a 300 KB
/// buffer at once; the losses stall them (RoCE has no fast retransmit; here the minimum RTO
/// outlasts the run). With PFC pausing each access link at 10 KB held, nothing is lost
/// anywhere and the incast completes at the link's rate. Headroom by closed form: after the
/// switch decides to pause, the link still delivers what is on its wire (1 µs at 10 Gb/s,
/// 1,250 bytes), what the sender sends while the frame travels (52 ns + 1 µs, 1,315 bytes) and
/// the frame it is sending then (at most 1,500), on top of an overshoot of under one packet:
/// under 5.6 KB, so 16 x 15.8 KB fits the buffer.
#[test]
fn pfc_makes_a_dcqcn_incast_lossless() {
    let n = 16;
    let lossy = incast(n, json!("dcqcn"), "300KB", None);
    let lossy_drops = total(&lossy, "dropped_packets");
    let lossless = incast(n, json!("dcqcn"), "300KB", Some(json!({"xoff": "10KB"})));
    let drops = total(&lossless, "dropped_packets");
    let pauses = total(&lossless, "pfc_pauses");
    let paused_s = total(&lossless, "pfc_paused_s");
    let most_held = f64s(&lossless, "links", "pfc_max_ingress_bytes").into_iter().fold(0.0, f64::max);
    let last = f64s(&lossless, "flows", "completion_s").into_iter().fold(0.0, f64::max);
    // 16 MB of payload in 1,460-byte segments of 1,500 wire bytes, at 10 Gb/s.
    let at_line_rate = 16e6 * 1500.0 / 1460.0 * 8.0 / 10e9;
    eprintln!(
        "16-to-1 DCQCN: without PFC {lossy_drops} drops; with PFC {drops} drops, {pauses} pauses, {:.1} µs paused in all, at most {most_held} bytes held per port, last completion {:.3} ms (line rate {:.3} ms)",
        paused_s * 1e6,
        last * 1e3,
        at_line_rate * 1e3
    );
    assert!(lossy_drops > 0.0, "the buffer must overflow without PFC for the test to mean anything");
    assert_eq!(drops, 0.0);
    assert!(pauses > 0.0);
    assert!(most_held <= 10_240.0 + 5_565.0, "headroom beyond the closed form: {most_held}");
    assert!(last.is_finite() && last < 1.03 * at_line_rate, "the incast completes at about line rate: {last}");
}

/// Four switches in a ring, a host on each; host i's flow is pinned three hops clockwise,
/// so every ring link carries three flows and every ring switch holds, from its upstream ring
/// link, packets for its downstream one: a cyclic buffer dependency (Hu et al.). At 10 Gb/s
/// UDP into 10 Gb/s ring links, the queues fill, each ring link is paused, and the cycle
/// closes and stays: the ring carries nothing from then on.
#[test]
fn a_cyclic_buffer_dependency_deadlocks_and_is_reported() {
    let ring = |i: usize| format!("s{}", i % 4);
    let mut links: Vec<Value> =
        (0..4).map(|i| json!({"from": format!("h{i}"), "to": ring(i), "rate": "10Gbps", "delay": "1us"})).collect();
    links.extend((0..4).map(|i| json!({"from": ring(i), "to": ring(i + 1), "rate": "10Gbps", "delay": "1us"})));
    let flows: Vec<Value> = (0..4)
        .map(|i| {
            let path = json!([format!("h{i}"), ring(i), ring(i + 1), ring(i + 2), ring(i + 3), format!("h{}", (i + 3) % 4)]);
            json!({"kind": "udp", "src": format!("h{i}"), "dst": format!("h{}", (i + 3) % 4), "rate": "10Gbps", "size": "1000B", "path": path})
        })
        .collect();
    let sc = json!({
        "duration": "2ms", "seed": 1,
        "hosts": ["h0", "h1", "h2", "h3"], "routers": ["s0", "s1", "s2", "s3"],
        "links": links, "flows": flows, "pfc": {"xoff": "20KB"}
    });
    let r = run(&sc);
    let cycles = strs(&r, "pfc_cycles", "links");
    let still = u64s(&r, "pfc_cycles", "still_paused");
    let times = f64s(&r, "pfc_cycles", "time_s");
    eprintln!("cycles: {:?}", cycles.iter().zip(&times).zip(&still).collect::<Vec<_>>());
    let deadlock = cycles.iter().zip(&still).find(|(c, s)| **s == 1 && c.split(' ').count() == 4);
    let (cycle, _) = deadlock.expect("a four-link cycle of paused ring links that is still paused at the end");
    for i in 0..4 {
        assert!(cycle.contains(&format!("{}->{}", ring(i), ring(i + 1))), "{cycle}");
    }
    // No ring link sends again after the cycle closed: each was paused for the rest of the run.
    let closed = times[cycles.iter().position(|c| c == cycle).unwrap()];
    for i in 0..4 {
        let paused = link_value(&r, &format!("{}->{}", ring(i), ring(i + 1)), "pfc_paused_s");
        assert!(
            paused >= 2e-3 - closed - 1e-9,
            "ring link {i}: paused {paused} s of the {} s after the cycle",
            2e-3 - closed
        );
    }
}

/// The hand trace's pause, and a TCP connection the other way (from `c` to `a`, 500 bytes,
/// 40-byte SYN, SYN-ACK and ACK, the rfc profile) opened at 20 µs, while `a->s` is paused.
/// With the control class (`control = "priority"`): the SYN takes 0.32 µs on `c->s` (1 Gb/s)
/// and 1 µs, 0.032 µs on `s->a` and 1 µs, reaching `a` at 22.352 µs; the SYN-ACK leaves `a`
/// at once though `a->s` is paused (22.384 µs, at `s` 23.384), waits at `s` only for the
/// datagram `s->c` is sending (the third, 17.8 to 25.8 µs), not for the 14 queued behind it,
/// and reaches `c` at 25.8 + 0.32 + 1 = 27.12 µs; the 540-byte segment, which acknowledges
/// the SYN-ACK, takes 4.32 µs on `c->s`, reaching `s` at 32.44 µs and `a` at 32.44 + 0.432 + 1
/// = 33.872 µs. In the one lossless class the SYN-ACK waits in `a`'s queue behind the
/// datagrams `a` sent into it at 20 Gb/s since the pause (some 25 at 22.352 µs), which leave
/// at `s->c`'s pace once resumed, 8 µs each: the transfer does not complete within 200 µs.
/// The pause starts at 12.452 µs in both; it ends at 66.852 µs in the lossless class, and
/// 0.64 µs later with the control class, whose SYN-ACK and ACK of the segment took 0.32 µs
/// each of `s->c` before the datagram that brings `s` down to `xon` (the eighth) starts.
#[test]
fn control_packets_pass_a_paused_link_in_their_own_class() {
    let with = |control: &str| {
        let mut sc = one_bottleneck();
        sc["duration"] = json!("200us");
        sc["flows"].as_array_mut().unwrap().push(json!({
            "kind": "tcp", "src": "c", "dst": "a", "bytes": "500B", "start": "20us",
            "tcp": {"delayed_ack": {"enabled": false}}
        }));
        sc["pfc"]["control"] = json!(control);
        run(&sc)
    };
    let (priority, lossless) = (with("priority"), with("lossless"));
    let done = |r: &quench_core::RunResult| flow_value(r, 1, "completion_s");
    eprintln!("completion: priority {:.3} µs, lossless {:.3} µs", done(&priority) * 1e6, done(&lossless) * 1e6);
    assert!((done(&priority) - 33.872e-6).abs() < 1e-12, "{}", done(&priority));
    assert!(done(&lossless).is_nan(), "{}", done(&lossless));
    for (r, resumed) in [(&priority, 67.492e-6), (&lossless, 66.852e-6)] {
        let at = pause_trace(r, "a->s");
        assert!((at[0].0 - 12.452e-6).abs() < 1e-12 && (at[1].0 - resumed).abs() < 1e-12, "{at:?}");
    }
}

/// Priorities: the hand trace's host `a` also sends a 1 Gb/s flow in priority 0 to host `e`
/// (over `s->e`, 10 Gb/s), and PFC is lossless in priority 3 alone, the hand trace's flow's.
/// `s` counts only priority 3 and pauses it on `a->s`; the priority-0 flow is not counted.
/// With `a`'s queue in two classes (priority 3 first), priority 0's datagrams leave during the
/// pause; with one FIFO they wait behind the paused one at its head, and none reaches `e`
/// until the resume. A capture shows each flow's priority as its DSCP class selector.
#[test]
fn a_paused_priority_holds_only_its_own_class() {
    let with = |queue: Value| {
        let mut sc = one_bottleneck();
        sc["hosts"] = json!(["a", "c", "e"]);
        sc["links"][0]["qdisc"] = queue;
        sc["links"].as_array_mut().unwrap().push(json!({"from": "s", "to": "e", "rate": "10Gbps", "delay": "1us"}));
        sc["flows"][0]["priority"] = json!(3);
        sc["flows"][0]["name"] = json!("p3");
        sc["flows"].as_array_mut().unwrap().push(json!({
            "kind": "udp", "src": "a", "dst": "e", "rate": "1Gbps", "size": "972B", "name": "p0"
        }));
        sc["pfc"]["priorities"] = json!([3]);
        sc["record"]["delay"] = json!(["p0"]);
        sc["record"]["pcap"] = json!(["a->s"]);
        run(&sc)
    };
    let fifo = json!({"kind": "droptail", "limit": "10000p"});
    let classes =
        json!({"kind": "classes", "classes": [{"priorities": [3], "qdisc": fifo}, {"priorities": [0], "qdisc": fifo}]});
    let (apart, together) = (with(classes), with(fifo));
    // With classes, priority 3 goes first and the hand trace holds to the nanosecond; with one
    // FIFO, priority 0's first datagram (sent at 0) goes second, so every later priority-3
    // datagram reaches `s` 0.8 µs later, and the pause with them.
    let arrivals_in_pause = |r: &quench_core::RunResult, paused_at: f64| {
        let at = pause_trace(r, "a->s");
        assert!((at[0].0 - paused_at).abs() < 1e-12 && at[0].1 == 8.0, "priority 3 (bit 3) paused: {at:?}");
        assert!((at[1].0 - 66.852e-6).abs() < 1e-12 && at[1].1 == 0.0, "{at:?}");
        // A datagram sent after the pause reaches `e` 2 µs and two serializations later.
        let (from, to) = (at[0].0 + 3e-6, at[1].0);
        f64s(r, "delay", "time_s").iter().filter(|&&t| t > from && t < to).count()
    };
    let (during_apart, during_together) =
        (arrivals_in_pause(&apart, 12.452e-6), arrivals_in_pause(&together, 13.252e-6));
    eprintln!("priority-0 datagrams at e during the pause: classes {during_apart}, one FIFO {during_together}");
    // 1 Gb/s of 1000-byte datagrams for 51.4 µs: 6 or 7, and what waited behind priority 3.
    assert!(during_apart >= 6, "{during_apart}");
    assert_eq!(during_together, 0);
    assert_eq!(link_value(&apart, "s->e", "pfc_pauses"), 0.0);
    // The DSCP (the IPv4 TOS byte's upper six bits): CS3 (0x60) for priority 3, 0 for 0.
    let pcap = &apart.pcaps.iter().find(|(n, _)| n == "a->s").unwrap().1;
    let (mut at, mut tos) = (24, std::collections::BTreeSet::new());
    while at < pcap.len() {
        let captured = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        tos.insert(pcap[at + 16 + 1]);
        at += 16 + captured;
    }
    assert_eq!(tos.into_iter().collect::<Vec<u8>>(), vec![0x00, 0x60]);
}

#[test]
fn bad_pfc_settings_name_their_key() {
    let mut sc = one_bottleneck();
    sc["pfc"] = json!({"xoff": 0});
    expect_error(sc.clone(), "pfc.xoff", "positive");
    sc["pfc"] = json!({"xoff": 1000, "xon": 2000});
    expect_error(sc.clone(), "pfc.xon", "below");
    sc["pfc"] = json!({"xoff": 1000, "switches": ["a"]});
    expect_error(sc.clone(), "pfc.switches[0]", "host");
    sc["pfc"] = json!({"xoff": 1000, "control": "urgent"});
    expect_error(sc.clone(), "pfc.control", "priority");
    sc["pfc"] = json!({"xoff": 1000, "priorities": [1, 8]});
    expect_error(sc.clone(), "pfc.priorities[1]", "not a priority");
    let mut bad_flow = sc.clone();
    bad_flow["pfc"] = json!({"xoff": 1000});
    bad_flow["flows"][0]["priority"] = json!(8);
    expect_error(bad_flow, "flows[0].priority", "not a priority");
    sc["pfc"] = json!({"xoff": 1000, "switches": ["nowhere"]});
    expect_error(sc.clone(), "pfc.switches[0]", "nowhere");
    sc["links"][0]["duplex"] = json!(false);
    sc["pfc"] = json!({"xoff": 1000});
    expect_error(sc, "pfc", "no link back");
}
