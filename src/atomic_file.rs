//! Replacing a file so that readers see the old content or the new, never a
//! torn mix, and a crash loses neither.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temp file beside `path` (`.<name>.XXXXXX.tmp`),
/// fsyncs it, renames it over `path`, and fsyncs the directory. The file
/// keeps its permissions; a new one is `rw-r--r--` like any file a user
/// creates (some are committed), not the temp file's private `rw-------`.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, true)
}

/// [`write`] for a cache — what a crash may lose, as its readers take an
/// unreadable file for none: still never torn for a reader, but not synced
/// to disk (two fsyncs were a fifth of a no-op run's own time).
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

fn replace(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The replaced file keeps its mode; a new one gets the usual 0644
    // (tempfile's own default is 0600). Windows has no modes to keep.
    #[cfg(unix)]
    builder.permissions(
        std::fs::metadata(path)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644)),
    );
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if durable {
        temp.as_file().sync_all()?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    if durable {
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_file_is_readable_by_all_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        super::write(&path, b"one").unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        super::write(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }
}
