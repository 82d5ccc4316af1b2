//! DualPI2 unit tests: the PI2 update against a hand computation, the lazy updates, classification,
//! the time-shifted FIFO and WRR schedulers, the coupled probabilities and their rates, the step
//! threshold, overload, the shared limit, conservation and configuration errors. Tests only: they
//! drive the discipline by hand through the harness's `Bench` (what a `QdiscCx` borrows), never a
//! link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::BitRate;

const MS: u64 = 1_000_000;
const RATE: BitRate = BitRate(10_000_000);

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-12)
}

fn with(uid: u32, codepoint: u8) -> Packet {
    let mut p = packet(uid, uid % 4, 1000);
    p.ecn = codepoint;
    p
}

/// A DualPI2 whose controller never runs in the test's time span (p' stays where it is set).
fn frozen(cfg: DualPi2Config) -> DualPi2 {
    DualPi2::new(&DualPi2Config { tupdate: Dur(1_000_000 * MS), ..cfg }).unwrap()
}

/// The PI2 update (RFC 9332 A.1) on a handmade delay sequence, by hand with alpha 0.16 Hz,
/// beta 3.2 Hz, target 15 ms:
/// 1. 20 ms after 0: 0.16·0.005 + 3.2·0.020 = 0.0648.
/// 2. 30 ms: 0.16·0.015 + 3.2·0.010 = 0.0344 → 0.0992.
/// 3. 30 ms: 0.16·0.015 = 0.0024 → 0.1016.
/// 4. 10 ms: 0.16·(−0.005) + 3.2·(−0.020) = −0.0648 → 0.0368.
/// 5. 0 ms: −0.0024 − 0.032 = −0.0344 → 0.0024.
/// 6. 0 ms: −0.0024 → 0 (clamped at 0 if rounding leaves it below).
/// 7. 400 ms: 0.0616 + 1.28 → clamped to 1.
///
/// p_C = p'² and p_CL = 2·p' follow each step.
#[test]
fn pi2_update_matches_the_hand_computation() {
    let p = DualPi2Params::new(&DualPi2Config::default()).unwrap();
    let mut v = DualPi2Vars::new(&p);
    let steps: [(u64, f64); 7] =
        [(20, 0.0648), (30, 0.0992), (30, 0.1016), (10, 0.0368), (0, 0.0024), (0, 0.0), (400, 1.0)];
    for (i, (delay, prob)) in steps.into_iter().enumerate() {
        v.update(&p, Dur(delay * MS));
        assert!((v.p - prob).abs() < 1e-15, "step {}: p' {} expected {prob}", i + 1, v.p);
        assert!((v.p_c() - prob * prob).abs() < 1e-15);
        assert!((v.p_cl(&p) - 2.0 * prob).abs() < 1e-15);
        assert_eq!(v.prevq, delay as f64 / 1e3);
    }
}

/// The controller inside the qdisc, run lazily at its due times: one Classic packet queued at
/// t = 0 and nothing sent; an arrival at 40 ms runs the updates due at 16 and 32 ms, each with
/// the head's sojourn at its due time:
/// 16 ms: 0.16·(0.016 − 0.015) + 3.2·0.016 = 0.05136;
/// 32 ms: 0.16·0.017 + 3.2·0.016 = 0.05392 → 0.10528.
#[test]
fn lazy_updates_see_the_head_sojourn_at_their_due_time() {
    let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
    let mut b = Bench::new(1);
    b.offer(&mut q, with(0, ecn::NOT_ECT), Time::ZERO, RATE);
    b.offer(&mut q, with(1, ecn::ECT1), Time(40 * MS), RATE);
    let p: Vec<f64> = b.monitors.iter().filter(|m| m.0 == "p_prime").map(|m| m.1).collect();
    let qc: Vec<f64> = b.monitors.iter().filter(|m| m.0 == "qdelay_c").map(|m| m.1).collect();
    assert_eq!(qc, vec![0.016, 0.032]);
    assert!(close(p[0], 0.05136) && close(p[1], 0.10528), "{p:?}");
    assert_eq!(q.vars().next_update, Time(48 * MS));
    let pc: Vec<f64> = b.monitors.iter().filter(|m| m.0 == "p_c").map(|m| m.1).collect();
    assert!(close(pc[1], 0.10528 * 0.10528));
    // Linux's input: the larger head sojourn (here still the Classic one, the L4S queue empty
    // at both updates).
    let mut q = DualPi2::new(&DualPi2Config { pi_delay: PiDelay::Max, ..Default::default() }).unwrap();
    let mut b = Bench::new(1);
    b.offer(&mut q, with(0, ecn::ECT1), Time::ZERO, RATE);
    b.offer(&mut q, with(1, ecn::ECT1), Time(20 * MS), RATE);
    assert!(close(q.vars().p, 0.05136), "L4S head sojourn 16 ms under pi_delay = max: {}", q.vars().p);
}

/// With both queues empty and p' at rest, the updates are skipped in one step.
#[test]
fn an_idle_queue_skips_its_updates() {
    let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
    let mut b = Bench::new(1);
    b.offer(&mut q, with(0, ecn::NOT_ECT), Time(1000 * MS + 1), RATE);
    assert!(b.monitors.is_empty());
    assert_eq!(q.vars().next_update, Time(1008 * MS));
}

/// Classification: ECT(1) and CE to the L4S queue, Not-ECT and ECT(0) to the Classic one.
#[test]
fn ect1_and_ce_are_l4s() {
    let mut q = frozen(DualPi2Config::default());
    let mut b = Bench::new(1);
    for (uid, cp) in [ecn::NOT_ECT, ecn::ECT1, ecn::ECT0, ecn::CE].into_iter().enumerate() {
        b.offer(&mut q, with(uid as u32, cp), Time::ZERO, RATE);
    }
    assert_eq!(q.lengths(), (2, 2));
}

/// The time-shifted FIFO (tshift 40 ms) on handmade arrival times: Classic at 0 and 35 ms,
/// L4S at 30, 50 and 90 ms, all sent from t = 100 ms. Heads (L, C): (30, 0): 30 ≤ 0 + 40 → L;
/// (50, 0): 50 > 40 → C; (50, 35): 50 ≤ 75 → L; (90, 35): 90 > 75 → C; then L.
#[test]
fn time_shifted_fifo_order() {
    let mut q = frozen(DualPi2Config { step_thresh: Dur(1000 * MS), ..Default::default() });
    let mut b = Bench::new(1);
    for (uid, at, cp) in
        [(0, 0, ecn::NOT_ECT), (1, 30, ecn::ECT1), (2, 35, ecn::NOT_ECT), (3, 50, ecn::ECT1), (4, 90, ecn::ECT1)]
    {
        b.offer(&mut q, with(uid, cp), Time(at * MS), RATE);
    }
    let order: Vec<u32> = (0..5).map(|i| b.take(&mut q, Time((100 + i) * MS)).unwrap().uid).collect();
    assert_eq!(order, vec![1, 0, 3, 2, 4]);
    assert!(b.take(&mut q, Time(200 * MS)).is_none());
}

/// Linux's WRR with c_protection 10 % and 1000 B packets: the credit starts at
/// 1500·(10 − 90) = −120 000; each L4S packet adds 10·1000, each Classic one takes 90·1000.
/// So 13 L4S packets (the 13th leaves the credit at +10 000), then one Classic (−80 000), then
/// 9 L4S per Classic: 90 % / 10 % of the packets while both queues are busy.
#[test]
fn wrr_gives_the_classic_queue_its_protection() {
    let mut q = frozen(DualPi2Config { scheduler: Scheduler::Wrr, step_thresh: Dur(1000 * MS), ..Default::default() });
    let mut b = Bench::new(1);
    for uid in 0..40 {
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
        b.offer(&mut q, with(100 + uid, ecn::NOT_ECT), Time::ZERO, RATE);
    }
    let classic: Vec<usize> = (0..33).filter(|_| b.take(&mut q, Time::ZERO).unwrap().uid >= 100).collect();
    assert_eq!(classic, vec![13, 23]);
    assert_eq!(q.vars().credit, 10_000);
}

/// The coupling with `recur()` (RFC 9332 A.1): p' = 0.25, so p_C = 0.0625 and p_CL = 0.5
/// (exact in binary). recur(p) is true when the accumulated probability exceeds 1: for 0.0625
/// at arrivals 17, 33, ..., 97 (6 of 100 Not-ECT Classic packets dropped); for 0.5 at 3, 5,
/// ..., 99 (49 of 100 L4S packets marked). ECT(0) Classic packets are marked, not dropped.
#[test]
fn coupled_probabilities_with_recur() {
    let mut q = frozen(DualPi2Config::default());
    q.vars.p = 0.25;
    let mut b = Bench::new(1);
    for uid in 0..100 {
        b.offer(&mut q, with(uid, ecn::NOT_ECT), Time::ZERO, RATE);
    }
    let sent: Vec<u32> = std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).map(|p| p.uid).collect();
    let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
    assert_eq!(dropped, vec![16, 32, 48, 64, 80, 96]);
    assert_eq!(sent.len(), 94);
    assert!(b.drops.iter().all(|d| d.1 == DropReason::Early));
    for uid in 0..100 {
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
    }
    let marked: Vec<u32> =
        std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).filter(|p| p.ecn == ecn::CE).map(|p| p.uid).collect();
    assert_eq!(marked, (2..100).step_by(2).collect::<Vec<u32>>());
    for uid in 0..32 {
        b.offer(&mut q, with(uid, ecn::ECT0), Time::ZERO, RATE);
    }
    let ce = std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).filter(|p| p.ecn == ecn::CE).count();
    assert_eq!(ce, 2);
    let s = q.stats();
    assert_eq!((s.c_drops, s.c_marks, s.l_coupled_marks, s.l_step_marks, s.l_overload_drops), (6, 2, 49, 0, 0));
}

/// The native step: an L4S packet that waited more than 1 ms is marked whatever p', once the
/// Th_len guard lets it (here `th_len = 0` under Linux's rule: no guard). Sojourns 1 ms (not
/// above the threshold), 1 ms + 1 ns and 5 ms.
#[test]
fn step_marks_l4s_packets_above_the_threshold() {
    let mut q = frozen(DualPi2Config { th_len: 0, th_len_at: ThLenAt::Enqueue, ..Default::default() });
    let mut b = Bench::new(1);
    for uid in 0..3 {
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
    }
    let cps: Vec<u8> = [MS, MS + 1, 5 * MS].iter().map(|&t| b.take(&mut q, Time(t)).unwrap().ecn).collect();
    assert_eq!(cps, vec![ecn::ECT1, ecn::CE, ecn::CE]);
    assert_eq!(q.stats().l_step_marks, 2);
}

/// Five L4S packets queued at t = 0 and all sent at 2 ms (every sojourn above the 1 ms step),
/// with p' = 0 so that only the step marks. The RFC's guard (A.2 Figure 6 line 5a, after the
/// dequeue): the packets left behind are 4, 3, 2, 1, 0, so `th_len` 1 (the default) marks the
/// first three, 0 the first four, 3 the first only.
/// Five ECT(1) packets offered at 0 and taken at 2 ms: the uids that leave CE-marked.
fn ce_of_five_l4s_packets(q: &mut DualPi2) -> Vec<u32> {
    let mut b = Bench::new(1);
    for uid in 0..5 {
        b.offer(q, with(uid, ecn::ECT1), Time::ZERO, RATE);
    }
    (0..5).map(|_| b.take(q, Time(2 * MS)).unwrap()).filter(|p| p.ecn == ecn::CE).map(|p| p.uid).collect()
}

#[test]
fn th_len_counts_the_packets_left_behind() {
    for (th_len, marked) in [(1, vec![0, 1, 2]), (0, vec![0, 1, 2, 3]), (3, vec![0])] {
        let mut q = frozen(DualPi2Config { th_len, ..Default::default() });
        let ce = ce_of_five_l4s_packets(&mut q);
        assert_eq!(ce, marked, "th_len {th_len}");
        assert_eq!(q.stats().l_step_marks, marked.len() as u64);
    }
}

/// Linux's rule (`min_qlen_step`, counted on arrival): the five packets of the test above find
/// 0, 1, 2, 3, 4 packets ahead, so `th_len` 2 marks the last three and 0 (Linux's default) all.
/// Then a sequence where the two rules part: A (uid 0) and B (uid 1) arrive at 0, A leaves at
/// 2 ms, C (uid 2) arrives at 2 ms, B leaves at 3 ms, C at 4 ms; sojourns 2, 3, 2 ms. With
/// `th_len` 1, Linux's: A found 0 ahead (no), B 1 (yes), C 1 (B; yes): B and C marked. The
/// RFC's: left behind A 1, B 1 (C), C 0, none above 1: nothing marked.
#[test]
fn th_len_at_enqueue_counts_the_packets_found_on_arrival() {
    for (th_len, marked) in [(2, vec![2, 3, 4]), (0, vec![0, 1, 2, 3, 4])] {
        let mut q = frozen(DualPi2Config { th_len, th_len_at: ThLenAt::Enqueue, ..Default::default() });
        let ce = ce_of_five_l4s_packets(&mut q);
        assert_eq!(ce, marked, "th_len {th_len}");
    }
    for (at, marked) in [(ThLenAt::Enqueue, vec![1, 2]), (ThLenAt::Dequeue, vec![])] {
        let mut q = frozen(DualPi2Config { th_len: 1, th_len_at: at, ..Default::default() });
        let mut b = Bench::new(1);
        b.offer(&mut q, with(0, ecn::ECT1), Time::ZERO, RATE);
        b.offer(&mut q, with(1, ecn::ECT1), Time::ZERO, RATE);
        let mut sent = vec![b.take(&mut q, Time(2 * MS)).unwrap()];
        b.offer(&mut q, with(2, ecn::ECT1), Time(2 * MS), RATE);
        sent.push(b.take(&mut q, Time(3 * MS)).unwrap());
        sent.push(b.take(&mut q, Time(4 * MS)).unwrap());
        assert_eq!(sent.iter().map(|p| p.uid).collect::<Vec<u32>>(), vec![0, 1, 2]);
        let ce: Vec<u32> = sent.iter().filter(|p| p.ecn == ecn::CE).map(|p| p.uid).collect();
        assert_eq!(ce, marked, "{at:?}");
    }
}

/// Overload (section 4.2.3, A.2): at p' = 0.5, p_CL = 1 ≥ p_Lmax and p_C = 0.25 = p_Cmax for
/// k = 2. L4S packets are dropped with p_C (recur: arrivals 5, 9, ..., 97: 24 of 100) and the
/// rest marked; Classic ECT(0) packets selected with p_C are dropped, not marked. Without
/// `drop_overload` the L4S packets are all marked and ECT(0) ones marked.
#[test]
fn overload_drops_l4s_packets_as_classic() {
    let mut q = frozen(DualPi2Config::default());
    q.vars.p = 0.5;
    let mut b = Bench::new(1);
    for uid in 0..100 {
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
    }
    let sent: Vec<Packet> = std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).collect();
    let dropped: Vec<u32> = b.drops.drain(..).map(|d| d.0.uid).collect();
    assert_eq!(dropped, (4..100).step_by(4).collect::<Vec<u32>>());
    assert!(sent.iter().all(|p| p.ecn == ecn::CE));
    for uid in 0..12 {
        b.offer(&mut q, with(uid, ecn::ECT0), Time::ZERO, RATE);
    }
    let sent: Vec<Packet> = std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).collect();
    assert_eq!(b.drops.len(), 2, "ECT(0) dropped under overload");
    assert!(sent.iter().all(|p| p.ecn == ecn::ECT0));
    assert_eq!(q.stats().l_overload_drops, 24);

    let mut q = frozen(DualPi2Config { drop_overload: false, ..Default::default() });
    q.vars.p = 0.5;
    let mut b = Bench::new(1);
    for uid in 0..10 {
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
        b.offer(&mut q, with(100 + uid, ecn::ECT0), Time::ZERO, RATE);
    }
    let sent: Vec<Packet> = std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).collect();
    assert!(b.drops.is_empty());
    assert_eq!(sent.iter().filter(|p| p.uid < 100 && p.ecn == ecn::CE).count(), 9, "recur(1) true from the 2nd");
}

/// Linux's random decisions: the fraction of Classic drops is p_C and of L4S marks p_CL.
#[test]
fn random_decisions_have_the_coupled_rates() {
    let mut q = frozen(DualPi2Config { decisions: Decisions::Random, ..Default::default() });
    q.vars.p = 0.2;
    let mut b = Bench::new(7);
    let n = 100_000;
    let (mut marks, mut sent_c) = (0, 0);
    for uid in 0..n {
        b.offer(&mut q, with(uid, ecn::NOT_ECT), Time::ZERO, RATE);
        b.offer(&mut q, with(uid, ecn::ECT1), Time::ZERO, RATE);
        while let Some(p) = b.take(&mut q, Time::ZERO) {
            if p.ecn == ecn::CE {
                marks += 1;
            } else if p.ecn == ecn::NOT_ECT {
                sent_c += 1;
            }
        }
    }
    let (p_c, p_l) = (b.drops.len() as f64 / n as f64, marks as f64 / n as f64);
    assert!((p_c - 0.04).abs() < 0.003, "p_C {p_c}");
    assert!((p_l - 0.4).abs() < 0.01, "p_L {p_l}");
    assert_eq!(sent_c + b.drops.len(), n as usize);
}

/// The shared limit counts both queues.
#[test]
fn the_limit_is_shared() {
    let mut q = frozen(DualPi2Config { limit: Limit { packets: Some(3), bytes: None }, ..Default::default() });
    let mut b = Bench::new(1);
    for (uid, cp) in [ecn::ECT1, ecn::NOT_ECT, ecn::ECT1].into_iter().enumerate() {
        assert_eq!(b.offer(&mut q, with(uid as u32, cp), Time::ZERO, RATE), None);
    }
    assert_eq!(b.offer(&mut q, with(3, ecn::NOT_ECT), Time::ZERO, RATE), Some(DropReason::Overflow));
    assert_eq!(q.stats().overflow, 1);
}

/// Flows 1 and 3 are L4S (ECT(1)), 0 and 2 Classic (Not-ECT): so both queues and every rule
/// meet the conservation harness.
struct Mixed(DualPi2);

impl Qdisc for Mixed {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        pkt.ecn = if pkt.flow.0 % 2 == 1 { ecn::ECT1 } else { ecn::NOT_ECT };
        self.0.enqueue(pkt, cx)
    }
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        self.0.dequeue(cx)
    }
    fn backlog(&self) -> Backlog {
        self.0.backlog()
    }
}

#[test]
fn conserves_packets_and_keeps_each_flow_in_order() {
    for (scheduler, decisions) in [(Scheduler::TimeShifted, Decisions::Recur), (Scheduler::Wrr, Decisions::Random)] {
        // The harness's queue waits about 0.1 ms: a 1 ms update, a 50 µs target, large gains
        // and a 0.1 ms step so that every rule acts within the run.
        let cfg = DualPi2Config {
            tupdate: Dur(MS),
            target: Dur(MS / 20),
            alpha: 200.0,
            beta: 200.0,
            step_thresh: Dur(MS / 10),
            tshift: Dur(MS / 10),
            limit: Limit { packets: Some(50), bytes: None },
            scheduler,
            decisions,
            ..Default::default()
        };
        let mut q = Mixed(DualPi2::new(&cfg).unwrap());
        let (departed, dropped) = check_conservation(&mut q, 50_000, 3);
        let s = q.0.stats();
        assert!(departed > 10_000 && dropped > 0, "{departed} {dropped}");
        assert!(s.c_drops > 0 && s.l_coupled_marks + s.l_step_marks > 0 && s.overflow > 0, "{s:?}");
        assert_eq!(s.c_drops + s.l_overload_drops + s.overflow, dropped);
    }
    let spec: QdiscSpec = serde_json::from_str(r#"{"kind":"dualpi2"}"#).unwrap();
    let mut q = spec.build().unwrap();
    check_conservation(&mut q, 20_000, 4);
}

#[test]
fn parameters_are_checked_by_key() {
    let bad = |json: &str| serde_json::from_str::<DualPi2Config>(json).map(|c| DualPi2::new(&c).err().unwrap().path);
    assert_eq!(bad(r#"{"alpha": 0}"#).unwrap(), "alpha");
    assert_eq!(bad(r#"{"beta": -1}"#).unwrap(), "beta");
    assert_eq!(bad(r#"{"coupling": 0.5}"#).unwrap(), "coupling");
    assert_eq!(bad(r#"{"tupdate": "0ms"}"#).unwrap(), "tupdate");
    assert_eq!(bad(r#"{"c_protection": 101}"#).unwrap(), "c_protection");
    assert_eq!(bad(r#"{"limit": "0p"}"#).unwrap(), "limit");
    assert_eq!(bad(r#"{"th_len": 10000}"#).unwrap(), "th_len");
    assert_eq!(bad(r#"{"limit": "5p", "th_len": 5}"#).unwrap(), "th_len");
    assert!(DualPi2::new(&serde_json::from_str(r#"{"limit": "5p", "th_len": 4}"#).unwrap()).is_ok());
    assert!(serde_json::from_str::<DualPi2Config>(r#"{"th_len": -1}"#).is_err());
    assert!(serde_json::from_str::<DualPi2Config>(r#"{"th_len_at": "never"}"#).is_err());
    assert!(serde_json::from_str::<DualPi2Config>(r#"{"scheduler": "fifo"}"#).is_err());
    assert_eq!(DualPi2Params::new(&DualPi2Config::default()).unwrap().p_cmax(), 0.25);
}
