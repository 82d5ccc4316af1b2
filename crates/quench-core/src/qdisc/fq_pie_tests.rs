//! FQ-PIE unit tests: the limits, PIE on each queue alone and its drops on the congested queue
//! only, conservation and per-flow order, and configuration errors. Tests only: they drive the
//! discipline by hand through the harness's `Bench` (what a `QdiscCx` borrows), never a link or a
//! world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::{BitRate, Time};

const LINK: BitRate = BitRate(10_000_000);
const MS: u64 = 1_000_000;

fn fq_pie(limit: u64, memory_limit: u64) -> FqPie {
    let cfg = FqPieConfig {
        limit: Limit { packets: Some(limit), bytes: None },
        memory_limit: Bytes(memory_limit),
        ..FqPieConfig::default()
    };
    FqPie::new(&cfg).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-12)
}

/// The limits drop the arrival itself (Linux `fq_pie_qdisc_enqueue`), not the fattest
/// queue's head as FQ-CoDel does: limit 5 packets, the sixth arrival (uid 5) goes;
/// memory_limit 2500 B with 1000 B packets, the third (uid 2) goes.
#[test]
fn the_limits_drop_the_arrival() {
    let mut q = fq_pie(5, 32 << 20);
    let mut b = Bench::new(3);
    for uid in 0..6 {
        b.offer(&mut q, packet(uid, uid % 2, 1000), Time::ZERO, LINK);
    }
    let dropped: Vec<(u32, DropReason)> = b.drops.iter().map(|d| (d.0.uid, d.1)).collect();
    assert_eq!(dropped, vec![(5, DropReason::Overflow)]);
    assert_eq!((q.stats().pie.overlimit, q.stats().memory_drop), (1, 0));

    let mut q = fq_pie(10240, 2500);
    let mut b = Bench::new(3);
    for uid in 0..3 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
    assert_eq!(dropped, vec![2]);
    assert_eq!((q.stats().pie.overlimit, q.stats().memory_drop), (1, 1));
    assert_eq!(q.backlog().packets, 2);
}

/// PIE runs per queue, its updates caught up at that queue's events on the shared 15 ms grid.
/// Flow A queues 100 × 1000 B at 0. Its departure at 20 ms first runs the 15 ms update (no
/// departure yet: timestamp delay 0, drop_prob stays 0, burst restored to 150 ms), then
/// records a 20 ms sojourn. A's arrival at 30 ms runs the 30 ms update with qdelay 20 ms:
/// p = 0.125·0.005 + 1.25·0.020 = 0.025625, ÷2048 → 1.2512207e-5, burst 135 ms (as
/// `pie_tests.rs` step 1). Flow B, arriving at 30 ms to an empty queue, is untouched.
#[test]
fn pie_acts_on_each_queue_alone() {
    let mut q = fq_pie(10240, 32 << 20);
    let mut b = Bench::new(3);
    for uid in 0..100 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    let (a, bq) = (q.queue_of(&packet(0, 0, 1)), q.queue_of(&packet(0, 1, 1)));
    assert_ne!(a, bq, "flows share a queue under this seed");
    assert_eq!(b.take(&mut q, Time(20 * MS)).unwrap().uid, 0);
    assert_eq!(q.vars(a).drop_prob, 0.0);
    assert_eq!(q.vars(a).last_sojourn, Dur(20 * MS));
    b.offer(&mut q, packet(100, 0, 1000), Time(30 * MS), LINK);
    b.offer(&mut q, packet(101, 1, 1000), Time(30 * MS), LINK);
    assert!(close(q.vars(a).drop_prob, 1.2512207031250001e-05), "{}", q.vars(a).drop_prob);
    assert_eq!(q.vars(a).burst_allowance, Dur(135 * MS));
    assert_eq!(q.vars(bq).drop_prob, 0.0);
    assert_eq!(q.vars(bq).burst_allowance, Dur(150 * MS));
    // A's quantum (1514 B) allows one more packet; then B, new, goes before A's backlog.
    assert_eq!(b.take(&mut q, Time(31 * MS)).unwrap().uid, 1);
    assert_eq!(b.take(&mut q, Time(31 * MS)).unwrap().uid, 101);
}

/// A queue whose PIE says drop loses arrivals (`early`) while another flow's do not.
#[test]
fn early_drops_hit_the_congested_queue_only() {
    let mut q = fq_pie(10240, 32 << 20);
    let mut b = Bench::new(5);
    let mut t = 0;
    // Flow 0 arrives at 2 packets per departure for 3 s; flow 1 sends one packet per 10 ms.
    for step in 0..3000u32 {
        t = step as u64 * MS;
        b.offer(&mut q, packet(2 * step, 0, 1000), Time(t), LINK);
        b.offer(&mut q, packet(2 * step + 1, 0, 1000), Time(t), LINK);
        if step % 10 == 0 {
            b.offer(&mut q, packet(1_000_000 + step, 1, 100), Time(t), LINK);
        }
        b.take(&mut q, Time(t));
    }
    assert!(t > 0);
    assert!(b.drops.iter().all(|d| d.0.flow.0 == 0 && d.1 == DropReason::Early), "only flow 0 loses packets");
    assert!(q.stats().pie.dropped > 500, "{:?}", q.stats());
}

#[test]
fn conserves_packets_and_bytes_and_keeps_each_flow_in_order() {
    let cfg = FqPieConfig {
        flows: 4,
        quantum: Bytes(300),
        limit: Limit { packets: Some(12), bytes: None },
        target: Dur::from_micros(2),
        // The shortest period and largest gains quench accepts (limits.rs), to drop early often.
        tupdate: crate::limits::MIN_CONTROLLER_PERIOD,
        alpha: crate::limits::MAX_CONTROLLER_GAIN,
        beta: crate::limits::MAX_CONTROLLER_GAIN,
        max_burst: Dur::ZERO,
        mean_packet_size: Bytes(40),
        ..FqPieConfig::default()
    };
    let mut q = FqPie::new(&cfg).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 13);
    assert!(departed > 0 && dropped > 0);
    let s = q.stats();
    assert!(s.pie.dropped > 0 && s.pie.overlimit > 0, "{s:?}");
}

#[test]
fn bad_config_names_the_key() {
    let with = |f: &dyn Fn(&mut FqPieConfig)| {
        let mut c = FqPieConfig::default();
        f(&mut c);
        FqPie::new(&c).err().unwrap().path
    };
    assert_eq!(with(&|c| c.flows = 0), "flows");
    assert_eq!(with(&|c| c.quantum = Bytes(0)), "quantum");
    assert_eq!(with(&|c| c.memory_limit = Bytes(0)), "memory_limit");
    assert_eq!(with(&|c| c.limit = Limit { packets: Some(0), bytes: None }), "limit");
    assert_eq!(with(&|c| c.alpha = -1.0), "alpha");
    assert_eq!(with(&|c| c.tupdate = Dur::ZERO), "tupdate");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"fq_pie","flow":8}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `flow`"), "{e}");
}
