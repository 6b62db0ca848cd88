//! The result cache in a run: each cacheable gate's files looked up
//! before its tool runs, the plan cut to the misses, the hits folded into
//! its result after, and what the tool found stored. A gate a daemon would
//! answer is looked up too: when every file hits, the cache answers it —
//! a cold verdict, which needs no confirmation and moves the state at once
//! (a fix that returns to a state seen before, a stash popped, a branch
//! switched back) — else its daemon does, asked for the misses alone
//! and the hits folded into its answer (the plan stays uncut for a cold
//! answer instead, and nothing of the daemon's is stored). A
//! `project_wide` gate is not looked up (its tool's whole run is one
//! answer).

use std::collections::{BTreeMap, BTreeSet};

use super::cache_check::SampleJob;
use super::installed::{installed_roots, under_any};
use super::project::Project;
use super::tool_caches::{self, ToolCache};
use super::CacheUse;
use crate::cache::key::{environment_digest, GateKey, Imports, Keyer};
use crate::cache::shared::Shared;
use crate::cache::store::{same_findings, stored_path, Use};
use crate::cache::{Lookup, Store};
use crate::exec::{Observer, WarmRequests};
use crate::outcome::{CacheShare, GateResult, GateStatus, ToolCacheUse};
use crate::plan::GatePlan;
use crate::tools::version;
use crate::violation::Violation;

/// Why an all-hit plan is not run (replaced by its result before anyone
/// reads it).
const FROM_CACHE: &str = "every file's findings are in the result cache";

/// One run's use of the cache.
pub(super) struct RunCache<'a> {
    store: Store,
    /// The team's store, when the environment names one.
    shared: Option<Shared>,
    /// `--verify`: every hit is checked by the tool too.
    verify: bool,
    /// One share per plan, in plan order (none: not looked up).
    shares: Vec<Option<Share<'a>>>,
    /// What the run should say about the stores themselves.
    warnings: Vec<String>,
    /// Entries this machine's store answered that the team's lacks, for a
    /// run that writes to it.
    lacking: Vec<(String, Vec<u8>)>,
    /// The project, and the config the run was given (for the background
    /// check of a sample of the hits).
    root: std::path::PathBuf,
    config: Option<std::path::PathBuf>,
    /// HEAD and its first parents, where a gate keeps its tool's own cache
    /// (empty when none does).
    commits: Vec<String>,
    /// Whether a sample of the hits may be checked in the background.
    sample: bool,
}

/// What a run's lookups need to know of the run.
#[derive(Clone, Copy)]
pub(super) struct Asking<'o> {
    /// The gates its daemons would answer: looked up, and taken from them
    /// only when every file hits.
    pub(super) warm: Option<&'o WarmRequests>,
    /// `--verify`: every hit is checked by the tool too.
    pub(super) verify: bool,
    /// Whether the run may leave anything behind (the versions it asks).
    pub(super) remember: bool,
    /// The config it was given (`--config`), for the background check.
    pub(super) config: Option<&'o std::path::Path>,
    /// Whether a sample of its hits may be checked in the background (a
    /// user's run; not a background confirmation's own).
    pub(super) sample: bool,
}

/// A gate's lookups.
struct Share<'a> {
    /// The gate's id.
    gate: String,
    /// The plan's files before the cut.
    planned: Vec<&'a str>,
    /// Its own whole-project run's arguments, before a cut to its misses.
    native_args: Option<Vec<String>>,
    /// Each file looked up → its key (files that cannot be keyed now are
    /// misses without one).
    keys: BTreeMap<String, String>,
    /// What the cache answered, by file.
    hits: BTreeMap<String, Vec<Violation>>,
    /// Of the hits, how many the shared store answered.
    from_shared: usize,
    /// Files the tool must check.
    misses: BTreeSet<String>,
    /// What the run does with the plan.
    cut: Cut,
    /// Entries that could not be used.
    warnings: Vec<String>,
    /// Why the gate is not cached at all.
    uncached: Option<String>,
    /// Its key's identity (none when it is not cached).
    identity: Option<String>,
    /// What the run did with the tool's own cache.
    tool_cache: Option<ToolCacheUse>,
    /// Whether its daemon is asked (the cache did not answer it whole).
    asked_warm: bool,
    /// Whether its daemon is asked for the misses alone, the hits being
    /// folded into its answer (the tool's own whole-project run is asked
    /// whole: its daemon reports every file anyway).
    warm_cut: bool,
}

/// What a gate's lookups did to its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Every file hit: the tool does not run.
    AllHits,
    /// The tool runs on the misses alone.
    ToMisses,
    /// The tool runs on the whole plan (a verification, a miss only its
    /// files' imports reach).
    Whole,
}

impl<'a> RunCache<'a> {
    /// Looks up every cacheable gate's files in the store and cuts each
    /// plan to its misses; `None` when no cache is in use. The import graph
    /// must be current (see [`wants_graph`]).
    pub(super) fn look_up(
        project: Project<'_>,
        store: Store,
        plans: &mut [GatePlan<'a>],
        asking: &Asking<'_>,
    ) -> Option<RunCache<'a>> {
        let Asking {
            warm,
            verify,
            remember,
            config,
            sample,
        } = *asking;
        let cacheable: Vec<usize> = (0..plans.len())
            .filter(|i| is_cacheable(&plans[*i], warm))
            .collect();
        if cacheable.is_empty() {
            return None;
        }
        let gates: Vec<&crate::config::Gate> = cacheable.iter().map(|i| plans[*i].gate).collect();
        let versions = version::tool_versions(&gates, project.tools, remember);
        // Only a whole-program checker with a known version is keyed on the
        // environment: a listing of site-packages no run of other gates pays.
        let keyed_on_imports = gates
            .iter()
            .any(|g| g.importers && versions.contains_key(&g.id));
        let (environment, installed) = match keyed_on_imports {
            true => (
                project
                    .tools
                    .environment()
                    .and_then(|e| environment_digest(&e.site_packages())),
                installed_roots(project.workspace, project.tools),
            ),
            false => (None, Vec::new()),
        };
        let mut keyer = Keyer::new(&project.workspace.root);
        let mut shares: Vec<Option<Share<'a>>> = (0..plans.len()).map(|_| None).collect();
        for index in cacheable {
            let plan = &plans[index];
            let gate_key = GateKey::new(
                &project.workspace.root,
                project.config,
                plan.gate,
                versions.get(&plan.gate.id).map(String::as_str),
                environment.as_deref(),
            );
            shares[index] = Some(match gate_key {
                Ok(gate_key) => {
                    let lookups = Lookups {
                        project,
                        store: &store,
                        gate_key: &gate_key,
                        installed: &installed,
                    };
                    let mut share = lookups.share(plan, &mut keyer);
                    share.identity = Some(gate_key.identity().to_string());
                    share
                }
                Err(why) => Share::uncached(plan, why),
            });
        }
        if remember {
            keyer.save_interfaces();
        }
        let (shared, mut warnings) = match Shared::named(project.config.cache_shared.as_deref()) {
            Ok(shared) => (shared, Vec::new()),
            Err(why) => (None, vec![why]),
        };
        for wrong in store.take_distrusted(&project.workspace.root) {
            warnings.push(format!(
                "the result cache's entry for {} ({}) differed from the tool's own check of it in the background: it is removed, and the tool checks the file again",
                crate::file_name::display(&wrong.file),
                wrong.gate
            ));
        }
        let mut lacking = Vec::new();
        if let Some(shared) = &shared {
            ask_shared(shared, &store, &mut shares);
            lacking = share_local_hits(shared, &store, &shares);
        }
        for (slot, plan) in shares.iter_mut().zip(plans.iter_mut()) {
            let Some(share) = slot else { continue };
            share.decide(plan, verify);
            // A gate its daemon answers unless the cache answers it whole:
            // the daemon is asked for the misses, the plan stays whole for
            // a cold answer instead (a daemon that refused its tool), and
            // what its tool finds is kept only if the answer comes cold.
            if asked_warm(plan, warm) && share.cut != Cut::AllHits {
                let whole_request = warm
                    .and_then(|w| w.plans.get(&plan.gate.id))
                    .is_none_or(|request| request.whole);
                share.warm_cut = share.cut == Cut::ToMisses && !whole_request;
                share.cut = Cut::Whole;
                share.asked_warm = true;
                continue;
            }
            share.cut_plan(plan);
        }
        let commits = match keeps_tool_caches(&shares, plans) {
            true => tool_caches::commits(project.workspace),
            false => Vec::new(),
        };
        for (share, plan) in shares.iter_mut().zip(plans.iter()) {
            // A plan with arguments of its own (a confirmation's fresh run:
            // no cache of the tool's) reads no cache of the tool's.
            let reads_tool_cache = plan.extra_args.is_empty();
            if let Some(share) = share
                .as_mut()
                .filter(|s| s.cut != Cut::AllHits && reads_tool_cache)
            {
                let root = &project.workspace.root;
                share.restore_tool_cache(root, plan.gate, &commits, (&store, shared.as_ref()));
            }
        }
        warnings.extend(shared.as_ref().and_then(Shared::trouble));
        Some(RunCache {
            commits,
            sample,
            store,
            shared,
            verify,
            shares,
            warnings,
            root: project.workspace.root.clone(),
            config: config.map(std::path::Path::to_path_buf),
            lacking,
        })
    }

    /// Takes from the daemons' requests what the cache answers: a gate it
    /// answers whole asks no daemon, and one it answers in part asks its
    /// daemon for the misses alone (a language server pulls fewer files).
    pub(super) fn cut_warm_requests(&self, warm: &mut WarmRequests) {
        for share in self.shares.iter().flatten() {
            if share.cut == Cut::AllHits {
                warm.plans.remove(&share.gate);
            } else if let Some(request) = warm.plans.get_mut(&share.gate) {
                if share.warm_cut {
                    request.report.retain(|f| !share.hits.contains_key(f));
                }
            }
        }
    }

    /// Folds the hits into each warm answer its daemon gave for the misses
    /// alone (see [`Self::cut_warm_requests`]), before the answer is
    /// confirmed: the confirmation then compares only what the daemon said.
    /// Nothing is stored: the daemon's findings are not yet confirmed.
    pub(super) fn fold_into_warm_answers(
        &self,
        results: &mut [GateResult],
        plans: &[GatePlan<'_>],
    ) {
        for ((share, result), plan) in self.shares.iter().zip(results).zip(plans) {
            let Some(share) = share.as_ref().filter(|s| s.warm_cut && result.warm) else {
                continue;
            };
            result.violations.retain(|v| {
                v.file
                    .as_deref()
                    .is_none_or(|f| !share.hits.contains_key(f))
            });
            result
                .violations
                .extend(share.hits.values().flatten().cloned());
            crate::outcome::settle(plan.gate, result);
            let in_plan = |file: &String| share.planned.iter().any(|p| p == file);
            let hits = share.hits.keys().filter(|f| in_plan(f)).count();
            result.cache = Some(CacheShare {
                hits,
                misses: share.misses.iter().filter(|f| in_plan(f)).count(),
                stored: 0,
                shared: share.from_shared.min(hits),
                uncached: None,
                tool_cache: None,
            });
        }
    }

    /// Folds each gate's hits into its result, stores what its tool found,
    /// gives each plan back its files (what the gate covered), and records
    /// the run's use of the store.
    pub(super) fn fold_in(
        self,
        results: &mut [GateResult],
        plans: &mut [GatePlan<'a>],
        project: Project<'_>,
    ) -> Vec<String> {
        let mut uses = Vec::new();
        let mut written = self.lacking;
        let mut samples = Vec::new();
        for ((share, result), plan) in self.shares.into_iter().zip(results).zip(plans) {
            let Some(share) = share else { continue };
            // A warm answer is the daemon's alone: no hit, nothing kept.
            if share.asked_warm && result.warm {
                continue;
            }
            if share.cut == Cut::AllHits {
                *result = GateResult::named(plan.gate);
                result.runner = project.tools.hint_runner(plan.gate, &result.run_from);
                result.package_bases = plan.package_bases.clone();
            }
            plan.files = share.planned.clone();
            plan.native_args = share.native_args.clone();
            plan.skip_reason = None;
            let gate = plan.gate.id.clone();
            let mut share = share;
            share.keep_tool_cache(
                &self.root,
                plan.gate,
                result,
                &self.commits,
                (&self.store, self.shared.as_ref()),
            );
            let (used, folded) = share.fold(result, plan, &self.store, self.verify, &mut written);
            uses.extend(used);
            if !folded.is_empty() {
                samples.push((gate, folded));
            }
        }
        self.store.record(&uses);
        if self.sample && !samples.is_empty() && super::cache_check::sampled_now() {
            let files =
                crate::scope::project_files(project.workspace, project.config).unwrap_or_default();
            let tree =
                crate::warm::snapshot::Snapshot::take(&self.root, &files, &Default::default());
            for (gate, hits) in &samples {
                let sample = (gate.as_str(), hits.as_slice());
                let job = SampleJob::of(
                    &self.store,
                    &self.root,
                    self.config.as_deref(),
                    sample,
                    &tree,
                );
                if let Some(job) = job {
                    job.start();
                }
            }
        }
        let mut warnings = self.warnings;
        if let Some(shared) = &self.shared {
            let before = shared.trouble();
            shared.upload(written);
            warnings.extend(shared.trouble().filter(|now| before.as_ref() != Some(now)));
        }
        warnings
    }
}

/// The store a run uses, if any.
pub(super) fn store(cache: &CacheUse) -> Option<Store> {
    match cache {
        CacheUse::Default => Store::for_run(),
        CacheUse::Off => None,
        CacheUse::At(dir) => Some(Store::at(dir.clone())),
    }
}

/// The run's observer, told a looked-up gate's result only once the
/// cache's hits are in it (an all-hit gate is not run, and is no "skipped"
/// gate; a gate run on its misses has more findings than its tool's).
pub(super) struct Deferring<'o> {
    inner: &'o dyn Observer<GateResult>,
    ids: BTreeSet<String>,
}

impl<'o> Deferring<'o> {
    /// Defers the gates `cache` looked up (none without a cache).
    pub(super) fn new(
        inner: &'o dyn Observer<GateResult>,
        cache: Option<&RunCache<'_>>,
    ) -> Deferring<'o> {
        let ids = cache
            .map(|c| {
                let looked_up = c.shares.iter().flatten();
                // A gate its daemon answers whole is told as it finishes:
                // the cache adds nothing to its result.
                looked_up
                    .filter(|s| !s.asked_warm || s.warm_cut)
                    .map(|s| s.gate.clone())
                    .collect()
            })
            .unwrap_or_default();
        Deferring { inner, ids }
    }

    /// Tells the observer of the deferred gates' whole results.
    pub(super) fn finish(&self, results: &[GateResult]) {
        for result in results.iter().filter(|r| self.ids.contains(&r.id)) {
            self.inner.gate_finished(result);
        }
    }
}

impl Observer<GateResult> for Deferring<'_> {
    fn gate_started(&self, gate: &crate::config::Gate, files: usize, argv: &[String]) {
        self.inner.gate_started(gate, files, argv);
    }

    fn gate_finished(&self, result: &GateResult) {
        if !self.ids.contains(&result.id) {
            self.inner.gate_finished(result);
        }
    }
}

/// Builds or updates the cached import graph when a gate checks importers:
/// a whole-project run pays for it while the tools run, so the next partial
/// run finds it ready (and knows what a file deleted in between imported).
pub(super) fn refresh_import_graph(
    cwd: std::path::PathBuf,
    config: &crate::config::Config,
    gates: &[&crate::config::Gate],
    tools: &crate::tools::Toolbox<'_>,
) {
    let Some(spec) = &config.import_graph else {
        return;
    };
    if !gates.iter().any(|g| g.importers) {
        return;
    }
    // A repository handle of its own: one may not be shared between threads.
    let Ok(workspace) = crate::workspace::Workspace::discover(&cwd) else {
        return;
    };
    let request = crate::graph::Request {
        ws: &workspace,
        config,
        spec,
        seeds: BTreeSet::new(),
        deleted: BTreeSet::new(),
        in_scope: BTreeSet::new(),
        diff: None,
        remember: true,
        tools,
    };
    // A graph that cannot be built now is built by the next partial run.
    let _ = crate::graph::refresh(&request);
}

/// Looks up one cold plan of a background comparison (a confirmation, a
/// self-check's keeping), the import graph brought up to date first: no
/// daemon, nothing remembered, no sample of its own hits checked.
pub(super) fn look_up_in_background<'a>(
    project: Project<'_>,
    store: Store,
    plans: &mut [GatePlan<'a>],
) -> Option<RunCache<'a>> {
    if wants_graph(plans, None) {
        let gates: Vec<&crate::config::Gate> = plans.iter().map(|p| p.gate).collect();
        let cwd = project.workspace.cwd.clone();
        refresh_import_graph(cwd, project.config, &gates, project.tools);
    }
    let asking = Asking {
        warm: None,
        verify: false,
        remember: false,
        config: None,
        sample: false,
    };
    RunCache::look_up(project, store, plans, &asking)
}

/// Whether a cache lookup of these plans needs the import graph: a
/// whole-program checker's key holds what its files import.
pub(super) fn wants_graph(plans: &[GatePlan<'_>], warm: Option<&WarmRequests>) -> bool {
    plans
        .iter()
        .any(|p| is_cacheable(p, warm) && p.gate.importers)
}

fn is_cacheable(plan: &GatePlan<'_>, warm: Option<&WarmRequests>) -> bool {
    // `--verify` asks the daemon to be compared: it is asked.
    let verified_warm = asked_warm(plan, warm) && warm.is_some_and(|w| w.verify);
    plan.skip_reason.is_none() && plan.report_only.is_none() && !verified_warm
}

/// Whether the run would ask the gate's daemon.
fn asked_warm(plan: &GatePlan<'_>, warm: Option<&WarmRequests>) -> bool {
    warm.is_some_and(|w| w.plans.contains_key(&plan.gate.id))
}

/// What one gate's lookups need.
struct Lookups<'l> {
    project: Project<'l>,
    store: &'l Store,
    gate_key: &'l GateKey,
    installed: &'l [String],
}

impl Lookups<'_> {
    /// Keys and looks up the files whose findings the plan reports: its own
    /// and, for a tool that also reports the modules they import, those.
    fn share<'a>(&self, plan: &GatePlan<'a>, keyer: &mut Keyer<'_>) -> Share<'a> {
        let gate = plan.gate;
        let reported: Vec<&str> = plan
            .files
            .iter()
            .copied()
            .filter(|f| plan.reports(f))
            .collect();
        let reports_imported = gate.daemon.as_ref().is_some_and(|d| d.reports_imported);
        let silences_installed = gate.daemon.as_ref().is_some_and(|d| d.silences_installed);
        let mut dependencies = match self.gate_key.imports() {
            Imports::Ignored => BTreeMap::new(),
            _ => crate::graph::dependencies(self.project.workspace, &reported),
        };
        let mut looked_up: BTreeSet<String> = reported.iter().map(|f| f.to_string()).collect();
        if reports_imported {
            let reached: BTreeSet<String> = dependencies
                .values()
                .flatten()
                .flatten()
                .map(|(file, _)| file.clone())
                .filter(|f| !silences_installed || !under_any(f, self.installed))
                .filter(|f| !looked_up.contains(f))
                .collect();
            let more: Vec<&str> = reached.iter().map(String::as_str).collect();
            dependencies.extend(crate::graph::dependencies(self.project.workspace, &more));
            looked_up.extend(reached);
        }
        let mut share = Share::empty(plan);
        for file in &looked_up {
            let reach = dependencies.get(file).and_then(|d| d.as_deref());
            let Some(key) = keyer.key(gate, self.gate_key, file, reach) else {
                share.misses.insert(file.clone());
                continue;
            };
            match self.store.get(&key) {
                Lookup::Hit(found) => {
                    share.hits.insert(file.clone(), found);
                }
                Lookup::Miss => {
                    share.misses.insert(file.clone());
                }
                Lookup::Unusable(why) => {
                    share.warnings.push(format!(
                        "a result cache entry was not used (checked instead): {why}"
                    ));
                    share.misses.insert(file.clone());
                }
            }
            share.keys.insert(file.clone(), key);
        }
        share
    }
}

impl<'a> Share<'a> {
    fn empty(plan: &GatePlan<'a>) -> Share<'a> {
        Share {
            gate: plan.gate.id.clone(),
            planned: plan.files.clone(),
            native_args: plan.native_args.clone(),
            keys: BTreeMap::new(),
            hits: BTreeMap::new(),
            from_shared: 0,
            misses: BTreeSet::new(),
            cut: Cut::Whole,
            warnings: Vec::new(),
            uncached: None,
            identity: None,
            tool_cache: None,
            asked_warm: false,
            warm_cut: false,
        }
    }

    /// Puts the tool's own cache back from the store where the checkout
    /// has none (see [`tool_caches`]).
    fn restore_tool_cache(
        &mut self,
        root: &std::path::Path,
        gate: &crate::config::Gate,
        commits: &[String],
        stores: (&Store, Option<&Shared>),
    ) {
        let Some(identity) = self.identity.as_deref() else {
            return;
        };
        let Some(cache) = ToolCache::of(root, gate, identity, commits, stores) else {
            return;
        };
        match cache.restore() {
            Some(Ok(restored)) => self.tool_cache = Some(restored),
            Some(Err(why)) => self.warnings.push(why),
            None => {}
        }
    }

    /// Keeps the tool's own cache as HEAD's after the tool checked the
    /// gate's whole project, itself or on top of an archive put back (a
    /// partial run's own cache holds a part of it).
    fn keep_tool_cache(
        &mut self,
        root: &std::path::Path,
        gate: &crate::config::Gate,
        result: &GateResult,
        commits: &[String],
        stores: (&Store, Option<&Shared>),
    ) {
        let restored = self.tool_cache.is_some();
        let whole_project = self.native_args.is_some()
            && (self.cut == Cut::Whole || (self.cut == Cut::ToMisses && restored));
        if !whole_project || !is_storable(result) {
            return;
        }
        let Some(identity) = self.identity.as_deref() else {
            return;
        };
        let Some(cache) = ToolCache::of(root, gate, identity, commits, stores) else {
            return;
        };
        if cache.keep() {
            self.tool_cache
                .get_or_insert_with(ToolCacheUse::default)
                .stored = true;
        }
    }

    fn uncached(plan: &GatePlan<'a>, why: String) -> Share<'a> {
        Share {
            uncached: Some(why),
            ..Share::empty(plan)
        }
    }

    /// What the run does with the plan, once every store was asked.
    fn decide(&mut self, plan: &GatePlan<'_>, verify: bool) {
        if self.uncached.is_some() {
            return;
        }
        let in_plan: BTreeSet<&str> = plan.files.iter().copied().collect();
        // Every file missed: nothing to cut, and a tool's own whole-project
        // run stays one (its own cache then holds the whole project).
        let all_missed = in_plan.iter().all(|f| self.misses.contains(*f));
        let beyond_plan = self.misses.iter().any(|f| !in_plan.contains(f.as_str()));
        self.cut = if verify || beyond_plan || all_missed {
            Cut::Whole
        } else if self.misses.is_empty() {
            Cut::AllHits
        } else {
            Cut::ToMisses
        };
    }

    /// Cuts the plan as the lookups decided (see [`Cut`]).
    fn cut_plan(&self, plan: &mut GatePlan<'a>) {
        match self.cut {
            Cut::AllHits => plan.skip_reason = Some(FROM_CACHE.to_string()),
            Cut::ToMisses => {
                plan.files.retain(|f| self.misses.contains(*f));
                // The tool's own whole-project run, cut: its misses are
                // checked as a partial run checks them.
                if plan.native_args.take().is_some() {
                    super::bases::hand_to_partial_run(plan);
                }
            }
            Cut::Whole => {}
        }
    }

    /// The files whose findings the tool's run answered for: those it was
    /// given. A module a file imports is not among them even where the
    /// tool reports imported modules: whether it did for this one (or
    /// silenced it, as an installed package) cannot be told from no
    /// finding, and its entry must not say "none" on that guess.
    fn answered(&self) -> BTreeSet<String> {
        let given = |file: &&String| self.planned.iter().any(|p| p == file);
        match self.cut {
            Cut::AllHits => BTreeSet::new(),
            Cut::ToMisses => self.misses.clone(),
            Cut::Whole => self
                .keys
                .keys()
                .chain(&self.misses)
                .filter(given)
                .cloned()
                .collect(),
        }
    }

    /// Adds the hits the tool did not answer for to `result`, checks the
    /// hits it did (`--verify`), stores its findings, and says what the
    /// cache did on the result.
    fn fold(
        self,
        result: &mut GateResult,
        plan: &GatePlan<'_>,
        store: &Store,
        verify: bool,
        written: &mut Vec<(String, Vec<u8>)>,
    ) -> (Option<Use>, Vec<(String, String)>) {
        let answered = self.answered();
        let storable = is_storable(result);
        let mut fresh: BTreeMap<&str, Vec<Violation>> = BTreeMap::new();
        for v in &result.violations {
            if let Some(file) = v.file.as_deref().filter(|f| answered.contains(*f)) {
                fresh.entry(file).or_default().push(v.clone());
            }
        }
        let mut warnings = self.warnings;
        let mut stored = 0;
        if storable {
            for file in &answered {
                let Some(key) = self.keys.get(file) else {
                    continue;
                };
                let found = fresh
                    .get(file.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if let Some(cached) = self.hits.get(file) {
                    if !verify || same_findings(cached, found) {
                        continue;
                    }
                    warnings.push(format!(
                        "the result cache held other findings for {} than the tool gives: its entry is replaced",
                        crate::file_name::display(file)
                    ));
                }
                if let Ok(bytes) = store.put(key, &plan.gate.id, file, found) {
                    written.push((stored_path(key), bytes));
                    stored += 1;
                }
            }
        }
        let from_cache: Vec<Violation> = self
            .hits
            .iter()
            .filter(|(file, _)| !answered.contains(*file))
            .flat_map(|(_, found)| found.iter().cloned())
            .collect();
        let folded: Vec<(String, String)> = self
            .hits
            .keys()
            .filter(|file| !answered.contains(*file))
            .filter_map(|file| Some((file.clone(), self.keys.get(file)?.clone())))
            .collect();
        // The tool was given the misses; the plan's other files are
        // checked all the same, by the cache or through the misses' imports.
        if self.cut != Cut::Whole {
            let passed = self
                .planned
                .iter()
                .filter(|f| self.misses.contains(**f))
                .count();
            result.files_checked += self.planned.len() - passed;
        }
        result.warnings.extend(warnings);
        // A file the cache answers for is the cache's alone: what the tool
        // also said of it (an imported module it reported) is the same
        // finding, not a second one.
        let from_the_cache: BTreeSet<&str> = folded.iter().map(|(f, _)| f.as_str()).collect();
        let before = result.violations.len();
        result.violations.retain(|v| {
            v.file
                .as_deref()
                .is_none_or(|f| !from_the_cache.contains(f))
        });
        if !from_cache.is_empty() || before != result.violations.len() || self.cut == Cut::AllHits {
            result.violations.extend(from_cache);
            crate::outcome::settle(plan.gate, result);
        }
        // The counts are of the plan's files (an imported module looked up
        // for its findings is not one).
        let in_plan = |file: &String| self.planned.iter().any(|p| p == file);
        let hits = folded.iter().filter(|(f, _)| in_plan(f)).count();
        let misses = self.misses.iter().filter(|f| in_plan(f)).count();
        let share = CacheShare {
            hits,
            misses,
            stored,
            shared: self.from_shared.min(hits),
            uncached: self.uncached,
            tool_cache: self.tool_cache,
        };
        let used = (share.uncached.is_none()).then(|| Use {
            gate: plan.gate.id.clone(),
            hits: share.hits,
            misses: share.misses,
            stored,
            shared: share.shared,
            ..Use::default()
        });
        result.cache = Some(share);
        (used, folded)
    }
}

/// Asks the shared store for every file no local entry answered, and
/// keeps what it holds here too.
fn ask_shared(shared: &Shared, store: &Store, shares: &mut [Option<Share<'_>>]) {
    let mut wanted: BTreeMap<String, Vec<(usize, String, String)>> = BTreeMap::new();
    for (index, share) in shares.iter().enumerate() {
        let Some(share) = share else { continue };
        for file in &share.misses {
            if let Some(key) = share.keys.get(file) {
                let asked = (index, file.clone(), key.clone());
                wanted.entry(stored_path(key)).or_default().push(asked);
            }
        }
    }
    let paths: Vec<String> = wanted.keys().cloned().collect();
    for (path, bytes) in shared.fetch(&paths) {
        for (index, file, key) in wanted.remove(&path).unwrap_or_default() {
            let Some(share) = shares[index].as_mut() else {
                continue;
            };
            match store.take(&key, &bytes, &format!("the shared store's {path}")) {
                Lookup::Hit(found) => {
                    share.misses.remove(&file);
                    share.hits.insert(file, found);
                    share.from_shared += 1;
                }
                Lookup::Unusable(why) => share.warnings.push(format!(
                    "a result cache entry was not used (checked instead): {why}"
                )),
                Lookup::Miss => {}
            }
        }
    }
}

/// For a run that writes to the team's store: the entries its own store
/// answered that the team's lacks (a CI job that restored its directory
/// store shares what it holds), to be written with the run's own.
fn share_local_hits(
    shared: &Shared,
    store: &Store,
    shares: &[Option<Share<'_>>],
) -> Vec<(String, Vec<u8>)> {
    if !shared.writes() {
        return Vec::new();
    }
    let local: BTreeMap<String, &String> = shares
        .iter()
        .flatten()
        .flat_map(|share| share.hits.keys().filter_map(|file| share.keys.get(file)))
        .map(|key| (stored_path(key), key))
        .collect();
    let paths: Vec<String> = local.keys().cloned().collect();
    shared
        .absent(&paths)
        .into_iter()
        .filter_map(|path| {
            let bytes = store.bytes(local.get(&path)?)?;
            Some((path, bytes))
        })
        .collect()
}

/// Whether a gate the run looked up keeps its tool's own cache (then the
/// run reads HEAD's line of commits).
fn keeps_tool_caches(shares: &[Option<Share<'_>>], plans: &[GatePlan<'_>]) -> bool {
    shares
        .iter()
        .zip(plans)
        .any(|(share, plan)| share.is_some() && plan.gate.tool_cache.is_some())
}

/// Whether the tool's answer may be stored: a cold, whole verdict — not an
/// error, a stop, a warm answer, nor one with a finding in no file (which
/// no file's entry could hold).
fn is_storable(result: &GateResult) -> bool {
    matches!(result.status, GateStatus::Passed | GateStatus::Failed)
        && result.error.is_none()
        && !result.warm
        && result.violations.iter().all(|v| v.file.is_some())
}
