//! qg — a fast, honest quality-gate runner for Python projects.
//!
//! [`run::run`] is the pipeline, data flowing one way: [`git`] → [`config`]
//! → the environment ([`tools`], [`workspace`]) → [`state`] → [`scope`]
//! (with [`selection`] and [`graph`]) → [`plan`] → [`exec`] → [`outcome`]
//! (which calls [`parse`]) → [`report`]. Each module imports only earlier
//! ones and the leaf helpers; [`cli`] is the only place that prints. The
//! book's Development page (docs/src/development.md) has the full table.

pub mod atomic_file;
pub mod baseline;
pub mod cache;
pub mod cli;
pub mod config;
pub mod doctor;
pub mod error;
pub mod exec;
pub mod explain;
pub mod file_name;
pub mod fix;
pub mod git;
pub mod globs;
pub mod graph;
pub mod init;
pub mod lsp;
pub mod mcp;
pub mod members;
pub mod merge;
pub mod outcome;
pub mod parse;
pub mod paths;
pub mod plan;
pub mod process;
pub mod quote;
#[cfg(test)]
mod reference;
pub mod report;
pub mod run;
pub mod scope;
pub mod selection;
pub mod shard;
pub mod state;
pub mod suggest;
pub mod tool_config;
pub mod tools;
pub mod trust;
pub mod user_cache;
pub mod violation;
pub mod warm;
pub mod watch;
pub mod workspace;
