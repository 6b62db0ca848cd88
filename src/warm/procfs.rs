//! What the kernel says about processes: whether one lives, who is in a
//! process group, how much memory they hold (Linux `/proc`; elsewhere the
//! memory figures are 0).

/// Whether process `pid` exists (a zombie counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && state(pid) != Some('Z')
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`…).
fn state(pid: u32) -> Option<char> {
    stat_field(pid, 0)?.chars().next()
}

/// The process group of `pid`.
fn group_of(pid: u32) -> Option<u32> {
    // Fields after the name: state, ppid, pgrp.
    stat_field(pid, 2)?.parse().ok()
}

/// Field `index` of `/proc/<pid>/stat` counted after the command name
/// (which is in parentheses and may hold spaces).
fn stat_field(pid: u32, index: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(index).map(str::to_string)
}

/// Every process in process group `group`.
pub(crate) fn group_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| group_of(*pid) == Some(group))
        .collect()
}

/// Resident memory of `pid`, in KiB.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The command line of `pid`, its arguments joined by spaces.
pub(crate) fn cmdline(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(String::from_utf8_lossy(&bytes).replace('\0', " "))
}

/// Whether `pid` is still the qg process whose command line holds `words`
/// (`daemon serve --gate mypy`): a process id read from a record may have
/// been given to another process since — never kill that one.
pub(crate) fn is_qg(pid: u32, words: &str) -> bool {
    cmdline(pid).is_some_and(|line| line.contains(words))
}

/// Sends `signal` to every process of group `group`.
pub(crate) fn signal_group(group: u32, signal: i32) {
    // SAFETY: killpg only sends a signal; ESRCH (group gone) is fine.
    unsafe {
        libc::killpg(group as libc::pid_t, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_in_its_own_group() {
        let me = std::process::id();
        assert!(alive(me));
        assert!(rss_kib(me) > 0);
        // SAFETY: getpgrp has no preconditions.
        let group = unsafe { libc::getpgrp() } as u32;
        assert!(group_members(group).contains(&me));
    }
}
