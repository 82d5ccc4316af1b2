//! The recorder: typed records appended to columnar buffers while the simulation runs. Each
//! record family is switched by the scenario's `record` section and costs one branch when off.
//! Times are stored as float seconds (exact to the nanosecond for runs under 104 days).

pub mod flow_monitor;
pub mod pcap;
pub mod table;
pub mod thinning;

use crate::packet::{FlowId, LinkId};
use crate::units::{BitRate, Dur, Time};
use flow_monitor::{FlowMonitorConfig, FlowMonitorTrace, Watch};
use serde::{Deserialize, Serialize};
use table::{columnar, Table};
use thinning::CwndThinning;

/// What to record. Summary tables (per link, per flow) are always produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordConfig {
    /// Queue length in packets and bytes at every change (exact, event-driven).
    #[serde(default = "yes")]
    pub queues: bool,
    /// One row per packet leaving a queue with its sojourn time.
    #[serde(default)]
    pub sojourn: bool,
    /// One row per drop with its reason.
    #[serde(default = "yes")]
    pub drops: bool,
    /// Congestion state at every change: TCP's window and slow-start threshold (`cwnd` table),
    /// PCP's base rate and probe increment (`pcp_rate` table).
    #[serde(default = "yes")]
    pub cwnd: bool,
    /// At most one `cwnd` row per flow per interval, plus every decrease with the value before
    /// it (`thinning.rs`); every change when absent.
    #[serde(default)]
    pub cwnd_interval: Option<Dur>,
    /// Every RTT sample with the smoothed RTT and RTO after it.
    #[serde(default = "yes")]
    pub rtt: bool,
    /// Every TCP segment sent and ACK received (for time-sequence graphs).
    #[serde(default)]
    pub segments: bool,
    /// Internal variables that queue disciplines report (RED's average, max_p, ...).
    #[serde(default = "yes")]
    pub monitors: bool,
    /// Restrict queue/sojourn/drop/monitor records to these links (names "a->b"); all when absent.
    #[serde(default)]
    pub links: Option<Vec<String>>,
    /// Links to capture in pcap format, by name "a->b".
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Every packet event of one flow in a time window (`flow_monitor.rs`).
    #[serde(default)]
    pub monitor_flow: Option<FlowMonitorConfig>,
}

fn yes() -> bool {
    true
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
}

impl TcpEvent {
    pub const NAMES: [&'static str; 7] = [
        "timeout",
        "fast_retransmit",
        "partial_ack_retransmit",
        "aborted",
        "ecn_reduction",
        "source_quench",
        "local_cwr",
    ];
}

columnar!(QueueTrace { time_s: f64, link: u32, packets: u64, bytes: u64 });
columnar!(SojournTrace { time_s: f64, link: u32, flow: u32, sojourn_s: f64 });
columnar!(DropTrace { time_s: f64, link: u32, flow: u32, reason: u8, size: u32 });
columnar!(CwndTrace { time_s: f64, flow: u32, cwnd: u64, ssthresh: u64 });
columnar!(PcpRateTrace { time_s: f64, flow: u32, rate_bps: u64, increment_bps: u64 });
columnar!(RttTrace { time_s: f64, flow: u32, rtt_s: f64, srtt_s: f64, rto_s: f64 });
columnar!(SegmentTrace { time_s: f64, flow: u32, seq: u64, len: u32, is_ack: u8, retransmit: u8 });
columnar!(EventTrace { time_s: f64, flow: u32, event: u8 });
columnar!(MonitorTrace { time_s: f64, link: u32, name: u32, value: f64 });

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
    pub rtt: RttTrace,
    pub segments: SegmentTrace,
    pub events: EventTrace,
    pub monitors: MonitorTrace,
    /// Names of monitored variables; `monitors.name` indexes this.
    monitor_names: Vec<&'static str>,
    /// The flow watched by the high-frequency monitor, if any, and its records.
    watch: Option<Watch>,
    pub flow_monitor: FlowMonitorTrace,
    cwnd_thinning: Option<CwndThinning>,
}

impl Recorder {
    pub fn new(cfg: RecordConfig, link_on: Vec<bool>) -> Self {
        let cwnd_thinning = cfg.cwnd_interval.map(CwndThinning::new);
        Recorder { cfg, link_on, cwnd_thinning, ..Default::default() }
    }

    #[inline]
    fn link_wanted(&self, link: LinkId) -> bool {
        self.link_on.get(link.index()).copied().unwrap_or(false)
    }

    #[inline]
    pub fn wants_queue(&self, link: LinkId) -> bool {
        self.cfg.queues && self.link_wanted(link)
    }

    #[inline]
    pub fn queue_len(&mut self, now: Time, link: LinkId, packets: u64, bytes: u64) {
        if self.cfg.queues && self.link_wanted(link) {
            self.queue.push(now.as_secs_f64(), link.0, packets, bytes);
        }
    }

    #[inline]
    pub fn sojourn(&mut self, now: Time, link: LinkId, flow: FlowId, sojourn: Dur) {
        if self.cfg.sojourn && self.link_wanted(link) {
            self.sojourn.push(now.as_secs_f64(), link.0, flow.0, sojourn.as_secs_f64());
        }
    }

    #[inline]
    pub fn drop(&mut self, now: Time, link: LinkId, flow: FlowId, reason: u8, size: u16) {
        self.watch_drop(now, link, flow);
        if self.cfg.drops && self.link_wanted(link) {
            self.drops.push(now.as_secs_f64(), link.0, flow.0, reason, size as u32);
        }
    }

    #[inline]
    pub fn cwnd(&mut self, now: Time, flow: FlowId, cwnd: u64, ssthresh: u64) {
        if !self.cfg.cwnd {
            return;
        }
        let Some(thinning) = self.cwnd_thinning.as_mut() else {
            return self.cwnd.push(now.as_secs_f64(), flow.0, cwnd, ssthresh);
        };
        for (at, w, t) in thinning.on_change(now, flow, cwnd, ssthresh).into_iter().flatten() {
            self.cwnd.push(at.as_secs_f64(), flow.0, w, t);
        }
    }

    /// A PCP sender's base rate changed; `increment` is the probe increment it would try next.
    #[inline]
    pub fn pcp_rate(&mut self, now: Time, flow: FlowId, rate: BitRate, increment: BitRate) {
        if self.cfg.cwnd {
            self.pcp_rate.push(now.as_secs_f64(), flow.0, rate.0, increment.0);
        }
    }

    #[inline]
    pub fn rtt(&mut self, now: Time, flow: FlowId, rtt: Dur, srtt: Dur, rto: Dur) {
        if self.cfg.rtt {
            self.rtt.push(now.as_secs_f64(), flow.0, rtt.as_secs_f64(), srtt.as_secs_f64(), rto.as_secs_f64());
        }
    }

    #[inline]
    pub fn segment(&mut self, now: Time, flow: FlowId, seq: u64, len: u32, is_ack: bool, retransmit: bool) {
        if self.cfg.segments {
            self.segments.push(now.as_secs_f64(), flow.0, seq, len, is_ack as u8, retransmit as u8);
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
        self.monitors.push(now.as_secs_f64(), link.0, id as u32, value);
    }

    pub fn event(&mut self, now: Time, flow: FlowId, event: TcpEvent) {
        self.events.push(now.as_secs_f64(), flow.0, event as u8);
    }

    /// The time-series tables, in a fixed order.
    pub fn into_tables(self) -> Vec<Table> {
        vec![
            self.queue.into_table("queue"),
            self.sojourn.into_table("sojourn"),
            self.drops.into_table("drops"),
            self.cwnd.into_table("cwnd"),
            self.pcp_rate.into_table("pcp_rate"),
            self.rtt.into_table("rtt"),
            self.segments.into_table("segments"),
            self.events.into_table("tcp_events"),
            monitor_table(self.monitors, &self.monitor_names),
            flow_monitor::table(self.flow_monitor),
        ]
    }
}

/// The monitors table with variable names spelled out.
fn monitor_table(m: MonitorTrace, names: &[&'static str]) -> Table {
    let name = m.name.iter().map(|&i| names[i as usize].to_string()).collect();
    Table::new("monitors")
        .with("time_s", table::Column::F64(m.time_s))
        .with("link", table::Column::U32(m.link))
        .with("name", table::Column::Str(name))
        .with("value", table::Column::F64(m.value))
}
