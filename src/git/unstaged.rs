//! The working tree against the index by stat data, as `git status`
//! compares them: each tracked file's stat is checked against what the
//! index recorded, on every core, and only a file whose stat differs (or
//! changed in the second the index was written: racy git) is read and
//! hashed.
//!
//! On Unix it compares the fields git on Unix records (inode, uid, the
//! `fstatat` of each name); on Windows those Git for Windows records: the
//! times of the last write and of the creation (its `st_ctime`) and the
//! size, with inode, device and ids zero. Stat data another git wrote (an
//! index from Linux on a shared drive) does not match, so each such file
//! is hashed: slower, never wrong.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use gix_index::entry::{stat, Mode, Stat};

use super::index::{kind, Index, Kind};
use super::worktree::bytes_path;

/// Entries handed to a worker at a time.
const CHUNK: usize = 512;

/// How this repository's config says stat data and content compare.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `core.trustctime`, `core.checkStat`.
    stat: stat::Options,
    /// `core.fileMode`: whether the executable bit is part of a file.
    filemode: bool,
    /// How a file's bytes may differ from its blob without a change: a
    /// content mismatch git might not call one is left to libgit2, which
    /// applies git's conversions.
    conversions: Conversions,
}

/// What git may do to a file's bytes on their way into a blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conversions {
    /// Nothing: bytes that differ are a change.
    None,
    /// Line endings only (`core.autocrlf`, `text`/`eol` attributes): they
    /// turn CRLF into LF, so bytes without a CR are taken as they are.
    LineEndings,
    /// Filter drivers, `ident` or a working-tree encoding: anything.
    Any,
}

/// Reads the settings from the repository's config.
pub(crate) fn settings(repo: &git2::Repository, index: &Index) -> Option<Settings> {
    let config = repo.config().ok()?.snapshot().ok()?;
    let flag = |key: &str, default: bool| config.get_bool(key).unwrap_or(default);
    let check_stat = config
        .get_string("core.checkstat")
        .map_or(true, |v| !v.eq_ignore_ascii_case("minimal"));
    Some(Settings {
        stat: stat::Options {
            trust_ctime: flag("core.trustctime", true),
            check_stat,
            // Nanoseconds too: libgit2 (and tools built on it) writes the
            // index with them and smudges only the entries racy at that
            // precision, so a same-size rewrite in the recorded second is
            // told apart by them alone. git records them as well (unless
            // built with NO_NSEC); comparing them costs at most a read of a
            // file that was touched.
            use_nsec: true,
            use_stdev: false,
        },
        filemode: flag("core.filemode", true),
        conversions: conversions(repo, &config, index),
    })
}

/// What the repository's attributes files and `core.autocrlf` allow git to
/// do to a file's bytes (the attributes files are read, not parsed: a word
/// that names a filter anywhere is enough to be careful).
fn conversions(repo: &git2::Repository, config: &git2::Config, index: &Index) -> Conversions {
    let root = repo.workdir().unwrap_or(Path::new("."));
    let mut files: Vec<PathBuf> = index
        .entries()
        .iter()
        .map(|e| index.path(e))
        .filter(|p| p.ends_with(b".gitattributes"))
        .map(|p| root.join(bytes_path(p)))
        .collect();
    files.push(repo.commondir().join("info/attributes"));
    files.extend(config.get_path("core.attributesfile").ok());
    let texts: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let names = |words: &[&[u8]]| {
        texts
            .iter()
            .any(|text| words.iter().any(|w| text.windows(w.len()).any(|s| s == *w)))
    };
    let autocrlf = config
        .get_string("core.autocrlf")
        .is_ok_and(|v| !v.eq_ignore_ascii_case("false"));
    if names(&[b"filter", b"ident", b"working-tree-encoding"]) {
        Conversions::Any
    } else if autocrlf || !texts.is_empty() {
        Conversions::LineEndings
    } else {
        Conversions::None
    }
}

/// What differs between the index and the working tree, by path (bytes).
#[derive(Debug, Default)]
pub(crate) struct Unstaged {
    /// Modified, type-changed, conflicted or intent-to-add.
    pub(crate) changed: Vec<Vec<u8>>,
    /// Gone from the working tree (or no longer a file or link).
    pub(crate) deleted: Vec<Vec<u8>>,
    /// Content differs from the blob by bytes, where git's filters may
    /// make them equal: libgit2 decides these.
    pub(crate) undecided: Vec<Vec<u8>>,
}

/// Compares every tracked entry with its file, on `threads` workers.
pub(crate) fn unstaged(
    root: &Path,
    index: &Index,
    settings: &Settings,
    threads: usize,
) -> Unstaged {
    let entries = index.entries();
    let next = AtomicUsize::new(0);
    let found = Mutex::new(Unstaged::default());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut mine = Unstaged::default();
                let mut dir = DirCursor::new(root);
                loop {
                    let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                    if start >= entries.len() {
                        break;
                    }
                    for entry in &entries[start..(start + CHUNK).min(entries.len())] {
                        compare(&mut dir, index, entry, settings, &mut mine);
                    }
                }
                let mut all = found.lock().unwrap_or_else(|e| e.into_inner());
                all.changed.append(&mut mine.changed);
                all.deleted.append(&mut mine.deleted);
                all.undecided.append(&mut mine.undecided);
            });
        }
    });
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// How one entry's file compares with it.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Same,
    Changed,
    Deleted,
    Undecided,
}

fn compare(
    dir: &mut DirCursor<'_>,
    index: &Index,
    entry: &gix_index::Entry,
    settings: &Settings,
    out: &mut Unstaged,
) {
    let path = index.path(entry);
    let verdict = match kind(entry) {
        Kind::Submodule | Kind::Untouched => Verdict::Same,
        Kind::Conflict | Kind::IntentToAdd => Verdict::Changed,
        Kind::File | Kind::Symlink => file_verdict(dir, index, entry, path, settings),
    };
    let list = match verdict {
        Verdict::Same => return,
        Verdict::Changed => &mut out.changed,
        Verdict::Deleted => &mut out.deleted,
        Verdict::Undecided => &mut out.undecided,
    };
    list.push(path.to_vec());
}

fn file_verdict(
    dir: &mut DirCursor<'_>,
    index: &Index,
    entry: &gix_index::Entry,
    path: &[u8],
    settings: &Settings,
) -> Verdict {
    let metadata = match dir.stat(path) {
        Ok(metadata) => metadata,
        Err(e) if is_gone(&e) => return Verdict::Deleted,
        // Unreadable: never assume it unchanged.
        Err(_) => return Verdict::Changed,
    };
    let symlink = entry.mode == Mode::SYMLINK;
    if metadata.kind == FileKind::Dir {
        // A directory where a file was: the file is gone (what is in the
        // directory is untracked).
        return Verdict::Deleted;
    }
    let is_symlink = metadata.kind == FileKind::Symlink;
    if is_symlink != symlink || metadata.kind == FileKind::Other {
        return Verdict::Changed;
    }
    let executable = metadata.executable;
    if !symlink && settings.filemode && executable != (entry.mode == Mode::FILE_EXECUTABLE) {
        return Verdict::Changed;
    }
    let now = metadata.stat;
    let file = dir.root.join(bytes_path(path));
    let trusted = entry.stat.matches(&now, settings.stat)
        && !entry.stat.is_racy(index.timestamp(), settings.stat)
        && !is_smudged(entry);
    if trusted {
        return Verdict::Same;
    }
    let content = match symlink {
        true => {
            std::fs::read_link(&file).map(|target| target.into_os_string().into_encoded_bytes())
        }
        false => std::fs::read(&file),
    };
    let converts = |bytes: &[u8]| match settings.conversions {
        Conversions::None => false,
        Conversions::LineEndings => bytes.contains(&b'\r'),
        Conversions::Any => true,
    };
    match content {
        Ok(bytes) if is_blob(&bytes, &entry.id) => Verdict::Same,
        Ok(bytes) if !symlink && converts(&bytes) => Verdict::Undecided,
        Ok(_) => Verdict::Changed,
        Err(e) if is_gone(&e) => Verdict::Deleted,
        Err(_) => Verdict::Changed,
    }
}

/// What `lstat` says of a file, as the comparison needs it.
struct FileStat {
    kind: FileKind,
    /// git's executable bit: the owner's (never, on Windows).
    executable: bool,
    /// The stat data as git keeps it in the index.
    stat: Stat,
}

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    File,
    Symlink,
    Dir,
    Other,
}

/// A worker's open directory. The index is sorted by path, so consecutive
/// entries mostly share one, and `fstatat` on it looks up one name instead
/// of the whole path from the root: a fifth less time than `lstat`.
#[cfg(unix)]
struct DirCursor<'r> {
    root: &'r Path,
    /// The directory (root-relative bytes) `fd` is open on.
    dir: Vec<u8>,
    fd: Option<std::os::fd::OwnedFd>,
}

#[cfg(unix)]
impl<'r> DirCursor<'r> {
    fn new(root: &'r Path) -> DirCursor<'r> {
        DirCursor {
            root,
            dir: Vec::new(),
            fd: None,
        }
    }

    /// The `lstat` of the root-relative `path`.
    fn stat(&mut self, path: &[u8]) -> std::io::Result<FileStat> {
        use rustix::fs::{AtFlags, OFlags};
        let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        if self.fd.is_none() || dir != self.dir.as_slice() {
            self.fd = None;
            self.dir = dir.to_vec();
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let at = self.root.join(bytes_path(dir));
            self.fd = Some(rustix::fs::open(&at, flags, rustix::fs::Mode::empty())?);
        }
        let fd = self.fd.as_ref().expect("opened above");
        let metadata = rustix::fs::statat(fd, bytes_path(name), AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(unix_stat(&metadata))
    }
}

/// The stat data as git keeps it in the index (gix's own conversion:
/// seconds and nanoseconds of mtime and ctime, the rest truncated to 32
/// bits as git does).
#[cfg(unix)]
#[allow(
    clippy::unnecessary_cast,
    reason = "the stat fields' types differ between platforms"
)]
fn unix_stat(metadata: &rustix::fs::Stat) -> FileStat {
    use rustix::fs::FileType;
    let time = |secs: i64, nsecs: i64| stat::Time {
        secs: u32::try_from(secs).unwrap_or(0),
        nsecs: u32::try_from(nsecs).unwrap_or(0),
    };
    let file_type = FileType::from_raw_mode(metadata.st_mode as _);
    let kind = if file_type.is_dir() {
        FileKind::Dir
    } else if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    };
    FileStat {
        kind,
        executable: rustix::fs::Mode::from_raw_mode(metadata.st_mode as _)
            .contains(rustix::fs::Mode::XUSR),
        stat: Stat {
            mtime: time(metadata.st_mtime as i64, metadata.st_mtime_nsec as i64),
            ctime: time(metadata.st_ctime as i64, metadata.st_ctime_nsec as i64),
            dev: metadata.st_dev as u32,
            ino: metadata.st_ino as u32,
            uid: metadata.st_uid,
            gid: metadata.st_gid,
            size: metadata.st_size as u32,
        },
    }
}

/// Windows looks a path up whole; there is no directory handle to keep.
#[cfg(windows)]
struct DirCursor<'r> {
    root: &'r Path,
}

#[cfg(windows)]
impl<'r> DirCursor<'r> {
    fn new(root: &'r Path) -> DirCursor<'r> {
        DirCursor { root }
    }

    /// The `lstat` of the root-relative `path`, as Git for Windows' own
    /// `lstat` fills it: `st_mtime` the last write, `st_ctime` the
    /// creation, no inode, device or ids.
    fn stat(&mut self, path: &[u8]) -> std::io::Result<FileStat> {
        let metadata = std::fs::symlink_metadata(self.root.join(bytes_path(path)))?;
        let time = |at: std::io::Result<std::time::SystemTime>| {
            let since = at
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .unwrap_or_default();
            stat::Time {
                secs: u32::try_from(since.as_secs()).unwrap_or(0),
                nsecs: since.subsec_nanos(),
            }
        };
        let file_type = metadata.file_type();
        let kind = if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_dir() {
            FileKind::Dir
        } else if file_type.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        };
        Ok(FileStat {
            kind,
            executable: false,
            stat: Stat {
                mtime: time(metadata.modified()),
                ctime: time(metadata.created()),
                dev: 0,
                ino: 0,
                uid: 0,
                gid: 0,
                size: metadata.len() as u32,
            },
        })
    }
}

/// Whether git "smudged" the entry: writing an index, git and libgit2 set
/// the size of a racily clean entry that changed to 0, so that its stat
/// data no longer matches — except against a file that is now empty, whose
/// mtime fell in the same second (git's `ce_match_stat_basic` checks the
/// content of a size-0 entry that is not the empty blob, and so must we).
fn is_smudged(entry: &gix_index::Entry) -> bool {
    entry.stat.size == 0 && entry.id != gix_hash::ObjectId::empty_blob(entry.id.kind())
}

/// Whether `bytes` are the blob `id`.
fn is_blob(bytes: &[u8], id: &gix_hash::ObjectId) -> bool {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .is_ok_and(|oid| oid.as_bytes() == id.as_slice())
}

/// Not there, or a component of its path is no longer a directory
/// (`ENOTDIR`; Windows says "path not found", which is `NotFound`).
fn is_gone(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    let not_a_directory = error.raw_os_error() == Some(libc::ENOTDIR);
    #[cfg(windows)]
    let not_a_directory = false;
    error.kind() == std::io::ErrorKind::NotFound || not_a_directory
}
