//! The background check of the result cache's hits: a run that took some
//! files' findings from the cache leaves a sample of them (`SampleJob`),
//! which a `qg cache check-sample` started at the lowest priority checks
//! with the tool, as a run with no cache would. An entry that differs is
//! removed and recorded (`Store::distrust`): the next run of the project
//! says so, and its tool checks the file again — as a warm answer found
//! wrong by its confirmation is.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CacheUse, RunOptions};
use crate::cache::store::{same_findings, Distrusted, SAMPLES};
use crate::cache::{Lookup, Store};
use crate::error::QgError;
use crate::scope::{ScopeMode, ScopeRequest};
use crate::warm::snapshot::Snapshot;
use crate::workspace::Workspace;

/// The variable that sets the share of runs whose hits are sampled (a
/// number from 0 to 1; default 0.1).
pub(crate) const RATE_VARIABLE: &str = "QG_CACHE_SAMPLE";

/// At most this many hits of a gate are sampled from one run.
const PER_GATE: usize = 3;

/// Some hits of one gate in one run, for a background check.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SampleJob {
    /// The store the hits came from.
    store: PathBuf,
    /// The project, and the config the run was given.
    root: PathBuf,
    config: Option<PathBuf>,
    /// The gate.
    gate: String,
    /// Each file, its entry's key, and its blob as the run saw it.
    files: Vec<Sampled>,
    /// The project's files as the run saw them: a key holds what a file
    /// imports and the tool's settings, so a check of a tree where any of
    /// them changed since (an imported module reverted) proves nothing.
    #[serde(default)]
    tree: Option<Snapshot>,
}

/// One sampled hit.
#[derive(Debug, Serialize, Deserialize)]
struct Sampled {
    file: String,
    key: String,
    blob: String,
}

/// Whether this process may start background checks: only qg's own
/// command line says so (a test binary running qg's library must not
/// start itself as `qg`).
static BACKGROUND_CHECKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets this process start background checks of the cache's hits (qg's
/// `main`).
pub fn allow_background_checks() {
    BACKGROUND_CHECKS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether this run's hits are sampled: one run in ten by default.
pub(super) fn sampled_now() -> bool {
    if !BACKGROUND_CHECKS.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    let rate = std::env::var(RATE_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.1)
        .clamp(0.0, 1.0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let draw = f64::from((nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % 10_000);
    draw < rate * 10_000.0
}

impl SampleJob {
    /// A sample of `hits` ((file, key) the cache answered for `gate`), or
    /// none when there is nothing to check.
    pub(super) fn of(
        store: &Store,
        root: &Path,
        config: Option<&Path>,
        (gate, hits): (&str, &[(String, String)]),
        tree: &Snapshot,
    ) -> Option<SampleJob> {
        let step = (hits.len() / PER_GATE).max(1);
        let offset = (std::process::id() as usize) % step;
        let files: Vec<Sampled> = hits
            .iter()
            .skip(offset)
            .step_by(step)
            .take(PER_GATE)
            .filter_map(|(file, key)| {
                let blob = crate::git::blob_id(&root.join(file))?;
                Some(Sampled {
                    file: file.clone(),
                    key: key.clone(),
                    blob,
                })
            })
            .collect();
        (!files.is_empty()).then(|| SampleJob {
            store: store.dir().to_path_buf(),
            root: root.to_path_buf(),
            config: config.map(Path::to_path_buf),
            gate: gate.to_string(),
            files,
            tree: Some(tree.clone()),
        })
    }

    /// Writes the job into the store and starts its check in the
    /// background, at the lowest priority.
    pub(super) fn start(&self) {
        let dir = self.store.join(SAMPLES);
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        let Ok(bytes) = serde_json::to_vec(self) else {
            return;
        };
        let Ok(file) = tempfile::Builder::new()
            .prefix("sample-")
            .suffix(".json")
            .tempfile_in(&dir)
        else {
            return;
        };
        let Ok((_, path)) = file.keep() else { return };
        if std::fs::write(&path, bytes).is_err() {
            return;
        }
        let Ok(qg) = std::env::current_exe() else {
            return;
        };
        let mut command = std::process::Command::new(qg);
        command
            .args(["cache", "check-sample"])
            .arg(&path)
            .current_dir(&self.root)
            // The check runs without the cache; never a check of a check.
            .env(RATE_VARIABLE, "0")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        crate::process::tree::lead_at_lowest_priority(&mut command);
        if let Ok(mut child) = command.spawn() {
            // Reaped by a thread of its own: `qg lsp`, `qg mcp` and
            // `qg watch` live long, and must not gather zombies.
            std::thread::spawn(move || child.wait());
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Removes the job file when its check ends, however it ends: a sample
/// left in the store is one still being checked.
struct Done<'p>(&'p Path);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// `qg cache check-sample JOB`: checks the job's hits with the tool and
/// distrusts each entry that differs; the job file is gone after.
pub fn check_sample(job: &Path) -> Result<(), QgError> {
    let read = std::fs::read(job).map_err(|e| QgError::io("cannot read the sample", e))?;
    let _done = Done(job);
    let job: SampleJob = serde_json::from_slice(&read).map_err(|e| {
        QgError::Usage(format!(
            "{} is no sample of the result cache: {e}",
            job.display()
        ))
    })?;
    let (workspace, config) = super::prepare(&job.root, job.config.as_deref())?;
    if !unchanged(&job, &workspace, &config) {
        return Ok(());
    }
    // A file changed since the run proves nothing about its entry.
    let files: Vec<&Sampled> = job
        .files
        .iter()
        .filter(|f| crate::git::blob_id(&job.root.join(&f.file)).as_deref() == Some(&f.blob))
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    let scope = ScopeRequest {
        mode: Some(ScopeMode::Files),
        paths: files.iter().map(|f| job.root.join(&f.file)).collect(),
        parent: None,
    };
    let gates = vec![job.gate.clone()];
    let options = RunOptions {
        config: job.config.clone(),
        ..RunOptions::checking_only(job.root.clone(), scope, gates, CacheUse::Off)
    };
    let report = super::run(&options, &crate::exec::Silent)?;
    let Some(gate) = report.gates.iter().find(|g| g.id == job.gate) else {
        return Ok(());
    };
    if gate.error.is_some() || !unchanged(&job, &workspace, &config) {
        return Ok(());
    }
    let store = Store::at(job.store.clone());
    for sampled in files {
        let Lookup::Hit(cached) = store.get(&sampled.key) else {
            continue;
        };
        let fresh: Vec<_> = gate
            .violations
            .iter()
            .filter(|v| v.file.as_deref() == Some(sampled.file.as_str()))
            .cloned()
            .collect();
        if !same_findings(&cached, &fresh) {
            store.distrust(&Distrusted {
                root: job.root.display().to_string(),
                gate: job.gate.clone(),
                file: sampled.file.clone(),
                key: sampled.key.clone(),
            });
        }
    }
    Ok(())
}

/// Whether the project's files are as the sampling run saw them (a job of
/// an older qg, with no record of them, never is).
fn unchanged(job: &SampleJob, workspace: &Workspace, config: &crate::config::Config) -> bool {
    let Some(tree) = &job.tree else {
        return false;
    };
    let files = crate::scope::project_files(workspace, config).unwrap_or_default();
    let now = Snapshot::take(&workspace.root, &files, tree);
    tree.changes_to(&now).is_empty()
}
