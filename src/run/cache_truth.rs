//! The property that the result cache never changes a verdict: over
//! generated edit sequences on a small project whose checker is a
//! whole-program one in miniature, every run answered with the cache
//! finds exactly what a run without it finds — through edits that change
//! only an imported module's interface, edits to bodies and comments that
//! change none, imports added and removed, the tool's settings, and the
//! environment (a dependency upgraded). The store lives as long as the
//! test's thread, so later sequences meet entries earlier ones wrote.
//!
//! The checker is `awk` (`CHECKER`); the import graph is real ruff's
//! (`ruff analyze graph`, from the test virtualenv). Sequences:
//! `PROPTEST_CASES` (default 1,000).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::{CacheUse, RunOptions};
use crate::scope::{ScopeMode, ScopeRequest};

/// The modules, `m0.py` … `m3.py`, each defining `V0` … `V3`.
const MODULES: usize = 4;

/// The checker: a finding on each line holding `ERR`; with `strict = true`
/// in `checker.toml`, on each `# loose` line; on `import extlib` when
/// extlib 2 is installed; and on each `from mJ import VJ` whose module
/// annotates `VJ` as `str` (what an importer sees of it).
const CHECKER: &str = r#"function str_in(module, name,    line, found) {
    found = 0
    while ((getline line < module) > 0) if (line ~ ("^" name ": str")) found = 1
    close(module)
    return found
}
function emit(code, message) {
    printf "{\"file\": \"%s\", \"line\": %d, \"code\": \"%s\", \"message\": \"%s\"}\n", FILENAME, FNR, code, message
    found_any = 1
}
BEGIN {
    while ((getline line < "checker.toml") > 0) if (line ~ /strict = true/) strict = 1
    close("checker.toml")
    extlib2 = (system("test -d .venv/lib/python3.11/site-packages/extlib-2.0.dist-info") == 0)
}
/ERR/ { emit("E1", "err") }
strict && /# loose/ { emit("S1", "loose") }
extlib2 && /^import extlib/ { emit("X2", "extlib 2 has no such thing") }
/^from m[0-9] import V[0-9]/ { if (str_in($2 ".py", $4)) emit("T1", $4 " is str") }
END { exit found_any ? 1 : 0 }
"#;

fn config(ruff: &Path) -> String {
    format!(
        r#"version: "1"
active_gates: [checker, imports_silenced]
project_scope: {{include_globs: ["**/*.py"]}}
artifact_logging: {{enabled: false}}
import_graph:
  command: ["{ruff}", "analyze", "graph", "--direction", "dependencies"]
  timeout_seconds: 60
gates:
  checker:
{checker}
  # mypy's shape: a checker said to report the modules its files import,
  # which (as mypy with a module it counts installed) says nothing of them.
  imports_silenced:
{checker}
    daemon:
      protocol: command
      command: ["true"]
      ready_file: "{{daemon_dir}}/ready"
      check: ["true"]
      verify_every: 0
      reports_imported: true
"#,
        ruff = ruff.display(),
        checker = CHECKER_GATE,
    )
}

/// Both gates' definition: the checker, a whole-program one.
const CHECKER_GATE: &str = r#"    execution: {command: ["awk", "-f", "check.awk"], timeout_seconds: 30, batchable: false}
    version_args: ["-W", "version"]
    parsing:
      strategy: json_violations
      json_lines: true
      violations_path: "/"
      field_map: {file: file, line: line, code: code, message: message}
    capabilities: {file_types: [".py"]}
    scope: {importers: true}
    tool_config:
      - {file: checker.toml}"#;

/// One module as the sequence has it.
#[derive(Debug, Clone, Default)]
struct Module {
    /// The modules it imports (`from mJ import VJ`).
    imports: BTreeSet<usize>,
    /// `VK: str` (else `int`): its interface.
    text_value: bool,
    /// An `ERR` line.
    error: bool,
    /// A `# loose` comment in its function's body.
    loose: bool,
    /// `import extlib`.
    extlib: bool,
    /// What its function returns: a body, which no importer sees.
    body: usize,
}

impl Module {
    fn render(&self, k: usize) -> String {
        let mut text = String::new();
        for j in &self.imports {
            text.push_str(&format!("from m{j} import V{j}\n"));
        }
        if self.extlib {
            text.push_str("import extlib\n");
        }
        match self.text_value {
            true => text.push_str(&format!("V{k}: str = \"{k}\"\n")),
            false => text.push_str(&format!("V{k}: int = {k}\n")),
        }
        if self.error {
            text.push_str("ERR = 0\n");
        }
        text.push_str("\n\ndef f() -> int:\n");
        if self.loose {
            text.push_str("    # loose\n");
        }
        text.push_str(&format!("    return {}\n", self.body));
        text
    }
}

/// One edit.
#[derive(Debug, Clone, Copy)]
enum Edit {
    /// A module's annotation flips between `int` and `str`.
    Interface(usize),
    /// A module's function returns another number.
    Body(usize),
    /// A module's `ERR` line comes or goes.
    Error(usize),
    /// A module's `# loose` comment comes or goes.
    Loose(usize),
    /// A module starts or stops importing another.
    Import(usize, usize),
    /// A module starts or stops importing extlib.
    Extlib(usize),
    /// The checker's settings: `strict` flips.
    Strict,
    /// extlib goes from 1.0 to 2.0, or back.
    Upgrade,
}

fn edit() -> impl Strategy<Value = Edit> {
    let module = 0..MODULES;
    prop_oneof![
        3 => module.clone().prop_map(Edit::Interface),
        3 => module.clone().prop_map(Edit::Body),
        1 => module.clone().prop_map(Edit::Error),
        1 => module.clone().prop_map(Edit::Loose),
        2 => (module.clone(), module.clone()).prop_map(|(k, j)| Edit::Import(k, j)),
        1 => module.prop_map(Edit::Extlib),
        1 => Just(Edit::Strict),
        1 => Just(Edit::Upgrade),
    ]
}

fn start() -> impl Strategy<Value = Vec<Module>> {
    let module = (
        proptest::collection::btree_set(0..MODULES, 0..3),
        any::<bool>(),
        proptest::bool::weighted(0.2),
        any::<bool>(),
        proptest::bool::weighted(0.3),
    )
        .prop_map(|(imports, text_value, error, loose, extlib)| Module {
            imports,
            text_value,
            error,
            loose,
            extlib,
            body: 0,
        });
    proptest::collection::vec(module, MODULES).prop_map(|mut modules| {
        for (k, m) in modules.iter_mut().enumerate() {
            m.imports.remove(&k);
        }
        modules
    })
}

/// The project the sequences edit, and the store they share.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap().join("project");
        let store = root.with_file_name("store");
        std::fs::create_dir_all(root.join(".st3")).unwrap();
        std::fs::write(root.join(".st3/quality.yaml"), config(&ruff())).unwrap();
        std::fs::write(root.join("check.awk"), CHECKER).unwrap();
        std::fs::write(root.join(".gitignore"), ".venv/\n.st3/\n").unwrap();
        std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
        git2::Repository::init(&root).unwrap();
        World {
            _dir: dir,
            root,
            store,
        }
    }

    fn site_packages(&self) -> PathBuf {
        self.root.join(".venv/lib/python3.11/site-packages")
    }

    /// The modules as `modules` has them, extlib 1.0 installed, strict off.
    fn reset(&self, modules: &[Module]) {
        for (k, module) in modules.iter().enumerate() {
            std::fs::write(self.root.join(format!("m{k}.py")), module.render(k)).unwrap();
        }
        std::fs::write(self.root.join("checker.toml"), "strict = false\n").unwrap();
        let _ = std::fs::remove_dir_all(self.site_packages());
        std::fs::create_dir_all(self.site_packages().join("extlib-1.0.dist-info")).unwrap();
    }

    fn apply(&self, modules: &mut [Module], edit: Edit) {
        let mut touched = None;
        match edit {
            Edit::Interface(k) => {
                modules[k].text_value ^= true;
                touched = Some(k);
            }
            Edit::Body(k) => {
                modules[k].body += 1;
                touched = Some(k);
            }
            Edit::Error(k) => {
                modules[k].error ^= true;
                touched = Some(k);
            }
            Edit::Loose(k) => {
                modules[k].loose ^= true;
                touched = Some(k);
            }
            Edit::Import(k, j) if k != j => {
                if !modules[k].imports.remove(&j) {
                    modules[k].imports.insert(j);
                }
                touched = Some(k);
            }
            Edit::Import(..) => {}
            Edit::Extlib(k) => {
                modules[k].extlib ^= true;
                touched = Some(k);
            }
            Edit::Strict => {
                let settings = self.root.join("checker.toml");
                let now = std::fs::read_to_string(&settings).unwrap();
                let flipped = match now.contains("true") {
                    true => "strict = false\n",
                    false => "strict = true\n",
                };
                std::fs::write(settings, flipped).unwrap();
            }
            Edit::Upgrade => {
                let packages = self.site_packages();
                let (from, to) = match packages.join("extlib-1.0.dist-info").is_dir() {
                    true => ("extlib-1.0.dist-info", "extlib-2.0.dist-info"),
                    false => ("extlib-2.0.dist-info", "extlib-1.0.dist-info"),
                };
                std::fs::rename(packages.join(from), packages.join(to)).unwrap();
            }
        }
        if let Some(k) = touched {
            std::fs::write(self.root.join(format!("m{k}.py")), modules[k].render(k)).unwrap();
        }
    }

    /// Every finding of a project-scope run, and its verdict.
    fn findings(&self, cache: CacheUse) -> Result<(bool, BTreeSet<String>), TestCaseError> {
        let scope = ScopeRequest {
            mode: Some(ScopeMode::Project),
            ..ScopeRequest::default()
        };
        let options = RunOptions::checking_only(self.root.clone(), scope, Vec::new(), cache);
        let report = super::run(&options, &crate::exec::Silent)
            .map_err(|e| TestCaseError::fail(format!("the run: {e}")))?;
        let mut found = BTreeSet::new();
        for gate in &report.gates {
            prop_assert!(gate.error.is_none(), "{} failed: {:?}", gate.id, gate.error);
            found.extend(gate.violations.iter().map(|v| {
                format!(
                    "{} {:?}:{:?} {:?} {}",
                    gate.id, v.file, v.line, v.code, v.message
                )
            }));
        }
        Ok((report.overall_pass(), found))
    }
}

/// The test virtualenv's ruff (`QG_TOOLS_VENV`, else the repository's `.venv`).
fn ruff() -> PathBuf {
    let venv = std::env::var_os("QG_TOOLS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv"));
    let ruff = venv.join("bin/ruff");
    assert!(
        ruff.is_file(),
        "no ruff at {}: run scripts/test.sh",
        ruff.display()
    );
    ruff
}

thread_local! {
    static WORLD: World = World::new();
}

fn sequence(world: &World, start: &[Module], edits: &[Edit]) -> Result<(), TestCaseError> {
    let mut modules = start.to_vec();
    world.reset(&modules);
    let cached = CacheUse::At(world.store.clone());
    for (step, edit) in std::iter::once(None)
        .chain(edits.iter().map(Some))
        .enumerate()
    {
        if let Some(edit) = edit {
            world.apply(&mut modules, *edit);
        }
        let with = world.findings(cached.clone())?;
        let without = world.findings(CacheUse::Off)?;
        prop_assert_eq!(
            &with,
            &without,
            "step {} ({:?}): the cache's verdict is not the tool's\nmodules: {:#?}",
            step,
            edit,
            modules
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(super::sequences::config())]

    #[test]
    fn the_cache_never_changes_a_verdict(
        start in start(),
        edits in proptest::collection::vec(edit(), 1..7),
    ) {
        WORLD.with(|world| sequence(world, &start, &edits))?;
    }
}
