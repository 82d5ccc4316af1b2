//! Typed errors. Every configuration error names the offending key by its path in the scenario
//! (e.g. `links[2].qdisc.limit`) and says why, so the Python layer can raise a precise exception.
//! Owns the error type and its key paths; it depends on no other part of the crate.

use std::fmt;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    /// Dotted path of the offending key; empty for the whole scenario.
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { path: path.into(), message: message.into() }
    }
    /// Prefix the path with the enclosing key, as errors bubble up from nested configs.
    pub fn within(mut self, parent: &str) -> Self {
        self.path = match (parent.is_empty(), self.path.is_empty()) {
            (true, _) => self.path,
            (false, true) => parent.to_string(),
            (false, false) if self.path.starts_with('[') => format!("{parent}{}", self.path),
            (false, false) => format!("{parent}.{}", self.path),
        };
        self
    }
}

/// Separates a nested error's path from its message inside a serde error message, which is the
/// only thing that crosses serde's `Error::custom` (see `tagged.rs`).
const NESTED_PATH: char = '\u{1f}';

/// A serde error message that carries the `path` of the error inside a nested value.
pub fn nested_message(path: &str, message: impl fmt::Display) -> String {
    format!("{NESTED_PATH}{path}{NESTED_PATH}{message}")
}

impl ConfigError {
    /// From `serde_path_to_error`'s path (`.` for the root) and the error's message, which may
    /// carry the path of an error inside a tagged table (`nested_message`).
    pub fn from_serde(path: &str, message: &str) -> Self {
        let outer = if path == "." { "" } else { path };
        let message = &plain_types(strip_position(message));
        match message.strip_prefix(NESTED_PATH).and_then(|m| m.split_once(NESTED_PATH)) {
            Some((inner, message)) => ConfigError::new(inner, message).within(outer),
            None => ConfigError::new(outer, message),
        }
    }
}

/// serde_json ends its messages with " at line L column C": a position in the JSON text the
/// front end made from the user's file, which means nothing to the user. Strip it.
fn strip_position(message: &str) -> &str {
    let Some(i) = message.rfind(" at line ") else { return message };
    let rest = &message[i + " at line ".len()..];
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match rest.split_once(" column ") {
        Some((line, column)) if digits(line) && digits(column) => &message[..i],
        _ => message,
    }
}

/// serde names Rust's number types in "expected u64"; say what a user writes instead.
fn plain_types(message: &str) -> String {
    const TYPES: [(&str, &str); 6] = [
        ("f64", "a number"),
        ("f32", "a number"),
        ("u64", "a whole number from 0 to 18446744073709551615"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u16", "a whole number from 0 to 65535"),
        ("usize", "a whole number from 0 to 18446744073709551615"),
    ];
    for (rust, plain) in TYPES {
        if let Some(head) = message.strip_suffix(&format!("expected {rust}")) {
            return format!("{head}expected {plain}");
        }
    }
    message.to_string()
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Anything a run can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid scenario: {0}")]
    Config(#[from] ConfigError),
    #[error("simulation failed: {0}")]
    Runtime(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_json_positions_are_stripped() {
        let e = ConfigError::from_serde(
            "links[0].duplex",
            "invalid type: string \"yes\", expected a boolean at line 1 column 87",
        );
        assert_eq!(e.to_string(), "links[0].duplex: invalid type: string \"yes\", expected a boolean");
        let nested = format!("{} at line 3 column 9", nested_message("mean", "missing field `mean`"));
        assert_eq!(ConfigError::from_serde("size", &nested).to_string(), "size.mean: missing field `mean`");
        let e = ConfigError::from_serde("seed", "invalid value: integer `-1`, expected u64 at line 1 column 9");
        assert_eq!(e.message, "invalid value: integer `-1`, expected a whole number from 0 to 18446744073709551615");
        // Only a trailing "at line L column C" is a position.
        let kept = ConfigError::from_serde("name", "arrives at line 1 column four");
        assert_eq!(kept.message, "arrives at line 1 column four");
    }
}
