//! The bash arity table (§8.3): how many leading tokens of a command make
//! up its "always" pattern, so that approving `git commit -m x` "always"
//! approves `git commit *` and not every `git` command.
//!
//! ```
//! use agentgate_permission::arity;
//! assert_eq!(arity::prefix(&["git", "commit", "-m", "x"]), ["git", "commit"]);
//! assert_eq!(arity::always_pattern(&["npm", "run", "dev"]), "npm run dev *");
//! assert_eq!(arity::prefix(&["sudo", "rm", "-rf", "/"]), ["sudo"]);
//! ```

/// Commands (one or two words) and the number of tokens their "always"
/// pattern keeps.
const TABLE: &[(&str, usize)] = &[
    // 1
    ("cat", 1),
    ("cd", 1),
    ("chmod", 1),
    ("chown", 1),
    ("cp", 1),
    ("echo", 1),
    ("env", 1),
    ("export", 1),
    ("grep", 1),
    ("kill", 1),
    ("killall", 1),
    ("ln", 1),
    ("ls", 1),
    ("mkdir", 1),
    ("mv", 1),
    ("ps", 1),
    ("pwd", 1),
    ("rm", 1),
    ("rmdir", 1),
    ("sleep", 1),
    ("source", 1),
    ("tail", 1),
    ("touch", 1),
    ("unset", 1),
    ("which", 1),
    // 2
    ("bazel", 2),
    ("brew", 2),
    ("bun", 2),
    ("cargo", 2),
    ("cdk", 2),
    ("cf", 2),
    ("cmake", 2),
    ("composer", 2),
    ("consul", 2),
    ("crictl", 2),
    ("deno", 2),
    ("docker", 2),
    ("eksctl", 2),
    ("firebase", 2),
    ("flyctl", 2),
    ("git", 2),
    ("go", 2),
    ("gradle", 2),
    ("helm", 2),
    ("heroku", 2),
    ("hugo", 2),
    ("ip", 2),
    ("kind", 2),
    ("kubectl", 2),
    ("kustomize", 2),
    ("make", 2),
    ("mc", 2),
    ("minikube", 2),
    ("mongosh", 2),
    ("mysql", 2),
    ("mvn", 2),
    ("ng", 2),
    ("npm", 2),
    ("nvm", 2),
    ("nx", 2),
    ("openssl", 2),
    ("pip", 2),
    ("pipenv", 2),
    ("pnpm", 2),
    ("poetry", 2),
    ("podman", 2),
    ("psql", 2),
    ("pulumi", 2),
    ("pyenv", 2),
    ("python", 2),
    ("rake", 2),
    ("rbenv", 2),
    ("redis-cli", 2),
    ("rustup", 2),
    ("serverless", 2),
    ("skaffold", 2),
    ("sls", 2),
    ("sst", 2),
    ("swift", 2),
    ("systemctl", 2),
    ("terraform", 2),
    ("tmux", 2),
    ("turbo", 2),
    ("ufw", 2),
    ("vault", 2),
    ("vercel", 2),
    ("volta", 2),
    ("wp", 2),
    ("yarn", 2),
    // 3
    ("aws", 3),
    ("az", 3),
    ("doctl", 3),
    ("gcloud", 3),
    ("gh", 3),
    ("sfdx", 3),
    ("bun run", 3),
    ("bun x", 3),
    ("cargo add", 3),
    ("cargo run", 3),
    ("consul kv", 3),
    ("deno task", 3),
    ("docker builder", 3),
    ("docker compose", 3),
    ("docker container", 3),
    ("docker image", 3),
    ("docker network", 3),
    ("docker volume", 3),
    ("eksctl create", 3),
    ("git config", 3),
    ("git remote", 3),
    ("git stash", 3),
    ("ip addr", 3),
    ("ip link", 3),
    ("ip netns", 3),
    ("ip route", 3),
    ("kind create", 3),
    ("kubectl kustomize", 3),
    ("kubectl rollout", 3),
    ("mc admin", 3),
    ("npm exec", 3),
    ("npm init", 3),
    ("npm run", 3),
    ("npm view", 3),
    ("openssl req", 3),
    ("openssl x509", 3),
    ("pnpm dlx", 3),
    ("pnpm exec", 3),
    ("pnpm run", 3),
    ("podman container", 3),
    ("podman image", 3),
    ("pulumi stack", 3),
    ("terraform workspace", 3),
    ("vault auth", 3),
    ("vault kv", 3),
    ("yarn dlx", 3),
    ("yarn run", 3),
];

/// Length in bytes of the longest key in the table.
fn longest_key() -> usize {
    TABLE.iter().map(|(k, _)| k.len()).max().unwrap_or(0)
}

/// The arity of `command` (one or more words joined by single spaces), if
/// the table knows it. Case-sensitive.
pub fn lookup(command: &str) -> Option<usize> {
    TABLE.iter().find(|(k, _)| *k == command).map(|(_, n)| *n)
}

/// Whether `tokens[..len]` joined by single spaces equals `key`, without
/// building the joined string.
fn joined_equals<S: AsRef<str>>(tokens: &[S], key: &str) -> bool {
    let mut rest = key;
    for (i, token) in tokens.iter().enumerate() {
        if i > 0 {
            match rest.strip_prefix(' ') {
                Some(r) => rest = r,
                None => return false,
            }
        }
        match rest.strip_prefix(token.as_ref()) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// opencode's `BashArity.prefix` (§8.3): for `len` from `tokens.len()` down
/// to 1, the first `tokens[..len]` (joined with spaces) found in the table
/// with arity `n` gives the first `n` tokens (fewer if there are fewer).
/// No hit gives the first token; no tokens give an empty slice. Flags are
/// not skipped.
pub fn prefix<S: AsRef<str>>(tokens: &[S]) -> &[S] {
    if tokens.is_empty() {
        return tokens;
    }
    let longest = longest_key();
    let mut joined_len: usize =
        tokens.iter().map(|t| t.as_ref().len()).sum::<usize>() + tokens.len() - 1;
    for len in (1..=tokens.len()).rev() {
        if joined_len <= longest {
            let head = &tokens[..len];
            if let Some((_, n)) = TABLE.iter().find(|(k, _)| joined_equals(head, k)) {
                return &tokens[..(*n).min(tokens.len())];
            }
        }
        // Drop the last token (and the space before it) from the joined length.
        joined_len = joined_len.saturating_sub(tokens[len - 1].as_ref().len() + 1);
    }
    &tokens[..1]
}

/// The bash "always" pattern for a command: its [`prefix`] joined by spaces,
/// followed by `" *"` (the bash tool never calls it without tokens).
pub fn always_pattern<S: AsRef<str>>(tokens: &[S]) -> String {
    let head: Vec<&str> = prefix(tokens).iter().map(|t| t.as_ref()).collect();
    format!("{} *", head.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_with_space_is_looked_up_as_joined_text() {
        // opencode joins tokens with spaces before the lookup.
        assert_eq!(prefix(&["git config", "x", "y"]), ["git config", "x", "y"]);
    }

    #[test]
    fn empty() {
        let none: [&str; 0] = [];
        assert!(prefix(&none).is_empty());
    }
}
