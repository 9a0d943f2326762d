//! What `agent` exits with when a command cannot run: one typed error,
//! each variant saying what to change (a flag, a config key, the
//! environment). `main` prints it through the renderer (it may quote a
//! server, a model or a project) and exits with status 2.

use crate::permission_cli::ProjectError;

/// Why a command of `agent` could not run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The tokio runtime the async commands run on could not start.
    #[error(
        "cannot start the async runtime: {0} (the process is out of threads or file descriptors: raise `ulimit -u` or `ulimit -n`)"
    )]
    Runtime(#[source] std::io::Error),
    /// Standard output is closed or full.
    #[error("cannot write to stdout: {0}")]
    Stdout(#[source] std::io::Error),
    /// The prompt was to come from standard input, which could not be read.
    #[error("cannot read the prompt from stdin: {0} (pass the prompt as an argument instead)")]
    Stdin(#[source] std::io::Error),
    /// Neither the arguments nor standard input held a prompt.
    #[error("no prompt: pass one as an argument or on stdin")]
    NoPrompt,
    /// The working directory is gone or unreadable.
    #[error("no current directory: {0} (run `agent` from a directory that exists)")]
    CurrentDir(#[source] std::io::Error),
    /// The project's configuration (`--config FILE`, `opencode.json(c)`,
    /// `.opencode/agents/`) could not be read; the message names the file
    /// and the key.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// `agent permission eval` could not read its requests or write its
    /// answers.
    #[error("eval: {0}")]
    Eval(#[source] std::io::Error),
    /// A command failed; its message says what to change (each command
    /// names its own flags and keys).
    #[error("{0}")]
    Command(String),
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError::Command(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_message_says_what_to_change() {
        let io = || std::io::Error::other("boom");
        let cases = [
            (CliError::Runtime(io()), "ulimit"),
            (CliError::Stdin(io()), "as an argument"),
            (CliError::NoPrompt, "as an argument or on stdin"),
            (CliError::CurrentDir(io()), "a directory that exists"),
            (CliError::Eval(io()), "eval: boom"),
        ];
        for (error, hint) in cases {
            let message = error.to_string();
            assert!(message.contains(hint), "{message}");
        }
    }

    #[test]
    fn project_and_command_errors_keep_their_own_words() {
        let project = CliError::from(ProjectError("opencode.json: bad `permission`".into()));
        assert_eq!(project.to_string(), "opencode.json: bad `permission`");
        let command = CliError::from(String::from("--model: unknown provider"));
        assert_eq!(command.to_string(), "--model: unknown provider");
    }
}
