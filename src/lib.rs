//! qg — a fast, honest quality-gate runner for Python projects.
//!
//! The pipeline, one module per stage, data flowing one way:
//! [`config`] → [`scope`] → [`plan`] → [`exec`] → [`parse`] → [`outcome`] →
//! [`report`] → [`state`]. [`run::run`] ties them together and returns a value that
//! every renderer (and future consumer) works from.

pub mod atomic_file;
pub mod cli;
pub mod config;
pub mod doctor;
pub mod error;
pub mod exec;
pub mod file_name;
pub mod git;
pub mod globs;
pub mod graph;
pub mod init;
pub mod outcome;
pub mod parse;
pub mod paths;
pub mod plan;
pub mod process;
pub mod quote;
pub mod report;
pub mod run;
pub mod scope;
pub mod selection;
pub mod state;
pub mod suggest;
pub mod tools;
pub mod violation;
pub mod workspace;
