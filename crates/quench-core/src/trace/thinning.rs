//! Thinning of the congestion-window record (`record.cwnd_interval`).
//!
//! A window that changes on every ACK (FAST spreads its increases over the ACKs of an RTT;
//! Reno's congestion avoidance adds a fraction per ACK; a Linux sender in CWR takes a segment
//! off every other ACK) makes "every change" one row per ACK: 1000 s of a 600 Mb/s FAST flow is
//! about 50 million rows and several GB in memory. With an interval, a flow's change is
//! recorded only when `interval` has passed since its last recorded row, except where the
//! window turns: the first decrease after a rise (or after the start) is recorded together
//! with the peak just before it, and at the first increase after a fall the trough just
//! before it is recorded, each at the time its value was set. Every peak and trough of a sawtooth,
//! and the first step of every loss reaction, therefore stay exact; the points inside a
//! monotone ramp, rising or falling, are sampled. Changes that leave the window as it was
//! (a new slow-start threshold alone) turn nothing. A flow has at most one row per interval
//! plus two per fall and one per rise. A flow's rows stay in time order; an extremum written at a turn can
//! follow later rows of other flows.
//! Owns each flow's last recorded time, latest value and direction; it decides which changes
//! become rows and reads no component.

use crate::packet::FlowId;
use crate::units::{Dur, Time};

/// A window value and the slow-start threshold that came with it.
pub type WindowRow = (Time, u64, u64);

#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    /// When the flow's last row was written.
    recorded_at: Option<Time>,
    /// The latest change seen, and whether it has been written.
    last: Option<WindowRow>,
    last_written: bool,
    /// Whether the window's last strict change was a decrease.
    falling: bool,
}

#[derive(Debug)]
pub struct CwndThinning {
    interval: Dur,
    flows: Vec<FlowState>,
}

impl CwndThinning {
    pub fn new(interval: Dur) -> Self {
        CwndThinning { interval, flows: Vec::new() }
    }

    /// The rows to write for a change of `flow`'s window to `cwnd` at `now`: none, the change,
    /// or (where the window turns) the unwritten extremum before it and then, where a fall
    /// starts or the interval has passed, the change.
    pub fn on_change(&mut self, now: Time, flow: FlowId, cwnd: u64, ssthresh: u64) -> [Option<WindowRow>; 2] {
        let i = flow.index();
        if i >= self.flows.len() {
            self.flows.resize(i + 1, FlowState::default());
        }
        let s = &mut self.flows[i];
        let row = (now, cwnd, ssthresh);
        let before_cwnd = s.last.map(|(_, before, _)| before);
        let decrease = before_cwnd.is_some_and(|before| cwnd < before);
        let increase = before_cwnd.is_some_and(|before| cwnd > before);
        let fall_starts = decrease && !s.falling;
        let rise_starts = increase && s.falling;
        if decrease || increase {
            s.falling = decrease;
        }
        let due = s.recorded_at.is_none_or(|t| now - t >= self.interval);
        let extremum = s.last.filter(|_| (fall_starts || rise_starts) && !s.last_written);
        let change = (fall_starts || due).then_some(row);
        s.last = Some(row);
        s.last_written = change.is_some();
        if let Some((at, _, _)) = change.or(extremum) {
            s.recorded_at = Some(at);
        }
        [extremum, change]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time(v * 1_000_000)
    }

    /// Hand trace: a ramp sampled every 10 ms, a decrease written with its unwritten peak.
    #[test]
    fn samples_ramps_and_keeps_a_loss_step_with_its_peak() {
        let mut t = CwndThinning::new(Dur::from_millis(10));
        let f = FlowId(0);
        let mut out = vec![];
        for (at, w) in [(0, 10), (4, 11), (8, 12), (10, 13), (15, 14), (19, 15), (20, 7), (22, 8), (31, 9)] {
            out.extend(t.on_change(ms(at), f, w, 100).into_iter().flatten().map(|(time, w, _)| (time, w)));
        }
        let expect = [(0, 10), (10, 13), (19, 15), (20, 7), (31, 9)];
        assert_eq!(out, expect.map(|(at, w)| (ms(at), w)));
    }

    /// Hand trace: a fall one step at a time (a Linux sender in CWR) is sampled like a ramp;
    /// its peak, its first step and its trough stay exact, and a new threshold alone turns
    /// nothing.
    #[test]
    fn a_gradual_fall_keeps_its_peak_first_step_and_trough() {
        let mut t = CwndThinning::new(Dur::from_millis(10));
        let f = FlowId(0);
        let mut out = vec![];
        let trace = [
            (0, 20, 100),
            (1, 21, 100),
            (2, 22, 100),
            (3, 21, 11),
            (4, 21, 11),
            (5, 19, 11),
            (9, 15, 11),
            (13, 11, 11),
            (14, 10, 11),
            (15, 12, 11),
            (20, 13, 11),
            (24, 14, 11),
        ];
        for (at, w, ssthresh) in trace {
            out.extend(t.on_change(ms(at), f, w, ssthresh).into_iter().flatten().map(|(time, w, _)| (time, w)));
        }
        let expect = [(0, 20), (2, 22), (3, 21), (13, 11), (14, 10), (24, 14)];
        assert_eq!(out, expect.map(|(at, w)| (ms(at), w)));
    }

    /// A written peak is not written twice; flows are thinned independently.
    #[test]
    fn flows_are_independent_and_peaks_are_not_repeated() {
        let mut t = CwndThinning::new(Dur::from_millis(10));
        let (a, b) = (FlowId(0), FlowId(3));
        assert_eq!(t.on_change(ms(0), a, 10, 1), [None, Some((ms(0), 10, 1))]);
        assert_eq!(t.on_change(ms(1), b, 20, 1), [None, Some((ms(1), 20, 1))]);
        assert_eq!(t.on_change(ms(12), a, 12, 1), [None, Some((ms(12), 12, 1))]);
        assert_eq!(t.on_change(ms(13), a, 6, 6), [None, Some((ms(13), 6, 6))], "peak already written");
        assert_eq!(t.on_change(ms(5), b, 21, 1), [None, None]);
    }
}
