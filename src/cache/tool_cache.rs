//! The tools' own caches (mypy's incremental cache), kept whole in the
//! store: one archive per gate and commit, put back where a checkout has
//! none. The tool checks what it reads (mypy compares each module's hash
//! with the one its cache recorded), so an archive left at another commit
//! is a head start, never an answer: the commit only says which archive is
//! nearest.

use std::io::Read;
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// Where the archives of this format live, under the cache directory.
pub(crate) const TOOL_CACHES: &str = "tool-caches-v1";

/// An archive larger than this is not kept: a cache that size is the
/// tool's business, and a shared store's transfer would cost more than the
/// run it saves.
pub(crate) const LARGEST: u64 = 256 << 20;

/// Where the archive of a gate (its key's identity) left at `commit` lives
/// in a store, `/`-separated.
pub(crate) fn archive_path(gate_identity: &str, commit: &str) -> String {
    let key = crate::git::hash_blob(format!("{gate_identity}\n{commit}").as_bytes());
    let fan = key.get(..2).unwrap_or("__");
    format!("{TOOL_CACHES}/{fan}/{key}.tar.gz")
}

/// `dir`'s files, archived (tar, gzip); `None` when it holds nothing, or
/// more than [`LARGEST`].
pub(crate) fn pack(dir: &Path) -> std::io::Result<Option<Vec<u8>>> {
    if size_of(dir) > LARGEST {
        return Ok(None);
    }
    let mut archive = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    archive.follow_symlinks(false);
    archive.append_dir_all(".", dir)?;
    let bytes = archive.into_inner()?.finish()?;
    Ok(Some(bytes))
}

/// Unpacks an archive of [`pack`] as `dir`, which does not exist yet:
/// into a directory beside it first, then moved into place whole, so a
/// tool starting meanwhile finds no cache or all of it. `Err` says why an
/// archive cannot be used (cut short, not an archive); an entry that would
/// leave the directory is skipped (tar's own unpacking).
pub(crate) fn unpack(bytes: &[u8], dir: &Path) -> Result<(), String> {
    let parent = dir.parent().ok_or("it has no parent directory")?;
    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    let staging = tempfile::Builder::new()
        .prefix(".qg-restoring-")
        .tempdir_in(parent)
        .map_err(|e| e.to_string())?;
    let mut whole = Vec::new();
    GzDecoder::new(bytes)
        .read_to_end(&mut whole)
        .map_err(|e| format!("it is no whole archive: {e}"))?;
    tar::Archive::new(whole.as_slice())
        .unpack(staging.path())
        .map_err(|e| format!("it is no whole archive: {e}"))?;
    match std::fs::rename(staging.path(), dir) {
        Ok(()) => {
            // Moved away: nothing left for the guard to remove.
            let _ = staging.keep();
            Ok(())
        }
        // Another run put one there meanwhile: that one stands.
        Err(_) if dir.exists() => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// The bytes of the files under `dir`.
fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size_of(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_unpacks_to_the_files_it_was_packed_from() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("3.11")).unwrap();
        std::fs::write(from.path().join("3.11/cache.db"), b"rows").unwrap();
        std::fs::write(from.path().join("CACHEDIR.TAG"), b"tag").unwrap();
        let bytes = pack(from.path()).unwrap().unwrap();

        let to = tempfile::tempdir().unwrap();
        let dir = to.path().join("project/.mypy_cache");
        unpack(&bytes, &dir).unwrap();
        assert_eq!(std::fs::read(dir.join("3.11/cache.db")).unwrap(), b"rows");
        assert_eq!(std::fs::read(dir.join("CACHEDIR.TAG")).unwrap(), b"tag");
        let left: Vec<_> = std::fs::read_dir(to.path().join("project"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, [".mypy_cache"], "no staging directory is left");
    }

    #[test]
    fn an_archive_cut_short_is_refused_and_leaves_nothing() {
        let from = tempfile::tempdir().unwrap();
        std::fs::write(from.path().join("cache.db"), vec![7u8; 100_000]).unwrap();
        let bytes = pack(from.path()).unwrap().unwrap();

        let to = tempfile::tempdir().unwrap();
        let dir = to.path().join(".mypy_cache");
        let why = unpack(&bytes[..bytes.len() / 2], &dir).unwrap_err();
        assert!(why.contains("no whole archive"), "{why}");
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(to.path()).unwrap().count(), 0);
    }

    #[test]
    fn one_gate_at_two_commits_has_two_archives() {
        assert_ne!(archive_path("gate", "a"), archive_path("gate", "b"));
        assert!(archive_path("gate", "a").starts_with("tool-caches-v1/"));
    }
}
