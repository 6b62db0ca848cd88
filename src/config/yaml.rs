//! Reading the YAML with one parser, serde-saphyr: the values (into the
//! raw schema), the duplicate-key errors (it refuses them), and the
//! positions — of its own errors, and of any key path, for the semantic
//! errors found after deserialization, through a tree of spanned nodes built
//! only when there is an error to place.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::ConfigError;
use crate::suggest;

/// 1-based line and column.
pub(super) type Position = (usize, usize);

/// Deserializes `text`; an error names file, line, key and the fix.
pub(super) fn from_str<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, ConfigError> {
    serde_saphyr::from_str(text).map_err(|e| located_error(&e, text, origin))
}

/// Where the key `path` (`gates.mypy.parsing.pattern`, `active_gates[2]`)
/// sits, or its nearest ancestor that does.
pub(super) fn locate(text: &str, path: &str) -> Option<Position> {
    let keys = Keys::of(text)?;
    let mut probe = path.to_string();
    loop {
        if let Some((_, position)) = keys.0.iter().find(|(p, _)| *p == probe) {
            return Some(*position);
        }
        let cut = probe.rfind(['.', '['])?;
        probe.truncate(cut);
    }
}

/// One located line from the parser's error, with the key it concerns and
/// "did you mean" for an unknown key or value.
fn located_error(err: &serde_saphyr::Error, text: &str, origin: &str) -> ConfigError {
    let full = err.without_snippet().to_string();
    // serde-saphyr renders "<message> at line L, column C".
    let message = match full.rfind(" at line ") {
        Some(cut) => &full[..cut],
        None => full.as_str(),
    };
    let position = err
        .location()
        .filter(|l| l.line() > 0)
        .map(|l| (l.line() as usize, l.column() as usize));
    let keys = position.and_then(|_| Keys::of(text));
    let at = position.and_then(|p| keys.as_ref()?.at(p));
    let (key, mut message) = match message.strip_prefix("duplicate mapping key: ") {
        Some(rest) => {
            let name = rest.split(", set ").next().unwrap_or(rest);
            let parent = position.and_then(|p| keys.as_ref()?.parent_of_column(p));
            let key = match parent.as_deref() {
                None | Some("") => name.to_string(),
                Some(parent) => format!("{parent}.{name}"),
            };
            let message = format!(
                "`{name}` is defined twice; keep one (YAML would silently drop one of them)"
            );
            (Some(key), message)
        }
        None => explain(at, message),
    };
    // A missing key belongs to the mapping that lacks it: point there.
    let position = match message.starts_with("missing field") {
        true => match key.as_deref() {
            None | Some("") => Some((1, 1)),
            Some(parent) => locate(text, parent).or(position),
        },
        false => position,
    };
    let offending_line = position.and_then(|p| text.lines().nth(p.0.saturating_sub(1)));
    if offending_line.is_some_and(|l| l.trim_end().starts_with([' ', '\t']) && l.contains('\t')) {
        message.push_str("; YAML does not allow tabs for indentation, use spaces");
    }
    ConfigError {
        file: origin.to_string(),
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
        key,
        message,
    }
}

/// The key an error at the path `at` concerns, and its message:
/// "unknown field `x`, expected one of a, b" becomes "unknown key `x`; did
/// you mean `a`?"; a missing field belongs to the mapping that lacks it.
pub(super) fn explain(at: Option<String>, message: &str) -> (Option<String>, String) {
    if message.starts_with("missing field") {
        let parent = at.and_then(|p| p.rfind(['.', '[']).map(|cut| p[..cut].to_string()));
        return (parent, message.to_string());
    }
    let Some((kind, rest)) = message
        .strip_prefix("unknown field `")
        .map(|r| ("key", r))
        .or_else(|| {
            message
                .strip_prefix("unknown variant `")
                .map(|r| ("value", r))
        })
    else {
        return (at, message.to_string());
    };
    let Some((name, expected)) = rest.split_once('`') else {
        return (at, message.to_string());
    };
    let candidates: Vec<&str> = expected
        .trim_start_matches([',', ' '])
        .trim_start_matches("expected one of ")
        .trim_start_matches("expected ")
        .split(", ")
        .map(|c| c.trim().trim_matches('`'))
        .filter(|c| !c.is_empty() && !c.contains(' '))
        .collect();
    let hint = suggest::hint(name, &candidates);
    (at, format!("unknown {kind} `{name}`; {hint}"))
}

/// Every key (and sequence item) of a document, in document order, with its
/// dotted path and position.
struct Keys(Vec<(String, Position)>);

impl Keys {
    /// `None` when the text does not parse as YAML at all. A duplicate key
    /// is kept once (the first), so that it can be reported in place.
    fn of(text: &str) -> Option<Keys> {
        let mut options = serde_saphyr::Options::default();
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::FirstWins;
        let root: Spanned<Node> = serde_saphyr::from_str_with_options(text, options).ok()?;
        let mut keys = Vec::new();
        root.value.walk("", &mut keys);
        Some(Keys(keys))
    }

    /// The mapping a key at `position` belongs to: that of the last key
    /// before it in the same column (a sibling), `""` at the top level.
    fn parent_of_column(&self, position: Position) -> Option<String> {
        let (path, _) = self
            .0
            .iter()
            .filter(|(_, p)| *p < position && p.1 == position.1)
            .max_by_key(|(_, p)| *p)?;
        Some(
            path.rfind(['.', '['])
                .map_or(String::new(), |cut| path[..cut].to_string()),
        )
    }

    /// The path of the last key at or before `position`: the one an error
    /// there is about.
    fn at(&self, position: Position) -> Option<String> {
        self.0
            .iter()
            .filter(|(_, p)| *p <= position)
            .max_by_key(|(_, p)| *p)
            .map(|(path, _)| path.clone())
    }
}

/// A YAML node with the positions of its keys and items.
enum Node {
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Scalar,
}

impl Node {
    fn walk(&self, path: &str, out: &mut Vec<(String, Position)>) {
        match self {
            Node::Map(entries) => {
                for (key, value) in entries {
                    let child = match path {
                        "" => key.value.0.clone(),
                        _ => format!("{path}.{}", key.value.0),
                    };
                    out.push((child.clone(), position(&key.referenced)));
                    value.value.walk(&child, out);
                }
            }
            Node::Seq(items) => {
                for (index, item) in items.iter().enumerate() {
                    let child = format!("{path}[{index}]");
                    out.push((child.clone(), position(&item.referenced)));
                    item.value.walk(&child, out);
                }
            }
            Node::Scalar => {}
        }
    }
}

fn position(location: &serde_saphyr::Location) -> Position {
    (location.line() as usize, location.column() as usize)
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("YAML")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Key>>()? {
            entries.push((key, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
}

/// A mapping key, as text whatever its YAML type.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping key")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Key, E> {
                Ok(Key(text.to_string()))
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Key, E> {
                Ok(Key(value.to_string()))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Key, E> {
                Ok(Key(value.to_string()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Key, E> {
                Ok(Key(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Key, E> {
                Ok(Key(value.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".to_string()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "version: \"1\"\nactive_gates: [a, b]\ngates:\n  a:\n    execution: {command: [x]}\n    parsing:\n      pattern: x\n";

    #[test]
    fn finds_block_and_flow_keys_and_falls_back_to_ancestors() {
        assert_eq!(locate(YAML, "active_gates[1]"), Some((2, 19)));
        assert_eq!(locate(YAML, "gates.a.execution.command"), Some((5, 17)));
        assert_eq!(locate(YAML, "gates.a.parsing.pattern"), Some((7, 7)));
        assert_eq!(locate(YAML, "gates.a.parsing.nothing"), Some((6, 5)));
        assert_eq!(locate(YAML, "nothing"), None);
    }

    #[test]
    fn duplicate_keys_and_unknown_keys_are_located_errors() {
        let dup = "a: 1\nb: 2\na: 3\n";
        let err = from_str::<std::collections::BTreeMap<String, u8>>(dup, "c.yaml").unwrap_err();
        assert_eq!((err.line, err.key.as_deref()), (Some(3), Some("a")));
        assert!(err.message.contains("defined twice"), "{}", err.message);
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Gate {
            fail_on: Option<String>,
        }
        let err =
            from_str::<std::collections::BTreeMap<String, Gate>>("g:\n  fial_on: x\n", "c.yaml")
                .unwrap_err();
        assert_eq!(err.key.as_deref(), Some("g.fial_on"));
        assert_eq!(
            err.message,
            "unknown key `fial_on`; did you mean `fail_on`?"
        );
    }
}
