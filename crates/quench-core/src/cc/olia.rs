//! OLIA, the Opportunistic Linked Increases Algorithm of Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution" (CoNEXT 2012,
//! section 4): a multipath connection's coupled congestion control that, unlike LIA, moves
//! its traffic to the best paths without taking more than TCP would on them.
//!
//! Each subflow keeps its own window; slow start and the halving on loss are its own, as
//! NewReno's. In congestion avoidance an ACK on subflow r grows its window (in segments) by
//! `(w_r / rtt_r²) / (Σ_p w_p / rtt_p)² + α_r / w_r`, where, with n subflows, M the subflows
//! of the largest window and B those of the best `l_p² / rtt_p` (l_p the bytes delivered
//! between losses, the larger of those since the last loss and between the last two, as the
//! paper's implementation section and Linux's `mptcp_olia.c` estimate it), `α_r` is
//! `1 / (n · |B \ M|)` on a subflow of B \ M (a best path without the largest window),
//! `−1 / (n · |M|)` on a subflow of M when B \ M is not empty, and 0 otherwise. In bytes, with
//! windows W = w · MSS and one segment counted per ACK (as `lia.rs` counts, and Reno), the
//! increase is `MSS² · ((W_r / rtt_r²) / (Σ_p W_p / rtt_p)² + α_r / W_r)`; one subflow alone
//! (α = 0) grows as NewReno.
//!
//! The windows and RTTs come from the connection's [`Coupling`]; each subflow's controller
//! writes its own loss intervals there. Not a subflow (`cc = "olia"` on a TCP flow): NewReno.
//! Must not touch: the sender; it sees only the window, the samples and the coupling.

use super::lia::{Coupling, LiaConfig, SubflowWindow};
use super::reno::AimdParams;
use super::{half_flight, AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;

/// OLIA's parameters are LIA's: the initial window and slow start's byte-counting limit.
pub type OliaConfig = LiaConfig;

/// The subflows that count: established, with an RTT sample.
fn counted(windows: &[SubflowWindow]) -> impl Iterator<Item = (usize, f64, f64)> + '_ {
    windows.iter().enumerate().filter_map(|(i, w)| match w.srtt {
        Some(r) if w.cwnd > 0 && !r.is_zero() => Some((i, w.cwnd as f64, r.as_secs_f64())),
        _ => None,
    })
}

/// `α_r` of subflow `me` among `windows` with bytes between losses `loss_intervals`.
/// Passes over the counted subflows rather than a collected list: it runs on every ACK.
pub fn alpha(windows: &[SubflowWindow], loss_intervals: &[u64], me: usize) -> f64 {
    let paths = || counted(windows);
    let n = paths().count() as f64;
    let largest = paths().map(|p| p.1).fold(0.0, f64::max);
    let score = |&(i, _, rtt): &(usize, f64, f64)| (loss_intervals[i] as f64).powi(2) / rtt;
    let best = paths().map(|p| score(&p)).fold(0.0, f64::max);
    let in_m = |p: &(usize, f64, f64)| p.1 == largest;
    // The best paths outside the largest windows (the paper's set B \ M): how many, and me among them?
    let (collected, me_collected) = paths()
        .filter(|p| score(p) == best && !in_m(p))
        .fold((0usize, false), |(c, mine), p| (c + 1, mine || p.0 == me));
    let m = paths().filter(|p| in_m(p)).count() as f64;
    if me_collected {
        1.0 / (n * collected as f64)
    } else if collected > 0 && paths().any(|p| p.0 == me && in_m(&p)) {
        -1.0 / (n * m)
    } else {
        0.0
    }
}

/// The per-ACK change of subflow `me`'s window in bytes (negative when α_r outweighs the
/// coupled term).
pub fn increase(windows: &[SubflowWindow], me: usize, alpha_r: f64, mss: u64) -> f64 {
    let sum: f64 = counted(windows).map(|(_, w, rtt)| w / rtt).sum();
    let Some((_, w, rtt)) = counted(windows).find(|p| p.0 == me) else { return 0.0 };
    let mss = mss as f64;
    mss * mss * ((w / (rtt * rtt)) / (sum * sum) + alpha_r / w)
}

pub struct Olia {
    params: AimdParams,
    /// The connection's coupling and this subflow's index in it; None for a single-path flow.
    coupling: Option<(Coupling, usize)>,
    /// The fraction of a byte (either sign) the changes have accumulated.
    carry: f64,
    /// Bytes acknowledged since the last loss (l1) and between the last two losses (l2).
    since_loss: u64,
    between_losses: u64,
    /// The connection's windows and bytes between losses as this ACK sees them, kept between
    /// ACKs for their room.
    windows: Vec<SubflowWindow>,
    loss_intervals: Vec<u64>,
}

impl Olia {
    pub fn new(cfg: &OliaConfig) -> Result<Self, ConfigError> {
        let params = AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?;
        let (windows, loss_intervals) = (Vec::new(), Vec::new());
        Ok(Olia { params, coupling: None, carry: 0.0, since_loss: 0, between_losses: 0, windows, loss_intervals })
    }

    /// Subflow `index` of the connection whose windows `coupling` holds.
    pub fn coupled(cfg: &OliaConfig, coupling: Coupling, index: usize) -> Result<Self, ConfigError> {
        Ok(Olia { coupling: Some((coupling, index)), ..Olia::new(cfg)? })
    }

    fn publish_loss_interval(&self) {
        if let Some((c, me)) = &self.coupling {
            c.set_loss_interval(*me, self.since_loss.max(self.between_losses));
        }
    }

    fn avoidance_change(&mut self, w: &Window, s: &AckSample) -> f64 {
        let Some((coupling, me)) = &self.coupling else {
            return (w.mss * w.mss) as f64 / w.cwnd as f64; // NewReno's per-ACK increase
        };
        coupling.windows_into(&mut self.windows);
        coupling.loss_intervals_into(&mut self.loss_intervals);
        self.windows[*me] = SubflowWindow { cwnd: w.cwnd, srtt: s.srtt };
        let a = alpha(&self.windows, &self.loss_intervals, *me);
        increase(&self.windows, *me, a, w.mss)
    }
}

impl CongestionControl for Olia {
    fn capabilities(&self) -> Capabilities {
        Capabilities::window(Recovery::NewReno)
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.since_loss += s.acked;
        self.publish_loss_interval();
        if w.cwnd < w.ssthresh {
            w.cwnd += self.params.slow_start_increase(w, s.acked);
            return AckResponse::default();
        }
        let change = self.avoidance_change(w, s);
        self.carry += change;
        let whole = self.carry.trunc();
        self.carry -= whole;
        w.cwnd = (w.cwnd as i64 + whole as i64).max(w.mss as i64) as u64;
        AckResponse::default()
    }
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        self.between_losses = self.since_loss;
        self.since_loss = 0;
        self.publish_loss_interval();
        half_flight(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    fn sub(cwnd: u64, rtt_ms: u64) -> SubflowWindow {
        SubflowWindow { cwnd, srtt: Some(Dur::from_millis(rtt_ms)) }
    }

    /// Two subflows, MSS 1460: 0 with 14600 B at 10 ms and 300,000 B between losses, 1 with
    /// 29200 B at 40 ms and 400,000 B. M = {1} (the larger window). l²/rtt: 9e10 / 0.01 = 9e12
    /// against 1.6e11 / 0.04 = 4e12, so B = {0} and B \ M = {0}: α_0 = 1/(2·1) = 1/2,
    /// α_1 = −1/(2·1) = −1/2. Σ W/rtt = 1.46e6 + 7.3e5 = 2.19e6, squared 4.7961e12.
    /// Subflow 0: 1460² · (1.46e8 / 4.7961e12 + 0.5 / 14600) = 2131600 · (3.04414e-5 +
    /// 3.42466e-5) = 137.89 B. Subflow 1: 2131600 · (1.82500e7 / 4.7961e12 − 0.5 / 29200) =
    /// 2131600 · (3.80518e-6 − 1.71233e-5) = −28.39 B: traffic moves to the better path.
    #[test]
    fn alpha_and_increase_by_hand() {
        let windows = [sub(14_600, 10), sub(29_200, 40)];
        let l = [300_000, 400_000];
        assert_eq!((alpha(&windows, &l, 0), alpha(&windows, &l, 1)), (0.5, -0.5));
        let up = 2_131_600.0 * (1.46e8 / 4.7961e12 + 0.5 / 14_600.0);
        let down = 2_131_600.0 * (1.825e7 / 4.7961e12 - 0.5 / 29_200.0);
        assert!((increase(&windows, 0, 0.5, 1460) - up).abs() < 1e-9 && (up - 137.89).abs() < 0.01);
        assert!((increase(&windows, 1, -0.5, 1460) - down).abs() < 1e-9 && (down + 28.39).abs() < 0.01);
        // The larger window also the best path: B \ M is empty, every α is 0.
        let l = [100_000, 400_000];
        assert_eq!((alpha(&windows, &l, 0), alpha(&windows, &l, 1)), (0.0, 0.0));
    }

    /// One subflow alone: α = 0 and the increase is NewReno's MSS²/W.
    #[test]
    fn one_subflow_is_newreno() {
        let windows = [sub(14_600, 10)];
        assert_eq!(alpha(&windows, &[5000], 0), 0.0);
        assert!((increase(&windows, 0, 0.0, 1460) - 146.0).abs() < 1e-9);
    }

    /// A loss moves the bytes since the last loss to "between the last two", published as
    /// the larger of the two.
    #[test]
    fn losses_publish_the_loss_interval() {
        let coupling = Coupling::new(1);
        let mut olia = Olia::coupled(&OliaConfig::default(), coupling.clone(), 0).unwrap();
        let mut w = Window { cwnd: 10_000, ssthresh: 5000, mss: 1000, flight: 10_000, peer_window: u64::MAX };
        let ack = AckSample { acked: 1000, srtt: Some(Dur::from_millis(10)), ..AckSample::default() };
        for _ in 0..5 {
            olia.on_ack(&mut w, &ack);
        }
        assert_eq!(coupling.loss_intervals(), vec![5000]);
        assert_eq!(olia.on_congestion(&w, Signal::DupAcks), 5000);
        olia.on_ack(&mut w, &ack);
        assert_eq!(coupling.loss_intervals(), vec![5000], "max(1000, 5000)");
    }
}
