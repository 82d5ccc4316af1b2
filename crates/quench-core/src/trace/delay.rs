//! The per-packet one-way delay record: for the flows a scenario names
//! (`record.delay = ["voip"]`), one row per packet that carries data and reaches its
//! destination host: when it arrived, when it was sent (a retransmission from its own
//! transmission), its one-way delay and its size. What a VoIP or gaming study reads (delay
//! percentiles, jitter), and what the `sojourn` table gives only hop by hop.
//!
//! Owns the set of recorded flows and the table's rows; it stores what the world hands it where
//! a packet reaches its host and reads no component. Listed flows only (their names are known
//! before the run); off, a packet pays one test of a flag.

use super::table::{columnar, Table};
use super::{Recorder, Series};
use crate::error::ConfigError;
use crate::packet::{FlowId, Packet};
use crate::units::Time;

/// The table's name.
pub const DELAY: &str = "delay";

columnar!(DelayTrace { time_s: f64, flow: u32, sent_s: f64, delay_s: f64, size: u32 });

/// The listed flows whose packets are recorded, by flow id.
#[derive(Default)]
pub(super) struct DelayFlows {
    on: Vec<bool>,
}

impl DelayFlows {
    #[inline]
    fn records(&self, flow: FlowId) -> bool {
        self.on.get(flow.index()).copied().unwrap_or(false)
    }
}

/// Resolve `record.delay`'s names against the listed flows' names; an unknown name is an error
/// naming its place in the list.
pub fn configure<'a>(rec: &mut Recorder, names: impl Iterator<Item = &'a str>) -> Result<(), ConfigError> {
    if rec.cfg.delay.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = names.collect();
    let mut on = vec![false; names.len()];
    for (i, wanted) in rec.cfg.delay.iter().enumerate() {
        let Some(f) = names.iter().position(|n| n == wanted) else {
            let known: Vec<&str> = names.iter().copied().take(8).collect();
            let why = format!("no listed flow named '{wanted}' (flows: {})", known.join(", "));
            return Err(ConfigError::new(format!("record.delay[{i}]"), why));
        };
        on[f] = true;
    }
    rec.delay_flows = DelayFlows { on };
    Ok(())
}

impl Recorder {
    /// Packet `pkt` reached its destination host at `now`: its row, if its flow is recorded
    /// and it carries data.
    #[inline]
    pub fn packet_arrived(&mut self, now: Time, pkt: &Packet) {
        if self.delay_flows.records(pkt.flow) && pkt.payload > 0 {
            let rows = self.delay.push(
                now.as_secs_f64(),
                pkt.flow.0,
                pkt.sent_at.as_secs_f64(),
                (now - pkt.sent_at).as_secs_f64(),
                pkt.size as u32,
            );
            self.pushed(rows, Series::Delay);
        }
    }
}

/// The table of the rows kept in memory.
pub fn table(d: DelayTrace) -> Table {
    d.into_table(DELAY)
}
