//! NewReno (RFC 6582): Reno's window rules with a fast recovery that lasts until all data
//! outstanding when loss was detected is acknowledged; partial ACKs retransmit the next hole.
//! The recovery procedure itself lives in TCP; this controller only selects it.

use super::reno::AimdParams;
use super::{half_flight, AckSample, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    #[serde(default)]
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in segments (RFC 3465).
    #[serde(default)]
    pub abc_limit: Option<u64>,
}

pub struct NewReno {
    params: AimdParams,
}

impl NewReno {
    pub fn new(cfg: &NewRenoConfig) -> Result<Self, ConfigError> {
        Ok(NewReno { params: AimdParams::from_config(cfg.initial_window, cfg.abc_limit)? })
    }
}

impl CongestionControl for NewReno {
    fn recovery(&self) -> Recovery {
        Recovery::NewReno
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.params.grow(w, s.acked);
    }
    fn ssthresh_after(&mut self, w: &Window, _signal: Signal) -> u64 {
        half_flight(w)
    }
}
