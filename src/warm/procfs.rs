//! What the kernel says about processes: whether one lives, who is in a
//! process group, how much memory they hold (Linux `/proc`; elsewhere the
//! memory figures are 0), whether a process id is still a given qg's.

/// Whether process `pid` exists (a zombie counts as gone).
#[cfg(unix)]
pub(crate) fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && state(pid) != Some('Z')
}

/// Whether process `pid` exists and has not exited.
#[cfg(windows)]
pub(crate) fn alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: plain Win32 calls on a handle opened and closed here.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return false;
        }
        let mut code = 0u32;
        let read = GetExitCodeProcess(process, &mut code) != 0;
        CloseHandle(process);
        read && code == STILL_ACTIVE as u32
    }
}

#[cfg(unix)]
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

#[cfg(unix)]
/// The command line of `pid`, its arguments joined by spaces.
pub(crate) fn cmdline(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(String::from_utf8_lossy(&bytes).replace('\0', " "))
}

/// Whether `pid` is still the qg process whose command line holds `words`
/// (`daemon serve --gate mypy`): a process id read from a record may have
/// been given to another process since — never kill that one.
#[cfg(unix)]
pub(crate) fn is_qg(pid: u32, words: &str) -> bool {
    cmdline(pid).is_some_and(|line| line.contains(words))
}

/// Whether `pid` is still a process of this qg executable: a process id
/// read from a record may have been given to another process since. Windows
/// shows another process's image but not its command line, so `words`
/// cannot be checked there.
#[cfg(windows)]
pub(crate) fn is_qg(pid: u32, _words: &str) -> bool {
    let (Some(image), Ok(me)) = (image(pid), std::env::current_exe()) else {
        return false;
    };
    let name = |p: &std::path::Path| p.file_name().map(|n| n.to_ascii_lowercase());
    name(&image) == name(&me)
}

/// The executable process `pid` runs.
#[cfg(windows)]
fn image(pid: u32) -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{
        OpenProcess, QueryFullProcessImageNameW, PROCESS_NAME_WIN32,
        PROCESS_QUERY_LIMITED_INFORMATION,
    };
    let mut buffer = vec![0u16; 32_768];
    let mut len = buffer.len() as u32;
    // SAFETY: plain Win32 calls on a handle opened and closed here; the
    // buffer's length is passed with it.
    let read = unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return None;
        }
        let read =
            QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, buffer.as_mut_ptr(), &mut len);
        CloseHandle(process);
        read != 0
    };
    read.then(|| std::ffi::OsString::from_wide(&buffer[..len as usize]).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_in_its_own_group() {
        let me = std::process::id();
        assert!(alive(me));
        #[cfg(target_os = "linux")]
        assert!(rss_kib(me) > 0);
        #[cfg(unix)]
        {
            // SAFETY: getpgrp has no preconditions.
            let group = unsafe { libc::getpgrp() } as u32;
            assert!(group_members(group).contains(&me));
        }
    }
}
