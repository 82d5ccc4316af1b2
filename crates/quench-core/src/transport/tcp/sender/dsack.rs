//! D-SACK at the sender (RFC 2883; docs/mechanisms.md#d-sack): an ACK whose first SACK block
//! reports a duplicate (`sack::dsack`: below the cumulative ACK, or within the second block)
//! is counted (`dsacks_received`) and handed to RACK's reordering window (`rack.rs`, RFC 8985
//! section 6.2 step 4). The block itself is never taken for data newly held: the scoreboard,
//! the rate sampler and RACK read `sack::reported`, which leaves it out.
//! Part of `TcpSender`: owns no state beyond its count; it reaches neither the host nor the
//! receiver.

use super::super::sack;
use super::TcpSender;
use crate::packet::Packet;

impl TcpSender {
    /// Every acceptable ACK (after RACK has taken what it delivers, before the cumulative ACK
    /// moves): count a D-SACK, and let RACK end its D-SACK round and widen its window.
    /// Returns whether the ACK's D-SACK is the tail loss probe's duplicate (Linux's
    /// `FLAG_DSACK_TLP`).
    pub(super) fn dsack_on_ack(&mut self, pkt: &Packet) -> bool {
        let dsack = sack::dsack(&pkt.sack, pkt.ack);
        self.stats.dsacks_received += dsack.is_some() as u64;
        let (nxt, mss, window) = (self.send.snd_nxt.max(pkt.ack), self.w.mss, self.w.peer_window);
        let retransmitted = self.stats.sent.retransmitted_segments;
        let probe_end = self.loss.tlp.as_ref().and_then(|t| t.probe_end());
        // Linux's `tcp_dsack_seen`: a range longer than the peer's window is dubious (none
        // counted); a longer one than a segment counts its segments; one segment ending where
        // the probe's episode ends is the tail loss probe's duplicate.
        let (dup_segments, probe_duplicate) = match dsack {
            Some((s, e)) if e - s <= window => ((e - s).div_ceil(mss), e - s <= mss && probe_end == Some(e)),
            _ => (0, false),
        };
        if let Some(r) = self.loss.rack.as_mut() {
            r.on_ack_dsack(pkt.ack, nxt, dup_segments, retransmitted, probe_duplicate);
        }
        probe_duplicate
    }
}
