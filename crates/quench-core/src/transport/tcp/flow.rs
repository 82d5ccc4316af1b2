//! A TCP flow as a scenario declares it, how it is built, and its flows-table row.
//! It owns the flow's declaration only: it builds the sender (with its controller) and the receiver
//! from the `FlowBuild` it is given and hands them back as a `BuiltFlow`, never touching the world.

use super::config::RttSampling;
use super::{TcpConfig, TcpReceiver, TcpSender, HEADERS};
use crate::cc::{deserialize_cc, CcSpec, CongestionControl};
use crate::error::{nested_message, ConfigError};
use crate::rng::{Rng, StreamKind};
use crate::transport::{Agent, BuiltFlow, FlowBuild, FlowReport, FlowRow, TransportSpec};
use crate::units::{Bytes, Dur};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A TCP connection carrying a bulk transfer from `src` to `dst`. Its `cc` and `tcp` are
/// what its profile (`tcp.profile`, `profile.rs`) gives, with the keys the scenario writes over
/// them; written back (`scenario.json`), every key is explicit and reads back the same.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "WrittenTcpFlow")]
pub struct TcpFlowSpec {
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    pub cc: CcSpec,
    /// Transfer size; unlimited when absent.
    pub bytes: Option<Bytes>,
    /// When the application opens the connection.
    pub start: Dur,
    pub tcp: TcpConfig,
}

/// A TCP flow as written, before its profile fills what it leaves out.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenTcpFlow {
    #[serde(default)]
    name: Option<String>,
    src: String,
    dst: String,
    #[serde(default)]
    cc: Option<Value>,
    #[serde(default)]
    bytes: Option<Bytes>,
    #[serde(default)]
    start: Dur,
    #[serde(default)]
    tcp: Option<Value>,
}

impl TryFrom<WrittenTcpFlow> for TcpFlowSpec {
    type Error = String;
    fn try_from(w: WrittenTcpFlow) -> Result<Self, String> {
        let (tcp, cc) = super::profile::resolve(w.tcp, w.cc).map_err(|e| nested_message(&e.path, e.message))?;
        let at = |key: &str, e: String| {
            let inner = ConfigError::from_serde(".", &e);
            nested_message(&ConfigError::new(inner.path, "").within(key).path, inner.message)
        };
        let cc = deserialize_cc(cc).map_err(|e| at("cc", e.to_string()))?;
        let tcp = crate::tagged::body::<TcpConfig, serde_json::Error>(tcp).map_err(|e| at("tcp", e.to_string()))?;
        Ok(TcpFlowSpec { name: w.name, src: w.src, dst: w.dst, cc, bytes: w.bytes, start: w.start, tcp })
    }
}

impl TransportSpec for TcpFlowSpec {
    crate::transport::common_flow_keys!();
    fn handshake(&self) -> crate::packet::Handshake {
        super::options::handshake(&self.tcp)
    }
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        self.tcp.validate().map_err(|e| e.within("tcp"))?;
        // What the sender runs once the handshake agrees (`options.rs`).
        let agreed = super::options::agreed(&self.tcp);
        let mut cc = self.cc.build().map_err(|e| e.within("cc"))?;
        let caps = cc.capabilities();
        if let Some(mechanism) = caps.rtt_every_ack_needed_by {
            if agreed.rtt_sampling != RttSampling::EveryAck && !agreed.timestamps {
                let why = format!(
                    "{mechanism} needs an RTT sample on every ACK: set it to \"every_ack\" (or tcp.timestamps = true)"
                );
                return Err(ConfigError::new("rtt_sampling", why).within("tcp"));
            }
        }
        if agreed.loss_detection.rack() && caps.recovery == crate::cc::Recovery::SlowStart {
            let why = "RACK marks losses for fast recovery, which Tahoe does not have";
            return Err(ConfigError::new("loss_detection", why).within("tcp"));
        }
        // The sender agent's own stream (as a UDP source's): only a controller that draws uses it.
        cc.take_random_stream(Rng::stream(cx.seed, StreamKind::Agent, cx.sender.0 as u64));
        // A full segment and a pure ACK on the wire: the MSS counts the options (config.rs)
        // and the telemetry header every packet carries.
        let shim = caps.telemetry.map_or(0, |h| h.wire_bytes());
        if agreed.segment_payload() <= shim {
            let why = format!("{} bytes leave no payload beside the {shim}-byte telemetry header", self.tcp.mss);
            return Err(ConfigError::new("mss", why).within("tcp"));
        }
        let full = (self.tcp.mss + HEADERS) as u64;
        let (data_size, ack_size) = (full, (HEADERS + shim + agreed.option_bytes()) as u64);
        cc.take_path(&cx.path_facts(data_size, ack_size));
        // With don't-fragment, a full segment must fit every MTU: an error is about the MSS.
        let size = self.tcp.dont_fragment.then_some((full, "tcp.mss"));
        cx.check_path(size)?;
        cx.check_return_path()?;
        let bytes = self.bytes.map(|b| b.0);
        let (forward, backward) = cx.connections_with_shim(shim);
        let feedback = caps.ecn_feedback;
        let ect_on_every_packet = caps.ect_on_every_packet.then_some(caps.ect_codepoint);
        // Each end's configuration, held once for all the flows that agree the same.
        let (agreed, receiving_end) = (cx.shared(agreed), cx.shared(super::options::receiving_end(&self.tcp)));
        Ok(BuiltFlow {
            sender: Agent::TcpSender(Box::new(TcpSender::with_agreed(forward, &self.tcp, agreed, cc, bytes))),
            receiver: Agent::TcpReceiver(Box::new(
                TcpReceiver::new(backward, receiving_end, bytes, feedback, ect_on_every_packet)
                    .with_ack_delay(caps.ack_delay),
            )),
            cc: self.cc.kind(),
            bytes,
            telemetry: caps.telemetry,
        })
    }
}

impl FlowReport for TcpSender {
    type Receiver = TcpReceiver;
    fn report(&self, rx: &TcpReceiver, r: &mut FlowRow) {
        r.fill_transfer(&self.stats.sent, &rx.stats.delivery, self.rtt_estimator().srtt(), self.window().cwnd as f64);
        r.fast_retransmits = self.stats.fast_retransmits;
        r.reordered_segments = rx.stats.reordered_segments;
        r.duplicate_segments = rx.stats.duplicate_segments;
        r.dsacks_received = self.stats.dsacks_received;
        r.aborted = self.is_aborted();
    }
}
