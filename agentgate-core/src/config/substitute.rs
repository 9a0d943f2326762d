//! `{env:VAR}` and `{file:path}` in configuration text, replaced before
//! the text is parsed, in opencode's two passes:
//!
//! 1. every `{env:VAR}` becomes the variable's value (empty when unset),
//!    as is, wherever it stands;
//! 2. then every `{file:path}` becomes the file's content, trimmed and
//!    escaped for a JSON string (`path` relative to the config file's
//!    directory, `~/` the home directory), except after a `//` that starts
//!    its line.
//!
//! Because `{env:}` goes first, `{file:{env:HOME}/p.txt}` reads
//! `$HOME/p.txt`.

use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// Replaces the substitutions in `text`, the content of the config file at
/// `file` (`None` for inline content, whose relative paths start at
/// `base`). `env` looks variables up.
pub fn substitute(
    text: &str,
    file: Option<&Path>,
    base: &Path,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let text = substitute_env(text, env);
    substitute_files(&text, file, base, home, &|_| true)
}

/// [`substitute`] as it is done for an untrusted project's layer to find
/// what came from outside the project: every `{env:VAR}` becomes nothing
/// (the environment is the user's), and a `{file:path}` whose file,
/// symbolic links resolved, is not under `root` becomes nothing too.
pub fn substitute_within_project(
    text: &str,
    file: Option<&Path>,
    base: &Path,
    home: Option<&Path>,
    root: &Path,
) -> Result<String, ConfigError> {
    let text = substitute_env(text, &|_| None);
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let inside =
        move |path: &Path| std::fs::canonicalize(path).is_ok_and(|real| real.starts_with(&root));
    substitute_files(&text, file, base, home, &inside)
}

/// The first `{<kind>:…}` token at or after `from`: its start and end (one
/// past the `}`), with at least one character inside, as opencode's
/// `\{kind:[^}]+\}`.
fn next_token(text: &str, kind: &str, from: usize) -> Option<(usize, usize)> {
    let open = format!("{{{kind}:");
    let mut at = from;
    while let Some(found) = text[at..].find(&open) {
        let start = at + found;
        let inner = start + open.len();
        match text[inner..].find('}') {
            Some(0) => at = inner,
            Some(len) => return Some((start, inner + len + 1)),
            None => return None,
        }
    }
    None
}

fn substitute_env(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    while let Some((start, end)) = next_token(text, "env", cursor) {
        out.push_str(&text[cursor..start]);
        let name = &text[start + "{env:".len()..end - 1];
        out.push_str(&env(name).unwrap_or_default());
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    out
}

fn substitute_files(
    text: &str,
    file: Option<&Path>,
    base: &Path,
    home: Option<&Path>,
    readable: &dyn Fn(&Path) -> bool,
) -> Result<String, ConfigError> {
    let shown = file.map_or_else(|| "inline config".to_string(), |f| f.display().to_string());
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    while let Some((start, end)) = next_token(text, "file", cursor) {
        out.push_str(&text[cursor..start]);
        let token = &text[start..end];
        cursor = end;
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        if text[line_start..start].trim_start().starts_with("//") {
            out.push_str(token);
            continue;
        }
        let path = &token["{file:".len()..token.len() - 1];
        let resolved = resolve(path, base, home);
        if !readable(&resolved) {
            continue;
        }
        let content = crate::bounded_read::read_text(&resolved).map_err(|error| {
            let line = text[..start].matches('\n').count() + 1;
            ConfigError::new(
                &shown,
                format!("line {line}"),
                format!(
                    "bad file reference {token} ({}: {error}); fix the path, relative to the config file's directory",
                    resolved.display()
                ),
            )
        })?;
        let escaped = serde_json::to_string(content.trim()).unwrap_or_default();
        let inner = escaped
            .strip_prefix('"')
            .and_then(|e| e.strip_suffix('"'))
            .unwrap_or(&escaped);
        out.push_str(inner);
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// `~/x` under the home directory, an absolute path as is, anything else
/// under `base`.
fn resolve(path: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if Path::new(path).is_absolute() => PathBuf::from(path),
        _ => base.join(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_and_file() {
        let dir = std::env::temp_dir().join(format!("agentgate-core-subst-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("key.txt"), "line \"one\"\nline two\n").unwrap();
        let env = |name: &str| (name == "TOKEN").then(|| "secret".to_string());
        let text = "{\"a\": \"{env:TOKEN}\", \"b\": \"{file:key.txt}\", \"c\": \"{env:NOPE}\"}\n// {file:missing}\n";
        let out = substitute(text, None, &dir, None, &env).unwrap();
        let value: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(value["a"], "secret");
        assert_eq!(value["b"], "line \"one\"\nline two");
        assert_eq!(value["c"], "");
        let err = substitute("{\"x\": \"{file:nope.txt}\"}", None, &dir, None, &env).unwrap_err();
        assert!(err.to_string().contains("nope.txt"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn env_goes_first_so_it_may_build_a_file_path() {
        let dir = std::env::temp_dir().join(format!("agentgate-core-nest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("p.txt"), "  padded prompt \n").unwrap();
        let shown = dir.display().to_string();
        let env = move |name: &str| (name == "DIR").then(|| shown.clone());
        let out = substitute(
            "\"{file:{env:DIR}/p.txt}\"",
            None,
            Path::new("/"),
            None,
            &env,
        )
        .unwrap();
        assert_eq!(out, "\"padded prompt\"");
        // Empty tokens are left alone, as opencode's patterns need a character.
        assert_eq!(
            substitute("{env:}{file:}", None, &dir, None, &env).unwrap(),
            "{env:}{file:}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
