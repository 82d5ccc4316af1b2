//! DCTCP (RFC 8257) at a step-marking switch against the sawtooth analysis of Alizadeh et al.,
//! "Data Center TCP (DCTCP)", SIGCOMM 2010, section 3.3 (refined as a fluid model in
//! "Analysis of DCTCP: Stability, Convergence, and Fairness", SIGMETRICS 2011).
//!
//! The analysis: N long-lived flows with the same RTT share a link of capacity C (packets/s)
//! whose switch marks every arrival that finds more than K packets queued. The flows are
//! synchronized: the queue crosses K when every window is W* = (C·RTT + K)/N, every flow
//! grows one more packet in the RTT before the marks come back, and each reduces once. The
//! marked fraction of a cycle is then α with α²(1 − α/4) = (2W* + 1)/(W* + 1)² (≈ √(2/W*)),
//! each window falls by D = (W* + 1)·α/2 packets, so the queue's sawtooth has amplitude
//! A = N·D (≈ ½·√(2N(C·RTT + K))), peak Q_max = K + N and period T_C = D RTTs; DCTCP's
//! alpha, the moving average of the marked fraction, converges to α.
//!
//! Assumptions the scenarios meet: every flow acknowledges each segment (delayed ACKs off),
//! so windows grow one packet per RTT as in the analysis; the same RTT for all; long-lived
//! flows with large send buffers; K = 65 packets at 10 Gb/s (the paper's setting), above its
//! guideline K > C·RTT/7 = 12 packets for RTT = 100 µs. W* ≫ 1 is needed for the continuous
//! approximation of a window's packets and for α ≪ 1; at N = 40, W* = 3.8: every flow still
//! reduces in the median cycle, the peak and the marked fraction stay within 10 % of the
//! model, and the test asserts the direction in which the amplitude and the reductions leave it.
//!
//! Measurement, per sawtooth cycle (not max − min over a run): a cycle runs from one marking
//! episode's start (the queue rises above K) to the next's (after it has fallen below
//! K − 2); its peak, trough and length are taken from the exact queue record, and the medians
//! compared. alpha is not recorded directly: each ECN reduction records
//! ssthresh = cwnd·(1 − alpha/2) (`cc/dctcp.rs`) of the window the reducing ACK found, so
//! alpha = 2·(1 − ssthresh/cwnd) with the reduction's row (the flow's last at that time: the
//! ACK's own growth is recorded before it) and the flow's window before that time.

mod common;
use common::*;
use serde_json::{json, Value};

const ECN_REDUCTION: u64 = 4; // "ecn_reduction" in quench_core::names::TCP_EVENTS
/// A data packet on the wire: 1460 B of MSS plus 40 B of TCP/IP header.
const PACKET_BITS: f64 = 1500.0 * 8.0;
/// An ACK on the wire.
const ACK_BITS: f64 = 40.0 * 8.0;
const RATE_BPS: f64 = 10e9;
/// The paper's K for 10 Gb/s (SIGCOMM 2010 section 4).
const K: u32 = 65;
/// The scenario's delays: 10 µs on each access link, 30 µs on the bottleneck.
const ACCESS_S: f64 = 10e-6;
const BOTTLENECK_S: f64 = 30e-6;
/// Cycle detection: an episode ends when the queue falls this many packets below K.
const HYSTERESIS: f64 = 2.0;
const SECONDS: f64 = 0.2;
/// Start-up and alpha's convergence from 1 (g = 1/16: (15/16)^100 windows < 0.2 %).
const WARMUP_S: f64 = 0.05;

/// The analysis for N flows: (W*, α, D, A, Q_max) and the square-root forms of α and A.
struct Analysis {
    w_star: f64,
    alpha: f64,
    d: f64,
    amplitude: f64,
    q_max: f64,
    alpha_sqrt: f64,
    amplitude_sqrt: f64,
}

/// The base RTT in packets at C: propagation both ways plus the serialization of a data
/// packet on the two access links and of an ACK on the three links.
fn pipe_packets() -> f64 {
    let rtt = 2.0 * (2.0 * ACCESS_S + BOTTLENECK_S) + 2.0 * PACKET_BITS / RATE_BPS + 3.0 * ACK_BITS / RATE_BPS;
    rtt * RATE_BPS / PACKET_BITS
}

fn analysis(n: usize) -> Analysis {
    let n = n as f64;
    let bdp_k = pipe_packets() + K as f64;
    let w = bdp_k / n;
    // α²(1 − α/4) = (2W* + 1)/(W* + 1)², increasing in α on [0, 1]: bisection.
    let rhs = (2.0 * w + 1.0) / ((w + 1.0) * (w + 1.0));
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if mid * mid * (1.0 - mid / 4.0) < rhs {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let alpha = (lo + hi) / 2.0;
    let d = (w + 1.0) * alpha / 2.0;
    Analysis {
        w_star: w,
        alpha,
        d,
        amplitude: n * d,
        q_max: K as f64 + n,
        alpha_sqrt: (2.0 / w).sqrt(),
        amplitude_sqrt: 0.5 * (2.0 * n * bdp_k).sqrt(),
    }
}

/// N DCTCP flows from N hosts through a 10 Gb/s bottleneck marking above K; every link
/// 10 Gb/s, base RTT 100 µs of propagation.
fn scenario(n: usize) -> Value {
    let red = json!({"kind": "red", "min_th": K, "max_th": K + 1, "max_p": 1.0, "w_q": 1.0,
                     "limit": "1000p", "signal": "mark", "forced": "mark"});
    scenario_with(n, red)
}

/// The step marker DCTCP is deployed with (`qdisc/step.rs`), at the same K and buffer.
fn step_marker() -> Value {
    json!({"kind": "step", "threshold": format!("{K}p"), "limit": "1000p"})
}

/// [`scenario`] with the bottleneck's queue discipline `qdisc`.
fn scenario_with(n: usize, qdisc: Value) -> Value {
    let mut sc = dumbbell(n, "10Gbps", "10us", "10Gbps", "30us", qdisc);
    sc["duration"] = json!(format!("{SECONDS}s"));
    sc["seed"] = json!(1);
    sc["flows"] = (0..n)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": "dctcp",
                   "start": format!("{}us", 13 * i),
                   "tcp": {"ecn": true, "delayed_ack": {"enabled": false},
                           "send_buffer": "16MB", "receive_window": "16MB"}})
        })
        .collect();
    sc["record"] = json!({"queues": true, "cwnd": true, "rtt": false, "drops": false, "monitors": false,
                          "links": ["r1->r2"]});
    sc
}

/// Per-cycle medians and the run's marking statistics.
#[derive(Debug)]
struct Measured {
    cycles: usize,
    amplitude: f64,
    peak: f64,
    trough: f64,
    /// Median cycle length in RTTs (base RTT plus the mean queue's delay).
    period_rtts: f64,
    /// alpha at the ECN reductions after the warm-up, mean over flows and reductions.
    alpha: f64,
    /// Marked over departed packets at the bottleneck, over the whole run.
    mark_fraction: f64,
    /// Median number of distinct flows that reduce in a cycle.
    flows_reducing: f64,
    /// ECN reductions per flow per cycle.
    reductions_per_flow: f64,
    utilization: f64,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn measure(n: usize) -> Measured {
    let r = run(&scenario(n));
    let link = link_row(&r, "r1->r2") as u64;
    let (qt, ql, qp) = (f64s(&r, "queue", "time_s"), u64s(&r, "queue", "link"), u64s(&r, "queue", "packets"));
    let q: Vec<(f64, f64)> =
        (0..qt.len()).filter(|&i| ql[i] == link && qt[i] >= WARMUP_S).map(|i| (qt[i], qp[i] as f64)).collect();
    let k = K as f64;
    let mut starts = vec![];
    let mut armed = true;
    for (i, &(_, p)) in q.iter().enumerate() {
        if armed && p > k {
            starts.push(i);
            armed = false;
        } else if !armed && p < k - HYSTERESIS {
            armed = true;
        }
    }
    let (et, ef, ek) =
        (f64s(&r, "tcp_events", "time_s"), u64s(&r, "tcp_events", "flow"), u64s(&r, "tcp_events", "event"));
    let reductions: Vec<(f64, usize)> =
        (0..et.len()).filter(|&i| ek[i] == ECN_REDUCTION).map(|i| (et[i], ef[i] as usize)).collect();
    let (mut peaks, mut troughs, mut amplitudes, mut periods, mut flows_reducing) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut in_cycles = 0;
    for w in starts.windows(2) {
        let seg = &q[w[0]..w[1]];
        let peak = seg.iter().map(|x| x.1).fold(f64::MIN, f64::max);
        let trough = seg.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        peaks.push(peak);
        troughs.push(trough);
        amplitudes.push(peak - trough);
        let (t0, t1) = (q[w[0]].0, q[w[1]].0);
        periods.push(t1 - t0);
        let mut seen = vec![false; n];
        for &(_, f) in reductions.iter().filter(|(t, _)| (t0..t1).contains(t)) {
            seen[f] = true;
            in_cycles += 1;
        }
        flows_reducing.push(seen.iter().filter(|&&x| x).count() as f64);
    }
    // alpha at each reduction: the reduction's own row is the flow's last at the event's time
    // (the ACK's growth, with the ssthresh of the previous reduction, is recorded before it),
    // and the window it scaled is the one the ACK found, the flow's row before that time.
    let (ct, cf, cw, cs) =
        (f64s(&r, "cwnd", "time_s"), u64s(&r, "cwnd", "flow"), u64s(&r, "cwnd", "cwnd"), u64s(&r, "cwnd", "ssthresh"));
    let mut alphas = vec![];
    let mut previous: Vec<Option<usize>> = vec![None; n];
    let mut next = reductions.iter().peekable();
    for i in 0..ct.len() {
        let f = cf[i] as usize;
        while next.peek().is_some_and(|&&(t, _)| t < ct[i]) {
            next.next();
        }
        if let Some(&&(t, rf)) = next.peek() {
            if t == ct[i] && rf == f {
                next.next();
                if let (Some(p), true) = (previous[f], t >= WARMUP_S) {
                    let own = (i..ct.len()).take_while(|&j| ct[j] == t).filter(|&j| cf[j] as usize == f).last();
                    alphas.push(2.0 * (1.0 - cs[own.unwrap_or(i)] as f64 / cw[p] as f64));
                }
            }
        }
        previous[f] = Some(i);
    }
    let mean_queue = {
        let area: f64 = q.windows(2).map(|w| w[0].1 * (w[1].0 - w[0].0)).sum();
        area / (q[q.len() - 1].0 - q[0].0)
    };
    let rtt = (pipe_packets() + mean_queue) * PACKET_BITS / RATE_BPS;
    Measured {
        cycles: amplitudes.len(),
        amplitude: median(&amplitudes),
        peak: median(&peaks),
        trough: median(&troughs),
        period_rtts: median(&periods) / rtt,
        alpha: mean(&alphas),
        mark_fraction: link_value(&r, "r1->r2", "marked_packets") / link_value(&r, "r1->r2", "departed_packets"),
        flows_reducing: median(&flows_reducing),
        reductions_per_flow: in_cycles as f64 / n as f64 / amplitudes.len() as f64,
        utilization: link_value(&r, "r1->r2", "utilization"),
    }
}

fn report(n: usize) -> (Analysis, Measured) {
    let (a, m) = (analysis(n), measure(n));
    eprintln!(
        "N = {n}: W* {:.1}; amplitude {} (A {:.1}, square-root form {:.1}); peak {} (Q_max {}); trough {}; \
         period {:.2} RTTs (D {:.2}); alpha at reductions {:.3}, marked fraction {:.3} (α {:.3}, √(2/W*) {:.3}); \
         {} cycles, {} flows reduce per cycle, {:.2} reductions per flow per cycle; utilization {:.3}",
        a.w_star,
        m.amplitude,
        a.amplitude,
        a.amplitude_sqrt,
        m.peak,
        a.q_max,
        m.trough,
        m.period_rtts,
        a.d,
        m.alpha,
        m.mark_fraction,
        a.alpha,
        a.alpha_sqrt,
        m.cycles,
        m.flows_reducing,
        m.reductions_per_flow,
        m.utilization
    );
    assert!(m.utilization > 0.99, "utilization {}", m.utilization);
    (a, m)
}

/// Synchronized flows with large windows (W* = 74 and 15 packets): the per-cycle amplitude,
/// peak and marked fraction within 20 % of the analysis, and alpha (sampled at the reductions)
/// within 20 % of the measured marked fraction. Sampled at a reduction, alpha is at the low
/// point of its own cycle (the marked window is folded in just after), about g/2 = 0.03 below
/// its mean.
#[test]
fn the_queue_follows_the_sawtooth_analysis_for_2_and_10_flows() {
    for n in [2, 10] {
        let (a, m) = report(n);
        assert!(m.cycles >= 100, "{} cycles", m.cycles);
        assert_eq!(m.flows_reducing, n as f64, "every flow reduces in every cycle");
        check_rel(&format!("N = {n}: amplitude"), m.amplitude, a.amplitude, 0.20);
        check_rel(&format!("N = {n}: amplitude (square-root form)"), m.amplitude, a.amplitude_sqrt, 0.20);
        check_rel(&format!("N = {n}: peak"), m.peak, a.q_max, 0.20);
        check_rel(&format!("N = {n}: marked fraction"), m.mark_fraction, a.alpha, 0.20);
        check_rel(&format!("N = {n}: alpha against the marked fraction"), m.alpha, m.mark_fraction, 0.20);
    }
}

/// The period: D RTTs when each flow reduces once per cycle (N = 2). With N = 10 some flows
/// reduce twice in a cycle (the queue stays above K for longer than one of their windows), and
/// the cycle is longer than D RTTs.
#[test]
fn the_period_is_d_rtts_when_each_flow_reduces_once() {
    let (a, m) = report(2);
    assert!((m.reductions_per_flow - 1.0).abs() < 0.05, "{} reductions per flow per cycle", m.reductions_per_flow);
    check_rel("N = 2: period in RTTs", m.period_rtts, a.d, 0.20);
    let (a, m) = report(10);
    assert!(m.reductions_per_flow > 1.2, "{} reductions per flow per cycle", m.reductions_per_flow);
    assert!(m.period_rtts > 1.2 * a.d, "period {} RTTs against D = {}", m.period_rtts, a.d);
}

/// Outside the model: 40 flows with W* = 3.8 packets. Every flow reduces in the median cycle, but
/// the queue stays above K for longer than a round trip, so each reduces 2.4 times a cycle,
/// and the amplitude (54) falls below the synchronized prediction (64); the queue still peaks
/// near K + N (103 against 105) and the marked fraction is 6.5 % below α. Every SYN is ECT, as
/// Linux's DCTCP sends it, so the handshakes made while the start-up holds the queue above K
/// are marked rather than dropped, and all 40 flows run.
#[test]
fn forty_flows_reduce_more_than_once_per_cycle_and_the_amplitude_falls_below_the_model() {
    let (a, m) = report(40);
    assert!(a.w_star < 4.0);
    assert_eq!(m.flows_reducing, 40.0, "every flow reduces in every cycle");
    assert!(m.reductions_per_flow > 2.0, "{} reductions per flow per cycle", m.reductions_per_flow);
    assert!(m.amplitude < 0.9 * a.amplitude, "amplitude {} against {}", m.amplitude, a.amplitude);
    check_rel("N = 40: peak", m.peak, a.q_max, 0.10);
    check_rel("N = 40: marked fraction", m.mark_fraction, a.alpha, 0.10);
}

/// RED with w_q = 1 (the instantaneous queue), min_th = K, max_th = K + 1 and max_p = 1, marking
/// in both regions, is the step marker: an arrival that finds K packets has probability
/// (K − min_th)/(max_th − min_th) = 0, one that finds K + 1 or more is in the forced region.
/// The step marker gives the same run, table for table.
#[test]
fn the_step_marker_is_red_with_both_thresholds_at_k() {
    let (red, step) = (run(&scenario(2)), run(&scenario_with(2, step_marker())));
    for table in ["queue", "flows", "cwnd", "tcp_events"] {
        // Debug text, not ==: the tables hold NaN (an unfinished flow's completion), which is not == itself.
        assert_eq!(format!("{:?}", red.table(table)), format!("{:?}", step.table(table)), "table {table}");
    }
    assert_eq!(link_value(&red, "r1->r2", "marked_packets"), link_value(&step, "r1->r2", "marked_packets"));
}

/// DCTCP through the step marker (10 flows, K = 65): the queue oscillates around K (the paper's
/// sawtooth from K − A + N to K + N, section 3.3) without a drop, and the link stays full.
#[test]
fn dctcp_through_the_step_marker_holds_the_queue_near_k_without_drops() {
    let n = 10;
    let r = run(&scenario_with(n, step_marker()));
    let link = link_row(&r, "r1->r2") as u64;
    let (qt, ql, qp) = (f64s(&r, "queue", "time_s"), u64s(&r, "queue", "link"), u64s(&r, "queue", "packets"));
    let q: Vec<f64> = (0..qt.len()).filter(|&i| ql[i] == link && qt[i] >= WARMUP_S).map(|i| qp[i] as f64).collect();
    let a = analysis(n);
    let (lo, hi) = (q.iter().copied().fold(f64::MAX, f64::min), q.iter().copied().fold(f64::MIN, f64::max));
    let mean_q = mean(&q);
    eprintln!(
        "step, N = {n}: queue {lo}..{hi} packets, mean of changes {mean_q:.1} (K {K}, Q_max {}, A {:.1})",
        a.q_max, a.amplitude
    );
    let drops: f64 =
        ["drops_overflow", "drops_early", "drops_forced"].iter().map(|c| link_value(&r, "r1->r2", c)).sum();
    assert_eq!(drops, 0.0, "no drops at the bottleneck");
    assert!(hi <= a.q_max + 5.0, "peak {hi} against K + N = {}", a.q_max);
    assert!(lo >= K as f64 - 2.0 * a.amplitude && lo > 0.0, "trough {lo}: the queue never drains");
    assert!((mean_q - K as f64).abs() < a.amplitude, "mean {mean_q} within one amplitude of K");
    assert!(link_value(&r, "r1->r2", "utilization") > 0.99);
}
