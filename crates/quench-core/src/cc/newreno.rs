//! NewReno (RFC 6582): Reno's window rules with a fast recovery that lasts until all data
//! outstanding when loss was detected is acknowledged; partial ACKs retransmit the next hole.
//! One implementation with Reno (`reno.rs`), the recovery procedure its parameter.
//! Owns nothing of its own. Must not touch: the sender; it sees only the window and the samples.

/// NewReno's keys are Reno's.
pub type NewRenoConfig = super::reno::RenoConfig;

/// RFC 6582 fast recovery.
pub type NewReno = super::reno::RenoFamily<true>;
