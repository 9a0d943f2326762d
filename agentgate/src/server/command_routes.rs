//! The custom command routes, in opencode's shapes: `GET /command` lists
//! the served project's commands, `POST /session/{id}/command` runs one
//! as `agent chat` runs `/NAME ARGS` (its template's shell lines and file
//! reads ask through the server's gate like a model's calls, so a client
//! answers them as it answers any ask), and answers the turn's assistant
//! message.

use std::sync::Arc;

use agentgate_core::commands::{CommandSource, template_hints};
use axum::Json;
use axum::extract::{Path, State};

use super::answers::JsonBody;
use super::state::{Failure, Served, Shared, parts_of};
use super::wire::{CommandBody, CommandInfo, MessageWithParts};
use crate::{Command, PreparedCommand};

/// A command as opencode lists it.
fn info_of(command: &Command) -> CommandInfo {
    let source = match command.source {
        CommandSource::Skill(_) => "skill",
        _ => "command",
    };
    CommandInfo {
        name: command.name.clone(),
        description: command.description.clone(),
        agent: command.agent.clone(),
        model: command.model.clone(),
        source: Some(source.to_string()),
        template: command.template.clone(),
        subtask: command.subtask,
        hints: template_hints(&command.template),
    }
}

/// The served project's custom commands, by name.
#[utoipa::path(get, path = "/command", responses((status = 200, body = Vec<CommandInfo>)))]
pub(crate) async fn list_commands(
    State(shared): State<Arc<Shared>>,
) -> Result<Json<Vec<CommandInfo>>, Failure> {
    Ok(Json(
        shared.commands.sorted().into_iter().map(info_of).collect(),
    ))
}

/// Runs custom command `command` with `arguments` on the session (the
/// body's agent and model apply when the command names none); answers
/// the assistant message when the turn ends. A command that runs as a
/// sub-agent is recorded as opencode records it (a user message with its
/// `subtask` part, then an assistant message with the `task` call, asked
/// under the `task` rules); the answer is that message.
#[utoipa::path(post, path = "/session/{sessionID}/command", params(("sessionID" = String, Path)), request_body = CommandBody, responses((status = 200, body = MessageWithParts), (status = 400, body = super::wire::ErrorBody), (status = 404, body = super::wire::ErrorBody)))]
pub(crate) async fn run_command(
    State(shared): State<Arc<Shared>>,
    Path(session_id): Path<String>,
    JsonBody(body): JsonBody<CommandBody>,
) -> Result<Json<MessageWithParts>, Failure> {
    let served = shared.served(&session_id).await?;
    let prepared = prepare(&served, &body).await?;
    let work = match prepared.subtask {
        Some(plan) => super::state::Work::Subtask(plan),
        None => {
            let mut parts = prepared.parts;
            if !body.parts.is_empty() {
                parts.extend(parts_of(body.parts)?);
            }
            super::state::Work::Prompt(parts)
        }
    };
    let task = super::turn_task::start_work(&shared, served, work, (None, None), prepared.options);
    task.await
        .map_err(|error| Failure::Internal(format!("the turn's task failed: {error}")))?
        .map(Json)
}

/// Finds the body's command and prepares it on `served`'s session.
async fn prepare(served: &Served, body: &CommandBody) -> Result<PreparedCommand, Failure> {
    let agent = &served.agent;
    let Some(found) = agent.commands().get(&body.command) else {
        let names: Vec<&str> = agent
            .commands()
            .sorted()
            .into_iter()
            .map(|c| c.name.as_str())
            .collect();
        return Err(Failure::NotFound(format!(
            "no command {:?}; the commands are: {}",
            body.command,
            names.join(", ")
        )));
    };
    let mut command = found.clone();
    if command.agent.is_none() {
        command.agent.clone_from(&body.agent);
    }
    if command.model.is_none() {
        command.model.clone_from(&body.model);
    }
    agent
        .engine()
        .prepare_command(
            &agent.session().id,
            &command,
            &body.arguments,
            served.epoch().child_token(),
        )
        .await
        .map_err(|error| Failure::BadRequest(error.to_string()))
}
