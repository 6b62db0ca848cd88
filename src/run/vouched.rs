//! What cold runs already found, so a confirmation is not run twice: per
//! gate, the findings a cold run agreed with on some files, on one tree of
//! the project and under one daemon key. A later warm answer on the same
//! tree and key that says the same on files among those is confirmed by
//! it — the cold run it would start has run, on these very bytes. So a
//! commit's `qg run --confirm` (the pre-commit hook) right after a warm
//! `qg run` whose confirmation landed costs the warm answer alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::violation::Violation;
use crate::warm;

/// One gate's record (see the module docs).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Vouched {
    /// The daemon key's digest the answers were asked with.
    key: String,
    /// The project's tree, as [`crate::warm::snapshot::Snapshot::digest`]
    /// says it.
    tree: String,
    /// The root-relative files the cold runs covered.
    files: BTreeSet<String>,
    /// What they found there (what the warm answers said, as they agreed).
    findings: Vec<Violation>,
}

/// What one confirmation agreed on: a gate's answer on some files.
pub(super) struct Agreement<'a> {
    /// The gate.
    pub(super) gate: &'a str,
    /// The daemon key's digest.
    pub(super) key: &'a str,
    /// The tree's digest.
    pub(super) tree: &'a str,
    /// The files a cold run checked.
    pub(super) files: &'a BTreeSet<String>,
    /// The findings both sides had in them (others are left out).
    pub(super) findings: &'a [Violation],
}

fn path(root: &Path, gate: &str) -> PathBuf {
    warm::slot::Slot::new(root, gate).dir.join("vouched.json")
}

fn read(root: &Path, gate: &str) -> Option<Vouched> {
    serde_json::from_slice(&std::fs::read(path(root, gate)).ok()?).ok()
}

/// Records an agreement: added to the gate's record when it is of the same
/// tree and key, else in its place (what an older tree found proves
/// nothing now). Best effort: without it the next confirmation runs cold.
pub(super) fn record(root: &Path, agreement: &Agreement<'_>) {
    let mut vouched = read(root, agreement.gate)
        .filter(|v| v.key == agreement.key && v.tree == agreement.tree)
        .unwrap_or_else(|| Vouched {
            key: agreement.key.to_string(),
            tree: agreement.tree.to_string(),
            ..Vouched::default()
        });
    let files = agreement.files;
    let named = |v: &Violation| v.file.as_ref().is_some_and(|f| files.contains(f));
    vouched.findings.retain(|v| !named(v));
    let found = agreement.findings.iter().filter(|v| named(v)).cloned();
    vouched.findings.extend(found);
    vouched.files.extend(files.iter().cloned());
    if let Ok(bytes) = serde_json::to_vec(&vouched) {
        let _ = crate::atomic_file::write_cache(&path(root, agreement.gate), &bytes);
    }
}

/// What a cold run on this tree under this key already found in `files`,
/// when it covered every one of them (its findings there, and others).
pub(super) fn found(
    root: &Path,
    gate: &str,
    key: &str,
    tree: &str,
    files: &BTreeSet<String>,
) -> Option<Vec<Violation>> {
    let vouched = read(root, gate)?;
    let covered = vouched.key == key && vouched.tree == tree && files.is_subset(&vouched.files);
    covered.then_some(vouched.findings)
}
