//! The sending end of a PCP connection: handshake, paced transmission at the base rate,
//! probes, rate compensation, history and loss recovery (see `mod.rs` for the mechanism).
//! Owns the connection's sending state. It acts only through its `AgentCx`, never on the world or
//! the receiver; the one state it shares is its host's history table (`history.rs`).

use super::compensation::{Compensator, Policy};
use super::config::PcpConfig;
use super::history::SharedHistory;
use super::probe::{judge, probe_len, Probe, Search, Verdict};
use super::scoreboard::Scoreboard;
use super::{FIRST_DATA_SEQ, TIMER_PACE, TIMER_PROBE, TIMER_RTO};
use crate::packet::{tcp_flags, NodeId, Packet};
use crate::rng::Rng;
use crate::transport::tcp::{Connection, RttEstimator, HEADERS};
use crate::transport::{AgentCx, Endpoint, Host, SendCounts, Timer, TimerSlot};
use crate::units::{BitRate, Bytes, Dur, Time};

#[derive(Clone, Debug, Default)]
pub struct PcpSenderStats {
    /// Segments, bytes, retransmissions, timeouts and RTT samples, as every transfer counts them.
    pub sent: SendCounts,
    pub probes: u64,
    pub probes_accepted: u64,
    pub probes_rejected: u64,
    /// When the last byte was acknowledged.
    pub completed: Option<Time>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Closed,
    SynSent,
    Open,
    Done,
}

pub struct PcpSender {
    conn: Connection,
    cfg: PcpConfig,
    phase: Phase,
    board: Scoreboard,
    rtt: RttEstimator,
    rto: TimerSlot,
    pace: TimerSlot,
    probe_timer: TimerSlot,
    base: BitRate,
    next_send: Time,
    last_sent: Option<Time>,
    min_owd: Option<Dur>,
    /// Until when, and by what factor, the base rate is lowered to drain a standing queue.
    drain: Option<(Time, f64)>,
    peer_window: u64,
    search: Search,
    probe: Option<Probe>,
    /// The next probe's increment came from the host's history.
    history_probe_pending: bool,
    comp: Compensator,
    history: Option<SharedHistory>,
    /// Probe jitter (the only random choice).
    rng: Rng,
    pub stats: PcpSenderStats,
}

impl PcpSender {
    pub fn new(conn: Connection, cfg: PcpConfig, bytes: Option<u64>, history: Option<SharedHistory>, rng: Rng) -> Self {
        PcpSender {
            conn,
            board: Scoreboard::new(cfg.mss, FIRST_DATA_SEQ, bytes, cfg.reorder_threshold),
            rtt: RttEstimator::new(cfg.rto.clone()),
            peer_window: cfg.receive_window.0,
            cfg,
            phase: Phase::Closed,
            rto: TimerSlot::default(),
            pace: TimerSlot::default(),
            probe_timer: TimerSlot::default(),
            base: BitRate(0),
            next_send: Time::ZERO,
            last_sent: None,
            min_owd: None,
            drain: None,
            search: Search::new(BitRate(0), Time::ZERO),
            probe: None,
            history_probe_pending: false,
            comp: Compensator::default(),
            history,
            rng,
            stats: PcpSenderStats::default(),
        }
    }

    pub fn base_rate(&self) -> BitRate {
        self.base
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    pub fn compensations(&self) -> u64 {
        self.comp.compensations
    }

    fn full_packet(&self) -> Bytes {
        Bytes((self.cfg.mss + HEADERS) as u64)
    }
    fn rtt_now(&self) -> Dur {
        self.rtt.srtt().unwrap_or(self.cfg.rto.initial)
    }
    /// `packets` full-sized packets per smoothed RTT, as a rate.
    fn per_rtt(&self, packets: f64) -> BitRate {
        BitRate((packets * self.full_packet().0 as f64 * 8.0 / self.rtt_now().as_secs_f64()) as u64)
    }

    fn send_syn(&mut self, cx: &mut AgentCx<impl Host>) {
        cx.send(self.conn.segment(0, 0, 0, tcp_flags::SYN, self.cfg.receive_window.0));
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, 0, 0, false, self.stats.sent.segments_sent > 0);
        let at = cx.now + self.rtt.rto();
        self.rto.arm(TIMER_RTO, at, cx);
    }

    /// The SYN-ACK: the first RTT sample; the first probe asks for history's share of the last
    /// base rate, or one packet per half RTT (paper section 3.3).
    fn on_syn_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.sample_rtt(cx.now - Time(pkt.seq), cx);
        self.phase = Phase::Open;
        self.peer_window = pkt.window as u64;
        self.rto.cancel();
        let remembered =
            self.history.as_ref().and_then(|h| h.lock().expect("history lock").initial_probe(self.conn.remote));
        self.history_probe_pending = remembered.is_some();
        if self.cfg.history_owd {
            self.min_owd =
                self.history.as_ref().and_then(|h| h.lock().expect("history lock").min_owd(self.conn.remote));
        }
        let first = remembered.unwrap_or_else(|| self.per_rtt(INITIAL_PROBE_PACKETS_PER_RTT));
        self.search = Search::new(first.max(self.per_rtt(self.cfg.min_increment)), cx.now);
        self.comp = Compensator::new(cx.now);
        self.pump(cx);
    }

    fn sample_rtt(&mut self, m: Dur, cx: &mut AgentCx<impl Host>) {
        self.rtt.sample(m);
        self.stats.sent.rtt_sample(m);
        let srtt = self.rtt.srtt().unwrap_or(m);
        let now = cx.now;
        cx.rec().rtt(now, self.conn.flow, m, srtt, self.rtt.rto());
    }

    fn on_ack(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        let echo = Time(pkt.seq);
        let owd = pkt.sent_at - echo;
        self.sample_rtt(cx.now - echo, cx);
        let min_owd = match self.min_owd {
            Some(m) if m <= owd => m,
            _ => self.lower_min_owd(owd),
        };
        self.peer_window = pkt.window as u64;
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, pkt.ack, 0, true, false);
        let tracked = self.board.on_echo(echo).is_some();
        match self.probe.as_mut() {
            Some(p) if p.owns(echo) => p.record(echo, owd),
            _ if tracked => {
                let alarm = Dur::from_secs_f64(self.rtt_now().as_secs_f64() * self.cfg.queue_alarm_rtts);
                self.comp.on_sample(echo, Dur(owd.0.saturating_sub(min_owd.0)), alarm)
            }
            _ => {}
        }
        self.board.on_cum_ack(pkt.ack);
        for lost in self.board.detect_losses() {
            self.mark_probe_loss(lost);
        }
        self.compensate(echo, cx);
        self.judge_probe(cx);
        self.after_progress(cx);
    }

    /// A new smallest one-way delay: this flow's, and the host's for the destination.
    fn lower_min_owd(&mut self, owd: Dur) -> Dur {
        self.min_owd = Some(owd);
        if let Some(h) = &self.history {
            h.lock().expect("history lock").record_owd(self.conn.remote, owd);
        }
        owd
    }

    fn mark_probe_loss(&mut self, sent_at: Time) {
        if let Some(p) = self.probe.as_mut().filter(|p| p.owns(sent_at)) {
            p.lost = true;
        }
    }

    /// Re-arm the retransmission timer, finish if everything is acknowledged, send what is due.
    fn after_progress(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.board.all_acked() {
            return self.finish(cx);
        }
        if self.board.outstanding() {
            let at = cx.now + self.rtt.rto();
            self.rto.arm(TIMER_RTO, at, cx);
        } else {
            self.rto.cancel();
        }
        self.pump(cx);
    }

    fn finish(&mut self, cx: &mut AgentCx<impl Host>) {
        self.phase = Phase::Done;
        self.stats.completed = Some(cx.now);
        self.rto.cancel();
        self.pace.cancel();
        self.probe_timer.cancel();
    }

    fn compensate(&mut self, echo: Time, cx: &mut AgentCx<impl Host>) {
        let rtt = self.rtt_now();
        if !self.comp.epoch_done(echo, rtt) {
            return;
        }
        let policy = Policy {
            tolerance: self.cfg.queue_tolerance,
            growth: self.cfg.compensate_growth,
            rounds: self.cfg.tit_for_tat_rounds,
            factor: self.cfg.tit_for_tat_factor,
        };
        if let Some(cut) = self.comp.end_epoch(cx.now, rtt, policy) {
            // A standing queue means the path is full: every sender cut in proportion, and all
            // search again from the smallest step without back-off, so the capacity freed by
            // the cut is shared in equal steps (the additive half of AIMD's convergence). Not
            // under tit-for-tat: the queue is not PCP senders', and restarting the search at
            // every weakened cut kept the flow's steps at one packet per RTT beside TCP.
            if !self.comp.weakened {
                self.search.restart(self.per_rtt(self.cfg.min_increment), cx.now);
                self.jitter_next_probe();
            }
            let keep = if self.cfg.drain_once && !self.comp.weakened {
                self.drain = Some((cx.now + rtt, cut.drain));
                cut.excess
            } else {
                cut.total()
            };
            let rate = BitRate((self.base.0 as f64 * keep) as u64);
            self.set_base(rate.max(self.per_rtt(self.cfg.min_rate)), cx);
        }
    }

    fn set_base(&mut self, rate: BitRate, cx: &mut AgentCx<impl Host>) {
        self.base = rate;
        if let Some(h) = &self.history {
            h.lock().expect("history lock").record_rate(self.conn.remote, rate);
        }
        let now = cx.now;
        cx.rec().pcp_rate(now, self.conn.flow, self.base, self.search.increment);
    }

    fn jitter_next_probe(&mut self) {
        let rtts = self.rng.uniform() * self.cfg.probe_jitter_rtts;
        self.search.delay(Dur::from_secs_f64(rtts * self.rtt_now().as_secs_f64()));
    }

    /// Decide a probe once every packet is accounted for (echoed, or overtaken by
    /// `reorder_threshold` later deliveries) or as soon as one is lost.
    fn judge_probe(&mut self, cx: &mut AgentCx<impl Host>) {
        let Some(p) = &self.probe else { return };
        let overtaken = p.last_order.is_some_and(|o| {
            self.board.highest_delivered().is_some_and(|h| h >= o + self.cfg.reorder_threshold as u64)
        });
        let all_echoed = p.fully_sent() && p.samples.len() == p.packets;
        if p.lost || all_echoed || overtaken {
            // Under tit-for-tat the queue grows at TCP's pace whatever PCP does: a probe passes
            // if the delay rises no faster than it did for base-rate packets in the last epoch,
            // or no probe could pass until TCP's next back-off.
            let background = if self.comp.weakened { self.comp.trend.max(0.0) } else { 0.0 };
            let verdict = judge(p, self.cfg.slope_tolerance + background, self.cfg.slope_confidence);
            self.conclude(verdict, cx);
        }
    }

    fn conclude(&mut self, verdict: Verdict, cx: &mut AgentCx<impl Host>) {
        let Some(p) = self.probe.take() else { return };
        let rtt = self.rtt_now();
        match verdict {
            Verdict::Accept => {
                self.stats.probes_accepted += 1;
                self.set_base(BitRate(self.base.0 + p.increment.0), cx); // direct jump
                self.search.on_success(cx.now);
            }
            Verdict::Reject => {
                self.stats.probes_rejected += 1;
                let min = self.per_rtt(self.cfg.min_increment);
                self.search.on_failure(cx.now, min, rtt, self.cfg.max_backoff_rtts);
                self.jitter_next_probe();
            }
            Verdict::Inconclusive => self.search.retry(cx.now, rtt),
        }
        if p.from_history && verdict != Verdict::Inconclusive {
            if let Some(h) = &self.history {
                h.lock().expect("history lock").record_prediction(self.conn.remote, verdict == Verdict::Accept);
            }
        }
    }

    /// Start a probe when one is due, the path shows no standing queue and enough data is
    /// left to fill it; its first packet leaves at once.
    fn maybe_start_probe(&mut self, cx: &mut AgentCx<impl Host>) {
        // Under tit-for-tat the standing queue is not PCP's to drain: waiting for it to vanish
        // would leave the flow at its floor beside TCP, whose back-offs are the moments the
        // paper's PCP takes capacity (§3.5); the probe's delay slope still judges it.
        if self.probe.is_some() || (self.comp.queue_seen && !self.comp.weakened) {
            return;
        }
        if cx.now < self.search.next_probe_at {
            let at = self.search.next_probe_at;
            self.probe_timer.arm(TIMER_PROBE, at, cx);
            return;
        }
        let rate = BitRate(self.base.0 + self.search.increment.0);
        let span = Dur::from_secs_f64(self.rtt_now().as_secs_f64() * self.cfg.probe_span_rtts);
        let packets = probe_len(rate, self.full_packet(), span, self.cfg.probe_packets as usize);
        if self.board.unsent() < packets as u64 {
            return;
        }
        self.probe = Some(Probe::new(self.search.increment, packets, self.history_probe_pending));
        self.history_probe_pending = false;
        self.stats.probes += 1;
        if self.last_sent != Some(cx.now) {
            self.next_send = self.next_send.min(cx.now);
        }
    }

    /// The pacing rate now: base + increment while a probe is being sent, else base, lowered
    /// while a cut drains the queue.
    fn current_rate(&self, now: Time) -> BitRate {
        match &self.probe {
            Some(p) if !p.fully_sent() => BitRate(self.base.0 + p.increment.0),
            _ => match self.drain {
                Some((until, f)) if now < until => {
                    BitRate(((self.base.0 as f64 * f) as u64).max(self.per_rtt(self.cfg.min_rate).0))
                }
                _ => self.base,
            },
        }
    }

    /// Send the next packet if one is due, and schedule the one after.
    fn pump(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.phase != Phase::Open {
            return;
        }
        self.maybe_start_probe(cx);
        let rate = self.current_rate(cx.now);
        if rate.0 == 0 {
            return;
        }
        if cx.now < self.next_send {
            let at = self.next_send;
            self.pace.arm(TIMER_PACE, at, cx);
            return;
        }
        let Some((seg, retransmit)) = self.board.next_to_send(self.peer_window) else {
            self.pace.cancel();
            // A probe that cannot keep its spacing (window or data ran out) proves nothing.
            if self.probe.as_ref().is_some_and(|p| !p.fully_sent()) {
                self.conclude(Verdict::Inconclusive, cx);
            }
            return;
        };
        let size = self.transmit(seg, retransmit, cx);
        self.next_send = cx.now + rate.tx_time(size);
        let at = self.next_send;
        self.pace.arm(TIMER_PACE, at, cx);
    }

    fn transmit(&mut self, seg: u64, retransmit: bool, cx: &mut AgentCx<impl Host>) -> Bytes {
        let (seq, len) = (self.board.seq_of(seg), self.board.seg_len(seg));
        let pkt = self.conn.segment(seq, 1, len, tcp_flags::ACK, self.cfg.receive_window.0);
        let size = pkt.bytes();
        cx.send(pkt);
        let order = self.board.on_send(seg, cx.now);
        self.last_sent = Some(cx.now);
        if let Some(p) = self.probe.as_mut().filter(|p| !p.fully_sent()) {
            p.sent.push(cx.now);
            if p.fully_sent() {
                p.last_order = Some(order);
            }
        }
        self.stats.sent.sent(len as u64, retransmit);
        let now = cx.now;
        cx.rec().segment(now, self.conn.flow, seq, len, false, retransmit);
        if !self.rto.is_armed() {
            let at = cx.now + self.rtt.rto();
            self.rto.arm(TIMER_RTO, at, cx);
        }
        size
    }

    /// Retransmission timeout: resend the SYN, or declare everything in flight lost (a probe
    /// in flight fails) and back the timer off.
    fn on_rto(&mut self, cx: &mut AgentCx<impl Host>) {
        self.rtt.back_off();
        match self.phase {
            Phase::SynSent => return self.send_syn(cx),
            Phase::Open if self.board.outstanding() => {}
            _ => return,
        }
        self.stats.sent.timeouts += 1;
        for lost in self.board.on_timeout() {
            self.mark_probe_loss(lost);
        }
        if self.probe.is_some() {
            self.conclude(Verdict::Reject, cx);
        }
        let at = cx.now + self.rtt.rto();
        self.rto.arm(TIMER_RTO, at, cx);
        self.pump(cx);
    }
}

/// Paper section 3.3: with no history the first probe is one MSS per half RTT.
const INITIAL_PROBE_PACKETS_PER_RTT: f64 = 2.0;

impl Endpoint for PcpSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.rto.is_armed() && !self.pace.is_armed() && !self.probe_timer.is_armed()
    }

    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        if self.phase == Phase::Closed {
            self.phase = Phase::SynSent;
            self.send_syn(cx);
        }
    }

    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        match self.phase {
            Phase::SynSent if pkt.has_flag(tcp_flags::SYN) => self.on_syn_ack(&pkt, cx),
            Phase::Open if !pkt.has_flag(tcp_flags::SYN) => self.on_ack(&pkt, cx),
            _ => {}
        }
    }

    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        match timer.kind {
            TIMER_RTO if self.rto.on_expiry(timer, cx) => self.on_rto(cx),
            TIMER_PACE if self.pace.on_expiry(timer, cx) => self.pump(cx),
            TIMER_PROBE if self.probe_timer.on_expiry(timer, cx) => self.pump(cx),
            _ => {}
        }
    }
}
