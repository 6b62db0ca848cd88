//! The validated configuration qg runs from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::globs::GlobFilter;
use crate::parse::ParserSpec;
use crate::violation::Severity;

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it came from, for messages (`.st3/quality.yaml`, `<embedded default>`).
    pub(crate) origin: String,
    /// Git blob id of the config text: changes whenever the config does.
    pub(crate) hash: String,
    /// Gate ids to run, in report order.
    pub active_gates: Vec<String>,
    /// Which files `project` scope covers; its excludes apply to every scope.
    pub(crate) project_scope: GlobFilter,
    /// Parent branch for `branch` scope.
    pub(crate) parent_branch: Option<String>,
    /// `cache.shared`: the team's result store, by URL (no credentials).
    pub(crate) cache_shared: Option<String>,
    /// Where raw tool output is kept.
    pub(crate) artifact_logging: ArtifactLogging,
    /// The analyzer that finds the files importing a changed one.
    pub(crate) import_graph: Option<ImportGraph>,
    /// Whether a changed module adds its importers only when its
    /// interface changed (a body-only edit adds none).
    pub(crate) interface_aware_importers: bool,
    /// The workspace members the config names (`members`), root-relative
    /// directories or globs of them; `None`: they are found (see `members`).
    pub(crate) members: Option<Vec<String>>,
    /// Every defined gate, by id.
    pub gates: BTreeMap<String, Gate>,
    /// What the user should know about how it was found (a config it
    /// shadows), for the report and `qg doctor`.
    pub(crate) warnings: Vec<String>,
}

/// Artifact-log settings.
#[derive(Debug, Clone)]
pub(crate) struct ArtifactLogging {
    /// Whether logs are written at all.
    pub(crate) enabled: bool,
    /// Root-relative directory.
    pub(crate) output_dir: PathBuf,
    /// Newest files kept; older ones are deleted.
    pub(crate) max_files: usize,
}

/// `import_graph`: a command that prints, for the files it is given, the
/// project files each imports, as one JSON object (`{"a.py": ["b.py"]}`).
#[derive(Debug, Clone)]
pub(crate) struct ImportGraph {
    /// argv; the files to analyze are appended.
    pub(crate) command: Vec<String>,
    /// Wall-clock limit for one analyzer run.
    pub(crate) timeout: Duration,
    /// Suffixes of the files it analyzes.
    pub(crate) file_types: Vec<String>,
    /// A regex with a `file` group matching, on stderr, a file the analyzer
    /// could not read: that file's imports are unknown.
    pub(crate) unreadable: Option<regex::Regex>,
    /// Root-relative files whose change can change how imports resolve
    /// (the analyzer's own config): any change rebuilds the graph.
    pub(crate) config_files: Vec<String>,
    /// Command that installs the analyzer; `{venv_bin}` as for gates.
    pub(crate) install_hint: Option<String>,
    /// The analyzer's own import roots (its config, its defaults).
    pub(crate) search_paths: Option<SearchPathSpec>,
    /// Arguments that hand the analyzer the merged roots of every importer
    /// gate (`{search_paths}`: a TOML array of root-relative directories);
    /// none: the analyzer's own settings alone decide.
    pub(crate) search_path_args: Vec<String>,
    /// Arguments that make the analyzer print its version.
    pub(crate) version_args: Option<Vec<String>>,
    /// The oldest version that has the command at all.
    pub(crate) min_version: Option<String>,
    /// Why the installed analyzer cannot answer (older than
    /// `min_version`): set when versions are checked; the graph is then
    /// not asked.
    pub(crate) too_old: Option<String>,
    /// The analyzer's older versions, and the command each runs instead.
    pub(crate) older_versions: Vec<OlderVersion>,
    /// The entries of `older_versions` the installed analyzer took.
    pub(crate) adapted: Option<Adapted>,
}

/// Where a tool looks for the project's own modules (`search_paths`).
#[derive(Debug, Clone)]
pub(crate) struct SearchPathSpec {
    /// Where its config lives, in the tool's order of precedence.
    pub(crate) config: Vec<ConfigSource>,
    /// Keys holding root directories (`/` walks into tables, `*` into
    /// every list item).
    pub(crate) keys: Vec<SearchKey>,
    /// Environment variables holding a list of directories.
    pub(crate) env: Vec<String>,
    /// Directories the tool always searches.
    pub(crate) always: Vec<String>,
    /// Whether it searches the directory above each checked file's
    /// outermost package.
    pub(crate) package_bases: bool,
    /// The config key that, when true, turns the package bases off (the
    /// tool then stops at the search paths themselves).
    pub(crate) explicit_bases_key: Option<String>,
    /// The variable a gate's partial run gets the bases of all the tool's
    /// files in, ahead of its own value.
    pub(crate) bases_env: Option<String>,
    /// Arguments of a run given `bases_env`: a cache of qg's own.
    pub(crate) bases_cache_args: Vec<String>,
    /// The variable that stands for the config file's directory.
    pub(crate) config_dir_variable: Option<String>,
}

/// One key of a [`SearchPathSpec`].
#[derive(Debug, Clone)]
pub(crate) struct SearchKey {
    /// The key, or a `/`-separated walk to it.
    pub(crate) key: String,
    /// What the tool assumes when it is absent.
    pub(crate) default: Vec<String>,
}

/// One compiled gate.
#[derive(Debug, Clone)]
pub struct Gate {
    /// Key under `gates`.
    pub(crate) id: String,
    /// Human name (defaults to the id).
    pub(crate) name: String,
    /// argv; `command[0]` is resolved through the virtualenv, then PATH.
    pub(crate) command: Vec<String>,
    /// Wall-clock limit; the whole process tree is killed past it.
    pub(crate) timeout: Duration,
    /// Root-relative directory the tool runs in.
    pub(crate) working_dir: Option<PathBuf>,
    /// Whether the gate's files are appended to `command`.
    pub(crate) pass_files: bool,
    /// Whether the files may be split over several runs (argument-length
    /// limit, idle cores). False for tools that must see every file at once.
    pub(crate) batchable: bool,
    /// Run on every project file the gate accepts, but report only
    /// violations in the scoped files (type checkers: an edit can break an
    /// unchanged importer).
    pub(crate) project_wide: bool,
    /// The tool reads one config per run, from its working directory: each
    /// workspace member holding that config gets a gate of its own.
    pub(crate) runs_per_member: bool,
    /// Set on the gate a workspace member's run is: which member, and the
    /// gate it was made from.
    pub(crate) member: Option<GateMember>,
    /// The member directories (root-relative) inside the gate's own that
    /// their own runs check: never this gate's (also excluded by `scope`).
    pub(crate) left_to_members: Vec<String>,
    /// The tool's cache trusts a file's size and whole-second mtime: a cold
    /// run waits out the second of the newest write to a project file.
    pub(crate) whole_second_mtimes: bool,
    /// Arguments to check without reading the tool's cache (still writing it).
    pub(crate) uncached_args: Vec<String>,
    /// Extra environment variables for the tool.
    pub(crate) env: BTreeMap<String, String>,
    /// Exit codes meaning "ran fine".
    pub(crate) exit_codes_ok: Vec<i32>,
    /// Exit codes meaning "ran fine and found violations".
    pub(crate) exit_codes_violations: Vec<i32>,
    /// Lowest severity that fails the gate.
    pub(crate) fail_on: Severity,
    /// Finding codes by which the tool says it could not check a file (ruff's
    /// `io`): the gate is then an error, not a verdict on the code.
    pub(crate) tool_error_codes: Vec<String>,
    /// How the tool says it stopped before checking anything.
    pub(crate) stopped: Option<Stopped>,
    /// The line it prints when its settings leave out every file given.
    pub(crate) nothing_checked: Option<regex::Regex>,
    /// How output becomes violations.
    pub parser: ParserSpec,
    /// File suffixes the tool understands (`.py`); empty (and no
    /// `file_names`) = any.
    pub(crate) file_types: Vec<String>,
    /// Names of further files it takes in any directory (`pyproject.toml`).
    pub(crate) file_names: Vec<String>,
    /// Gate-specific include/exclude globs.
    pub(crate) scope: GlobFilter,
    /// On a partial scope, also check every project file that imports a
    /// scoped file, transitively (type checkers: an edit can break an
    /// unchanged importer). Needs `import_graph`.
    pub(crate) importers: bool,
    /// Command that fixes findings; `{files}` becomes the failing files.
    pub(crate) fix_hint: Option<String>,
    /// Where the tool documents a rule, `{code}` standing for it: the
    /// `url` of a finding whose tool gave none (SARIF `helpUri`).
    pub(crate) rule_url: Option<String>,
    /// Command that checks the failing files again, for a gate with no
    /// fixer (a type checker); `{files}` as in `fix_hint`.
    pub(crate) rerun_hint: Option<String>,
    /// Command that installs the tool, shown when it is missing;
    /// `{venv_bin}` becomes the project virtualenv's `bin/` (the tools
    /// module expands it).
    pub(crate) install_hint: Option<String>,
    /// Arguments that make `command[0]` print its version (`["--version"]`),
    /// asked once per installed binary; none: the version is not reported.
    pub(crate) version_args: Option<Vec<String>>,
    /// The oldest version of the tool the gate's command works with.
    pub(crate) min_version: Option<String>,
    /// How the gate runs tools older than a feature it uses
    /// (`tools::version::adapt` applies them).
    pub(crate) older_versions: Vec<OlderVersion>,
    /// The entry of `older_versions` this gate was adapted by, for the
    /// version its tool said.
    pub(crate) adapted: Option<Adapted>,
    /// The codes by which the tool says an import cannot be resolved, and
    /// what to do when most findings are such: a type checker that cannot
    /// see the project's dependencies reports them by the hundred.
    pub(crate) unresolved_imports: Option<UnresolvedImports>,
    /// How the tool picks its own files: then `--scope project` runs the
    /// tool's own whole-project invocation, and partial scopes pass only
    /// files it would check.
    pub(crate) selection: Option<SelectionSpec>,
    /// How the tool fixes its findings in place (`qg fix`); present iff
    /// `capabilities.supports_autofix`.
    pub(crate) fix: Option<FixSpec>,
    /// Whether the flagged line's content identifies a finding (its
    /// fingerprint, its baseline entry). False for a gate whose one finding
    /// per file points wherever the first change is — a formatter's —
    /// which any edit above it moves: it is known by file, rule, message.
    pub(crate) match_lines: bool,
    /// How to keep the tool warm between runs (`qg daemon`, `qg watch`).
    pub(crate) daemon: Option<DaemonSpec>,
    /// Where the tool finds the project's own modules: the import graph
    /// resolves with these roots too, when the gate checks importers.
    pub(crate) search_paths: Option<SearchPathSpec>,
    /// The files the tool reads its settings from: a change to one can
    /// change the verdict on any file, so the gate then checks its whole
    /// project scope.
    pub(crate) tool_config: Vec<ToolConfigFile>,
    /// Keys of the tool's config naming project code it imports and runs.
    pub(crate) executes: Vec<String>,
    /// Keys naming a module its plugin imports and runs; their files are
    /// added to `tool_config` (`runs`) when the config is loaded.
    pub(crate) settings_modules: Vec<SettingsModule>,
    /// Where the tool keeps its own cache between runs, which qg keeps in
    /// its store by commit and puts back where a checkout has none.
    pub(crate) tool_cache: Option<ToolCacheSpec>,
}

/// `tool_cache`: the tool's own cache directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolCacheSpec {
    /// Relative to where the tool runs.
    pub(crate) dir: String,
    /// A key of the tool's config that moves it.
    pub(crate) key: Option<String>,
    /// An environment variable that moves it, ahead of the config.
    pub(crate) env: Option<String>,
}

/// The workspace member a gate runs for (also the `member` of its result
/// in the JSON report).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct GateMember {
    /// The member's root-relative directory (`packages/a`).
    pub(crate) dir: String,
    /// The id of the gate it is a run of (`mypy`).
    pub(crate) of: String,
}

impl Gate {
    /// The directory the tool runs in and reads its config from: the
    /// gate's `working_dir` (a member's directory) under `root`, else `root`.
    pub(crate) fn config_dir(&self, root: &std::path::Path) -> PathBuf {
        match &self.working_dir {
            Some(dir) => root.join(dir),
            None => root.to_path_buf(),
        }
    }

    /// Whether the tool's own run in the gate's directory reaches `path`
    /// (root-relative) and no member's run takes it: where a workspace
    /// splits a tool's files, whatever the gate's own globs say.
    pub(crate) fn owns(&self, path: &str) -> bool {
        let under = |dir: &str| path.strip_prefix(dir).is_some_and(|p| p.starts_with('/'));
        self.member.as_ref().is_none_or(|m| under(&m.dir))
            && !self.left_to_members.iter().any(|dir| under(dir))
    }

    /// Whether the gate is `id` or one of its members' runs: what `--gate
    /// id` selects.
    pub(crate) fn answers_to(&self, id: &str) -> bool {
        self.id == id || self.member.as_ref().is_some_and(|m| m.of == id)
    }
}

/// The gate a baseline entry and a finding's fingerprint name: a member's
/// run (`mypy@packages/a`) shares its gate's (`mypy`), so a finding keeps its
/// identity when its file moves between members, and a project whose
/// members' configs first split a gate keeps its baseline.
pub(crate) fn baseline_gate(id: &str) -> &str {
    id.split_once('@').map_or(id, |(gate, _)| gate)
}

/// How a tool says it stopped before checking anything (`success.stopped`):
/// mypy's blocking errors ("errors prevented further checking").
#[derive(Debug, Clone)]
pub(crate) struct Stopped {
    /// Exit codes of a run that stopped.
    pub(crate) exit_codes: Vec<i32>,
    /// Codes of the findings that stop it.
    pub(crate) codes: Vec<String>,
    /// Messages of the findings that stop it.
    pub(crate) messages: Vec<regex::Regex>,
    /// It stops on two files of one module name among those it checks.
    pub(crate) on_duplicate_modules: bool,
    /// It stops on a package directory whose name is no identifier.
    pub(crate) on_invalid_package_names: bool,
}

impl Stopped {
    /// Whether a finding with this code and message stops the tool.
    pub(crate) fn marks(&self, code: Option<&str>, message: &str) -> bool {
        code.is_some_and(|c| self.codes.iter().any(|s| s == c))
            || self.messages.iter().any(|m| m.is_match(message))
    }
}

/// One file a tool reads settings from, and its sections of it.
#[derive(Debug, Clone)]
pub(crate) struct ToolConfigFile {
    /// The root-relative glob as written (`**/ruff.toml`).
    pub(crate) file: String,
    /// `file`, compiled.
    pub(crate) matcher: GlobFilter,
    /// The tool's sections (dotted names, `*` within one part); empty:
    /// the whole file.
    pub(crate) sections: Vec<String>,
    /// Code the tool imports and runs (a module a plugin's setting names),
    /// not only reads: `qg trust` covers its content.
    pub(crate) runs: bool,
}

/// A config key naming a module the tool's plugin imports (`settings_modules`).
#[derive(Debug, Clone)]
pub(crate) struct SettingsModule {
    /// The config file and the section holding the key.
    pub(crate) source: ConfigSource,
    /// The key.
    pub(crate) key: String,
    /// A key of the tool's own config listing more roots (`mypy_path`).
    pub(crate) roots_key: Option<String>,
}

impl Gate {
    /// The `tool_config` entries that name `path` (root-relative).
    pub(crate) fn tool_config_for<'g>(
        &'g self,
        path: &'g str,
    ) -> impl Iterator<Item = &'g ToolConfigFile> + 'g {
        self.tool_config
            .iter()
            .filter(move |c| c.matcher.matches(path))
    }
}

/// A gate's `daemon` section, checked.
#[derive(Debug, Clone)]
pub(crate) struct DaemonSpec {
    /// The long-lived process (program first), in the foreground; its
    /// `{daemon_dir}` is the daemon's own directory.
    pub(crate) command: Vec<String>,
    /// How qg talks to it.
    pub(crate) protocol: Protocol,
    /// Whether a warm answer also reports the project modules the checked
    /// files import, as the tool's cold run does.
    pub(crate) reports_imported: bool,
    /// Except those under a directory an editable install puts on the
    /// environment's `sys.path` (the tool silences installed packages).
    pub(crate) silences_installed: bool,
    /// Arguments that make the cold run a warm answer is compared with
    /// (`--verify`) check from scratch, never from the tool's cache.
    pub(crate) fresh_args: Vec<String>,
    /// Files whose appearance or removal the tool does not follow: the
    /// daemon starts it again before a check that sees one.
    pub(crate) restart_on: Option<GlobFilter>,
    /// Time without a request after which the daemon stops itself.
    pub(crate) idle_timeout: Duration,
    /// Every this many warm answers, one is compared with a cold run in
    /// the background (0: never, beyond the self-check after each start).
    pub(crate) verify_every: usize,
    /// The first this many answers after each start are all compared.
    pub(crate) verify_first: usize,
    /// Keys of the tool's config that, set, make every answer compared.
    pub(crate) verify_all_when: Vec<String>,
}

/// The protocol of a [`DaemonSpec`], with what only it needs.
#[derive(Debug, Clone)]
pub(crate) enum Protocol {
    /// A language server.
    Lsp(LspSpec),
    /// A daemon with a command-line client.
    Command(CommandSpec),
}

impl Gate {
    /// What a column in the gate's findings counts: its language server's
    /// command-line units when its daemon section says, else characters
    /// (as ruff counts them).
    pub(crate) fn column_units(&self) -> PositionEncoding {
        match self.daemon.as_ref().map(|d| &d.protocol) {
            Some(Protocol::Lsp(spec)) => spec.position_encoding,
            _ => PositionEncoding::Utf32,
        }
    }

    /// The kinds of files it takes, for messages: its suffixes, then its
    /// file names, joined by `sep`.
    pub(crate) fn file_kinds(&self, sep: &str) -> String {
        [self.file_types.as_slice(), self.file_names.as_slice()]
            .concat()
            .join(sep)
    }

    /// Whether the gate checks files like `path` (`capabilities.file_types`
    /// and `file_names`; none listed: every file).
    pub(crate) fn handles_file_type(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        (self.file_types.is_empty() && self.file_names.is_empty())
            || self
                .file_types
                .iter()
                .any(|suffix| path.ends_with(suffix.as_str()))
            || self.file_names.iter().any(|n| n == name)
    }
}

/// How qg's LSP client talks to a gate's language server.
#[derive(Debug, Clone)]
pub(crate) struct LspSpec {
    /// Answers to `workspace/configuration`, by dotted section.
    pub(crate) settings: serde_json::Value,
    /// `initializationOptions`.
    pub(crate) initialization_options: Option<serde_json::Value>,
    /// How the cold run words a finding (`{code}: {message}`).
    pub(crate) message: Option<String>,
    /// What a column counts.
    pub(crate) position_encoding: PositionEncoding,
}

/// How qg drives a daemon through its own command-line client.
#[derive(Debug, Clone)]
pub(crate) struct CommandSpec {
    /// One whole-program check (the tool's own-run arguments appended);
    /// its output is read by the gate's parser.
    pub(crate) check: Vec<String>,
    /// The check's client, started ahead and given the check's arguments
    /// on stdin (`{check_dir}`: the check program's directory).
    pub(crate) check_ahead: Option<Vec<String>>,
    /// The polite stop.
    pub(crate) stop: Option<Vec<String>>,
    /// The file whose existence says the daemon takes requests.
    pub(crate) ready_file: Option<String>,
    /// Output lines of the check that a cold run does not print and that
    /// are no finding: left out of the answer.
    pub(crate) ignore_output: Option<regex::Regex>,
    /// Output lines that are the tool's notes, not findings: an answer of
    /// nothing else is a clean run, whatever its exit code.
    pub(crate) note_output: Option<regex::Regex>,
}

pub(crate) use super::schema::PositionEncoding;

/// A gate's fixer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FixSpec {
    /// Program and arguments; the files are appended.
    pub(crate) command: Vec<String>,
    /// Exit codes of a fixer that did its job.
    pub(crate) exit_codes_ok: Vec<i32>,
    /// Added for `--unsafe`.
    pub(crate) unsafe_args: Vec<String>,
    /// Added for `--diff`.
    pub(crate) diff_args: Vec<String>,
    /// Added to fix one rule (`{code}`).
    pub(crate) rule_args: Vec<String>,
    /// Names of the files the fixer reads its settings from.
    pub(crate) config_files: Vec<String>,
}

/// How a tool picks its own files (the selection module reads it).
#[derive(Debug, Clone)]
pub(crate) struct SelectionSpec {
    /// Arguments of the tool's own whole-project run, appended to the
    /// command unless its config names the files itself.
    pub(crate) project_args: Vec<String>,
    /// Where its config may live, in the tool's order of precedence.
    pub(crate) config: Vec<ConfigSource>,
    /// The key that names the files it checks.
    pub(crate) include: Option<SelectionKey>,
    /// Keys naming modules by dotted name, which replace `include` when
    /// any is present.
    pub(crate) include_modules: Vec<SelectionKey>,
    /// The key that names files it leaves out.
    pub(crate) exclude: Option<SelectionKey>,
    /// How it treats a `.py` beside a `.pyi`.
    pub(crate) stubs: StubPolicy,
    /// It configures each file by its nearest config: a file under a
    /// directory with a config of its own is never dropped.
    pub(crate) nearest_config: bool,
}

/// A config file and the section in it (`tool.mypy` in TOML, `mypy` in
/// INI, `""` for the root of a JSON file).
#[derive(Debug, Clone)]
pub(crate) struct ConfigSource {
    /// Root-relative file.
    pub(crate) file: String,
    /// Section.
    pub(crate) section: String,
}

/// A config key holding file patterns, and the patterns the tool assumes
/// when the key is absent.
#[derive(Debug, Clone)]
pub(crate) struct SelectionKey {
    /// The key.
    pub(crate) key: String,
    /// How its entries are written.
    pub(crate) syntax: PatternSyntax,
    /// The tool's default when the key is absent.
    pub(crate) default: Vec<String>,
    /// What the tool does with an entry naming a missing path.
    pub(crate) missing: MissingPath,
    /// For dotted names: the key listing further directories they are
    /// found under.
    pub(crate) roots_key: Option<String>,
    /// A key whose entries add to this one's when this one is set.
    pub(crate) extended_by: Option<String>,
}

pub(crate) use super::schema::{MissingPath, PatternSyntax, StubPolicy};

/// One entry of [`Gate::older_versions`].
#[derive(Debug, Clone)]
pub(crate) struct OlderVersion {
    /// The first version the gate's own way works with.
    pub(crate) below: String,
    /// What older versions lack.
    pub(crate) why: String,
    /// The command run instead, with the gate's own other arguments.
    pub(crate) command: Option<Vec<String>>,
    /// The gate's arguments `command` stands in for, left out.
    pub(crate) instead_of: Vec<String>,
    /// How its output is read instead.
    pub(crate) parser: Option<ParserSpec>,
    /// The file suffixes it takes instead.
    pub(crate) file_types: Option<Vec<String>>,
    /// Whether the gate keeps its daemon.
    pub(crate) daemon: bool,
    /// The whole-project run's arguments instead.
    pub(crate) project_args: Option<Vec<String>>,
}

/// How a gate was adapted to its tool's version, and why: `qg doctor`
/// says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Adapted {
    /// The version line the tool printed.
    pub(crate) version: String,
    /// The highest `below` of the entries that apply: the version that
    /// would need none.
    pub(crate) below: String,
    /// What the tool lacks, one `why` per entry that applies.
    pub(crate) why: String,
    /// What the gate does instead, in words.
    pub(crate) instead: String,
    /// Whether it lost its daemon: it answers cold with this tool.
    pub(crate) cold: bool,
}

impl Adapted {
    /// Why a gate answers cold with this tool: `mypy 1.13.0 is older than
    /// 2.1: dmypy prints text, not JSON, after an update`.
    pub(crate) fn why_cold(&self) -> String {
        format!(
            "{} is older than {}: {}",
            self.version, self.below, self.why
        )
    }
}

/// See [`Gate::unresolved_imports`].
#[derive(Debug, Clone)]
pub(crate) struct UnresolvedImports {
    /// Rule codes (`reportMissingImports`, `import-not-found`).
    pub(crate) codes: Vec<String>,
    /// What to do; `{venv_bin}` as in `install_hint`.
    pub(crate) advice: String,
    /// What to say instead where the environment already holds every
    /// dependency the project declares, so installing them cannot help.
    pub(crate) when_installed: Option<String>,
}
