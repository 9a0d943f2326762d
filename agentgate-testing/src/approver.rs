//! An approver that records what it is asked.

use std::sync::{Arc, Mutex, PoisonError};

use agentgate_permission::{Approver, PermissionGate, PermissionRequest, Reply};

/// The requests an approver saw, shared with the test that reads them.
pub type Seen = Arc<Mutex<Vec<PermissionRequest>>>;

/// Records every request, then answers with a fixed reply or a function of
/// the request.
pub struct RecordingApprover {
    answer: Answer,
    seen: Seen,
}

enum Answer {
    Fixed(Reply),
    By(fn(&PermissionRequest) -> Reply),
}

impl RecordingApprover {
    /// Answers every request with `reply`.
    pub fn replying(reply: Reply) -> Self {
        Self::with(Answer::Fixed(reply))
    }

    /// Answers each request with `answer(request)`.
    pub fn answering(answer: fn(&PermissionRequest) -> Reply) -> Self {
        Self::with(Answer::By(answer))
    }

    fn with(answer: Answer) -> Self {
        RecordingApprover {
            answer,
            seen: Arc::default(),
        }
    }

    /// The shared list of requests seen so far (it keeps filling).
    pub fn seen(&self) -> Seen {
        Arc::clone(&self.seen)
    }

    /// A copy of the requests seen so far.
    pub fn requests(&self) -> Vec<PermissionRequest> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Each request seen so far as `<permission> <patterns>`, for example
    /// `read ["/etc/hosts"]`.
    pub fn summaries(&self) -> Vec<String> {
        self.requests().iter().map(summary).collect()
    }

    /// Installs this approver on `permissions`; returns the requests list.
    pub fn install(self, permissions: &PermissionGate) -> Seen {
        let seen = self.seen();
        permissions.set_approver(Arc::new(self));
        seen
    }
}

/// A request as `<permission> <patterns>` (patterns in debug form).
pub fn summary(request: &PermissionRequest) -> String {
    format!("{} {:?}", request.permission, request.patterns)
}

#[async_trait::async_trait]
impl Approver for RecordingApprover {
    async fn approve(&self, request: &PermissionRequest) -> Reply {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        match &self.answer {
            Answer::Fixed(reply) => reply.clone(),
            Answer::By(answer) => answer(request),
        }
    }
}
