//! Conformance runners for the gate's vector kinds, `ask` and
//! `reply_scenario` (opencode §6). Each runner drives a real
//! [`PermissionGate`] service on its own single-threaded tokio runtime, step by
//! step, and compares what happened with the case's `expect`.
//!
//! Outcomes per request id: `allowed` (ask returned `Ok`), `rejected`,
//! `corrected`, `denied`, `pending` (still waiting when the scenario ends)
//! and, for `reply:<id>` keys, `not_found` when that id's (last) reply
//! failed with `NotFound`. A `dispose` step shuts the service down (every
//! pending ask fails with `Rejected`) and continues with a fresh instance,
//! as opencode recreates an instance's state after disposing it.

use std::sync::Arc;

use agentgate_permission::{
    AskRequest, MemoryStore, PermissionError, PermissionGate, Reply, Ruleset,
};
use indexmap::IndexMap;
use serde_json::Value;
use tokio::task::JoinHandle;

/// The project name the runners use.
const PROJECT: &str = "conformance";

/// Runs one `ask` case: a single `ask` against the case's ruleset and
/// approved rules. `Ok` when the result matches `expect`, else `Err`
/// describing the mismatch.
pub fn run_ask(case: &Value) -> Result<(), String> {
    runtime()?.block_on(async {
        let input = case.get("input").ok_or("ask case has no \"input\"")?;
        let permissions = service(case.get("approved"))?;
        let request = ask_request(input)?;
        let task = spawn_ask(&permissions, request);
        settle().await;
        let got = outcome(task).await;

        let expect = case.get("expect").ok_or("ask case has no \"expect\"")?;
        let want = expect
            .get("result")
            .and_then(Value::as_str)
            .ok_or("ask case has no expect.result")?;
        if got.label() != want {
            return Err(format!("expected {want}, got {}", got.describe()));
        }
        if let (Some(rules), Outcome::Finished(Err(PermissionError::Denied { rules: actual }))) =
            (expect.get("relevant_rules"), &got)
        {
            let actual = serde_json::to_value(actual).map_err(|e| e.to_string())?;
            if &actual != rules {
                return Err(format!(
                    "denied with relevant rules {actual}, expected {rules}"
                ));
            }
        }
        let pending = permissions.pending().len();
        let want_pending = usize::from(want == "pending");
        if pending != want_pending {
            return Err(format!(
                "{pending} request(s) pending afterwards, expected {want_pending}"
            ));
        }
        permissions.shutdown();
        Ok(())
    })
}

/// Runs one `reply_scenario` case: its `ask`, `reply` and `dispose` steps in
/// order on one service, then compares `expect.outcomes`,
/// `expect.pending_after` and (when given) `expect.approved_after`.
pub fn run_reply_scenario(case: &Value) -> Result<(), String> {
    runtime()?.block_on(async {
        let steps = case
            .get("steps")
            .and_then(Value::as_array)
            .ok_or("scenario has no \"steps\" array")?;
        let mut permissions = service(case.get("approved"))?;
        let mut asks: IndexMap<String, JoinHandle<Result<(), PermissionError>>> = IndexMap::new();
        let mut replies: IndexMap<String, Result<(), PermissionError>> = IndexMap::new();

        for (index, step) in steps.iter().enumerate() {
            let op = step
                .get("op")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("step {index} has no \"op\""))?;
            match op {
                "ask" => {
                    let request = ask_request(step)?;
                    let label = request.id.clone().unwrap_or_else(|| index.to_string());
                    asks.insert(label, spawn_ask(&permissions, request));
                }
                "reply" => {
                    let id = str_field(step, "id")?;
                    let reply = parse_reply(step)?;
                    replies.insert(id.to_string(), permissions.reply(id, reply));
                }
                "dispose" => {
                    permissions.shutdown();
                    permissions = service(None)?;
                }
                other => return Err(format!("step {index}: unknown op {other:?}")),
            }
            settle().await;
        }

        let mut got: IndexMap<String, Outcome> = IndexMap::new();
        for (label, task) in asks {
            got.insert(label, outcome(task).await);
        }
        for (id, result) in replies {
            got.insert(format!("reply:{id}"), Outcome::Finished(result));
        }

        let expect = case.get("expect").ok_or("scenario has no \"expect\"")?;
        let mut mismatches = Vec::new();
        if let Some(outcomes) = expect.get("outcomes").and_then(Value::as_object) {
            for (key, want) in outcomes {
                let want = want
                    .as_str()
                    .ok_or_else(|| format!("expect.outcomes.{key} is not a string"))?;
                match got.get(key) {
                    None => mismatches.push(format!("{key}: expected {want}, never happened")),
                    Some(outcome) if key.starts_with("reply:") => {
                        let not_found = outcome.label() == "not_found";
                        if not_found != (want == "not_found") {
                            mismatches.push(format!(
                                "{key}: expected {want}, got {}",
                                outcome.describe()
                            ));
                        }
                    }
                    Some(outcome) => {
                        if outcome.label() != want {
                            mismatches.push(format!(
                                "{key}: expected {want}, got {}",
                                outcome.describe()
                            ));
                        }
                    }
                }
            }
        }
        if let Some(want) = expect.get("pending_after") {
            let ids: Vec<String> = permissions.pending().into_iter().map(|r| r.id).collect();
            let actual = serde_json::to_value(&ids).map_err(|e| e.to_string())?;
            if &actual != want {
                mismatches.push(format!("pending afterwards {actual}, expected {want}"));
            }
        }
        if let Some(want) = expect.get("approved_after") {
            let actual = serde_json::to_value(permissions.approved()).map_err(|e| e.to_string())?;
            if &actual != want {
                mismatches.push(format!("approved afterwards {actual}, expected {want}"));
            }
        }
        permissions.shutdown();
        if mismatches.is_empty() {
            Ok(())
        } else {
            Err(mismatches.join("; "))
        }
    })
}

/// What became of one ask (or reply).
enum Outcome {
    Finished(Result<(), PermissionError>),
    Pending,
    Panicked(String),
}

impl Outcome {
    fn label(&self) -> &'static str {
        match self {
            Outcome::Finished(Ok(())) => "allowed",
            Outcome::Finished(Err(PermissionError::Rejected)) => "rejected",
            Outcome::Finished(Err(PermissionError::Corrected { .. })) => "corrected",
            Outcome::Finished(Err(PermissionError::Denied { .. })) => "denied",
            Outcome::Finished(Err(PermissionError::NotFound { .. })) => "not_found",
            Outcome::Finished(Err(_)) => "other_error",
            Outcome::Pending => "pending",
            Outcome::Panicked(_) => "panicked",
        }
    }

    fn describe(&self) -> String {
        match self {
            Outcome::Finished(Err(error)) => format!("{} ({error})", self.label()),
            Outcome::Panicked(why) => format!("panicked ({why})"),
            _ => self.label().to_string(),
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))
}

/// A fresh service whose approvals start as `approved` (a JSON rule list).
fn service(approved: Option<&Value>) -> Result<PermissionGate, String> {
    let approved: Ruleset = match approved {
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| format!("bad \"approved\" rules: {e}"))?,
        None => Ruleset::new(),
    };
    PermissionGate::with_store(
        Arc::new(MemoryStore::with_approved(PROJECT, approved)),
        PROJECT,
    )
    .map_err(|e| e.to_string())
}

/// Lets every spawned task run until it blocks (the runtime has one thread,
/// so after enough yields everything that can progress has).
async fn settle() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

fn spawn_ask(
    permissions: &PermissionGate,
    request: AskRequest,
) -> JoinHandle<Result<(), PermissionError>> {
    let permissions = permissions.clone();
    tokio::spawn(async move { permissions.ask(request).await })
}

async fn outcome(task: JoinHandle<Result<(), PermissionError>>) -> Outcome {
    if !task.is_finished() {
        task.abort();
        return Outcome::Pending;
    }
    match task.await {
        Ok(result) => Outcome::Finished(result),
        Err(error) => Outcome::Panicked(error.to_string()),
    }
}

fn str_field<'a>(value: &'a Value, name: &str) -> Result<&'a str, String> {
    value
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string field {name:?}"))
}

fn strings(value: Option<&Value>, name: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| format!("field {name:?} is not a list of strings: {e}")),
    }
}

/// An `AskRequest` from a vector's ask input or ask step.
fn ask_request(step: &Value) -> Result<AskRequest, String> {
    let session = step
        .get("session")
        .or_else(|| step.get("session_id"))
        .or_else(|| step.get("sessionID"))
        .and_then(Value::as_str)
        .unwrap_or("session_conformance");
    let permission = str_field(step, "permission")?;
    let patterns = strings(step.get("patterns"), "patterns")?;
    let ruleset: Ruleset = match step.get("ruleset") {
        None | Some(Value::Null) => Ruleset::new(),
        Some(value) => {
            serde_json::from_value(value.clone()).map_err(|e| format!("bad \"ruleset\": {e}"))?
        }
    };
    let mut request = AskRequest::new(session, permission, patterns)
        .always(strings(step.get("always"), "always")?)
        .ruleset(ruleset);
    if let Some(id) = step.get("id").and_then(Value::as_str) {
        request = request.id(id);
    }
    if let Some(metadata) = step.get("metadata") {
        request = request.metadata(metadata.clone());
    }
    Ok(request)
}

/// A `Reply` from a reply step (`reply` plus optional `message`).
fn parse_reply(step: &Value) -> Result<Reply, String> {
    let message = step
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string);
    match str_field(step, "reply")? {
        "once" => Ok(Reply::Once),
        "always" => Ok(Reply::Always),
        "reject" => Ok(Reply::Reject { feedback: message }),
        other => Err(format!("unknown reply {other:?}")),
    }
}
