//! LIA, the Linked Increases Algorithm of RFC 6356 (Raiciu, Handley, Wischik): the coupled
//! congestion control of a multipath TCP connection's subflows (`transport/mptcp.rs`).
//!
//! Each subflow keeps its own window. Slow start and the decrease on loss are each subflow's
//! own, as NewReno's (RFC 6356 section 3: "cwnd_i = cwnd_i / 2" on loss). In congestion
//! avoidance an ACK on subflow i grows its window by
//! `min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i / cwnd_i)` (section 3,
//! equation 1), where `alpha = cwnd_total * max_i(cwnd_i / rtt_i²) / (sum_i cwnd_i / rtt_i)²`
//! (section 3, equation 2): together the subflows take no more than one TCP would on the best
//! of their paths (goal 1, "improve throughput"; goal 2, "do no harm"), and move traffic away
//! from the congested paths (goal 3, "balance congestion").
//!
//! `bytes_acked` is counted up to one segment per ACK, as this crate's Reno counts congestion
//! avoidance (`aimd_growth`, one MSS²/cwnd per ACK) and as Linux's `mptcp_coupled.c` counts ACKs,
//! so that the second term is exactly Reno's increase: a connection of one subflow is NewReno.
//!
//! The subflows' windows and smoothed RTTs are shared through a [`Coupling`], written by the
//! connection after each of its subflows acts, read here. A LIA flow that is not a subflow
//! (`cc = "lia"` on a plain TCP flow) has no coupling and is NewReno.
//! Must not touch: the sender; it sees only the window, the samples and the coupling.

use super::reno::AimdParams;
use super::{half_flight, AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::Dur;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiaConfig {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in slow start, in segments (RFC 3465).
    pub abc_limit: Option<u64>,
}

/// One subflow's window and smoothed RTT, as the coupling holds them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowWindow {
    /// Congestion window in bytes; 0 before the subflow is established (it then counts nowhere).
    pub cwnd: u64,
    /// Smoothed RTT; None before a sample (the subflow then counts in cwnd_total only).
    pub srtt: Option<Dur>,
}

/// What one connection's subflows share: their windows and smoothed RTTs (written by the
/// connection after each subflow acts) and, for OLIA, each one's bytes between losses
/// (written by its controller). The run is single-threaded, so the lock is never contended
/// (`Send`: the Python extension runs a world with the GIL released).
#[derive(Clone, Debug, Default)]
pub struct Coupling(Arc<Mutex<Shared>>);

#[derive(Clone, Debug, Default)]
struct Shared {
    windows: Vec<SubflowWindow>,
    loss_intervals: Vec<u64>,
}

impl Coupling {
    pub fn new(subflows: usize) -> Self {
        let shared = Shared { windows: vec![SubflowWindow::default(); subflows], loss_intervals: vec![0; subflows] };
        Coupling(Arc::new(Mutex::new(shared)))
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.0.lock().expect("never poisoned: the run is single-threaded")
    }
    /// Record subflow `i`'s window and smoothed RTT.
    pub fn set(&self, i: usize, w: SubflowWindow) {
        self.lock().windows[i] = w;
    }
    /// Record subflow `i`'s bytes between losses (OLIA's l_i).
    pub fn set_loss_interval(&self, i: usize, bytes: u64) {
        self.lock().loss_intervals[i] = bytes;
    }
    /// The subflows' windows, copied into `into` (its room reused: no allocation per ACK).
    pub fn windows_into(&self, into: &mut Vec<SubflowWindow>) {
        into.clone_from(&self.lock().windows);
    }
    /// The subflows' bytes between losses, copied into `into` (its room reused).
    pub fn loss_intervals_into(&self, into: &mut Vec<u64>) {
        into.clone_from(&self.lock().loss_intervals);
    }
    #[cfg(test)]
    pub fn loss_intervals(&self) -> Vec<u64> {
        self.lock().loss_intervals.clone()
    }
}

/// RFC 6356 equation 2: `alpha = cwnd_total * max_i(cwnd_i / rtt_i²) / (sum_i cwnd_i / rtt_i)²`
/// over the subflows with an RTT sample (windows in bytes, RTTs in seconds); `cwnd_total`
/// counts every subflow's window. 1 when no subflow has a sample yet (one TCP's increase).
pub fn alpha(subflows: &[SubflowWindow]) -> f64 {
    let total: f64 = subflows.iter().map(|s| s.cwnd as f64).sum();
    let timed = subflows.iter().filter_map(|s| s.srtt.map(|r| (s.cwnd as f64, r.as_secs_f64())));
    let (mut best, mut sum) = (0.0f64, 0.0f64);
    for (cwnd, rtt) in timed.filter(|&(c, r)| c > 0.0 && r > 0.0) {
        best = best.max(cwnd / (rtt * rtt));
        sum += cwnd / rtt;
    }
    if sum == 0.0 {
        return 1.0;
    }
    total * best / (sum * sum)
}

/// RFC 6356 equation 1: the increase of subflow i's window, in bytes, for `acked` bytes.
pub fn increase(alpha: f64, acked: u64, mss: u64, cwnd_i: u64, cwnd_total: u64) -> f64 {
    let a = acked as f64 * mss as f64;
    (alpha * a / cwnd_total as f64).min(a / cwnd_i as f64)
}

pub struct Lia {
    params: AimdParams,
    /// The connection's coupling and this subflow's index in it; None for a single-path flow.
    coupling: Option<(Coupling, usize)>,
    /// The fraction of a byte the increases have accumulated (windows are whole bytes).
    carry: f64,
    /// The connection's windows as this ACK sees them, kept between ACKs for its room.
    windows: Vec<SubflowWindow>,
}

impl Lia {
    pub fn new(cfg: &LiaConfig) -> Result<Self, ConfigError> {
        Ok(Lia {
            params: AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?,
            coupling: None,
            carry: 0.0,
            windows: Vec::new(),
        })
    }

    /// Subflow `index` of the connection whose windows `coupling` holds.
    pub fn coupled(cfg: &LiaConfig, coupling: Coupling, index: usize) -> Result<Self, ConfigError> {
        Ok(Lia { coupling: Some((coupling, index)), ..Lia::new(cfg)? })
    }

    /// Congestion avoidance's increase for one ACK of `acked` bytes on a window of `w`.
    fn avoidance_increase(&mut self, w: &Window, acked: u64, srtt: Option<Dur>) -> f64 {
        let acked = acked.min(w.mss);
        let Some((coupling, me)) = &self.coupling else {
            return increase(1.0, acked, w.mss, w.cwnd, w.cwnd);
        };
        coupling.windows_into(&mut self.windows);
        self.windows[*me] = SubflowWindow { cwnd: w.cwnd, srtt };
        let total = self.windows.iter().map(|s| s.cwnd).sum::<u64>();
        increase(alpha(&self.windows), acked, w.mss, w.cwnd, total)
    }
}

impl CongestionControl for Lia {
    fn capabilities(&self) -> Capabilities {
        Capabilities::window(Recovery::NewReno)
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        if w.cwnd < w.ssthresh {
            w.cwnd += self.params.slow_start_increase(w, s.acked);
            return AckResponse::default();
        }
        let increase = self.avoidance_increase(w, s.acked, s.srtt);
        self.carry += increase;
        let whole = self.carry.floor();
        w.cwnd += whole as u64;
        self.carry -= whole;
        AckResponse::default()
    }
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        half_flight(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(cwnd_segments: u64, rtt_ms: u64) -> SubflowWindow {
        SubflowWindow { cwnd: cwnd_segments * 1000, srtt: Some(Dur::from_millis(rtt_ms)) }
    }

    /// Two subflows: 10 segments at 10 ms and 20 segments at 40 ms (MSS 1000 bytes).
    /// cwnd_total = 30000; cwnd_i/rtt_i² = 10000/0.0001 = 1e8 and 20000/0.0016 = 1.25e7, max 1e8;
    /// sum cwnd_i/rtt_i = 10000/0.01 + 20000/0.04 = 1e6 + 5e5 = 1.5e6, squared 2.25e12;
    /// alpha = 30000 * 1e8 / 2.25e12 = 4/3.
    #[test]
    fn alpha_of_two_subflows_by_hand() {
        let a = alpha(&[sub(10, 10), sub(20, 40)]);
        assert!((a - 4.0 / 3.0).abs() < 1e-12, "{a}");
    }

    /// Equal paths: n subflows of the same window and RTT give alpha = 1/n, and the per-ACK
    /// increase alpha*MSS²/cwnd_total = MSS²/(n²·cwnd_i): the n together grow as one TCP.
    #[test]
    fn equal_paths_alpha_is_one_over_n() {
        for n in 1..=8 {
            let a = alpha(&vec![sub(10, 20); n]);
            assert!((a - 1.0 / n as f64).abs() < 1e-12, "n={n}: {a}");
        }
    }

    /// The per-ACK increase on subflow 1 of the pair above (cwnd_i = 20000): the coupled term
    /// 4/3 * 1000 * 1000 / 30000 = 44.44 bytes, the uncoupled 1000 * 1000 / 20000 = 50; the
    /// minimum, 44.44. On subflow 0 (cwnd_i = 10000) the uncoupled term is 100: 44.44 again.
    #[test]
    fn increase_is_the_smaller_term() {
        let a = 4.0 / 3.0;
        assert!((increase(a, 1000, 1000, 20_000, 30_000) - 400.0 / 9.0).abs() < 1e-9);
        assert!((increase(a, 1000, 1000, 10_000, 30_000) - 400.0 / 9.0).abs() < 1e-9);
        // A large alpha is capped by what one TCP on the subflow would do.
        assert!((increase(10.0, 1000, 1000, 20_000, 30_000) - 50.0).abs() < 1e-9);
    }

    /// The controller, coupled, applies the closed form per ACK (fractions of a byte carried);
    /// an ACK of two segments counts one (Reno's per-ACK increase). With subflow 0 at 10
    /// segments and 10 ms, the increase alpha*MSS²/cwnd_total is MSS²·1e8/(Σ cwnd_i/rtt_i)²:
    /// first ACK (cwnd_1 = 20000): 1e14/1.5e6² = 44.444, cwnd 20044, carry 0.444;
    /// second (cwnd_1 = 20044): Σ = 1e6 + 20044/0.04 = 1501100, 1e14/1501100² = 44.379, with
    /// the carry 44.823: cwnd 20088.
    #[test]
    fn coupled_controller_grows_by_the_closed_form() {
        let coupling = Coupling::new(2);
        coupling.set(0, sub(10, 10));
        let mut lia = Lia::coupled(&LiaConfig::default(), coupling, 1).unwrap();
        let mut w = Window { cwnd: 20_000, ssthresh: 10_000, mss: 1000, flight: 0, peer_window: u64::MAX };
        let ack = AckSample { acked: 2000, srtt: Some(Dur::from_millis(40)), ..AckSample::default() };
        lia.on_ack(&mut w, &ack);
        assert_eq!(w.cwnd, 20_044);
        lia.on_ack(&mut w, &ack);
        assert_eq!(w.cwnd, 20_088);
    }

    /// Uncoupled (a single-path flow), LIA grows as Reno: one MSS²/cwnd per ACK.
    #[test]
    fn single_path_lia_is_reno() {
        let mut lia = Lia::new(&LiaConfig::default()).unwrap();
        let mut w = Window { cwnd: 10_000, ssthresh: 5000, mss: 1000, flight: 0, peer_window: u64::MAX };
        let ack = AckSample { acked: 1000, ..AckSample::default() };
        lia.on_ack(&mut w, &ack);
        assert_eq!(w.cwnd, 10_100);
    }
}
