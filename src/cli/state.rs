//! `qg state show|reset`.

use clap::Subcommand;

use super::{current_dir, print_stdout};
use crate::error::QgError;
use crate::state::StateStore;
use crate::workspace::Workspace;

#[derive(Debug, Subcommand)]
pub(super) enum StateAction {
    /// Print this branch's state as JSON.
    Show,
    /// Forget this branch's last green commit (the next `auto` run checks from scratch).
    Reset {
        /// Forget every branch's last green commit, not just this one's.
        #[arg(long)]
        all_branches: bool,
    },
}

pub(super) fn command(action: StateAction) -> Result<i32, QgError> {
    let workspace = Workspace::discover(&current_dir()?)?;
    let Some(repo) = &workspace.repo else {
        return Err(QgError::Git(format!(
            "qg keeps state per git branch and {} is not in a git repository",
            workspace.root.display()
        )));
    };
    let branch = repo.head()?.branch;
    let store = StateStore::new(&workspace.root);
    match action {
        StateAction::Show => {
            let entry = store.load_branch(&branch)?;
            for warning in store.take_warnings() {
                warn_user!("{warning}");
            }
            let json = serde_json::json!({"branch": branch, "state": entry});
            let text = serde_json::to_string_pretty(&json).expect("state serializes");
            print_stdout(&format!("{text}\n"));
        }
        StateAction::Reset { all_branches: true } => {
            store.reset_all()?;
            eprintln!("qg: forgot the last green commit of every branch");
        }
        StateAction::Reset {
            all_branches: false,
        } => {
            store.update_branch(&branch, |_| None)?;
            eprintln!("qg: forgot the last green commit of branch {branch}");
        }
    }
    Ok(0)
}
