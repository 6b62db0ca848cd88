//! The on-disk shape of `.st3/quality.yaml`, deserialized strictly: every
//! struct denies unknown keys so a typo is an error, never silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::parse::{Field, OutputStream};
use crate::violation::Severity;

/// The whole file.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    /// The schema version: `"1"` (a bare `1` is accepted too); the default, as no other tool's table asks for one.
    #[serde(default)]
    pub(crate) version: Version,
    /// The gates to run, by id, in report order. Each must be defined under `gates` (or be a built-in gate when `gates` is absent).
    pub(crate) active_gates: Vec<String>,
    /// Which files `--scope project` covers; its excludes apply to every scope.
    #[serde(default)]
    pub(crate) project_scope: RawProjectScope,
    /// The branch `--scope branch` compares with (and `auto` on the first run of a new branch); default: `origin/HEAD`, then `main`, then `master`.
    #[serde(default)]
    pub(crate) parent_branch: Option<String>,
    /// Where each tool's raw output is kept, for `qg run`'s log links.
    #[serde(default)]
    pub(crate) artifact_logging: RawArtifactLogging,
    /// The analyzer that finds the project files importing a changed one, for gates with `scope.importers`.
    #[serde(default)]
    pub(crate) import_graph: Option<RawImportGraph>,
    /// A changed module whose interface — what a type checker sees of it from another module: imports, module and class level, signatures, the bodies of functions without a return annotation — equals its version in the scope's base adds no importers to a partial scope (`qg files` says "body only"). On by default; `false` checks every importer of every change (see the Importers page for when to).
    #[serde(default = "yes")]
    pub(crate) interface_aware_importers: bool,
    /// The workspace's member projects, as root-relative directories (globs allowed): each gate with `execution.runs_per_member` runs once in every member holding its tool's own config. Absent: found from uv's `[tool.uv.workspace]`, Hatch's `workspace.members` and every directory holding such a config; a list here replaces what is found.
    #[serde(default)]
    pub(crate) members: Option<Vec<String>>,
    /// The result cache: each file's findings kept under a key of everything that can change them (the book's "Share results across machines").
    #[serde(default)]
    pub(crate) cache: RawCache,
    /// Absent: the built-in gates (and import graph) are used.
    #[serde(default)]
    pub(crate) gates: Option<BTreeMap<String, RawGate>>,
}

/// `cache`: where the result cache is shared.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCache {
    /// A store the whole team reads, by URL (`s3://bucket/qg?region=eu-west-1`, `gcs://bucket/qg`, `redis://cache:6379/0/qg`, `webdav:///qg?endpoint=https://dav.example.com`); `QG_CACHE_SHARED` overrides it. Only a run with `QG_CACHE_SHARED_WRITE=1` writes to it. No credentials: they come from the environment or the provider's own files.
    #[serde(default)]
    pub(crate) shared: Option<String>,
}

/// `import_graph`: the analyzer that says which project files import which.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawImportGraph {
    /// Program and arguments; the files to analyze are appended. It prints one JSON object mapping each file to the project files it imports.
    pub(crate) command: Vec<String>,
    /// Wall-clock limit of one analyzer run; past it the process tree is killed.
    #[serde(default = "default_graph_timeout")]
    pub(crate) timeout_seconds: f64,
    /// Suffixes of the files the analyzer reads.
    #[serde(default = "default_graph_types")]
    pub(crate) file_types: Vec<String>,
    /// A regex with a `file` group matching, on stderr, a file the analyzer could not read: its imports are unknown, so every file counts as its importer.
    #[serde(default)]
    pub(crate) unreadable_pattern: Option<String>,
    /// Root-relative files whose change can change how imports resolve (the analyzer's own config): any change rebuilds the graph.
    #[serde(default)]
    pub(crate) config_files: Vec<String>,
    /// The command shown when the analyzer is missing (`{install}`, `{venv_bin}` as for gates).
    #[serde(default)]
    pub(crate) install_hint: Option<String>,
    /// The analyzer's own import roots, and how to hand it more.
    #[serde(default)]
    pub(crate) search_paths: Option<RawSearchPaths>,
    /// How the analyzer names its version (asked once per installed binary), for `min_version` and `older_versions`.
    #[serde(default)]
    pub(crate) version_args: Option<Vec<String>>,
    /// The oldest version of the analyzer that has the command at all (`0.6.6`: `ruff analyze graph`); with an older one, the gates that check importers check the whole project, and `qg doctor` names the upgrade.
    #[serde(default)]
    pub(crate) min_version: Option<String>,
    /// The analyzer's older versions: each entry whose `below` is above the installed version gives the `command` run instead (only `command` applies here).
    #[serde(default)]
    pub(crate) older_versions: Vec<RawOlderVersion>,
}

fn default_graph_timeout() -> f64 {
    120.0
}

fn default_graph_types() -> Vec<String> {
    vec![".py".into(), ".pyi".into()]
}

/// `version: "1"` (a bare `1` is accepted too).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub(crate) enum Version {
    Text(String),
    Number(u64),
}

impl Default for Version {
    /// The one version there is.
    fn default() -> Self {
        Version::Text("1".to_string())
    }
}

/// `project_scope`: the files of the project.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProjectScope {
    /// Globs (`**` as gitignore does) of the files `--scope project` checks.
    #[serde(default = "default_project_includes")]
    pub(crate) include_globs: Vec<String>,
    /// Globs of files never checked, on every scope.
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

/// The files of a project whose config names none: what the tools check
/// when the project runs them itself — Python files and stubs, and the
/// notebooks, Markdown and settings files ruff lints or formats. The same
/// list as the embedded default's (a unit test holds them equal): a
/// three-line config must not leave out a file `ruff check .` fails on.
fn default_project_includes() -> Vec<String> {
    [
        "**/*.py",
        "**/*.pyi",
        "**/*.ipynb",
        "**/*.md",
        "**/pyproject.toml",
        "**/ruff.toml",
        "**/.ruff.toml",
    ]
    .map(String::from)
    .to_vec()
}

/// `artifact_logging`: where each tool's raw output is kept.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArtifactLogging {
    /// Whether each gate's raw output is written to a log file.
    #[serde(default = "yes")]
    pub(crate) enabled: bool,
    /// Root-relative directory of the logs.
    #[serde(default = "default_log_dir")]
    pub(crate) output_dir: String,
    /// Newest log files kept; older ones are deleted (at least 1).
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGate {
    /// Display name (default: the id).
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// What to run, and how.
    pub(crate) execution: RawExecution,
    /// Which exit codes and severities pass.
    #[serde(default)]
    pub(crate) success: RawSuccess,
    /// How the tool's output becomes findings.
    pub(crate) parsing: RawParsing,
    /// Which files the tool takes, and whether it fixes.
    #[serde(default)]
    pub(crate) capabilities: RawCapabilities,
    /// Per-gate file filters, and whether importers of changed files are checked too.
    #[serde(default)]
    pub(crate) scope: RawGateScope,
    /// The command shown to fix the findings; `{files}` is the failing files, shell-quoted.
    #[serde(default)]
    pub(crate) fix_hint: Option<String>,
    /// A rule's documentation, `{code}` standing for the rule, for findings whose tool gives no `url`.
    #[serde(default)]
    pub(crate) rule_url: Option<String>,
    /// For a gate that cannot fix: the command shown to check the failing files again (`{files}`).
    #[serde(default)]
    pub(crate) rerun_hint: Option<String>,
    /// Shown when the tool is missing: `{install}` is the project manager's command (`uv add --dev`, `poetry add --group dev`, `pdm add -dG dev`, else pip into the virtualenv), `{install_project}` the one that installs a tool the project already declares (`uv sync`), `{venv_bin}` the environment's `bin/`.
    #[serde(default)]
    pub(crate) install_hint: Option<String>,
    /// How the tool names its version (asked once per installed binary, cached in `.st3/tool-versions.json`).
    #[serde(default)]
    pub(crate) version_args: Option<Vec<String>>,
    /// The oldest version of the tool the gate's command works with (`1.11`: mypy's `--output=json`); `qg doctor` and every run say when the installed one is older.
    #[serde(default)]
    pub(crate) min_version: Option<String>,
    /// What the gate does with a tool older than a feature it uses: every entry whose `below` is above the tool's version applies, the lowest bound last, its `command`, `parsing`, `file_types` or `daemon` taking the gate's place; `qg doctor` says which apply.
    #[serde(default)]
    pub(crate) older_versions: Vec<RawOlderVersion>,
    /// The finding codes that mean "cannot find this import", and the advice shown with them.
    #[serde(default)]
    pub(crate) unresolved_imports: Option<RawUnresolvedImports>,
    /// How the tool picks its own files: its whole-project run and the keys of its config qg honours on partial scopes.
    #[serde(default)]
    pub(crate) selection: Option<RawSelection>,
    /// The command `qg fix` (and `qg lsp`'s quick fixes) run.
    #[serde(default)]
    pub(crate) fix: Option<RawFix>,
    /// How the committed baseline knows this gate's findings.
    #[serde(default)]
    pub(crate) baseline: RawBaselineMatching,
    /// How to keep the tool warm between runs (`qg daemon`, `qg watch`, `qg lsp`).
    #[serde(default)]
    pub(crate) daemon: Option<RawDaemon>,
    /// Where the tool looks for the project's own modules: the import graph resolves imports with them.
    #[serde(default)]
    pub(crate) search_paths: Option<RawSearchPaths>,
    /// The files the tool reads its settings from (its plugins' tables too): when one of them changes, committed or not, the gate checks its whole project scope on the next `auto` or `branch` run, as does a change of the tool itself.
    #[serde(default)]
    pub(crate) tool_config: Vec<RawToolConfigFile>,
    /// Keys of the tool's own config (where `selection.config` says it lives) that name project code the tool imports and runs (mypy's `plugins`): a repository that sets one must be trusted (`qg trust`) before `qg lsp`, `qg mcp` or `qg watch` runs the gate.
    #[serde(default)]
    pub(crate) executes: Vec<String>,
    /// Config keys naming a module the tool's plugin imports and runs (django-stubs' `django_settings_module`): that module's files are settings of the gate (an edit checks its whole project) and code `qg trust` covers.
    #[serde(default)]
    pub(crate) settings_modules: Vec<RawSettingsModule>,
    /// The tool's own cache between runs (mypy's incremental cache): kept whole in qg's result store by the commit it was left at, and put back where a checkout has none (a fresh clone, a CI job), from the nearest commit that left one.
    #[serde(default)]
    pub(crate) tool_cache: Option<RawToolCache>,
}

/// `tool_cache`: where the tool keeps its own cache between runs.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawToolCache {
    /// The directory, relative to where the tool runs (`.mypy_cache`).
    pub(crate) dir: String,
    /// A key of the tool's own config (where `selection.config` says it lives) that moves the directory (mypy's `cache_dir`).
    #[serde(default)]
    pub(crate) key: Option<String>,
    /// An environment variable that moves it, ahead of the config (`MYPY_CACHE_DIR`).
    #[serde(default)]
    pub(crate) env: Option<String>,
}

/// One entry of `older_versions`: how a gate runs a tool older than `below`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOlderVersion {
    /// The first version the gate's own way works with (`0.16`): the entry applies to every older one.
    pub(crate) below: String,
    /// What those versions lack, as `qg doctor` says it (`ruff format has no stable --output-format`).
    pub(crate) why: String,
    /// The command run instead of `execution.command`. The gate's own other arguments (a project's `--strict`) are kept, after the words the two commands begin with.
    #[serde(default)]
    pub(crate) command: Option<Vec<String>>,
    /// The arguments of `execution.command` that `command` stands in for (`--output=json`): left out where the gate's own arguments are kept.
    #[serde(default)]
    pub(crate) instead_of: Vec<String>,
    /// How the output of that command becomes findings, instead of `parsing`.
    #[serde(default)]
    pub(crate) parsing: Option<RawParsing>,
    /// The file suffixes those versions take, instead of `capabilities.file_types`.
    #[serde(default)]
    pub(crate) file_types: Option<Vec<String>>,
    /// `false`: no daemon for those versions; the gate answers cold.
    #[serde(default)]
    pub(crate) daemon: Option<bool>,
    /// The arguments of the tool's own whole-project run, instead of `selection.project_args` (`["."]` for a tool that checks nothing when given no path).
    #[serde(default)]
    pub(crate) project_args: Option<Vec<String>>,
}

/// One file a tool reads settings from (`tool_config`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawToolConfigFile {
    /// A root-relative glob: `mypy.ini`, or `**/ruff.toml` for a file the tool reads at every level.
    pub(crate) file: String,
    /// The sections of it that are the tool's (TOML tables and INI sections by dotted name, `*` matching within one part: `tool.mypy`, `tool.*-mypy`, `mypy-*`); none: the whole file.
    #[serde(default)]
    pub(crate) sections: Vec<String>,
}

/// A config key naming, by dotted name, a module the tool imports.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSettingsModule {
    /// The config file, relative to where the tool runs (`pyproject.toml`).
    pub(crate) file: String,
    /// The table or section holding the key (`tool.django-stubs`).
    pub(crate) section: String,
    /// The key (`django_settings_module`).
    pub(crate) key: String,
    /// A key of the tool's own config (`selection.config`) listing further directories the module is found under (mypy's `mypy_path`).
    #[serde(default)]
    pub(crate) roots_key: Option<String>,
}

/// `search_paths`: where a tool looks for the project's own modules, read
/// from its config, its environment variables and its built-in defaults.
/// The import graph resolves imports with every importer gate's roots.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// Arguments a run given `bases_env` also gets: a cache of qg's own
    /// (`--cache-dir=...`), as the tool's cache is keyed on its search
    /// path and the user's own runs, without the variable, would rebuild
    /// theirs after every qg run (and qg's after every one of theirs).
    #[serde(default)]
    pub(crate) bases_cache_args: Vec<String>,
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub(crate) enum RawSearchKey {
    /// `mypy_path`.
    Name(String),
    /// `{key: stubPath, default: [typings]}`.
    WithDefault(RawSearchKeyWithDefault),
}

/// See [`RawSearchKey::WithDefault`].
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSearchKeyWithDefault {
    /// The config key.
    pub(crate) key: String,
    /// The directories the tool assumes when the key is absent.
    #[serde(default)]
    pub(crate) default: Vec<String>,
}

/// `daemon`: how to keep the gate's tool warm between runs.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// `command`: the check's client started ahead of the check it answers,
    /// waiting for the check's arguments (after its program) as one line of
    /// JSON on stdin: a client slow to start (dmypy's imports mypy, 0.2 s)
    /// is ready when a run asks. `{check_dir}` is the directory of the
    /// check's resolved program (whose interpreter it is). Where it cannot
    /// start, the check runs as `check` says.
    #[serde(default)]
    pub(crate) check_ahead: Option<Vec<String>>,
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
    /// `command`: a regex of output lines that are the tool's notes on the
    /// run, not findings (mypy's "unused section(s)" of its config): an
    /// answer of such lines alone is a clean run, whatever the check's exit
    /// code — as the cold run's (dmypy exits 1 on any output, mypy only on
    /// an error).
    #[serde(default)]
    pub(crate) note_output: Option<String>,
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
    /// `{devnull}` is the platform's null device (`/dev/null`, `nul`).
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
    /// The first this many warm answers after each start of the tool are each compared with a cold run in the background: an incremental checker goes wrong soonest after its first pass.
    #[serde(default)]
    pub(crate) verify_first: usize,
    /// Keys of the tool's own config (where `selection.config` says it lives) that, when set, make every warm answer compared with a cold run: the tool is known to be weaker so configured (dmypy with `plugins`).
    #[serde(default)]
    pub(crate) verify_all_when: Vec<String>,
}

fn default_idle_minutes() -> f64 {
    30.0
}

fn default_verify_every() -> usize {
    10
}

/// The two ways qg keeps a tool warm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum DaemonProtocol {
    /// A language server: one generic LSP client in qg.
    Lsp,
    /// A daemon with a command-line client of its own (`dmypy`).
    Command,
}

/// How an LSP server counts columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// "Fix RULE" action; without them, only whole-file fixes are offered.
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSelection {
    /// Arguments added to the command for the tool's own whole-project run on `--scope project` (`.` for mypy); none when the tool's config names its files.
    #[serde(default)]
    pub(crate) project_args: Vec<String>,
    /// Where the tool's config may live, in the tool's own lookup order; the first file holding the section wins.
    #[serde(default)]
    pub(crate) config: Vec<RawConfigSource>,
    /// The config key naming the files the tool checks.
    #[serde(default)]
    pub(crate) include: Option<RawSelectionKey>,
    /// Config keys naming the modules or packages the tool checks by dotted
    /// name (mypy's `packages` and `modules`, syntax `packages`/`modules`):
    /// when any is present, their entries together name the files instead
    /// of `include`'s.
    #[serde(default)]
    pub(crate) include_modules: Vec<RawSelectionKey>,
    /// The config key naming the files the tool leaves out.
    #[serde(default)]
    pub(crate) exclude: Option<RawSelectionKey>,
    /// How the tool treats `mod.py` beside `mod.pyi`.
    #[serde(default)]
    pub(crate) stubs: StubPolicy,
    /// The tool configures each file by the config nearest to it (ruff): a file under a directory holding a config of its own (any `config` source) is left to that config, never dropped by the root's selection.
    #[serde(default)]
    pub(crate) nearest_config: bool,
}

/// One place the tool's config may live.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfigSource {
    /// Root-relative file name (`pyproject.toml`, `setup.cfg`, `mypy.ini`).
    pub(crate) file: String,
    /// The section or table inside it (`tool.mypy`, `mypy`); empty: the whole file.
    #[serde(default)]
    pub(crate) section: String,
}

/// A config key holding file patterns.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSelectionKey {
    /// The key inside the config section.
    pub(crate) key: String,
    /// How the tool writes the patterns.
    #[serde(default)]
    pub(crate) syntax: PatternSyntax,
    /// The patterns the tool assumes when the key is absent.
    #[serde(default)]
    pub(crate) default: Vec<String>,
    /// What the tool does when an entry names a path that does not exist: `stops` (mypy: "Cannot read file", before checking anything) or `warns` and checks the rest (pyright).
    #[serde(default)]
    pub(crate) missing: MissingPath,
    /// For dotted names: the key listing the directories they are found under besides the tool's own (mypy's `mypy_path`).
    #[serde(default)]
    pub(crate) roots_key: Option<String>,
    /// A key whose entries add to this one's, or to its `default` when it is absent (ruff's `extend-include`, `extend-exclude`); with neither, it adds to a tool default qg takes as everything, and is not read.
    #[serde(default)]
    pub(crate) extended_by: Option<String>,
}

/// What a tool does with an include entry naming a missing path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingPath {
    /// It stops before checking anything.
    #[default]
    Stops,
    /// It warns and checks the rest.
    Warns,
}

/// How a tool writes file patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// Dotted package names, each with every module under it (mypy's
    /// `packages`), found under the tool's directory and `roots_key`.
    Packages,
    /// Dotted module names, each the module alone (mypy's `modules`).
    Modules,
    /// Globs matched against each file's path relative to the config's
    /// directory, a `*` crossing `/` (a pattern without `/` is matched
    /// against the absolute path too): a filter on the files the tool's walk
    /// finds, not where it starts (ruff's `include`: `src/*.py` takes
    /// `src/a/b.py`, `*.pyi` a stub anywhere, `src` no file).
    JoinedGlobs,
}

/// How a tool treats `mod.py` beside `mod.pyi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUnresolvedImports {
    /// Finding codes meaning "cannot find this import" (`import-not-found`).
    pub(crate) codes: Vec<String>,
    /// What to do about them, shown once per run when one appears.
    pub(crate) advice: String,
    /// What to say instead when the environment already holds every dependency the project declares: installing them cannot help (the modules are in no dependency).
    #[serde(default)]
    pub(crate) when_installed: Option<String>,
}

/// `execution`: what a gate runs, and how.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExecution {
    /// Program and arguments, without a shell; the gate's files are appended. A program without `/` is looked up in the project's virtualenv, then on `PATH`.
    pub(crate) command: Vec<String>,
    /// Wall-clock limit of one run; past it the process tree is killed and the gate errors.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_seconds: f64,
    /// Root-relative directory to run in (no `..`); files are then passed absolute.
    #[serde(default)]
    pub(crate) working_dir: Option<String>,
    /// Append the gate's files to the command.
    #[serde(default = "yes")]
    pub(crate) pass_files: bool,
    /// The files may be split over several runs (a linter); `false` for a type checker, which must see them all at once.
    #[serde(default = "yes")]
    pub(crate) batchable: bool,
    /// Run on every project file the gate accepts and report only the scoped files and their importers.
    #[serde(default)]
    pub(crate) project_wide: bool,
    /// The tool reads one config per run, from the directory it runs in (mypy, pyright): in a workspace, every member holding the tool's own config (`selection.config`) gets a run of its own there, with its own settings and file selection, and the enclosing project's run leaves its files out. A tool that finds the nearest config for each file itself (ruff) keeps one run.
    #[serde(default)]
    pub(crate) runs_per_member: bool,
    /// The tool's cache takes a file whose size and mtime in whole seconds are unchanged for unchanged (mypy): a cold run starts only after the second of the newest write to a project file, so no later edit that keeps a file's size can look unchanged to it.
    #[serde(default)]
    pub(crate) whole_second_mtimes: bool,
    /// Arguments that make the tool check without reading its cache, still writing it (mypy's `--no-incremental`): a run after code its plugin imports changed (`settings_modules`), which its cache does not key on.
    #[serde(default)]
    pub(crate) uncached_args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
}

fn default_timeout() -> f64 {
    600.0
}

/// `success`: which exit codes and severities pass.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSuccess {
    /// Exit codes of a run that found nothing.
    #[serde(default = "default_ok_codes")]
    pub(crate) exit_codes_ok: Vec<i32>,
    /// Exit codes of a run that found something; any other is a gate error.
    #[serde(default = "default_violation_codes")]
    pub(crate) exit_codes_violations: Vec<i32>,
    /// The lowest severity that fails the gate.
    #[serde(default = "default_fail_on")]
    pub(crate) fail_on: Severity,
    /// Finding codes meaning "could not check this file" (ruff format's `io`): the gate errors instead.
    #[serde(default)]
    pub(crate) tool_error_codes: Vec<String>,
    /// How the tool says it stopped before checking anything (mypy's blocking errors): the gate is then an error, never a verdict, and such a finding is never baselined.
    #[serde(default)]
    pub(crate) stopped: Option<RawStopped>,
    /// A regex matching the line the tool prints (on stderr) when its own settings leave out every file it was given (ruff's `No Python files found`): with an ok exit code, the gate passes having checked none of them, and says so.
    #[serde(default)]
    pub(crate) nothing_checked: Option<String>,
}

/// `success.stopped`: how a tool says it stopped before checking anything.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStopped {
    /// Exit codes of a run that stopped before checking (mypy's 2: "errors prevented further checking").
    #[serde(default)]
    pub(crate) exit_codes: Vec<i32>,
    /// Codes of the findings that stop it (mypy's `syntax`).
    #[serde(default)]
    pub(crate) codes: Vec<String>,
    /// Regexes matching the messages of the findings that stop it (`^Duplicate module named `).
    #[serde(default)]
    pub(crate) messages: Vec<String>,
    /// It stops when two files it checks are one module (`a/x.py` and `b/x.py` outside packages): `qg doctor` looks for such files in advance.
    #[serde(default)]
    pub(crate) on_duplicate_modules: bool,
    /// It stops when a directory holding an `__init__.py` among its files has no valid package name (`my-pkg/`): `qg doctor` looks for one in advance.
    #[serde(default)]
    pub(crate) on_invalid_package_names: bool,
}

impl Default for RawSuccess {
    fn default() -> Self {
        RawSuccess {
            exit_codes_ok: default_ok_codes(),
            exit_codes_violations: default_violation_codes(),
            fail_on: default_fail_on(),
            tool_error_codes: Vec::new(),
            stopped: None,
            nothing_checked: None,
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum Strategy {
    JsonViolations,
    TextViolations,
    ExitCode,
}

/// `parsing`: how a tool's output becomes findings.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParsing {
    /// The parser: `json_violations`, `text_violations` or `exit_code`.
    pub(crate) strategy: Strategy,
    /// The stream it reads.
    #[serde(default)]
    pub(crate) source: OutputStream,
    // json_violations
    /// `json_violations`: JSON Pointer to the array of findings (`/` or empty: the root).
    #[serde(default)]
    pub(crate) violations_path: Option<String>,
    /// `json_violations`: one JSON document per line (`mypy -O json`).
    #[serde(default)]
    pub(crate) json_lines: Option<bool>,
    /// `json_violations`: finding field → `/`-separated path inside one finding object; `file` and `message` are required.
    #[serde(default)]
    pub(crate) field_map: Option<BTreeMap<Field, String>>,
    /// `json_violations`: `path == 'value'`, `path != 'value'` or a bare `path`: when a finding is fixable.
    #[serde(default)]
    pub(crate) fixable_when: Option<String>,
    // both structured strategies
    /// Added to every line (+1 for a tool counting from 0).
    #[serde(default)]
    pub(crate) line_offset: i64,
    /// Added to every column (+1 for a tool counting from 0).
    #[serde(default)]
    pub(crate) column_offset: i64,
    // text_violations
    /// `text_violations`: a regex (multi-line mode) whose named groups are finding fields; every match is one finding.
    #[serde(default)]
    pub(crate) pattern: Option<String>,
    /// `text_violations`: literal field values, `{group}` interpolating a named group.
    #[serde(default)]
    pub(crate) defaults: Option<BTreeMap<Field, String>>,
    /// `text_violations`: several kinds of line, each with its own pattern, defaults and stream (instead of `pattern`).
    #[serde(default)]
    pub(crate) patterns: Option<Vec<RawTextRule>>,
    /// `text_violations`: the severity of a match without a `severity` group.
    #[serde(default)]
    pub(crate) severity_default: Option<Severity>,
}

/// One entry of `text_violations`' `patterns` list.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTextRule {
    /// A regex whose named groups are finding fields.
    pub(crate) pattern: String,
    /// Literal field values, `{group}` interpolating a named group.
    #[serde(default)]
    pub(crate) defaults: Option<BTreeMap<Field, String>>,
    /// Defaults to the parsing-level `source`.
    #[serde(default)]
    pub(crate) source: Option<OutputStream>,
}

/// `capabilities`: the files a gate takes, and whether it fixes them.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCapabilities {
    /// Suffixes of the files the tool takes (`.py`, `.pyi`); others are never passed to it.
    #[serde(default)]
    pub(crate) file_types: Vec<String>,
    /// Names of further files the tool takes wherever they are
    /// (`pyproject.toml`: ruff lints its own settings files).
    #[serde(default)]
    pub(crate) file_names: Vec<String>,
    /// The gate can fix its findings (requires `fix`).
    #[serde(default)]
    pub(crate) supports_autofix: bool,
}

/// `scope`: which of the run's files go to a gate.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGateScope {
    /// Only these files, of the run's scope, go to this gate.
    #[serde(default)]
    pub(crate) include_globs: Vec<String>,
    /// These files, of the run's scope, never go to this gate.
    #[serde(default)]
    pub(crate) exclude_globs: Vec<String>,
    /// On partial scopes, also check every project file that imports a changed one (type checkers).
    #[serde(default)]
    pub(crate) importers: bool,
}
