//! Running the import analyzer on a list of files and reading its answer:
//! one JSON object mapping each file to the project files it imports.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use super::roots::SearchRoots;
use super::Request;
use crate::paths::PathContext;
use crate::process::{self, batch};

/// What the analyzer said, root-relative.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    /// File → the project files it imports.
    pub(crate) imports: BTreeMap<String, Vec<String>>,
    /// Files it said it could not read.
    pub(crate) unreadable: BTreeSet<String>,
    /// File → the project files its unresolved imports may be (target →
    /// the import as written), filled in by the graph.
    pub(crate) assumed: BTreeMap<String, BTreeMap<String, String>>,
}

/// Asks the analyzer about `files` (in as many runs as the OS command-line
/// limit needs), resolving imports from `roots`. `Err` says why there is
/// no usable answer.
pub(crate) fn analyze(
    request: &Request<'_>,
    files: &[String],
    roots: &SearchRoots,
) -> Result<Answers, String> {
    let spec = request.spec;
    if let Some(why) = &spec.too_old {
        return Err(why.clone());
    }
    let ws = request.ws;
    let ctx = request.tools;
    let program = &spec.command[0];
    let tool = ctx.resolve_program(program).map_err(|_| {
        let install = spec
            .install_hint
            .as_deref()
            .map(|h| format!(" (install: {})", ctx.expand_hint(h)))
            .unwrap_or_default();
        format!("the import analyzer `{program}` is not installed{install}")
    })?;
    let env = ctx.activated(&tool);
    let mut options: Vec<OsString> = spec.command[1..].iter().map(OsString::from).collect();
    options.extend(root_args(&spec.search_path_args, roots));
    let fixed: usize =
        batch::cost(&program.into()) + options.iter().map(batch::cost).sum::<usize>();
    // A name that starts with `-` must not read as an option.
    let file_args: Vec<OsString> = files
        .iter()
        .map(|f| {
            let name = crate::file_name::to_os_str(f).into_owned();
            match f.starts_with('-') {
                true => {
                    let mut dotted = OsString::from("./");
                    dotted.push(name);
                    dotted
                }
                false => name,
            }
        })
        .collect();
    let parts = batch::split(
        &file_args,
        batch::cost,
        fixed,
        batch::argument_budget(&env),
        1,
    )
    .map_err(|_| "a file name is longer than the OS allows on a command line".to_string())?;
    let paths = PathContext::new(&ws.root, &ws.root);
    let mut answers = Answers::default();
    for part in parts {
        let mut args = options.clone();
        args.extend(part);
        let invocation = process::Invocation {
            label: "import graph",
            program: &tool.path,
            args: &args,
            cwd: &ws.root,
            env: &env,
            timeout: spec.timeout,
            cancel: &ctx.cancel,
        };
        let done = process::run(&invocation)
            .map_err(|e| format!("the import analyzer could not start: {e}"))?;
        read_answer(request, &done, &paths, &mut answers)?;
    }
    Ok(answers)
}

/// The arguments that hand the analyzer its roots (`{search_paths}`: the
/// TOML array of them); none when the config gives no way to.
fn root_args(args: &[String], roots: &SearchRoots) -> Vec<OsString> {
    if roots.roots.is_empty() {
        return Vec::new();
    }
    let array = roots.toml_array();
    args.iter()
        .map(|a| OsString::from(a.replace("{search_paths}", &array)))
        .collect()
}

/// The line of an analyzer's stderr that says what went wrong: its first
/// `error:` line (a usage error's is followed by the usage and "For more
/// information, try '--help'."), else its last line.
fn error_line(stderr: &str) -> &str {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.to_ascii_lowercase().starts_with("error:"))
        .or_else(|| lines().next_back())
        .unwrap_or("")
}

fn read_answer(
    request: &Request<'_>,
    done: &process::Finished,
    paths: &PathContext,
    answers: &mut Answers,
) -> Result<(), String> {
    let program = &request.spec.command[0];
    match done.termination {
        process::Termination::Exited(0) => {}
        process::Termination::Exited(code) => {
            let stderr = done.stderr.tail(4096).unwrap_or_default();
            let stderr = String::from_utf8_lossy(&stderr);
            let why = error_line(&stderr);
            return Err(format!(
                "the import analyzer `{program}` exited with code {code}: {why}"
            ));
        }
        process::Termination::TimedOut => {
            return Err(format!("the import analyzer `{program}` timed out"));
        }
        process::Termination::Signaled(signal) => {
            return Err(format!(
                "the import analyzer `{program}` was killed by {}",
                process::signal_name(signal)
            ));
        }
    }
    let stdout = done.stdout.read_all().map_err(|e| e.to_string())?;
    let map: BTreeMap<String, Vec<String>> = serde_json::from_slice(&stdout).map_err(|e| {
        format!("the import analyzer's output is not a JSON object of file lists ({e})")
    })?;
    for (file, imports) in map {
        let mut imports: Vec<String> = imports.iter().map(|i| paths.normalize(i)).collect();
        imports.sort();
        imports.dedup();
        answers.imports.insert(paths.normalize(&file), imports);
    }
    if let Some(pattern) = &request.spec.unreadable {
        let stderr = done.stderr.read_all().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&stderr);
        for caps in pattern.captures_iter(&text) {
            answers.unreadable.insert(paths.normalize(&caps["file"]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_line_of_a_usage_error_is_its_first_error_line() {
        let usage = "error: unexpected argument '--type-checking-imports' found\n\n  tip: to pass it as a value, use '-- --type-checking-imports'\n\nUsage: ruff analyze graph <FILES>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            error_line(usage),
            "error: unexpected argument '--type-checking-imports' found"
        );
        assert_eq!(error_line("warning: x\npanicked at y\n"), "panicked at y");
        assert_eq!(error_line(""), "");
    }
}
