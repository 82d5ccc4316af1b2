//! A PCP flow as a scenario declares it, how it is built, and its flows-table row.
//! It owns the flow's declaration only: it builds the sender and receiver from the `FlowBuild` it
//! is given and hands them back as a `BuiltFlow`, never touching the world.

use super::{HostHistory, PcpConfig, PcpReceiver, PcpSender, SharedHistory};
use crate::error::ConfigError;
use crate::rng::{Rng, StreamKind};
use crate::transport::{Agent, BuiltFlow, FlowBuild, FlowReport, FlowRow, TransportSpec};
use crate::units::{Bytes, Dur};
use serde::{Deserialize, Serialize};

/// A PCP connection (probe control protocol, NSDI '06) carrying a transfer from `src` to `dst`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcpFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    /// Transfer size; unlimited when absent.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    #[serde(default)]
    pub start: Dur,
    #[serde(default)]
    pub pcp: PcpConfig,
}

impl TransportSpec for PcpFlowSpec {
    crate::transport::common_flow_keys!();
    fn build(&self, cx: &FlowBuild) -> Result<BuiltFlow, ConfigError> {
        self.pcp.validate().map_err(|e| e.within("pcp"))?;
        cx.check_path(None)?;
        cx.check_return_path()?;
        let bytes = self.bytes.map(|b| b.0);
        // One per-destination history per source host, shared by all its PCP flows.
        let history = self.pcp.history.then(|| cx.host_shared::<SharedHistory>(cx.src, HostHistory::shared));
        let rng = Rng::stream(cx.seed, StreamKind::Agent, cx.sender.0 as u64);
        let (forward, backward) = cx.connections();
        Ok(BuiltFlow {
            sender: Agent::PcpSender(Box::new(PcpSender::new(forward, self.pcp.clone(), bytes, history, rng))),
            receiver: Agent::PcpReceiver(Box::new(PcpReceiver::new(backward, &self.pcp, bytes))),
            cc: "",
            bytes,
            telemetry: None,
        })
    }
}

/// PCP has no window: `final_cwnd_bytes` is the base rate times srtt (the window it equals).
impl FlowReport for PcpSender {
    type Receiver = PcpReceiver;
    fn report(&self, rx: &PcpReceiver, r: &mut FlowRow) {
        let cwnd = self.srtt().map_or(f64::NAN, |d| self.base_rate().bytes_in(d));
        r.fill_transfer(&self.stats.sent, &rx.stats.delivery, self.srtt(), cwnd);
    }
}
