//! Which gates a run runs: the ones `--gate` names, else the active ones.

use crate::error::QgError;
use crate::suggest;

use super::{Config, Gate};

impl Config {
    /// The gates to run: `--gate` ids (any defined gate), else
    /// `active_gates`.
    pub(crate) fn select_gates(&self, requested: &[String]) -> Result<Vec<&Gate>, QgError> {
        let ids: &[String] = if requested.is_empty() {
            &self.active_gates
        } else {
            requested
        };
        let mut selected: Vec<&Gate> = Vec::new();
        for id in ids {
            let named = self.gate(id)?;
            // `--gate mypy` is mypy wherever it runs: its members' runs too
            // (already listed after it in `active_gates`).
            let members = self.gates.values().filter(|g| g.member.is_some());
            let runs = std::iter::once(named).chain(members.filter(|g| g.answers_to(id)));
            for gate in runs {
                if !selected.iter().any(|g| g.id == gate.id) {
                    selected.push(gate);
                }
            }
        }
        Ok(selected)
    }

    /// The gate `id` defines; an unknown id is a usage error that names the
    /// likely typo, or the gates there are.
    pub(crate) fn gate(&self, id: &str) -> Result<&Gate, QgError> {
        self.gates.get(id).ok_or_else(|| {
            let defined: Vec<&str> = self.gates.keys().map(String::as_str).collect();
            QgError::Usage(format!(
                "gate `{id}`: no such gate in {}; {}",
                self.origin,
                suggest::hint(id, &defined)
            ))
        })
    }
}
