//! The bodies of opencode's (1.18) command routes: `GET /command`'s
//! `Command`, and the requests of `POST /session/{id}/command`,
//! `/shell` and `/summarize`.

use serde::{Deserialize, Serialize};
#[cfg(feature = "server")]
use utoipa::ToSchema;

use super::bodies::{ModelChoice, PartInput};

/// A custom command as `GET /command` lists it (opencode's `Command`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct CommandInfo {
    /// The name typed after `/`.
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// The agent that runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// The model that runs it, `provider/model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// `command` (the config or a markdown file) or `skill`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
    /// The prompt template.
    pub(crate) template: String,
    /// Whether it runs as a sub-agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subtask: Option<bool>,
    /// The placeholders its template uses (`$1`, `$ARGUMENTS`).
    #[serde(default)]
    pub(crate) hints: Vec<String>,
}

/// The body of `POST /session/{id}/command`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommandBody {
    /// The command's name (without `/`).
    pub(crate) command: String,
    /// The argument text (`$ARGUMENTS`, split for `$1`…).
    #[serde(default)]
    pub(crate) arguments: String,
    /// The agent, when the command names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// The model (`provider/model`), when the command names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// Accepted and ignored: the server picks message ids.
    #[serde(default, rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub(crate) message_id: Option<String>,
    /// Accepted and ignored: model variants are not supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) variant: Option<String>,
    /// Files added after the expanded template.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) parts: Vec<PartInput>,
}

/// The body of `POST /session/{id}/shell`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct ShellBody {
    /// The agent whose `bash` rules judge the command.
    pub(crate) agent: String,
    /// The model the messages are recorded with (no model is called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<ModelChoice>,
    /// The shell command line.
    pub(crate) command: String,
    /// Accepted and ignored: the server picks message ids.
    #[serde(default, rename = "messageID", skip_serializing_if = "Option::is_none")]
    pub(crate) message_id: Option<String>,
}

/// The body of `POST /session/{id}/summarize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(ToSchema))]
pub(crate) struct SummarizeBody {
    /// The provider of the model that writes the summary (unless the
    /// `compaction` agent names its own).
    #[serde(rename = "providerID")]
    pub(crate) provider_id: String,
    /// That model.
    #[serde(rename = "modelID")]
    pub(crate) model_id: String,
    /// Accepted and ignored: a compaction asked for by hand adds no
    /// message for the model to continue from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) auto: Option<bool>,
}
