//! Workspace trust in the editor: an editor starts `qg lsp` when a file is
//! opened, so nothing of an untrusted repository runs — no gate, no fixer,
//! no daemon — until the user says so. The user is asked once per reason
//! (a `window/showMessageRequest` with a Trust action that trusts the
//! repository as `qg trust` does); the editor shows no finding meanwhile.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_types::MessageType;
use serde_json::json;

use super::queue::Job;
use super::session::Session;
use crate::tools::Toolbox;
use crate::trust::{self, Given, Standing};
use crate::workspace::Workspace;

/// The action that trusts the repository.
const TRUST: &str = "Trust";

/// How long an unanswered question waits for the user.
const PATIENCE: Duration = Duration::from_secs(24 * 60 * 60);

/// Whether the session may run the repository's commands now; when it may
/// not, the user is asked (once per reason) and the editor cleared.
pub(crate) fn allowed(session: &Arc<Session>) -> bool {
    if session.state().root.is_none() {
        return false;
    }
    let Some(why) = refusal(session) else {
        session.state().trust_asked = None;
        return true;
    };
    let first = {
        let mut state = session.state();
        let first = state.trust_asked.as_deref() != Some(why.as_str());
        state.trust_asked = Some(why.clone());
        first
    };
    if first {
        session.clear_shown();
        ask(session, &why);
    }
    false
}

/// Why the session may not run the repository's commands, when it may
/// not (a quick fix asks this before it runs a fixer).
pub(crate) fn refusal(session: &Session) -> Option<String> {
    let root = session.state().root.clone()?;
    match standing(session, &root) {
        Ok(Standing::Untrusted { why }) => Some(why),
        // A config that does not load runs nothing either; the run says why.
        _ => None,
    }
}

fn standing(session: &Session, root: &std::path::Path) -> Result<Standing, crate::error::QgError> {
    let workspace = Workspace::discover(root)?;
    let config = crate::members::load_config(&workspace, session.options.config.as_deref())?;
    let tools = Toolbox::from_env(&workspace.root);
    Ok(trust::standing(&workspace, &config, &tools))
}

/// Asks the user, without blocking the session: the answer is waited for
/// on a thread of its own, and a Trust trusts and checks again.
fn ask(session: &Arc<Session>, why: &str) {
    let params = json!({
        "type": MessageType::WARNING,
        "message": format!("qg runs nothing here until you trust it: {why}"),
        "actions": [{"title": TRUST}, {"title": "Not now"}],
    });
    let Some(pending) = session.request("window/showMessageRequest", params) else {
        return;
    };
    let session = Arc::clone(session);
    std::thread::spawn(move || {
        let answer = pending.wait(Instant::now() + PATIENCE);
        let chose_trust = answer
            .ok()
            .is_some_and(|value| value["title"].as_str() == Some(TRUST));
        if chose_trust {
            give(&session);
        }
    });
}

/// Trusts the repository as it is now, then runs what the session waited
/// for: what changed, and the open files.
fn give(session: &Arc<Session>) {
    let Some(root) = session.state().root.clone() else {
        return;
    };
    let given = Workspace::discover(&root)
        .map_err(|e| e.to_string())
        .and_then(|ws| {
            let config = crate::members::load_config(&ws, session.options.config.as_deref())
                .map_err(|e| e.to_string())?;
            let tools = Toolbox::from_env(&ws.root);
            trust::give(&ws, &config, &tools)
        });
    match given {
        Ok(Given::Trusted(fingerprint)) => session.show(
            MessageType::INFO,
            &format!("qg: trusted {}: {}", root.display(), fingerprint.describe()),
        ),
        Ok(Given::NotNeeded) => {}
        Err(e) => {
            session.show(MessageType::ERROR, &format!("qg: not trusted: {e}"));
            return;
        }
    }
    session.state().trust_asked = None;
    let open = session.state().documents.files();
    for file in open {
        session.queue.push(Job::Open(file));
    }
    session.queue.push(Job::Auto);
}
