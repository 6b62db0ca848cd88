//! Replacing a file so that readers see the old content or the new, never a
//! torn mix, and a crash loses neither.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a temp file beside `path` (`.<name>.XXXXXX.tmp`),
/// fsyncs it, renames it over `path`, and fsyncs the directory.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}
