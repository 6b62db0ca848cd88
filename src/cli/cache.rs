//! `qg cache`: where the result cache lives, what it holds and has
//! answered, and pruning it.

use std::time::Duration;

use clap::Subcommand;

use super::print_stdout;
use crate::cache::location;
use crate::cache::Store;
use crate::error::QgError;
use crate::report::summary::plural;

#[derive(Debug, Subcommand)]
pub(super) enum CacheAction {
    /// Print the cache directory (`QG_CACHE_DIR`, else the user cache
    /// directory): shared by every clone and worktree on this machine, and
    /// what a CI cache step keeps.
    Dir,
    /// Entries and bytes held, and per gate the files answered from the
    /// cache (hits), checked by the tool (misses) and stored, over every
    /// run recorded.
    Stats {
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: StatsFormat,
    },
    /// Remove entries not used for a while, then the least recently used
    /// until the rest fit a size.
    Prune {
        /// Remove entries unused for longer than this (`30d`, `12h`, `90m`).
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<Duration>,
        /// Then keep at most this much (`500M`, `2G`, `64K`, bytes).
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_size: Option<u64>,
    },
    /// Check a run's sample of its cache hits with the tool (started by
    /// the run itself, in the background).
    #[command(hide = true)]
    CheckSample {
        /// The sample the run left in the cache directory.
        job: std::path::PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum StatsFormat {
    Human,
    Json,
}

pub(super) fn command(action: CacheAction) -> Result<i32, QgError> {
    if let CacheAction::CheckSample { job } = &action {
        crate::run::check_sample(job)?;
        return Ok(0);
    }
    let dir = location::dir().ok_or_else(|| {
        QgError::Usage(format!(
            "no cache directory is known: set {} (or HOME)",
            location::DIR_VARIABLE
        ))
    })?;
    let store = Store::at(dir);
    match action {
        CacheAction::Dir => print_stdout(&format!("{}\n", store.dir().display())),
        CacheAction::Stats { format } => {
            let stats = store.stats();
            let text = match format {
                StatsFormat::Json => serde_json::to_string(&stats).expect("stats serialize") + "\n",
                StatsFormat::Human => human_stats(&stats),
            };
            print_stdout(&text);
        }
        CacheAction::Prune {
            older_than,
            max_size,
        } => {
            if older_than.is_none() && max_size.is_none() {
                return Err(QgError::Usage(
                    "qg cache prune needs --older-than AGE or --max-size SIZE (or both)".into(),
                ));
            }
            let pruned = store.prune(older_than, max_size);
            print_stdout(&format!(
                "removed {} ({}), kept {} ({})\n",
                entries(pruned.removed),
                bytes(pruned.freed),
                entries(pruned.kept),
                bytes(pruned.bytes)
            ));
        }
        CacheAction::CheckSample { .. } => {}
    }
    Ok(0)
}

fn human_stats(stats: &crate::cache::store::Stats) -> String {
    let tool_caches = match stats.tool_caches {
        0 => String::new(),
        1 => " and 1 archive of a tool's own cache".to_string(),
        n => format!(" and {n} archives of tools' own caches"),
    };
    let mut text = format!(
        "{}: {}{tool_caches}, {}{}\n",
        stats.dir,
        entries(stats.entries),
        bytes(stats.bytes),
        if location::off_by_environment() {
            format!(" (off: {} is set)", location::OFF_VARIABLE)
        } else {
            String::new()
        }
    );
    for (gate, used) in &stats.gates {
        let looked = used.hits + used.misses;
        let rate = match looked {
            0 => String::new(),
            n => format!(" ({:.0}% hits)", 100.0 * used.hits as f64 / n as f64),
        };
        text.push_str(&format!(
            "  {gate}: {} from the cache, {} checked by the tool{rate}, {} stored\n",
            plural(used.hits, "file"),
            used.misses,
            used.stored
        ));
    }
    text
}

fn entries(n: usize) -> String {
    match n {
        1 => "1 entry".to_string(),
        n => format!("{n} entries"),
    }
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / (1u64 << 10) as f64),
        n => format!("{n} B"),
    }
}

fn parse_age(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_unit(text);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an age: write a number and d, h or m (30d)"))?;
    let seconds = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" | "" => 1,
        _ => return Err(format!("`{text}`: the unit is d, h, m or s")),
    };
    Ok(Duration::from_secs(n * seconds))
}

fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = split_unit(text);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size: write a number and K, M or G (500M)"))?;
    let scale = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return Err(format!("`{text}`: the unit is K, M or G")),
    };
    Ok(n * scale)
}

fn split_unit(text: &str) -> (&str, &str) {
    let text = text.trim();
    let cut = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_sizes_read_as_written() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(5_400)));
        assert!(parse_age("soon").is_err());
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("1T").is_err());
    }
}
