//! Snapshots (`record.snapshots`): every link's and every flow's counters at chosen instants of
//! a run, as two tables (`link_snapshots`, `flow_snapshots`) with one row per link or flow per
//! instant. The difference of two snapshots is any statistic over the window between them
//! (packets, bytes, drops and marks, busy time, the backlog's time integral, a flow's delivered
//! bytes), so a measurement window or a time series needs one run, not a second, shorter one
//! subtracted from it. A snapshot at instant T counts every event at or before T.
//!
//! The counters are the summary tables' own (`results.rs`): a snapshot taken at the end equals
//! the links and flows tables. Rows are written as the run goes (to the spill folder when the
//! run streams its records), so memory does not grow with the number of snapshots.
//!
//! It reads the world between events and changes nothing in it; the instants themselves
//! (`SnapshotTimes`) are the recorder's configuration, in `trace/snapshot_times.rs`.

use crate::trace::snapshot_times::SnapshotTimes;
use crate::trace::table::{columnar, Table};
use crate::trace::Recorder;
use crate::units::Time;
use crate::world::World;

/// Table names.
pub const LINK_SNAPSHOTS: &str = "link_snapshots";
pub const FLOW_SNAPSHOTS: &str = "flow_snapshots";

columnar!(
    /// One row per link per instant: the counters of the `links` table, and the time integrals
    /// behind its utilization, mean backlog and mean sojourn.
    LinkRows {
        time_s: f64,
        link: u32,
        arrived_packets: u64,
        arrived_bytes: u64,
        departed_packets: u64,
        departed_bytes: u64,
        delivered_packets: u64,
        dropped_packets: u64,
        dropped_bytes: u64,
        marked_packets: u64,
        busy_s: f64,
        sojourn_sum_s: f64,
        backlog_packet_s: f64,
        backlog_byte_s: f64,
        backlog_packets: u64,
        backlog_bytes: u64,
    }
);

columnar!(
    /// One row per flow per instant (the flows not yet written to disk: every listed flow and
    /// the arrivals held in memory): the counters of the `flows` table.
    FlowRows {
        time_s: f64,
        flow: u32,
        bytes_sent: u64,
        bytes_delivered: u64,
        packets_sent: u64,
        packets_received: u64,
        retransmitted_segments: u64,
        timeouts: u64,
        fast_retransmits: u64,
        cwnd_bytes: f64,
        srtt_s: f64,
    }
);

/// The snapshot schedule of a run and the rows taken so far.
#[derive(Default)]
pub struct Snapshots {
    times: Option<SnapshotTimes>,
    taken: u64,
    links: LinkRows,
    flows: FlowRows,
}

impl Snapshots {
    pub fn new(times: Option<SnapshotTimes>) -> Self {
        Snapshots { times, ..Default::default() }
    }

    /// The next instant to take, if any remains before `end`.
    pub fn next(&self, end: Time) -> Option<Time> {
        self.times.as_ref()?.nth(self.taken, end)
    }

    /// Record every link's and flow's counters at the world's present instant.
    pub fn take(&mut self, w: &mut World) {
        let now = w.now;
        let t = now.as_secs_f64();
        for (i, l) in w.links.iter().enumerate() {
            let s = l.stats_at(now);
            let backlog = l.backlog();
            self.links.push(
                t,
                i as u32,
                s.arrived_packets,
                s.arrived_bytes,
                s.departed_packets,
                s.departed_bytes,
                s.delivered_packets,
                s.dropped_in_queue(),
                s.dropped_in_queue_bytes(),
                s.marked_packets,
                s.busy.as_secs_f64(),
                s.sojourn_sum.as_secs_f64(),
                s.backlog_packet_ns as f64 / 1e9,
                s.backlog_byte_ns as f64 / 1e9,
                backlog.packets,
                backlog.bytes,
            );
        }
        for (id, _, r) in w.flows.rows(&w.agents) {
            self.flows.push(
                t,
                id.0,
                r.bytes_sent,
                r.bytes_delivered,
                r.packets_sent,
                r.packets_received,
                r.retransmitted_segments,
                r.timeouts,
                r.fast_retransmits,
                r.cwnd,
                r.srtt_s,
            );
        }
        self.taken += 1;
        if let Some(chunk) = w.rec.streaming_chunk() {
            if self.links.len() >= chunk {
                w.rec.spill_buffer(LINK_SNAPSHOTS, &mut self.links);
            }
            if self.flows.len() >= chunk {
                w.rec.spill_buffer(FLOW_SNAPSHOTS, &mut self.flows);
            }
        }
    }

    /// The two tables, before the recorder closes its spill folder: a table with rows on disk
    /// sends its last rows there too and comes back as an empty placeholder.
    pub fn into_tables(mut self, rec: &mut Recorder) -> [Table; 2] {
        let links = if rec.spill_holds(LINK_SNAPSHOTS) {
            rec.spill_buffer(LINK_SNAPSHOTS, &mut self.links);
            Table::new(LINK_SNAPSHOTS)
        } else {
            self.links.into_table(LINK_SNAPSHOTS)
        };
        let flows = if rec.spill_holds(FLOW_SNAPSHOTS) {
            rec.spill_buffer(FLOW_SNAPSHOTS, &mut self.flows);
            Table::new(FLOW_SNAPSHOTS)
        } else {
            self.flows.into_table(FLOW_SNAPSHOTS)
        };
        [links, flows]
    }
}
