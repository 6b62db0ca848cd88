//! Property tests: arbitrary bytes and hostile-but-structured JSON and YAML
//! thrown at every parser and at the config loader. The property is that
//! nothing panics and every answer is a value or a clean error. File names
//! of arbitrary bytes survive the lossless encoding and print distinctly.
//!
//! Cases per test: PROPTEST_CASES (default here 2,000); e.g.
//! `PROPTEST_CASES=100000 cargo test --release --test properties`.
// Unix: these tests drive `sh` scripts and the Linux tools; the Windows
// binary has tests/windows.rs.
#![cfg(unix)]

use std::path::Path;
use std::sync::LazyLock;

use proptest::prelude::*;
use qg::config::{self, Config, EMBEDDED_DEFAULT};
use qg::parse::ToolOutput;
use qg::paths::PathContext;
use serde_json::Value;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

/// The default config, loaded once: the parsers are what the cases vary,
/// and loading it per case was most of these tests' time.
static DEFAULT: LazyLock<Config> =
    LazyLock::new(|| config::parse(EMBEDDED_DEFAULT, "<embedded default>").unwrap());

/// Every parser of the default config (text, JSON, JSON Lines).
fn parse_with_every_gate(stdout: &[u8]) {
    let config = &*DEFAULT;
    let root = Path::new("/repo");
    let output = ToolOutput {
        stdout,
        stderr: stdout,
    };
    for gate in config.gates.values() {
        if let Ok(parsed) = gate.parser.parse(&output, &PathContext::new(root, root)) {
            for v in parsed.violations {
                assert!(v.line.is_none_or(|l| l >= 1));
                assert!(v.column.is_none_or(|c| c >= 1));
            }
        }
    }
}

/// JSON documents of any shape, biased towards the keys tools use.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("file".to_string()),
        Just("filename".to_string()),
        Just("line".to_string()),
        Just("location".to_string()),
        Just("row".to_string()),
        Just("range".to_string()),
        Just("start".to_string()),
        Just("message".to_string()),
        Just("severity".to_string()),
        Just("generalDiagnostics".to_string()),
        Just("fix".to_string()),
        Just("applicability".to_string()),
        ".{0,8}".prop_map(String::from),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 256, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_bytes_never_panic_a_parser(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        parse_with_every_gate(&bytes);
    }

    #[test]
    fn hostile_json_never_panics_a_parser(doc in json_value(), lines in any::<bool>()) {
        let text = if lines {
            // As JSON Lines: each array element (or the document) on its own line.
            match &doc {
                Value::Array(items) => items.iter().map(|i| format!("{i}\n")).collect(),
                other => format!("{other}\n"),
            }
        } else {
            doc.to_string()
        };
        parse_with_every_gate(text.as_bytes());
    }

    #[test]
    fn arbitrary_text_never_panics_the_config_loader(text in ".{0,512}") {
        let _ = config::parse(&text, "fuzz.yaml");
    }

    #[test]
    fn mutated_default_config_never_panics_the_loader(
        cut in 0usize..EMBEDDED_DEFAULT.len(),
        insert in prop::sample::select(vec!["", ":", "- ", "[", "]", "{", "}", "*a", "&a ", "\t", "\n  x: 1\n", "'", "\"", "!!binary ", "? "]),
    ) {
        let mut text = EMBEDDED_DEFAULT.to_string();
        let at = (0..=cut).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        text.insert_str(at, insert);
        let _ = config::parse(&text, "fuzz.yaml");
    }

    #[test]
    fn file_names_round_trip_and_display_on_one_distinct_line(
        a in prop::collection::vec(any::<u8>(), 0..64),
        b in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        use qg::file_name::{display, display_json, from_bytes, to_bytes};
        let (name_a, name_b) = (from_bytes(&a), from_bytes(&b));
        prop_assert_eq!(to_bytes(&name_a).into_owned(), a.clone());
        prop_assert!(!display(&name_a).contains(['\n', '\r', '\x1b']));
        if a != b {
            prop_assert_ne!(display(&name_a), display(&name_b));
            prop_assert_ne!(display_json(&name_a), display_json(&name_b));
        }
    }

    #[test]
    fn config_errors_are_single_lines(text in "[a-z_:\\[\\]{}\\- \\n\"'0-9]{0,200}") {
        if let Err(e) = config::parse(&text, "fuzz.yaml") {
            let line = e.to_string();
            prop_assert!(!line.contains('\n'), "{line:?}");
            prop_assert!(line.starts_with("fuzz.yaml"), "{line:?}");
        }
    }
}
