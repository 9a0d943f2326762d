//! [`ClientApprover`]: the gate's asks as `session/request_permission`,
//! so the editor is the approval UI. Only what the rules leave to ask
//! arrives here: deny rules never reach the client.

use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallLocation, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::permission::{Answerer, Approver, PermissionRequest, Reply, ReplyKind};

/// The option ids of the answers; the gate's cascades follow from the
/// reply they map to (`always` approves the request's `always` patterns
/// for the project, `always_exact` only its asked patterns, `reject`
/// refuses the session's other pending asks too).
const ONCE: &str = "once";
const ALWAYS: &str = "always";
const ALWAYS_EXACT: &str = "always_exact";
const REJECT: &str = "reject";

/// The turn a session is running, shared by the session (which starts and
/// cancels it) and its approver (which stops waiting when it is cancelled).
#[derive(Debug, Default)]
pub(crate) struct TurnSlot(Mutex<Option<CancellationToken>>);

impl TurnSlot {
    /// Starts a turn; its token is cancelled by [`cancel`](Self::cancel).
    pub(crate) fn start(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        token
    }

    /// Cancels the running turn, if any.
    pub(crate) fn cancel(&self) {
        if let Some(token) = self.0.lock().unwrap_or_else(PoisonError::into_inner).take() {
            token.cancel();
        }
    }

    /// Forgets a finished turn.
    pub(crate) fn finish(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }

    fn current(&self) -> Option<CancellationToken> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Answers asks by asking the client, for one ACP session (sub-agents'
/// asks included: they are shown on the session the editor knows).
pub(crate) struct ClientApprover {
    pub(crate) connection: ConnectionTo<Client>,
    /// The ACP session id, known once the agent (and its session) is built.
    pub(crate) session_id: Arc<Mutex<String>>,
    pub(crate) turn: Arc<TurnSlot>,
}

/// The tool call an ask belongs to, as the client already knows it (by
/// the call id), with a title that says what is asked.
fn tool_call_of(request: &PermissionRequest) -> ToolCallUpdate {
    let id = request
        .tool
        .as_ref()
        .map(|tool| tool.call_id.clone())
        .unwrap_or_else(|| request.id.clone());
    let title = if request.patterns.is_empty() {
        request.permission.clone()
    } else {
        format!("{}: {}", request.permission, request.patterns.join(", "))
    };
    let mut fields = ToolCallUpdateFields::new().title(title);
    if let Some(path) = request.metadata.get("filepath").and_then(Value::as_str) {
        fields = fields.locations(vec![ToolCallLocation::new(path)]);
    }
    ToolCallUpdate::new(id, fields)
}

/// The options the client offers: allow once; each "always" answer the
/// request offers, named by the rules it stores (`Always allow bash "rm *"`,
/// and `Always allow bash exactly "rm -f src/a.txt"` where that is
/// narrower), so the editor shows what an "always" grants; reject once.
pub(crate) fn options_of(request: &PermissionRequest) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    for choice in request.always_choices() {
        let id = match choice.kind {
            ReplyKind::Always => ALWAYS,
            ReplyKind::AlwaysExact => ALWAYS_EXACT,
            _ => continue,
        };
        options.push(PermissionOption::new(
            id,
            choice.label,
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The gate's reply to the option the client chose; anything else (a
/// cancelled request, an unknown id) rejects.
pub(crate) fn reply_of(outcome: &RequestPermissionOutcome) -> Reply {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ONCE => Reply::Once,
            ALWAYS => Reply::Always,
            ALWAYS_EXACT => Reply::AlwaysExact,
            _ => Reply::reject(),
        },
        _ => Reply::reject(),
    }
}

#[async_trait::async_trait]
impl Approver for ClientApprover {
    fn answerer(&self) -> Answerer {
        Answerer::Acp { client: None }
    }

    async fn approve(&self, request: &PermissionRequest) -> Reply {
        let session_id = self
            .session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let ask =
            RequestPermissionRequest::new(session_id, tool_call_of(request), options_of(request));
        let cancel = self.turn.current().unwrap_or_default();
        let sent = self.connection.send_request(ask);
        tokio::select! {
            biased;
            () = cancel.cancelled() => Reply::reject(),
            answer = sent.block_task() => match answer {
                Ok(response) => reply_of(&response.outcome),
                Err(error) => {
                    tracing::warn!(%error, "the client did not answer a permission request; rejecting");
                    Reply::reject()
                }
            },
        }
    }
}

/// The option ids of the trust question.
const TRUST: &str = "trust";
const KEEP_UNTRUSTED: &str = "untrusted";

/// The trust question for the project at `root`, whose configuration
/// would do `lines`: the options, trust (recorded) or keep it untrusted.
pub(crate) fn trust_question(
    session_id: &str,
    root: &std::path::Path,
    lines: &[String],
) -> RequestPermissionRequest {
    let title = format!(
        "Trust the project {}? Its configuration would: {}",
        root.display(),
        lines.join("; ")
    );
    let call = ToolCallUpdate::new(
        "trust_project",
        ToolCallUpdateFields::new()
            .title(title)
            .locations(vec![ToolCallLocation::new(root)]),
    );
    let options = vec![
        PermissionOption::new(
            TRUST,
            "Trust this project (recorded; `agent trust --revoke` undoes it)",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            KEEP_UNTRUSTED,
            "Keep it untrusted",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    RequestPermissionRequest::new(session_id.to_string(), call, options)
}

/// Asks the client whether to trust the project at `root`; only the
/// trust option is a yes (a cancelled or failed request is a no).
pub(crate) async fn ask_trust(
    connection: &ConnectionTo<Client>,
    session_id: &str,
    root: &std::path::Path,
    lines: &[String],
) -> bool {
    let ask = trust_question(session_id, root, lines);
    match connection.send_request(ask).block_task().await {
        Ok(response) => matches!(
            &response.outcome,
            RequestPermissionOutcome::Selected(selected) if &*selected.option_id.0 == TRUST
        ),
        Err(error) => {
            tracing::warn!(%error, "the client did not answer the trust question; the project stays untrusted");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    fn request(always: &[&str]) -> PermissionRequest {
        PermissionRequest {
            id: "per_1".into(),
            session_id: "ses_1".into(),
            permission: "bash".into(),
            patterns: vec!["git push".into()],
            always: always.iter().map(|s| s.to_string()).collect(),
            metadata: serde_json::json!({}),
            tool: None,
        }
    }

    #[test]
    fn always_is_offered_only_when_it_approves_something() {
        let ids = |r: &PermissionRequest| {
            options_of(r)
                .into_iter()
                .map(|o| o.option_id.0.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ids(&request(&["git push *"])),
            ["once", "always", "always_exact", "reject"]
        );
        assert_eq!(ids(&request(&["git push"])), ["once", "always", "reject"]);
        assert_eq!(ids(&request(&[])), ["once", "reject"]);
    }

    #[test]
    fn always_options_are_named_by_the_rules_they_store() {
        let names: Vec<String> = options_of(&request(&["git push *"]))
            .into_iter()
            .map(|o| o.name)
            .collect();
        assert_eq!(
            names,
            [
                "Allow once",
                r#"Always allow bash "git push *""#,
                r#"Always allow bash exactly "git push""#,
                "Reject"
            ]
        );
    }

    #[test]
    fn options_map_onto_the_gate_replies() {
        let selected = |id: &str| {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
        };
        assert_eq!(reply_of(&selected("once")), Reply::Once);
        assert_eq!(reply_of(&selected("always")), Reply::Always);
        assert_eq!(reply_of(&selected("always_exact")), Reply::AlwaysExact);
        assert_eq!(reply_of(&selected("reject")), Reply::reject());
        assert_eq!(reply_of(&selected("unknown")), Reply::reject());
        assert_eq!(
            reply_of(&RequestPermissionOutcome::Cancelled),
            Reply::reject()
        );
    }
}
