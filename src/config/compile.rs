//! Raw YAML values to a validated [`Config`]: every semantic problem is an
//! error located at its key.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, PathBuf};
use std::time::Duration;

use super::model::*;
use super::schema::{self, RawConfig, RawGate, RawParsing, Strategy, Version};
use super::{yaml, Format};
use crate::error::ConfigError;
use crate::globs::{GlobError, GlobFilter};
use crate::parse::json::{JsonSettings, JsonSpec};
use crate::parse::text::{RuleSettings, TextSettings, TextSpec};
use crate::parse::{ParserSpec, SpecError};
use crate::suggest;

/// Compiles raw config, turning each semantic problem into a located error.
pub(super) struct Compiler<'a> {
    pub(super) text: &'a str,
    pub(super) origin: &'a str,
    pub(super) format: Format,
}

impl Compiler<'_> {
    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let shown = self.format.shown_key(key);
        let position = self.format.locate(self.text, &shown);
        ConfigError {
            file: self.origin.to_string(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            key: Some(shown),
            message: message.into(),
        }
    }

    /// Compiles `raw`; `hashed` is the text whose change counts as a change
    /// of the config (the whole YAML file, or only the `[tool.qg]` table).
    pub(super) fn compile(&self, raw: RawConfig, hashed: &str) -> Result<Config, ConfigError> {
        self.check_version(&raw.version)?;
        let (raw, raw_gates, hashed) = with_builtin_gates(raw, hashed);
        let gate_ids: Vec<&str> = raw_gates.keys().map(String::as_str).collect();
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
        let members = raw
            .members
            .map(|members| self.members(members))
            .transpose()?;
        let mut gates = BTreeMap::new();
        for (id, gate) in raw_gates {
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
            hash: crate::git::hash_blob(hashed.as_bytes()),
            warnings: Vec::new(),
            active_gates: raw.active_gates,
            project_scope,
            parent_branch: raw.parent_branch,
            cache_shared: self.shared_store(raw.cache.shared)?,
            artifact_logging,
            import_graph,
            interface_aware_importers: raw.interface_aware_importers,
            members,
            gates,
        })
    }

    /// `cache.shared`: a URL without credentials — a committed config is
    /// read by everyone who clones the repository.
    fn shared_store(&self, url: Option<String>) -> Result<Option<String>, ConfigError> {
        let Some(url) = url.filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        if let Some(what) = credential_in(&url) {
            return Err(self.error(
                "cache.shared",
                format!("holds a credential ({what}): credentials come from the environment (QG_CACHE_SHARED, AWS_ACCESS_KEY_ID, …) or the provider's own files, never from the repository's config"),
            ));
        }
        Ok(Some(url.trim().to_string()))
    }

    /// `members`: directories (or globs of them) relative to the root.
    fn members(&self, members: Vec<String>) -> Result<Vec<String>, ConfigError> {
        for (index, member) in members.iter().enumerate() {
            let key = format!("members[{index}]");
            self.relative_dir(member).map_err(|m| self.error(&key, m))?;
            crate::globs::GlobFilter::new(std::slice::from_ref(member), &[]).map_err(|e| {
                self.error(
                    &key,
                    format!("`{member}` is not a valid glob: {}", e.message),
                )
            })?;
        }
        Ok(members
            .into_iter()
            .map(|m| m.trim_end_matches('/').trim_start_matches("./").to_string())
            .collect())
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
            check_placeholders(hint, INSTALL_PLACEHOLDERS)
                .map_err(|m| self.error(&key("install_hint"), m))?;
        }
        let (search_paths, search_path_args) = match raw.search_paths {
            Some(mut paths) => {
                let args = std::mem::take(&mut paths.args);
                if !args.is_empty() && !args.iter().any(|a| a.contains("{search_paths}")) {
                    return Err(self.error(
                        &key("search_paths.args"),
                        "needs `{search_paths}` where the roots go (e.g. [\"--config\", \"src = {search_paths}\"])",
                    ));
                }
                if paths.bases_env.is_some() {
                    return Err(self.error(
                        &key("search_paths.bases_env"),
                        "belongs to a gate's `search_paths` only: the analyzer gets the roots in `args`",
                    ));
                }
                let spec = self.search_paths(&key("search_paths"), paths, &[])?;
                (Some(spec), args)
            }
            None => (None, Vec::new()),
        };
        if !raw.older_versions.is_empty() && raw.version_args.is_none() {
            return Err(self.error(
                &key("older_versions"),
                "needs `version_args`: the analyzer's version decides which entry applies",
            ));
        }
        if let Some(min) = &raw.min_version {
            self.version_number(&key("min_version"), min)?;
            if raw.version_args.is_none() {
                return Err(self.error(
                    &key("min_version"),
                    "needs `version_args`: the analyzer's version is compared with it",
                ));
            }
        }
        let mut older_versions = Vec::new();
        for (index, older) in raw.older_versions.into_iter().enumerate() {
            let at = key(&format!("older_versions[{index}]"));
            if older.command.is_none() {
                return Err(self.error(
                    &at,
                    "needs a `command`: only the command differs for the import analyzer",
                ));
            }
            if older.parsing.is_some()
                || older.file_types.is_some()
                || older.daemon.is_some()
                || !older.instead_of.is_empty()
            {
                return Err(self.error(
                    &at,
                    "takes only `below`, `why` and `command` for the import analyzer",
                ));
            }
            older_versions.push(self.older_version(&at, older)?);
        }
        Ok(ImportGraph {
            version_args: raw.version_args,
            min_version: raw.min_version,
            too_old: None,
            older_versions,
            adapted: None,
            command: raw.command,
            timeout: Duration::from_secs_f64(raw.timeout_seconds),
            file_types: raw.file_types,
            unreadable,
            config_files: raw.config_files,
            install_hint: raw.install_hint,
            search_paths,
            search_path_args,
        })
    }

    /// A `search_paths` section; `inherited` is the config list it uses
    /// when it names none (a gate's `selection.config`).
    fn search_paths(
        &self,
        at: &str,
        raw: schema::RawSearchPaths,
        inherited: &[ConfigSource],
    ) -> Result<SearchPathSpec, ConfigError> {
        let config: Vec<ConfigSource> = match raw.config {
            Some(sources) => sources.into_iter().map(config_source).collect(),
            None => inherited.to_vec(),
        };
        if config.is_empty() && !raw.keys.is_empty() {
            return Err(self.error(
                &format!("{at}.keys"),
                "needs `config` (or the gate's `selection.config`): the files the keys are read from",
            ));
        }
        if !raw.args.is_empty() {
            return Err(self.error(
                &format!("{at}.args"),
                "belongs to `import_graph.search_paths` only: a gate's roots go to the analyzer",
            ));
        }
        let needs_bases = [
            ("explicit_bases_key", raw.explicit_bases_key.is_some()),
            ("bases_env", raw.bases_env.is_some()),
        ];
        if let Some((name, _)) = needs_bases
            .iter()
            .find(|(_, set)| *set && !raw.package_bases)
        {
            return Err(self.error(
                &format!("{at}.{name}"),
                "needs `package_bases: true`: it is about the package bases",
            ));
        }
        let keys = raw
            .keys
            .into_iter()
            .map(|key| match key {
                schema::RawSearchKey::Name(key) => SearchKey {
                    key,
                    default: Vec::new(),
                },
                schema::RawSearchKey::WithDefault(k) => SearchKey {
                    key: k.key,
                    default: k.default,
                },
            })
            .collect();
        Ok(SearchPathSpec {
            config,
            keys,
            env: raw.env,
            always: raw.always,
            package_bases: raw.package_bases,
            explicit_bases_key: raw.explicit_bases_key,
            bases_env: raw.bases_env,
            bases_cache_args: raw.bases_cache_args,
            config_dir_variable: raw.config_dir_variable,
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
        if exec.runs_per_member && working_dir.is_some() {
            return Err(self.error(
                &key("execution.runs_per_member"),
                "cannot go with `working_dir`: a gate run per member runs in each member's directory",
            ));
        }
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
        for (index, name) in raw.capabilities.file_names.iter().enumerate() {
            if name.is_empty() || name.contains(['/', '\\']) {
                return Err(self.error(
                    &key(&format!("capabilities.file_names[{index}]")),
                    format!(
                        "`{name}` must be a file name without a directory, like \"pyproject.toml\""
                    ),
                ));
            }
        }
        match (&raw.fix, raw.capabilities.supports_autofix) {
            // The capability promises a fixer: `qg fix` runs its command.
            (None, true) => {
                return Err(self.error(
                    &key("capabilities.supports_autofix"),
                    "is true but the gate has no `fix: {command: [...]}` to run".to_string(),
                ))
            }
            (Some(_), false) => {
                return Err(self.error(
                    &key("fix"),
                    "needs `capabilities.supports_autofix: true`".to_string(),
                ))
            }
            (Some(fix), true) if fix.command.is_empty() => {
                return Err(self.error(&key("fix.command"), "must name a program".to_string()))
            }
            _ => {}
        }
        let hints = [
            ("fix_hint", &raw.fix_hint, &["{files}"][..]),
            ("rule_url", &raw.rule_url, &["{code}"]),
            ("rerun_hint", &raw.rerun_hint, &["{files}"]),
            ("install_hint", &raw.install_hint, INSTALL_PLACEHOLDERS),
            (
                "unresolved_imports.advice",
                &raw.unresolved_imports.as_ref().map(|u| u.advice.clone()),
                INSTALL_PLACEHOLDERS,
            ),
            (
                "unresolved_imports.when_installed",
                &raw.unresolved_imports
                    .as_ref()
                    .and_then(|u| u.when_installed.clone()),
                INSTALL_PLACEHOLDERS,
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
        if raw.daemon.is_some() && exec.batchable {
            return Err(self.error(
                &key("daemon"),
                "needs `execution.batchable: false`: a daemon checks the whole program, which a tool split over batches never sees",
            ));
        }
        let daemon = raw
            .daemon
            .map(|daemon| self.daemon(id, daemon))
            .transpose()?;
        if let Some(s) = &raw.selection {
            self.check_selection_syntaxes(&key("selection"), s)?;
        }
        let selection = raw.selection.map(|s| SelectionSpec {
            project_args: s.project_args,
            config: s.config.into_iter().map(config_source).collect(),
            include: s.include.map(selection_key),
            include_modules: s.include_modules.into_iter().map(selection_key).collect(),
            exclude: s.exclude.map(selection_key),
            stubs: s.stubs,
            nearest_config: s.nearest_config,
        });
        let tool_cache = raw
            .tool_cache
            .map(|raw| self.tool_cache(&key("tool_cache"), raw))
            .transpose()?;
        let stopped = success
            .stopped
            .map(|raw| self.stopped(&key("success.stopped"), raw))
            .transpose()?;
        let nothing_checked = success
            .nothing_checked
            .as_deref()
            .map(|pattern| self.regex(&key("success.nothing_checked"), pattern))
            .transpose()?;
        let tool_config = raw
            .tool_config
            .into_iter()
            .enumerate()
            .map(|(index, file)| {
                self.tool_config_file(&key(&format!("tool_config[{index}]")), file)
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(min) = &raw.min_version {
            self.version_number(&key("min_version"), min)?;
        }
        if !raw.older_versions.is_empty() && raw.version_args.is_none() {
            return Err(self.error(
                &key("older_versions"),
                "needs `version_args`: the tool's version decides which entry applies",
            ));
        }
        let older_versions = raw
            .older_versions
            .into_iter()
            .enumerate()
            .map(|(index, older)| {
                self.older_version(&key(&format!("older_versions[{index}]")), older)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inherited = selection.as_ref().map_or(&[][..], |s| &s.config[..]);
        let search_paths = raw
            .search_paths
            .map(|paths| self.search_paths(&key("search_paths"), paths, inherited))
            .transpose()?;
        Ok(Gate {
            daemon,
            id: id.to_string(),
            name: raw.name.unwrap_or_else(|| id.to_string()),
            command: exec.command,
            timeout: Duration::from_secs_f64(exec.timeout_seconds),
            working_dir,
            pass_files: exec.pass_files,
            batchable: exec.batchable,
            whole_second_mtimes: exec.whole_second_mtimes,
            uncached_args: exec.uncached_args,
            project_wide: exec.project_wide,
            runs_per_member: exec.runs_per_member,
            member: None,
            left_to_members: Vec::new(),
            env: exec.env,
            exit_codes_ok: success.exit_codes_ok,
            exit_codes_violations: success.exit_codes_violations,
            fail_on: success.fail_on,
            tool_error_codes: success.tool_error_codes,
            stopped,
            nothing_checked,
            parser,
            file_types: raw.capabilities.file_types,
            file_names: raw.capabilities.file_names,
            scope,
            importers: raw.scope.importers,
            fix_hint: raw.fix_hint,
            rule_url: raw.rule_url,
            rerun_hint: raw.rerun_hint,
            install_hint: raw.install_hint,
            version_args: raw.version_args,
            min_version: raw.min_version,
            older_versions,
            adapted: None,
            unresolved_imports: raw.unresolved_imports.map(|u| UnresolvedImports {
                codes: u.codes,
                advice: u.advice,
                when_installed: u.when_installed,
            }),
            match_lines: raw.baseline.match_lines,
            fix: raw.fix.map(|f| FixSpec {
                command: f.command,
                exit_codes_ok: f.exit_codes_ok,
                unsafe_args: f.unsafe_args,
                diff_args: f.diff_args,
                rule_args: f.rule_args,
                config_files: f.config_files,
            }),
            search_paths,
            selection,
            tool_config,
            executes: raw.executes,
            settings_modules: raw
                .settings_modules
                .into_iter()
                .map(|m| SettingsModule {
                    source: ConfigSource {
                        file: m.file,
                        section: m.section,
                    },
                    key: m.key,
                    roots_key: m.roots_key,
                })
                .collect(),
            tool_cache,
        })
    }

    /// A tool's cache directory: inside the directory the tool runs in.
    fn tool_cache(
        &self,
        key: &str,
        raw: schema::RawToolCache,
    ) -> Result<ToolCacheSpec, ConfigError> {
        let inside = !raw.dir.is_empty()
            && !std::path::Path::new(&raw.dir).is_absolute()
            && !raw.dir.split(['/', '\\']).any(|part| part == "..");
        if !inside {
            return Err(self.error(
                &format!("{key}.dir"),
                format!(
                    "`{}` must be a path inside the directory the tool runs in (`.mypy_cache`)",
                    raw.dir
                ),
            ));
        }
        Ok(ToolCacheSpec {
            dir: raw.dir,
            key: raw.key,
            env: raw.env,
        })
    }

    /// A version bound must be one: `1.11`, not `v1.11` or `latest`.
    fn version_number(&self, key: &str, version: &str) -> Result<(), ConfigError> {
        match version.starts_with(|c: char| c.is_ascii_digit()) {
            true => Ok(()),
            false => Err(self.error(
                key,
                format!("`{version}` is no version number (write it as `1.11`)"),
            )),
        }
    }

    /// One `older_versions` entry: a bound, a reason, and something that
    /// differs from the gate's own way.
    fn older_version(
        &self,
        key: &str,
        raw: schema::RawOlderVersion,
    ) -> Result<OlderVersion, ConfigError> {
        self.version_number(&format!("{key}.below"), &raw.below)?;
        if raw.why.trim().is_empty() {
            return Err(self.error(&format!("{key}.why"), "must say what older versions lack"));
        }
        if raw.command.as_ref().is_some_and(Vec::is_empty) {
            return Err(self.error(&format!("{key}.command"), "must name a program"));
        }
        if raw.command.is_none() && !raw.instead_of.is_empty() {
            return Err(self.error(
                &format!("{key}.instead_of"),
                "needs a `command` that stands in for those arguments",
            ));
        }
        let changes = raw.command.is_some()
            || raw.parsing.is_some()
            || raw.file_types.is_some()
            || raw.daemon == Some(false)
            || raw.project_args.is_some();
        if !changes {
            return Err(self.error(
                key,
                "changes nothing: give a `command`, `parsing`, `file_types`, `project_args` or `daemon: false`",
            ));
        }
        let parser = raw
            .parsing
            .as_ref()
            .map(|parsing| self.parser(parsing))
            .transpose()
            .map_err(|e| self.error(&format!("{key}.parsing.{}", e.key), e.message))?;
        Ok(OlderVersion {
            below: raw.below,
            why: raw.why,
            command: raw.command,
            instead_of: raw.instead_of,
            parser,
            file_types: raw.file_types,
            daemon: raw.daemon.unwrap_or(true),
            project_args: raw.project_args,
        })
    }

    /// `include` and `exclude` name files, `include_modules` dotted names:
    /// a key of the other kind would be read as the wrong thing.
    fn check_selection_syntaxes(
        &self,
        key: &str,
        raw: &schema::RawSelection,
    ) -> Result<(), ConfigError> {
        let files = [("include", &raw.include), ("exclude", &raw.exclude)];
        for (name, selection_key) in files {
            if let Some(k) = selection_key.as_ref().filter(|k| dotted(k.syntax)) {
                return Err(self.error(
                    &format!("{key}.{name}.syntax"),
                    format!("`{}` names files: its syntax is paths, walked_paths, joined_globs or regex; dotted names go under include_modules", k.key),
                ));
            }
        }
        for (index, k) in raw.include_modules.iter().enumerate() {
            if !dotted(k.syntax) {
                return Err(self.error(
                    &format!("{key}.include_modules[{index}].syntax"),
                    format!(
                        "`{}` names modules by dotted name: its syntax is packages or modules",
                        k.key
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `pattern` compiled, or an error naming `key`.
    fn regex(&self, key: &str, pattern: &str) -> Result<regex::Regex, ConfigError> {
        regex::Regex::new(pattern).map_err(|e| {
            let first = e.to_string().lines().last().unwrap_or_default().to_string();
            self.error(key, format!("is not a valid regex: {first}"))
        })
    }

    /// `success.stopped`, its message regexes compiled.
    fn stopped(&self, key: &str, raw: schema::RawStopped) -> Result<Stopped, ConfigError> {
        let messages = raw
            .messages
            .iter()
            .enumerate()
            .map(|(index, pattern)| self.regex(&format!("{key}.messages[{index}]"), pattern))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Stopped {
            exit_codes: raw.exit_codes,
            codes: raw.codes,
            messages,
            on_duplicate_modules: raw.on_duplicate_modules,
            on_invalid_package_names: raw.on_invalid_package_names,
        })
    }

    /// One `tool_config` entry: its file glob compiled, its sections checked.
    fn tool_config_file(
        &self,
        key: &str,
        raw: schema::RawToolConfigFile,
    ) -> Result<ToolConfigFile, ConfigError> {
        if raw.file.trim().is_empty() {
            return Err(self.error(
                &format!("{key}.file"),
                "is empty; name the file (a glob: `**/ruff.toml`)",
            ));
        }
        let matcher = GlobFilter::new(std::slice::from_ref(&raw.file), &[])
            .map_err(|e| self.error(&format!("{key}.file"), e.message))?;
        if let Some(index) = raw.sections.iter().position(|s| s.trim().is_empty()) {
            return Err(self.error(
                &format!("{key}.sections[{index}]"),
                "is empty; name a table or section (`tool.mypy`), or leave `sections` out for the whole file",
            ));
        }
        Ok(ToolConfigFile {
            file: raw.file,
            matcher,
            sections: raw.sections,
            runs: false,
        })
    }

    fn daemon(&self, id: &str, raw: schema::RawDaemon) -> Result<DaemonSpec, ConfigError> {
        let key = |sub: &str| format!("gates.{id}.daemon.{sub}");
        let protocol_key = key("protocol");
        if raw.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(self.error(
                &key("command"),
                "is empty; give the long-lived process and its arguments",
            ));
        }
        if !(raw.idle_timeout_minutes.is_finite() && raw.idle_timeout_minutes > 0.0) {
            return Err(self.error(
                &key("idle_timeout_minutes"),
                format!(
                    "must be a positive number of minutes, not {}",
                    raw.idle_timeout_minutes
                ),
            ));
        }
        let lsp_only = [
            ("settings", raw.settings.is_some()),
            (
                "initialization_options",
                raw.initialization_options.is_some(),
            ),
            ("message", raw.message.is_some()),
            ("position_encoding", raw.position_encoding.is_some()),
        ];
        let command_only = [
            ("check", raw.check.is_some()),
            ("check_ahead", raw.check_ahead.is_some()),
            ("stop", raw.stop.is_some()),
            ("ready_file", raw.ready_file.is_some()),
        ];
        let (foreign, name): (&[(&str, bool)], _) = match raw.protocol {
            schema::DaemonProtocol::Lsp => (&command_only, "lsp"),
            schema::DaemonProtocol::Command => (&lsp_only, "command"),
        };
        if let Some((sub, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(self.error(
                &key(sub),
                format!("does not apply to protocol `{name}`; remove it"),
            ));
        }
        for (sub, argv) in [
            ("command", Some(&raw.command)),
            ("check", raw.check.as_ref()),
            ("stop", raw.stop.as_ref()),
            ("check_ahead", raw.check_ahead.as_ref()),
        ] {
            let known: &[&str] = match sub {
                "check_ahead" => &["{daemon_dir}", "{check_dir}"],
                _ => &["{daemon_dir}"],
            };
            for (index, arg) in argv.into_iter().flatten().enumerate() {
                check_placeholders(arg, known)
                    .map_err(|m| self.error(&key(&format!("{sub}[{index}]")), m))?;
            }
        }
        if let Some(file) = &raw.ready_file {
            check_placeholders(file, &["{daemon_dir}"])
                .map_err(|m| self.error(&key("ready_file"), m))?;
        }
        for (index, arg) in raw.fresh_args.iter().enumerate() {
            check_placeholders(arg, &["{devnull}"])
                .map_err(|m| self.error(&key(&format!("fresh_args[{index}]")), m))?;
        }
        let protocol = match raw.protocol {
            schema::DaemonProtocol::Lsp => {
                if let Some(message) = &raw.message {
                    check_template(message, &["{code}", "{message}", "{summary}"])
                        .map_err(|m| self.error(&key("message"), m))?;
                }
                if let Some(settings) = raw.settings.as_ref().filter(|s| !s.is_object()) {
                    return Err(self.error(
                        &key("settings"),
                        format!("must be a mapping of sections, not {settings}"),
                    ));
                }
                Protocol::Lsp(LspSpec {
                    settings: raw.settings.unwrap_or_else(|| serde_json::json!({})),
                    initialization_options: raw.initialization_options,
                    message: raw.message,
                    position_encoding: raw.position_encoding.unwrap_or_default(),
                })
            }
            schema::DaemonProtocol::Command => {
                let check = raw
                    .check
                    .filter(|c| c.first().is_some_and(|p| !p.trim().is_empty()));
                let Some(check) = check else {
                    return Err(self.error(
                        &protocol_key,
                        "`command` needs `check`: the client command that checks the whole program once",
                    ));
                };
                let lines = |name: &str, pattern: Option<&str>| {
                    pattern
                        .map(|pattern| {
                            regex::RegexBuilder::new(pattern)
                                .multi_line(true)
                                .build()
                                .map_err(|e| self.error(&key(name), format!("invalid regex: {e}")))
                        })
                        .transpose()
                };
                let ignore_output = lines("ignore_output", raw.ignore_output.as_deref())?;
                let note_output = lines("note_output", raw.note_output.as_deref())?;
                Protocol::Command(CommandSpec {
                    check,
                    check_ahead: raw.check_ahead.filter(|c| !c.is_empty()),
                    stop: raw.stop.filter(|s| !s.is_empty()),
                    ready_file: raw.ready_file,
                    ignore_output,
                    note_output,
                })
            }
        };
        let restart_on = match raw.restart_when_added_or_removed.is_empty() {
            true => None,
            false => Some(
                GlobFilter::new(&raw.restart_when_added_or_removed, &[]).map_err(|e| {
                    self.error(
                        &key(&format!("restart_when_added_or_removed[{}]", e.index)),
                        format!("invalid glob: {}", e.message),
                    )
                })?,
            ),
        };
        Ok(DaemonSpec {
            restart_on,
            command: raw.command,
            protocol,
            reports_imported: raw.reports_imported,
            silences_installed: raw.silences_installed,
            fresh_args: raw.fresh_args.iter().map(|a| with_devnull(a)).collect(),
            idle_timeout: Duration::from_secs_f64(raw.idle_timeout_minutes * 60.0),
            verify_every: raw.verify_every,
            verify_first: raw.verify_first,
            verify_all_when: raw.verify_all_when,
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
/// A config that defines no `gates` takes the built-in ones (and the
/// built-in `import_graph`, unless it has its own), so that a `[tool.qg]`
/// table can be three lines. The built-in text joins what is hashed: a qg
/// upgrade that changes a built-in gate counts as a change of the config.
fn with_builtin_gates(
    mut raw: RawConfig,
    hashed: &str,
) -> (RawConfig, BTreeMap<String, RawGate>, String) {
    if let Some(gates) = raw.gates.take() {
        return (raw, gates, hashed.to_string());
    }
    let builtin: RawConfig = yaml::from_str(super::EMBEDDED_DEFAULT, super::EMBEDDED_ORIGIN)
        .expect("the embedded default is valid YAML of the schema");
    if raw.import_graph.is_none() {
        raw.import_graph = builtin.import_graph;
    }
    let gates = builtin.gates.unwrap_or_default();
    (raw, gates, format!("{hashed}\n{}", super::DEFAULT_TOOLS))
}

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

/// A template may hold only the placeholders it lists.
fn check_template(template: &str, known: &[&str]) -> Result<(), String> {
    for (at, _) in template.match_indices('{') {
        let rest = &template[at..];
        if !known.iter().any(|k| rest.starts_with(k)) {
            let shown: String = rest.chars().take_while(|c| *c != '}').collect();
            return Err(format!(
                "unknown placeholder `{shown}}}`; known: {}",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// A hint may hold only its one `{placeholder}`.
/// What an install hint or an unresolved-imports advice may say.
const INSTALL_PLACEHOLDERS: &[&str] = &["{venv_bin}", "{install}", "{install_project}"];

/// `arg` with `{devnull}` as the platform's null device: a fresh run whose
/// tool is told to keep its cache there keeps none, so it never races the
/// user's own runs over the project's cache (a daemon's comparisons run in
/// the background).
fn with_devnull(arg: &str) -> String {
    let devnull = if cfg!(windows) { "nul" } else { "/dev/null" };
    arg.replace("{devnull}", devnull)
}

fn check_placeholders(hint: &str, known: &[&str]) -> Result<(), String> {
    let placeholders = hint.match_indices('{').map(|(i, _)| &hint[i..]);
    for rest in placeholders {
        if !known.iter().any(|k| rest.starts_with(k)) {
            let shown: String = rest.chars().take_while(|c| *c != '}').collect();
            let names: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            return Err(match names.as_slice() {
                [only] => format!("unknown placeholder `{shown}}}`; only {only} is known"),
                _ => format!(
                    "unknown placeholder `{shown}}}`; known: {}",
                    names.join(", ")
                ),
            });
        }
    }
    Ok(())
}

fn config_source(raw: schema::RawConfigSource) -> ConfigSource {
    ConfigSource {
        file: raw.file,
        section: raw.section,
    }
}

fn selection_key(raw: schema::RawSelectionKey) -> SelectionKey {
    SelectionKey {
        key: raw.key,
        syntax: raw.syntax,
        default: raw.default,
        missing: raw.missing,
        roots_key: raw.roots_key,
        extended_by: raw.extended_by,
    }
}

/// Whether `syntax` names modules by dotted name rather than files.
fn dotted(syntax: PatternSyntax) -> bool {
    matches!(syntax, PatternSyntax::Packages | PatternSyntax::Modules)
}

/// The credential a store's URL holds, named: a password in its user
/// part, or a query key that carries a secret.
fn credential_in(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if let Some((user, _)) = authority.rsplit_once('@') {
        if user.contains(':') {
            return Some("a password before `@`".to_string());
        }
    }
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|pair| pair.split('=').next())
        .find(|key| {
            let key = key.to_ascii_lowercase();
            [
                "password",
                "secret",
                "token",
                "access_key",
                "account_key",
                "credential",
                "sas",
            ]
            .iter()
            .any(|word| key.contains(word))
        })
        .map(|key| format!("`{key}`"))
}
