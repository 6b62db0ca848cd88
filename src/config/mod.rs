//! Loads `.st3/quality.yaml` (or `--config`, or the embedded default) and
//! compiles it into a validated [`Config`]. Every problem is a [`ConfigError`]
//! naming file, line, key and the fix.

pub mod schema;
mod yaml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::error::{ConfigError, QgError};
use crate::globs::{GlobError, GlobFilter};
use crate::parse::json::{JsonSettings, JsonSpec};
use crate::parse::text::{RuleSettings, TextSettings, TextSpec};
use crate::parse::{ParserSpec, SpecError};
use crate::suggest;
use crate::violation::Severity;
use schema::{RawConfig, RawGate, RawParsing, Strategy, Version};

/// The zero-setup default: the project part, then the tools part.
pub const EMBEDDED_DEFAULT: &str = concat!(
    include_str!("default/project.yaml"),
    "\n",
    include_str!("default/tools.yaml")
);

/// The default's import analyzer and gates, which `qg init` copies whole
/// after a project part of its own.
pub const DEFAULT_TOOLS: &str = include_str!("default/tools.yaml");

/// Where the config is looked up inside the project.
pub const PROJECT_CONFIG: &str = ".st3/quality.yaml";

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it came from, for messages (`.st3/quality.yaml`, `<embedded default>`).
    pub origin: String,
    /// Git blob id of the config text: changes whenever the config does.
    pub hash: String,
    /// Gate ids to run, in report order.
    pub active_gates: Vec<String>,
    /// Which files `project` scope covers; its excludes apply to every scope.
    pub project_scope: GlobFilter,
    /// Parent branch for `branch` scope.
    pub parent_branch: Option<String>,
    /// Where raw tool output is kept.
    pub artifact_logging: ArtifactLogging,
    /// The analyzer that finds the files importing a changed one.
    pub import_graph: Option<ImportGraph>,
    /// Every defined gate, by id.
    pub gates: BTreeMap<String, Gate>,
}

/// Artifact-log settings.
#[derive(Debug, Clone)]
pub struct ArtifactLogging {
    /// Whether logs are written at all.
    pub enabled: bool,
    /// Root-relative directory.
    pub output_dir: PathBuf,
    /// Newest files kept; older ones are deleted.
    pub max_files: usize,
}

/// `import_graph`: a command that prints, for the files it is given, the
/// project files each imports, as one JSON object (`{"a.py": ["b.py"]}`).
#[derive(Debug, Clone)]
pub struct ImportGraph {
    /// argv; the files to analyze are appended.
    pub command: Vec<String>,
    /// Wall-clock limit for one analyzer run.
    pub timeout: Duration,
    /// Suffixes of the files it analyzes.
    pub file_types: Vec<String>,
    /// A regex with a `file` group matching, on stderr, a file the analyzer
    /// could not read: that file's imports are unknown.
    pub unreadable: Option<regex::Regex>,
    /// Root-relative files whose change can change how imports resolve
    /// (the analyzer's own config): any change rebuilds the graph.
    pub config_files: Vec<String>,
    /// Command that installs the analyzer; `{venv_bin}` as for gates.
    pub install_hint: Option<String>,
}

/// One compiled gate.
#[derive(Debug, Clone)]
pub struct Gate {
    /// Key under `gates`.
    pub id: String,
    /// Human name (defaults to the id).
    pub name: String,
    /// argv; `command[0]` is resolved through the virtualenv, then PATH.
    pub command: Vec<String>,
    /// Wall-clock limit; the whole process tree is killed past it.
    pub timeout: Duration,
    /// Root-relative directory the tool runs in.
    pub working_dir: Option<PathBuf>,
    /// Whether the gate's files are appended to `command`.
    pub pass_files: bool,
    /// Whether the files may be split over several runs (argument-length
    /// limit, idle cores). False for tools that must see every file at once.
    pub batchable: bool,
    /// Run on every project file the gate accepts, but report only
    /// violations in the scoped files (type checkers: an edit can break an
    /// unchanged importer).
    pub project_wide: bool,
    /// Extra environment variables for the tool.
    pub env: BTreeMap<String, String>,
    /// Exit codes meaning "ran fine".
    pub exit_codes_ok: Vec<i32>,
    /// Exit codes meaning "ran fine and found violations".
    pub exit_codes_violations: Vec<i32>,
    /// Lowest severity that fails the gate.
    pub fail_on: Severity,
    /// Finding codes by which the tool says it could not check a file (ruff's
    /// `io`): the gate is then an error, not a verdict on the code.
    pub tool_error_codes: Vec<String>,
    /// How output becomes violations.
    pub parser: ParserSpec,
    /// File suffixes the tool understands (`.py`); empty = any.
    pub file_types: Vec<String>,
    /// Whether the tool can fix findings itself.
    pub supports_autofix: bool,
    /// Gate-specific include/exclude globs.
    pub scope: GlobFilter,
    /// On a partial scope, also check every project file that imports a
    /// scoped file, transitively (type checkers: an edit can break an
    /// unchanged importer). Needs `import_graph`.
    pub importers: bool,
    /// Command that fixes findings; `{files}` becomes the failing files.
    pub fix_hint: Option<String>,
    /// Command that checks the failing files again, for a gate with no
    /// fixer (a type checker); `{files}` as in `fix_hint`.
    pub rerun_hint: Option<String>,
    /// Command that installs the tool, shown when it is missing;
    /// `{venv_bin}` becomes the project virtualenv's `bin/` (the tools
    /// module expands it).
    pub install_hint: Option<String>,
    /// Arguments that make `command[0]` print its version (`["--version"]`),
    /// asked once per installed binary; none: the version is not reported.
    pub version_args: Option<Vec<String>>,
    /// The codes by which the tool says an import cannot be resolved, and
    /// what to do when most findings are such: a type checker that cannot
    /// see the project's dependencies reports them by the hundred.
    pub unresolved_imports: Option<UnresolvedImports>,
    /// How the tool picks its own files: then `--scope project` runs the
    /// tool's own whole-project invocation, and partial scopes pass only
    /// files it would check.
    pub selection: Option<SelectionSpec>,
}

/// How a tool picks its own files (the selection module reads it).
#[derive(Debug, Clone)]
pub struct SelectionSpec {
    /// Arguments of the tool's own whole-project run, appended to the
    /// command unless its config names the files itself.
    pub project_args: Vec<String>,
    /// Where its config may live, in the tool's order of precedence.
    pub config: Vec<ConfigSource>,
    /// The key that names the files it checks.
    pub include: Option<SelectionKey>,
    /// The key that names files it leaves out.
    pub exclude: Option<SelectionKey>,
    /// How it treats a `.py` beside a `.pyi`.
    pub stubs: StubPolicy,
}

/// A config file and the section in it (`tool.mypy` in TOML, `mypy` in
/// INI, `""` for the root of a JSON file).
#[derive(Debug, Clone)]
pub struct ConfigSource {
    /// Root-relative file.
    pub file: String,
    /// Section.
    pub section: String,
}

/// A config key holding file patterns, and the patterns the tool assumes
/// when the key is absent.
#[derive(Debug, Clone)]
pub struct SelectionKey {
    /// The key.
    pub key: String,
    /// How its entries are written.
    pub syntax: PatternSyntax,
    /// The tool's default when the key is absent.
    pub default: Vec<String>,
}

pub use schema::{PatternSyntax, StubPolicy};

/// See [`Gate::unresolved_imports`].
#[derive(Debug, Clone)]
pub struct UnresolvedImports {
    /// Rule codes (`reportMissingImports`, `import-not-found`).
    pub codes: Vec<String>,
    /// What to do; `{venv_bin}` as in `install_hint`.
    pub advice: String,
}

/// Finds and loads the config: `explicit`, else `<root>/.st3/quality.yaml`,
/// else the embedded default.
pub fn load(root: &Path, explicit: Option<&Path>) -> Result<Config, QgError> {
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
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

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

/// Compiles raw config, turning each semantic problem into a located error.
struct Compiler<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Compiler<'_> {
    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let position = yaml::locate(self.text, key);
        ConfigError {
            file: self.origin.to_string(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    fn compile(&self, raw: RawConfig) -> Result<Config, ConfigError> {
        self.check_version(&raw.version)?;
        let gate_ids: Vec<&str> = raw.gates.keys().map(String::as_str).collect();
        self.check_active_gates(&raw.active_gates, &gate_ids)?;
        let project_scope = GlobFilter::new(
            &raw.project_scope.include_globs,
            &raw.project_scope.exclude_globs,
        )
        .map_err(|e| self.glob_error("project_scope", e))?;
        let artifact_logging = self.artifact_logging(raw.artifact_logging)?;
        let import_graph = raw
            .import_graph
            .map(|graph| self.import_graph(graph))
            .transpose()?;
        let mut gates = BTreeMap::new();
        for (id, gate) in raw.gates {
            let compiled = self.gate(&id, gate)?;
            if compiled.importers && import_graph.is_none() {
                return Err(self.error(
                    &format!("gates.{id}.scope.importers"),
                    "needs an `import_graph` section naming the analyzer that finds importers",
                ));
            }
            gates.insert(id, compiled);
        }
        Ok(Config {
            origin: self.origin.to_string(),
            hash: crate::git::hash_blob(self.text.as_bytes()),
            active_gates: raw.active_gates,
            project_scope,
            parent_branch: raw.parent_branch,
            artifact_logging,
            import_graph,
            gates,
        })
    }

    fn import_graph(&self, raw: schema::RawImportGraph) -> Result<ImportGraph, ConfigError> {
        let key = |sub: &str| format!("import_graph.{sub}");
        if raw.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(self.error(
                &key("command"),
                "is empty; give the analyzer and its arguments",
            ));
        }
        if !(raw.timeout_seconds.is_finite() && raw.timeout_seconds > 0.0) {
            return Err(self.error(
                &key("timeout_seconds"),
                format!(
                    "must be a positive number of seconds, not {}",
                    raw.timeout_seconds
                ),
            ));
        }
        let unreadable = raw
            .unreadable_pattern
            .as_deref()
            .map(|pattern| {
                let regex = regex::RegexBuilder::new(pattern)
                    .multi_line(true)
                    .build()
                    .map_err(|e| format!("invalid regex: {e}"))?;
                match regex.capture_names().flatten().any(|n| n == "file") {
                    true => Ok(regex),
                    false => Err("needs a `(?P<file>...)` group".to_string()),
                }
            })
            .transpose()
            .map_err(|m| self.error(&key("unreadable_pattern"), m))?;
        if let Some(hint) = &raw.install_hint {
            check_placeholders(hint, "{venv_bin}")
                .map_err(|m| self.error(&key("install_hint"), m))?;
        }
        Ok(ImportGraph {
            command: raw.command,
            timeout: Duration::from_secs_f64(raw.timeout_seconds),
            file_types: raw.file_types,
            unreadable,
            config_files: raw.config_files,
            install_hint: raw.install_hint,
        })
    }

    fn check_version(&self, version: &Version) -> Result<(), ConfigError> {
        let ok = match version {
            Version::Text(t) => t == "1",
            Version::Number(n) => *n == 1,
        };
        if ok {
            Ok(())
        } else {
            Err(self.error(
                "version",
                "unsupported version; this qg reads version \"1\"",
            ))
        }
    }

    fn check_active_gates(&self, active: &[String], defined: &[&str]) -> Result<(), ConfigError> {
        if active.is_empty() {
            return Err(self.error(
                "active_gates",
                "is empty; list at least one gate defined under `gates`",
            ));
        }
        let mut seen = BTreeSet::new();
        for (index, id) in active.iter().enumerate() {
            let key = format!("active_gates[{index}]");
            if !defined.contains(&id.as_str()) {
                let hint = suggest::hint(id, defined);
                return Err(self.error(
                    &key,
                    format!("gate `{id}` is not defined under `gates`; {hint}"),
                ));
            }
            if !seen.insert(id) {
                return Err(self.error(&key, format!("gate `{id}` is listed twice")));
            }
        }
        Ok(())
    }

    fn artifact_logging(
        &self,
        raw: schema::RawArtifactLogging,
    ) -> Result<ArtifactLogging, ConfigError> {
        if raw.max_files == 0 {
            return Err(self.error(
                "artifact_logging.max_files",
                "must be at least 1 (set `enabled: false` to turn logging off)",
            ));
        }
        let output_dir = self
            .relative_dir(&raw.output_dir)
            .map_err(|m| self.error("artifact_logging.output_dir", m))?;
        Ok(ArtifactLogging {
            enabled: raw.enabled,
            output_dir,
            max_files: raw.max_files,
        })
    }

    fn relative_dir(&self, dir: &str) -> Result<PathBuf, String> {
        let path = PathBuf::from(dir);
        let escapes = path.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        });
        if dir.trim().is_empty() || escapes {
            Err(format!(
                "`{dir}` must be a directory relative to the project root, without `..`"
            ))
        } else {
            Ok(path)
        }
    }

    fn gate(&self, id: &str, raw: RawGate) -> Result<Gate, ConfigError> {
        let key = |sub: &str| format!("gates.{id}.{sub}");
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(self.error(
                &format!("gates.{id}"),
                "gate ids may use only letters, digits, `_` and `-`",
            ));
        }
        let exec = raw.execution;
        if exec.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(self.error(
                &key("execution.command"),
                "is empty; give the program and its arguments, e.g. [\"ruff\", \"check\"]",
            ));
        }
        if !(exec.timeout_seconds.is_finite() && exec.timeout_seconds > 0.0) {
            return Err(self.error(
                &key("execution.timeout_seconds"),
                format!(
                    "must be a positive number of seconds, not {}",
                    exec.timeout_seconds
                ),
            ));
        }
        let working_dir = exec
            .working_dir
            .as_deref()
            .map(|d| self.relative_dir(d))
            .transpose()
            .map_err(|m| self.error(&key("execution.working_dir"), m))?;
        let success = raw.success;
        if let Some(code) = success
            .exit_codes_ok
            .iter()
            .find(|c| success.exit_codes_violations.contains(c))
        {
            return Err(self.error(
                &key("success"),
                format!("exit code {code} is in both exit_codes_ok and exit_codes_violations"),
            ));
        }
        for (index, suffix) in raw.capabilities.file_types.iter().enumerate() {
            if !suffix.starts_with('.') || suffix.len() < 2 {
                return Err(self.error(
                    &key(&format!("capabilities.file_types[{index}]")),
                    format!("`{suffix}` must be a suffix starting with `.`, like \".py\""),
                ));
            }
        }
        let hints = [
            ("fix_hint", &raw.fix_hint, "{files}"),
            ("rerun_hint", &raw.rerun_hint, "{files}"),
            ("install_hint", &raw.install_hint, "{venv_bin}"),
            (
                "unresolved_imports.advice",
                &raw.unresolved_imports.as_ref().map(|u| u.advice.clone()),
                "{venv_bin}",
            ),
        ];
        for (name, hint, known) in hints {
            if let Some(hint) = hint {
                check_placeholders(hint, known).map_err(|m| self.error(&key(name), m))?;
            }
        }
        let parser = self
            .parser(&raw.parsing)
            .map_err(|e| self.error(&key(&format!("parsing.{}", e.key)), e.message))?;
        let scope = GlobFilter::new(&raw.scope.include_globs, &raw.scope.exclude_globs)
            .map_err(|e| self.glob_error(&key("scope"), e))?;
        Ok(Gate {
            id: id.to_string(),
            name: raw.name.unwrap_or_else(|| id.to_string()),
            command: exec.command,
            timeout: Duration::from_secs_f64(exec.timeout_seconds),
            working_dir,
            pass_files: exec.pass_files,
            batchable: exec.batchable,
            project_wide: exec.project_wide,
            env: exec.env,
            exit_codes_ok: success.exit_codes_ok,
            exit_codes_violations: success.exit_codes_violations,
            fail_on: success.fail_on,
            tool_error_codes: success.tool_error_codes,
            parser,
            file_types: raw.capabilities.file_types,
            supports_autofix: raw.capabilities.supports_autofix,
            scope,
            importers: raw.scope.importers,
            fix_hint: raw.fix_hint,
            rerun_hint: raw.rerun_hint,
            install_hint: raw.install_hint,
            version_args: raw.version_args,
            unresolved_imports: raw.unresolved_imports.map(|u| UnresolvedImports {
                codes: u.codes,
                advice: u.advice,
            }),
            selection: raw.selection.map(|s| {
                let key = |k: schema::RawSelectionKey| SelectionKey {
                    key: k.key,
                    syntax: k.syntax,
                    default: k.default,
                };
                SelectionSpec {
                    project_args: s.project_args,
                    config: s
                        .config
                        .into_iter()
                        .map(|c| ConfigSource {
                            file: c.file,
                            section: c.section,
                        })
                        .collect(),
                    include: s.include.map(key),
                    exclude: s.exclude.map(key),
                    stubs: s.stubs,
                }
            }),
        })
    }

    fn parser(&self, raw: &RawParsing) -> Result<ParserSpec, SpecError> {
        reject_foreign_keys(raw)?;
        match raw.strategy {
            Strategy::JsonViolations => {
                let empty = BTreeMap::new();
                let field_map = raw.field_map.as_ref().unwrap_or(&empty);
                JsonSpec::new(JsonSettings {
                    source: raw.source,
                    violations_path: raw.violations_path.as_deref(),
                    json_lines: raw.json_lines.unwrap_or(false),
                    field_map,
                    fixable_when: raw.fixable_when.as_deref(),
                    line_offset: raw.line_offset,
                    column_offset: raw.column_offset,
                    severity_default: raw.severity_default,
                })
                .map(ParserSpec::Json)
            }
            Strategy::TextViolations => TextSpec::new(TextSettings {
                rules: text_rules(raw)?,
                severity_default: raw.severity_default,
                line_offset: raw.line_offset,
                column_offset: raw.column_offset,
            })
            .map(ParserSpec::Text),
            Strategy::ExitCode => Ok(ParserSpec::ExitCode),
        }
    }

    fn glob_error(&self, parent: &str, e: GlobError) -> ConfigError {
        self.error(
            &format!("{parent}.{}[{}]", e.list, e.index),
            format!("invalid glob: {}", e.message),
        )
    }
}

/// `text_violations` rules: one `pattern` (with `defaults`), or a
/// `patterns` list whose entries may each read their own stream.
fn text_rules(raw: &RawParsing) -> Result<Vec<RuleSettings<'_>>, SpecError> {
    match (&raw.pattern, &raw.patterns) {
        (Some(pattern), None) => Ok(vec![RuleSettings {
            key: String::new(),
            source: raw.source,
            pattern,
            defaults: raw.defaults.as_ref(),
        }]),
        (None, Some(_)) if raw.defaults.is_some() => Err(SpecError::new(
            "defaults",
            "goes inside each `patterns` entry when `patterns` is used",
        )),
        (None, Some(rules)) => Ok(rules
            .iter()
            .enumerate()
            .map(|(index, rule)| RuleSettings {
                key: format!("patterns[{index}]."),
                source: rule.source.unwrap_or(raw.source),
                pattern: &rule.pattern,
                defaults: rule.defaults.as_ref(),
            })
            .collect()),
        (Some(_), Some(_)) => Err(SpecError::new(
            "patterns",
            "give either `pattern` or `patterns`, not both",
        )),
        (None, None) => Err(SpecError::new(
            "pattern",
            "text_violations needs a `pattern` regex (or a `patterns` list)",
        )),
    }
}

/// Keys that belong to another strategy are mistakes, not options.
fn reject_foreign_keys(raw: &RawParsing) -> Result<(), SpecError> {
    let json_only = [
        ("violations_path", raw.violations_path.is_some()),
        ("json_lines", raw.json_lines.is_some()),
        ("field_map", raw.field_map.is_some()),
        ("fixable_when", raw.fixable_when.is_some()),
    ];
    let text_only = [
        ("pattern", raw.pattern.is_some()),
        ("patterns", raw.patterns.is_some()),
        ("defaults", raw.defaults.is_some()),
    ];
    let foreign: &[(&str, bool)] = match raw.strategy {
        Strategy::JsonViolations => &text_only,
        Strategy::TextViolations => &json_only,
        Strategy::ExitCode => &[],
    };
    let exit_code_foreign = raw.strategy == Strategy::ExitCode
        && json_only
            .iter()
            .chain(text_only.iter())
            .any(|(_, set)| *set);
    if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
        return Err(SpecError::new(
            *key,
            format!("does not apply to strategy {:?}; remove it", raw.strategy),
        ));
    }
    if exit_code_foreign {
        return Err(SpecError::new(
            "strategy",
            "exit_code reads no output; remove the json/text parsing keys",
        ));
    }
    Ok(())
}

/// A hint may hold only its one `{placeholder}`.
fn check_placeholders(hint: &str, known: &str) -> Result<(), String> {
    let placeholders = hint.match_indices('{').map(|(i, _)| &hint[i..]);
    for rest in placeholders {
        if !rest.starts_with(known) {
            let shown: String = rest.chars().take_while(|c| *c != '}').collect();
            return Err(format!(
                "unknown placeholder `{shown}}}`; only `{known}` is known"
            ));
        }
    }
    Ok(())
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
            assert_eq!(gate.fix_hint.is_some(), gate.supports_autofix, "{id}");
            assert_eq!(gate.rerun_hint.is_some(), !gate.supports_autofix, "{id}");
        }
    }
}
