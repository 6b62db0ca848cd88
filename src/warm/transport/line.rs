//! One line out, one line back: the whole of a conversation with a daemon.

use std::io::{BufRead, BufReader, Read, Write};

/// Writes `line` (newline included) on `stream` and reads the reply up
/// to and including its newline (empty if the peer closed first).
pub(super) fn converse<S>(stream: S, line: &[u8]) -> std::io::Result<Vec<u8>>
where
    S: Read + Write,
{
    let mut reader = BufReader::new(stream);
    reader.get_mut().write_all(line)?;
    reader.get_mut().flush()?;
    let mut reply = Vec::new();
    reader.read_until(b'\n', &mut reply)?;
    Ok(reply)
}
