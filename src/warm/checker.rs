//! The daemon's comparisons of its answers with a cold run of the tool:
//! `qg daemon self-check` — the run pipeline with `--verify` for the
//! daemon's gate, over the whole program or a sampled run's files — and
//! `qg daemon confirm`, a run's answer confirmed on the files it vouches
//! for; each started at the lowest CPU priority in a process group of its
//! own, so it yields to the user's work and its tools go with it when the
//! daemon stops. One runs at a time: a confirmation stops a sample (or an
//! older confirmation, which a newer answer supersedes) and a sample
//! waits for a confirmation. How the comparison came out, the comparing
//! run tells the daemon itself (a
//! [`Comparison`](super::record::Comparison) over the socket).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long a self-check asked to stop may take to stop its tools.
const STOP_GRACE: Duration = Duration::from_secs(2);

use super::slot::Slot;
use crate::process::tree::{self, Tree};

/// What a self-check compares.
pub(crate) enum Compare<'a> {
    /// The whole program (after a first full pass).
    Whole,
    /// A sampled run's files.
    Sample(&'a Sample),
    /// A run's answer, confirmed on the files it vouches for.
    Confirm {
        /// The job's id.
        job: &'a str,
        /// Where the run wrote it.
        path: &'a Path,
    },
}

/// What the running comparison is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Whole,
    Sample(Sample),
    Confirm(String),
}

impl Kind {
    fn of(compare: &Compare<'_>) -> Kind {
        match compare {
            Compare::Whole => Kind::Whole,
            Compare::Sample(sample) => Kind::Sample((*sample).clone()),
            Compare::Confirm { job, .. } => Kind::Confirm(job.to_string()),
        }
    }
}

/// What [`Checker::start`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Started {
    /// It started the comparison.
    Now,
    /// The same confirmation was under way already.
    Joined,
    /// A confirmation is under way: the sample waits for it.
    Queued,
    /// A comparison is under way: this one is not made.
    Busy,
}

/// A sampled run: the files it reported, and the importers of its
/// body-only edits it left out (`interface_aware_importers`). Written as
/// one JSON object in the slot for the self-check to read.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Sample {
    /// The files whose findings the run reported.
    pub(crate) files: Vec<String>,
    /// The importers it did not check.
    #[serde(default)]
    pub(crate) left_out: Vec<String>,
}

/// How to start a self-check.
pub(crate) struct CheckLaunch<'a> {
    /// This executable.
    pub(crate) qg: &'a Path,
    /// The project root.
    pub(crate) root: &'a Path,
    /// The daemon's slot (its log, the sample's file list).
    pub(crate) slot: &'a Slot,
    /// `--config`, when the daemon was given one.
    pub(crate) config: Option<&'a Path>,
    /// What to compare.
    pub(crate) compare: Compare<'a>,
}

/// The self-check under way, if any.
#[derive(Default)]
pub(crate) struct Checker {
    running: Option<(Child, Tree, Instant, Kind)>,
    /// Whether the running self-check has told how its comparison came
    /// out: it is only exiting then.
    told: bool,
    /// A sample that waits for a confirmation to end.
    queued: Option<Sample>,
    /// Since when the comparison under way stands still for a run.
    paused: Option<Instant>,
}

impl Checker {
    /// Starts a comparison unless one is still comparing (see
    /// [`Started`]). One that has told its outcome is waited for: the
    /// daemon turns ready on that word, before the process is gone, and
    /// the first warm answer's sample (`verify_first`) must not be lost to
    /// that instant (on a busy machine, where the exiting self-check runs
    /// at the lowest priority, it was). A confirmation stops a sample or
    /// an older confirmation under way; a sample waits for a confirmation.
    pub(crate) fn start(&mut self, launch: &CheckLaunch<'_>) -> Result<Started, String> {
        if self.told {
            self.finish_told();
        }
        let kind = Kind::of(&launch.compare);
        let running = self.running().then(|| self.kind()).flatten();
        match (&kind, running) {
            (_, None) => {}
            (Kind::Confirm(job), Some(Kind::Confirm(running))) if *job == running => {
                return Ok(Started::Joined)
            }
            // A sample stopped for a confirmation is made after it.
            (Kind::Confirm(_), Some(Kind::Sample(sample))) => {
                self.stop();
                self.queued = Some(sample);
            }
            // A newer answer supersedes the one being confirmed; its job
            // goes with it (a later run asking again writes it again).
            (Kind::Confirm(_) | Kind::Whole, Some(Kind::Confirm(older))) => {
                self.stop();
                let _ = std::fs::remove_file(job_file(launch.slot, &older));
            }
            // The self-check of a tool started again comes first: nothing
            // is answered before it.
            (Kind::Whole, Some(Kind::Sample(_))) => self.stop(),
            (Kind::Sample(sample), Some(Kind::Confirm(_))) => {
                self.queued = Some(sample.clone());
                return Ok(Started::Queued);
            }
            (_, Some(_)) => return Ok(Started::Busy),
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(launch.slot.log_file())
            .map_err(|e| format!("cannot open {}: {e}", launch.slot.log_file().display()))?;
        let mut command = Command::new(launch.qg);
        let verb = match kind {
            Kind::Confirm(_) => "confirm",
            _ => "self-check",
        };
        command
            .args(["daemon", verb, "--gate", &launch.slot.gate])
            .args(["--owner", &std::process::id().to_string()])
            .current_dir(launch.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if let Some(config) = launch.config {
            command.arg("--config").arg(config);
        }
        match &launch.compare {
            Compare::Whole => {}
            Compare::Sample(sample) => {
                command
                    .arg("--files-from")
                    .arg(write_sample(launch.slot, sample)?);
            }
            Compare::Confirm { path, .. } => {
                command.arg("--job").arg(path);
            }
        }
        tree::lead_at_lowest_priority(&mut command);
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start the self-check: {e}"))?;
        let tree = Tree::of(&child);
        self.running = Some((child, tree, Instant::now(), kind));
        self.paused = None;
        Ok(Started::Now)
    }

    /// The kind of the comparison under way.
    fn kind(&self) -> Option<Kind> {
        self.running.as_ref().map(|(_, _, _, kind)| kind.clone())
    }

    /// The sample waiting for a confirmation, once none runs.
    pub(crate) fn take_queued(&mut self) -> Option<Sample> {
        match self.running() {
            true => None,
            false => self.queued.take(),
        }
    }

    /// Stops the comparison's tools where they stand: a run the user waits
    /// for has the cores. Asked again while paused, it stops the tools
    /// started since (see [`Tree::pause`]).
    pub(crate) fn pause(&mut self) {
        if !self.running() {
            return;
        }
        if let Some((_, tree, _, _)) = &self.running {
            tree.pause();
            self.paused.get_or_insert_with(Instant::now);
        }
    }

    /// Lets a paused comparison go on; returns how long it stood still.
    pub(crate) fn resume(&mut self) -> Option<Duration> {
        let since = self.paused.take()?;
        if let Some((_, tree, _, _)) = &self.running {
            tree.resume();
        }
        Some(since.elapsed())
    }

    /// Whether a self-check runs (one that ended is reaped).
    pub(crate) fn running(&mut self) -> bool {
        let ended = match self.running.as_mut() {
            Some((child, _, _, _)) => !matches!(child.try_wait(), Ok(None)),
            None => return false,
        };
        if ended {
            self.running = None;
            self.told = false;
            self.paused = None;
        }
        !ended
    }

    /// The running self-check has told its outcome (over the socket).
    pub(crate) fn told(&mut self) {
        self.told = self.running.is_some();
    }

    /// Lets a self-check that has told its outcome exit, for up to
    /// [`STOP_GRACE`]; stops it if it has not by then. Not stopped at
    /// once: a SIGTERM before its run returns cancels that run, and the
    /// cancelled run would report an inconclusive comparison after the
    /// outcome it told.
    fn finish_told(&mut self) {
        self.resume();
        let deadline = Instant::now() + STOP_GRACE;
        while self.running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop();
    }

    /// Stops the self-check under way, its tools with it: asked first,
    /// since its tools run in process groups of their own that only it
    /// kills (a kill of its group alone left a cold mypy running on);
    /// killed, tree and all, if it has not stopped within [`STOP_GRACE`].
    pub(crate) fn stop(&mut self) {
        // A stopped process cannot hear it is asked to end.
        self.resume();
        self.told = false;
        if let Some((mut child, tree, _, _)) = self.running.take() {
            tree.terminate();
            let deadline = Instant::now() + STOP_GRACE;
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            tree.kill();
            let _ = child.wait();
        }
    }
}

/// Where a run wrote the confirmation `job` for this daemon (see
/// `run::confirm::Job`).
fn job_file(slot: &Slot, job: &str) -> PathBuf {
    slot.dir.join(format!("confirm-{job}.json"))
}

/// The sampled run, one JSON object in the slot (lists of any length,
/// file names of any bytes).
fn write_sample(slot: &Slot, sample: &Sample) -> Result<PathBuf, String> {
    let path = slot.dir.join("sample.json");
    let bytes = serde_json::to_vec(sample).map_err(|e| e.to_string())?;
    crate::atomic_file::write_cache(&path, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// A sample written by [`Checker::start`].
pub(crate) fn read_sample(path: &Path) -> Result<Sample, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a sampled run: {e}", path.display()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A checker holding `sleep 1` as its running self-check; `start`
    /// launches `true` (any arguments) in its place.
    fn holding_a_lingering_check(dir: &Path) -> (Checker, Slot) {
        let slot = Slot::new(dir, "fake");
        std::fs::create_dir_all(&slot.dir).unwrap();
        let child = Command::new("sleep").arg("1").spawn().unwrap();
        let tree = Tree::of(&child);
        let checker = Checker {
            running: Some((child, tree, Instant::now(), Kind::Sample(Sample::default()))),
            told: false,
            queued: None,
            paused: None,
        };
        (checker, slot)
    }

    static EMPTY: Sample = Sample {
        files: Vec::new(),
        left_out: Vec::new(),
    };

    fn launch<'a>(root: &'a Path, slot: &'a Slot) -> CheckLaunch<'a> {
        CheckLaunch {
            qg: Path::new("true"),
            root,
            slot,
            config: None,
            compare: Compare::Sample(&EMPTY),
        }
    }

    /// A confirmation stopped for a newer answer's leaves no job behind
    /// (uvicorn's trial: 25 of them piled up beside pyright's daemon).
    #[test]
    fn a_superseded_confirmation_leaves_no_job_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (mut checker, slot) = holding_a_lingering_check(dir.path());
        checker.running.as_mut().unwrap().3 = Kind::Confirm("j1".into());
        let older = job_file(&slot, "j1");
        std::fs::write(&older, "{}").unwrap();
        let newer = job_file(&slot, "j2");
        let launch = CheckLaunch {
            compare: Compare::Confirm {
                job: "j2",
                path: &newer,
            },
            ..launch(dir.path(), &slot)
        };
        assert_eq!(checker.start(&launch), Ok(Started::Now));
        assert!(!older.exists(), "the superseded job is removed");
        checker.stop();
    }

    #[test]
    fn a_self_check_still_comparing_keeps_the_next_one_from_starting() {
        let dir = tempfile::tempdir().unwrap();
        let (mut checker, slot) = holding_a_lingering_check(dir.path());
        assert_eq!(checker.start(&launch(dir.path(), &slot)), Ok(Started::Busy));
        checker.stop();
    }

    /// The daemon turns ready when the self-check tells its outcome, before
    /// that process has exited: the first warm answer's sample must start,
    /// not be skipped as "one comparison at a time".
    #[test]
    fn a_self_check_that_told_its_outcome_makes_way_for_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        let (mut checker, slot) = holding_a_lingering_check(dir.path());
        checker.told();
        assert_eq!(checker.start(&launch(dir.path(), &slot)), Ok(Started::Now));
        assert!(!checker.told, "the new self-check has told nothing yet");
        checker.stop();
    }
}
