//! Ends of transmission carried out without events (`Link::defer_done`: an end whose link
//! will be touched again before anything could see it, including the busy queue of a link
//! that runs unseen, `Link::runs_unseen`, whose transmissions start late at the times they
//! were due) give the same runs as an event for every end: each scenario runs both ways and
//! every table, capture and event count must be bit-identical, while the event queue handles
//! fewer events. Owns nothing of the engine; touches the links' test switch only.

use crate::link::set_deferral;
use crate::Simulation;
use serde_json::{json, Value};

/// Every output of a run, to the bit (as `order_tests.rs`): the tables' Debug text, the
/// captures and the event count.
type Outputs = (String, Vec<(String, Vec<u8>)>, u64);

/// A run's outputs, and the events that went through the event queue.
fn outputs(scenario: &Value, deferral: bool) -> (Outputs, u64) {
    set_deferral(deferral);
    let mut sim = Simulation::from_json(&scenario.to_string()).expect("a valid scenario");
    sim.run_until(sim.end());
    let heap_events = sim.heap_events();
    let r = sim.finish();
    set_deferral(true);
    ((format!("{:?}", r.tables), r.pcaps, r.events_executed), heap_events)
}

/// The same results both ways; returns the queue's events with and without deferral.
fn assert_deferral_changes_nothing(scenario: Value) -> (u64, u64) {
    let (reference, every_end) = outputs(&scenario, false);
    assert!(reference.2 > 1000, "the scenario runs ({} events)", reference.2);
    let (got, deferred) = outputs(&scenario, true);
    assert!(got == reference, "deferring ends changed the results of {scenario}");
    eprintln!("{} events; the queue took {deferred} with deferral, {every_end} without", reference.2);
    (deferred, every_end)
}

/// `n` NewReno senders with SACK through a quiet drop-tail bottleneck of 10 Mb/s and 10 ms,
/// busy for most of the run, with snapshots at instants that fall between its events; the
/// queue and sojourn of the last hop, and a capture of the ACKs' bottleneck, recorded (those
/// two links are not quiet).
fn dumbbell(n: usize) -> Value {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    hosts.push("d".into());
    let mut links: Vec<Value> =
        (0..n).map(|i| json!({"from": format!("s{i}"), "to": "r1", "rate": "100Mbps", "delay": "1ms"})).collect();
    links.push(json!({"from": "r1", "to": "r2", "rate": "10Mbps", "delay": "10ms",
                      "qdisc": {"kind": "droptail", "limit": "40p"}}));
    links.push(json!({"from": "r2", "to": "d", "rate": "100Mbps", "delay": "1ms"}));
    let flows: Vec<Value> = (0..n)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": "newreno", "tcp": {"sack": true},
                        "start": format!("{}ms", 3 * i)})
        })
        .collect();
    json!({"duration": "2s", "seed": 7, "hosts": hosts, "routers": ["r1", "r2"], "links": links, "flows": flows,
           "record": {"snapshots": "7.3ms", "links": ["r2->d"], "pcap": ["r2->r1"]}})
}

#[test]
fn a_busy_bottleneck_with_snapshots() {
    let (deferred, every_end) = assert_deferral_changes_nothing(dumbbell(4));
    assert!(deferred * 10 < every_end * 9, "the busy queue's ends took no events: {deferred} against {every_end}");
}

/// The bottleneck's rate and delay change while its queue is busy: what it sent before a
/// change went at the old rate and delay.
#[test]
fn rate_and_delay_changes_of_a_busy_link() {
    let mut scenario = dumbbell(3);
    scenario["link_changes"] = json!([
        {"link": "r1->r2", "at": "400.0005ms", "rate": "5Mbps"},
        {"link": "r1->r2", "at": "900ms", "delay": "4ms"},
        {"link": "r1->r2", "at": "1300.0001ms", "rate": "12Mbps", "delay": "25ms"}
    ]);
    assert_deferral_changes_nothing(scenario);
}

/// Host queues (the linux profile's TCP Small Queues) start when the first such sender does,
/// 150 ms into the run, taking the hosts' links off the quiet path while their queues may be
/// busy.
#[test]
fn host_queues_start_mid_run() {
    let mut scenario = dumbbell(3);
    scenario["flows"][2]["tcp"] = json!({"profile": "linux"});
    scenario["flows"][2]["start"] = json!("150ms");
    assert_deferral_changes_nothing(scenario);
}

/// A 100 Gb/s fat-tree (a packet's transmission, 0.12 us, well under the links' 1 us): NDP
/// over trimming queues, and an HPCC flow whose start, 200 us in, makes the switches stamp
/// telemetry and so takes their links off the quiet path.
#[test]
fn a_fast_fabric_with_trimming_and_telemetry_starting() {
    let mut flows: Vec<Value> =
        (1..9).map(|i| json!({"kind": "ndp", "src": format!("h{i}"), "dst": "h0", "bytes": "200KB"})).collect();
    flows.push(json!({"kind": "tcp", "src": "h9", "dst": "h13", "cc": "hpcc", "bytes": "2MB", "start": "200us",
                      "tcp": {"delayed_ack": {"enabled": false}}}));
    let (deferred, every_end) = assert_deferral_changes_nothing(json!({
        "duration": "3ms", "seed": 2,
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "100Gbps", "delay": "1us",
                        "qdisc": {"kind": "trim"}, "multipath": "spray"}],
        "flows": flows,
        "record": {"queues": false, "sojourn": false}
    }));
    assert!(deferred < every_end, "{deferred} against {every_end}");
}

/// A satellite path: 20 Mb/s whose one-way delay moves among 270, 300 and 285 ms at each
/// handover, every 3 s, a 1000-packet queue busy under CUBIC and BBR. A handover falls while
/// the queue is busy: what left before it left with the delay it had then.
#[test]
fn delay_handovers_under_a_busy_queue() {
    let mut scenario = dumbbell(2);
    scenario["duration"] = json!("10s");
    scenario["flows"][0]["cc"] = json!("cubic");
    scenario["flows"][1]["cc"] = json!("bbr");
    let bottleneck = &mut scenario["links"][2];
    bottleneck["rate"] = json!("20Mbps");
    bottleneck["delay"] = json!("270ms");
    bottleneck["qdisc"] = json!({"kind": "droptail", "limit": "1000p"});
    bottleneck["schedule"] = json!([{"at": "3s", "every": "3s", "delay": ["300ms", "285ms", "270ms"]}]);
    assert_deferral_changes_nothing(scenario);
}

/// A 100 Gb/s fabric link fails while its queue is busy and comes back, routing converging
/// 50 us after each change: the end in progress when it goes down is discarded as an event.
#[test]
fn a_busy_fast_link_fails_and_comes_back() {
    let flows: Vec<Value> = (0..16)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("h{i}"), "dst": format!("h{}", (i + 5) % 16), "bytes": "2MB",
                        "tcp": {"sack": true}})
        })
        .collect();
    let (deferred, every_end) = assert_deferral_changes_nothing(json!({
        "duration": "2ms", "seed": 3,
        "topologies": [{"kind": "fat_tree", "k": 4, "rate": "100Gbps", "delay": "1us",
                        "qdisc": {"kind": "droptail", "limit": "100p"}, "multipath": "ecmp"}],
        "flows": flows,
        "routing_convergence": "50us",
        "link_changes": [
            {"link": "agg0_0->core0", "at": "300us", "up": false},
            {"link": "agg0_0->core0", "at": "900us", "up": true}
        ],
        "record": {"queues": false, "sojourn": false}
    }));
    assert!(deferred < every_end, "{deferred} against {every_end}");
}

/// A path of idle links: a constant-bit-rate source at a tenth of the links' rate, so every
/// transmission ends with the pipe empty, and ends with nothing to start next. Where a
/// packet's arrival is known when it starts (`Link::arrival_known_at_start`), its end waits
/// for that arrival, queued at the start: a hop costs the queue one event, not two. The
/// exclusions run beside it: a link without delay (its arrival would rank before its end)
/// and one whose delay is scheduled to change (the arrival is not known at the start).
#[test]
fn an_idle_path_takes_an_event_per_hop() {
    let hop = |from: &str, to: &str, delay: &str| json!({"from": from, "to": to, "rate": "100Mbps", "delay": delay});
    let path = |delay_change: bool| {
        let mut links = vec![hop("s", "r1", "1ms"), hop("r1", "r2", "3ms"), hop("r2", "d", "1ms")];
        if delay_change {
            links[1]["schedule"] = json!([{"at": "500ms", "delay": "2ms"}]);
            links[2]["delay"] = json!("0s");
        }
        json!({"duration": "1s", "seed": 5, "hosts": ["s", "d"], "routers": ["r1", "r2"], "links": links,
               "flows": [{"kind": "udp", "src": "s", "dst": "d", "rate": "10Mbps", "size": "1250B"}]})
    };
    // About 1000 datagrams, each a source timer and three hops: 7 events, or 4.
    let (deferred, every_end) = assert_deferral_changes_nothing(path(false));
    assert!(every_end > 6500 && deferred * 7 < every_end * 4 + 70, "{deferred} against {every_end}");
    // Two hops of the three still take an event for their ends.
    let (deferred, every_end) = assert_deferral_changes_nothing(path(true));
    assert!(deferred * 7 > every_end * 5 - 70 && deferred * 7 < every_end * 5 + 70, "{deferred} against {every_end}");
}

/// PFC with a control class (`control = "priority"`): ACKs wait in each link's control band,
/// served before the data. Four senders into one receiver whose own link back is slow
/// (10 Mb/s: an ACK takes 51 us, a data packet arrives every 1.2 us), so its band holds many
/// ACKs at each start; once the data stop, the band must go on draining on time. Its delay is
/// 1 us (the pipe empty at each end) or 300 us (the pipe busy).
#[test]
fn a_control_band_drains_on_time() {
    for back_delay in ["1us", "300us"] {
        let mut hosts: Vec<String> = (0..4).map(|i| format!("h{i}")).collect();
        hosts.push("d".into());
        let mut links: Vec<Value> =
            (0..4).map(|i| json!({"from": format!("h{i}"), "to": "s", "rate": "10Gbps", "delay": "1us"})).collect();
        links.push(json!({"from": "s", "to": "d", "rate": "10Gbps", "delay": "1us", "duplex": false}));
        links.push(json!({"from": "d", "to": "s", "rate": "10Mbps", "delay": back_delay, "duplex": false}));
        let flows: Vec<Value> = (0..4)
            .map(|i| {
                json!({"kind": "tcp", "src": format!("h{i}"), "dst": "d", "cc": "dctcp", "bytes": "60KB",
                       "start": format!("{}us", 3 * i), "tcp": {"sack": true, "delayed_ack": {"enabled": false}}})
            })
            .collect();
        let (deferred, every_end) = assert_deferral_changes_nothing(json!({
            "duration": "50ms", "seed": 4, "hosts": hosts, "routers": ["s"], "links": links, "flows": flows,
            "pfc": {"xoff": "30KB", "control": "priority"}, "record": {"queues": false, "sojourn": false}
        }));
        assert!(deferred < every_end, "{deferred} against {every_end}");
    }
}

/// HPCC's incast: eight senders into one host of a 100 Gb/s k = 4 fat-tree, whose switches
/// stamp telemetry into every packet they start. Without a telemetry table the busy
/// drop-tail queues run unseen, each late start stamping the hop with its own time and the
/// queue as it was then; HPCC's windows, computed from those stamps, must come out the same.
/// With the table kept (its rows in the order of the starts), the links are seen again.
#[test]
fn telemetry_stamped_by_late_starts() {
    for table in [false, true] {
        let flows: Vec<Value> = (1..9)
            .map(|i| {
                json!({"kind": "tcp", "src": format!("h{i}"), "dst": "h0", "cc": "hpcc", "bytes": "300KB",
                       "tcp": {"delayed_ack": {"enabled": false}}})
            })
            .collect();
        let (deferred, every_end) = assert_deferral_changes_nothing(json!({
            "duration": "2ms", "seed": 6,
            "topologies": [{"kind": "fat_tree", "k": 4, "rate": "100Gbps", "delay": "1us",
                            "qdisc": {"kind": "droptail", "limit": "200p"}, "multipath": "ecmp"}],
            "flows": flows,
            "record": {"queues": false, "sojourn": false, "telemetry": table}
        }));
        assert!(deferred < every_end, "{deferred} against {every_end}");
    }
}
