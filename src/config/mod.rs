//! Loads `.st3/quality.yaml` (or `--config`, or the embedded default) and
//! compiles it into a validated [`Config`]: the model in `model`, the YAML
//! in `yaml`, the checks in `compile`. Every problem is a [`ConfigError`]
//! naming file, line, key and the fix.

mod compile;
mod model;
pub(crate) mod schema;
mod yaml;

use std::path::Path;

use crate::error::{ConfigError, QgError};
use compile::Compiler;
pub use model::*;
use schema::RawConfig;

/// The zero-setup default: the project part, then the tools part.
pub const EMBEDDED_DEFAULT: &str = concat!(
    include_str!("default/project.yaml"),
    "\n",
    include_str!("default/tools.yaml")
);

/// The default's import analyzer and gates, which `qg init` copies whole
/// after a project part of its own.
pub(crate) const DEFAULT_TOOLS: &str = include_str!("default/tools.yaml");

/// Where the config is looked up inside the project.
pub(crate) const PROJECT_CONFIG: &str = ".st3/quality.yaml";

/// Finds and loads the config: `explicit`, else `<root>/.st3/quality.yaml`,
/// else the embedded default.
pub(crate) fn load(root: &Path, explicit: Option<&Path>) -> Result<Config, QgError> {
    let (origin, text) = match explicit {
        Some(path) => (path.display().to_string(), read_config(path)?),
        None => {
            let path = root.join(PROJECT_CONFIG);
            if path.is_file() {
                (PROJECT_CONFIG.to_string(), read_config(&path)?)
            } else {
                (
                    "<embedded default>".to_string(),
                    EMBEDDED_DEFAULT.to_string(),
                )
            }
        }
    };
    Ok(parse(&text, &origin)?)
}

/// A quality config is a few kilobytes; anything this large is a mistake,
/// and parsing it would cost seconds and hundreds of megabytes.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

fn read_config(path: &Path) -> Result<String, QgError> {
    let too_big = std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_CONFIG_BYTES);
    if too_big {
        return Err(QgError::Config(ConfigError {
            file: path.display().to_string(),
            line: None,
            column: None,
            key: None,
            message: format!(
                "config is larger than {MAX_CONFIG_BYTES} bytes; is this the right file?"
            ),
        }));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        QgError::Config(ConfigError {
            file: path.display().to_string(),
            line: None,
            column: None,
            key: None,
            message: format!("cannot read config: {e}"),
        })
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        QgError::Config(ConfigError {
            file: path.display().to_string(),
            line: Some(line),
            column: None,
            key: None,
            message: "config is not valid UTF-8; save it as UTF-8".into(),
        })
    })
}

/// Parses and validates config text. `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    let raw: RawConfig = yaml::from_str(text, origin)?;
    Compiler { text, origin }.compile(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_is_valid_and_has_the_four_gates() {
        let config = parse(EMBEDDED_DEFAULT, "<embedded default>").unwrap();
        assert_eq!(
            config.active_gates,
            ["ruff_format", "ruff_check", "mypy", "pyright"]
        );
        for id in &config.active_gates {
            let gate = &config.gates[id];
            // A gate that fixes says how; one that cannot says how to re-check.
            assert_ne!(gate.fix_hint.is_some(), gate.rerun_hint.is_some(), "{id}");
        }
    }

    #[test]
    fn a_gate_claiming_a_fixer_must_have_one() {
        let text = "version: \"1\"\ngates:\n  lint:\n    execution: {command: [lint]}\n    parsing: {strategy: exit_code}\n    capabilities: {supports_autofix: true}\nactive_gates: [lint]\n";
        let message = parse(text, "q.yaml").unwrap_err().to_string();
        assert!(message.contains("supports_autofix"), "{message}");
        assert!(message.contains("fix: {command"), "{message}");
        let text = text.replace(
            "capabilities: {supports_autofix: true}",
            "fix: {command: [lint, --fix]}",
        );
        let message = parse(&text, "q.yaml").unwrap_err().to_string();
        assert!(
            message.contains("needs `capabilities.supports_autofix: true`"),
            "{message}"
        );
    }
}
