//! The `read` rules applied to each file a search would show: grep and
//! glob show file names and contents, so a file the rules do not let the
//! caller read must not appear in their output (a deviation from opencode,
//! which asks only `grep`/`glob` with the search pattern; see
//! `docs/security.md`).
//!
//! Only files the rules **allow** are shown. A file the rules deny or leave
//! to the user is left out without asking: asking only for files that
//! matched would tell a rejected caller that they matched, and asking for
//! every such file on every search would be noise. The caller can still
//! `read` such a file, which asks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agentgate_core::ToolContext;
use agentgate_permission::{Action, CompiledRuleset, Rule, Ruleset, evaluate, find_last};

use crate::files::paths;

/// The permission whose rules decide which files a search may show.
const READ: &str = "read";

/// The `read` rules of one tool call, detached from its context so a
/// search thread can apply them.
#[derive(Debug, Clone)]
pub(crate) struct ReadRules {
    rules: Ruleset,
    approved: Ruleset,
    directory: PathBuf,
    worktree: PathBuf,
    /// Whether the last `read` rule (or approval) allows every pattern
    /// (`*`): then every file is allowed, whatever its path, and a walk
    /// need not compute any file's patterns.
    allows_everything: bool,
    /// `rules` then `approved`, indexed for the walks, which test a
    /// pattern per file.
    compiled: CompiledRuleset,
}

impl ReadRules {
    /// The context's `read` rules and approvals.
    pub(crate) fn of(ctx: &ToolContext) -> Self {
        ReadRules::new(
            ctx.ruleset(),
            &ctx.permissions().approved(),
            &ctx.directory,
            &ctx.worktree,
        )
    }

    /// The `read` rules of `rules` and `approved`, for a project at
    /// `directory` in `worktree`.
    pub(crate) fn new(
        rules: &Ruleset,
        approved: &Ruleset,
        directory: &Path,
        worktree: &Path,
    ) -> Self {
        let only_read = |rules: &Ruleset| {
            Ruleset(
                rules
                    .0
                    .iter()
                    .filter(|rule| agentgate_permission::wildcard::matches(READ, &rule.permission))
                    .cloned()
                    .collect::<Vec<Rule>>(),
            )
        };
        let rules = only_read(rules);
        let approved = only_read(approved);
        // Approvals come after the rules, and the last matching rule
        // decides: a last rule whose pattern is only `*`s matches every
        // pattern, so it decides every file.
        let allows_everything = rules
            .0
            .iter()
            .chain(approved.0.iter())
            .next_back()
            .is_some_and(|rule| {
                rule.action == Action::Allow
                    && !rule.pattern.is_empty()
                    && rule.pattern.chars().all(|c| c == '*')
            });
        let compiled = CompiledRuleset::new(&[&rules, &approved]);
        ReadRules {
            compiled,
            rules,
            approved,
            directory: directory.to_path_buf(),
            worktree: worktree.to_path_buf(),
            allows_everything,
        }
    }

    /// Whether the rules allow reading `file` (absolute), judged on its
    /// worktree-relative path and, through a symlink, on where it leads.
    pub(crate) fn allows(&self, file: &Path) -> bool {
        if self.allows_everything {
            return true;
        }
        let rulesets = [&self.rules, &self.approved];
        read_patterns(file, &self.directory, &self.worktree)
            .iter()
            .all(|pattern| evaluate(READ, pattern, &rulesets).action == Action::Allow)
    }
}

impl ReadRules {
    /// Whether a rule (or approval) matching one of `file`'s `read`
    /// patterns denies or asks: a file no rule names is left alone (the
    /// bash tool's arguments, so a host without `read` rules does not get
    /// a `read` request for every file a command names).
    pub(crate) fn restricts(&self, file: &Path) -> bool {
        let rulesets = [&self.rules, &self.approved];
        read_patterns(file, &self.directory, &self.worktree)
            .iter()
            .any(|pattern| {
                find_last(READ, pattern, &rulesets).is_some_and(|rule| rule.action != Action::Allow)
            })
    }
}

impl ReadRules {
    /// Whether the rules allow reading the file `path` (absolute) from a
    /// walk: the same answer as [`ReadRules::allows`], with the project's
    /// resolved location computed once and where each folder leads
    /// remembered in `folders`, so a file that is not a symlink costs no
    /// system call (`may_be_link` is false only for such files).
    pub(crate) fn allows_walked(
        &self,
        path: &Path,
        may_be_link: bool,
        folders: &mut WalkedFolders,
    ) -> bool {
        if self.allows_everything {
            return true;
        }
        if !may_be_link
            && path.is_absolute()
            && let (Some(parent), Some(name)) = (path.parent(), path.file_name())
        {
            let mut lexical = std::mem::take(&mut folders.scratch);
            let folder = folders.folder(parent, &self.worktree);
            // The common case, decided from the folder's pattern: the
            // folder leads to itself, so the file does too.
            if folder.leads_to_itself
                && let Some(prefix) = &folder.pattern
            {
                lexical.clear();
                if !prefix.is_empty() {
                    lexical.push_str(prefix);
                    lexical.push('/');
                }
                lexical.push_str(&name.to_string_lossy());
                let allowed = self.allows_pattern(&lexical);
                folders.scratch = lexical;
                return allowed;
            }
            folders.scratch = lexical;
        }
        self.allows_walked_path(path, may_be_link, folders)
    }

    /// [`ReadRules::allows_walked`] computed from the whole path.
    fn allows_walked_path(
        &self,
        path: &Path,
        may_be_link: bool,
        folders: &mut WalkedFolders,
    ) -> bool {
        let target = paths::normalize(path);
        let real = match (may_be_link, target.parent(), target.file_name()) {
            (false, Some(parent), Some(name)) => {
                let parent_real = match folders.real.get(parent) {
                    Some(real) => real,
                    None => folders
                        .real
                        .entry(parent.to_path_buf())
                        .or_insert_with(|| paths::real_path(parent)),
                };
                paths::normalize(&parent_real.join(name))
            }
            _ => paths::real_path(&target),
        };
        let lexical = paths::worktree_pattern(&self.worktree, &target);
        if !self.allows_pattern(&lexical) {
            return false;
        }
        if real == target {
            return true;
        }
        let worktree = folders
            .worktree
            .get_or_insert_with(|| paths::real_path(&paths::normalize(&self.worktree)));
        let resolved = paths::worktree_pattern(worktree, &real);
        resolved == lexical || self.allows_pattern(&resolved)
    }

    /// Whether the last `read` rule (or approval) matching `pattern` allows
    /// (as `find_last` over the rules and approvals decides).
    fn allows_pattern(&self, pattern: &str) -> bool {
        self.compiled
            .evaluate(READ, pattern)
            .rule
            .is_some_and(|rule| rule.action == Action::Allow)
    }
}

/// Where the folders of walked files lead, for
/// [`ReadRules::allows_walked`]; one per walker thread.
#[derive(Debug, Default)]
pub(crate) struct WalkedFolders {
    real: HashMap<PathBuf, PathBuf>,
    worktree: Option<PathBuf>,
    /// The folder of the last file asked about (a walker thread meets a
    /// folder's files one after the other).
    last: Option<WalkedFolder>,
    /// Where a file's pattern is written, reused.
    scratch: String,
}

/// What [`ReadRules::allows_walked`] needs of a walked file's folder.
#[derive(Debug)]
struct WalkedFolder {
    /// The folder as the walk wrote it (absolute).
    path: PathBuf,
    /// Whether the folder leads to itself (no symlink on its way).
    leads_to_itself: bool,
    /// The folder's worktree pattern, which a file's pattern extends with
    /// `/name`; `None` when the worktree is below the folder (a file's
    /// pattern there may not extend the folder's).
    pattern: Option<String>,
}

impl WalkedFolders {
    /// The folder `path` (absolute, as the walk wrote it), for a project
    /// in `worktree`.
    fn folder(&mut self, path: &Path, worktree: &Path) -> &WalkedFolder {
        if let Some(last) = self.last.take()
            && last.path.as_os_str() == path.as_os_str()
        {
            return self.last.insert(last);
        }
        let normal = paths::normalize(path);
        let real = self
            .real
            .entry(normal.clone())
            .or_insert_with(|| paths::real_path(&normal));
        let leads_to_itself = *real == normal;
        let worktree = paths::normalize(worktree);
        let pattern = (worktree == normal || !worktree.starts_with(&normal))
            .then(|| paths::worktree_pattern(&worktree, &normal));
        self.last.insert(WalkedFolder {
            path: path.to_path_buf(),
            leads_to_itself,
            pattern,
        })
    }
}

/// The `read` patterns of `file`: worktree-relative, as written and where
/// a symlink leads.
fn read_patterns(file: &Path, directory: &Path, worktree: &Path) -> Vec<String> {
    let mut patterns: Vec<String> = Vec::new();
    for view in paths::views(file, directory, worktree) {
        let pattern = paths::worktree_pattern(&view.worktree, &view.target);
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    }
    patterns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(rules: &[(&str, &str, Action)]) -> Ruleset {
        Ruleset(
            rules
                .iter()
                .map(|(permission, pattern, action)| Rule::new(*permission, *pattern, *action))
                .collect(),
        )
    }

    /// Whether a walk may show `file` (in the project at `/p`), and whether
    /// the rules decided it without looking at the path.
    fn walked(rules: &Ruleset, approved: &Ruleset, file: &str) -> (bool, bool) {
        let read = ReadRules::new(rules, approved, Path::new("/p"), Path::new("/p"));
        let walked = read.allows_walked(Path::new(file), false, &mut WalkedFolders::default());
        assert_eq!(walked, read.allows(Path::new(file)), "{file}");
        (walked, read.allows_everything)
    }

    #[test]
    fn a_last_rule_allowing_everything_decides_every_file() {
        use Action::{Allow, Ask, Deny};
        let none = Ruleset::new();
        let all = rules(&[("read", ".env", Deny), ("*", "*", Allow)]);
        assert_eq!(walked(&all, &none, "/p/.env"), (true, true));
        let stars = rules(&[("read", "**", Allow)]);
        assert_eq!(walked(&stars, &none, "/p/a/b.rs"), (true, true));
        // A later rule naming files still decides them.
        let env = rules(&[("*", "*", Allow), ("read", "*.env", Deny)]);
        assert_eq!(walked(&env, &none, "/p/.env"), (false, false));
        assert_eq!(walked(&env, &none, "/p/a.rs"), (true, false));
        // Approvals come last.
        let asked = rules(&[("read", "secret/*", Ask)]);
        assert_eq!(walked(&all, &asked, "/p/secret/k"), (false, false));
        assert_eq!(walked(&asked, &all, "/p/secret/k"), (true, true));
        // A rule for another permission does not count.
        let other = rules(&[("read", "*.env", Deny), ("edit", "*", Allow)]);
        assert_eq!(walked(&other, &none, "/p/.env"), (false, false));
        let denied = rules(&[("*", "*", Allow), ("read", "*", Deny)]);
        assert_eq!(walked(&denied, &none, "/p/a.rs"), (false, false));
        assert_eq!(walked(&none, &none, "/p/a.rs"), (false, false));
    }

    #[test]
    fn a_folders_pattern_decides_as_the_whole_path() {
        use Action::{Allow, Ask, Deny};
        let base =
            std::env::temp_dir().join(format!("agentgate-read-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let project = base.join("w");
        for folder in ["w/src/deep", "w/w", "other", "w/.git"] {
            std::fs::create_dir_all(base.join(folder)).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("other"), project.join("linked")).unwrap();
        let files = [
            "w/a.rs",
            "w/.env",
            "w/src/a.env",
            "w/src/deep/b.rs",
            "w/w/x.rs",
            "w/linked/a.rs",
            "w/linked/s.env",
            "other/c.rs",
            "other/d.env",
            "w/src/../src/deep/./b.rs",
            "w/src/.env.example",
            "w/src/.env.local",
        ];
        let sets = [
            rules(&[
                ("*", "*", Allow),
                ("read", "*.env", Deny),
                ("read", "*.env.*", Deny),
                ("read", "*.env.example", Allow),
            ]),
            rules(&[("read", "*", Allow), ("read", "src/*", Deny)]),
            rules(&[("read", "*", Allow), ("read", "../*", Ask)]),
            rules(&[("read", "*", Allow), ("read", "../other/*", Deny)]),
            rules(&[("read", "src/*", Allow), ("read", "w/*", Allow)]),
            rules(&[
                ("read", "*", Allow),
                ("read", "w/*", Deny),
                ("read", "*", Allow),
            ]),
        ];
        for worktree in [
            project.clone(),
            base.clone(),
            project.join("src"),
            PathBuf::from("/"),
        ] {
            for set in &sets {
                let read = ReadRules::new(set, &Ruleset::new(), &project, &worktree);
                assert_eq!(read.allows_everything, set.0.len() == 3);
                let mut folders = WalkedFolders::default();
                for file in files.iter().chain(files.iter()) {
                    let path = base.join(file);
                    let fast = read.allows_walked(&path, false, &mut folders);
                    let slow = read.allows_walked_path(&path, false, &mut WalkedFolders::default());
                    assert_eq!(fast, slow, "{file} in {} with {set:?}", worktree.display());
                    assert_eq!(
                        fast,
                        read.allows(&path),
                        "{file} in {} with {set:?}",
                        worktree.display()
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
