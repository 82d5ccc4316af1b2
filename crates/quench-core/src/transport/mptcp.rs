//! Multipath TCP (RFC 8684, MPTCP v1): one connection between two hosts carried by several
//! TCP subflows, each with its own five-tuple so that ECMP hashes each onto a path of its own
//! (Raiciu, Barre, Pluntke, Greenhalgh, Wischik, Handley, "Improving datacenter performance
//! and robustness with multipath TCP", SIGCOMM 2011).
//!
//! Sender: subflow 0 opens at the flow's start; once it is established the others open (as
//! Linux's `ndiffports` path manager does). Each subflow is a whole TCP sender
//! ([`TcpSender::subflow`]): its own sequence space, window, RTT estimator and loss recovery
//! (duplicate ACKs, SACK, RTO as `tcp` configures them). The connection owns one data sequence
//! space; its scheduler hands the next segment of data to the established subflow with the
//! lowest smoothed RTT whose window has room (Linux's default scheduler, `mptcp_sched.c`),
//! within the receiver's window beyond the data-level acknowledgement, and records the mapping
//! (subflow offset to data sequence number, RFC 8684's DSS mapping). The data-level
//! acknowledgement (RFC 8684's DATA_ACK) is what the subflows' cumulative ACKs imply through the
//! mapping. Each subflow recovers its own losses; with `reinject` (on by default) the
//! connection also sends a stalled subflow's data again on another, as Linux's MPTCP does
//! (net/mptcp/protocol.c): a connection-level retransmission timer (`mptcp_retransmit_timer`),
//! armed while data is unacknowledged at the data level and restarted whenever the DATA_ACK
//! advances (`__mptcp_clean_una`), sends the oldest unacknowledged data again on an idle
//! subflow when it fires (`__mptcp_retrans`, `mptcp_subflow_get_retrans`); a subflow that has
//! heard no ACK over more than `STALE_LOSS_CNT` such expiries while another makes progress is
//! stale (`mptcp_pm_subflow_chk_stale`, net/mptcp/pm.c): the scheduler passes it by until an
//! ACK arrives on it, and its unacknowledged data is scheduled again on the others
//! (`__mptcp_retransmit_pending_data`).
//! Receiver: one TCP receiver per subflow (its ACKs, SACK blocks, delayed ACKs), and one
//! connection-level reassembly of the data sequence space; the transfer completes when all
//! its bytes have arrived in order at the connection level.
//!
//! Congestion control: `coupling = "lia"` couples the subflows' windows (RFC 6356, `cc/lia.rs`,
//! through a [`Coupling`] this connection writes after each subflow acts), `"olia"` as Khalili
//! et al.'s OLIA (`cc/olia.rs`); `"uncoupled"` gives each subflow its own `cc` (NewReno, CUBIC,
//! ...), for comparison.
//!
//! Wire format: every packet of subflow i carries i in its sequence numbers' top byte
//! (`packet::subflow`), both directions, standing for the subflow's port pair in the ECMP hash.
//! A data segment carries its data sequence number in the ACK field (a sender's data segments
//! acknowledge nothing in a one-way transfer) and an ACK of the receiver its DATA_ACK in the
//! rest of the sequence field (its own is always 1), standing for the DSS option's fields.
//! Both are added as a packet leaves an endpoint and stripped as it arrives, so a subflow's TCP
//! endpoints see their own sequence space. The options' bytes are Linux's
//! (`packet::mptcp_option`): MP_CAPABLE on the first subflow's SYN and SYN-ACK, MP_JOIN on
//! the others', a DSS on every other segment (24 bytes with a mapping, within the MSS; 8 on
//! the sender's segments without data, 12 on the receiver's ACKs, which leaves one SACK block
//! room beside timestamps); the capture writes them (`trace/pcap.rs`).
//! Timers: subflow i's TCP timer k has kind `i * TIMER_STRIDE + k`; the connection's own
//! retransmission timer has kind `CONNECTION_TIMER`, beyond the TCP endpoints' seven.
//! Owns the connection's scheduler, mapping and reassembly; acts only through its `AgentCx`.

use crate::cc::lia::{Coupling, Lia, SubflowWindow};
use crate::cc::olia::Olia;
use crate::cc::{deserialize_cc, AnyCc, CcSpec, CongestionControl};
use crate::error::{nested_message, ConfigError};
use crate::packet::{mptcp_option, subflow, tcp_flags, AgentId, FlowId, NodeId, Packet};
use crate::ranges::FrontVec;
use crate::rng::{Rng, StreamKind};
use crate::telemetry::IntRecord;
use crate::trace::table::{f64s, u64s, Column, Table};
use crate::trace::Recorder;
use crate::transport::tcp::{resolve_profile, Connection, TcpConfig, TcpReceiver, TcpSender, UpperOptions, HEADERS};
use crate::transport::{
    Admission, Agent, AgentCx, BuiltFlow, DeliveryCounts, Endpoint, FlowBuild, FlowReport, FlowRow, Host, SendCounts,
    Timer, TimerSlot, TransportSpec,
};
use crate::units::{Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Timer kinds per subflow: room for the TCP sender's six (`tcp::TcpTimer`), so that 32
/// subflows' kinds fit a byte.
const TIMER_STRIDE: u8 = 8;
/// Raiciu et al. 2011 used 8 subflows per connection on their FatTree (section 4).
pub const DEFAULT_SUBFLOWS: u32 = 8;
/// The most subflows a connection may have (each needs its index in a sequence number's
/// top byte and its timers in a byte of kinds).
pub const MAX_SUBFLOWS: u32 = 32;
/// The data sequence number of the first data byte; the subflows' own data starts at 1.
const SUBFLOW_FIRST_DATA_SEQ: u64 = 1;
/// The connection's retransmission timer: the last kind of subflow 0's stride, which the TCP
/// endpoints' seven timers (`tcp::TcpTimer`) leave free.
const CONNECTION_TIMER: u8 = TIMER_STRIDE - 1;
/// The connection's retransmission interval when no busy subflow has a timer to go by: Linux's
/// `TCP_RTO_MIN` (include/net/tcp.h), which `__mptcp_set_timeout` falls back on.
const CONNECTION_RTO_FLOOR: Dur = Dur::from_millis(200);
/// Expiries of the connection's timer a busy subflow may go without an ACK before it is
/// stale: the default of Linux's `net.mptcp.stale_loss_cnt` (net/mptcp/ctrl.c).
const STALE_LOSS_CNT: u8 = 4;
/// The most data one expiry of the connection's timer sends again: Linux's data fragment
/// (`struct mptcp_data_frag`), carved from the socket's page fragment, of at most 32 KiB
/// (`SKB_FRAG_PAGE_ORDER`, include/net/sock.h).
const REINJECT_BYTES: u64 = 32 * 1024;

/// How the subflows' windows grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CouplingKind {
    /// RFC 6356's Linked Increases Algorithm.
    #[default]
    Lia,
    /// Khalili et al.'s Opportunistic LIA (CoNEXT 2012).
    Olia,
    /// Each subflow alone, with the flow's `cc`.
    Uncoupled,
}

impl CouplingKind {
    /// The coupled controller's kind; None for uncoupled subflows.
    fn controller(self) -> Option<&'static str> {
        match self {
            CouplingKind::Lia => Some("lia"),
            CouplingKind::Olia => Some("olia"),
            CouplingKind::Uncoupled => None,
        }
    }
}

/// A multipath transfer:
/// `{ kind = "mptcp", src, dst, bytes, subflows = 8, coupling = "lia", tcp = { ... } }`.
/// Its `tcp` and `cc` are what its TCP profile (`tcp.profile`, linux by default, as a TCP
/// flow's) gives, with the keys written over them; written back, every key is explicit and
/// reads back the same.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "WrittenMptcpFlow")]
pub struct MptcpFlowSpec {
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    /// Transfer size; unlimited when absent.
    pub bytes: Option<Bytes>,
    pub start: Dur,
    /// Subflows the connection opens, 1 to 32.
    pub subflows: u32,
    pub coupling: CouplingKind,
    /// Send a stalled subflow's data again on another (Linux's MPTCP); on by default.
    pub reinject: bool,
    /// Every subflow's controller: LIA's table with `coupling = "lia"`, each uncoupled
    /// subflow's own otherwise (the profile's when not written).
    pub cc: CcSpec,
    /// Every subflow's TCP (its MSS, SACK, delayed ACKs, RTO); `receive_window` is the
    /// connection's one receive buffer.
    pub tcp: TcpConfig,
}

/// A multipath flow as written, before its profile fills what it leaves out.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenMptcpFlow {
    #[serde(default)]
    name: Option<String>,
    src: String,
    dst: String,
    #[serde(default)]
    bytes: Option<Bytes>,
    #[serde(default)]
    start: Dur,
    #[serde(default = "default_subflows")]
    subflows: u32,
    #[serde(default)]
    coupling: CouplingKind,
    #[serde(default = "default_reinject")]
    reinject: bool,
    #[serde(default)]
    cc: Option<Value>,
    #[serde(default)]
    tcp: Option<Value>,
}

fn default_subflows() -> u32 {
    DEFAULT_SUBFLOWS
}

fn default_reinject() -> bool {
    true
}

impl TryFrom<WrittenMptcpFlow> for MptcpFlowSpec {
    type Error = String;
    fn try_from(w: WrittenMptcpFlow) -> Result<Self, String> {
        let coupled = w.coupling.controller();
        let cc = match (coupled, w.cc) {
            (Some(kind), None) => Some(serde_json::json!({ "kind": kind })),
            (_, cc) => cc,
        };
        let (tcp, cc) = resolve_profile(w.tcp, cc).map_err(|e| nested_message(&e.path, e.message))?;
        let at = |key: &str, e: String| {
            let inner = ConfigError::from_serde(".", &e);
            nested_message(&ConfigError::new(inner.path, "").within(key).path, inner.message)
        };
        let cc = deserialize_cc(cc).map_err(|e| at("cc", e.to_string()))?;
        if coupled.is_some_and(|kind| kind != cc.kind()) {
            let why = format!("{} needs coupling = \"uncoupled\" (a coupling is its own controller)", cc.kind());
            return Err(nested_message("cc", why));
        }
        let tcp = crate::tagged::body::<TcpConfig, serde_json::Error>(tcp).map_err(|e| at("tcp", e.to_string()))?;
        let (name, src, dst, bytes, start) = (w.name, w.src, w.dst, w.bytes, w.start);
        let (subflows, coupling, reinject) = (w.subflows, w.coupling, w.reinject);
        Ok(MptcpFlowSpec { name, src, dst, bytes, start, subflows, coupling, reinject, cc, tcp })
    }
}

impl MptcpFlowSpec {
    /// Subflow `i`'s controller: LIA coupled through `coupling`, or the flow's `cc` alone.
    fn controller(&self, coupling: Option<&Coupling>, i: usize) -> Result<AnyCc, ConfigError> {
        match (coupling, &self.cc) {
            (Some(c), CcSpec::Lia(cfg)) => Ok(AnyCc::Lia(Box::new(Lia::coupled(cfg, c.clone(), i)?))),
            (Some(c), CcSpec::Olia(cfg)) => Ok(AnyCc::Olia(Box::new(Olia::coupled(cfg, c.clone(), i)?))),
            _ => self.cc.build(),
        }
        .map_err(|e| e.within("cc"))
    }
}

impl TransportSpec for MptcpFlowSpec {
    crate::transport::common_flow_keys!();
    fn handshake(&self) -> crate::packet::Handshake {
        crate::packet::Handshake { mptcp: true, ..super::tcp::handshake(&self.tcp) }
    }
    fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_SUBFLOWS).contains(&self.subflows) {
            let why = format!("{} must be between 1 and {MAX_SUBFLOWS}", self.subflows);
            return Err(ConfigError::new("subflows", why));
        }
        self.tcp.validate().map_err(|e| e.within("tcp"))?;
        let dss = mptcp_option::DSS_DATA as u32;
        if self.tcp.segment_payload() <= dss {
            let why = format!("{} bytes leave no room for data beside the {dss}-byte DSS option", self.tcp.mss);
            return Err(ConfigError::new("tcp.mss", why));
        }
        Ok(())
    }
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        let size = self.tcp.dont_fragment.then_some(((self.tcp.mss + HEADERS) as u64, "tcp.mss"));
        cx.check_path(size)?;
        cx.check_return_path()?;
        let n = self.subflows as usize;
        let coupling = self.coupling.controller().map(|_| Coupling::new(n));
        let ack_size = HEADERS + self.tcp.option_bytes() + mptcp_option::DSS_ACK64 as u32;
        let path = cx.path_facts((self.tcp.mss + HEADERS) as u64, ack_size as u64);
        let (forward, backward) = cx.connections();
        let (mut senders, mut receivers) = (Vec::with_capacity(n), Vec::with_capacity(n));
        // Each end's configuration, one copy for every subflow and every connection alike.
        let agreed = cx.shared(super::tcp::options::agreed(&self.tcp));
        let receiving_end = cx.shared(super::tcp::options::receiving_end(&self.tcp));
        for i in 0..n {
            let mut cc = self.controller(coupling.as_ref(), i)?;
            let caps = cc.capabilities();
            if caps.rate_samples || caps.rtt_every_ack_needed_by.is_some() {
                return Err(ConfigError::new("cc", "a subflow's controller must be a window controller"));
            }
            cc.take_random_stream(Rng::stream(cx.seed, StreamKind::Agent, cx.sender.0 as u64 | (i as u64) << 32));
            cc.take_path(&path);
            let ect = caps.ect_on_every_packet.then_some(caps.ect_codepoint);
            let (to_receiver, to_sender) = subflow_connections(forward, backward, i);
            senders.push(Subflow::new(TcpSender::subflow(to_receiver, &self.tcp, agreed.clone(), cc)));
            receivers.push(TcpReceiver::new(to_sender, receiving_end.clone(), None, caps.ecn_feedback, ect));
        }
        let bytes = self.bytes.map(|b| b.0);
        let window = self.tcp.receive_window.0;
        let mss = subflow_connections(forward, backward, 0).0.segment_payload(&self.tcp) as u64;
        let mut sender = MptcpSender::new(forward, senders, coupling, bytes, window, mss);
        sender.reinject = self.reinject;
        Ok(BuiltFlow {
            sender: Agent::MptcpSender(Box::new(sender)),
            receiver: Agent::MptcpReceiver(Box::new(MptcpReceiver::new(backward, receivers, bytes))),
            cc: self.cc.kind(),
            bytes,
            telemetry: None,
        })
    }
}

/// Subflow `index`'s two ends, from the connection's: the options each end's segments carry
/// (`packet::mptcp_option`), MP_CAPABLE on the first subflow's handshake and MP_JOIN on the
/// others'.
fn subflow_connections(forward: Connection, backward: Connection, index: usize) -> (Connection, Connection) {
    let end = |from_opener: bool| {
        let carried = |syn, has_data| mptcp_option::Carried::on(index as u64, from_opener, syn, has_data).bytes();
        UpperOptions { syn: carried(true, false), data: carried(false, true), ack: carried(false, false) }
    };
    (Connection { upper: end(true), ..forward }, Connection { upper: end(false), ..backward })
}

/// What a subflow's packets carry for the connection (the DSS option's fields): the sender's
/// mapping, to stamp each data segment's data sequence number; the receiver's DATA_ACK.
#[derive(Clone, Copy)]
enum Dss<'a> {
    Mapping(&'a VecDeque<Chunk>),
    DataAck(u64),
}

/// The host as one subflow's TCP endpoint sees it: its packets leave with the subflow's index
/// in their sequence number (and a data segment with its data sequence number in the ACK
/// field, an ACK with the DATA_ACK in its sequence field), and its timers are armed under the
/// subflow's kinds.
struct SubflowHost<'a, H: Host> {
    host: &'a mut H,
    index: u8,
    dss: Dss<'a>,
}

impl<H: Host> Host for SubflowHost<'_, H> {
    fn send(&mut self, node: NodeId, mut pkt: Packet) -> Admission {
        match self.dss {
            Dss::Mapping(map) if pkt.payload > 0 => pkt.ack = data_seq_of(map, pkt.seq - SUBFLOW_FIRST_DATA_SEQ),
            Dss::DataAck(data_ack) if !pkt.has_flag(tcp_flags::SYN) => pkt.seq = data_ack & subflow::SEQ_MASK,
            _ => {}
        }
        pkt.seq |= (self.index as u64) << subflow::SEQ_SHIFT;
        self.host.send(node, pkt)
    }
    fn arm(&mut self, owner: AgentId, at: Time, timer: Timer) {
        let kind = self.index * TIMER_STRIDE + timer.kind;
        self.host.arm(owner, at, Timer { kind, ..timer });
    }
    fn recorder(&mut self) -> &mut Recorder {
        self.host.recorder()
    }
    fn telemetry(&self, uid: u32) -> Option<IntRecord> {
        self.host.telemetry(uid)
    }
    // The host queue is the connection's: its subflows share one count and one wake-up.
    fn count_host_queue(&mut self, agent: AgentId) {
        self.host.count_host_queue(agent);
    }
    fn host_queued(&self, agent: AgentId) -> Bytes {
        self.host.host_queued(agent)
    }
    fn wake_on_host_room(&mut self, agent: AgentId) {
        self.host.wake_on_host_room(agent);
    }
}

/// Run `act` on a subflow's endpoint through a [`SubflowHost`] for subflow `index`.
fn as_subflow<H: Host, R>(
    cx: &mut AgentCx<H>,
    index: usize,
    dss: Dss<'_>,
    act: impl FnOnce(&mut AgentCx<SubflowHost<'_, H>>) -> R,
) -> R {
    let mut host = SubflowHost { host: &mut *cx.host, index: index as u8, dss };
    let mut sub = AgentCx::new(cx.now, cx.me, cx.node, &mut host);
    act(&mut sub)
}

/// The subflow an arriving packet belongs to, its sequence number made the subflow's own.
fn demultiplex(pkt: &mut Packet) -> usize {
    let index = subflow::index(pkt.seq) as usize;
    pkt.seq &= subflow::SEQ_MASK;
    index
}

/// A stretch of data handed to a subflow: where it starts in the subflow's data (from 0), its
/// data sequence number and length (RFC 8684's DSS mapping).
#[derive(Clone, Copy, Debug)]
struct Chunk {
    subflow_offset: u64,
    data_seq: u64,
    len: u64,
}

/// The data sequence number of the subflow data byte at `offset` (its chunk is unacknowledged,
/// so still mapped).
fn data_seq_of(map: &VecDeque<Chunk>, offset: u64) -> u64 {
    let i = map.partition_point(|c| c.subflow_offset + c.len <= offset);
    map.get(i).map_or(0, |c| c.data_seq + (offset - c.subflow_offset))
}

/// One subflow at the sender: its TCP sender, the mapping of its unacknowledged data, and
/// what the connection's timer knows of its progress (Linux's `stale_count`,
/// `stale_rcv_tstamp` and `stale` in `struct mptcp_subflow_context`).
pub struct Subflow {
    pub tcp: TcpSender,
    mapping: VecDeque<Chunk>,
    /// When a packet last arrived on it (Linux's `rcv_tstamp`).
    last_ack: Time,
    /// `last_ack` as the connection's timer last saw it, and its expiries since without one.
    stale_seen: Time,
    stale_count: u8,
    /// Passed by the scheduler until an ACK arrives on it.
    stale: bool,
}

impl Subflow {
    fn new(tcp: TcpSender) -> Self {
        let zero = Time::default();
        Subflow { tcp, mapping: VecDeque::new(), last_ack: zero, stale_seen: zero, stale_count: 0, stale: false }
    }

    /// Data handed to it and not yet acknowledged on it (Linux's
    /// `!tcp_rtx_and_write_queues_empty`).
    fn busy(&self) -> bool {
        self.tcp.bytes_acked() < self.tcp.assigned()
    }

    /// Whether the scheduler may hand it data: established with room, and not stale.
    fn open(&self) -> bool {
        !self.stale && self.tcp.has_room()
    }
}

#[derive(Clone, Debug, Default)]
pub struct MptcpSenderStats {
    /// Data bytes the scheduler handed to the subflows (sent again on another included).
    pub scheduled_bytes: u64,
    /// Data bytes handed again to a subflow other than the one that first carried them.
    pub reinjected_bytes: u64,
    /// Subflows found stale.
    pub stale_subflows: u64,
}

pub struct MptcpSender {
    conn: Connection,
    subflows: Vec<Subflow>,
    coupling: Option<Coupling>,
    /// One past the last data byte; unlimited transfers have none.
    end: Option<u64>,
    /// The next data sequence number to schedule.
    next_data_seq: u64,
    /// Data acknowledged cumulatively at the connection level (DATA_ACK), and what the
    /// subflows acknowledged above it.
    data_acked: u64,
    acked_above: FrontVec<(u64, u64)>,
    /// The receiver's buffer: data is scheduled only up to `data_acked + window`.
    window: u64,
    mss: u64,
    /// The subflows beyond the first have been opened.
    joined: bool,
    /// Send a stalled subflow's data again on another.
    reinject: bool,
    /// The connection's retransmission timer (Linux's msk `icsk_retransmit_timer`).
    rtx: TimerSlot,
    /// Data ranges to hand to a subflow again, before new data.
    again: VecDeque<(u64, u64)>,
    pub stats: MptcpSenderStats,
}

impl MptcpSender {
    fn new(
        conn: Connection,
        subflows: Vec<Subflow>,
        coupling: Option<Coupling>,
        bytes: Option<u64>,
        window: u64,
        mss: u64,
    ) -> Self {
        MptcpSender {
            conn,
            subflows,
            coupling,
            end: bytes,
            next_data_seq: 0,
            data_acked: 0,
            acked_above: FrontVec::default(),
            window,
            mss,
            joined: false,
            reinject: false,
            rtx: TimerSlot::default(),
            again: VecDeque::new(),
            stats: MptcpSenderStats::default(),
        }
    }

    pub fn subflows(&self) -> &[Subflow] {
        &self.subflows
    }

    /// Data acknowledged cumulatively at the connection level.
    pub fn data_acked(&self) -> u64 {
        self.data_acked
    }

    /// Let subflow `i` act, then account for what it did and schedule more data.
    fn on_subflow<H: Host>(
        &mut self,
        i: usize,
        cx: &mut AgentCx<H>,
        act: impl FnOnce(&mut TcpSender, &mut AgentCx<SubflowHost<'_, H>>),
    ) {
        let Some(sf) = self.subflows.get_mut(i) else { return };
        as_subflow(cx, i, Dss::Mapping(&sf.mapping), |sub| act(&mut sf.tcp, sub));
        self.after_subflow(i, cx);
    }

    fn after_subflow(&mut self, i: usize, cx: &mut AgentCx<impl Host>) {
        let before = self.data_acked;
        self.note_acked(i);
        if self.data_acked > before {
            self.restart_timer(cx);
        }
        self.share_window(i);
        if !self.joined && self.subflows[0].tcp.stats.established.is_some() {
            self.joined = true;
            for j in 1..self.subflows.len() {
                let sf = &mut self.subflows[j];
                as_subflow(cx, j, Dss::Mapping(&sf.mapping), |sub| sf.tcp.on_start(sub));
            }
        }
        self.schedule(cx);
    }

    /// Move subflow `i`'s cumulatively acknowledged chunks into the connection's DATA_ACK.
    fn note_acked(&mut self, i: usize) {
        let sf = &mut self.subflows[i];
        let acked = sf.tcp.bytes_acked();
        while sf.mapping.front().is_some_and(|c| c.subflow_offset + c.len <= acked) {
            let c = sf.mapping.pop_front().expect("checked");
            crate::ranges::insert(&mut self.acked_above, c.data_seq, c.data_seq + c.len);
        }
        self.data_acked = crate::ranges::advance(&mut self.acked_above, self.data_acked);
    }

    fn share_window(&self, i: usize) {
        if let Some(c) = &self.coupling {
            let tcp = &self.subflows[i].tcp;
            let cwnd = if tcp.stats.established.is_some() { tcp.window().cwnd } else { 0 };
            c.set(i, SubflowWindow { cwnd, srtt: tcp.rtt_estimator().srtt() });
        }
    }

    /// The length of the next chunk to schedule: a full segment, or the transfer's last bytes;
    /// None when everything is scheduled or the receiver's window is full.
    fn next_chunk(&self) -> Option<u64> {
        let left = self.end.map_or(u64::MAX, |e| e - self.next_data_seq);
        let len = left.min(self.mss);
        (len > 0 && self.next_data_seq + len <= self.data_acked + self.window).then_some(len)
    }

    /// The established subflow with room in its window and the lowest smoothed RTT (the first
    /// such on ties), as Linux's default scheduler picks; a stale subflow is passed by.
    fn pick(&self) -> Option<usize> {
        let srtt = |s: &Subflow| s.tcp.rtt_estimator().srtt().unwrap_or(Dur(u64::MAX));
        (0..self.subflows.len()).filter(|&i| self.subflows[i].open()).min_by_key(|&i| srtt(&self.subflows[i]))
    }

    /// Hand data to subflows while one has room: data queued again first, then new data the
    /// receiver can take.
    fn schedule(&mut self, cx: &mut AgentCx<impl Host>) {
        loop {
            let again = self.next_again();
            let Some((data_seq, len)) = again.or_else(|| self.next_chunk().map(|len| (self.next_data_seq, len))) else {
                break;
            };
            let Some(i) = self.pick() else { break };
            if again.is_some() {
                self.take_again(len);
                self.stats.reinjected_bytes += len;
            } else {
                self.next_data_seq += len;
            }
            self.hand(i, data_seq, len, cx);
        }
        if self.reinject && self.next_data_seq > self.data_acked && !self.rtx.is_armed() {
            self.restart_timer(cx);
        }
    }

    /// Map `len` bytes of data from `data_seq` onto subflow `i`'s next bytes and let it send.
    fn hand(&mut self, i: usize, data_seq: u64, len: u64, cx: &mut AgentCx<impl Host>) {
        let sf = &mut self.subflows[i];
        sf.mapping.push_back(Chunk { subflow_offset: sf.tcp.assigned(), data_seq, len });
        sf.tcp.assign(len);
        self.stats.scheduled_bytes += len;
        as_subflow(cx, i, Dss::Mapping(&sf.mapping), |sub| sf.tcp.push(sub));
    }

    /// The next segment of the data queued again, above the DATA_ACK (what lies below it has
    /// arrived and is dropped from the queue).
    fn next_again(&mut self) -> Option<(u64, u64)> {
        while let Some(&(start, end)) = self.again.front() {
            let start = start.max(self.data_acked);
            if start < end {
                self.again[0].0 = start;
                return Some((start, (end - start).min(self.mss)));
            }
            self.again.pop_front();
        }
        None
    }

    fn take_again(&mut self, len: u64) {
        let front = &mut self.again[0];
        front.0 += len;
        if front.0 >= front.1 {
            self.again.pop_front();
        }
    }

    /// The connection's retransmission interval (Linux's `mptcp_set_timeout`): the longest
    /// timeout among the busy subflows that are making progress (each subflow's current RTO,
    /// backoff included, for the time left on its timer), or `CONNECTION_RTO_FLOOR`.
    fn connection_rto(&self) -> Dur {
        let busy = self.subflows.iter().filter(|s| s.stale_count == 0 && s.busy());
        busy.map(|s| s.tcp.rtt_estimator().rto()).max().unwrap_or(CONNECTION_RTO_FLOOR)
    }

    /// Arm the connection's timer one interval from now while data is unacknowledged at the
    /// data level, or stop it (`__mptcp_clean_una`: `mptcp_reset_rtx_timer`,
    /// `mptcp_stop_rtx_timer`).
    fn restart_timer(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.reinject || self.next_data_seq == self.data_acked {
            self.rtx.cancel();
            return;
        }
        let at = cx.now + self.connection_rto();
        self.rtx.arm(CONNECTION_TIMER, at, cx);
    }

    /// The connection's timer fired (`__mptcp_retrans`): check each busy subflow for progress,
    /// send the oldest unacknowledged data again on an idle subflow if there is one, and arm
    /// the timer again.
    fn on_connection_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if !self.rtx.on_expiry(timer, cx) || self.next_data_seq == self.data_acked {
            return;
        }
        if let Some(i) = self.retransmit_target() {
            let (start, end) = (self.data_acked, self.next_data_seq.min(self.data_acked + REINJECT_BYTES));
            // Queued whole on the idle subflow (`mptcp_sendmsg_frag` to its write queue), which
            // sends it as its window allows.
            let mut at = start;
            while at < end {
                let len = (end - at).min(self.mss);
                self.hand(i, at, len, cx);
                self.stats.reinjected_bytes += len;
                at += len;
            }
        }
        self.restart_timer(cx);
        self.schedule(cx);
    }

    /// Linux's `mptcp_subflow_get_retrans`: the first established subflow, not stale, with
    /// nothing unacknowledged; each busy subflow is checked for progress on the way.
    fn retransmit_target(&mut self) -> Option<usize> {
        let mut idle = None;
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if sf.stale || sf.tcp.stats.established.is_none() {
                continue;
            }
            if sf.busy() {
                self.check_stale(i);
            } else if idle.is_none() {
                idle = Some(i);
            }
        }
        idle
    }

    /// Linux's `mptcp_pm_subflow_chk_stale` and `mptcp_pm_subflows_chk_stale`: count the
    /// connection's expiries without an ACK on busy subflow `i`; past `STALE_LOSS_CNT`, while
    /// another subflow, not stale, has fewer than `STALE_LOSS_CNT - 1`, it is stale and its
    /// unacknowledged data is queued again for the others.
    fn check_stale(&mut self, i: usize) {
        let sf = &mut self.subflows[i];
        if sf.stale_count == 0 {
            (sf.stale_seen, sf.stale_count) = (sf.last_ack, 1);
            return;
        }
        if sf.stale_seen != sf.last_ack {
            sf.stale_count = 0;
            return;
        }
        sf.stale_count = sf.stale_count.saturating_add(1);
        if sf.stale_count <= STALE_LOSS_CNT {
            return;
        }
        let active_max = (STALE_LOSS_CNT - 1).max(1);
        let others = self
            .subflows
            .iter()
            .enumerate()
            .any(|(j, s)| j != i && !s.stale && s.tcp.stats.established.is_some() && s.stale_count < active_max);
        if others {
            self.mark_stale(i);
        }
    }

    /// Subflow `i` is stale: its data not yet acknowledged on it is queued again for the
    /// others (`__mptcp_retransmit_pending_data` re-queues the whole connection's
    /// unacknowledged data; the others' is still acknowledged by them, so only the stale
    /// subflow's is sent again here).
    fn mark_stale(&mut self, i: usize) {
        let sf = &mut self.subflows[i];
        sf.stale = true;
        self.stats.stale_subflows += 1;
        let acked = sf.tcp.bytes_acked();
        for c in &sf.mapping {
            let skip = acked.saturating_sub(c.subflow_offset).min(c.len);
            if skip < c.len {
                self.again.push_back((c.data_seq + skip, c.data_seq + c.len));
            }
        }
        self.again.make_contiguous().sort_unstable();
    }
}

impl Endpoint for MptcpSender {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn on_start(&mut self, cx: &mut AgentCx<impl Host>) {
        self.on_subflow(0, cx, |tcp, sub| tcp.on_start(sub));
    }
    fn on_packet(&mut self, mut pkt: Packet, cx: &mut AgentCx<impl Host>) {
        let i = demultiplex(&mut pkt);
        if let Some(sf) = self.subflows.get_mut(i) {
            // An ACK makes a stale subflow active again (Linux's `mptcp_subflow_active`).
            (sf.last_ack, sf.stale) = (cx.now, false);
        }
        self.on_subflow(i, cx, |tcp, sub| tcp.on_packet(pkt, sub));
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if timer.kind == CONNECTION_TIMER {
            return self.on_connection_timer(timer, cx);
        }
        let i = (timer.kind / TIMER_STRIDE) as usize;
        let timer = Timer { kind: timer.kind % TIMER_STRIDE, ..timer };
        self.on_subflow(i, cx, |tcp, sub| tcp.on_timer(timer, sub));
    }
    /// The connection's packets share the host's count, so every subflow looks again.
    fn on_host_room(&mut self, cx: &mut AgentCx<impl Host>) {
        for i in 0..self.subflows.len() {
            self.on_subflow(i, cx, |tcp, sub| tcp.on_host_room(sub));
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct MptcpReceiverStats {
    /// Data bytes delivered in order at the connection level, data segments received
    /// (duplicates included) and completion.
    pub delivery: DeliveryCounts,
}

pub struct MptcpReceiver {
    conn: Connection,
    subflows: Vec<TcpReceiver>,
    expected: Option<u64>,
    /// Connection-level reassembly: data held above `rcv_data_nxt`.
    held: FrontVec<(u64, u64)>,
    rcv_data_nxt: u64,
    pub stats: MptcpReceiverStats,
}

impl MptcpReceiver {
    fn new(conn: Connection, subflows: Vec<TcpReceiver>, expected: Option<u64>) -> Self {
        MptcpReceiver {
            conn,
            subflows,
            expected,
            held: FrontVec::default(),
            rcv_data_nxt: 0,
            stats: Default::default(),
        }
    }

    pub fn subflows(&self) -> &[TcpReceiver] {
        &self.subflows
    }

    /// A data segment's bytes enter the connection's reassembly; what is now in order is
    /// delivered.
    fn reassemble(&mut self, data_seq: u64, len: u64, now: Time) {
        self.stats.delivery.packets_received += 1;
        crate::ranges::insert(&mut self.held, data_seq, data_seq + len);
        let before = self.rcv_data_nxt;
        self.rcv_data_nxt = crate::ranges::advance(&mut self.held, before);
        self.stats.delivery.delivered(self.rcv_data_nxt - before, self.expected, now);
    }
}

impl Endpoint for MptcpReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}
    fn on_packet(&mut self, mut pkt: Packet, cx: &mut AgentCx<impl Host>) {
        let i = demultiplex(&mut pkt);
        if i >= self.subflows.len() {
            return;
        }
        if pkt.payload > 0 {
            self.reassemble(pkt.ack, pkt.payload as u64, cx.now);
            pkt.ack = SUBFLOW_FIRST_DATA_SEQ; // what the sender's data segments acknowledge
        }
        let dss = Dss::DataAck(self.rcv_data_nxt);
        as_subflow(cx, i, dss, |sub| self.subflows[i].on_packet(pkt, sub));
    }
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        let i = (timer.kind / TIMER_STRIDE) as usize;
        let timer = Timer { kind: timer.kind % TIMER_STRIDE, ..timer };
        if let Some(rx) = self.subflows.get_mut(i) {
            as_subflow(cx, i, Dss::DataAck(self.rcv_data_nxt), |sub| rx.on_timer(timer, sub));
        }
    }
}

/// The connection's row: the subflows' sends summed, the connection-level delivery, the
/// lowest smoothed RTT among the subflows and the sum of their windows; the reordered and
/// duplicate segments are the subflow receivers' (each in its subflow's sequence space) summed.
impl FlowReport for MptcpSender {
    type Receiver = MptcpReceiver;
    fn report(&self, rx: &MptcpReceiver, r: &mut FlowRow) {
        let mut sent = SendCounts::default();
        for sf in &self.subflows {
            let s = &sf.tcp.stats.sent;
            sent.segments_sent += s.segments_sent;
            sent.bytes_sent += s.bytes_sent;
            sent.retransmitted_segments += s.retransmitted_segments;
            sent.timeouts += s.timeouts;
            sent.rtt_samples += s.rtt_samples;
            sent.rtt_sum = sent.rtt_sum + s.rtt_sum;
        }
        let srtt = self.subflows.iter().filter_map(|s| s.tcp.rtt_estimator().srtt()).min();
        let cwnd: u64 = self.subflows.iter().map(|s| s.tcp.window().cwnd).sum();
        r.fill_transfer(&sent, &rx.stats.delivery, srtt, cwnd as f64);
        r.fast_retransmits = self.subflows.iter().map(|s| s.tcp.stats.fast_retransmits).sum();
        r.reordered_segments = rx.subflows.iter().map(|s| s.stats.reordered_segments).sum();
        r.duplicate_segments = rx.subflows.iter().map(|s| s.stats.duplicate_segments).sum();
        r.dsacks_received = self.subflows.iter().map(|s| s.tcp.stats.dsacks_received).sum();
        r.aborted = self.subflows.iter().all(|s| s.tcp.is_aborted());
    }
}

/// The `subflows` table's name.
pub(crate) const SUBFLOWS: &str = "subflows";

/// One row per subflow of each multipath connection among `senders` (the flows still held:
/// a connection's endpoints are never reclaimed, so every one is there at the end): what it
/// sent, what of it was acknowledged, its retransmissions, and its window and smoothed RTT at
/// the end. Empty when no sender is a multipath connection's (every run has every table).
pub(crate) fn subflows_table<'a>(senders: impl Iterator<Item = (FlowId, &'a Agent)>) -> Table {
    let rows: Vec<(u32, u32, &TcpSender)> = senders
        .filter_map(|(id, a)| match a {
            Agent::MptcpSender(s) => Some((id, s)),
            _ => None,
        })
        .flat_map(|(id, s)| s.subflows.iter().enumerate().map(move |(i, sf)| (id.0, i as u32, &sf.tcp)))
        .collect();
    let col = |f: fn(&TcpSender) -> u64| u64s(rows.iter().map(|r| f(r.2)));
    let srtt = |t: &TcpSender| t.rtt_estimator().srtt().map_or(f64::NAN, |d| d.as_secs_f64());
    Table::new(SUBFLOWS)
        .with("flow", Column::U32(rows.iter().map(|r| r.0).collect()))
        .with("subflow", Column::U32(rows.iter().map(|r| r.1).collect()))
        .with("bytes_sent", col(|t| t.stats.sent.bytes_sent))
        .with("bytes_acked", col(|t| t.bytes_acked()))
        .with("segments_sent", col(|t| t.stats.sent.segments_sent))
        .with("retransmitted_segments", col(|t| t.stats.sent.retransmitted_segments))
        .with("timeouts", col(|t| t.stats.sent.timeouts))
        .with("fast_retransmits", col(|t| t.stats.fast_retransmits))
        .with("final_cwnd_bytes", f64s(rows.iter().map(|r| r.2.window().cwnd as f64)))
        .with("srtt_s", f64s(rows.iter().map(|r| srtt(r.2))))
}
