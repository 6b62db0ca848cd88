//! A daemon's engine: the gate's tool kept running, whichever protocol it
//! speaks — the one place that knows both ([`CommandDaemon`], [`Server`]).

use std::collections::BTreeSet;
use std::time::Instant;

use super::command::CommandDaemon;
use super::context::Context;
use super::lsp::Server;
use super::wire::Reply;
use crate::config::Protocol;

/// A running engine, and the project's files as its last check saw them.
pub(crate) struct Engine {
    kind: Kind,
    files: BTreeSet<String>,
}

/// What a check came to.
pub(crate) enum Checked {
    /// The tool's answer.
    Answer(Reply),
    /// A file the tool does not follow was added or removed: the tool must
    /// start again before it can answer.
    Restart(String),
}

/// The protocol an engine speaks.
enum Kind {
    /// A language server.
    Lsp(Server),
    /// A daemon driven through its own client.
    Command(CommandDaemon),
}

impl Engine {
    /// Starts the gate's tool and greets it (no checking yet).
    pub(crate) fn start(ctx: &Context<'_>, deadline: Instant) -> Result<Engine, String> {
        std::fs::create_dir_all(ctx.slot.engine_dir())
            .map_err(|e| format!("cannot create {}: {e}", ctx.slot.engine_dir().display()))?;
        let kind = match &ctx.spec.protocol {
            Protocol::Lsp(spec) => Kind::Lsp(Server::start(ctx, spec, deadline)?),
            Protocol::Command(spec) => Kind::Command(CommandDaemon::start(ctx, spec, deadline)?),
        };
        Ok(Engine {
            kind,
            files: BTreeSet::new(),
        })
    }

    /// The first full pass: the whole program checked once, so later
    /// checks only redo what changed.
    pub(crate) fn first_pass(
        &mut self,
        ctx: &Context<'_>,
        deadline: Instant,
    ) -> Result<(), String> {
        let program = ctx.program()?;
        self.files = program.listing.iter().cloned().collect();
        match &mut self.kind {
            Kind::Lsp(server) => server.first_pass(ctx, &program, deadline),
            Kind::Command(daemon) => daemon.first_pass(ctx, &program, deadline),
        }
    }

    /// Checks, reporting `report` (what a language server is asked for).
    /// A file added or removed that the tool does not follow
    /// (`restart_when_added_or_removed`) is no check: the tool must start
    /// again first, which takes a first full pass — the run should not
    /// wait for that, so the caller restarts it in the background.
    pub(crate) fn check(
        &mut self,
        ctx: &Context<'_>,
        report: &[String],
        deadline: Instant,
    ) -> Result<Checked, String> {
        let program = ctx.program()?;
        let files: BTreeSet<String> = program.listing.iter().cloned().collect();
        let unfollowed = ctx.spec.restart_on.as_ref().and_then(|globs| {
            self.files
                .symmetric_difference(&files)
                .find(|f| globs.is_included(f))
                .cloned()
        });
        if let Some(file) = unfollowed {
            return Ok(Checked::Restart(file));
        }
        self.files = files;
        let reply = match &mut self.kind {
            Kind::Lsp(server) => server.check(ctx, &program, report, deadline),
            Kind::Command(daemon) => daemon.check(ctx, &program, deadline),
        }?;
        Ok(Checked::Answer(reply))
    }

    /// Whether the tool still runs.
    pub(crate) fn running(&mut self) -> bool {
        match &mut self.kind {
            Kind::Lsp(server) => server.running(),
            Kind::Command(daemon) => daemon.running(),
        }
    }

    /// The tool's process group.
    pub(crate) fn group(&self) -> u32 {
        match &self.kind {
            Kind::Lsp(server) => server.group(),
            Kind::Command(daemon) => daemon.group(),
        }
    }

    /// Asks the tool to exit, then kills whatever is left of its tree.
    pub(crate) fn stop(&mut self, ctx: &Context<'_>) {
        match &mut self.kind {
            Kind::Lsp(server) => server.stop(),
            Kind::Command(daemon) => daemon.stop(ctx),
        }
    }
}
