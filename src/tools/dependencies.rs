//! Whether the project's environment already holds every dependency the
//! project declares: then an import no tool can resolve is of a module no
//! dependency provides, and "install the project's dependencies" is a fix
//! that cannot work.

use std::collections::HashSet;
use std::path::Path;

use super::environment::Environment;

/// Whether `environment` holds every dependency the project at `root`
/// declares in its `pyproject.toml` (`[project]` dependencies and extras,
/// `[dependency-groups]`, uv's `dev-dependencies`, Poetry's dependency
/// tables). `false` when it declares none, or cannot be read: then nothing
/// says the environment is complete.
pub(crate) fn all_installed(root: &Path, environment: &Environment) -> bool {
    let Some(declared) = declared(root) else {
        return false;
    };
    let installed = installed(environment);
    !declared.is_empty() && declared.iter().all(|name| installed.contains(name))
}

/// The normalized names (PEP 503) of the dependencies the project's
/// `pyproject.toml` declares. Not the project itself: installing it adds
/// only its own modules, which the tools find in the repository.
fn declared(root: &Path) -> Option<HashSet<String>> {
    let text = std::fs::read_to_string(root.join("pyproject.toml")).ok()?;
    let pyproject: toml::Table = toml::from_str(&text).ok()?;
    let at = |path: &[&str]| -> Option<&toml::Value> {
        let (first, rest) = path.split_first()?;
        rest.iter()
            .try_fold(pyproject.get(*first)?, |value, key| value.get(key))
    };
    let mut names: HashSet<String> = HashSet::new();
    let mut requirements = |value: Option<&toml::Value>| {
        let strings = value.and_then(toml::Value::as_array).into_iter().flatten();
        names.extend(
            strings
                .filter_map(toml::Value::as_str)
                .filter_map(requirement_name),
        );
    };
    requirements(at(&["project", "dependencies"]));
    requirements(at(&["tool", "uv", "dev-dependencies"]));
    let tables = [
        at(&["project", "optional-dependencies"]),
        at(&["dependency-groups"]),
    ];
    for table in tables
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        table.values().for_each(|group| requirements(Some(group)));
    }
    let mut poetry = vec![at(&["tool", "poetry", "dependencies"])];
    let groups = at(&["tool", "poetry", "group"]).and_then(toml::Value::as_table);
    poetry.extend(
        groups
            .into_iter()
            .flatten()
            .map(|(_, g)| g.get("dependencies")),
    );
    for table in poetry
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_table)
    {
        names.extend(
            table
                .keys()
                .filter(|k| *k != "python")
                .map(|k| normalize(k)),
        );
    }
    Some(names)
}

/// The distribution a requirement string names (`"Django>=4; python_version
/// > '3.8'"` → `django`).
fn requirement_name(requirement: &str) -> Option<String> {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty()).then(|| normalize(&name))
}

/// The distributions installed in `environment`, by their `.dist-info`
/// directories (`Django-5.1.dist-info` → `django`).
fn installed(environment: &Environment) -> HashSet<String> {
    environment
        .site_packages()
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".dist-info")?;
            let (distribution, _version) = stem.split_once('-')?;
            Some(normalize(distribution))
        })
        .collect()
}

/// A distribution name as PEP 503 compares them: lower case, each run of
/// `-`, `_` and `.` one `-`.
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '-' | '_' | '.' if out.ends_with('-') => {}
            '-' | '_' | '.' => out.push('-'),
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_as_pep_503_says() {
        assert_eq!(normalize("Django_Stubs..Ext"), "django-stubs-ext");
        assert_eq!(
            requirement_name("Requests[socks] >=2; python_version > '3.8'").as_deref(),
            Some("requests")
        );
    }

    #[test]
    fn every_table_that_declares_a_dependency_counts() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("pyproject.toml"),
            "[project]\nname = \"My.App\"\ndependencies = [\"attrs>=1\"]\n\
             [project.optional-dependencies]\nweb = [\"Flask\"]\n\
             [dependency-groups]\ndev = [\"pytest\", {include-group = \"web\"}]\n\
             [tool.uv]\ndev-dependencies = [\"ruff\"]\n\
             [tool.poetry.group.docs.dependencies]\nSphinx = \"^7\"\n",
        )
        .unwrap();
        let names = declared(root.path()).unwrap();
        let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["attrs", "flask", "pytest", "ruff", "sphinx"]);
    }
}
