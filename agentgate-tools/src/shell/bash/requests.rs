//! Every permission request the bash tool makes for a command line, in
//! the order it asks them: `external_directory` for a working directory
//! or a path outside the project, `bash` for each command (or
//! `bash_opaque` for what cannot be seen through), then `read` for the
//! files its arguments name that the `read` rules deny or ask.
//!
//! One function, used by the tool itself and by whoever must say what it
//! would ask (`agent permission check bash CMD`), so the two cannot drift.

use std::path::Path;

use agentgate_permission::Ruleset;

use super::BashError;
use super::read_args;
use crate::files::request::ToolRequest;
use crate::search::read_rules::ReadRules;
use crate::shell::bash_scan::{plan_requests_scanned, scan};

/// The requests the bash tool asks before running `command` in `cwd`
/// (absolute) for a project at `directory` in `worktree`. `rules` and
/// `approved` are the call's ruleset and the remembered approvals: only
/// their `read` rules matter here (a file no `read` rule names is not
/// asked about). `bash_opaque` requests are judged only by rules that name
/// `bash_opaque`, as [`ToolRequest::ask_by_name`] does.
///
/// # Errors
/// [`BashError::Scan`] when the line cannot be scanned (too long, too
/// deep), [`BashError::TooManyGlobEntries`] when its arguments name more
/// files than can be checked.
pub fn bash_requests(
    command: &str,
    cwd: &Path,
    directory: &Path,
    worktree: &Path,
    rules: &Ruleset,
    approved: &Ruleset,
) -> Result<Vec<ToolRequest>, BashError> {
    // The line is parsed once, for both kinds of requests.
    let scanned = scan(command)?;
    let mut requests = plan_requests_scanned(&scanned, command, Some(cwd), directory, worktree);
    let reads = read_args::read_requests(
        &scanned,
        command,
        cwd,
        directory,
        worktree,
        &ReadRules::new(rules, approved, directory, worktree),
    )
    .map_err(|_| BashError::TooManyGlobEntries(read_args::MAX_GLOB_ENTRIES))?;
    requests.extend(reads);
    Ok(requests)
}
