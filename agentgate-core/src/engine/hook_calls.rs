//! Where the loop runs its hooks ([`crate::hooks`]): every hook of the
//! engine that wants the event, in registration order; their answers
//! combined (the strictest decision, every context); failures announced
//! and, for gating events, turned into a refusal.

use std::sync::Arc;

use serde_json::{Value, json};

use super::state::EngineState;
use crate::event::Event;
use crate::hooks::{Hook, HookDecision, HookEvent, HookOutcome};

/// The engine's hooks, combined.
#[derive(Debug, Default)]
pub(crate) struct Combined {
    /// The strictest decision.
    pub decision: HookDecision,
    /// The reasons given for it (and for failures).
    pub reasons: Vec<String>,
    /// Every context to add, in hook order.
    pub context: Vec<String>,
}

impl Combined {
    /// The reasons, joined for a message.
    pub fn reason(&self) -> String {
        if self.reasons.is_empty() {
            "refused by a hook".into()
        } else {
            self.reasons.join("; ")
        }
    }
}

/// Runs the hooks of `hooks` that want `event`.
pub(crate) async fn run_hooks(
    engine: &EngineState,
    hooks: &[Arc<dyn Hook>],
    event: &HookEvent,
) -> Combined {
    let mut combined = Combined::default();
    for hook in hooks.iter().filter(|hook| hook.wants(event)) {
        let outcome = match hook.run(event).await {
            Ok(outcome) => outcome,
            Err(error) => {
                let name = hook.name().to_string();
                tracing::warn!(hook = %name, event = %event.hook_event_name, %error, "hook failed");
                engine.events.emit(|| Event::HookFailed {
                    session_id: event.session_id.clone(),
                    hook: name.clone(),
                    event: event.hook_event_name.as_str().to_string(),
                    error: error.to_string(),
                });
                if event.hook_event_name.fails_closed() {
                    // Fail closed: a guard that cannot answer refuses.
                    HookOutcome::deny(format!(
                        "the {} hook `{name}` failed, so this was refused: {error}",
                        event.hook_event_name
                    ))
                } else {
                    continue;
                }
            }
        };
        let HookOutcome {
            decision,
            reason,
            additional_context,
        } = outcome;
        let stricter =
            crate::hooks::strictness(decision) > crate::hooks::strictness(combined.decision);
        if decision != HookDecision::Continue {
            if stricter {
                combined.decision = decision;
            }
            if let Some(reason) = reason {
                combined.reasons.push(reason);
            }
        }
        if let Some(context) = additional_context.filter(|c| !c.trim().is_empty()) {
            combined.context.push(context);
        }
    }
    combined
}

/// The result of a call as `PostToolUse` hooks read it.
pub(crate) fn tool_response(title: &str, output: &str, metadata: &Value) -> Value {
    json!({"title": title, "output": output, "metadata": metadata})
}

/// `output` with the hooks' context after it, marked as such.
pub(crate) fn with_context(output: String, context: &[String]) -> String {
    if context.is_empty() {
        return output;
    }
    let mut out = output;
    for text in context {
        out.push_str("\n\n<hook_context>\n");
        out.push_str(text.trim());
        out.push_str("\n</hook_context>");
    }
    out
}
