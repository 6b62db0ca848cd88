//! The project's Python environment, found the way its package manager
//! finds it — `$VIRTUAL_ENV`, an in-project `.venv`/`venv`, then the
//! environment uv, Poetry, PDM or Hatch keeps for the project (asked of the
//! manager only when its lock or config file is there and it is installed,
//! and remembered in `.st3/environment.json`) — and the commands that
//! install into it, as the manager spells them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A virtualenv's directory of programs. Defined here, with the
/// environments, so that resolving a tool depends on them and not back.
#[cfg(windows)]
pub(crate) const VENV_BIN: &str = "Scripts";
/// A virtualenv's directory of programs.
#[cfg(not(windows))]
pub(crate) const VENV_BIN: &str = "bin";

/// Where a manager's answer is remembered.
pub(crate) const CACHE_FILE: &str = ".st3/environment.json";

/// How long a manager may take to name its environment.
const ASK_TIMEOUT: Duration = Duration::from_secs(20);

/// A package manager qg knows the commands of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manager {
    /// uv (`uv.lock`, `[tool.uv]`).
    Uv,
    /// Poetry (`poetry.lock`, `[tool.poetry]`).
    Poetry,
    /// PDM (`pdm.lock`, `[tool.pdm]`).
    Pdm,
    /// Hatch (`hatch.toml`, `[tool.hatch]`).
    Hatch,
}

impl Manager {
    /// Its command's name.
    pub(crate) fn program(self) -> &'static str {
        match self {
            Manager::Uv => "uv",
            Manager::Poetry => "poetry",
            Manager::Pdm => "pdm",
            Manager::Hatch => "hatch",
        }
    }

    /// The files that mark a project it manages, and its `[tool.*]` table
    /// in `pyproject.toml`.
    fn markers(self) -> (&'static [&'static str], &'static str) {
        match self {
            Manager::Uv => (&["uv.lock"], "uv"),
            Manager::Poetry => (&["poetry.lock"], "poetry"),
            Manager::Pdm => (&["pdm.lock"], "pdm"),
            Manager::Hatch => (&["hatch.toml"], "hatch"),
        }
    }

    /// The keys of its `[tool.*]` table that its build backend reads
    /// (hatchling's `version`, `build` and `metadata`; pdm-backend's;
    /// uv_build's): a project built with hatchling is often managed by
    /// tox, nox or pip, and Hatch's hints would send its users astray.
    fn build_backend_keys(self) -> &'static [&'static str] {
        match self {
            Manager::Uv => &["build-backend"],
            Manager::Poetry => &[],
            Manager::Pdm => &["build", "version"],
            Manager::Hatch => &["build", "version", "metadata"],
        }
    }

    /// Whether `pyproject` holds settings of the manager itself: its
    /// `[tool.*]` table with a key its build backend does not read.
    fn configured_in(self, pyproject: &toml::Table) -> bool {
        let (_, table) = self.markers();
        let Some(settings) = pyproject
            .get("tool")
            .and_then(|tool| tool.get(table))
            .and_then(toml::Value::as_table)
        else {
            return false;
        };
        let backend = self.build_backend_keys();
        settings.is_empty() || settings.keys().any(|k| !backend.contains(&k.as_str()))
    }

    /// What installs a development tool into the project at `root`
    /// (`{install}`, followed by the package; [`PACKAGES`] where a
    /// sentence names it).
    fn add_dev(self, root: &Path) -> String {
        match self {
            Manager::Uv => "uv add --dev".into(),
            Manager::Poetry => "poetry add --group dev".into(),
            Manager::Pdm => "pdm add -dG dev".into(),
            // Hatch has no command that adds a dependency, and `hatch run
            // pip` is the global pip where Hatch installs with uv; what
            // the environment declares survives `hatch env prune`.
            Manager::Hatch => format!(
                "add {PACKAGES} to `dependencies` in {}, then: {}",
                hatch_default_env_table(root),
                self.sync()
            ),
        }
    }

    /// What installs the project and its dependencies (`{install_project}`).
    fn sync(self) -> &'static str {
        match self {
            Manager::Uv => "uv sync",
            Manager::Poetry => "poetry install",
            Manager::Pdm => "pdm install",
            // `hatch env create` leaves an environment that exists as it
            // is; a command run in it first syncs what it declares.
            Manager::Hatch => "hatch run python --version",
        }
    }
}

/// Where a sentence-shaped `{install}` puts the packages that follow it.
const PACKAGES: &str = "{packages}";

/// Where the project at `root` declares Hatch's default environment.
fn hatch_default_env_table(root: &Path) -> &'static str {
    match root.join("hatch.toml").is_file() {
        true => "[envs.default] of hatch.toml",
        false => "[tool.hatch.envs.default] of pyproject.toml",
    }
}

/// The project's manager, and the file that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    /// The manager.
    pub(crate) manager: Manager,
    /// Why: `uv.lock`, or `[tool.poetry] in pyproject.toml`.
    pub(crate) marker: String,
}

/// The manager of the project at `root`: a lock file (what was used last)
/// or `hatch.toml` first, then the manager's own settings in
/// `pyproject.toml` (not its build backend's).
pub(crate) fn detect(root: &Path) -> Option<Detected> {
    const ALL: [Manager; 4] = [Manager::Uv, Manager::Poetry, Manager::Pdm, Manager::Hatch];
    for manager in ALL {
        let (files, _) = manager.markers();
        if let Some(file) = files.iter().find(|f| root.join(f).is_file()) {
            return Some(Detected {
                manager,
                marker: (*file).to_string(),
            });
        }
    }
    let text = std::fs::read_to_string(root.join("pyproject.toml")).ok()?;
    let pyproject: toml::Table = toml::from_str(&text).ok()?;
    ALL.into_iter().find_map(|manager| {
        let (_, table) = manager.markers();
        manager.configured_in(&pyproject).then(|| Detected {
            manager,
            marker: format!("[tool.{table}] in pyproject.toml"),
        })
    })
}

/// Whether the project at `root` already declares `package` (`mypy`,
/// `'pyright[nodejs]'`) as a dependency in `pyproject.toml` — a Poetry
/// table key (`mypy = "^1.0"`) or a requirement string (`"mypy>=1"`): then
/// installing the project's dependencies installs it, where adding it
/// again may fail (a project supporting Pythons the newest release does
/// not).
pub(crate) fn declares(root: &Path, package: &str) -> bool {
    let name: String = package
        .trim_matches(|c| c == '\'' || c == '"')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    if name.is_empty() {
        return false;
    }
    let Ok(pyproject) = std::fs::read_to_string(root.join("pyproject.toml")) else {
        return false;
    };
    let escaped = regex::escape(&name);
    let pattern = format!(r#"(?mi)(^\s*"?{escaped}"?\s*=)|(["']{escaped}\s*(\[|[<>=!~;@ ]|["']))"#);
    regex::Regex::new(&pattern).is_ok_and(|re| re.is_match(&pyproject))
}

/// What upgrades `package` (a bare name) where the project declares it: in
/// a dependency group of its manager's other than `dev` (polyfactory keeps
/// its tools in `lint`, pinned by uv.lock), that group's own `add` — `uv add
/// --group lint`, `poetry add --group lint`, `pdm add -dG lint` — so the
/// upgrade lands where the lock file pins it. `None`: the manager's usual
/// `{install}` is right (or there is no manager).
pub(crate) fn upgrade_in_group(root: &Path, package: &str) -> Option<String> {
    let manager = detect(root)?.manager;
    let text = std::fs::read_to_string(root.join("pyproject.toml")).ok()?;
    let pyproject: toml::Table = toml::from_str(&text).ok()?;
    let group = declaring_group(&pyproject, manager, package)?;
    (group != "dev").then_some(())?;
    match manager {
        Manager::Uv => Some(format!("uv add --group {group}")),
        Manager::Poetry => Some(format!("poetry add --group {group}")),
        Manager::Pdm => Some(format!("pdm add -dG {group}")),
        Manager::Hatch => None,
    }
}

/// The dependency group of `pyproject` declaring `package`, where
/// `manager` keeps groups: PEP 735's `[dependency-groups]` (uv, PDM),
/// Poetry's `[tool.poetry.group.G.dependencies]`, PDM's
/// `[tool.pdm.dev-dependencies]`.
fn declaring_group(pyproject: &toml::Table, manager: Manager, package: &str) -> Option<String> {
    let wanted = normalized(package);
    let names = |list: &toml::Value| -> bool {
        list.as_array().is_some_and(|items| {
            items
                .iter()
                .filter_map(toml::Value::as_str)
                .any(|req| normalized(requirement_name(req)) == wanted)
        })
    };
    let table = |value: Option<&toml::Value>| value.and_then(toml::Value::as_table).cloned();
    let tool = |name: &str| table(pyproject.get("tool").and_then(|t| t.get(name)));
    let in_lists = |groups: Option<toml::Table>| {
        groups?
            .iter()
            .find(|(_, list)| names(list))
            .map(|(group, _)| group.clone())
    };
    match manager {
        Manager::Uv => in_lists(table(pyproject.get("dependency-groups"))),
        Manager::Pdm => in_lists(table(pyproject.get("dependency-groups")))
            .or_else(|| in_lists(tool("pdm").and_then(|t| table(t.get("dev-dependencies"))))),
        Manager::Poetry => tool("poetry")
            .and_then(|t| table(t.get("group")))?
            .iter()
            .find(|(_, group)| {
                group
                    .get("dependencies")
                    .and_then(toml::Value::as_table)
                    .is_some_and(|deps| deps.keys().any(|k| normalized(k) == wanted))
            })
            .map(|(group, _)| group.clone()),
        Manager::Hatch => None,
    }
}

/// A requirement's project name: `mypy` of `"mypy[faster-cache]>=1.18; python_version>'3.9'"`.
fn requirement_name(requirement: &str) -> &str {
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    &requirement[..end]
}

/// A project name as PEP 503 compares them.
fn normalized(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace(['_', '.'], "-")
}

/// Why the environment is the one used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `$VIRTUAL_ENV`.
    Activated,
    /// `<root>/.venv` or `<root>/venv`.
    InProject(&'static str),
    /// The manager's answer (`poetry env info -p`, `UV_PROJECT_ENVIRONMENT`).
    Manager {
        /// The manager and why.
        detected: Detected,
        /// What qg asked.
        asked: String,
    },
}

/// The project's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Environment {
    /// Its `bin` directory.
    pub(crate) bin: PathBuf,
    /// Why this one.
    pub(crate) origin: Origin,
}

impl Environment {
    /// Its `site-packages` directories: `lib/python3.X/site-packages` (one
    /// per Python the environment was made for), or Windows'
    /// `Lib/site-packages`.
    pub(crate) fn site_packages(&self) -> Vec<PathBuf> {
        let Some(dir) = self.bin.parent() else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("python"))
            .map(|entry| entry.path().join("site-packages"))
            .chain(std::iter::once(dir.join("Lib").join("site-packages")))
            .filter(|path| path.is_dir())
            .collect();
        found.sort();
        found
    }

    /// One line for `qg doctor`: where, and why.
    pub(crate) fn describe(&self, root: &Path) -> String {
        let dir = self.bin.parent().unwrap_or(&self.bin);
        let shown = dir.strip_prefix(root).unwrap_or(dir).display();
        match &self.origin {
            Origin::Activated => format!("{shown} ($VIRTUAL_ENV)"),
            Origin::InProject(name) => format!("{shown} (the project's {name})"),
            Origin::Manager { detected, asked } => format!(
                "{shown} ({} project, from {}: `{asked}`)",
                detected.manager.program(),
                detected.marker
            ),
        }
    }
}

/// Every environment qg looks in, in order: `$VIRTUAL_ENV`, then `.venv`
/// and `venv` in the project, and — only when none of those exists — the
/// environment the project's manager keeps for it.
pub(crate) fn find_all(
    root: &Path,
    virtual_env: Option<OsString>,
    path_var: Option<&OsString>,
) -> Vec<Environment> {
    let mut found: Vec<Environment> = Vec::new();
    let mut add = |bin: PathBuf, origin: Origin| {
        if bin.is_dir() && !found.iter().any(|e| e.bin == bin) {
            found.push(Environment { bin, origin });
        }
    };
    if let Some(env) = virtual_env.filter(|v| !v.is_empty()) {
        add(PathBuf::from(env).join(VENV_BIN), Origin::Activated);
    }
    add(
        root.join(".venv").join(VENV_BIN),
        Origin::InProject(".venv"),
    );
    add(root.join("venv").join(VENV_BIN), Origin::InProject("venv"));
    if found.is_empty() {
        if let Some(env) = detect(root).and_then(|d| manager_environment(root, root, d, path_var)) {
            found.push(env);
        }
    }
    found
}

/// The first environment of [`find_all`].
pub(crate) fn find(
    root: &Path,
    virtual_env: Option<OsString>,
    path_var: Option<&OsString>,
) -> Option<Environment> {
    find_all(root, virtual_env, path_var).into_iter().next()
}

/// The environment a package manager keeps for a workspace member of its
/// own (`cd packages/b && poetry env info --path`): what the member's own
/// `poetry run mypy` runs in. Remembered in the workspace's `.st3` beside the
/// root's answer. None for uv, whose members share the workspace's
/// environment.
pub(crate) fn member_manager_environment(
    member: &Path,
    root: &Path,
    path_var: Option<&OsString>,
) -> Option<Environment> {
    let detected = detect(member).filter(|d| d.manager != Manager::Uv)?;
    manager_environment(member, root, detected, path_var)
}

/// What the manager says the environment of the project in `project` is
/// (the root, or a workspace member): remembered, in `root`'s `.st3`, while
/// the manager and the files that mark the project are unchanged.
fn manager_environment(
    project: &Path,
    root: &Path,
    detected: Detected,
    path_var: Option<&OsString>,
) -> Option<Environment> {
    let (asked, dir) = match detected.manager {
        // uv's project environment is `.venv` unless this says otherwise.
        Manager::Uv => {
            let named = std::env::var_os("UV_PROJECT_ENVIRONMENT")?;
            ("UV_PROJECT_ENVIRONMENT".to_string(), project.join(named))
        }
        manager => {
            let program = program_on_path(manager.program(), path_var)?;
            let args = ask_args(manager);
            let asked = format!("{} {}", manager.program(), args.join(" "));
            let key = cache_key(project, &detected, &program);
            let dir = remembered(root, project, &key).unwrap_or_else(|| {
                let dir = ask(&program, &args, project, manager)
                    .filter(|dir| dir.join("pyvenv.cfg").is_file());
                let watched = match dir {
                    Some(_) => None,
                    None => environments_dir(&program, manager, project),
                };
                remember(root, project, &key, dir.as_deref(), watched);
                dir
            })?;
            (asked, dir)
        }
    };
    // A manager without an environment may name the system's Python: only
    // a virtualenv is taken.
    if !dir.join("pyvenv.cfg").is_file() {
        return None;
    }
    Some(Environment {
        bin: dir.join(VENV_BIN),
        origin: Origin::Manager { detected, asked },
    })
}

/// The arguments that make a manager print its environment (or its
/// interpreter).
fn ask_args(manager: Manager) -> Vec<&'static str> {
    match manager {
        Manager::Poetry => vec!["env", "info", "--path"],
        Manager::Pdm => vec!["info", "--python"],
        Manager::Hatch => vec!["env", "find", "default"],
        Manager::Uv => vec![],
    }
}

/// Runs the manager and reads the environment's directory from its output.
fn ask(program: &Path, args: &[&str], root: &Path, manager: Manager) -> Option<PathBuf> {
    let line = PathBuf::from(run_for_line(program, args, root)?);
    match manager {
        // The interpreter: its environment is two levels up.
        Manager::Pdm => line.parent()?.parent().map(Path::to_path_buf),
        _ => Some(line),
    }
}

/// The last line a successful run of the manager printed.
fn run_for_line(program: &Path, args: &[&str], root: &Path) -> Option<String> {
    let output = duct::cmd(program, args)
        .dir(root)
        .stdin_null()
        .stderr_null()
        .stdout_capture()
        .unchecked()
        .env_remove("VIRTUAL_ENV");
    let handle = output.start().ok()?;
    let finished = handle.wait_timeout(ASK_TIMEOUT).ok().flatten();
    let Some(finished) = finished else {
        let _ = handle.kill();
        return None;
    };
    if !finished.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&finished.stdout);
    Some(text.lines().last()?.trim().to_string())
}

/// `program` in one of `path_var`'s directories.
pub(crate) fn program_on_path(program: &str, path_var: Option<&OsString>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// What the remembered answer depends on: where the project is (a copy
/// has environments of its own), the manager's program and the files that
/// configure the project's environment.
fn cache_key(root: &Path, detected: &Detected, program: &Path) -> String {
    let (files, _) = detected.manager.markers();
    let mut parts = vec![
        root.display().to_string(),
        format!("{}={}", detected.manager.program(), stamp(program)),
    ];
    for file in files.iter().chain(["pyproject.toml", "poetry.toml"].iter()) {
        parts.push(format!("{file}={}", stamp(&root.join(file))));
    }
    parts.join(";")
}

fn stamp(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "-".to_string();
    };
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}:{mtime}", meta.len())
}

/// `.st3/environment.json`: the managers' answers, one per project (the
/// root, and each workspace member asked for its own).
#[derive(Debug, Default, Serialize, Deserialize)]
struct RememberedFile {
    projects: Vec<Remembered>,
}

/// One project's answer.
#[derive(Debug, Serialize, Deserialize)]
struct Remembered {
    /// The project's directory (the key holds it too, with its stamps).
    project: PathBuf,
    key: String,
    /// `None`: the manager has no environment for the project.
    environment: Option<PathBuf>,
    /// For "none": where the manager makes its environments, and its
    /// stamp then — a new environment there changes it.
    #[serde(default)]
    watched: Option<(PathBuf, String)>,
}

/// One answer given to this process.
struct Answer {
    project: PathBuf,
    key: String,
    environment: Option<PathBuf>,
    at: std::time::Instant,
}

/// Answers already given to this process, "none" included (every gate
/// resolves its tool, and `.st3` may not exist yet to remember them in) —
/// for a while only: `qg lsp` or `qg watch` must see an environment made
/// since.
static ANSWERS: std::sync::Mutex<Vec<Answer>> = std::sync::Mutex::new(Vec::new());

/// How long this process trusts an answer it was given.
const ANSWER_LIFE: Duration = Duration::from_secs(30);

/// The manager's answer for this project and key, from this process or
/// `root`'s `.st3`; `None` when it must be asked.
fn remembered(root: &Path, project: &Path, key: &str) -> Option<Option<PathBuf>> {
    let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
    answers.retain(|a| a.at.elapsed() < ANSWER_LIFE);
    let known = answers
        .iter()
        .find(|a| a.project == project && a.key == key)
        .map(|a| a.environment.clone());
    drop(answers);
    known.or_else(|| {
        // Kept for this process too: every gate resolves its tool.
        let on_disk = read_cache(root, project, key)?;
        remember_here(project, key, on_disk.as_deref());
        Some(on_disk)
    })
}

fn remember_here(project: &Path, key: &str, environment: Option<&Path>) {
    ANSWERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Answer {
            project: project.to_path_buf(),
            key: key.to_string(),
            environment: environment.map(Path::to_path_buf),
            at: std::time::Instant::now(),
        });
}

/// The answer `.st3` holds for this key: an environment that still
/// exists, or "none" while the manager's environments directory is as it
/// was.
fn read_cache(root: &Path, project: &Path, key: &str) -> Option<Option<PathBuf>> {
    let remembered = read_file(root)
        .projects
        .into_iter()
        .find(|r| r.project == project && r.key == key)?;
    match (remembered.environment, remembered.watched) {
        (Some(dir), _) => dir.join("pyvenv.cfg").is_file().then_some(Some(dir)),
        (None, Some((watched, was))) => (stamp(&watched) == was).then_some(None),
        (None, None) => None,
    }
}

/// Where a manager makes the environments it keeps outside projects.
fn environments_dir(program: &Path, manager: Manager, root: &Path) -> Option<PathBuf> {
    let args: &[&str] = match manager {
        Manager::Poetry => &["config", "virtualenvs.path"],
        Manager::Pdm => &["config", "venv.location"],
        _ => return None,
    };
    run_for_line(program, args, root).map(PathBuf::from)
}

/// Remembered in this process, and in `.st3` where it exists (best effort:
/// unwritable, the manager is asked again next run). "None" is written
/// down with the stamp of the manager's environments directory, as
/// `poetry install` makes an environment there without touching what the
/// key stamps; without one it is not written down.
fn remember(
    root: &Path,
    project: &Path,
    key: &str,
    environment: Option<&Path>,
    watched: Option<PathBuf>,
) {
    remember_here(project, key, environment);
    let watched = watched.map(|dir| {
        let was = stamp(&dir);
        (dir, was)
    });
    if environment.is_none() && watched.is_none() {
        return;
    }
    let path = root.join(CACHE_FILE);
    if !path.parent().is_some_and(Path::is_dir) {
        return;
    }
    let mut file = read_file(root);
    file.projects.retain(|r| r.project != project);
    file.projects.push(Remembered {
        project: project.to_path_buf(),
        key: key.to_string(),
        environment: environment.map(Path::to_path_buf),
        watched,
    });
    if let Ok(bytes) = serde_json::to_vec_pretty(&file) {
        let _ = crate::atomic_file::write_cache(&path, &bytes);
    }
}

/// What `root`'s `.st3/environment.json` holds (nothing when it is missing
/// or unreadable: each manager is asked again).
fn read_file(root: &Path) -> RememberedFile {
    std::fs::read(root.join(CACHE_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The commands a hint's `{install}` and `{install_project}` stand for, as
/// the project's manager (or pip, in `environment`) spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstallCommands {
    /// Followed by a package: installs a development tool.
    pub(crate) install: String,
    /// Installs the project itself with its dependencies.
    pub(crate) install_project: String,
}

impl InstallCommands {
    /// `hint` with `{install}` expanded: the packages after it go where
    /// the manager's words put them — `add "mypy" to `dependencies` in …`
    /// for Hatch, as TOML strings; after the command otherwise.
    pub(crate) fn expand_install(&self, hint: &str) -> String {
        if !self.install.contains(PACKAGES) {
            return hint.replace("{install}", &self.install);
        }
        match hint.split_once("{install} ") {
            Some((before, packages)) => {
                let quoted: Vec<String> = packages
                    .split_whitespace()
                    .map(|p| format!("\"{}\"", p.trim_matches(|c| c == '\'' || c == '"')))
                    .collect();
                format!(
                    "{before}{}",
                    self.install.replace(PACKAGES, &quoted.join(", "))
                )
            }
            None => hint.replace("{install}", &self.install.replace(PACKAGES, "it")),
        }
    }
}

/// `name` as an executable's file name here (`pip.exe` on Windows).
fn executable(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// The install commands for the project at `root` whose environment is
/// `environment` (`{venv_bin}` already expanded to `venv_bin`).
pub(crate) fn install_commands(
    root: &Path,
    environment: Option<&Environment>,
    venv_bin: &str,
    path_var: Option<&OsString>,
) -> InstallCommands {
    if let Some(detected) = detect(root) {
        return InstallCommands {
            install: detected.manager.add_dev(root),
            install_project: detected.manager.sync().to_string(),
        };
    }
    let pip = |rest: &str| InstallCommands {
        install: format!("{venv_bin}pip install{rest}"),
        install_project: format!("{venv_bin}pip install{rest} -e ."),
    };
    let Some(environment) = environment else {
        return pip("");
    };
    if environment.bin.join(executable("pip")).is_file() {
        return pip("");
    }
    // A virtualenv made by `uv venv` has no pip.
    let python = format!("{venv_bin}python");
    // Windows PowerShell 5.1 (the one Windows ships) has no `&&`.
    let then = match cfg!(windows) {
        true => ";",
        false => " &&",
    };
    match program_on_path("uv", path_var) {
        Some(_) => InstallCommands {
            install: format!("uv pip install --python {python}"),
            install_project: format!("uv pip install --python {python} -e ."),
        },
        None => InstallCommands {
            install: format!("{python} -m ensurepip{then} {venv_bin}pip install"),
            install_project: format!("{python} -m ensurepip{then} {venv_bin}pip install -e ."),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upgrade_goes_to_the_group_that_declares_the_tool() {
        let uv = project(&[
            ("uv.lock", ""),
            (
                "pyproject.toml",
                "[project]\nname = \"p\"\n[dependency-groups]\ndev = [\"pytest\"]\nlint = [\"Ruff==0.14.6\", \"mypy[faster-cache]>=1.18\"]\n",
            ),
        ]);
        assert_eq!(
            upgrade_in_group(uv.path(), "mypy").as_deref(),
            Some("uv add --group lint")
        );
        assert_eq!(
            upgrade_in_group(uv.path(), "ruff").as_deref(),
            Some("uv add --group lint")
        );
        // In `dev`, or nowhere: the usual `uv add --dev`.
        assert_eq!(upgrade_in_group(uv.path(), "pytest"), None);
        assert_eq!(upgrade_in_group(uv.path(), "pyright"), None);
        let poetry = project(&[(
            "pyproject.toml",
            "[tool.poetry]\nname = \"p\"\n[tool.poetry.group.typing.dependencies]\nmypy = \"^1.18\"\n",
        )]);
        assert_eq!(
            upgrade_in_group(poetry.path(), "mypy").as_deref(),
            Some("poetry add --group typing")
        );
    }

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_lock_file_names_the_manager_before_a_pyproject_table() {
        let both = project(&[
            ("poetry.lock", ""),
            ("pyproject.toml", "[tool.uv]\ndev-dependencies = []\n"),
        ]);
        let found = detect(both.path()).unwrap();
        assert_eq!(
            (found.manager, found.marker.as_str()),
            (Manager::Poetry, "poetry.lock")
        );
        let table = project(&[(
            "pyproject.toml",
            "[project]\nname = 'x'\n\n[tool.pdm.dev-dependencies]\n",
        )]);
        let found = detect(table.path()).unwrap();
        assert_eq!(found.manager, Manager::Pdm);
        assert_eq!(found.marker, "[tool.pdm] in pyproject.toml");
        let plain = project(&[(
            "pyproject.toml",
            "[project]\nname = 'x'\n# [tool.uv] in a comment\n",
        )]);
        assert_eq!(detect(plain.path()), None);
        let dotted = project(&[(
            "pyproject.toml",
            "[tool]\nhatch.envs.default.dependencies = ['mypy']\n",
        )]);
        assert_eq!(detect(dotted.path()).unwrap().manager, Manager::Hatch);
    }

    /// structlog: hatchling builds it (`[tool.hatch.version]`, a metadata
    /// hook), tox runs its tools — Hatch's hints sent its users to an
    /// environment the project never uses.
    #[test]
    fn a_build_backends_settings_do_not_name_the_manager() {
        for backend in [
            "[tool.hatch.version]\nsource = 'vcs'\n\n[tool.hatch.metadata.hooks.fancy-pypi-readme]\ncontent-type = 'text/markdown'\n\n[tool.hatch.build.targets.wheel]\npackages = ['src/x']\n",
            "[tool.pdm.build]\nincludes = ['src/x']\n\n[tool.pdm.version]\nsource = 'scm'\n",
            "[tool.uv.build-backend]\nmodule-name = 'x'\n",
        ] {
            let built = project(&[("pyproject.toml", backend)]);
            assert_eq!(detect(built.path()), None, "{backend}");
        }
        let managed = project(&[(
            "pyproject.toml",
            "[tool.hatch.version]\nsource = 'vcs'\n\n[tool.hatch.envs.default]\ninstaller = 'uv'\n",
        )]);
        let found = detect(managed.path()).unwrap();
        assert_eq!(
            (found.manager, found.marker.as_str()),
            (Manager::Hatch, "[tool.hatch] in pyproject.toml")
        );
    }

    /// A fake `poetry` on a PATH of its own, logging each call to `calls`:
    /// `env info --path` names `env` once `ready` exists; `config
    /// virtualenvs.path` names `venvs`.
    #[cfg(unix)]
    struct FakePoetry {
        dir: tempfile::TempDir,
    }

    #[cfg(unix)]
    impl FakePoetry {
        fn new() -> FakePoetry {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            let at = |name: &str| dir.path().join(name).display().to_string();
            std::fs::create_dir_all(dir.path().join("venvs")).unwrap();
            std::fs::create_dir(dir.path().join("bin")).unwrap();
            let script = format!(
                "#!/bin/sh\necho \"$*\" >> {calls}\ncase \"$1\" in\n  env) [ -f {ready} ] && echo {env} || exit 1;;\n  config) echo {venvs};;\nesac\n",
                calls = at("calls"),
                ready = at("ready"),
                env = at("venvs/demo-py3"),
                venvs = at("venvs"),
            );
            let poetry = dir.path().join("bin/poetry");
            std::fs::write(&poetry, script).unwrap();
            std::fs::set_permissions(&poetry, std::fs::Permissions::from_mode(0o755)).unwrap();
            FakePoetry { dir }
        }

        fn path(&self) -> Option<OsString> {
            Some(self.dir.path().join("bin").into_os_string())
        }

        fn calls(&self) -> Vec<String> {
            std::fs::read_to_string(self.dir.path().join("calls"))
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect()
        }

        /// What `poetry install` does: an environment in the venvs dir.
        fn install(&self) -> PathBuf {
            let env = self.dir.path().join("venvs/demo-py3");
            std::fs::create_dir_all(env.join(VENV_BIN)).unwrap();
            std::fs::write(env.join("pyvenv.cfg"), "").unwrap();
            std::fs::write(self.dir.path().join("ready"), "").unwrap();
            env
        }
    }

    /// A new process: nothing remembered but what `.st3` holds.
    #[cfg(unix)]
    fn forget_this_process() {
        ANSWERS.lock().unwrap().clear();
    }

    /// The fake Poetry is a shell script.
    #[test]
    #[cfg(unix)]
    fn the_managers_answer_is_asked_once_and_again_when_its_files_or_environments_change() {
        let root = project(&[("poetry.lock", "")]);
        std::fs::create_dir(root.path().join(".st3")).unwrap();
        let poetry = FakePoetry::new();
        let path = poetry.path();
        // No environment yet: asked, and where Poetry makes them noted.
        assert_eq!(find(root.path(), None, path.as_ref()), None);
        assert_eq!(
            poetry.calls(),
            ["env info --path", "config virtualenvs.path"]
        );
        forget_this_process();
        assert_eq!(find(root.path(), None, path.as_ref()), None);
        assert_eq!(poetry.calls().len(), 2, "none is remembered");
        // `poetry install`: the environments directory changed.
        let env = poetry.install();
        forget_this_process();
        let found = find(root.path(), None, path.as_ref()).unwrap();
        assert_eq!(found.bin, env.join(VENV_BIN));
        assert!(matches!(found.origin, Origin::Manager { .. }));
        assert_eq!(poetry.calls().len(), 3);
        forget_this_process();
        find(root.path(), None, path.as_ref()).unwrap();
        assert_eq!(poetry.calls().len(), 3, "the environment is remembered");
        // The lock file changed: asked again.
        std::fs::write(root.path().join("poetry.lock"), "# changed\n").unwrap();
        find(root.path(), None, path.as_ref()).unwrap();
        assert_eq!(poetry.calls().len(), 4);
        // An in-project .venv comes first: the manager is not asked.
        std::fs::create_dir_all(root.path().join(".venv").join(VENV_BIN)).unwrap();
        let found = find(root.path(), None, path.as_ref()).unwrap();
        assert_eq!(found.origin, Origin::InProject(".venv"));
        assert_eq!(poetry.calls().len(), 4);
    }

    #[test]
    fn a_declared_dependency_is_found_in_a_poetry_table_or_a_requirement_string() {
        let poetry = project(&[(
            "pyproject.toml",
            "[tool.poetry.dev-dependencies]\npytest = \"^7\"\nMyPy = \"^0.990\"\n",
        )]);
        assert!(declares(poetry.path(), "mypy"));
        assert!(!declares(poetry.path(), "'pyright[nodejs]'"));
        let uv = project(&[(
            "pyproject.toml",
            "[dependency-groups]\ndev = [\"pyright[nodejs]>=1.1\", \"ruff\"]\n",
        )]);
        assert!(declares(uv.path(), "'pyright[nodejs]'"));
        assert!(declares(uv.path(), "ruff"));
        assert!(!declares(uv.path(), "mypy"));
        assert!(!declares(uv.path(), "ruff-lsp"));
    }

    #[test]
    fn hints_follow_the_manager_and_pip_only_where_pip_is() {
        let uv = project(&[("uv.lock", "")]);
        let commands = install_commands(uv.path(), None, ".venv/bin/", None);
        assert_eq!(commands.install, "uv add --dev");
        assert_eq!(commands.install_project, "uv sync");
        let plain = project(&[]);
        let bin = plain.path().join(".venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let env = Environment {
            bin: bin.clone(),
            origin: Origin::InProject(".venv"),
        };
        let no_uv = Some(OsString::from("/nonexistent"));
        let commands = install_commands(plain.path(), Some(&env), ".venv/bin/", no_uv.as_ref());
        let then = match cfg!(windows) {
            true => ";",
            false => " &&",
        };
        assert_eq!(
            commands.install,
            format!(".venv/bin/python -m ensurepip{then} .venv/bin/pip install")
        );
        std::fs::write(bin.join(executable("pip")), "").unwrap();
        let commands = install_commands(plain.path(), Some(&env), ".venv/bin/", no_uv.as_ref());
        assert_eq!(commands.install, ".venv/bin/pip install");
        assert_eq!(commands.install_project, ".venv/bin/pip install -e .");
    }

    #[test]
    fn hatch_hints_name_the_environment_table_never_hatch_run_pip() {
        let pyproject = project(&[(
            "pyproject.toml",
            "[tool.hatch.envs.default]\ninstaller = 'uv'\n",
        )]);
        let commands = install_commands(pyproject.path(), None, "", None);
        assert_eq!(
            commands.expand_install("{install} mypy"),
            "add \"mypy\" to `dependencies` in [tool.hatch.envs.default] of pyproject.toml, \
             then: hatch run python --version"
        );
        assert_eq!(
            commands.expand_install("{install} 'pyright[nodejs]'"),
            "add \"pyright[nodejs]\" to `dependencies` in [tool.hatch.envs.default] of pyproject.toml, \
             then: hatch run python --version"
        );
        assert_eq!(commands.install_project, "hatch run python --version");
        let hatch_toml = project(&[("hatch.toml", "[envs.default]\n")]);
        let commands = install_commands(hatch_toml.path(), None, "", None);
        assert_eq!(
            commands.expand_install("run: {install} ruff"),
            "run: add \"ruff\" to `dependencies` in [envs.default] of hatch.toml, \
             then: hatch run python --version"
        );
        // Other managers' words come before the package, unchanged.
        let pdm = project(&[("pdm.lock", "")]);
        let commands = install_commands(pdm.path(), None, "", None);
        assert_eq!(
            commands.expand_install("{install} ruff"),
            "pdm add -dG dev ruff"
        );
    }
}
