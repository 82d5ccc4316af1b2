//! PIE unit tests: the update against hand computations, the cap and the decay, both delay
//! estimates, the catch-up of missed updates, the tuning scale, ECN marking, auto-activation,
//! conservation and configuration errors. Tests only: they drive the discipline by hand through the
//! harness's `Bench` (what a `QdiscCx` borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::rng::Rng;
use crate::units::BitRate;

const MS: u64 = 1_000_000;

fn params() -> PieParams {
    PieParams::new(&PieConfig::default()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-12)
}

/// The controller on a recorded delay sequence, by hand (alpha 0.125 Hz, beta 1.25 Hz,
/// target 15 ms, tupdate 15 ms, max_burst 150 ms):
/// 1. 20 ms: p = 0.125·0.005 + 1.25·0.020 = 0.025625; drop_prob 0 < 1e-6: ÷2048
///    → 1.2512207e-5. Burst 135 ms.
/// 2. 30 ms: p = 0.125·0.015 + 1.25·0.010 = 0.014375; drop_prob < 1e-4: ÷128 = 1.1230469e-4
///    → 1.2481689e-4. Burst 120 ms.
/// 3. 30 ms: p = 0.001875; drop_prob < 1e-3: ÷32 = 5.859375e-5 → 1.8341064e-4. Burst 105 ms.
/// 4. 10 ms: p = −0.000625 − 0.025 = −0.025625, ÷32 → negative: clamped to 0. Burst 90 ms
///    (10 ms is not below target/2 = 7.5 ms: no restore).
/// 5. 0 ms: p < 0, stays 0; no decay (the old delay is 10 ms). Burst 75 ms, no restore (old
///    delay 10 ms).
/// 6. 0 ms: both delays below 7.5 ms and drop_prob 0: burst restored to 150 ms.
#[test]
fn one_update_at_a_time_matches_the_hand_computation() {
    let p = params();
    let mut v = PieVars::new(&p);
    let steps: [(u64, f64, u64); 6] = [
        (20, 1.2512207031250001e-05, 135),
        (30, 1.2481689453125e-04, 120),
        (30, 1.8341064453125e-04, 105),
        (10, 0.0, 90),
        (0, 0.0, 75),
        (0, 0.0, 150),
    ];
    for (i, (delay, prob, burst)) in steps.into_iter().enumerate() {
        v.update(&p, Dur(delay * MS));
        assert!(close(v.drop_prob, prob), "step {}: drop_prob {} expected {prob}", i + 1, v.drop_prob);
        assert_eq!(v.burst_allowance, Dur(burst * MS), "step {}", i + 1);
        assert_eq!(v.qdelay_old, Dur(delay * MS));
    }
}

/// Section 5.5's cap: at drop_prob 0.15 a delay of 100 ms after 15 ms gives p = 0.116875,
/// capped at 0.02 → 0.17. Section 4.2's decay: at 0.5 with both delays 0, p = −0.001875
/// (no scaling at ≥ 0.1), then ×0.98 → 0.4881625.
#[test]
fn the_cap_and_the_decay() {
    let p = params();
    let mut v = PieVars::new(&p);
    (v.drop_prob, v.qdelay_old) = (0.15, Dur(15 * MS));
    v.update(&p, Dur(100 * MS));
    assert!(close(v.drop_prob, 0.17), "{}", v.drop_prob);
    (v.drop_prob, v.qdelay_old) = (0.5, Dur::ZERO);
    v.update(&p, Dur::ZERO);
    assert!(close(v.drop_prob, 0.4881625), "{}", v.drop_prob);
}

/// Little's law on the departure rate: 1000 B packets sent every 0.8 ms (10 Mb/s) from a
/// queue of 40: the first measurement covers 17 packets (17 000 ≥ 16 384 B) sent over
/// 16 × 0.8 = 12.8 ms after the one that started it, so avg_dq_time = 12.8 ms and a queue
/// of 16 384 B is estimated at 12.8 ms.
#[test]
fn departure_rate_estimate() {
    let mut q = Pie::new(&PieConfig::default()).unwrap();
    let mut b = Bench::new(1);
    for uid in 0..40 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, BitRate(10_000_000));
    }
    for k in 0..17u64 {
        b.take(&mut q, Time(k * 800_000)).unwrap();
    }
    assert_eq!(q.vars().avg_dq_time, 12_800_000.0);
    assert_eq!(q.vars().qdelay(q.params(), 16_384), Dur(12_800_000));
}

/// The timestamp estimate is the last sojourn (Linux's default).
#[test]
fn timestamp_estimate() {
    let cfg = PieConfig { delay_estimate: DelayEstimate::Timestamp, ..PieConfig::default() };
    let mut q = Pie::new(&cfg).unwrap();
    let mut b = Bench::new(1);
    for uid in 0..3 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, BitRate(10_000_000));
    }
    b.take(&mut q, Time(7 * MS));
    assert_eq!(q.vars().qdelay(q.params(), 2000), Dur(7 * MS));
    assert_eq!(q.vars().qdelay(q.params(), 0), Dur::ZERO);
}

/// Updates run lazily at the first event at or after each due time, and report monitors.
#[test]
fn updates_are_caught_up_at_events() {
    let mut q = Pie::new(&PieConfig::default()).unwrap();
    let mut b = Bench::new(1);
    for uid in 0..30 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, BitRate(10_000_000));
    }
    b.offer(&mut q, packet(99, 0, 1000), Time(46 * MS), BitRate(10_000_000));
    // Due at 15, 30 and 45 ms: three updates, each reporting drop_prob and qdelay.
    assert_eq!(q.vars().next_update, Time(60 * MS));
    let names: Vec<&str> = b.monitors.iter().map(|m| m.0).collect();
    assert_eq!(names, ["drop_prob", "qdelay"].repeat(3));
}

/// The quiet catch-up (FQ-PIE's) leaves exactly the state of running every due update in
/// turn, bit for bit: random states (probabilities at 0, at 1, tiny, near the tuning and cap
/// boundaries and anywhere; old delays equal to the current estimate or not; any burst
/// allowance), both delay estimates, queues empty or not, and gaps of up to 400 updates.
#[test]
fn quiet_catch_up_equals_the_step_by_step_updates() {
    let mut rng = Rng::from_seed(8033);
    let pick = |rng: &mut Rng, xs: &[f64]| xs[rng.range_inclusive(0, xs.len() as u64 - 1) as usize];
    let (mut skipped, mut cases) = (0u64, 0u64);
    for estimate in [DelayEstimate::Timestamp, DelayEstimate::DepartureRate] {
        let p = PieParams::new(&PieConfig { delay_estimate: estimate, ..PieConfig::default() }).unwrap();
        for _ in 0..20_000 {
            let mut v = PieVars::new(&p);
            let u = rng.uniform();
            v.drop_prob = pick(&mut rng, &[0.0, 1.0, 1e-7, 0.0999, 0.1, 0.2, 0.5, u]);
            v.last_sojourn =
                Dur((pick(&mut rng, &[0.0, 5.0, 7.5, 10.0, 15.0, 20.0, 120.0, 300.0 * u]) * MS as f64) as u64);
            v.avg_dq_time = pick(&mut rng, &[0.0, 1.3e6, 1e7 * u]);
            let bytes = pick(&mut rng, &[0.0, 1500.0, 3000.0, 40_000.0]) as u64;
            let current = v.qdelay(&p, bytes);
            v.qdelay_old = if rng.bernoulli(0.5) { current } else { Dur((rng.uniform() * 40.0 * MS as f64) as u64) };
            v.burst_allowance = Dur(pick(&mut rng, &[0.0, 150.0, 60.0, 150.0 * u]) as u64 * MS);
            v.next_update = Time(rng.range_inclusive(0, 1000) * MS);
            let now = v.next_update + Dur(rng.range_inclusive(0, 400 * 15 * MS));
            let mut reference = v;
            while now >= reference.next_update {
                let q = reference.qdelay(&p, bytes);
                reference.update(&p, q);
                reference.next_update += p.tupdate;
            }
            let updates = (now - v.next_update).0 / p.tupdate.0 + 1;
            v.catch_up_quietly(&p, bytes, now);
            assert_eq!(v.drop_prob.to_bits(), reference.drop_prob.to_bits(), "{v:?} against {reference:?}");
            assert_eq!(v, reference);
            cases += 1;
            skipped += (updates > 2) as u64;
        }
    }
    assert!(skipped > cases / 2, "{skipped} of {cases} cases had updates to skip");
}

/// The auto-tuning factor, by counting thresholds, equals section 4.2's table read as a search
/// for the first threshold above `drop_prob` and a division by its entry (none past the
/// table), bit for bit: every threshold, its neighbours, 0, 1, values in every band, NaN, and
/// steps whose scaled value is subnormal.
#[test]
fn tuning_scale_equals_the_table_search_and_division() {
    let search = |prob: f64, delta: f64| match TUNING.iter().find(|(below, _)| prob < *below) {
        Some(&(_, divisor)) => delta / divisor,
        None => delta,
    };
    let mut probs = vec![0.0, -0.0, 1.0, 0.5, 0.2, 1e-9, 3e-6, 3e-5, 3e-4, 3e-3, 3e-2, f64::NAN];
    for &(below, _) in &TUNING {
        probs.extend([below, below.next_down(), below.next_up()]);
    }
    for prob in probs {
        for delta in [0.015625, -0.0087, 0.0, -0.0, 1e-300, 3e-308, -5e-310, f64::MIN_POSITIVE, f64::MAX] {
            let (got, want) = (delta * tuning_scale(prob), search(prob, delta));
            assert_eq!(got.to_bits(), want.to_bits(), "drop_prob {prob}, delta {delta}");
        }
    }
}

/// With ECN on and drop_prob at most mark_ecnth, ECT packets chosen to drop are marked;
/// above it they are dropped.
#[test]
fn ecn_marks_below_the_threshold_only() {
    for (prob, marked) in [(0.05, true), (0.5, false)] {
        let cfg = PieConfig { ecn: true, derandomize: false, ..PieConfig::default() };
        let mut q = Pie::new(&cfg).unwrap();
        let mut b = Bench::new(1);
        for uid in 0..5 {
            b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, BitRate(10_000_000));
        }
        (q.vars.drop_prob, q.vars.burst_allowance, q.vars.qdelay_old) = (prob, Dur::ZERO, Dur(20 * MS));
        q.vars.next_update = Time::MAX;
        for uid in 5..905 {
            let mut p = packet(uid, 0, 1000);
            p.ecn = ecn::ECT0;
            b.offer(&mut q, p, Time(MS), BitRate(10_000_000));
        }
        let (marks, drops) = (q.stats().ecn_mark, q.stats().dropped);
        if marked {
            assert!(marks > 20 && drops == 0, "marks {marks} drops {drops}");
        } else {
            assert!(drops > 300 && marks == 0, "marks {marks} drops {drops}");
        }
    }
}

#[test]
fn conserves_packets_and_bytes() {
    let cfg = PieConfig {
        limit: Limit { packets: Some(16), bytes: None },
        target: Dur::from_micros(20),
        tupdate: crate::limits::MIN_CONTROLLER_PERIOD,
        max_burst: Dur::ZERO,
        mean_packet_size: Bytes(100),
        ..PieConfig::default()
    };
    let mut q = Pie::new(&cfg).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
    assert!(departed > 0 && dropped > 0);
}

#[test]
fn bad_config_names_the_key() {
    let with = |f: &dyn Fn(&mut PieConfig)| {
        let mut c = PieConfig::default();
        f(&mut c);
        Pie::new(&c).err().unwrap().path
    };
    assert_eq!(with(&|c| c.target = Dur::ZERO), "target");
    assert_eq!(with(&|c| c.tupdate = Dur::ZERO), "tupdate");
    assert_eq!(with(&|c| c.alpha = -1.0), "alpha");
    assert_eq!(with(&|c| c.beta = f64::NAN), "beta");
    assert_eq!(with(&|c| c.mark_ecnth = 1.5), "mark_ecnth");
    assert_eq!(with(&|c| c.dq_threshold = Bytes(0)), "dq_threshold");
    assert_eq!(with(&|c| c.mean_packet_size = Bytes(0)), "mean_packet_size");
    assert_eq!(with(&|c| c.limit = Limit { packets: Some(0), bytes: None }), "limit");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"pie","delay_estimate":"ts"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown variant `ts`"), "{e}");
    let s: QdiscSpec = serde_json::from_str(r#"{"kind":"pie","delay_estimate":"timestamp"}"#).unwrap();
    assert_eq!(s.kind(), "pie");
}

/// Section 5.5's cap, as a switch. drop_prob 0.15 (≥ 0.1: the auto-tuning leaves p whole),
/// both delays 415 ms: p = 0.125·(0.415 − 0.015) + 1.25·0 = 0.05. Capped (the default, and
/// Linux): drop_prob 0.15 + 0.02 = 0.17; without the cap 0.15 + 0.05 = 0.20. Below 0.1 the cap
/// does not apply: from 0.09, p ÷ 2 = 0.025 is added whole either way.
#[test]
fn the_cap_on_increases_is_a_switch() {
    for (cap, from, want) in [(true, 0.15, 0.17), (false, 0.15, 0.20), (true, 0.09, 0.115), (false, 0.09, 0.115)] {
        let p = PieParams::new(&PieConfig { cap_drop_adjustment: cap, ..PieConfig::default() }).unwrap();
        let mut v = PieVars::new(&p);
        (v.drop_prob, v.qdelay_old) = (from, Dur::from_millis(415));
        v.update(&p, Dur::from_millis(415));
        assert!(close(v.drop_prob, want), "cap {cap} from {from}: {}", v.drop_prob);
    }
}

fn offer_n(q: &mut Pie, b: &mut Bench, uids: std::ops::Range<u32>, t: Time) -> usize {
    let before = b.drops.len();
    for uid in uids {
        b.offer(q, packet(uid, 0, 1000), t, BitRate(10_000_000));
    }
    b.drops.len() - before
}

/// Section 5.3 with limit 30 packets: the threshold is 30/3 = 10 packets. PIE starts inactive;
/// even with a drop probability of 1, no burst allowance left and a delay far above target
/// (set by hand), the first eleven arrivals (finding 0-10 queued) are all queued: inactive PIE
/// drops nothing. The arrival that found 10 activated it afresh: drop_prob and the old delay
/// zero, the full burst allowance, the first update one tupdate (15 ms) after that arrival
/// (1 ms). Emptied at 2 ms (no update is due: nothing changes), the next arrival at 3 ms finds
/// the queue empty with drop_prob 0 and both delays below target/2: PIE goes inactive.
#[test]
fn auto_activate_turns_pie_on_at_a_third_of_the_limit_and_off_when_idle() {
    let cfg =
        PieConfig { limit: Limit { packets: Some(30), bytes: None }, auto_activate: true, ..PieConfig::default() };
    let mut q = Pie::new(&cfg).unwrap();
    assert!(!q.vars().active);
    (q.vars.drop_prob, q.vars.burst_allowance, q.vars.qdelay_old) = (1.0, Dur::ZERO, Dur::from_secs(1));
    let mut b = Bench::new(7);
    assert_eq!(offer_n(&mut q, &mut b, 0..10, Time(MS)), 0);
    assert!(!q.vars().active, "nine queued is below the third");
    assert_eq!(offer_n(&mut q, &mut b, 10..11, Time(MS)), 0, "decided while inactive");
    let v = *q.vars();
    assert!(v.active);
    assert_eq!((v.drop_prob, v.qdelay_old, v.burst_allowance), (0.0, Dur::ZERO, DEFAULT_MAX_BURST));
    assert_eq!(v.next_update, Time(16 * MS));
    while b.take(&mut q, Time(2 * MS)).is_some() {}
    assert!(q.vars().active, "a departure does not switch");
    offer_n(&mut q, &mut b, 11..12, Time(3 * MS));
    assert!(!q.vars().active);
}

/// The default keeps PIE active from the start and never switches it off, and the two new
/// keys are not written back when at their defaults (so scenarios read the same).
#[test]
fn pie_is_always_active_by_default() {
    let mut q = Pie::new(&PieConfig::default()).unwrap();
    let mut b = Bench::new(7);
    assert!(q.vars().active);
    offer_n(&mut q, &mut b, 0..1, Time(MS));
    while b.take(&mut q, Time(2 * MS)).is_some() {}
    offer_n(&mut q, &mut b, 1..2, Time(3 * MS));
    assert!(q.vars().active);
    let written = serde_json::to_string(&PieConfig::default()).unwrap();
    assert!(!written.contains("cap_drop_adjustment") && !written.contains("auto_activate"), "{written}");
}
