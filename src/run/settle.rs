//! A tool whose cache trusts a file's size and whole-second mtime (mypy:
//! `validate_meta` compares `int(st_mtime)` and the size before any hash)
//! starts only after the second of the newest write to a project file.
//!
//! Why: a run that caches a module in the same second as that module's last
//! write records that second; an edit later in that second which keeps the
//! size (`-> Input` to `-> bytes`, and back) then looks unchanged to every
//! later run, which reads the old module from the cache — a wrong red, or a
//! wrong green, until the file changes again. Starting in a later second
//! gives every later edit a newer second. Found by the ecosystem check
//! (cleo: stash, pop and revert within one second; `mypy -v` said "Metadata
//! fresh" for the reverted module). Gates ask for it with
//! `execution.whole_second_mtimes`.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::plan::GatePlan;

/// Waits out the current second when a gate that needs it runs cold and a
/// project file was written in it. `files` lists the project's files
/// (root-relative), asked for only then; `warm` says which gate ids a
/// daemon answers (a daemon's cache is its own).
pub(super) fn after_last_write(
    root: &Path,
    plans: &[GatePlan<'_>],
    files: impl FnOnce() -> Vec<String>,
    warm: impl Fn(&str) -> bool,
) {
    let needed = plans
        .iter()
        .filter(|p| p.skip_reason.is_none() && p.gate.whole_second_mtimes)
        .any(|p| !warm(&p.gate.id));
    if !needed {
        return;
    }
    let newest = files()
        .iter()
        .filter_map(|f| {
            std::fs::metadata(root.join(f))
                .and_then(|m| m.modified())
                .ok()
        })
        .max();
    if let Some(wait) = newest.and_then(|newest| wait_for(newest, SystemTime::now())) {
        std::thread::sleep(wait);
    }
}

/// How long until the second after `newest` begins, when `now` is still in
/// that second (or a little before it: a clock set back).
fn wait_for(newest: SystemTime, now: SystemTime) -> Option<Duration> {
    let second = |t: SystemTime| t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs());
    let (newest_second, now_second) = (second(newest)?, second(now)?);
    if now_second > newest_second {
        return None;
    }
    let next = UNIX_EPOCH + Duration::from_secs(newest_second + 1);
    let wait = next.duration_since(now).ok()?;
    // A file dated far ahead is no write of this run's user: not worth a wait.
    (wait <= Duration::from_secs(2)).then_some(wait + Duration::from_millis(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(millis)
    }

    #[test]
    fn a_write_in_the_current_second_waits_for_the_next() {
        assert_eq!(
            wait_for(at(10_200), at(10_700)),
            Some(Duration::from_millis(305))
        );
    }

    #[test]
    fn a_write_in_an_earlier_second_needs_no_wait() {
        assert_eq!(wait_for(at(9_999), at(10_000)), None);
    }

    #[test]
    fn a_file_dated_ahead_waits_only_for_a_second_or_two() {
        assert_eq!(
            wait_for(at(11_100), at(10_700)),
            Some(Duration::from_millis(1_305))
        );
        assert_eq!(wait_for(at(60_000), at(10_700)), None);
    }
}
