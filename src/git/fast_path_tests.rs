//! The fast path against libgit2, on random histories of a working tree:
//! edits of the same size within the second the index was written (racy
//! git), touches, deletions, files become directories or links, executable
//! bits, staging, commits, and `.gitignore` rules with negations and
//! directory patterns at two levels. Both must find the same changes
//! against the first commit and against HEAD, and list the same files.

use std::fs;
use std::path::Path;

use git2::{Repository, Signature};
use proptest::prelude::*;

use super::diff::{fast_changes, libgit2_changes, Changes};

/// Paths the operations pick from: tracked, untracked, ignored by the root
/// or a nested `.gitignore`, re-included by a negation, in an ignored
/// directory.
const PATHS: &[&str] = &[
    "a.py",
    "b.py",
    "pkg/c.py",
    "pkg/d.txt",
    "pkg/sub/e.py",
    "x.log",
    "keep.log",
    "build/f.py",
    "pkg/tmp1.py",
    "new/g.py",
    "pkg/sub/h.tmp",
    "pkg/sub/keep.tmp",
];

/// `.gitignore` texts the operations pick from.
const ROOT_IGNORES: &[&str] = &[
    "*.log\n!keep.log\nbuild/\npkg/tmp*\n",
    "new/\n",
    "/a.py\n*.txt\n",
    "",
];
const NESTED_IGNORES: &[&str] = &["*.tmp\n!keep.tmp\n", "sub/\n", ""];

#[derive(Debug, Clone)]
enum Op {
    /// Writes `len` bytes of `byte` (same-size rewrites are common).
    Write(usize, u8, usize),
    /// Moves the file's mtime a few seconds, content unchanged.
    Touch(usize),
    Delete(usize),
    /// Adds the path to the index, or removes it when it is gone.
    Stage(usize),
    Chmod(usize),
    /// The file becomes a directory holding a file.
    BecomeDir(usize),
    /// The file becomes a symbolic link.
    BecomeLink(usize),
    Commit,
    RootIgnore(usize),
    NestedIgnore(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let path = 0..PATHS.len();
    prop_oneof![
        4 => (path.clone(), any::<u8>(), 3usize..6).prop_map(|(p, b, n)| Op::Write(p, b, n)),
        1 => path.clone().prop_map(Op::Touch),
        1 => path.clone().prop_map(Op::Delete),
        3 => path.clone().prop_map(Op::Stage),
        1 => path.clone().prop_map(Op::Chmod),
        1 => path.clone().prop_map(Op::BecomeDir),
        1 => path.clone().prop_map(Op::BecomeLink),
        1 => Just(Op::Commit),
        1 => (0..ROOT_IGNORES.len()).prop_map(Op::RootIgnore),
        1 => (0..NESTED_IGNORES.len()).prop_map(Op::NestedIgnore),
    ]
}

fn write(root: &Path, path: &str, text: &[u8]) {
    let file = root.join(path);
    if file.is_dir() {
        fs::remove_dir_all(&file).unwrap();
    }
    let _ = fs::remove_file(&file);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, text).unwrap();
}

fn remove(root: &Path, path: &str) {
    let file = root.join(path);
    let _ = fs::remove_file(&file);
    let _ = fs::remove_dir_all(&file);
}

fn commit(repo: &Repository) {
    let mut index = repo.index().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let who = Signature::now("qg", "qg@example.invalid").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &who, &who, "step", &tree, &parents)
        .unwrap();
}

fn apply(repo: &Repository, root: &Path, op: &Op) {
    match *op {
        Op::Write(p, byte, len) => write(root, PATHS[p], &vec![byte; len]),
        Op::Touch(p) => {
            let file = root.join(PATHS[p]);
            let later =
                filetime::FileTime::from_unix_time(filetime::FileTime::now().unix_seconds() + 5, 0);
            let _ = filetime::set_symlink_file_times(&file, later, later);
        }
        Op::Delete(p) => remove(root, PATHS[p]),
        Op::Stage(p) => {
            let mut index = repo.index().unwrap();
            let path = Path::new(PATHS[p]);
            let present = fs::symlink_metadata(root.join(path)).is_ok_and(|m| !m.is_dir());
            let _ = match present {
                true => index.add_path(path),
                false => index.remove_path(path),
            };
            index.write().unwrap();
        }
        Op::Chmod(p) => flip_executable_bits(&root.join(PATHS[p])),
        Op::BecomeDir(p) => {
            remove(root, PATHS[p]);
            write(root, &format!("{}/inner.py", PATHS[p]), b"inner");
        }
        Op::BecomeLink(p) => {
            remove(root, PATHS[p]);
            let file = root.join(PATHS[p]);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            // A Windows symlink needs a privilege a test cannot count on:
            // there the file is only gone.
            #[cfg(unix)]
            std::os::unix::fs::symlink("b.py", &file).unwrap();
        }
        Op::Commit => commit(repo),
        Op::RootIgnore(i) => write(root, ".gitignore", ROOT_IGNORES[i].as_bytes()),
        Op::NestedIgnore(i) => write(root, "pkg/.gitignore", NESTED_IGNORES[i].as_bytes()),
    }
}

/// Flips a file's executable bits (a no-op on Windows, whose file systems
/// keep none).
fn flip_executable_bits(file: &Path) {
    #[cfg(unix)]
    if let Some(meta) = fs::symlink_metadata(file).ok().filter(|m| m.is_file()) {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() ^ 0o111;
        fs::set_permissions(file, fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(windows)]
    let _ = file;
}

fn sorted(changes: Changes) -> (Vec<String>, Vec<String>, Vec<String>) {
    let list = |set: std::collections::BTreeSet<String>| set.into_iter().collect();
    (
        list(changes.changed),
        list(changes.untracked),
        list(changes.deleted),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_fast_path_finds_what_libgit2_finds(ops in proptest::collection::vec(op(), 1..14)) {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        let repo = Repository::init(&root).unwrap();
        for path in ["a.py", "b.py", "pkg/c.py", "pkg/sub/e.py"] {
            write(&root, path, b"start");
        }
        write(&root, ".gitignore", ROOT_IGNORES[0].as_bytes());
        let mut index = repo.index().unwrap();
        index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).unwrap();
        index.write().unwrap();
        commit(&repo);
        let first = repo.head().unwrap().peel_to_tree().unwrap().id();
        for op in &ops {
            apply(&repo, &root, op);
        }
        // Fresh handles: libgit2 caches what it read.
        let fresh = Repository::open(&root).unwrap();
        let head = fresh.head().unwrap().peel_to_tree().unwrap().id();
        for base in [Some(first), Some(head), None] {
            let fast = fast_changes(&fresh, &root, base, None).unwrap().expect("a plain index takes the fast path");
            let slow = libgit2_changes(&Repository::open(&root).unwrap(), base).unwrap();
            prop_assert_eq!(sorted(fast), sorted(slow), "against {:?}", base);
        }
        let repo = super::discover(&root).unwrap().unwrap();
        prop_assert_eq!(repo.files().unwrap(), sorted_files(repo.libgit2_files().unwrap()));
        // `named`: the index's paths and the untracked files of those names;
        // the walk it keeps gives the scope what a walk of its own would.
        let names = ["c.py", "e.py", "g.py", "keep.log"];
        let repo = super::discover(&root).unwrap().unwrap();
        let named = repo.named(&names);
        let slow = libgit2_changes(&Repository::open(&root).unwrap(), None).unwrap();
        let index = Repository::open(&root).unwrap().index().unwrap();
        let mut expected: Vec<String> = index
            .iter()
            .map(|e| String::from_utf8(e.path).unwrap())
            .chain(slow.untracked.iter().cloned())
            .filter(|p| names.contains(&p.rsplit('/').next().unwrap()))
            .collect();
        expected.sort();
        expected.dedup();
        prop_assert_eq!(named, expected.clone());
        let kept = repo.changes_since(Some(&head_sha(&root))).unwrap();
        let walked = super::discover(&root).unwrap().unwrap().changes_since(Some(&head_sha(&root))).unwrap();
        prop_assert_eq!(sorted(kept), sorted(walked.clone()));
        // A command that will ask what changed: the survey compares the
        // index with the tree beside its walk, and the scope takes both.
        let asking = super::discover(&root).unwrap().unwrap();
        asking.expect_changes();
        prop_assert_eq!(asking.named(&names), expected);
        prop_assert_eq!(sorted(asking.changes_since(Some(&head_sha(&root))).unwrap()), sorted(walked));
        // A listing takes the survey's walk and index.
        let listing = super::discover(&root).unwrap().unwrap();
        listing.expect_changes();
        listing.named(&names);
        prop_assert_eq!(listing.files().unwrap(), sorted_files(listing.libgit2_files().unwrap()));
    }
}

/// HEAD's commit id.
fn head_sha(root: &Path) -> String {
    let repo = Repository::open(root).unwrap();
    let id = repo.head().unwrap().peel_to_commit().unwrap().id();
    id.to_string()
}

fn sorted_files(mut files: Vec<String>) -> Vec<String> {
    files.sort();
    files
}

/// A repository with `a.py` ("one") committed.
fn committed_a_py() -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let repo = Repository::init(&root).unwrap();
    write(&root, "a.py", b"one");
    apply(&repo, &root, &Op::Stage(0));
    commit(&repo);
    (dir, repo)
}

/// The fast path's and libgit2's changes against HEAD, on fresh handles.
fn both_against_head(root: &Path) -> (Changes, Changes) {
    let fresh = Repository::open(root).unwrap();
    let head = fresh.head().unwrap().peel_to_tree().unwrap().id();
    let fast = fast_changes(&fresh, root, Some(head), None)
        .unwrap()
        .unwrap();
    let slow = libgit2_changes(&Repository::open(root).unwrap(), Some(head)).unwrap();
    (fast, slow)
}

#[test]
fn a_same_size_edit_in_the_second_the_index_was_written_is_found() {
    let (dir, _) = committed_a_py();
    let root = dunce::canonicalize(dir.path()).unwrap();
    // Same size, and (almost surely) the same second as the index: only
    // the racy-git rule tells it apart.
    write(&root, "a.py", b"two");
    assert_eq!(sorted(both_against_head(&root).0).0, ["a.py"]);
    // Nor is a file whose stat alone changed reported.
    write(&root, "a.py", b"one");
    assert!(sorted(both_against_head(&root).0).0.is_empty());
}

/// libgit2 writes an index with nanosecond times and smudges only the
/// entries racy at that precision: a same-size rewrite in place, in the
/// same second as the time recorded but another nanosecond, is not
/// smudged, and only the nanoseconds tell it apart.
#[test]
fn a_same_size_rewrite_in_the_second_libgit2_recorded_is_found() {
    let (dir, repo) = committed_a_py();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let file = root.join("a.py");
    let past = filetime::FileTime::now().unix_seconds() - 10;
    let at = |nanos| filetime::FileTime::from_unix_time(past, nanos);
    filetime::set_file_mtime(&file, at(100)).unwrap();
    apply(&repo, &root, &Op::Stage(0));
    // In place: the same inode, the same size, the same second.
    fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"two"))
        .unwrap();
    filetime::set_file_mtime(&file, at(200)).unwrap();
    let (fast, slow) = both_against_head(&root);
    assert_eq!(sorted(slow).0, ["a.py"]);
    assert_eq!(sorted(fast).0, ["a.py"]);
}

/// Windows file systems keep no executable bit to stage.
#[test]
#[cfg(unix)]
fn a_staged_executable_bit_is_a_change_against_the_tree() {
    let (dir, repo) = committed_a_py();
    let root = dunce::canonicalize(dir.path()).unwrap();
    apply(&repo, &root, &Op::Chmod(0));
    apply(&repo, &root, &Op::Stage(0));
    let (fast, slow) = both_against_head(&root);
    assert_eq!(sorted(fast), (vec!["a.py".to_string()], vec![], vec![]));
    assert_eq!(sorted(slow).0, ["a.py"]);
}

#[test]
fn info_exclude_the_excludes_file_and_nested_repositories_count_as_for_git() {
    let (dir, repo) = committed_a_py();
    let root = dunce::canonicalize(dir.path()).unwrap();
    write(&root, ".git/info/exclude", b"*.secret\n");
    let excludes = root.join("my-excludes");
    write(&root, "my-excludes", b"*.mine\n!keep.secret\n");
    repo.config()
        .unwrap()
        .set_str("core.excludesfile", excludes.to_str().unwrap())
        .unwrap();
    for path in [
        "x.secret",
        "keep.secret",
        "y.mine",
        "z.py",
        "nested/inner.py",
    ] {
        write(&root, path, b"new");
    }
    Repository::init(root.join("nested")).unwrap();
    let (fast, slow) = both_against_head(&root);
    let (fast, slow) = (sorted(fast), sorted(slow));
    // info/exclude wins over the user's file: keep.secret stays ignored.
    // libgit2 also names the nested repository itself (`nested/`), which
    // is no file; scope drops it.
    assert_eq!(fast.1, ["my-excludes", "z.py"]);
    assert_eq!(slow.1, ["my-excludes", "nested/", "z.py"]);
    let repo = super::discover(&root).unwrap().unwrap();
    assert_eq!(repo.files().unwrap(), ["a.py", "my-excludes", "z.py"]);
    assert_eq!(
        repo.files().unwrap(),
        sorted_files(repo.libgit2_files().unwrap())
    );
}

/// What git for Windows and macOS set: ignore patterns match whatever the
/// case (a file system that ignores it).
#[test]
fn a_repository_that_ignores_case_ignores_patterns_whatever_the_case() {
    let (dir, repo) = committed_a_py();
    let root = dunce::canonicalize(dir.path()).unwrap();
    repo.config()
        .unwrap()
        .set_bool("core.ignorecase", true)
        .unwrap();
    write(&root, ".gitignore", b"BUILD/\n*.LOG\n");
    for path in ["build/x.py", "debug.log", "z.py"] {
        write(&root, path, b"new");
    }
    let (fast, slow) = both_against_head(&root);
    let (fast, slow) = (sorted(fast), sorted(slow));
    assert_eq!(fast.1, [".gitignore", "z.py"]);
    assert_eq!(fast, slow);
}

#[test]
fn line_endings_git_converts_are_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let repo = Repository::init(&root).unwrap();
    write(&root, ".gitattributes", b"*.py text eol=crlf\n");
    // As a checkout writes it: CRLF in the file, LF in the blob, and the
    // file's own stat data in the index.
    write(&root, "a.py", b"x = 1\r\n");
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitattributes")).unwrap();
    index.add_path(Path::new("a.py")).unwrap();
    index.write().unwrap();
    commit(&repo);
    let head = repo.head().unwrap().peel_to_tree().unwrap().id();
    let blob = repo
        .find_tree(head)
        .unwrap()
        .get_path(Path::new("a.py"))
        .unwrap()
        .id();
    assert_eq!(repo.find_blob(blob).unwrap().content(), b"x = 1\n");
    let changed = |expected: &[&str]| {
        let fresh = Repository::open(&root).unwrap();
        let fast = sorted(
            fast_changes(&fresh, &root, Some(head), None)
                .unwrap()
                .unwrap(),
        );
        let slow = sorted(libgit2_changes(&fresh, Some(head)).unwrap());
        assert_eq!(fast.0, expected);
        assert_eq!(fast, slow);
    };
    // Touched: the stat differs, the bytes differ from the blob, git's
    // conversion makes them the blob.
    apply(&repo, &root, &Op::Touch(0));
    changed(&[]);
    write(&root, "a.py", b"x = 2\r\n");
    changed(&["a.py"]);
}

/// Sleeps into the next second, plus a little.
fn next_second() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let rest = 1_000_000_000 - u64::from(now.subsec_nanos());
    std::thread::sleep(std::time::Duration::from_nanos(rest + 20_000_000));
}

#[test]
fn a_file_emptied_in_the_second_of_its_index_write_is_found_after_git_smudged_it() {
    // Found by the property above (failing about once in ten runs): in
    // one second .gitignore is committed and then emptied; in the next,
    // staging another file rewrites the index, and libgit2 (like git)
    // "smudges" the racily clean entry by setting its size to 0 — the
    // size of the now empty file. Its stat data can then match, it is no
    // longer racy, and only git's rule for size-0 entries tells the change
    // apart.
    next_second();
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    let repo = Repository::init(&root).unwrap();
    write(&root, "a.py", b"start");
    write(&root, ".gitignore", b"*.log\n");
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    commit(&repo);
    write(&root, ".gitignore", b"");
    next_second();
    write(&root, "b.py", b"two");
    apply(&repo, &root, &Op::Stage(1));
    let (fast, slow) = both_against_head(&root);
    assert_eq!(sorted(slow).0, [".gitignore", "b.py"]);
    assert_eq!(sorted(fast).0, [".gitignore", "b.py"]);
}
