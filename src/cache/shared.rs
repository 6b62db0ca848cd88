//! A shared store: the cache's entries on storage a team already runs —
//! S3 and what speaks its protocol, Google Cloud Storage, Azure Blob
//! Storage, Redis, WebDAV, plain HTTP (read only) and the GitHub Actions
//! cache — through OpenDAL, the crate sccache uses for the same. Named by
//! a URL (`s3://bucket/prefix?region=eu-west-1`, `redis://host:6379/0`,
//! `webdav://host/path?endpoint=…`); credentials come from the
//! environment or the provider's own files (`AWS_ACCESS_KEY_ID`,
//! `~/.aws/credentials`, …), never from the repository.
//!
//! Every run that names the store reads it; only a run told so writes it
//! (`QG_CACHE_SHARED_WRITE=1`: CI writes, developers read). A store that
//! is down, slow or refuses makes the rest of the run do without it, with
//! one warning: never an error, never a hang (each batch of requests has a
//! deadline). What it returns is checked as a local entry is: one that
//! does not match its key is a miss.

use std::sync::Mutex;
use std::time::Duration;

/// The variable naming the shared store.
pub(crate) const URL_VARIABLE: &str = "QG_CACHE_SHARED";

/// The variable that lets a run write to it.
pub(crate) const WRITE_VARIABLE: &str = "QG_CACHE_SHARED_WRITE";

/// The variable that sets how long a batch of requests may take, in
/// seconds (default 10).
pub(crate) const TIMEOUT_VARIABLE: &str = "QG_CACHE_SHARED_TIMEOUT";

/// What a run does once the store failed it while looking up.
const CHECKS_WITHOUT: &str = "this run checks without it";

/// What a run does once the store failed it while writing.
const NOT_SHARED: &str = "this run's new results stay on this machine";

/// How many requests are in flight at once.
const IN_FLIGHT: usize = 32;

/// How long the first request may take: a client that retries a refused
/// connection (Redis's does, for seconds) must not hold the run.
const FIRST_ANSWER: Duration = Duration::from_secs(3);

/// A shared store, as one run uses it.
pub(crate) struct Shared {
    /// The URL, for messages (without a password).
    shown: String,
    operator: opendal::Operator,
    runtime: tokio::runtime::Runtime,
    /// Whether this run writes.
    write: bool,
    /// How long one batch of requests may take.
    deadline: Duration,
    /// Whether the store answered its first request.
    answered: std::sync::atomic::AtomicBool,
    /// Why the store is not used for the rest of the run.
    trouble: Mutex<Option<String>>,
}

impl Shared {
    /// The shared store the environment names, else the config's
    /// (`cache.shared`); `Ok(None)` when neither does, `Err` (a warning)
    /// when its URL cannot be used.
    pub(crate) fn named(configured: Option<&str>) -> Result<Option<Shared>, String> {
        let named = std::env::var(URL_VARIABLE)
            .ok()
            .or(configured.map(str::to_string));
        let Some(url) = named.filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let write = std::env::var(WRITE_VARIABLE)
            .map(|v| !matches!(v.trim(), "" | "0" | "false" | "no"))
            .unwrap_or(false);
        let deadline = std::env::var(TIMEOUT_VARIABLE)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .map_or(Duration::from_secs(10), Duration::from_secs_f64);
        Shared::open(url.trim(), write, deadline).map(Some)
    }

    /// The store at `url`.
    pub(crate) fn open(url: &str, write: bool, deadline: Duration) -> Result<Shared, String> {
        let shown = without_password(url);
        // rustls needs one crypto provider for the process; another part
        // of qg may have installed it already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        opendal_http_transport_reqwest::install_default();
        let operator = opendal::Operator::from_uri(url)
            .map_err(|e| format!("the shared result store {shown} cannot be used: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("the shared result store {shown} cannot be used: {e}"))?;
        Ok(Shared {
            shown,
            operator,
            runtime,
            write,
            deadline,
            answered: Default::default(),
            trouble: Mutex::new(None),
        })
    }

    /// Why the store was left out of the run, once it was.
    pub(crate) fn trouble(&self) -> Option<String> {
        self.trouble
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn give_up(&self, why: String, so: &str) {
        let mut trouble = self.trouble.lock().unwrap_or_else(|e| e.into_inner());
        trouble.get_or_insert(format!(
            "the shared result store {} {why}: {so}",
            self.shown
        ));
    }

    /// Whether the store answers at all (asked once per run, briefly).
    fn answers(&self) -> bool {
        use std::sync::atomic::Ordering;
        if self.answered.load(Ordering::Relaxed) {
            return true;
        }
        if self.trouble().is_some() {
            return false;
        }
        let first = FIRST_ANSWER.min(self.deadline);
        let asked = self.runtime.block_on(async {
            tokio::time::timeout(first, self.operator.stat("results-v1/.probe")).await
        });
        match asked {
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.kind() == opendal::ErrorKind::NotFound => {}
            Ok(Err(e)) => {
                self.give_up(
                    format!("failed: {}", first_line(&e.to_string())),
                    CHECKS_WITHOUT,
                );
                return false;
            }
            Err(_) => {
                self.give_up(format!("did not answer within {first:?}"), CHECKS_WITHOUT);
                return false;
            }
        }
        self.answered.store(true, Ordering::Relaxed);
        true
    }

    /// The entries the store holds of `paths` (store-relative), as bytes.
    pub(crate) fn fetch(&self, paths: &[String]) -> Vec<(String, Vec<u8>)> {
        if paths.is_empty() || !self.answers() {
            return Vec::new();
        }
        let operator = &self.operator;
        let reads = async {
            let mut found = Vec::new();
            for chunk in paths.chunks(IN_FLIGHT) {
                let mut set = tokio::task::JoinSet::new();
                for path in chunk {
                    let (operator, path) = (operator.clone(), path.clone());
                    set.spawn(async move { (operator.read(&path).await, path) });
                }
                while let Some(joined) = set.join_next().await {
                    let Ok((read, path)) = joined else { continue };
                    match read {
                        Ok(buffer) => found.push((path, buffer.to_vec())),
                        Err(e) if e.kind() == opendal::ErrorKind::NotFound => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
            }
            Ok(found)
        };
        self.within("failed", CHECKS_WITHOUT, reads)
            .unwrap_or_default()
    }

    /// Whether this run writes to the store.
    pub(crate) fn writes(&self) -> bool {
        self.write
    }

    /// Of `paths`, those the store does not hold (for a writing run: what
    /// its local store answered that the team's lacks).
    pub(crate) fn absent(&self, paths: &[String]) -> Vec<String> {
        if !self.write {
            return Vec::new();
        }
        self.stat_all(paths, NOT_SHARED)
            .map(|(_, absent)| absent)
            .unwrap_or_default()
    }

    /// Of `paths`, those the store holds.
    pub(crate) fn holding(&self, paths: &[String]) -> Vec<String> {
        self.stat_all(paths, CHECKS_WITHOUT)
            .map(|(held, _)| held)
            .unwrap_or_default()
    }

    /// `paths` split into those the store holds and those it does not;
    /// `None` when it cannot say (`so`: what the run does then).
    fn stat_all(&self, paths: &[String], so: &str) -> Option<(Vec<String>, Vec<String>)> {
        if paths.is_empty() || !self.answers() {
            return None;
        }
        let operator = &self.operator;
        let stats = async {
            let (mut held, mut absent) = (Vec::new(), Vec::new());
            for chunk in paths.chunks(IN_FLIGHT) {
                let mut set = tokio::task::JoinSet::new();
                for path in chunk {
                    let (operator, path) = (operator.clone(), path.clone());
                    set.spawn(async move { (operator.stat(&path).await, path) });
                }
                while let Some(joined) = set.join_next().await {
                    let Ok((stat, path)) = joined else { continue };
                    match stat {
                        Ok(_) => held.push(path),
                        Err(e) if e.kind() == opendal::ErrorKind::NotFound => absent.push(path),
                        Err(e) => return Err(e.to_string()),
                    }
                }
            }
            Ok((held, absent))
        };
        self.within("failed", so, stats)
    }

    /// Writes `entries` (store-relative path, bytes); how many were written.
    pub(crate) fn upload(&self, entries: Vec<(String, Vec<u8>)>) -> usize {
        if !self.write || entries.is_empty() || !self.answers() {
            return 0;
        }
        let operator = &self.operator;
        let writes = async {
            let mut written = 0;
            let mut failed = Vec::new();
            for chunk in entries.chunks(IN_FLIGHT) {
                let mut set = tokio::task::JoinSet::new();
                for (path, bytes) in chunk.iter().cloned() {
                    let operator = operator.clone();
                    set.spawn(
                        async move { (operator.write(&path, bytes.clone()).await, path, bytes) },
                    );
                }
                while let Some(joined) = set.join_next().await {
                    match joined {
                        Ok((Ok(_), _, _)) => written += 1,
                        Ok((Err(_), path, bytes)) => failed.push((path, bytes)),
                        Err(e) => return Err(e.to_string()),
                    }
                }
            }
            // Writes side by side can race where the store makes the
            // directories they share (WebDAV's MKCOL): each once more, alone.
            for (path, bytes) in failed {
                operator
                    .write(&path, bytes)
                    .await
                    .map_err(|e| e.to_string())?;
                written += 1;
            }
            Ok(written)
        };
        self.within("refused a write", NOT_SHARED, writes)
            .unwrap_or(0)
    }

    /// Runs `requests` to their end within the deadline; `None`, the store
    /// given up (`failing` says what it did), when they fail or take longer.
    fn within<T>(
        &self,
        failing: &str,
        so: &str,
        requests: impl std::future::Future<Output = Result<T, String>>,
    ) -> Option<T> {
        let deadline = self.deadline;
        let answered = self
            .runtime
            .block_on(async { tokio::time::timeout(deadline, requests).await });
        match answered {
            Ok(Ok(done)) => Some(done),
            Ok(Err(why)) => {
                self.give_up(format!("{failing}: {}", first_line(&why)), so);
                None
            }
            Err(_) => {
                self.give_up(format!("did not answer within {deadline:?}"), so);
                None
            }
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// `url` with any password in it replaced (`redis://:secret@host` →
/// `redis://:***@host`), as messages show it.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_never_shown() {
        assert_eq!(
            without_password("redis://:s3cret@cache:6379/0"),
            "redis://:***@cache:6379/0"
        );
        assert_eq!(without_password("s3://bucket/qg"), "s3://bucket/qg");
    }

    #[test]
    fn a_url_of_no_known_store_is_a_warning() {
        let why = Shared::open("nosuch://x/y", false, Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(why.contains("nosuch://x/y cannot be used"), "{why}");
    }
}
