//! RED unit tests: hand-computed probabilities, the idle decay, the count mechanism's
//! inter-drop distribution, gentle and byte modes, both adaptation rules, ECN marking, the
//! accounting identities and configuration errors.
//! Tests only: they drive the discipline by hand through the harness's `Bench` (what a `QdiscCx`
//! borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::BitRate;

fn red(json: &str) -> Red {
    let cfg: RedConfig = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    Red::new(&cfg).unwrap()
}

fn resolved(min_th: f64, max_th: f64) -> Resolved {
    Resolved { w_q: 0.002, min_th, max_th, ptc: 1000.0 }
}

const RATE: BitRate = BitRate(8_000_000);

fn ms(v: f64) -> Time {
    Time::ZERO + Dur::from_secs_f64(v / 1000.0)
}

#[test]
fn drop_probability_at_chosen_averages() {
    let r = resolved(5.0, 15.0);
    // pb = max_p·(avg − min)/(max − min): 0.1·5/10 = 0.05 at avg 10, 0.1·2/10 = 0.02 at avg 7.
    assert!((base_probability(Curve::Classic, 10.0, &r, 0.1) - 0.05).abs() < 1e-12);
    assert!((base_probability(Curve::Classic, 7.0, &r, 0.1) - 0.02).abs() < 1e-12);
    assert_eq!(base_probability(Curve::Classic, 15.0, &r, 0.1), 1.0);
    // FJ93 spacing: pa = pb/(1 − count·pb) = 0.05/(1 − 3·0.05) = 0.0588235...
    assert!((spaced_probability(Spacing::Fj93, 0.05, 3.0, None) - 0.05 / 0.85).abs() < 1e-12);
    assert_eq!(spaced_probability(Spacing::Fj93, 0.05, 20.0, None), 1.0);
    // ns wait: nothing while count·pb < 1; then pb/(2 − count·pb): 0.05/(2 − 1.5) = 0.1.
    assert_eq!(spaced_probability(Spacing::Wait, 0.05, 19.0, None), 0.0);
    assert!((spaced_probability(Spacing::Wait, 0.05, 30.0, None) - 0.1).abs() < 1e-12);
    assert_eq!(spaced_probability(Spacing::Wait, 0.05, 40.0, None), 1.0);
}

#[test]
fn the_qdisc_applies_the_curve_to_its_own_average_and_count() {
    let mut q = red(r#"{"min_th":5,"max_th":15,"max_p":0.1,"spacing":"fj93","curve":"classic"}"#);
    let p = RedParams { resolved: resolved(5.0, 15.0), ..RedParams::new(&q.cfg, RATE.0 as f64) };
    q.vars.avg = 12.0;
    q.vars.count = 4;
    // pb = 0.1·7/10 = 0.07; pa = 0.07/(1 − 4·0.07) = 0.097222...
    let pa = q.vars.drop_probability(&p, &packet(0, 0, 1000));
    assert!((pa - 0.07 / 0.72).abs() < 1e-12, "{pa}");
}

#[test]
fn gentle_region_rises_linearly_to_one_at_twice_max_th() {
    let r = resolved(5.0, 15.0);
    // pb = max_p + (1 − max_p)·(avg − max)/max = 0.1 + 0.9·5/15 = 0.4 at avg 20.
    assert!((base_probability(Curve::Gentle, 20.0, &r, 0.1) - 0.4).abs() < 1e-12);
    assert!((base_probability(Curve::Gentle, 15.0, &r, 0.1) - 0.1).abs() < 1e-12);
    assert_eq!(base_probability(Curve::Gentle, 30.0, &r, 0.1), 1.0);
    // In the qdisc: between max_th and 2·max_th gentle drops early; classic forces.
    for (curve, avg, want) in [
        ("gentle", 20.0, DropReason::Early),
        ("classic", 20.0, DropReason::Forced),
        ("gentle", 31.0, DropReason::Forced),
    ] {
        let mut q = red(&format!(r#"{{"min_th":5,"max_th":15,"max_p":0.1,"curve":"{curve}","w_q":1e-9}}"#));
        let mut b = Bench::new(1);
        for uid in 0..3 {
            b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
        }
        q.vars.avg = avg;
        q.vars.above_min = true;
        q.vars.count = 1000; // past any spacing: a decision is certain in the early region too
        let got = b.offer(&mut q, packet(9, 0, 1000), ms(0.0), RATE);
        assert_eq!(got, Some(want), "{curve} at avg {avg}");
    }
}

#[test]
fn average_decays_over_idle_time_as_if_mean_packets_had_left() {
    // 8 Mb/s, 1000-byte mean packets: ptc = 1000 packets/s.
    let mut q = red(r#"{"min_th":5,"max_th":15,"w_q":0.5,"mean_packet_size":"1000B"}"#);
    let mut b = Bench::new(1);
    for uid in 0..4 {
        b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
    }
    // Not idle: avg = (1 − w)·avg + w·q, q = 0, 1, 2, 3 before each arrival.
    let mut want = 0.0;
    for qlen in 0..4 {
        want = 0.5 * want + 0.5 * qlen as f64;
    }
    assert!((q.average() - want).abs() < 1e-12);
    while b.take(&mut q, ms(1.0)).is_some() {}
    assert!(b.take(&mut q, ms(2.0)).is_none()); // idle from 1 ms, the first empty dequeue
                                                // 10.5 ms idle: m = ⌊1000·0.0105⌋ = 10; avg·(1 − w)^11 + w·0.
    b.offer(&mut q, packet(9, 0, 1000), ms(11.5), RATE);
    assert!((q.average() - want * 0.5f64.powi(11)).abs() < 1e-15, "{} vs {}", q.average(), want * 0.5f64.powi(11));
    assert_eq!(q.params().unwrap().resolved.ptc, 1000.0);
}

/// Inter-drop gaps (arrivals from one drop to the next) with avg held at 10 of (5, 15):
/// pb = 0.05.
fn inter_drop_gaps(spacing: &str, drops_wanted: usize) -> Vec<u64> {
    let mut q = red(&format!(r#"{{"min_th":5,"max_th":15,"max_p":0.1,"w_q":1e-12,"spacing":"{spacing}"}}"#));
    let mut b = Bench::new(7);
    for uid in 0..10 {
        b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
    }
    q.vars.avg = 10.0;
    let (mut gaps, mut since, mut uid, mut first) = (vec![], 0u64, 10u32, true);
    while gaps.len() < drops_wanted {
        since += 1;
        uid += 1;
        if b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE).is_some() {
            if !first {
                gaps.push(since); // the first gap starts at the entry into the region: skip it
            }
            first = false;
            since = 0;
        } else {
            b.take(&mut q, ms(0.0));
        }
    }
    gaps
}

/// Pearson's chi-square statistic of `gaps` against the uniform law on lo..=hi.
fn chi_square_uniform(gaps: &[u64], lo: u64, hi: u64) -> f64 {
    let cells = (hi - lo + 1) as usize;
    let mut seen = vec![0f64; cells];
    for &g in gaps {
        assert!((lo..=hi).contains(&g), "gap {g} outside {lo}..={hi}");
        seen[(g - lo) as usize] += 1.0;
    }
    let expected = gaps.len() as f64 / cells as f64;
    seen.iter().map(|o| (o - expected).powi(2) / expected).sum()
}

#[test]
fn count_spaces_drops_uniformly() {
    // FJ93: P(gap = n) = pb/(1 − pb) for n = 1..1/pb − 1 = 1..19.
    let gaps = inter_drop_gaps("fj93", 20_000);
    let chi = chi_square_uniform(&gaps, 1, 19);
    // 18 degrees of freedom: the 99.9% quantile is 42.3.
    assert!(chi < 42.3, "chi-square {chi}");
    let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
    assert!((mean - 10.0).abs() < 0.1, "mean gap {mean}");
    // ns wait: P(gap = n) = pb for n = 1/pb..2/pb − 1 = 20..39.
    let gaps = inter_drop_gaps("wait", 20_000);
    let chi = chi_square_uniform(&gaps, 20, 39);
    // 19 degrees of freedom: the 99.9% quantile is 43.8.
    assert!(chi < 43.8, "chi-square {chi}");
}

/// Independent marking (DCQCN's switches): every arrival with probability pb alone, so the
/// gaps are geometric, P(gap = n) = pb·(1 − pb)^(n−1): mean 1/pb = 20, and a gap of one
/// arrival as likely as pb = 0.05 (each within 4 standard errors of 20,000 gaps).
#[test]
fn independent_spacing_draws_each_arrival_alone() {
    let gaps = inter_drop_gaps("independent", 20_000);
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<u64>() as f64 / n;
    // The geometric law's s.d. is sqrt(1 − pb)/pb ≈ 19.5, so the mean's standard error is 0.14.
    assert!((mean - 20.0).abs() < 4.0 * 0.138, "mean gap {mean}");
    let ones = gaps.iter().filter(|&&g| g == 1).count() as f64 / n;
    assert!((ones - 0.05).abs() < 4.0 * (0.05f64 * 0.95 / n).sqrt(), "P(gap = 1) {ones}");
    assert_eq!(spaced_probability(Spacing::Independent, 0.05, 1000.0, None), 0.05, "no count");
}

/// The first arrival into the early region: ns exempts it (the count restarts there), and
/// independent marking does not. Over 4,000 entries at pb = 0.05, `wait` drops no first
/// arrival and `independent` drops a share within 4 standard errors of pb.
#[test]
fn only_independent_spacing_draws_the_first_arrival_in_the_early_region() {
    const ENTRIES: u32 = 4_000;
    const PB: f64 = 0.05;
    for spacing in ["wait", "independent"] {
        let mut q = red(&format!(r#"{{"min_th":5,"max_th":15,"max_p":0.1,"w_q":1e-12,"spacing":"{spacing}"}}"#));
        let mut b = Bench::new(11);
        for uid in 0..10 {
            b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
        }
        let mut dropped = 0u32;
        for entry in 0..ENTRIES {
            let uid = 10 + 2 * entry;
            q.vars.avg = 0.0; // below min_th: the arrival leaves the early region
            assert!(b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE).is_none());
            b.take(&mut q, ms(0.0));
            q.vars.avg = 10.0; // pb = 0.05, the first arrival back in the region
            if b.offer(&mut q, packet(uid + 1, 0, 1000), ms(0.0), RATE).is_some() {
                dropped += 1;
            } else {
                b.take(&mut q, ms(0.0));
            }
        }
        let share = f64::from(dropped) / f64::from(ENTRIES);
        if spacing == "wait" {
            assert_eq!(dropped, 0, "ns exempts the first arrival");
        } else {
            let se = (PB * (1.0 - PB) / f64::from(ENTRIES)).sqrt();
            assert!((share - PB).abs() < 4.0 * se, "independent: {share}");
        }
    }
}

#[test]
fn byte_mode_counts_mean_packets_and_scales_by_size() {
    let json = r#"{"mode":"bytes","min_th":"5KB","max_th":"15KB","max_p":0.1,"mean_packet_size":"1000B",
                   "spacing":"fj93"}"#;
    let mut q = red(json);
    let p = RedParams::new(&q.cfg, RATE.0 as f64);
    assert_eq!((p.resolved.min_th, p.resolved.max_th), (5000.0, 15000.0));
    q.vars.avg = 10_000.0; // pb = 0.05
    q.vars.count_bytes = 3_500; // ⌊3500/1000⌋ = 3 mean-sized packets
    let base = 0.05 / (1.0 - 3.0 * 0.05);
    let small = q.vars.drop_probability(&p, &packet(0, 0, 500));
    let large = q.vars.drop_probability(&p, &packet(0, 0, 1500));
    assert!((small - base * 0.5).abs() < 1e-12, "{small}");
    assert!((large - base * 1.5).abs() < 1e-12, "{large}");
    // The queue and the average are in bytes.
    let mut b = Bench::new(1);
    b.offer(&mut q, packet(1, 0, 700), ms(0.0), RATE);
    assert_eq!(q.params().unwrap().queued(&q.fifo), 700.0);
}

#[test]
fn feng_adapts_on_entering_below_and_above_and_freezes_otherwise() {
    let p = FengParams::default();
    let r = resolved(20.0, 80.0);
    let trace = [
        (50.0, FengStatus::Between, 0.1),
        (90.0, FengStatus::Above, 0.2), // entering above: × 2
        (95.0, FengStatus::Above, 0.2), // still above: frozen
        (50.0, FengStatus::Between, 0.2),
        (85.0, FengStatus::Above, 0.4),
        (10.0, FengStatus::Below, 0.4 / 3.0), // entering below: ÷ 3
        (5.0, FengStatus::Below, 0.4 / 3.0),
        (81.0, FengStatus::Above, 0.8 / 3.0), // straight from below to above
    ];
    let (mut status, mut max_p) = (FengStatus::Below, 0.1);
    for (avg, want_status, want_p) in trace {
        (status, max_p) = feng_step(&p, status, avg, &r, max_p);
        assert_eq!(status, want_status, "avg {avg}");
        assert!((max_p - want_p).abs() < 1e-12, "avg {avg}: {max_p} vs {want_p}");
    }
}

#[test]
fn floyd_aimd_keeps_the_average_in_the_target_band() {
    let p = FloydParams::default();
    let r = resolved(20.0, 80.0); // band 44..56
    assert_eq!(floyd_step(&p, 50.0, &r, 0.1), 0.1);
    // above: + min(0.01, max_p/4): 0.1 → 0.11; 0.02 → 0.025
    assert!((floyd_step(&p, 60.0, &r, 0.1) - 0.11).abs() < 1e-12);
    assert!((floyd_step(&p, 60.0, &r, 0.02) - 0.025).abs() < 1e-12);
    // below: × 0.9
    assert!((floyd_step(&p, 30.0, &r, 0.1) - 0.09).abs() < 1e-12);
    // bounds: no increase above top 0.5, no decrease below bottom 0.01
    assert_eq!(floyd_step(&p, 60.0, &r, 0.51), 0.51);
    assert_eq!(floyd_step(&p, 30.0, &r, 0.009), 0.009);
}

#[test]
fn floyd_updates_once_per_interval_on_arrivals() {
    let mut q = red(r#"{"min_th":5,"max_th":15,"max_p":0.1,"w_q":1,"adapt":"floyd2001"}"#);
    let mut b = Bench::new(1);
    // w_q = 1: avg is the queue the arrival finds. 20 packets arrive in the first 0.4 s.
    for uid in 0..20 {
        b.offer(&mut q, packet(uid, 0, 100), ms(20.0 * uid as f64), RATE);
    }
    assert_eq!(q.max_p(), 0.1); // no interval has ended yet
    b.offer(&mut q, packet(20, 0, 100), ms(500.0), RATE); // avg 20 > 11 (band 9..11): +0.01
    assert!((q.max_p() - 0.11).abs() < 1e-12);
    b.offer(&mut q, packet(21, 0, 100), ms(900.0), RATE); // within the next interval
    assert!((q.max_p() - 0.11).abs() < 1e-12);
    b.offer(&mut q, packet(22, 0, 100), ms(1000.0), RATE);
    assert!((q.max_p() - 0.12).abs() < 1e-12);
    let reported: Vec<f64> = b.monitors.iter().filter(|m| m.0 == "max_p").map(|m| m.1).collect();
    assert_eq!(reported.len(), 3, "{reported:?}"); // first arrival and the two changes
    assert_eq!(b.monitors.iter().filter(|m| m.0 == "avg_queue").count(), 23);
}

#[test]
fn ared_automatic_parameters_from_link_rate() {
    let q = red(r#"{"w_q":"auto","adapt":"floyd2001"}"#);
    // 10 Mb/s, 500-byte mean: ptc = 2500 packets/s; w_q = 1 − e^(−1/2500);
    // min_th = max(5, 0.005·2500/2 = 6.25) = 6.25; max_th = 3·6.25.
    let r = q.cfg.resolve(10e6);
    assert!((r.w_q - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
    assert!((r.min_th - 6.25).abs() < 1e-12 && (r.max_th - 18.75).abs() < 1e-12);
    // Slow links keep the 5-packet floor; byte mode multiplies by the mean packet size.
    let r = red(r#"{"mode":"bytes"}"#).cfg.resolve(1e6);
    assert_eq!((r.min_th, r.max_th), (2500.0, 7500.0));
}

#[test]
fn ecn_capable_packets_are_marked_not_dropped() {
    for (forced, avg, ecn_bits, want_drop, want_mark) in [
        ("drop", 12.0, ecn::ECT0, None, true),                        // early: mark
        ("drop", 12.0, ecn::NOT_ECT, Some(DropReason::Early), false), // not ECN-capable
        ("drop", 40.0, ecn::ECT0, Some(DropReason::Forced), false),   // hard drop
        ("mark", 40.0, ecn::ECT0, None, true),                        // forced mark
    ] {
        let json = format!(r#"{{"min_th":5,"max_th":15,"signal":"mark","forced":"{forced}","w_q":1e-9}}"#);
        let mut q = red(&json);
        let mut b = Bench::new(1);
        for uid in 0..3 {
            b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
        }
        (q.vars.avg, q.vars.above_min, q.vars.count) = (avg, true, 1000);
        let mut p = packet(9, 0, 1000);
        p.ecn = ecn_bits;
        assert_eq!(b.offer(&mut q, p, ms(0.0), RATE), want_drop, "{json} avg {avg}");
        assert_eq!(b.marks == 1, want_mark);
        let s = q.stats();
        assert_eq!(s.prob_mark + s.forced_mark == 1, want_mark);
        assert_eq!(s.prob_drop + s.forced_drop == 1, want_drop.is_some());
        if want_mark {
            assert_eq!(q.fifo.back().unwrap().ecn, ecn::CE);
        }
    }
}

#[test]
fn conserves_packets_and_bytes() {
    for json in [
        r#"{"min_th":2,"max_th":6,"max_p":0.3,"limit":"8p","w_q":0.2}"#,
        r#"{"mode":"bytes","min_th":"2KB","max_th":"6KB","limit":"10KB","w_q":0.2,"curve":"classic"}"#,
        r#"{"min_th":2,"max_th":6,"limit":"8p","w_q":0.2,"adapt":"feng1999","signal":"mark"}"#,
    ] {
        let (departed, dropped) = check_conservation(&mut red(json), 20_000, 5);
        assert!(departed > 0 && dropped > 0, "{json}");
    }
}

#[test]
fn configuration_errors_name_the_field() {
    let err = |json: &str| Red::new(&serde_json::from_str::<RedConfig>(json).unwrap()).err().unwrap();
    assert_eq!(err(r#"{"min_th":"20KB","max_th":"80KB"}"#).path, "min_th"); // bytes in packet mode
    assert_eq!(err(r#"{"min_th":15,"max_th":5}"#).path, "max_th");
    assert!(Red::new(&serde_json::from_str::<RedConfig>(r#"{"min_th":5,"max_th":5}"#).unwrap()).is_ok());
    assert_eq!(err(r#"{"min_th":5}"#).path, "max_th");
    assert_eq!(err(r#"{"max_p":1.5}"#).path, "max_p");
    assert_eq!(err(r#"{"w_q":0}"#).path, "w_q");
    assert_eq!(err(r#"{"adapt":{"kind":"feng1999","alpha":0.5}}"#).path, "adapt.alpha");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"red","adapt":"feng"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown variant `feng`"), "{e}");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"red","minth":5}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `minth`"), "{e}");
    let s: QdiscSpec = serde_json::from_str(r#"{"kind":"red","adapt":{"kind":"floyd2001","interval":"1s"}}"#).unwrap();
    let again: QdiscSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(serde_json::to_string(&s).unwrap(), serde_json::to_string(&again).unwrap());
}

/// Each arrival records the queue it found beside the average, and the average is the EWMA of
/// exactly those samples: ten back-to-back arrivals (no departure, so no idle decay) find
/// 0, 1, ..., 9 packets, and with w_q = 0.25 the average after arrival k is
/// avg_k = 0.75·avg_(k−1) + 0.25·k (hand recurrence from avg_0 = 0).
#[test]
fn arrivals_record_the_queue_they_found() {
    let mut q = red(r#"{"min_th":50,"max_th":150,"w_q":0.25,"limit":"200p"}"#);
    let mut b = Bench::new(1);
    for uid in 0..10 {
        b.offer(&mut q, packet(uid, 0, 1000), ms(0.0), RATE);
    }
    let series = |name: &str| b.monitors.iter().filter(|m| m.0 == name).map(|m| m.1).collect::<Vec<f64>>();
    let (found, avg) = (series("arrival_queue"), series("avg_queue"));
    assert_eq!(found, (0..10).map(f64::from).collect::<Vec<_>>());
    let mut want = 0.0;
    for (k, a) in avg.iter().enumerate() {
        want = 0.75 * want + 0.25 * k as f64;
        assert!((a - want).abs() < 1e-12, "arrival {k}: avg {a}, want {want}");
    }
    // The names keep their first-seen order: avg_queue, max_p, arrival_queue.
    let first: Vec<&str> = b.monitors.iter().take(3).map(|m| m.0).collect();
    assert_eq!(first, ["avg_queue", "max_p", "arrival_queue"]);
}

/// DCTCP's step marker as RED (RFC 8257 section 3.1: mark when the queue exceeds K): min_th =
/// max_th = K = 5, w_q = 1 (the average is the queue the arrival finds), the classic curve
/// (at or above max_th is forced), marking for both early and forced decisions. Twelve ECT(0)
/// arrivals back to back find 0, 1, ..., 11 packets: those finding 0-4 pass unmarked, the seven
/// finding 5-11 are all marked (forced marks), whatever max_p (here the default 0.02).
#[test]
fn equal_thresholds_make_a_step_marker() {
    let mut q = red(r#"{"min_th":5,"max_th":5,"w_q":1,"curve":"classic","signal":"mark","forced":"mark"}"#);
    let mut b = Bench::new(1);
    for uid in 0..12 {
        let mut p = packet(uid, 0, 1000);
        p.ecn = ecn::ECT0;
        assert_eq!(b.offer(&mut q, p, ms(0.0), RATE), None);
        assert_eq!(q.average(), uid as f64, "w_q = 1: the queue found");
    }
    let marked: Vec<bool> = (0..12).map(|_| b.take(&mut q, ms(1.0)).unwrap().ecn == ecn::CE).collect();
    assert_eq!(marked, (0..12).map(|k| k >= 5).collect::<Vec<bool>>());
    let s = q.stats();
    assert_eq!((s.forced_mark, s.prob_mark, s.prob_drop, s.forced_drop), (7, 0, 0, 0));
}

/// Nonlinear RED (Zhou, Yeung & Li 2006, section 3.1; ns-3 NLRED): pb = 1.5·max_p·x² with
/// x = (avg − min_th)/(max_th − min_th). min_th 5, max_th 15, max_p 0.1: avg 10 (x = 0.5)
/// gives 1.5·0.1·0.25 = 0.0375 (linear: 0.05); avg 7 (x = 0.2) 1.5·0.1·0.04 = 0.006; at
/// max_th the classic curve forces and the gentle one starts from max_p, as without it. In the
/// qdisc at avg 12 (x = 0.7), count 4, FJ93 spacing: pb = 1.5·0.1·0.49 = 0.0735 and
/// pa = 0.0735/(1 − 4·0.0735) = 0.0735/0.706.
#[test]
fn nonlinear_red_is_quadratic_below_max_th() {
    let r = resolved(5.0, 15.0);
    let nl = |curve, avg| early_probability(curve, true, avg, &r, 0.1);
    assert!((nl(Curve::Classic, 10.0) - 0.0375).abs() < 1e-12);
    assert!((nl(Curve::Classic, 7.0) - 0.006).abs() < 1e-12);
    assert_eq!(nl(Curve::Classic, 15.0), 1.0);
    assert!((nl(Curve::Gentle, 20.0) - 0.4).abs() < 1e-12);
    assert_eq!(
        early_probability(Curve::Classic, false, 10.0, &r, 0.1),
        base_probability(Curve::Classic, 10.0, &r, 0.1)
    );
    let mut q = red(r#"{"min_th":5,"max_th":15,"max_p":0.1,"spacing":"fj93","curve":"classic","nonlinear":true}"#);
    let p = RedParams { resolved: r, ..RedParams::new(&q.cfg, RATE.0 as f64) };
    (q.vars.avg, q.vars.count) = (12.0, 4);
    let pa = q.vars.drop_probability(&p, &packet(0, 0, 1000));
    assert!((pa - 0.0735 / 0.706).abs() < 1e-12, "{pa}");
}

/// Feng's adaptation from ns-3's starting status ("above", `RedQueueDisc::InitializeParams`):
/// the first arrival finds avg 0 < min_th, enters "below" and divides max_p by alpha = 3
/// (0.1 → 0.0333...). From the default "below" nothing changes. The default is not written
/// back when the configuration is serialised, so scenarios written before the key read the same.
#[test]
fn feng_can_start_above_as_ns3_does() {
    for (start, want) in [("above", 0.1 / 3.0), ("below", 0.1)] {
        let json = format!(r#"{{"min_th":5,"max_th":15,"max_p":0.1,"adapt":{{"kind":"feng1999","start":"{start}"}}}}"#);
        let mut q = red(&json);
        let mut b = Bench::new(1);
        b.offer(&mut q, packet(0, 0, 1000), ms(0.0), RATE);
        assert!((q.max_p() - want).abs() < 1e-15, "{start}: {}", q.max_p());
    }
    let written = serde_json::to_string(&red(r#"{"adapt":"feng1999"}"#).cfg).unwrap();
    assert!(!written.contains("start") && !written.contains("nonlinear"), "{written}");
}
