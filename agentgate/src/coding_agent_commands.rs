//! Custom commands for every host: a prompt that starts with `/NAME`
//! ([`slash_command`]) and [`CodingAgent::prepare_command`], which the
//! ACP server, the HTTP server and the CLI share so a command expands the
//! same way wherever it is typed (its arguments put in the template, its
//! shell lines and `@file` reads run through the session's permission
//! gate; see [`Engine::prepare_command`](crate::Engine::prepare_command)).

use agentgate_core::{CancellationToken, CommandError, PreparedCommand};

use crate::CodingAgent;

/// Why a custom command was not prepared; nothing was sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CustomCommandError {
    /// The project has no command of that name.
    #[error("no command {name:?}; the commands are: {available}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The project's command names, `/`-prefixed and comma-separated
        /// (empty when it has none).
        available: String,
    },
    /// The command exists but could not be prepared (a shell line was
    /// denied or rejected, its agent or model is unusable).
    #[error(transparent)]
    Prepare(#[from] CommandError),
}

/// The command name and the argument text of a prompt that starts with
/// `/NAME` (the name runs to the first whitespace, the arguments are the
/// rest, trimmed); `None` for any other prompt.
///
/// ```
/// use agentgate::slash_command;
/// assert_eq!(slash_command("/review calc.py fast"), Some(("review", "calc.py fast")));
/// assert_eq!(slash_command("/init"), Some(("init", "")));
/// assert_eq!(slash_command("review /tmp"), None);
/// assert_eq!(slash_command("/ nothing"), None);
/// ```
pub fn slash_command(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (name, arguments) = rest.split_at(end);
    if name.is_empty() {
        return None;
    }
    Some((name, arguments.trim()))
}

impl CodingAgent {
    /// Prepares custom command `name` with `arguments` for this agent's
    /// session: the expanded template (and the files it names) as the
    /// prompt's parts, with the command's agent and model, or its
    /// sub-agent plan. Shell lines and file reads ask through the gate
    /// like a model's calls; `cancel` stops the preparation.
    ///
    /// # Errors
    /// [`CustomCommandError::Unknown`] when the project has no such
    /// command; [`CustomCommandError::Prepare`] when it could not be
    /// prepared.
    pub async fn prepare_command(
        &self,
        name: &str,
        arguments: &str,
        cancel: CancellationToken,
    ) -> Result<PreparedCommand, CustomCommandError> {
        let Some(command) = self.commands().get(name) else {
            let available: Vec<String> = self
                .commands()
                .sorted()
                .iter()
                .map(|c| format!("/{}", c.name))
                .collect();
            return Err(CustomCommandError::Unknown {
                name: name.to_string(),
                available: available.join(", "),
            });
        };
        Ok(self
            .engine()
            .prepare_command(&self.session().id, command, arguments, cancel)
            .await?)
    }
}
