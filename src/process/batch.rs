//! Splitting a gate's files over several runs: never past the OS limit on
//! the size of a command line, and over idle cores when that helps.

use std::ffi::OsString;

/// Bytes kept free below the OS limit, for what the kernel adds (auxv, the
/// program path) and for variables the child's loader sets.
#[cfg(unix)]
const HEADROOM: usize = 32 * 1024;

/// Units kept free below Windows' limit for the program's own path, which
/// is part of the command line there.
#[cfg(windows)]
const HEADROOM: usize = 1024;

/// Each argument and variable costs its bytes, a NUL and a pointer.
#[cfg(unix)]
const PER_ENTRY: usize = 1 + std::mem::size_of::<usize>();

/// Each argument costs its bytes (never fewer than its UTF-16 units), the
/// space before it and the quotes around it.
#[cfg(windows)]
const PER_ENTRY: usize = 3;

/// The longest command line `cmd.exe` takes: a `.cmd` or `.bat` program
/// (npm's shims, `pyright.cmd`) runs through it.
#[cfg(windows)]
const CMD_LIMIT: usize = 8191;

/// A part smaller than this is not worth a process of its own.
pub(crate) const MIN_FILES_PER_PART: usize = 32;

/// The OS limit on argv + environment, in bytes.
#[cfg(unix)]
pub(crate) fn os_limit() -> usize {
    // SAFETY: sysconf has no preconditions.
    let value = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    if value > 0 {
        value as usize
    } else {
        // POSIX minimum.
        4096
    }
}

/// Windows limits a whole command line (CreateProcess) to 32,767 UTF-16
/// units, whatever the environment.
#[cfg(windows)]
pub(crate) fn os_limit() -> usize {
    32_767
}

/// Bytes left for arguments once this environment (inherited plus `extra`)
/// is accounted for: on Unix argv and the environment share one limit.
#[cfg(unix)]
pub(crate) fn argument_budget(extra_env: &[(OsString, OsString)]) -> usize {
    let inherited: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 1 + PER_ENTRY)
        .sum();
    let extra: usize = extra_env
        .iter()
        .map(|(k, v)| k.len() + v.len() + 1 + PER_ENTRY)
        .sum();
    os_limit().saturating_sub(inherited + extra + HEADROOM)
}

/// Units left for arguments: on Windows the limit is on the command line
/// alone, the environment has its own.
#[cfg(windows)]
pub(crate) fn argument_budget(_extra_env: &[(OsString, OsString)]) -> usize {
    os_limit() - HEADROOM
}

/// [`argument_budget`] for running `program`: on Windows a `.cmd` or
/// `.bat` program gets `cmd.exe`'s shorter limit.
pub(crate) fn argument_budget_for(
    program: &std::path::Path,
    extra_env: &[(OsString, OsString)],
) -> usize {
    let budget = argument_budget(extra_env);
    #[cfg(windows)]
    if is_batch_file(program) {
        return budget.min(CMD_LIMIT - HEADROOM);
    }
    #[cfg(unix)]
    let _ = program;
    budget
}

/// Cost of one argument.
pub(crate) fn cost(arg: &OsString) -> usize {
    cost_of_length(arg.len())
}

/// Cost of one argument of `program`: on Windows a `.cmd` or `.bat`
/// program's arguments are escaped for `cmd.exe` by the standard library —
/// each `%` becomes `%%cd:~,%` (eight), each `"` two — which its limit
/// counts (1,500 names holding a `%` once made an 8,751-character line).
pub(crate) fn cost_for(program: &std::path::Path, arg: &OsString) -> usize {
    if !is_batch_file(program) {
        return cost(arg);
    }
    let text = arg.to_string_lossy();
    let percents = text.matches('%').count();
    let quotes = text.matches('"').count();
    cost(arg) + 7 * percents + quotes
}

/// Whether `program` runs through `cmd.exe` (Windows' `.cmd` and `.bat`).
fn is_batch_file(program: &std::path::Path) -> bool {
    cfg!(windows)
        && program
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

/// Cost of one argument `length` bytes long.
pub(crate) fn cost_of_length(length: usize) -> usize {
    length + PER_ENTRY
}

/// Splits `files` into the fewest runs whose arguments fit `budget` after
/// `fixed` bytes of command, then into at least `min_parts` runs of similar
/// size. `Err(needed)` when a single file cannot fit at all.
pub(crate) fn split<T: Clone>(
    files: &[T],
    cost_of: impl Fn(&T) -> usize,
    fixed: usize,
    budget: usize,
    min_parts: usize,
) -> Result<Vec<Vec<T>>, usize> {
    let room = budget.saturating_sub(fixed);
    let mut by_size: Vec<Vec<T>> = Vec::new();
    let mut used = 0;
    for file in files {
        let c = cost_of(file);
        if c > room {
            return Err(fixed + c);
        }
        if by_size.is_empty() || used + c > room {
            by_size.push(Vec::new());
            used = 0;
        }
        used += c;
        by_size.last_mut().expect("pushed").push(file.clone());
    }
    let parts = min_parts.max(by_size.len()).min(files.len().max(1));
    if parts == by_size.len() {
        return Ok(by_size);
    }
    // Even parts in order; more parts than the size split needs only makes
    // each part smaller, so they still fit.
    let size = files.len().div_ceil(parts);
    Ok(files.chunks(size.max(1)).map(<[T]>::to_vec).collect())
}

/// How many runs a batchable gate should be split into so that `jobs`
/// cores are busy while `runnable` gates run.
pub(crate) fn idle_parts(jobs: usize, runnable: usize, files: usize) -> usize {
    let share = (jobs / runnable.max(1)).max(1);
    share.min(files / MIN_FILES_PER_PART).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(parts: &[Vec<usize>]) -> Vec<usize> {
        parts.iter().map(Vec::len).collect()
    }

    #[test]
    fn packs_under_the_budget() {
        let files: Vec<usize> = (0..10).collect();
        // Each file costs 10; 35 bytes of room fit three per run.
        let parts = split(&files, |_| 10, 5, 40, 1).unwrap();
        assert_eq!(lens(&parts), [3, 3, 3, 1]);
        assert_eq!(parts.concat(), files);
    }

    #[test]
    fn splits_further_for_idle_cores_but_never_loses_a_file() {
        let files: Vec<usize> = (0..100).collect();
        let parts = split(&files, |_| 1, 0, 1_000_000, 4).unwrap();
        assert_eq!(lens(&parts), [25, 25, 25, 25]);
        assert_eq!(parts.concat(), files);
        let one = split(&files[..1], |_| 1, 0, 1_000_000, 4).unwrap();
        assert_eq!(lens(&one), [1]);
    }

    #[test]
    fn a_file_that_cannot_fit_is_an_error() {
        assert_eq!(split(&[1], |_| 100, 10, 50, 1), Err(110));
    }

    #[test]
    fn idle_parts_only_when_cores_are_free_and_files_are_many() {
        assert_eq!(idle_parts(8, 2, 1000), 4);
        assert_eq!(idle_parts(2, 4, 1000), 1);
        assert_eq!(idle_parts(8, 1, 40), 1);
        assert_eq!(idle_parts(8, 1, 100), 3);
    }

    #[test]
    fn a_batch_files_arguments_cost_what_cmd_escaping_makes_them() {
        let name = OsString::from("coverage_100%_module_0001.py");
        let plain = cost(&name);
        assert_eq!(cost_for(std::path::Path::new("ruff.exe"), &name), plain);
        let through_cmd = cost_for(std::path::Path::new("pyright.CMD"), &name);
        match cfg!(windows) {
            true => assert_eq!(through_cmd, plain + 7),
            false => assert_eq!(through_cmd, plain),
        }
    }

    #[test]
    fn budget_is_positive_here() {
        assert!(argument_budget(&[]) > 10_000);
        let script = std::path::Path::new("pyright.cmd");
        #[cfg(windows)]
        assert_eq!(argument_budget_for(script, &[]), 8191 - 1024);
        #[cfg(unix)]
        assert_eq!(argument_budget_for(script, &[]), argument_budget(&[]));
    }
}
