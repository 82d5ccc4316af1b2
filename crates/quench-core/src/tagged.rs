//! Tables tagged by `kind` (`{ kind = "red", min_th = 5 }`), deserialized so that an error inside
//! one still names its key. serde's internally tagged enums buffer the table before choosing the
//! variant, so a bad value inside reached the scenario parser without its path ("flows[0]:
//! invalid type: string "yes", expected a boolean"). Here the table is split on `kind` and its
//! body deserialized on its own with `serde_path_to_error`; the inner path travels in the error
//! message (`nested_message`) and `ConfigError::from_serde` appends it to the outer one
//! ("flows[0].pcp.drain_once: invalid type ...").
//! Owns the parsing of tagged tables only; which kinds exist is the caller's (the flow, qdisc and
//! topology registries), and it builds nothing.

use crate::error::{nested_message, ConfigError};
use serde::de::{DeserializeOwned, Error};
use serde_json::Value;

/// Split a table into its `kind` and the rest.
pub fn split<E: Error>(table: Value) -> Result<(String, Value), E> {
    let Value::Object(mut map) = table else {
        return Err(E::custom("expected a table with a `kind` key"));
    };
    match map.remove("kind") {
        Some(Value::String(kind)) => Ok((kind, Value::Object(map))),
        Some(other) => Err(E::custom(nested_message("kind", format!("{other} is not a name")))),
        None => Err(E::missing_field("kind")),
    }
}

/// Deserialize a variant's body, keeping the path of an error inside it.
pub fn body<T: DeserializeOwned, E: Error>(body: Value) -> Result<T, E> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let inner = ConfigError::from_serde(&e.path().to_string(), &e.inner().to_string());
        E::custom(nested_message(&inner.path, inner.message))
    })
}

/// The error for a `kind` that names no variant, as serde words it.
pub fn unknown_kind<E: Error>(kind: &str, names: &'static [&'static str]) -> E {
    E::custom(nested_message("kind", E::unknown_variant(kind, names)))
}

/// A size that is either fixed (a string or a number: `Bytes`) or drawn from a distribution (a
/// table tagged by `dist`): `Ok` for the first, `Err` for the second. Any other value is an
/// error listing the `expected` forms; an error inside the table keeps its path.
pub fn fixed_or_drawn<'de, D, T>(d: D, expected: &str) -> Result<Result<crate::units::Bytes, T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = <Value as serde::Deserialize>::deserialize(d)?;
    match value {
        Value::String(_) | Value::Number(_) => {
            <crate::units::Bytes as serde::Deserialize>::deserialize(value).map(Ok).map_err(D::Error::custom)
        }
        Value::Object(ref table) if !table.contains_key("dist") => {
            Err(D::Error::custom(format!("expected {expected}, found a table without `dist`")))
        }
        Value::Object(_) => body(value).map(Err),
        other => Err(D::Error::custom(format!("expected {expected}, found {}", crate::units::describe(&other)))),
    }
}

/// `Deserialize` for a registry's enum of `kind`-tagged variants (each a newtype around its
/// config): `deserialize_by_kind!(QdiscSpec, "red" => Red, ...)`; the enum needs `NAMES`.
macro_rules! deserialize_by_kind {
    ($ty:ident, $($name:literal => $variant:ident),+ $(,)?) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let table = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                let (kind, body) = $crate::tagged::split(table)?;
                match kind.as_str() {
                    $($name => $crate::tagged::body(body).map($ty::$variant),)+
                    other => Err($crate::tagged::unknown_kind(other, Self::NAMES)),
                }
            }
        }
    };
}
pub(crate) use deserialize_by_kind;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only parsed
    struct Inner {
        flag: bool,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // only parsed
    struct Outer {
        inner: Inner,
    }

    fn error(v: Value) -> ConfigError {
        let e = body::<Outer, serde_json::Error>(v).unwrap_err();
        ConfigError::from_serde("flows[2]", &e.to_string())
    }

    #[test]
    fn an_error_inside_keeps_its_path() {
        let e = error(json!({"inner": {"flag": "yes"}}));
        assert_eq!(e.path, "flows[2].inner.flag");
        assert!(e.message.starts_with("invalid type: string \"yes\", expected a boolean"), "{e}");
        let e = error(json!({"inner": {"flag": true, "flog": 1}}));
        assert_eq!(e.path, "flows[2].inner.flog");
        assert!(e.message.contains("unknown field `flog`"), "{e}");
        let e = error(json!({}));
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[2]", "missing field `inner`"));
    }

    #[test]
    fn kind_must_be_a_known_name() {
        let (kind, rest) = split::<serde_json::Error>(json!({"kind": "red", "limit": 5})).unwrap();
        assert_eq!((kind.as_str(), rest), ("red", json!({"limit": 5})));
        let e = split::<serde_json::Error>(json!({"limit": 5})).unwrap_err();
        assert_eq!(ConfigError::from_serde("q", &e.to_string()).to_string(), "q: missing field `kind`");
        let e = split::<serde_json::Error>(json!({"kind": 3})).unwrap_err();
        assert_eq!(ConfigError::from_serde("q", &e.to_string()).path, "q.kind");
        let e: serde_json::Error = unknown_kind("rde", &["red", "droptail"]);
        let e = ConfigError::from_serde("q", &e.to_string());
        assert_eq!(e.to_string(), "q.kind: unknown variant `rde`, expected `red` or `droptail`");
    }
}
