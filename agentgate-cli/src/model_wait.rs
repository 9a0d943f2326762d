//! The wait for a model's first byte, named while it lasts: a slow local
//! model (or a provider queueing the request) would otherwise look like a
//! hang, since nothing is printed until the answer starts.

use std::time::Duration;

use agentgate_core::{Event, Part, Role, TurnEvent};
use tokio::time::Instant;

/// After how long a model that has not started answering is named.
pub const SLOW_MODEL: Duration = Duration::from_secs(2);

/// How often the line is repeated while the wait goes on.
pub const REPEAT: Duration = Duration::from_secs(5);

/// What a step's stream has shown so far, as far as the wait is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSignal {
    /// A request to the model went out (a step began).
    Requested,
    /// Something came back, or the step ended: the wait is over.
    Answered,
    /// Nothing that starts or ends the wait.
    Other,
}

/// What `item` of a turn of session `root` means for the wait: an
/// assistant message of `root` is created when its step's request goes
/// out; anything else of that session (a delta, a part, the step's end,
/// a retry, an error, an ask) but the step's own start marker and status
/// changes means the model answered or the step is over. Sub-agents'
/// steps show as their task call.
pub fn signal_of(item: &TurnEvent, root: &str) -> StepSignal {
    let event = match item {
        TurnEvent::Event(event) => event,
        TurnEvent::Finished(_) => return StepSignal::Answered,
        _ => return StepSignal::Other,
    };
    if event.session_id() != root {
        return StepSignal::Other;
    }
    match event {
        Event::MessageCreated {
            role: Role::Assistant,
            ..
        } => StepSignal::Requested,
        Event::MessageCreated { .. }
        | Event::SessionStatus { .. }
        | Event::PartCreated {
            part: Part::StepStart { .. },
            ..
        } => StepSignal::Other,
        _ => StepSignal::Answered,
    }
}

/// How long the current step has waited for its first byte.
#[derive(Debug)]
pub struct ModelWait {
    model: String,
    since: Option<Instant>,
    shown: Option<u64>,
}

impl ModelWait {
    /// A wait on `model` (`provider/model`, as the line names it).
    pub fn new(model: impl Into<String>) -> Self {
        ModelWait {
            model: model.into(),
            since: None,
            shown: None,
        }
    }

    /// Follows one signal of the step.
    pub fn follow(&mut self, signal: StepSignal) {
        match signal {
            StepSignal::Requested => {
                self.since = Some(Instant::now());
                self.shown = None;
            }
            StepSignal::Answered => self.since = None,
            StepSignal::Other => {}
        }
    }

    /// The seconds waited, when a line is due: first after
    /// [`SLOW_MODEL`], then every [`REPEAT`] while nothing has come.
    pub fn due(&mut self) -> Option<u64> {
        let waited = self.since?.elapsed();
        if waited < SLOW_MODEL {
            return None;
        }
        let seconds = waited.as_secs();
        if self
            .shown
            .is_some_and(|last| seconds < last + REPEAT.as_secs())
        {
            return None;
        }
        self.shown = Some(seconds);
        Some(seconds)
    }

    /// Names the model waited on from now (a server reports it per step).
    pub fn rename(&mut self, model: String) {
        self.model = model;
    }

    /// The model waited on.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The line for `seconds` of waiting: `waiting for ollama/qwen3, 5 s`.
    pub fn line(&self, seconds: u64) -> String {
        format!("waiting for {}, {seconds} s", self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_silent_model_is_named_after_two_seconds_then_every_five() {
        let mut wait = ModelWait::new("local/qwen3");
        assert_eq!(wait.due(), None, "no request, no wait");
        wait.follow(StepSignal::Requested);
        let mut lines = Vec::new();
        for _ in 0..13 {
            tokio::time::advance(Duration::from_secs(1)).await;
            if let Some(seconds) = wait.due() {
                lines.push(wait.line(seconds));
            }
        }
        assert_eq!(
            lines,
            [
                "waiting for local/qwen3, 2 s",
                "waiting for local/qwen3, 7 s",
                "waiting for local/qwen3, 12 s"
            ]
        );
        wait.follow(StepSignal::Answered);
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(wait.due(), None, "the first byte ends the wait");
    }

    #[tokio::test(start_paused = true)]
    async fn a_model_that_answers_quickly_is_never_named() {
        let mut wait = ModelWait::new("local/qwen3");
        wait.follow(StepSignal::Requested);
        tokio::time::advance(Duration::from_millis(1900)).await;
        wait.follow(StepSignal::Other);
        assert_eq!(wait.due(), None);
        wait.follow(StepSignal::Answered);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(wait.due(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn each_step_waits_afresh() {
        let mut wait = ModelWait::new("m");
        wait.follow(StepSignal::Requested);
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(wait.due(), Some(3));
        wait.follow(StepSignal::Answered);
        wait.follow(StepSignal::Requested);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(wait.due(), Some(2), "a new step is announced again");
    }
}
