//! Workspace members: the projects inside one repository that carry their
//! own tool configs (a uv or Hatch workspace, a monorepo of packages).
//!
//! A tool that reads one config per run, from the directory it runs in
//! (mypy, pyright: `execution.runs_per_member` in their YAML), checks a
//! member as the member's own CI runs it — `cd packages/a && mypy` — with
//! the member's settings and file selection. So each member holding such a
//! tool's config gets a gate of its own (`mypy@packages/a`), run in its
//! directory; the enclosing project's gate leaves the member's files out.
//! Every later stage (plan, run, report, baseline, daemons) sees ordinary
//! gates. A tool that finds the nearest config for each file itself (ruff)
//! keeps its one run.

mod discover;
mod expand;
mod named_modules;

use std::path::Path;

use crate::config::{self, Config};
use crate::error::QgError;
use crate::workspace::Workspace;

pub(crate) use discover::{discover, Member};

/// A member and the gates that run in it with its own config
/// (`mypy@packages/a`), as `qg doctor` and `qg init` show it.
pub(crate) type MemberRuns = (Member, Vec<String>);

/// Loads the config (`config::load`: `explicit`, else the project's) and
/// gives every member holding its own config for a gate run per member a
/// gate of its own: what every command runs from.
pub(crate) fn load_config(ws: &Workspace, explicit: Option<&Path>) -> Result<Config, QgError> {
    load_config_and_members(ws, explicit).map(|(config, _, _)| config)
}

/// `load_config`, and the members it split the gates by, each with the
/// gates that run in it with its own config (`mypy@packages/a`), for
/// `qg doctor` to show without finding them again — and the directories
/// holding such a config that are no member: undeclared, and left out by
/// the project's own run (a test fixture, or a member not yet declared),
/// which nothing checks.
pub(crate) fn load_config_and_members(
    ws: &Workspace,
    explicit: Option<&Path>,
) -> Result<(Config, Vec<MemberRuns>, Vec<Member>), QgError> {
    let mut config = config::load(&ws.root, explicit)?;
    let members = discover(ws, &config)?;
    expand::gates_per_member(&mut config, &ws.root, &members)?;
    named_modules::add(&mut config, &ws.root);
    let (shown, unrun): (Vec<MemberRuns>, Vec<MemberRuns>) =
        own_runs(&config, members).into_iter().partition(is_member);
    let unrun = unrun.into_iter().map(|(member, _)| member).collect();
    Ok((config, shown, unrun))
}

/// The workspace's members under a config not yet split by them (`qg
/// init`'s default), each with the gates that would run in it.
pub(crate) fn with_own_runs(ws: &Workspace, config: &Config) -> Result<Vec<MemberRuns>, QgError> {
    let members = discover(ws, config)?;
    let mut expanded = config.clone();
    expand::gates_per_member(&mut expanded, &ws.root, &members)?;
    Ok(own_runs(&expanded, members)
        .into_iter()
        .filter(is_member)
        .collect())
}

/// A directory found only for its config, with no run of its own (the
/// project's run leaves it out), is no member to show.
fn is_member((member, own): &MemberRuns) -> bool {
    member.declared || !own.is_empty()
}

/// Each member with the gates of `expanded` that run in it.
fn own_runs(expanded: &Config, members: Vec<Member>) -> Vec<MemberRuns> {
    members
        .into_iter()
        .map(|member| {
            let own: Vec<String> = expanded
                .gates
                .values()
                .filter(|g| g.member.as_ref().is_some_and(|m| m.dir == member.dir))
                .map(|g| g.id.clone())
                .collect();
            (member, own)
        })
        .collect()
}
