//! Finds where a dotted key path (`gates.mypy.parsing.pattern`,
//! `active_gates[2]`) sits in the YAML text, so errors found after
//! deserialization can still name a line and column.
//!
//! serde_yaml gives positions only for its own errors; a second, event-level
//! pass with yaml-rust2 (which keeps source marks) covers the semantic checks.
//! It runs only when there is an error to report.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// 1-based line and column of a key (or a sequence item).
pub type Position = (usize, usize);

/// Returns the position of `path`, or of its nearest located ancestor.
pub fn locate(yaml: &str, path: &str) -> Option<Position> {
    let index = index_positions(yaml);
    let mut probe = path.to_string();
    loop {
        if let Some(pos) = index.get(&probe) {
            return Some(*pos);
        }
        let cut = probe.rfind(['.', '['])?;
        probe.truncate(cut);
    }
}

/// The first key that appears twice in one mapping, with the position of
/// its second occurrence. (serde_yaml would silently keep the last one.)
pub fn first_duplicate_key(yaml: &str) -> Option<(String, Position)> {
    record(yaml).duplicate
}

fn index_positions(yaml: &str) -> HashMap<String, Position> {
    record(yaml).positions
}

fn record(yaml: &str) -> Recorder {
    let mut recorder = Recorder::default();
    // A parse error only means the index is partial; whatever was seen is used.
    let _ = Parser::new_from_str(yaml).load(&mut recorder, false);
    recorder
}

enum Frame {
    Mapping {
        path: String,
        pending_key: Option<String>,
    },
    Sequence {
        path: String,
        next_index: usize,
    },
}

#[derive(Default)]
struct Recorder {
    stack: Vec<Frame>,
    positions: HashMap<String, Position>,
    duplicate: Option<(String, Position)>,
}

impl Recorder {
    /// The path a value arriving now belongs to, consuming a pending key.
    /// `None` means the scalar is itself a mapping key.
    fn claim_value_path(&mut self, mark: Marker) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Mapping { path, pending_key }) => {
                let key = pending_key.take()?;
                Some(join(path, &key))
            }
            Some(Frame::Sequence { path, next_index }) => {
                let item = format!("{path}[{next_index}]");
                *next_index += 1;
                self.positions.insert(item.clone(), position(mark));
                Some(item)
            }
        }
    }
}

impl MarkedEventReceiver for Recorder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        match event {
            Event::Scalar(text, ..) => match self.claim_value_path(mark) {
                Some(_) => {}
                None => {
                    if let Some(Frame::Mapping { path, pending_key }) = self.stack.last_mut() {
                        let key_path = join(path, &text);
                        *pending_key = Some(text);
                        match self.positions.entry(key_path) {
                            Entry::Occupied(seen) => {
                                let again = (seen.key().clone(), position(mark));
                                self.duplicate.get_or_insert(again);
                            }
                            Entry::Vacant(slot) => {
                                slot.insert(position(mark));
                            }
                        }
                    }
                }
            },
            Event::MappingStart(..) => {
                let path = self.claim_value_path(mark).unwrap_or_default();
                self.stack.push(Frame::Mapping {
                    path,
                    pending_key: None,
                });
            }
            Event::SequenceStart(..) => {
                let path = self.claim_value_path(mark).unwrap_or_default();
                self.stack.push(Frame::Sequence {
                    path,
                    next_index: 0,
                });
            }
            Event::Alias(_) => {
                self.claim_value_path(mark);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

fn position(mark: Marker) -> Position {
    (mark.line(), mark.col() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "version: \"1\"\nactive_gates: [a, b]\ngates:\n  a:\n    parsing:\n      defaults: {code: \"{x}\"}\n      pattern: 'y'\n";

    #[test]
    fn finds_block_and_flow_keys() {
        assert_eq!(locate(YAML, "version"), Some((1, 1)));
        assert_eq!(locate(YAML, "gates.a.parsing.pattern"), Some((7, 7)));
        assert_eq!(locate(YAML, "gates.a.parsing.defaults.code"), Some((6, 18)));
        assert_eq!(locate(YAML, "active_gates[1]"), Some((2, 19)));
    }

    #[test]
    fn finds_duplicate_keys() {
        let yaml = "gates:\n  a: {x: 1}\n  b: {}\n  a: {y: 2}\n";
        assert_eq!(
            first_duplicate_key(yaml),
            Some(("gates.a".to_string(), (4, 3)))
        );
        assert_eq!(first_duplicate_key(YAML), None);
    }

    #[test]
    fn falls_back_to_nearest_ancestor() {
        assert_eq!(locate(YAML, "gates.a.parsing.nope"), Some((5, 5)));
        assert_eq!(locate(YAML, "nothing"), None);
    }
}
