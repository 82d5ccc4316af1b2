//! Typed errors. Every configuration error names the offending key by its path in the scenario
//! (e.g. `links[2].qdisc.limit`) and says why, so the Python layer can raise a precise exception.

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
        match message.strip_prefix(NESTED_PATH).and_then(|m| m.split_once(NESTED_PATH)) {
            Some((inner, message)) => ConfigError::new(inner, message).within(outer),
            None => ConfigError::new(outer, message),
        }
    }
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
