//! The requests qg answers, one handler per method.

mod code_action;
mod code_action_resolve;
mod execute_command;
mod initialize;
mod shutdown;

pub(super) use code_action::CodeAction;
pub(super) use code_action_resolve::CodeActionResolve;
pub(super) use execute_command::ExecuteCommand;
pub(super) use initialize::Initialize;
pub(super) use shutdown::Shutdown;
