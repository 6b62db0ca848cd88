//! A daemon's log: one channel, owned by whoever runs the daemon — `qg
//! daemon serve` hands it the stream it was started with, which `qg daemon
//! start` points at the slot's `daemon.log` — each line stamped with the
//! time and who wrote it (the daemon, its language server, its guard).

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A handle on the log; clones write to the same stream.
#[derive(Clone)]
pub(crate) struct Log {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
    who: String,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log").field("who", &self.who).finish()
    }
}

impl Log {
    /// A log writing to `sink`, its lines from `who`.
    pub(crate) fn new(sink: Box<dyn Write + Send>, who: &str) -> Log {
        Log {
            sink: Arc::new(Mutex::new(sink)),
            who: who.to_string(),
        }
    }

    /// The same stream, its lines from `who`.
    pub(crate) fn named(&self, who: &str) -> Log {
        Log {
            sink: Arc::clone(&self.sink),
            who: who.to_string(),
        }
    }

    /// Writes one stamped line (a log that cannot be written loses it).
    pub(crate) fn line(&self, message: &str) {
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        let stamp = super::record::now_rfc3339();
        let _ = writeln!(sink, "{stamp} {}: {message}", self.who);
        let _ = sink.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_writer_shares_the_stream_and_names_itself() {
        let sink = Shared::default();
        let log = Log::new(Box::new(sink.clone()), "qg daemon mypy");
        log.line("serving");
        log.named("language server").line("ready");
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with(" qg daemon mypy: serving"), "{text}");
        assert!(lines[1].ends_with(" language server: ready"), "{text}");
    }
}
