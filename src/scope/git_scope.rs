//! `auto` and `branch`: what changed in git, against the baseline or the
//! merge-base with the parent branch.

use std::collections::BTreeMap;

use super::files::{is_regular_file, project_scope};
use super::{settings, Baseline, Reason, Scope, ScopeFile, ScopeMode, ScopeRequest};
use crate::config::Config;
use crate::error::QgError;
use crate::file_name;
use crate::git::{self, Repo};
use crate::workspace::Workspace;

/// Resolution of the git-based scopes.
pub(super) struct GitScope<'a> {
    pub(super) ws: &'a Workspace,
    pub(super) repo: &'a Repo,
    pub(super) config: &'a Config,
    pub(super) request: &'a ScopeRequest,
    pub(super) head: git::Head,
}

impl GitScope<'_> {
    pub(super) fn auto(&self, baseline: &Baseline<'_>) -> Result<Scope, QgError> {
        let head = &self.head;
        let Some(head_commit) = head.commit.as_deref() else {
            let reason = "no commits yet (unborn HEAD)".to_string();
            return project_scope(self.ws, self.config, ScopeMode::Auto, Some(reason));
        };
        let state = baseline.state;
        let mut failed: Vec<String> = state.map(|s| s.failed_files.clone()).unwrap_or_default();
        // A run whose warm answer awaits its confirmation moved nothing:
        // the files it found failing are checked again, as failed files
        // are, so the fix that follows a red step checks what was red.
        if let Some(held) = state.and_then(|s| s.pending.as_ref()) {
            failed.extend(held.facts.failing.iter().cloned());
        }
        let mut scope = match self.trusted_baseline(head, baseline) {
            Ok(sha) => {
                let changes = self.repo.changes_since(Some(&sha))?;
                let clean = state.map(|s| &s.clean_blobs);
                let mut scope = self.scope_of_changes(ScopeMode::Auto, &changes, clean);
                self.add_drifted_clean_files(&mut scope, &changes, clean);
                let recorded = state.map(|s| s.tool_settings.clone()).unwrap_or_default();
                self.compare_settings(&mut scope, &sha, &changes, &recorded, "the last green run");
                let then = state.map(|s| &s.tools);
                for (gate, why) in
                    settings::changed_tools(then.unwrap_or(&BTreeMap::new()), &baseline.tools)
                {
                    scope.whole_project.entry(gate).or_insert(why);
                }
                scope.baseline_sha = Some(sha);
                scope.diff = Some(changes);
                scope
            }
            Err(reason) => self.fallback(head_commit, reason)?,
        };
        scope.requested = ScopeMode::Auto;
        self.add_failed_files(&mut scope, &failed);
        Ok(scope)
    }

    /// `Ok(baseline sha)` when the baseline can be trusted, else why not.
    fn trusted_baseline(
        &self,
        head: &git::Head,
        baseline: &Baseline<'_>,
    ) -> Result<String, String> {
        let Some(state) = baseline.state else {
            return Err(format!("no green run yet on branch {}", head.branch));
        };
        let Some(sha) = &state.baseline_sha else {
            return Err(format!("no green run yet on branch {}", head.branch));
        };
        if !self.repo.has_commit(sha) {
            return Err(format!(
                "the last green commit {} no longer exists (rebased or garbage-collected)",
                git::short(sha)
            ));
        }
        if state.config_hash.as_deref() != Some(self.config.hash.as_str()) {
            return Err(format!(
                "config changed since the last green run, {}",
                git::short(sha)
            ));
        }
        Ok(sha.clone())
    }

    /// `branch` when a parent resolves and HEAD is ahead of it, else `project`.
    fn fallback(&self, head: &str, reason: String) -> Result<Scope, QgError> {
        let parent = self.parent()?.ok();
        let ahead = parent.as_ref().is_some_and(|p| {
            self.repo
                .merge_base(&p.commit, head)
                .is_some_and(|base| base != head)
        });
        if ahead {
            self.branch(ScopeMode::Auto, Some(reason))
        } else {
            project_scope(self.ws, self.config, ScopeMode::Auto, Some(reason))
        }
    }

    /// Changed since `merge-base(parent, HEAD)`, plus untracked.
    pub(super) fn branch(
        &self,
        requested: ScopeMode,
        why_auto_fell_back: Option<String>,
    ) -> Result<Scope, QgError> {
        let head = &self.head;
        let join = |detail: String| match &why_auto_fell_back {
            Some(first) => format!("{first}; {detail}"),
            None => detail,
        };
        let Some(head_commit) = head.commit.as_deref() else {
            let reason = join("no commits yet (unborn HEAD)".to_string());
            return project_scope(self.ws, self.config, requested, Some(reason));
        };
        let parent = match self.parent()? {
            Ok(parent) => parent,
            Err(tried) => {
                return project_scope(self.ws, self.config, requested, Some(join(tried)));
            }
        };
        let base = match self.repo.merge_base(&parent.commit, head_commit) {
            Some(base) => base,
            None => {
                let reason = join(format!(
                    "no merge-base between HEAD and {} (a shallow clone? fetch more history)",
                    parent.name
                ));
                return project_scope(self.ws, self.config, requested, Some(reason));
            }
        };
        let changes = self.repo.changes_since(Some(&base))?;
        let mut scope = self.scope_of_changes(ScopeMode::Branch, &changes, None);
        let since = format!("the merge-base with {}", parent.name);
        self.compare_settings(&mut scope, &base, &changes, &Default::default(), &since);
        scope.requested = requested;
        scope.baseline_sha = Some(base);
        scope.fallback_reason = why_auto_fell_back;
        scope.diff = Some(changes);
        Ok(scope)
    }

    /// The parent branch (`--parent`, the config's, origin/HEAD, main,
    /// master), never HEAD's own branch; `Err` says what was tried.
    fn parent(&self) -> Result<Result<git::Parent, String>, QgError> {
        self.repo.resolve_parent(
            self.request.parent.as_deref(),
            self.config.parent_branch.as_deref(),
            &self.head.branch,
        )
    }

    /// Marks the gates whose tool settings differ from `base`'s (or from
    /// what the last green run `recorded`) to check their whole project.
    fn compare_settings(
        &self,
        scope: &mut Scope,
        base: &str,
        changes: &git::Changes,
        recorded: &settings::SettingsDigests,
        since: &str,
    ) {
        let candidates = settings::diff_paths(changes);
        let found = settings::compare(
            self.repo,
            &self.ws.root,
            self.config,
            base,
            &candidates,
            recorded,
            since,
        );
        scope.whole_project.extend(found.whole);
        scope.uncached.extend(found.uncached);
        scope.settings_now = found.now;
    }

    /// Changed ∪ untracked, minus excluded, non-files and content that
    /// already passed (`clean`).
    fn scope_of_changes(
        &self,
        mode: ScopeMode,
        changes: &git::Changes,
        clean: Option<&BTreeMap<String, String>>,
    ) -> Scope {
        let mut files: BTreeMap<String, Vec<Reason>> = BTreeMap::new();
        let tagged = changes
            .changed
            .iter()
            .map(|p| (p, Reason::Changed))
            .chain(changes.untracked.iter().map(|p| (p, Reason::Untracked)));
        for (path, reason) in tagged {
            if self.is_out_of_scope(path) {
                continue;
            }
            let passed = clean
                .and_then(|c| c.get(path))
                .is_some_and(|key| self.clean_key(path).as_ref() == Some(key));
            if !passed {
                files.entry(path.clone()).or_default().push(reason);
            }
        }
        Scope {
            mode,
            requested: mode,
            files: into_scope_files(files),
            baseline_sha: None,
            fallback_reason: None,
            unmatched: Vec::new(),
            importers_unknown: None,
            body_only: Vec::new(),
            interface_changed: BTreeMap::new(),
            whole_project: BTreeMap::new(),
            uncached: Default::default(),
            settings_now: Default::default(),
            diff: None,
        }
    }

    /// Files that passed with uncommitted content (`clean`) and now hold
    /// something else, though the diff against the baseline shows nothing
    /// (a stash or checkout brought the baseline's version back): the
    /// baseline vouches for the content that was checked, not for HEAD's.
    fn add_drifted_clean_files(
        &self,
        scope: &mut Scope,
        changes: &git::Changes,
        clean: Option<&BTreeMap<String, String>>,
    ) {
        let drifted: Vec<&String> = clean
            .into_iter()
            .flatten()
            .filter(|(path, _)| {
                !changes.changed.contains(*path) && !changes.untracked.contains(*path)
            })
            .filter(|(path, _)| !self.is_out_of_scope(path))
            .filter(|(path, key)| self.clean_key(path).as_ref() != Some(*key))
            .map(|(path, _)| path)
            .collect();
        if drifted.is_empty() {
            return;
        }
        let mut files: BTreeMap<String, Vec<Reason>> =
            scope.files.drain(..).map(|f| (f.path, f.reasons)).collect();
        for path in drifted {
            files.entry(path.clone()).or_default().push(Reason::Changed);
        }
        scope.files = into_scope_files(files);
    }

    /// The file's content and mode as `clean_blobs` records them.
    fn clean_key(&self, path: &str) -> Option<String> {
        git::worktree_file(&file_name::join(&self.ws.root, path)).map(|f| f.clean_key())
    }

    /// Outside the project (`project_scope` include and exclude globs: the
    /// git scopes are parts of `project`), qg's own state, or not a regular
    /// file (deleted, a directory, a symlink).
    fn is_out_of_scope(&self, path: &str) -> bool {
        !self.config.project_scope.matches(path)
            || crate::state::is_state_file(path)
            || !is_regular_file(&file_name::join(&self.ws.root, path))
    }

    /// Files that failed last time are checked again until they pass.
    fn add_failed_files(&self, scope: &mut Scope, failed: &[String]) {
        let mut files: BTreeMap<String, Vec<Reason>> =
            scope.files.drain(..).map(|f| (f.path, f.reasons)).collect();
        for path in failed {
            if self.is_out_of_scope(path) {
                continue;
            }
            files
                .entry(path.clone())
                .or_default()
                .push(Reason::FailedLastRun);
        }
        scope.files = into_scope_files(files);
    }
}

pub(super) fn into_scope_files(files: BTreeMap<String, Vec<Reason>>) -> Vec<ScopeFile> {
    files
        .into_iter()
        .map(|(path, mut reasons)| {
            reasons.sort();
            reasons.dedup();
            ScopeFile {
                path,
                reasons,
                depends_on: Vec::new(),
            }
        })
        .collect()
}
