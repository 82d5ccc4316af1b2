//! A model-based controller's own clock (`Capabilities::own_clock`, DCQCN's rate timers):
//! after each of the controller's answers the sender asks when its clock next changes what it
//! sets, and arms the `Controller` timer for then; at the timer the controller acts without an
//! ACK, and a new pacing rate moves the next departure at once (`RatePacer::reschedule`).
//! Without it a controller that cut its rate to a crawl would learn of its own recovery only
//! at the next ACK, which its crawl delays.
//!
//! Part of `TcpSender`: it owns no state of its own; it drives the controller, the rate pacer
//! and the `Controller` and `Burst` timers.

use super::super::TcpTimer;
use super::{State, TcpSender};
use crate::cc::CongestionControl;
use crate::transport::{AgentCx, Host};

impl TcpSender {
    /// Arm the controller's clock for its next change, if it has one and the connection has
    /// data to send by it; a closed connection's clock stops, so that it can be reclaimed.
    pub(super) fn arm_controller_clock(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.timing.controller_clock {
            return;
        }
        match self.cc.wake_at().filter(|_| self.send.state == State::Established) {
            Some(at) => self.timers.arm(TcpTimer::Controller, at.max(cx.now), cx),
            None => self.timers.cancel(TcpTimer::Controller),
        }
    }

    /// The controller's clock came due: its new rate moves the next departure, and what the
    /// window and the pacing then allow goes.
    pub(super) fn on_controller_clock(&mut self, cx: &mut AgentCx<impl Host>) {
        let out = self.cc.on_wake(&mut self.w, cx.now);
        // A clock of its own comes only with rate samples (`RttTiming::controller_clock`).
        let model = self.pacing.model.as_mut().expect("a controller with its own clock has rate samples");
        model.pacer.reschedule(out.pacing_rate);
        self.w.cwnd = self.w.cwnd.min(self.cfg.send_buffer.0.max(self.w.mss));
        self.record_window(cx);
        if let Some(at) = self.pacing.model_pacer().and_then(|p| p.hold_until(cx.now)) {
            // The held send's wake-up follows the departure the new rate set.
            if self.timers.is_armed(TcpTimer::Burst) {
                self.timers.arm(TcpTimer::Burst, at, cx);
            }
        }
        self.output(cx);
        self.arm_controller_clock(cx);
    }
}
