//! The notifications qg handles, one handler per method.

mod did_change;
mod did_change_watched_files;
mod did_close;
mod did_open;
mod did_save;
mod exit;
mod initialized;

pub(super) use did_change::DidChange;
pub(super) use did_change_watched_files::DidChangeWatchedFiles;
pub(super) use did_close::DidClose;
pub(super) use did_open::DidOpen;
pub(super) use did_save::DidSave;
pub(super) use exit::Exit;
pub(super) use initialized::Initialized;
