//! `qg history`: this branch's recent runs and where they are heading.

use clap::Args;

use super::{current_dir, print_stdout};
use crate::error::QgError;
use crate::report::summary::plural;
use crate::state::history::RunRecord;
use crate::state::trend::{self, Trend, Verdict};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub(super) struct HistoryArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: HistoryFormat,
    /// The branch (default: the current one).
    #[arg(long)]
    branch: Option<String>,
    /// How many of the latest runs to list.
    #[arg(long, default_value_t = 10)]
    limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum HistoryFormat {
    Human,
    Json,
}

pub(super) fn command(args: HistoryArgs) -> Result<i32, QgError> {
    let workspace = Workspace::discover(&current_dir()?)?;
    let history = trend::branch_history(&workspace, args.branch, args.limit)?;
    let text = match args.format {
        HistoryFormat::Json => serde_json::to_string(&history).expect("history serializes") + "\n",
        HistoryFormat::Human => human(
            history.branch.as_deref(),
            history.trend.as_ref(),
            &history.runs,
        ),
    };
    print_stdout(&text);
    Ok(0)
}

fn human(branch: Option<&str>, trend: Option<&Trend>, runs: &[RunRecord]) -> String {
    let on = branch.map_or(String::new(), |b| format!(" on {b}"));
    let Some(trend) = trend else {
        return format!("no runs recorded{on} yet (`qg run` records one each time)\n");
    };
    let counts: Vec<String> = trend.violations.iter().map(|n| n.to_string()).collect();
    let icon = match trend.verdict {
        Verdict::Improving => "📉",
        Verdict::Degrading => "📈",
        Verdict::Plateau => "➖",
        Verdict::Oscillating => "🔀",
        Verdict::NotEnoughRuns => "…",
    };
    // Only runs over as many files as the latest are compared (outside
    // project scope): the line says so, or its counts would look like the
    // branch's whole story.
    let of_files = trend.files.map_or(String::new(), |n| {
        format!(
            " of {} (runs over another number of files are left out)",
            plural(n, "file")
        )
    });
    let runs_word = if trend.violations.len() == 1 {
        "run"
    } else {
        "runs"
    };
    let mut out = format!(
        "{icon} {} — violations over the last {} {} {runs_word}{of_files}{on}: {}\n",
        trend.verdict.as_str(),
        trend.violations.len(),
        trend.scope,
        counts.join(" → ")
    );
    for gate in &trend.gates {
        if gate.flaky {
            out.push_str(&format!(
                "  {} errored in {} of {} runs but not the others: a flaky tool? (see its logs)\n",
                gate.id, gate.errored, gate.runs
            ));
        } else if gate.failed > 0 {
            out.push_str(&format!(
                "  {} failed {} of {} runs\n",
                gate.id, gate.failed, gate.runs
            ));
        }
    }
    out.push_str("\nrecent runs (newest last):\n");
    for run in runs {
        let gates: Vec<String> = run
            .gates
            .iter()
            .map(|g| format!("{} {} {}", g.id, g.status, g.violations))
            .collect();
        out.push_str(&format!(
            "  {}  {:<8} {:>11}  {:>6} ms  {}\n",
            run.at,
            run.scope,
            plural(run.files, "file"),
            run.duration_ms,
            gates.join(", ")
        ));
    }
    out
}
