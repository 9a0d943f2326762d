//! The routes, their handlers and the OpenAPI document (`GET /doc`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{Value, json};
use utoipa::OpenApi;

use super::answers::JsonBody;
use super::state::{Failure, Shared, parts_of};
use super::turn_task::{ShownModel, model_of, start_work};
use super::wire::{
    CreateSession, ErrorBody, ErrorData, ForkSession, Health, MessageContext, MessageWithParts,
    PermissionInfo, PromptBody, ReplyBody, RespondBody, SessionInfo, UpdateSession, with_parts,
};
use crate::protocol::ServerEvent;
use crate::{AgentEnvironment, Agents, CLI_APP, Message, ModelRef, Role};

/// The routes served, as the unknown-route answer lists them.
pub(crate) const ROUTES: &[&str] = &[
    "GET /global/health",
    "GET /event",
    "GET /session",
    "POST /session",
    "GET /session/{sessionID}",
    "DELETE /session/{sessionID}",
    "PATCH /session/{sessionID}",
    "POST /session/{sessionID}/fork",
    "POST /session/{sessionID}/revert",
    "POST /session/{sessionID}/unrevert",
    "GET /session/{sessionID}/diff",
    "GET /session/{sessionID}/message",
    "POST /session/{sessionID}/message",
    "POST /session/{sessionID}/prompt_async",
    "POST /session/{sessionID}/abort",
    "POST /session/{sessionID}/permissions/{permissionID}",
    "GET /permission",
    "POST /permission/{requestID}/reply",
    "GET /agent",
    "GET /command",
    "POST /session/{sessionID}/command",
    "POST /session/{sessionID}/shell",
    "POST /session/{sessionID}/summarize",
    "GET /config",
    "GET /audit",
    "GET /doc",
];

type Shared_ = State<Arc<Shared>>;

/// The router of `shared`, without the guard and CORS layers.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(super::page::index))
        .route("/page/app.js", get(super::page::script))
        .route("/page/app.css", get(super::page::style))
        .route("/global/health", get(health))
        .route("/event", get(events))
        .route("/session", get(list_sessions).post(create_session))
        .route(
            "/session/{session_id}",
            get(get_session)
                .delete(delete_session)
                .patch(update_session),
        )
        .route("/session/{session_id}/fork", post(fork_session))
        .route(
            "/session/{session_id}/revert",
            post(super::revert_routes::revert),
        )
        .route(
            "/session/{session_id}/unrevert",
            post(super::revert_routes::unrevert),
        )
        .route(
            "/session/{session_id}/diff",
            get(super::revert_routes::diff),
        )
        .route(
            "/session/{session_id}/message",
            get(list_messages).post(prompt),
        )
        .route("/session/{session_id}/prompt_async", post(prompt_async))
        .route("/session/{session_id}/abort", post(abort))
        .route(
            "/session/{session_id}/permissions/{permission_id}",
            post(respond),
        )
        .route("/permission", get(list_permissions))
        .route("/permission/{request_id}/reply", post(reply))
        .route("/agent", get(agents))
        .route("/command", get(super::command_routes::list_commands))
        .route(
            "/session/{session_id}/command",
            post(super::command_routes::run_command),
        )
        .route(
            "/session/{session_id}/shell",
            post(super::shell_routes::shell),
        )
        .route(
            "/session/{session_id}/summarize",
            post(super::shell_routes::summarize),
        )
        .route("/config", get(config))
        .route("/audit", get(super::audit_route::audit))
        .route("/project/trust", get(project_trust))
        .route("/doc", get(doc))
        .fallback(not_found)
        .with_state(shared)
}

async fn not_found(request: Request) -> Response {
    let body = ErrorBody {
        name: "NotFoundError".to_string(),
        data: ErrorData {
            message: format!(
                "{} {} is not served here",
                request.method(),
                request.uri().path()
            ),
            routes: Some(
                ROUTES
                    .iter()
                    .chain(super::page::ROUTES)
                    .map(|r| r.to_string())
                    .collect(),
            ),
        },
    };
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

#[utoipa::path(get, path = "/global/health", responses((status = 200, body = Health)))]
async fn health() -> Json<Health> {
    Json(Health {
        healthy: true,
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Server-sent events: `server.connected`, then every event as
/// `{id, type, properties}`.
#[utoipa::path(get, path = "/event", responses((status = 200, description = "text/event-stream of {id, type, properties}")))]
async fn events(State(shared): Shared_) -> Response {
    shared.bus.sse(shared.stop.clone()).into_response()
}

async fn session_info(shared: &Shared, session: &crate::Session) -> SessionInfo {
    shared.session_info(session).await
}

#[utoipa::path(get, path = "/session", responses((status = 200, body = Vec<SessionInfo>)))]
async fn list_sessions(State(shared): Shared_) -> Result<Json<Vec<SessionInfo>>, Failure> {
    let sessions = shared.store.sessions().await?;
    let mut out = Vec::with_capacity(sessions.len());
    for session in sessions.iter().filter(|s| s.directory == shared.directory) {
        out.push(session_info(&shared, session).await);
    }
    // Most recently updated first, as opencode lists them.
    out.sort_by_key(|s| std::cmp::Reverse(s.time.updated));
    Ok(Json(out))
}

#[utoipa::path(post, path = "/session", request_body = CreateSession, responses((status = 200, body = SessionInfo)))]
async fn create_session(
    State(shared): Shared_,
    body: axum::body::Bytes,
) -> Result<Json<SessionInfo>, Failure> {
    // opencode's clients send no body at all when nothing is set.
    let body: CreateSession = if body.iter().all(u8::is_ascii_whitespace) {
        CreateSession::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Failure::BadRequest(format!("the body is not a session: {e}")))?
    };
    let served = shared.create(body.agent, body.title).await?;
    let session = shared.store.session(&served.agent.session().id).await?;
    let info = SessionInfo::of(&session, None);
    shared
        .bus
        .session_changed(ServerEvent::SessionCreated, &info.id, &info);
    Ok(Json(info))
}

#[utoipa::path(get, path = "/session/{sessionID}", params(("sessionID" = String, Path)), responses((status = 200, body = SessionInfo), (status = 404, body = ErrorBody)))]
async fn get_session(
    State(shared): Shared_,
    Path(session_id): Path<String>,
) -> Result<Json<SessionInfo>, Failure> {
    let session = shared.store.session(&session_id).await?;
    Ok(Json(session_info(&shared, &session).await))
}

/// Aborts the session's turn (rejecting its asks), forgets its agent and
/// deletes it from the store.
#[utoipa::path(delete, path = "/session/{sessionID}", params(("sessionID" = String, Path)), responses((status = 200, body = bool), (status = 404, body = ErrorBody)))]
async fn delete_session(
    State(shared): Shared_,
    Path(session_id): Path<String>,
) -> Result<Json<bool>, Failure> {
    let session = shared.store.session(&session_id).await?;
    shared.abort(&session_id);
    shared.forget(&session_id);
    shared.store.delete_session(&session_id).await?;
    let info = SessionInfo::of(&session, None);
    shared
        .bus
        .session_changed(ServerEvent::SessionDeleted, &session_id, &info);
    Ok(Json(true))
}

/// Sets the session's title (the other fields of opencode's body are
/// accepted and left alone).
#[utoipa::path(patch, path = "/session/{sessionID}", params(("sessionID" = String, Path)), request_body = UpdateSession, responses((status = 200, body = SessionInfo), (status = 404, body = ErrorBody)))]
async fn update_session(
    State(shared): Shared_,
    Path(session_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<SessionInfo>, Failure> {
    let body: UpdateSession = if body.iter().all(u8::is_ascii_whitespace) {
        UpdateSession::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Failure::BadRequest(format!("the body is not a session update: {e}")))?
    };
    let session = match body.title {
        Some(title) => shared.store.rename_session(&session_id, &title).await?,
        None => shared.store.session(&session_id).await?,
    };
    let info = session_info(&shared, &session).await;
    shared
        .bus
        .session_changed(ServerEvent::SessionUpdated, &info.id, &info);
    Ok(Json(info))
}

/// A new session with the messages before `messageID` (all without it),
/// as opencode's fork.
#[utoipa::path(post, path = "/session/{sessionID}/fork", params(("sessionID" = String, Path)), request_body = ForkSession, responses((status = 200, body = SessionInfo), (status = 404, body = ErrorBody)))]
async fn fork_session(
    State(shared): Shared_,
    Path(session_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<SessionInfo>, Failure> {
    let body: ForkSession = if body.iter().all(u8::is_ascii_whitespace) {
        ForkSession::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Failure::BadRequest(format!("the body is not a fork request: {e}")))?
    };
    let session = shared
        .store
        .fork_session(&session_id, body.message_id.as_deref())
        .await?;
    let info = session_info(&shared, &session).await;
    shared
        .bus
        .session_changed(ServerEvent::SessionCreated, &info.id, &info);
    Ok(Json(info))
}

fn listed(shared: &Shared, messages: &[Message], model: &ShownModel) -> Vec<MessageWithParts> {
    let mut parent: Option<&str> = None;
    messages
        .iter()
        .map(|message| {
            if message.role == Role::User {
                parent = Some(&message.id);
            }
            with_parts(
                message,
                &MessageContext {
                    directory: &shared.directory,
                    provider_id: &model.0,
                    model_id: &model.1,
                    parent_id: parent,
                    price: model.2,
                },
            )
        })
        .collect()
}

#[utoipa::path(get, path = "/session/{sessionID}/message", params(("sessionID" = String, Path)), responses((status = 200, body = Vec<MessageWithParts>), (status = 404, body = ErrorBody)))]
async fn list_messages(
    State(shared): Shared_,
    Path(session_id): Path<String>,
) -> Result<Json<Vec<MessageWithParts>>, Failure> {
    let messages = shared.messages(&session_id).await?;
    let model = model_of(&shared, &session_id).await;
    Ok(Json(listed(&shared, &messages, &model)))
}

/// Starts the prompt's turn on its own task (it runs to its end even if
/// the client goes away); the task's handle.
async fn start(
    shared: &Arc<Shared>,
    session_id: &str,
    body: PromptBody,
) -> Result<tokio::task::JoinHandle<Result<MessageWithParts, Failure>>, Failure> {
    if body.no_reply == Some(true) {
        return Err(Failure::BadRequest(
            "noReply is not supported: every prompt runs a turn".into(),
        ));
    }
    let parts = parts_of(body.parts)?;
    let served = shared.served(session_id).await?;
    let model = body.model.map(|m| ModelRef {
        provider_id: m.provider_id,
        model_id: m.model_id,
    });
    Ok(start_work(
        shared,
        served,
        super::state::Work::Prompt(parts),
        (body.agent, model),
        crate::PromptOptions::default(),
    ))
}

/// Runs a prompt; answers the assistant message when the turn ends. A
/// prompt sent while the session is busy waits for the turns before it.
#[utoipa::path(post, path = "/session/{sessionID}/message", params(("sessionID" = String, Path)), request_body = PromptBody, responses((status = 200, body = MessageWithParts), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
async fn prompt(
    State(shared): Shared_,
    Path(session_id): Path<String>,
    JsonBody(body): JsonBody<PromptBody>,
) -> Result<Json<MessageWithParts>, Failure> {
    let task = start(&shared, &session_id, body).await?;
    match task.await {
        Ok(answer) => answer.map(Json),
        Err(error) => Err(Failure::Internal(format!(
            "the turn's task failed: {error}"
        ))),
    }
}

/// Starts a prompt and answers 204 at once; follow `GET /event`.
#[utoipa::path(post, path = "/session/{sessionID}/prompt_async", params(("sessionID" = String, Path)), request_body = PromptBody, responses((status = 204), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn prompt_async(
    State(shared): Shared_,
    Path(session_id): Path<String>,
    JsonBody(body): JsonBody<PromptBody>,
) -> Result<StatusCode, Failure> {
    let task = start(&shared, &session_id, body).await?;
    tokio::spawn(async move {
        if let Ok(Err(failure)) = task.await {
            tracing::warn!(?failure, "an asynchronous prompt failed");
        }
    });
    Ok(StatusCode::NO_CONTENT)
}

/// Rejects the session's pending asks and cancels its turn (and the
/// prompts queued behind it).
#[utoipa::path(post, path = "/session/{sessionID}/abort", params(("sessionID" = String, Path)), responses((status = 200, body = bool), (status = 404, body = ErrorBody)))]
async fn abort(
    State(shared): Shared_,
    Path(session_id): Path<String>,
) -> Result<Json<bool>, Failure> {
    shared.store.session(&session_id).await?;
    shared.abort(&session_id);
    Ok(Json(true))
}

/// The pending asks of every process sharing the relay, oldest first.
#[utoipa::path(get, path = "/permission", responses((status = 200, body = Vec<PermissionInfo>)))]
async fn list_permissions(State(shared): Shared_) -> Result<Json<Vec<PermissionInfo>>, Failure> {
    let pending = shared
        .relay
        .pending()
        .await
        .map_err(|e| Failure::Internal(e.to_string()))?;
    Ok(Json(pending.iter().map(PermissionInfo::of).collect()))
}

async fn answer(
    shared: &Arc<Shared>,
    request_id: &str,
    reply: crate::permission::Reply,
    remote: Option<Extension<ConnectInfo<SocketAddr>>>,
) -> Result<Json<bool>, Failure> {
    let answered_by = crate::permission::Answerer::Http {
        remote: remote.map(|Extension(ConnectInfo(address))| address.to_string()),
    };
    if super::ask_answers::reply(shared, request_id, reply, answered_by).await? {
        Ok(Json(true))
    } else {
        Err(Failure::NotFound(format!(
            "permission request {request_id} is not pending (answered, withdrawn, or never asked)"
        )))
    }
}

/// Answers an ask: `once`, `always`, `always_exact` (an extension: only
/// the asked patterns), or `reject` (with `message`: the
/// model reads it as feedback).
#[utoipa::path(post, path = "/permission/{requestID}/reply", params(("requestID" = String, Path)), request_body = ReplyBody, responses((status = 200, body = bool), (status = 404, body = ErrorBody)))]
async fn reply(
    State(shared): Shared_,
    Path(request_id): Path<String>,
    remote: Option<Extension<ConnectInfo<SocketAddr>>>,
    JsonBody(body): JsonBody<ReplyBody>,
) -> Result<Json<bool>, Failure> {
    answer(&shared, &request_id, body.reply.reply(body.message), remote).await
}

/// opencode's first route for answering an ask.
#[utoipa::path(post, path = "/session/{sessionID}/permissions/{permissionID}", params(("sessionID" = String, Path), ("permissionID" = String, Path)), request_body = RespondBody, responses((status = 200, body = bool), (status = 404, body = ErrorBody)))]
async fn respond(
    State(shared): Shared_,
    Path((_session_id, permission_id)): Path<(String, String)>,
    remote: Option<Extension<ConnectInfo<SocketAddr>>>,
    JsonBody(body): JsonBody<RespondBody>,
) -> Result<Json<bool>, Failure> {
    answer(&shared, &permission_id, body.response.reply(None), remote).await
}

/// The project's agents (built-in and configured).
#[utoipa::path(get, path = "/agent", responses((status = 200, body = Vec<Object>)))]
async fn agents(State(shared): Shared_) -> Json<Vec<Value>> {
    let Some(config) = &shared.config else {
        return Json(Vec::new());
    };
    let environment = AgentEnvironment::detect(CLI_APP, shared.directory.to_string_lossy());
    let permission = config.permission.clone().unwrap_or_default();
    let agents = Agents::from_config(
        &environment,
        &permission,
        &config.agents,
        config.default_agent.clone(),
    );
    Json(
        agents
            .list()
            .into_iter()
            .map(|agent| {
                let mut value = serde_json::to_value(agent).unwrap_or(Value::Null);
                if let Some(object) = value.as_object_mut() {
                    object.entry("options").or_insert_with(|| json!({}));
                    if let Some(top_p) = object.remove("top_p") {
                        object.insert("topP".into(), top_p);
                    }
                    if let Some(model) = object.remove("model")
                        && let Some(text) = model.as_str()
                        && let Some(model) = ModelRef::parse(text)
                    {
                        object.insert(
                            "model".into(),
                            json!({"providerID": model.provider_id, "modelID": model.model_id}),
                        );
                    }
                }
                value
            })
            .collect(),
    )
}

/// Keys whose values are secrets, redacted from `GET /config`.
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "password",
        "authorization",
        "headers",
        "environment",
        "env",
    ]
    .iter()
    .any(|s| key.contains(s))
}

fn redact(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if secret_key(key) && !value.is_null() {
                    *value = Value::String("[redacted]".into());
                } else {
                    redact(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// The directory's configuration, secrets (keys, tokens, headers,
/// environments) redacted.
#[utoipa::path(get, path = "/config", responses((status = 200, body = Object)))]
async fn config(State(shared): Shared_) -> Json<Value> {
    let mut value = shared
        .config
        .as_ref()
        .map(|c| Value::Object(c.value.clone()))
        .unwrap_or_else(|| json!({}));
    redact(&mut value);
    Json(value)
}

/// Whether the served project's configuration is trusted (an extension:
/// opencode trusts every project): `trusted`, the `state`
/// (`not_needed`, `trusted`, `untrusted`, `changed`) and, when not
/// trusted, one line per thing its configuration was not allowed to do
/// (start a process, redirect a provider, allow what the user's rules
/// ask). The approval page shows them.
#[utoipa::path(get, path = "/project/trust", responses((status = 200, body = Object)))]
async fn project_trust(State(shared): Shared_) -> Json<Value> {
    use crate::ProjectTrust;
    let state = match &shared.trust {
        ProjectTrust::NotNeeded => "not_needed",
        ProjectTrust::Trusted => "trusted",
        ProjectTrust::Changed { .. } => "changed",
        _ => "untrusted",
    };
    Json(json!({
        "trusted": shared.trust.is_trusted(),
        "state": state,
        "lines": shared.trust.lines(),
    }))
}

/// This document.
#[utoipa::path(get, path = "/doc", responses((status = 200, body = Object)))]
async fn doc() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "agentgate",
        description = "opencode's server API, as agentgate serves it"
    ),
    paths(
        health,
        events,
        list_sessions,
        create_session,
        get_session,
        delete_session,
        update_session,
        fork_session,
        super::revert_routes::revert,
        super::revert_routes::unrevert,
        super::revert_routes::diff,
        list_messages,
        prompt,
        prompt_async,
        abort,
        list_permissions,
        reply,
        respond,
        agents,
        super::command_routes::list_commands,
        super::command_routes::run_command,
        super::shell_routes::shell,
        super::shell_routes::summarize,
        config,
        super::audit_route::audit,
        project_trust,
        doc
    )
)]
pub(crate) struct ApiDoc;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn secrets_are_redacted_from_the_config() {
        let mut config = json!({
            "model": "mock/m",
            "provider": {"mock": {"options": {"apiKey": "sk-1", "baseURL": "http://x"}}},
            "mcp": {"s": {"environment": {"T": "t"}, "command": ["x"]}}
        });
        redact(&mut config);
        assert_eq!(
            config["provider"]["mock"]["options"]["apiKey"],
            "[redacted]"
        );
        assert_eq!(config["provider"]["mock"]["options"]["baseURL"], "http://x");
        assert_eq!(config["mcp"]["s"]["environment"], "[redacted]");
        assert_eq!(config["model"], "mock/m");
    }

    #[test]
    fn the_document_names_every_route() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        for route in ROUTES {
            let (method, path) = route.split_once(' ').unwrap();
            let entry = &doc["paths"][path][method.to_ascii_lowercase()];
            assert!(entry.is_object(), "{route} missing from /doc");
        }
        assert!(doc["components"]["schemas"]["SessionInfo"].is_object());
    }
}
