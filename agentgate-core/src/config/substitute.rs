//! `{env:VAR}` and `{file:path}` in configuration text, replaced before
//! the text is parsed, as opencode does: `{env:VAR}` by the variable's value
//! (empty when unset), `{file:path}` by the file's content escaped for a
//! JSON string (`path` relative to the config file's directory, `~/` the
//! home directory). Lines that are `//` comments are left alone.

use std::path::Path;

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
    let shown = file.map_or_else(|| "inline config".to_string(), |f| f.display().to_string());
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with("//") {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        loop {
            let next = [rest.find("{env:"), rest.find("{file:")]
                .into_iter()
                .flatten()
                .min();
            let Some(start) = next else {
                break;
            };
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            let Some(end) = tail.find('}') else {
                out.push_str(tail);
                rest = "";
                break;
            };
            let token = &tail[1..end];
            if let Some(name) = token.strip_prefix("env:") {
                out.push_str(&env(name.trim()).unwrap_or_default());
            } else if let Some(path) = token.strip_prefix("file:") {
                let path = path.trim();
                let resolved = match (path.strip_prefix("~/"), home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ if Path::new(path).is_absolute() => Path::new(path).to_path_buf(),
                    _ => base.join(path),
                };
                let content = std::fs::read_to_string(&resolved).map_err(|error| {
                    ConfigError::new(
                        &shown,
                        format!("line {}", index + 1),
                        format!(
                            "{{file:{path}}} cannot be read ({}: {error}); fix the path, relative to the config file's directory",
                            resolved.display()
                        ),
                    )
                })?;
                let escaped = serde_json::to_string(content.trim_end()).unwrap_or_default();
                let inner = escaped
                    .strip_prefix('"')
                    .and_then(|e| e.strip_suffix('"'))
                    .unwrap_or(&escaped);
                out.push_str(inner);
            }
            rest = &tail[end + 1..];
        }
        out.push_str(rest);
    }
    Ok(out)
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
}
