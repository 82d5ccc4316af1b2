//! The handshake's options: what each end's SYN carries, per profile, and what the two ends
//! agree on. An option is used only when both ends support it: SACK when both SYNs carry
//! SACK-permitted (RFC 2018 section 2), timestamps when both carry the option (RFC 7323 section
//! 3.2), window scaling likewise (section 2.2), ECN when the SYN-ACK answers the ECN-setup SYN
//! (RFC 3168 section 6.1.1, which `ecn.rs` plays out packet by packet). The flow's `sack`,
//! `timestamps` and `ecn` are the opening end's support, `tcp.receiver` the other end's.
//!
//! What the SYN carries in its size, per profile:
//! - `linux`: MSS, SACK-permitted, timestamps and window scale as `tcp_syn_options` and
//!   `tcp_synack_options` (net/ipv4/tcp_output.c) send them with `tcp_sack`,
//!   `tcp_timestamps` and `tcp_window_scaling` on: 20 bytes, a 60-byte SYN.
//! - `ns3`: window scale, SACK-permitted and timestamps (`TcpSocketBase::AddOptions`; ns-3
//!   sends no MSS option): 16 bytes.
//! - `rfc`: the timestamp option when it is on, nothing else: the 40-byte SYN of the simulators
//!   the seed experiments come from, where SACK is agreed without the option.
//!
//! Owns these rules only: it builds no endpoint and sends nothing.

use super::config::{LimitedTransmit, LossDetection, TcpConfig};
use super::profile::Profile;
use crate::packet::{Handshake, SynOptions};
use crate::units::Bytes;

/// RFC 7323 section 2.3: a shift of at most 14.
const MAX_WINDOW_SHIFT: u8 = 14;
/// The largest window the 16-bit field holds unscaled.
const MAX_UNSCALED_WINDOW: u64 = u16::MAX as u64;

/// The smallest shift that fits `window` in the 16-bit field, as Linux's
/// `tcp_select_initial_window` and ns-3's `CalculateWScale` choose it.
pub(crate) fn window_shift(window: Bytes) -> u8 {
    let mut shift = 0;
    while (window.0 >> shift) > MAX_UNSCALED_WINDOW && shift < MAX_WINDOW_SHIFT {
        shift += 1;
    }
    shift
}

/// The options on a SYN from an end configured as `cfg` (its own support).
pub(crate) fn syn_options(cfg: &TcpConfig) -> SynOptions {
    let window_scale = Some(window_shift(cfg.receive_window));
    let mss = Some(cfg.mss.min(u16::MAX as u32) as u16);
    match cfg.profile {
        Profile::Linux => SynOptions { mss, sack_permitted: cfg.sack, timestamps: cfg.timestamps, window_scale },
        Profile::Ns3 => SynOptions { mss: None, sack_permitted: cfg.sack, timestamps: cfg.timestamps, window_scale },
        Profile::Rfc => SynOptions { timestamps: cfg.timestamps, ..SynOptions::default() },
    }
}

/// The connection after the handshake, as the opening end runs it: SACK and timestamps only
/// where the receiving end supports them too. Without SACK, the SACK-based loss detection and
/// Limited Transmit fall back to duplicate ACKs and RFC 3042, as a Linux connection to a peer
/// without SACK does (`tcp_add_reno_sack`). ECN stays the opening end's request: the SYN-ACK
/// answers it.
pub(crate) fn agreed(cfg: &TcpConfig) -> TcpConfig {
    let mut out = cfg.clone();
    out.sack &= cfg.receiver.sack;
    out.timestamps &= cfg.receiver.timestamps;
    if !out.sack && cfg.sack {
        if out.loss_detection.rack() {
            out.loss_detection = LossDetection::Dupack;
        }
        if out.limited_transmit == LimitedTransmit::Rfc6675 {
            out.limited_transmit = LimitedTransmit::Rfc3042;
        }
    }
    out
}

/// The receiving end's configuration: the agreed options, and its own ECN support (its
/// SYN-ACK agrees to ECN only when it supports it and the SYN asks).
pub(crate) fn receiving_end(cfg: &TcpConfig) -> TcpConfig {
    TcpConfig { ecn: cfg.receiver.ecn, ..agreed(cfg) }
}

/// Both SYNs of a connection configured as `cfg`.
pub(crate) fn handshake(cfg: &TcpConfig) -> Handshake {
    Handshake { syn: syn_options(cfg), syn_ack: syn_options(&agreed(cfg)), mptcp: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TCP_HEADER;

    fn linux() -> TcpConfig {
        super::super::profile::Profile::Linux.tcp()
    }

    /// Linux's SYN with its defaults: "mss 1460,sackOK,TS val .. ecr 0,nop,wscale 7" in
    /// tcpdump, 20 option bytes; without timestamps "mss 1460,nop,nop,sackOK,nop,wscale 7", 12.
    #[test]
    fn linux_syn_sizes_match_tcpdump() {
        let cfg = linux();
        let syn = syn_options(&cfg);
        assert_eq!(syn, SynOptions { mss: Some(1460), sack_permitted: true, timestamps: true, window_scale: Some(7) });
        assert_eq!(TCP_HEADER + syn.bytes(), 40);
        let no_ts = TcpConfig { timestamps: false, ..linux() };
        assert_eq!(syn_options(&no_ts).bytes(), 12);
        let nothing = TcpConfig { timestamps: false, sack: false, ..linux() };
        assert_eq!(syn_options(&nothing).bytes(), 8, "mss and nop,wscale");
    }

    /// 6 MiB needs a shift of 7 (6 MiB >> 7 = 49152), ns-3's 128 KiB one of 2, 64 KiB none.
    #[test]
    fn window_shift_is_the_smallest_that_fits() {
        assert_eq!(window_shift(Bytes(6 << 20)), 7);
        assert_eq!(window_shift(Bytes(128 << 10)), 2);
        assert_eq!(window_shift(Bytes(65_535)), 0);
        assert_eq!(window_shift(Bytes(1 << 40)), MAX_WINDOW_SHIFT);
    }

    /// ns-3: wscale 3 + SACK-permitted 2 + timestamp 10 = 15, padded to 16; the rfc profile
    /// carries nothing but the timestamp option.
    #[test]
    fn ns3_and_rfc_syns() {
        assert_eq!(syn_options(&Profile::Ns3.tcp()).bytes(), 16);
        assert_eq!(syn_options(&TcpConfig { sack: true, ..TcpConfig::default() }).bytes(), 0);
        assert_eq!(syn_options(&TcpConfig { timestamps: true, ..TcpConfig::default() }).bytes(), 12);
    }

    /// The SYN-ACK carries only what both ends support; the window shift applies only when
    /// both SYNs carry the option.
    #[test]
    fn the_syn_ack_is_the_and_of_both_ends() {
        let mut cfg = linux();
        cfg.receiver.sack = false;
        cfg.receiver.timestamps = false;
        let h = handshake(&cfg);
        assert_eq!(h.syn.bytes(), 20);
        assert_eq!(h.syn_ack.bytes(), 8, "mss and nop,wscale");
        let agreed = agreed(&cfg);
        assert!(!agreed.sack && !agreed.timestamps);
        assert_eq!(agreed.loss_detection, LossDetection::Dupack, "RACK needs SACK");
        assert_eq!(agreed.limited_transmit, LimitedTransmit::Rfc3042);
        assert_eq!(agreed.segment_payload(), 1460, "no timestamp option on the segments");
        assert!(agreed.validate().is_ok());
        assert_eq!((h.window_shift(true), h.window_shift(false)), (7, 7));
        let rfc = handshake(&TcpConfig::default());
        assert_eq!(rfc.window_shift(true), 0);
    }

    #[test]
    fn the_receivers_ecn_is_its_own() {
        let mut cfg = TcpConfig { ecn: true, ..linux() };
        assert!(receiving_end(&cfg).ecn);
        cfg.receiver.ecn = false;
        assert!(!receiving_end(&cfg).ecn && agreed(&cfg).ecn);
    }
}
