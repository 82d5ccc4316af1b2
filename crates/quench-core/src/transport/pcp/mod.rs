//! PCP, the Probe Control Protocol (Anderson, Collins, Krishnamurthy, Zahorjan, NSDI '06):
//! endpoint congestion control that tests for available bandwidth with short probes and
//! sends paced data at a base rate, instead of growing a window until loss.
//!
//! Mechanism as built (paper section in brackets; `PcpConfig` key in backquotes):
//! - **Connection set-up** [3]: SYN / SYN-ACK as TCP; the SYN-ACK's echo gives the first RTT.
//!   No FIN: the transfer ends when the last byte is acknowledged (the receiver records the
//!   delivery of the last byte, as TCP's does, so the flows table's response time is first
//!   SYN to last byte delivered).
//! - **Paced data** [3.1]: packets leave equally spaced at the base rate (`size·8/rate`).
//! - **Timestamps**: the receiver ACKs every data packet at once and echoes its send time; the
//!   ACK's own send time is the receive time, so the sender sees each packet's one-way delay.
//! - **Probes** [3.1]: `probe_packets` (5) packets paced at base + increment; the rate is set by
//!   the spacing (time span), not the byte count. A probe lasts at most `probe_span_rtts` (0.5)
//!   RTTs, with fewer packets (never under 3) at low rates: at two packets per RTT five would
//!   last two RTTs, a large share of a short flow, and many flows' long probes overlap into an
//!   overload. A probe is accepted iff the least-squares slope of its one-way delays against
//!   send time (s/s) is at most `slope_tolerance` (0.02: the paper's "flat or decreasing" to
//!   within one packet of cross traffic over the probe, so that such jitter does not fail a
//!   probe that found capacity; see `config.rs`), plus `slope_confidence` (0) standard errors
//!   of the fit; a lost probe packet rejects it, and a probe that cannot keep its spacing
//!   (window or data ran out) is inconclusive and retried an RTT later.
//! - **Direct jump** [3.1]: on acceptance `base += increment` at once.
//! - **Search** [3.3]: the increment doubles after a success (and the next probe starts at
//!   once) and halves after a failure, never below `min_increment` (1 packet per RTT). The
//!   first probe without history asks for one packet per half RTT.
//! - **Back-off** [3.3]: after n consecutive failures the next probe waits 2^(n−1) RTTs, at
//!   most `max_backoff_rtts` (32). Probes start only while the last compensation epoch saw no
//!   standing queue (a probe during draining would see falling delays and pass wrongly).
//! - **History** [3.4]: per source host and destination (see `history.rs`): the last base rate
//!   and, beyond the paper, the smallest one-way delay seen (`history_owd`), from which a new
//!   flow measures queueing delay, so a queue standing when it opens is not taken for the path.
//! - **Rate compensation** [3.2]: once per epoch (about 1.5 RTTs, see `compensation.rs`) the
//!   mean queueing delay `d = owd − min_owd` of base-rate packets, if above `queue_tolerance`
//!   (1 ms), is drained: the sender paces at `max(0, 1 − d/srtt)` of its base rate for one RTT
//!   (`drain_once`), and scales the base rate for good by `1/(1 + s)`, where `s` is the slope
//!   of the epoch's delays against send time (the queue is fed `1 + s` times faster than it
//!   drains; `compensate_growth`). The base rate never falls below `min_rate` (1 packet per
//!   RTT) so the flow keeps a delay signal. One sample with `queue_alarm_rtts` (0.25) RTTs of
//!   queue ends the epoch at once, and a queue that keeps growing while a cut drains it raises
//!   a new alarm. The literal form (`1 − d/RTT` for good, at the epoch's end only) neither
//!   removes the excess that built the queue nor reacts before the queue overflows. The next
//!   epoch starts one RTT after a cut, so the draining queue is not counted twice. A cut also
//!   restarts the search at `min_increment`, so every sender competes for the freed capacity
//!   in equal small steps (otherwise a flow that had backed off loses every race), but keeps
//!   any back-off already due (reset by every cut, the back-offs of many flows restart together
//!   and their probes overload the link). Measurements behind each of these choices:
//!   docs/reproductions.md#pcp06.
//! - **Tit-for-tat** [3.5]: after `tit_for_tat_rounds` (5) consecutive compensations that did
//!   not shrink the queue, compensation is weakened `tit_for_tat_factor` (10)-fold while it
//!   stays ineffective, i.e. until an epoch sees no standing queue. Meanwhile the queue is
//!   taken to be another protocol's (TCP's): probes may start despite it, a probe passes if
//!   the delay rises no faster than the last epoch's base-rate packets saw (TCP's own growth),
//!   and a weakened cut does not restart the search. Without these, PCP beside a TCP flow falls
//!   to its floor whether or not tit-for-tat is on, since it gains rate only through accepted
//!   probes (`tests/pcp.rs`).
//! - **Flow control**: at most `receive_window` bytes outstanding, as TCP.
//! - **Loss recovery** (left open by the paper; `scoreboard.rs`): cumulative ACK plus the echo,
//!   which names the packet delivered; a packet overtaken by `reorder_threshold` (3) later
//!   deliveries is resent first at the pacing rate; a retransmission timeout (TCP's estimator,
//!   `rto`) declares everything in flight lost. Losses do not change the rate: PCP reacts to
//!   delay, and a timeout only fails a probe in flight.
//! - "Probabilistic accept" [3.1] is not built: its rule is not in our copy of the paper.
//!
//! Wire format: PCP packets are TCP-shaped (40 header bytes, `Proto::Tcp`, so pcap shows SYN,
//! SYN-ACK, data and ACKs). Data sequence numbers start at 1 after the SYN. An ACK's `seq`
//! field carries the echoed send time in nanoseconds (TCP's ACKs send no data, so the field is
//! free; keeping the Packet at 96 bytes), which the pcap writer prints as a 32-bit sequence.
//!
//! Must not touch: the world or another endpoint. The sender and the receiver act only through
//! their `AgentCx`; the one state PCP flows share is their host's history table (`history.rs`).

mod compensation;
mod config;
mod flow;
pub mod history;
pub mod probe;
mod receiver;
mod scoreboard;
mod sender;

pub use config::PcpConfig;
pub use flow::PcpFlowSpec;
pub use history::{HostHistory, SharedHistory};
pub use receiver::PcpReceiver;
pub use sender::PcpSender;

/// Timer kinds of a PCP sender.
pub(crate) const TIMER_RTO: u8 = 0;
pub(crate) const TIMER_PACE: u8 = 1;
pub(crate) const TIMER_PROBE: u8 = 2;

/// The SYN occupies sequence number 0 (as in quench's TCP); data starts after it.
pub(crate) const FIRST_DATA_SEQ: u64 = 1;
