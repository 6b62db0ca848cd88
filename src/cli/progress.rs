//! What the terminal sees while gates run: a live per-gate spinner (only for
//! a person at a terminal: stderr is a TTY and `CI` is unset) and, with
//! `--verbose`, each command as it is run.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::config::Gate;
use crate::exec::Observer;
use crate::outcome::GateResult;
use crate::quote::shell_quote;

/// Observer for a terminal run.
pub(crate) struct TerminalObserver {
    spinners: Option<Spinners>,
    verbose: bool,
}

struct Spinners {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl TerminalObserver {
    /// `progress`: whether a spinner is wanted at all (`--no-progress`,
    /// `--quiet` turn it off); it is shown only on an interactive terminal.
    pub(crate) fn new(progress: bool, verbose: bool) -> TerminalObserver {
        let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        let spinners = (progress && interactive).then(|| Spinners {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Mutex::new(HashMap::new()),
        });
        TerminalObserver { spinners, verbose }
    }
}

impl Observer<GateResult> for TerminalObserver {
    fn gate_started(&self, gate: &Gate, files: usize, argv: &[String]) {
        if self.verbose {
            let line: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
            let text = format!("qg: {}: {}", gate.id, line.join(" "));
            match &self.spinners {
                Some(s) => s.multi.suspend(|| eprintln!("{text}")),
                None => eprintln!("{text}"),
            }
        }
        let Some(spinners) = &self.spinners else {
            return;
        };
        let Ok(mut bars) = spinners.bars.lock() else {
            return;
        };
        // A gate split into batches keeps one spinner.
        if bars.contains_key(&gate.id) {
            return;
        }
        let bar = spinners.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(format!("{} ({files} files)", gate.name));
        bar.enable_steady_tick(Duration::from_millis(100));
        bars.insert(gate.id.clone(), bar);
    }

    fn gate_finished(&self, result: &GateResult) {
        let Some(spinners) = &self.spinners else {
            return;
        };
        let bar = spinners
            .bars
            .lock()
            .ok()
            .and_then(|mut b| b.remove(&result.id));
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }
}
