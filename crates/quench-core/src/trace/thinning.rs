//! Thinning of the congestion-window record (`record.cwnd_interval`).
//!
//! A window that changes on every ACK (FAST spreads its increases over the ACKs of an RTT;
//! Reno's congestion avoidance adds a fraction per ACK) makes "every change" one row per ACK:
//! 1000 s of a 600 Mb/s FAST flow is about 50 million rows and several GB in memory. With an
//! interval, a flow's change is recorded only when `interval` has passed since its last
//! recorded row, except that every decrease is recorded together with the value just before
//! it (at the time that value was set). Peaks and troughs of a sawtooth, and every loss
//! reaction, therefore stay exact; only the points on a rising ramp are sampled. A flow's rows
//! stay in time order; a peak written at its decrease can follow later rows of other flows.
//! Owns each flow's last recorded time and latest value; it decides which changes become rows and
//! reads no component.

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
    /// or (on a decrease) the unwritten value before it and then the change.
    pub fn on_change(&mut self, now: Time, flow: FlowId, cwnd: u64, ssthresh: u64) -> [Option<WindowRow>; 2] {
        let i = flow.index();
        if i >= self.flows.len() {
            self.flows.resize(i + 1, FlowState::default());
        }
        let s = &mut self.flows[i];
        let row = (now, cwnd, ssthresh);
        let decrease = s.last.is_some_and(|(_, before, _)| cwnd < before);
        let due = s.recorded_at.is_none_or(|t| now - t >= self.interval);
        let before = s.last.filter(|_| decrease && !s.last_written);
        s.last = Some(row);
        s.last_written = decrease || due;
        if !s.last_written {
            return [None, None];
        }
        s.recorded_at = Some(now);
        [before, Some(row)]
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
    fn samples_ramps_and_keeps_every_decrease_with_its_peak() {
        let mut t = CwndThinning::new(Dur::from_millis(10));
        let f = FlowId(0);
        let mut out = vec![];
        for (at, w) in [(0, 10), (4, 11), (8, 12), (10, 13), (15, 14), (19, 15), (20, 7), (22, 8), (31, 9)] {
            out.extend(t.on_change(ms(at), f, w, 100).into_iter().flatten().map(|(time, w, _)| (time, w)));
        }
        let expect = [(0, 10), (10, 13), (19, 15), (20, 7), (31, 9)];
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
