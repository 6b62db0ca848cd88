//! Live per-gate progress on stderr (indicatif), shown only to a person at a
//! terminal: never when stderr is piped or under CI.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::config::Gate;
use crate::exec::Observer;
use crate::outcome::GateResult;

/// Spinners for running gates.
pub struct Progress {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Progress {
    /// A progress display if stderr is a terminal and `CI` is unset.
    pub fn for_terminal() -> Option<Progress> {
        let wanted = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        wanted.then(|| Progress {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Mutex::new(HashMap::new()),
        })
    }
}

impl Observer for Progress {
    fn gate_started(&self, gate: &Gate, files: usize) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(format!("{} ({files} files)", gate.name));
        bar.enable_steady_tick(Duration::from_millis(100));
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(gate.id.clone(), bar);
        }
    }

    fn gate_finished(&self, result: &GateResult) {
        let bar = self.bars.lock().ok().and_then(|mut b| b.remove(&result.id));
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }
}
