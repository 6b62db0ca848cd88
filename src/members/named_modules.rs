//! The modules a tool's plugin imports because its config names them
//! (django-stubs' `django_settings_module`, and through it the project's
//! installed apps): their files are the gate's settings as much as its
//! config file is. Each is added to the gate's `tool_config` (whole files,
//! `runs`): an edit makes the gate check its whole project, a warm daemon
//! keyed on them starts again, and `qg trust` covers their content.

use std::path::Path;

use crate::config::{Config, Gate, SettingsModule, ToolConfigFile};
use crate::globs::GlobFilter;

/// Adds the files of every module a gate's `settings_modules` name, as the
/// project is now, to that gate's `tool_config`.
pub(super) fn add(config: &mut Config, root: &Path) {
    for gate in config.gates.values_mut() {
        let files: Vec<String> = gate
            .settings_modules
            .iter()
            .flat_map(|module| files_of(root, gate, module))
            .collect();
        for file in files {
            let Ok(matcher) = GlobFilter::new(&[globset::escape(&file)], &[]) else {
                continue;
            };
            gate.tool_config.push(ToolConfigFile {
                file,
                matcher,
                sections: Vec::new(),
                runs: true,
            });
        }
    }
}

/// The root-relative files of the module `module` names for `gate`: the
/// module's file, or every `.py` of its package (a settings package's
/// `__init__` imports its siblings). None when the key is unset or names
/// no module in the project (an installed one is not the project's).
fn files_of(root: &Path, gate: &Gate, module: &SettingsModule) -> Vec<String> {
    let dir = gate.config_dir(root);
    let Ok(Some(found)) =
        crate::tool_config::first_section(&dir, std::slice::from_ref(&module.source))
    else {
        return Vec::new();
    };
    let Some(name) = found
        .section
        .strings(&module.key)
        .map(|s| s.entries(|t| vec![module_name(t)]))
        .and_then(|names| names.into_iter().find(|n| !n.is_empty()))
    else {
        return Vec::new();
    };
    let own = gate.selection.as_ref().and_then(|spec| {
        crate::tool_config::first_section(&dir, &spec.config)
            .ok()
            .flatten()
    });
    let roots = match &own {
        Some(own) => {
            let dir_variable = gate
                .search_paths
                .as_ref()
                .and_then(|s| s.config_dir_variable.as_deref());
            crate::selection::roots(&own.section, module.roots_key.as_deref(), dir_variable)
        }
        None => vec![String::new()],
    };
    let prefix = match &gate.working_dir {
        Some(d) => format!("{}/", crate::paths::to_slash(d)),
        None => String::new(),
    };
    let mut files = Vec::new();
    for candidate in crate::selection::module_files(&name, &roots) {
        if !dir.join(&candidate).is_file() {
            continue;
        }
        match candidate.strip_suffix("/__init__.py") {
            Some(package) => files.extend(python_files_under(&dir, package)),
            None => files.push(candidate),
        }
    }
    files.sort();
    files.dedup();
    files.into_iter().map(|f| format!("{prefix}{f}")).collect()
}

/// The dotted name a value holds: an INI value keeps its quotes
/// (`django_settings_module = "tests.settings"` in mypy.ini), which
/// django-stubs strips, as it does spaces.
fn module_name(value: &str) -> String {
    value.trim().trim_matches(['"', '\'']).trim().to_string()
}

/// Every `.py` file under `package` (relative to `dir`), `/`-separated.
fn python_files_under(dir: &Path, package: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![package.to_string()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&at)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{at}/{name}");
            match entry.file_type() {
                Ok(t) if t.is_dir() && name != "__pycache__" => pending.push(path),
                Ok(t) if t.is_file() && name.ends_with(".py") => found.push(path),
                _ => {}
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::module_name;

    #[test]
    fn a_quoted_ini_value_names_the_module_inside_the_quotes() {
        assert_eq!(module_name("\"tests.settings\""), "tests.settings");
        assert_eq!(module_name(" 'proj.settings' "), "proj.settings");
        assert_eq!(module_name("site.settings"), "site.settings");
    }
}
