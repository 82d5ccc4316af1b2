//! Per-flow per-link counters (`record.flow_links`) checked against two other recorders of the
//! same run: the links table (every link's counters are the sum of its flows') and the
//! per-packet flow monitor (one flow's arrivals and drops at each link, packet by packet).

mod common;
use common::*;
use serde_json::json;

/// Two TCP flows and a UDP stream overflowing a drop-tail bottleneck, with loss on one access
/// link, so that every column has something to count.
fn scenario() -> serde_json::Value {
    let mut sc = dumbbell(3, "100Mbps", "1ms", "10Mbps", "20ms", json!({"kind": "droptail", "limit": "30p"}));
    sc["duration"] = json!("4s");
    sc["seed"] = json!(5);
    sc["links"][0]["loss"] = json!(0.01); // s0 -> r1
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "name": "a", "tcp": {"sack": true}},
        {"kind": "tcp", "src": "s1", "dst": "d", "name": "b", "start": "500ms"},
        {"kind": "udp", "src": "s2", "dst": "d", "name": "u", "rate": "3Mbps"}
    ]);
    sc["record"] =
        json!({"flow_links": true, "monitor_flow": {"flow": "a"}, "queues": false, "cwnd": false, "rtt": false});
    sc
}

#[test]
fn a_links_counters_are_the_sum_of_its_flows() {
    let r = run(&scenario());
    let (fl_link, links) = (u64s(&r, "flow_links", "link"), u64s(&r, "links", "link"));
    let sum = |col: &str, link: u64| -> u64 {
        let v = u64s(&r, "flow_links", col);
        (0..v.len()).filter(|&i| fl_link[i] == link).map(|i| v[i]).sum()
    };
    let (arrived, departed, dropped) = (
        u64s(&r, "links", "arrived_packets"),
        u64s(&r, "links", "departed_packets"),
        u64s(&r, "links", "dropped_packets"),
    );
    let lost = u64s(&r, "links", "drops_link_loss");
    for (i, &link) in links.iter().enumerate() {
        assert_eq!(sum("arrived_packets", link), arrived[i], "arrivals at link {link}");
        assert_eq!(sum("departed_packets", link), departed[i], "departures at link {link}");
        assert_eq!(sum("dropped_packets", link), dropped[i], "drops at link {link}");
        assert_eq!(sum("lost_packets", link), lost[i], "losses at link {link}");
    }
    assert!(dropped[link_row(&r, "r1->r2")] > 0 && lost[link_row(&r, "s0->r1")] > 0);
    assert_eq!(
        sum("arrived_bytes", link_row(&r, "r1->r2") as u64),
        u64s(&r, "links", "arrived_bytes")[link_row(&r, "r1->r2")]
    );
}

#[test]
fn one_flows_counts_are_its_monitored_packets() {
    let r = run(&scenario());
    let events = strs(&r, "flow_monitor", "event");
    let mlink = u64s(&r, "flow_monitor", "link");
    let (flow, link) = (u64s(&r, "flow_links", "flow"), u64s(&r, "flow_links", "link"));
    let (arrived, dropped, lost) = (
        u64s(&r, "flow_links", "arrived_packets"),
        u64s(&r, "flow_links", "dropped_packets"),
        u64s(&r, "flow_links", "lost_packets"),
    );
    let mut checked = 0;
    for i in (0..flow.len()).filter(|&i| flow[i] == 0) {
        let at = |e: &str| (0..events.len()).filter(|&j| events[j] == e && mlink[j] == link[i]).count() as u64;
        assert_eq!(at("arrive"), arrived[i], "flow a's arrivals at link {}", link[i]);
        assert_eq!(at("drop"), dropped[i] + lost[i], "flow a's drops at link {}", link[i]);
        checked += 1;
    }
    // Its data path (s0->r1, r1->r2, r2->d) and its ACKs' (d->r2, r2->r1, r1->s0).
    assert_eq!(checked, 6);
}
