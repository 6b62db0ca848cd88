//! `qg trust`: let the automatic contexts (`qg lsp`, `qg mcp`, `qg
//! watch`) run this repository's gate commands, as they are now; `--revoke`
//! takes it back, `--list` shows every repository trusted.

use std::path::PathBuf;

use clap::Args;

use super::{current_dir, print_stdout};
use crate::error::QgError;
use crate::tools::Toolbox;
use crate::trust::{self, Given};

#[derive(Debug, Args)]
pub(super) struct TrustArgs {
    /// Take back the trust given to this repository.
    #[arg(long, conflicts_with = "list")]
    revoke: bool,
    /// List every trusted repository (from your data directory).
    #[arg(long)]
    list: bool,
    /// Config file (default: .st3/quality.yaml, else [tool.qg] in pyproject.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(super) fn command(args: TrustArgs) -> Result<i32, QgError> {
    if args.list {
        return list();
    }
    let workspace = crate::workspace::Workspace::discover(&current_dir()?)?;
    if args.revoke {
        let had = trust::revoke(&workspace.root).map_err(QgError::Usage)?;
        let text = match had {
            true => format!(
                "🔒 {} is no longer trusted: qg lsp, qg mcp and qg watch run nothing of it\n",
                workspace.root.display()
            ),
            false => format!("⏭️ {} was not trusted\n", workspace.root.display()),
        };
        print_stdout(&text);
        return Ok(0);
    }
    let config = crate::members::load_config(&workspace, args.config.as_deref())?;
    let tools = Toolbox::from_env(&workspace.root);
    let text = match trust::give(&workspace, &config, &tools).map_err(QgError::Usage)? {
        Given::NotNeeded => format!(
            "⏭️ nothing to trust in {}: the built-in config, with tools from outside the repository\n",
            workspace.root.display()
        ),
        Given::Trusted(fingerprint) => format!(
            "✅ trusted {}: qg lsp, qg mcp and qg watch may run {} — until any of it changes\n",
            workspace.root.display(),
            fingerprint.describe()
        ),
    };
    print_stdout(&text);
    Ok(0)
}

fn list() -> Result<i32, QgError> {
    let records = trust::store::read().map_err(QgError::Usage)?;
    let path = trust::store::path().map_err(QgError::Usage)?;
    let mut out = match records.trusted.len() {
        0 => format!("no repository trusted ({})\n", path.display()),
        n => format!("{n} trusted ({})\n", path.display()),
    };
    for (root, record) in &records.trusted {
        out.push_str(&format!("  {root}  since {}: {}\n", record.at, record.what));
    }
    print_stdout(&out);
    Ok(0)
}
