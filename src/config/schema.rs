//! The on-disk shape of `.st3/quality.yaml`, deserialized strictly: every
//! struct denies unknown keys so a typo is an error, never silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::parse::{Field, OutputStream};
use crate::violation::Severity;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    pub(crate) version: Version,
    pub(crate) active_gates: Vec<String>,
    #[serde(default)]
    pub(crate) project_scope: RawProjectScope,
    #[serde(default)]
    pub(crate) parent_branch: Option<String>,
    #[serde(default)]
    pub(crate) artifact_logging: RawArtifactLogging,
    #[serde(default)]
    pub(crate) import_graph: Option<RawImportGraph>,
    /// Absent: the built-in gates (and import graph) are used.
    #[serde(default)]
    pub(crate) gates: Option<BTreeMap<String, RawGate>>,
}

/// `import_graph`: the analyzer that says which project files import which.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawImportGraph {
    pub(crate) command: Vec<String>,
    #[serde(default = "default_graph_timeout")]
    pub(crate) timeout_seconds: f64,
    #[serde(default = "default_graph_types")]
    pub(crate) file_types: Vec<String>,
    #[serde(default)]
    pub(crate) unreadable_pattern: Option<String>,
    #[serde(default)]
    pub(crate) config_files: Vec<String>,
    #[serde(default)]
    pub(crate) install_hint: Option<String>,
    /// The analyzer's own import roots, and how to hand it more.
    #[serde(default)]
    pub(crate) search_paths: Option<RawSearchPaths>,
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
pub(crate) enum Version {
    Text(String),
    Number(u64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProjectScope {
    #[serde(default = "default_project_includes")]
    pub(crate) include_globs: Vec<String>,
    #[serde(default)]
    pub(crate) exclude_globs: Vec<String>,
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
pub(crate) struct RawArtifactLogging {
    #[serde(default = "yes")]
    pub(crate) enabled: bool,
    #[serde(default = "default_log_dir")]
    pub(crate) output_dir: String,
    #[serde(default = "default_max_files")]
    pub(crate) max_files: usize,
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
pub(crate) struct RawGate {
    #[serde(default)]
    pub(crate) name: Option<String>,
    pub(crate) execution: RawExecution,
    #[serde(default)]
    pub(crate) success: RawSuccess,
    pub(crate) parsing: RawParsing,
    #[serde(default)]
    pub(crate) capabilities: RawCapabilities,
    #[serde(default)]
    pub(crate) scope: RawGateScope,
    #[serde(default)]
    pub(crate) fix_hint: Option<String>,
    #[serde(default)]
    pub(crate) rule_url: Option<String>,
    #[serde(default)]
    pub(crate) rerun_hint: Option<String>,
    #[serde(default)]
    pub(crate) install_hint: Option<String>,
    #[serde(default)]
    pub(crate) version_args: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) unresolved_imports: Option<RawUnresolvedImports>,
    #[serde(default)]
    pub(crate) selection: Option<RawSelection>,
    #[serde(default)]
    pub(crate) fix: Option<RawFix>,
    #[serde(default)]
    pub(crate) baseline: RawBaselineMatching,
    #[serde(default)]
    pub(crate) daemon: Option<RawDaemon>,
    #[serde(default)]
    pub(crate) search_paths: Option<RawSearchPaths>,
}

/// `search_paths`: where a tool looks for the project's own modules, read
/// from its config, its environment variables and its built-in defaults.
/// The import graph resolves imports with every importer gate's roots.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSearchPaths {
    /// Where its config lives (default: the gate's `selection.config`).
    #[serde(default)]
    pub(crate) config: Option<Vec<RawConfigSource>>,
    /// Keys holding root directories, relative to the config's directory.
    #[serde(default)]
    pub(crate) keys: Vec<RawSearchKey>,
    /// Environment variables holding a list of directories.
    #[serde(default)]
    pub(crate) env: Vec<String>,
    /// Directories the tool always searches (when they exist).
    #[serde(default)]
    pub(crate) always: Vec<String>,
    /// The tool also searches the directory above the outermost package
    /// (`__init__.py`) of each file it checks.
    #[serde(default)]
    pub(crate) package_bases: bool,
    /// A boolean key of the tool's config that, when true, stops the
    /// tool's crawl up from a file at its search paths (mypy's
    /// `explicit_package_bases`): no package base is added then.
    #[serde(default)]
    pub(crate) explicit_bases_key: Option<String>,
    /// Gates only: the environment variable that hands a run on part of
    /// the tool's files the package bases of all of them — what the
    /// tool's own run on the project searches (`MYPYPATH`).
    #[serde(default)]
    pub(crate) bases_env: Option<String>,
    /// The variable that stands for the config file's directory in the
    /// tool's paths (`$MYPY_CONFIG_FILE_DIR`).
    #[serde(default)]
    pub(crate) config_dir_variable: Option<String>,
    /// `import_graph` only: the arguments that hand the analyzer the
    /// merged roots, `{search_paths}` standing for them as a TOML array.
    #[serde(default)]
    pub(crate) args: Vec<String>,
}

/// A key of [`RawSearchPaths`]: its name alone, or with the directories the
/// tool assumes when the key is absent.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawSearchKey {
    /// `mypy_path`.
    Name(String),
    /// `{key: stubPath, default: [typings]}`.
    WithDefault(RawSearchKeyWithDefault),
}

/// See [`RawSearchKey::WithDefault`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSearchKeyWithDefault {
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) default: Vec<String>,
}

/// `daemon`: how to keep the gate's tool warm between runs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDaemon {
    /// How qg talks to it.
    pub(crate) protocol: DaemonProtocol,
    /// The long-lived process, run in the foreground and owned by qg.
    pub(crate) command: Vec<String>,
    /// `lsp`: answers to the server's `workspace/configuration` requests,
    /// by section (`python.analysis`).
    #[serde(default)]
    pub(crate) settings: Option<serde_json::Value>,
    /// `lsp`: the `initializationOptions` of `initialize`.
    #[serde(default)]
    pub(crate) initialization_options: Option<serde_json::Value>,
    /// `lsp`: how the cold run words a finding, from the diagnostic's
    /// `{code}`, `{message}` and `{summary}` (the message's first
    /// paragraph); default: the message as is.
    #[serde(default)]
    pub(crate) message: Option<String>,
    /// `lsp`: the position encoding the cold run's columns count in.
    #[serde(default)]
    pub(crate) position_encoding: Option<PositionEncoding>,
    /// `command`: one check of the whole program; the tool's own-run
    /// arguments are appended.
    #[serde(default)]
    pub(crate) check: Option<Vec<String>>,
    /// `command`: asks the daemon to exit (it is killed after a grace
    /// period anyway).
    #[serde(default)]
    pub(crate) stop: Option<Vec<String>>,
    /// `command`: the daemon takes requests once this file exists.
    #[serde(default)]
    pub(crate) ready_file: Option<String>,
    /// `command`: a regex of output lines the check prints that a cold run
    /// does not and that are no finding (a summary): left out of the answer.
    #[serde(default)]
    pub(crate) ignore_output: Option<String>,
    /// The cold run also reports the project modules its files import
    /// (mypy follows imports): a warm answer reports them too.
    #[serde(default)]
    pub(crate) reports_imported: bool,
    /// Of those modules, the cold run leaves out the ones under a directory
    /// the environment's site-packages put on `sys.path` (an editable
    /// install's source root): to it they are installed packages.
    #[serde(default)]
    pub(crate) silences_installed: bool,
    /// Arguments that make a cold run ignore the tool's own cache: the run
    /// `--verify` compares a warm answer with must not reuse a stale one.
    #[serde(default)]
    pub(crate) fresh_args: Vec<String>,
    /// Globs of files whose appearance or removal the daemon's tool does not
    /// follow: one added or removed since the last check starts it again.
    #[serde(default)]
    pub(crate) restart_when_added_or_removed: Vec<String>,
    /// Minutes without a request after which the daemon stops itself.
    #[serde(default = "default_idle_minutes")]
    pub(crate) idle_timeout_minutes: f64,
    /// Every this many warm answers, one is compared with a cold run in
    /// the background (0: only the self-check after each start).
    #[serde(default = "default_verify_every")]
    pub(crate) verify_every: usize,
}

fn default_idle_minutes() -> f64 {
    30.0
}

fn default_verify_every() -> usize {
    10
}

/// The two ways qg keeps a tool warm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DaemonProtocol {
    /// A language server: one generic LSP client in qg.
    Lsp,
    /// A daemon with a command-line client of its own (`dmypy`).
    Command,
}

/// How an LSP server counts columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
pub(crate) enum PositionEncoding {
    /// Code units of UTF-16 (the protocol's default).
    #[default]
    #[serde(rename = "utf-16")]
    Utf16,
    /// Unicode scalar values.
    #[serde(rename = "utf-32")]
    Utf32,
    /// Bytes of UTF-8.
    #[serde(rename = "utf-8")]
    Utf8,
}

/// `baseline`: how the committed baseline (and every fingerprint) knows a
/// gate's findings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBaselineMatching {
    /// Whether the flagged line's content is part of a finding's identity.
    /// `false` for a gate whose one finding per file points wherever the
    /// first change is (a formatter): known by file, rule and message.
    #[serde(default = "yes")]
    pub(crate) match_lines: bool,
}

impl Default for RawBaselineMatching {
    fn default() -> Self {
        RawBaselineMatching { match_lines: true }
    }
}

/// `fix`: the command that fixes a gate's findings in place (`qg fix`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFix {
    /// Program and arguments; the files to fix are appended.
    pub(crate) command: Vec<String>,
    /// Exit codes of a fixer that did its job (ruff check --fix exits 1
    /// when findings it cannot fix remain).
    #[serde(default = "default_fix_ok")]
    pub(crate) exit_codes_ok: Vec<i32>,
    /// Added for `qg fix --unsafe`.
    #[serde(default)]
    pub(crate) unsafe_args: Vec<String>,
    /// Added for `qg fix --diff`: the tool prints the change, writes nothing.
    #[serde(default)]
    pub(crate) diff_args: Vec<String>,
    /// Added to fix one rule only (`{code}`: the rule), for an editor's
    /// "Fix <rule>" action; without them, only whole-file fixes are offered.
    #[serde(default)]
    pub(crate) rule_args: Vec<String>,
    /// Names of the files the fixer reads its settings from, looked up in
    /// a file's directory and each one above it: an editor's fix runs on a
    /// temporary copy of the file that has them beside it, as the file has.
    #[serde(default)]
    pub(crate) config_files: Vec<String>,
}

fn default_fix_ok() -> Vec<i32> {
    vec![0]
}

/// `selection`: how the tool picks its files itself.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSelection {
    #[serde(default)]
    pub(crate) project_args: Vec<String>,
    #[serde(default)]
    pub(crate) config: Vec<RawConfigSource>,
    #[serde(default)]
    pub(crate) include: Option<RawSelectionKey>,
    #[serde(default)]
    pub(crate) exclude: Option<RawSelectionKey>,
    #[serde(default)]
    pub(crate) stubs: StubPolicy,
}

/// One place the tool's config may live.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfigSource {
    pub(crate) file: String,
    #[serde(default)]
    pub(crate) section: String,
}

/// A config key holding file patterns.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSelectionKey {
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) syntax: PatternSyntax,
    #[serde(default)]
    pub(crate) default: Vec<String>,
}

/// How a tool writes file patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PatternSyntax {
    /// Files, directories or globs relative to the root.
    #[default]
    Paths,
    /// Regular expressions searched in each path (mypy's `exclude`).
    Regex,
    /// Files, directories or globs relative to the root, found by a walk
    /// from each entry's part before its first wildcard that enters only
    /// the directories the entry matches, unless it holds `**` (pyright's
    /// `include`: `packages/*/lib` matches nothing, `packages/**/lib` does).
    WalkedPaths,
}

/// How a tool treats `mod.py` beside `mod.pyi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StubPolicy {
    /// Both are checked.
    #[default]
    Both,
    /// The stub hides the source: only the `.pyi` is checked.
    PreferStub,
}

/// `unresolved_imports`: the codes that mean "cannot find this import".
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUnresolvedImports {
    pub(crate) codes: Vec<String>,
    pub(crate) advice: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExecution {
    pub(crate) command: Vec<String>,
    #[serde(default = "default_timeout")]
    pub(crate) timeout_seconds: f64,
    #[serde(default)]
    pub(crate) working_dir: Option<String>,
    #[serde(default = "yes")]
    pub(crate) pass_files: bool,
    #[serde(default = "yes")]
    pub(crate) batchable: bool,
    #[serde(default)]
    pub(crate) project_wide: bool,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
}

fn default_timeout() -> f64 {
    600.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSuccess {
    #[serde(default = "default_ok_codes")]
    pub(crate) exit_codes_ok: Vec<i32>,
    #[serde(default = "default_violation_codes")]
    pub(crate) exit_codes_violations: Vec<i32>,
    #[serde(default = "default_fail_on")]
    pub(crate) fail_on: Severity,
    #[serde(default)]
    pub(crate) tool_error_codes: Vec<String>,
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
pub(crate) enum Strategy {
    JsonViolations,
    TextViolations,
    ExitCode,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParsing {
    pub(crate) strategy: Strategy,
    #[serde(default)]
    pub(crate) source: OutputStream,
    // json_violations
    #[serde(default)]
    pub(crate) violations_path: Option<String>,
    #[serde(default)]
    pub(crate) json_lines: Option<bool>,
    #[serde(default)]
    pub(crate) field_map: Option<BTreeMap<Field, String>>,
    #[serde(default)]
    pub(crate) fixable_when: Option<String>,
    // both structured strategies
    #[serde(default)]
    pub(crate) line_offset: i64,
    #[serde(default)]
    pub(crate) column_offset: i64,
    // text_violations
    #[serde(default)]
    pub(crate) pattern: Option<String>,
    #[serde(default)]
    pub(crate) defaults: Option<BTreeMap<Field, String>>,
    #[serde(default)]
    pub(crate) patterns: Option<Vec<RawTextRule>>,
    #[serde(default)]
    pub(crate) severity_default: Option<Severity>,
}

/// One entry of `text_violations`' `patterns` list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTextRule {
    pub(crate) pattern: String,
    #[serde(default)]
    pub(crate) defaults: Option<BTreeMap<Field, String>>,
    /// Defaults to the parsing-level `source`.
    #[serde(default)]
    pub(crate) source: Option<OutputStream>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCapabilities {
    #[serde(default)]
    pub(crate) file_types: Vec<String>,
    #[serde(default)]
    pub(crate) supports_autofix: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGateScope {
    #[serde(default)]
    pub(crate) include_globs: Vec<String>,
    #[serde(default)]
    pub(crate) exclude_globs: Vec<String>,
    #[serde(default)]
    pub(crate) importers: bool,
}
