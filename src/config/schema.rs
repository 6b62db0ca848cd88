//! The on-disk shape of `.st3/quality.yaml`, deserialized strictly: every
//! struct denies unknown keys so a typo is an error, never silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::parse::{Field, OutputStream};
use crate::violation::Severity;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub version: Version,
    pub active_gates: Vec<String>,
    #[serde(default)]
    pub project_scope: RawProjectScope,
    #[serde(default)]
    pub parent_branch: Option<String>,
    #[serde(default)]
    pub artifact_logging: RawArtifactLogging,
    #[serde(default)]
    pub import_graph: Option<RawImportGraph>,
    pub gates: BTreeMap<String, RawGate>,
}

/// `import_graph`: the analyzer that says which project files import which.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawImportGraph {
    pub command: Vec<String>,
    #[serde(default = "default_graph_timeout")]
    pub timeout_seconds: f64,
    #[serde(default = "default_graph_types")]
    pub file_types: Vec<String>,
    #[serde(default)]
    pub unreadable_pattern: Option<String>,
    #[serde(default)]
    pub config_files: Vec<String>,
    #[serde(default)]
    pub install_hint: Option<String>,
}

fn default_graph_timeout() -> f64 {
    120.0
}

fn default_graph_types() -> Vec<String> {
    vec![".py".into(), ".pyi".into()]
}

/// `version: "1"` (a bare `1` is accepted too).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Version {
    Text(String),
    Number(u64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProjectScope {
    #[serde(default = "default_project_includes")]
    pub include_globs: Vec<String>,
    #[serde(default)]
    pub exclude_globs: Vec<String>,
}

impl Default for RawProjectScope {
    fn default() -> Self {
        RawProjectScope {
            include_globs: default_project_includes(),
            exclude_globs: Vec::new(),
        }
    }
}

fn default_project_includes() -> Vec<String> {
    vec!["**/*.py".into(), "**/*.pyi".into()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArtifactLogging {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "default_log_dir")]
    pub output_dir: String,
    #[serde(default = "default_max_files")]
    pub max_files: usize,
}

impl Default for RawArtifactLogging {
    fn default() -> Self {
        RawArtifactLogging {
            enabled: true,
            output_dir: default_log_dir(),
            max_files: default_max_files(),
        }
    }
}

fn yes() -> bool {
    true
}
fn default_log_dir() -> String {
    ".st3/logs".into()
}
fn default_max_files() -> usize {
    200
}

/// One gate definition.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    #[serde(default)]
    pub name: Option<String>,
    pub execution: RawExecution,
    #[serde(default)]
    pub success: RawSuccess,
    pub parsing: RawParsing,
    #[serde(default)]
    pub capabilities: RawCapabilities,
    #[serde(default)]
    pub scope: RawGateScope,
    #[serde(default)]
    pub fix_hint: Option<String>,
    #[serde(default)]
    pub rerun_hint: Option<String>,
    #[serde(default)]
    pub install_hint: Option<String>,
    #[serde(default)]
    pub version_args: Option<Vec<String>>,
    #[serde(default)]
    pub unresolved_imports: Option<RawUnresolvedImports>,
    #[serde(default)]
    pub selection: Option<RawSelection>,
}

/// `selection`: how the tool picks its files itself.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSelection {
    #[serde(default)]
    pub project_args: Vec<String>,
    #[serde(default)]
    pub config: Vec<RawConfigSource>,
    #[serde(default)]
    pub include: Option<RawSelectionKey>,
    #[serde(default)]
    pub exclude: Option<RawSelectionKey>,
    #[serde(default)]
    pub stubs: StubPolicy,
}

/// One place the tool's config may live.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfigSource {
    pub file: String,
    #[serde(default)]
    pub section: String,
}

/// A config key holding file patterns.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSelectionKey {
    pub key: String,
    #[serde(default)]
    pub syntax: PatternSyntax,
    #[serde(default)]
    pub default: Vec<String>,
}

/// How a tool writes file patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternSyntax {
    /// Files, directories or globs relative to the root.
    #[default]
    Paths,
    /// Regular expressions searched in each path (mypy's `exclude`).
    Regex,
}

/// How a tool treats `mod.py` beside `mod.pyi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StubPolicy {
    /// Both are checked.
    #[default]
    Both,
    /// The stub hides the source: only the `.pyi` is checked.
    PreferStub,
}

/// `unresolved_imports`: the codes that mean "cannot find this import".
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUnresolvedImports {
    pub codes: Vec<String>,
    pub advice: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExecution {
    pub command: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
    #[serde(default)]
    pub working_dir: Option<String>,
    #[serde(default = "yes")]
    pub pass_files: bool,
    #[serde(default = "yes")]
    pub batchable: bool,
    #[serde(default)]
    pub project_wide: bool,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

fn default_timeout() -> f64 {
    600.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuccess {
    #[serde(default = "default_ok_codes")]
    pub exit_codes_ok: Vec<i32>,
    #[serde(default = "default_violation_codes")]
    pub exit_codes_violations: Vec<i32>,
    #[serde(default = "default_fail_on")]
    pub fail_on: Severity,
    #[serde(default)]
    pub tool_error_codes: Vec<String>,
}

impl Default for RawSuccess {
    fn default() -> Self {
        RawSuccess {
            exit_codes_ok: default_ok_codes(),
            exit_codes_violations: default_violation_codes(),
            fail_on: default_fail_on(),
            tool_error_codes: Vec::new(),
        }
    }
}

fn default_ok_codes() -> Vec<i32> {
    vec![0]
}
fn default_violation_codes() -> Vec<i32> {
    vec![1]
}
fn default_fail_on() -> Severity {
    Severity::Warning
}

/// Which parser turns the tool's output into violations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    JsonViolations,
    TextViolations,
    ExitCode,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParsing {
    pub strategy: Strategy,
    #[serde(default)]
    pub source: OutputStream,
    // json_violations
    #[serde(default)]
    pub violations_path: Option<String>,
    #[serde(default)]
    pub json_lines: Option<bool>,
    #[serde(default)]
    pub field_map: Option<BTreeMap<Field, String>>,
    #[serde(default)]
    pub fixable_when: Option<String>,
    // both structured strategies
    #[serde(default)]
    pub line_offset: i64,
    #[serde(default)]
    pub column_offset: i64,
    // text_violations
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub defaults: Option<BTreeMap<Field, String>>,
    #[serde(default)]
    pub patterns: Option<Vec<RawTextRule>>,
    #[serde(default)]
    pub severity_default: Option<Severity>,
}

/// One entry of `text_violations`' `patterns` list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTextRule {
    pub pattern: String,
    #[serde(default)]
    pub defaults: Option<BTreeMap<Field, String>>,
    /// Defaults to the parsing-level `source`.
    #[serde(default)]
    pub source: Option<OutputStream>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapabilities {
    #[serde(default)]
    pub file_types: Vec<String>,
    #[serde(default)]
    pub supports_autofix: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGateScope {
    #[serde(default)]
    pub include_globs: Vec<String>,
    #[serde(default)]
    pub exclude_globs: Vec<String>,
    #[serde(default)]
    pub importers: bool,
}
