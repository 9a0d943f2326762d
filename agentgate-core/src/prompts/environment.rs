//! The environment block of the system prompt (§15): the model's name, the
//! working directory and worktree, whether it is a git repository, the
//! platform and today's date.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::ModelInfo;

/// The environment block for `model` working in `directory` (inside
/// `worktree`), dated `today` (`YYYY-MM-DD`).
pub fn environment_block(
    model: &ModelInfo,
    directory: &Path,
    worktree: &Path,
    today: &str,
) -> String {
    let git = if is_git_repository(directory) {
        "yes"
    } else {
        "no"
    };
    format!(
        "You are powered by the model named {id}. The exact model ID is {full}.\n\
         Here is some useful information about the environment you are running in:\n\
         <env>\n  Working directory: {dir}\n  Workspace root folder: {root}\n  \
         Is directory a git repo: {git}\n  Platform: {platform}\n  Today's date: {today}\n</env>",
        id = model.id,
        full = model.full_id(),
        dir = directory.display(),
        root = worktree.display(),
        platform = std::env::consts::OS,
    )
}

/// Whether `directory` or one of its parents holds a `.git` entry.
pub fn is_git_repository(directory: &Path) -> bool {
    directory.ancestors().any(|dir| dir.join(".git").exists())
}

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    civil_date(days as i64)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(20_513), "2026-03-01");
        assert_eq!(today().len(), 10);
    }

    #[test]
    fn block_names_the_model_and_the_directory() {
        let info = ModelInfo::new("openai", "gpt-4.1");
        let block = environment_block(&info, Path::new("/w/p"), Path::new("/w"), "2026-01-02");
        assert!(block.contains("gpt-4.1") && block.contains("openai/gpt-4.1"));
        assert!(block.contains("Working directory: /w/p"));
        assert!(block.contains("Today's date: 2026-01-02"));
    }
}
