//! The high-frequency monitor (Wei, Hegde, Low, PFLDnet 2005, slide 8: "to understand
//! interesting events with microscopic details, low overhead"): every packet event of one
//! chosen flow, at full resolution, inside a time window. `record.monitor_flow = {flow =
//! "name", start = "100s", stop = "101s"}`; off (one branch per event) when absent.
//!
//! One table, `flow_monitor`, one row per event:
//! - `send` / `retransmit`: the sender transmits a data segment (`seq`, `len`); `cwnd` and
//!   `in_flight` (bytes sent and not acknowledged, before this segment) at that instant, and
//!   `b`, the burstiness B(n) the sender's burstiness control computed for it (NaN without it).
//! - `ack`: an ACK reaches the sender (`ack`); `cwnd` and `in_flight` after it was processed.
//! - `arrive`: one of the flow's packets (data or ACK, `len` = payload) reaches a link's queue;
//!   `queue` is the number of packets that queue held just before (what the packet found).
//! - `drop`: one of the flow's packets was discarded at `link` (`seq`, `ack`, `len` as on its
//!   arrival).
//!
//! Columns that do not apply to an event are 0 (`b` NaN; `link` u32::MAX for sender events).
//! Owns the watch window and the table's rows; it stores what the recorder's hooks hand it (from
//! the sender and the links) and reads no component.

use super::table::{columnar, Column, Table};
use super::Recorder;
use crate::error::ConfigError;
use crate::packet::{FlowId, LinkId, Packet};
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowMonitorConfig {
    /// The flow's name, as in the flows table.
    pub flow: String,
    /// Start of the window (simulated time); 0 when absent.
    #[serde(default)]
    pub start: Dur,
    /// End of the window; the end of the run when absent.
    #[serde(default)]
    pub stop: Option<Dur>,
}

/// The flow and window being watched.
#[derive(Clone, Copy, Debug)]
pub(super) struct Watch {
    flow: FlowId,
    start: Time,
    stop: Time,
}

const NO_LINK: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(u8)]
enum Event {
    Send = 0,
    Retransmit,
    Ack,
    Arrive,
    Drop,
}

const EVENT_NAMES: [&str; 5] = ["send", "retransmit", "ack", "arrive", "drop"];

columnar!(FlowMonitorTrace {
    time_s: f64,
    event: u8,
    link: u32,
    seq: u64,
    ack: u64,
    len: u32,
    cwnd: u64,
    in_flight: u64,
    queue: u64,
    b: f64,
});

/// Apply `record.monitor_flow`, resolving the flow by name: a listed flow (`names` in flow id
/// order), or a workload's arrival (`arrival_name` tells whether a name is one's), whose id is
/// known only when it arrives ([`Recorder::flow_arrived`]).
pub fn configure<'a>(
    rec: &mut Recorder,
    names: impl Iterator<Item = &'a str>,
    arrival_name: impl Fn(&str) -> bool,
    end: Time,
) -> Result<(), ConfigError> {
    let Some(cfg) = rec.cfg.monitor_flow.clone() else { return Ok(()) };
    let names: Vec<&str> = names.collect();
    let flow = match names.iter().position(|n| *n == cfg.flow) {
        Some(i) => FlowId(i as u32),
        None if arrival_name(&cfg.flow) => NOT_ARRIVED,
        None => {
            let known: Vec<&str> = names.iter().copied().take(8).collect();
            let msg = format!("no flow named '{}' (flows: {})", cfg.flow, known.join(", "));
            return Err(ConfigError::new("record.monitor_flow.flow", msg));
        }
    };
    let (start, stop) = (Time::ZERO + cfg.start, cfg.stop.map_or(end, |d| Time::ZERO + d));
    if stop <= start {
        return Err(ConfigError::new("record.monitor_flow.stop", "must be later than start"));
    }
    rec.watch = Some(Watch { flow, start, stop });
    Ok(())
}

/// The watched flow's id while it is an arrival yet to come: no flow has it (flows' two
/// endpoints take ids 2f and 2f + 1, so flow ids stay below 2³¹).
const NOT_ARRIVED: FlowId = FlowId(u32::MAX);

impl Recorder {
    /// A workload's arrival got its id: watch it if it is the flow the monitor waits for.
    pub fn flow_arrived(&mut self, id: FlowId, name: &str) {
        let Some(w) = self.watch.as_mut() else { return };
        if w.flow == NOT_ARRIVED && self.cfg.monitor_flow.as_ref().is_some_and(|c| c.flow == name) {
            w.flow = id;
        }
    }

    /// Is this flow's event at `now` to be recorded? (The only cost when the monitor is off.)
    #[inline]
    pub fn watching(&self, flow: FlowId, now: Time) -> bool {
        matches!(self.watch, Some(w) if w.flow == flow && now >= w.start && now < w.stop)
    }

    /// A data segment leaves the sender (call only when `watching`).
    #[allow(clippy::too_many_arguments)]
    pub fn watch_send(&mut self, now: Time, seq: u64, len: u32, retransmit: bool, cwnd: u64, flight: u64, b: f64) {
        let ev = if retransmit { Event::Retransmit } else { Event::Send };
        let rows = self.flow_monitor.push(now.as_secs_f64(), ev as u8, NO_LINK, seq, 0, len, cwnd, flight, 0, b);
        self.pushed(rows, super::Series::FlowMonitor);
    }

    /// An ACK was processed by the sender (call only when `watching`).
    pub fn watch_ack(&mut self, now: Time, ack: u64, cwnd: u64, flight: u64) {
        let rows =
            self.flow_monitor.push(now.as_secs_f64(), Event::Ack as u8, NO_LINK, 0, ack, 0, cwnd, flight, 0, f64::NAN);
        self.pushed(rows, super::Series::FlowMonitor);
    }

    /// A packet reaches link `link`; if its flow is watched, the row says how many packets its
    /// queue holds (`ahead`, asked only then: reading a queue's length is not free).
    #[inline]
    pub fn watch_arrival(&mut self, now: Time, link: LinkId, p: &Packet, ahead: impl FnOnce() -> u64) {
        if self.watching(p.flow, now) {
            let row = (p.seq, p.ack, p.payload as u32);
            let rows = self.flow_monitor.push(
                now.as_secs_f64(),
                Event::Arrive as u8,
                link.0,
                row.0,
                row.1,
                row.2,
                0,
                0,
                ahead(),
                f64::NAN,
            );
            self.pushed(rows, super::Series::FlowMonitor);
        }
    }

    /// One of the watched flow's packets was discarded at `link`: the row names it by `seq`,
    /// `ack` and `len` as its arrival row did, so a drop can be matched to its retransmission.
    #[inline]
    pub(super) fn watch_drop(&mut self, now: Time, link: LinkId, p: &Packet) {
        if self.watching(p.flow, now) {
            let rows = self.flow_monitor.push(
                now.as_secs_f64(),
                Event::Drop as u8,
                link.0,
                p.seq,
                p.ack,
                p.payload as u32,
                0,
                0,
                0,
                f64::NAN,
            );
            self.pushed(rows, super::Series::FlowMonitor);
        }
    }
}

/// The names of the `event` column's codes, in code order.
pub(super) fn event_names() -> Vec<String> {
    EVENT_NAMES.iter().map(|n| n.to_string()).collect()
}

/// The `flow_monitor` table with event names spelled out.
pub(super) fn table(m: FlowMonitorTrace) -> Table {
    let event = m.event.iter().map(|&e| EVENT_NAMES[e as usize].to_string()).collect();
    Table::new(super::FLOW_MONITOR)
        .with("time_s", Column::F64(m.time_s))
        .with("event", Column::Str(event))
        .with("link", Column::U32(m.link))
        .with("seq", Column::U64(m.seq))
        .with("ack", Column::U64(m.ack))
        .with("len", Column::U32(m.len))
        .with("cwnd", Column::U64(m.cwnd))
        .with("in_flight", Column::U64(m.in_flight))
        .with("queue", Column::U64(m.queue))
        .with("b", Column::F64(m.b))
}
