//! Loads `.st3/quality.yaml` or `[tool.qg]` in `pyproject.toml` (or
//! `--config`, or the embedded default) and compiles it into a validated
//! [`Config`]: the model in `model`, the YAML in `yaml`, the TOML table in
//! `pyproject`, the checks in `compile`. Every problem is a [`ConfigError`]
//! naming file, line, key and the fix.

mod compile;
mod model;
mod pyproject;
pub(crate) mod schema;
mod select;
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

/// The origin a config read from the embedded default says it came from.
pub(crate) const EMBEDDED_ORIGIN: &str = "<embedded default>";

/// The built-in `project_scope` globs, include and exclude, as the
/// embedded default writes them: the one source `qg init` writes from, so
/// that an initialised project checks what the default checks.
pub(crate) fn default_project_globs() -> (Vec<String>, Vec<String>) {
    let default = parse(EMBEDDED_DEFAULT, EMBEDDED_ORIGIN)
        .expect("the embedded default config is valid (a unit test loads it)");
    (
        default.project_scope.include_patterns().to_vec(),
        default.project_scope.exclude_patterns().to_vec(),
    )
}

/// Where the config is looked up inside the project.
pub(crate) const PROJECT_CONFIG: &str = ".st3/quality.yaml";

/// The Python project file whose `[tool.qg]` table is the other place a
/// config may live.
pub(crate) const PYPROJECT: &str = "pyproject.toml";

/// Finds and loads the config: `explicit`, else `<root>/.st3/quality.yaml`,
/// else `[tool.qg]` in `<root>/pyproject.toml`, else the embedded default.
/// The dedicated file wins over the shared one, as ruff's `ruff.toml` and
/// mypy's `mypy.ini` win over their `pyproject.toml` tables; a table it
/// shadows is named in a warning, never ignored silently.
pub(crate) fn load(root: &Path, explicit: Option<&Path>) -> Result<Config, QgError> {
    if let Some(path) = explicit {
        return load_file(path);
    }
    let yaml = root.join(PROJECT_CONFIG);
    let pyproject = root.join(PYPROJECT);
    let pyproject_text = match pyproject.is_file() {
        true => Some(read_config(&pyproject, PYPROJECT)?),
        false => None,
    };
    if yaml.is_file() {
        let mut config = parse(&read_config(&yaml, PROJECT_CONFIG)?, PROJECT_CONFIG)?;
        if pyproject_text.as_deref().is_some_and(has_tool_qg) {
            config.warnings.push(format!(
                "{PYPROJECT} has a [tool.qg] table, but {PROJECT_CONFIG} takes precedence and \
                 the table is ignored; keep one of them"
            ));
        }
        return Ok(config);
    }
    if let Some(text) = pyproject_text {
        if let Some(config) = parse_pyproject(&text, PYPROJECT)? {
            return Ok(config);
        }
    }
    Ok(parse(EMBEDDED_DEFAULT, EMBEDDED_ORIGIN)?)
}

/// Whether a `pyproject.toml` text has a `[tool.qg]` table (`false` when
/// it is not TOML at all).
pub(crate) fn has_tool_qg(pyproject: &str) -> bool {
    pyproject::table_text(pyproject).is_some()
}

/// `--config FILE`: a `.toml` file is read for its `[tool.qg]` table, any
/// other as YAML.
fn load_file(path: &Path) -> Result<Config, QgError> {
    let origin = path.display().to_string();
    let text = read_config(path, &origin)?;
    if path.extension().is_none_or(|x| x != "toml") {
        return Ok(parse(&text, &origin)?);
    }
    parse_pyproject(&text, &origin)?.ok_or_else(|| {
        QgError::Config(ConfigError {
            file: origin,
            line: None,
            column: None,
            key: Some(pyproject::TABLE.to_string()),
            message: "has no [tool.qg] table; add one, or name a YAML config".into(),
        })
    })
}

/// A quality config is a few kilobytes; anything this large is a mistake,
/// and parsing it would cost seconds and hundreds of megabytes.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of the config at `path`, named `shown` in errors (the project
/// config by its root-relative name, `.st3/quality.yaml`, as its other
/// errors are — never `Z:\\proj\\.st3/quality.yaml`).
fn read_config(path: &Path, shown: &str) -> Result<String, QgError> {
    let too_big = std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_CONFIG_BYTES);
    if too_big {
        return Err(QgError::Config(ConfigError {
            file: shown.to_string(),
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
            file: shown.to_string(),
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
            file: shown.to_string(),
            line: Some(line),
            column: None,
            key: None,
            message: "config is not valid UTF-8; save it as UTF-8".into(),
        })
    })
}

/// Parses and validates YAML config text. `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    let raw: RawConfig = yaml::from_str(text, origin)?;
    let compiler = Compiler {
        text,
        origin,
        format: Format::Yaml,
    };
    compiler.compile(raw, text)
}

/// Parses and validates the `[tool.qg]` table of a `pyproject.toml`;
/// `None` when it has none.
pub(crate) fn parse_pyproject(text: &str, origin: &str) -> Result<Option<Config>, ConfigError> {
    let Some(raw) = pyproject::from_str::<RawConfig>(text, origin)? else {
        return Ok(None);
    };
    let compiler = Compiler {
        text,
        origin,
        format: Format::PyProject,
    };
    let table = pyproject::table_text(text).unwrap_or_default();
    compiler.compile(raw, &table).map(Some)
}

/// The syntax a config is written in, which decides how a key is found
/// in it and how its path is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `.st3/quality.yaml`: keys from the top (`gates.mypy`).
    Yaml,
    /// `[tool.qg]` in `pyproject.toml`: keys under `tool.qg.`.
    PyProject,
}

impl Format {
    /// The path of `key` as the user sees it in the file.
    fn shown_key(self, key: &str) -> String {
        match (self, key) {
            (Format::Yaml, _) => key.to_string(),
            (Format::PyProject, "") => pyproject::TABLE.to_string(),
            (Format::PyProject, _) => format!("{}.{key}", pyproject::TABLE),
        }
    }

    /// Where the key `shown` (a [`Format::shown_key`]) sits in `text`.
    fn locate(self, text: &str, shown: &str) -> Option<(usize, usize)> {
        match self {
            Format::Yaml => yaml::locate(text, shown),
            Format::PyProject => pyproject::locate(text, shown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_is_valid_and_has_the_four_gates() {
        let config = parse(EMBEDDED_DEFAULT, EMBEDDED_ORIGIN).unwrap();
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

    /// A config that names no files gets the embedded default's.
    #[test]
    fn a_config_without_project_scope_has_the_embedded_defaults_files() {
        let short = parse("version: \"1\"\nactive_gates: [ruff_check]\n", "short").unwrap();
        assert_eq!(
            short.project_scope.include_patterns(),
            default_project_globs().0
        );
    }

    #[test]
    fn a_tool_qg_table_needs_no_version_as_no_other_tools_table_does() {
        let text = "[project]\nname = \"x\"\n\n[tool.qg]\nactive_gates = [\"ruff_check\"]\n";
        let config = parse_pyproject(text, "pyproject.toml").unwrap().unwrap();
        assert_eq!(config.active_gates, ["ruff_check"]);
        let wrong = parse_pyproject(
            "[tool.qg]\nversion = \"2\"\nactive_gates = []\n",
            "pyproject.toml",
        );
        assert!(wrong.unwrap_err().to_string().contains("version"));
    }

    /// `{devnull}` in a daemon's `fresh_args` is the platform's null
    /// device once the config is loaded; any other placeholder is refused.
    #[test]
    fn fresh_args_name_the_null_device_and_no_unknown_placeholder() {
        let text = |arg: &str| {
            format!("version: \"1\"\ngates:\n  lint:\n    execution: {{command: [lint], batchable: false}}\n    parsing: {{strategy: exit_code}}\n    daemon: {{protocol: command, command: [d], ready_file: r, check: [c], fresh_args: [\"{arg}\"]}}\nactive_gates: [lint]\n")
        };
        let config = parse(&text("--cache={devnull}"), "q.yaml").unwrap();
        let daemon = config.gates["lint"].daemon.as_ref().unwrap();
        let devnull = if cfg!(windows) { "nul" } else { "/dev/null" };
        assert_eq!(daemon.fresh_args, [format!("--cache={devnull}")]);
        let message = parse(&text("--cache={nope}"), "q.yaml")
            .unwrap_err()
            .to_string();
        assert!(message.contains("fresh_args[0]"), "{message}");
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
