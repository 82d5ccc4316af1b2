//! The recorder: typed records appended to columnar buffers while the simulation runs. Each
//! record family is switched by the scenario's `record` section and costs one branch when off.
//! Times are stored as float seconds (exact to the nanosecond for runs under 104 days).
//!
//! With a spill folder (`stream_to`), a buffer that reaches the chunk size is written to disk
//! and emptied (`spill.rs`), so memory stays flat however long the run; without one, every
//! record stays in memory until the run ends.
//!
//! The recorder only stores what it is handed: it reads no component, and it depends on no
//! part of the engine above the packet, the units, and the ICMP and telemetry encodings (for
//! captures).

pub mod delay;
pub mod flow_links;
pub mod flow_monitor;
pub mod pcap;
mod pcap_mptcp;
pub mod snapshot_times;
pub mod spill;
pub mod table;
pub mod thinning;

use crate::packet::{FlowId, LinkId, Packet};
use crate::telemetry::HopRecord;
use crate::units::{BitRate, Dur, Time};
use flow_monitor::{FlowMonitorConfig, FlowMonitorTrace, Watch};
use serde::{Deserialize, Serialize};
use spill::{Spill, CHUNK_ROWS};
use table::{columnar, Chunked, Table};
use thinning::CwndThinning;

/// What to record. Summary tables (per link, per flow) are always produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordConfig {
    /// Queue length in packets and bytes at every change (exact, event-driven).
    pub queues: bool,
    /// One row per packet leaving a queue with its sojourn time and ECN codepoint.
    pub sojourn: bool,
    /// One row per drop with its reason.
    pub drops: bool,
    /// Congestion state at every change: TCP's window and slow-start threshold (`cwnd` table),
    /// PCP's base rate and probe increment (`pcp_rate` table), a model-based controller's
    /// pacing rate, bandwidth and RTT estimates, mode and gains (`pacing` table).
    pub cwnd: bool,
    /// At most one `cwnd` row per flow per interval, plus every decrease with the value before
    /// it (`thinning.rs`); every change when absent.
    pub cwnd_interval: Option<Dur>,
    /// Every RTT sample with the smoothed RTT and RTO after it.
    pub rtt: bool,
    /// Every TCP segment sent and ACK received (for time-sequence graphs).
    pub segments: bool,
    /// Internal variables that queue disciplines report (RED's average, max_p, ...).
    pub monitors: bool,
    /// Restrict queue/sojourn/drop/monitor records to these links (names "a->b"); all when absent.
    pub links: Option<Vec<String>>,
    /// Links to capture in pcap format, by name "a->b".
    pub pcap: Vec<String>,
    /// Every packet event of one flow in a time window (`flow_monitor.rs`).
    pub monitor_flow: Option<FlowMonitorConfig>,
    /// Every link's and flow's counters at these instants, or every interval
    /// (`snapshots.rs`): statistics over any window between two of them.
    pub snapshots: Option<snapshot_times::SnapshotTimes>,
    /// Each listed flow's packets and bytes at every link it crossed (`flow_links.rs`).
    pub flow_links: bool,
    /// Listed flows (by name) whose every data packet's one-way delay is recorded
    /// (`delay.rs`). Left out of the written scenario when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delay: Vec<String>,
    /// One row per hop a switch egress writes into a packet's in-band telemetry record
    /// (`telemetry.rs`): the hop's index in the record, the queue, transmitted bytes and rate
    /// it reports (the `telemetry` table). Restricted by `links` like the queue records.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub telemetry: bool,
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig {
            queues: true,
            sojourn: false,
            drops: true,
            cwnd: true,
            cwnd_interval: None,
            rtt: true,
            segments: false,
            monitors: true,
            links: None,
            pcap: Vec::new(),
            monitor_flow: None,
            snapshots: None,
            flow_links: false,
            delay: Vec::new(),
            telemetry: false,
        }
    }
}

impl RecordConfig {
    /// Nothing but the summary tables (for benchmarks and sweeps).
    pub fn summary_only() -> Self {
        RecordConfig { queues: false, drops: false, cwnd: false, rtt: false, monitors: false, ..Default::default() }
    }
}

/// TCP sender events worth a row of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TcpEvent {
    Timeout = 0,
    FastRetransmit = 1,
    PartialAckRetransmit = 2,
    Aborted = 3,
    EcnReduction = 4,
    SourceQuench = 5,
    /// The host's transmit queue refused a segment and the sender entered CWR (Linux).
    LocalCwr = 6,
    /// RACK marked segments lost (RFC 8985 section 6.2), once per ACK or reorder timer.
    RackLost = 7,
    /// A tail loss probe was sent (RFC 8985 section 7.3).
    LossProbe = 8,
    /// A probe's retransmission repaired a loss and the window was reduced (section 7.4).
    ProbeRecovery = 9,
}

impl TcpEvent {
    pub const NAMES: [&'static str; 10] = [
        "timeout",
        "fast_retransmit",
        "partial_ack_retransmit",
        "aborted",
        "ecn_reduction",
        "source_quench",
        "local_cwr",
        "rack_lost",
        "loss_probe",
        "probe_recovery",
    ];
}

columnar!(QueueTrace { time_s: f64, link: u32, packets: u64, bytes: u64 });
// `ecn`: the packet's ECN codepoint as it leaves the queue (0 Not-ECT, 1 ECT(1), 2 ECT(0),
// 3 CE; RFC 3168 section 5), so that a mark set by the queue shows.
columnar!(SojournTrace { time_s: f64, link: u32, flow: u32, sojourn_s: f64, ecn: u8 });
columnar!(DropTrace { time_s: f64, link: u32, flow: u32, reason: u8, size: u32 });
columnar!(CwndTrace { time_s: f64, flow: u32, cwnd: u64, ssthresh: u64 });
columnar!(PcpRateTrace { time_s: f64, flow: u32, rate_bps: u64, increment_bps: u64 });
columnar!(PacingTrace {
    time_s: f64,
    flow: u32,
    pacing_rate_bps: u64,
    bandwidth_bps: u64,
    min_rtt_s: f64,
    mode: u8,
    cycle_phase: u8,
    pacing_gain: f64,
    cwnd_gain: f64,
});
columnar!(RttTrace { time_s: f64, flow: u32, rtt_s: f64, srtt_s: f64, rto_s: f64 });
columnar!(SegmentTrace { time_s: f64, flow: u32, seq: u64, len: u32, is_ack: u8, retransmit: u8 });
columnar!(EventTrace { time_s: f64, flow: u32, event: u8 });
columnar!(MonitorTrace { time_s: f64, link: u32, name: u32, value: f64 });
// `hop`: the hop's index in the packet's record (0 at the first switch egress); `uid`: the
// packet's (its IP identification's low 16 bits in a capture).
columnar!(TelemetryTrace {
    time_s: f64,
    link: u32,
    flow: u32,
    uid: u32,
    hop: u8,
    queue_bytes: u64,
    tx_bytes: u64,
    rate_bps: u64,
});

#[derive(Default)]
pub struct Recorder {
    pub cfg: RecordConfig,
    /// Per link: are its queue records wanted?
    link_on: Vec<bool>,
    pub queue: QueueTrace,
    pub sojourn: SojournTrace,
    pub drops: DropTrace,
    pub cwnd: CwndTrace,
    pub pcp_rate: PcpRateTrace,
    pub pacing: PacingTrace,
    pub rtt: RttTrace,
    pub segments: SegmentTrace,
    pub events: EventTrace,
    pub monitors: MonitorTrace,
    /// Names of monitored variables; `monitors.name` indexes this.
    monitor_names: Vec<&'static str>,
    /// The flow watched by the high-frequency monitor, if any, and its records.
    watch: Option<Watch>,
    pub flow_monitor: FlowMonitorTrace,
    /// Per-flow per-link counters (`record.flow_links`).
    pub flow_links: flow_links::FlowLinks,
    /// The flows whose packets' one-way delays are recorded, and the rows (`record.delay`).
    delay_flows: delay::DelayFlows,
    pub delay: delay::DelayTrace,
    pub telemetry: TelemetryTrace,
    cwnd_thinning: Option<CwndThinning>,
    /// Where full buffers go, when the run streams its records to disk.
    spill: Option<Spill>,
    /// Rows at which a buffer is written out: CHUNK_ROWS when streaming, never (usize::MAX)
    /// when every record stays in memory.
    chunk_rows: usize,
}

/// The time-series tables' names, in the order `into_tables` returns them.
pub const QUEUE: &str = "queue";
pub const SOJOURN: &str = "sojourn";
pub const DROPS: &str = "drops";
pub const CWND: &str = "cwnd";
pub const PCP_RATE: &str = "pcp_rate";
pub const PACING: &str = "pacing";
pub const RTT: &str = "rtt";
pub const SEGMENTS: &str = "segments";
pub const TCP_EVENTS: &str = "tcp_events";
pub const MONITORS: &str = "monitors";
pub const FLOW_MONITOR: &str = "flow_monitor";
pub const TELEMETRY: &str = "telemetry";

/// The record buffers, as named by a full one asking to be written out.
#[derive(Clone, Copy, Debug)]
enum Series {
    Queue,
    Sojourn,
    Drops,
    Cwnd,
    PcpRate,
    Pacing,
    Rtt,
    Segments,
    TcpEvents,
    Monitors,
    FlowMonitor,
    Delay,
    Telemetry,
}

/// Append `buffer`'s rows to `table` in the spill folder and empty it.
fn spill_chunk(spill: &mut Spill, table: &str, buffer: &mut impl Chunked) {
    spill.append(table, &buffer.column_refs());
    buffer.clear();
}

/// The table of `buffer`: in memory when nothing of it was spilled, else its last rows go to
/// the spill folder and the table returned is an empty placeholder that keeps its place.
fn finish_table<T: Chunked>(spill: &mut Option<Spill>, name: &str, buffer: T, table: impl FnOnce(T) -> Table) -> Table {
    match spill {
        Some(s) if s.holds(name) => {
            s.append(name, &buffer.column_refs());
            Table::new(name)
        }
        _ => table(buffer),
    }
}

impl Recorder {
    /// A recorder of `cfg` for a scenario whose links' queue records are wanted where
    /// `link_on` says, with `listed_flows` flows listed (workload arrivals come after them).
    pub fn new(cfg: RecordConfig, link_on: Vec<bool>, listed_flows: usize) -> Self {
        let cwnd_thinning = cfg.cwnd_interval.map(CwndThinning::new);
        let flow_links = flow_links::FlowLinks::new(cfg.flow_links, listed_flows);
        Recorder { cfg, link_on, cwnd_thinning, flow_links, chunk_rows: usize::MAX, ..Default::default() }
    }

    /// Stream every table to `spill` from now on, a chunk of `chunk_rows` rows at a time.
    pub fn stream_to(&mut self, spill: Spill, chunk_rows: usize) {
        self.spill = Some(spill);
        self.chunk_rows = chunk_rows.max(1);
    }

    /// Rows a streamed table writes at a time; `None` when records stay in memory.
    pub fn streaming_chunk(&self) -> Option<usize> {
        self.spill.as_ref().map(|_| self.chunk_rows)
    }

    /// Whether `table` has rows in the spill folder.
    pub fn spill_holds(&self, table: &str) -> bool {
        self.spill.as_ref().is_some_and(|s| s.holds(table))
    }

    /// Rows of `table` in the spill folder.
    pub fn spill_rows(&self, table: &str) -> u64 {
        self.spill.as_ref().map_or(0, |s| s.rows(table))
    }

    /// Append a buffer's rows to `table` in the spill folder and empty it (records kept by an
    /// owner outside the recorder, such as `snapshots.rs`); nothing when not streaming.
    pub fn spill_buffer(&mut self, table: &str, buffer: &mut impl Chunked) {
        if let Some(s) = self.spill.as_mut() {
            spill_chunk(s, table, buffer);
        }
    }

    /// Append a table's rows to the spill folder (a summary table streamed by its owner).
    pub fn spill_table(&mut self, t: &Table) {
        if let Some(s) = self.spill.as_mut() {
            s.append(&t.name, &t.column_refs());
        }
    }

    /// Have `table` read in the order of the given ranges of its stored rows (`Spill::set_order`).
    pub fn spill_order(&mut self, table: &str, ranges: Vec<[u64; 2]>) {
        if let Some(s) = self.spill.as_mut() {
            s.set_order(table, ranges);
        }
    }

    /// Stream with the standard chunk size.
    pub fn stream(&mut self, spill: Spill) {
        self.stream_to(spill, CHUNK_ROWS);
    }

    /// Write a full buffer to the spill folder and empty it. Out of line and called with one
    /// small argument: it runs once per chunk, and the recording functions, inlined into the
    /// engine's hot paths, stay a push, a compare and a rarely taken call.
    #[cold]
    #[inline(never)]
    fn spill_full(&mut self, series: Series) {
        let Some(spill) = self.spill.as_mut() else { return };
        match series {
            Series::Queue => spill_chunk(spill, QUEUE, &mut self.queue),
            Series::Sojourn => spill_chunk(spill, SOJOURN, &mut self.sojourn),
            Series::Drops => spill_chunk(spill, DROPS, &mut self.drops),
            Series::Cwnd => spill_chunk(spill, CWND, &mut self.cwnd),
            Series::PcpRate => spill_chunk(spill, PCP_RATE, &mut self.pcp_rate),
            Series::Pacing => spill_chunk(spill, PACING, &mut self.pacing),
            Series::Rtt => spill_chunk(spill, RTT, &mut self.rtt),
            Series::Segments => spill_chunk(spill, SEGMENTS, &mut self.segments),
            Series::TcpEvents => spill_chunk(spill, TCP_EVENTS, &mut self.events),
            Series::Monitors => spill_chunk(spill, MONITORS, &mut self.monitors),
            Series::FlowMonitor => spill_chunk(spill, FLOW_MONITOR, &mut self.flow_monitor),
            Series::Delay => spill_chunk(spill, delay::DELAY, &mut self.delay),
            Series::Telemetry => spill_chunk(spill, TELEMETRY, &mut self.telemetry),
        }
    }

    /// After a row of `series`, whose buffer now holds `rows`: write it out if it is full.
    #[inline]
    fn pushed(&mut self, rows: usize, series: Series) {
        if rows == self.chunk_rows {
            self.spill_full(series);
        }
    }

    /// The first error writing the spill folder, if any.
    pub fn spill_error(&self) -> Option<&str> {
        self.spill.as_ref().and_then(|s| s.error())
    }

    /// Bytes streamed to the spill folder so far, and whether it reached its limit and
    /// dropped rows (`Spill::full`); (0, false) without one.
    pub fn spilled(&self) -> (u64, bool) {
        self.spill.as_ref().map_or((0, false), |s| (s.written(), s.full()))
    }

    #[inline]
    fn link_wanted(&self, link: LinkId) -> bool {
        self.link_on.get(link.index()).copied().unwrap_or(false)
    }

    /// Whether anything is recorded as packets arrive at and leave `link` (queue lengths,
    /// sojourn times, the flow monitor's arrivals, per-flow per-link counters). Drops are
    /// not per hop: they are recorded whenever they happen.
    pub fn records_hops(&self, link: LinkId) -> bool {
        ((self.cfg.queues || self.cfg.sojourn) && self.link_wanted(link))
            || self.watch.is_some()
            || self.flow_links.is_on()
    }

    #[inline]
    pub fn wants_queue(&self, link: LinkId) -> bool {
        self.cfg.queues && self.link_wanted(link)
    }

    #[inline]
    pub fn queue_len(&mut self, now: Time, link: LinkId, packets: u64, bytes: u64) {
        if self.cfg.queues && self.link_wanted(link) {
            let rows = self.queue.push(now.as_secs_f64(), link.0, packets, bytes);
            self.pushed(rows, Series::Queue);
        }
    }

    #[inline]
    pub fn sojourn(&mut self, now: Time, link: LinkId, flow: FlowId, sojourn: Dur, ecn: u8) {
        if self.cfg.sojourn && self.link_wanted(link) {
            let rows = self.sojourn.push(now.as_secs_f64(), link.0, flow.0, sojourn.as_secs_f64(), ecn);
            self.pushed(rows, Series::Sojourn);
        }
    }

    /// A packet was discarded at `link`: the drops table's row, and the flow monitor's when it
    /// watches the packet's flow.
    #[inline]
    pub fn packet_dropped(&mut self, now: Time, link: LinkId, p: &Packet, reason: u8) {
        self.watch_drop(now, link, p);
        self.drop(now, link, p.flow, reason, p.size);
    }

    /// The drops table's row of a discarded packet.
    #[inline]
    pub fn drop(&mut self, now: Time, link: LinkId, flow: FlowId, reason: u8, size: u16) {
        if self.cfg.drops && self.link_wanted(link) {
            let rows = self.drops.push(now.as_secs_f64(), link.0, flow.0, reason, size as u32);
            self.pushed(rows, Series::Drops);
        }
    }

    #[inline]
    pub fn cwnd(&mut self, now: Time, flow: FlowId, cwnd: u64, ssthresh: u64) {
        if !self.cfg.cwnd {
            return;
        }
        let Some(thinning) = self.cwnd_thinning.as_mut() else {
            let rows = self.cwnd.push(now.as_secs_f64(), flow.0, cwnd, ssthresh);
            self.pushed(rows, Series::Cwnd);
            return;
        };
        for (at, w, t) in thinning.on_change(now, flow, cwnd, ssthresh).into_iter().flatten() {
            let rows = self.cwnd.push(at.as_secs_f64(), flow.0, w, t);
            self.pushed(rows, Series::Cwnd);
        }
    }

    /// A PCP sender's base rate changed; `increment` is the probe increment it would try next.
    #[inline]
    pub fn pcp_rate(&mut self, now: Time, flow: FlowId, rate: BitRate, increment: BitRate) {
        if self.cfg.cwnd {
            let rows = self.pcp_rate.push(now.as_secs_f64(), flow.0, rate.0, increment.0);
            self.pushed(rows, Series::PcpRate);
        }
    }

    /// A model-based controller's state changed (`mode` indexes `cc::bbr::MODE_NAMES`; the
    /// minimum RTT is NaN before the first sample).
    pub fn pacing(&mut self, now: Time, flow: FlowId, m: &crate::cc::ModelState) {
        if self.cfg.cwnd {
            let min_rtt = m.min_rtt.map_or(f64::NAN, |d| d.as_secs_f64());
            let rows = self.pacing.push(
                now.as_secs_f64(),
                flow.0,
                m.pacing_rate.0,
                m.bandwidth.0,
                min_rtt,
                m.mode,
                m.cycle_phase,
                m.pacing_gain,
                m.cwnd_gain,
            );
            self.pushed(rows, Series::Pacing);
        }
    }

    #[inline]
    pub fn rtt(&mut self, now: Time, flow: FlowId, rtt: Dur, srtt: Dur, rto: Dur) {
        if self.cfg.rtt {
            let rows =
                self.rtt.push(now.as_secs_f64(), flow.0, rtt.as_secs_f64(), srtt.as_secs_f64(), rto.as_secs_f64());
            self.pushed(rows, Series::Rtt);
        }
    }

    #[inline]
    pub fn segment(&mut self, now: Time, flow: FlowId, seq: u64, len: u32, is_ack: bool, retransmit: bool) {
        if self.cfg.segments {
            let rows = self.segments.push(now.as_secs_f64(), flow.0, seq, len, is_ack as u8, retransmit as u8);
            self.pushed(rows, Series::Segments);
        }
    }

    pub fn monitor(&mut self, now: Time, link: LinkId, name: &'static str, value: f64) {
        if !(self.cfg.monitors && self.link_wanted(link)) {
            return;
        }
        let id = match self.monitor_names.iter().position(|n| *n == name) {
            Some(i) => i,
            None => {
                self.monitor_names.push(name);
                self.monitor_names.len() - 1
            }
        };
        let rows = self.monitors.push(now.as_secs_f64(), link.0, id as u32, value);
        self.pushed(rows, Series::Monitors);
    }

    /// Whether the telemetry table takes link `link`'s stamps.
    pub fn records_telemetry(&self, link: LinkId) -> bool {
        self.cfg.telemetry && self.link_wanted(link)
    }

    /// Switch egress `link` wrote `hop` as hop `index` of packet `uid`'s telemetry record.
    pub fn telemetry_hop(&mut self, link: LinkId, flow: FlowId, uid: u32, index: usize, hop: &HopRecord) {
        if self.records_telemetry(link) {
            let (at, queue, rate) = (hop.at.as_secs_f64(), hop.queue.0, hop.rate.0);
            let rows = self.telemetry.push(at, link.0, flow.0, uid, index as u8, queue, hop.tx_bytes, rate);
            self.pushed(rows, Series::Telemetry);
        }
    }

    pub fn event(&mut self, now: Time, flow: FlowId, event: TcpEvent) {
        let rows = self.events.push(now.as_secs_f64(), flow.0, event as u8);
        self.pushed(rows, Series::TcpEvents);
    }

    /// The time-series tables, in a fixed order. When streaming, a table with rows on disk has
    /// its last rows written there too and comes back as an empty placeholder (no columns), and
    /// the spill folder's manifest is written; the error is the first one writing it.
    pub fn into_tables(mut self) -> (Vec<Table>, Result<(), String>) {
        let s = &mut self.spill;
        let names = &self.monitor_names;
        let tables = vec![
            finish_table(s, QUEUE, self.queue, |b| b.into_table(QUEUE)),
            finish_table(s, SOJOURN, self.sojourn, |b| b.into_table(SOJOURN)),
            finish_table(s, DROPS, self.drops, |b| b.into_table(DROPS)),
            finish_table(s, CWND, self.cwnd, |b| b.into_table(CWND)),
            finish_table(s, PCP_RATE, self.pcp_rate, |b| b.into_table(PCP_RATE)),
            finish_table(s, PACING, self.pacing, |b| b.into_table(PACING)),
            finish_table(s, RTT, self.rtt, |b| b.into_table(RTT)),
            finish_table(s, SEGMENTS, self.segments, |b| b.into_table(SEGMENTS)),
            finish_table(s, TCP_EVENTS, self.events, |b| b.into_table(TCP_EVENTS)),
            finish_table(s, MONITORS, self.monitors, |b| monitor_table(b, names)),
            finish_table(s, FLOW_MONITOR, self.flow_monitor, flow_monitor::table),
            // At most a row per listed flow and link: kept in memory.
            self.flow_links.into_table(),
            finish_table(s, delay::DELAY, self.delay, delay::table),
            finish_table(s, TELEMETRY, self.telemetry, |b| b.into_table(TELEMETRY)),
        ];
        let written = match self.spill {
            Some(mut spill) => {
                spill.set_dictionary(MONITORS, "name", names.iter().map(|n| n.to_string()).collect());
                spill.set_dictionary(FLOW_MONITOR, "event", flow_monitor::event_names());
                spill.finish()
            }
            None => Ok(()),
        };
        (tables, written)
    }
}

/// The monitors table with variable names spelled out.
fn monitor_table(m: MonitorTrace, names: &[&'static str]) -> Table {
    let name = m.name.iter().map(|&i| names[i as usize].to_string()).collect();
    Table::new(MONITORS)
        .with("time_s", table::Column::F64(m.time_s))
        .with("link", table::Column::U32(m.link))
        .with("name", table::Column::Str(name))
        .with("value", table::Column::F64(m.value))
}
