//! The approval gate (opencode §6): the [`PermissionGate`] service that tools
//! `await` before a side effect, and the [`PermissionEvent`]s it publishes.
//! The user-facing documentation is on [`PermissionGate`].

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;
use tracing::Instrument;

use crate::approver::Approver;
use crate::ask_span;
use crate::audit::{Answerer, AuditEntry, AuditSink, decided};
use crate::error::PermissionError;
use crate::request::{Allowed, AskRequest, PermissionRequest, Reply, ReplyKind};
use crate::rule::{Action, Rule, Ruleset};
use crate::ruleset::{decide, find_last};
use crate::store::{ApprovalStore, MemoryStore, StoreError};
use crate::wildcard;

/// Default capacity of the event channel (events a slow subscriber may fall
/// behind before it sees `RecvError::Lagged`).
pub const DEFAULT_EVENT_CAPACITY: usize = 1024;

/// The project name [`PermissionGate::new`] uses.
pub const DEFAULT_PROJECT: &str = "default";

/// What the gate publishes, in the order things happened.
///
/// Serialised like opencode's bus events, with a `type` tag:
/// `{"type":"permission.asked", "id":…, "session_id":…, …, "answers":[…],
/// "always_rules":[…]}` and `{"type":"permission.replied", "session_id":…,
/// "request_id":…, "reply":"reject", "feedback":…}`. The `answers` and
/// `always_rules` fields of `permission.asked` are
/// [`PermissionRequest::answers`] and [`PermissionRequest::always_rules`],
/// so a UI written in any language offers only meaningful buttons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "EventWire", from = "EventWire")]
#[non_exhaustive]
pub enum PermissionEvent {
    /// A request needs an answer (`permission.asked`).
    Asked(PermissionRequest),
    /// A request was answered, by the host or by a cascade
    /// (`permission.replied`). Requests that end because their asker gave up
    /// or the service shut down publish nothing.
    Replied {
        /// The session of the answered request.
        session_id: String,
        /// The answered request.
        request_id: String,
        /// The answer as given (cascaded siblings carry a plain `reject`
        /// or `always`).
        reply: Reply,
    },
}

/// The serialised form of [`PermissionEvent`] (short-lived, so its size
/// does not matter).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "type")]
enum EventWire {
    #[serde(rename = "permission.asked")]
    Asked {
        #[serde(flatten)]
        request: PermissionRequest,
        #[serde(default)]
        answers: Vec<ReplyKind>,
        #[serde(default)]
        always_rules: Ruleset,
    },
    #[serde(rename = "permission.replied")]
    Replied {
        session_id: String,
        request_id: String,
        #[serde(flatten)]
        reply: Reply,
    },
}

impl From<PermissionEvent> for EventWire {
    fn from(event: PermissionEvent) -> Self {
        match event {
            PermissionEvent::Asked(request) => EventWire::Asked {
                answers: request.answers(),
                always_rules: request.always_rules(),
                request,
            },
            PermissionEvent::Replied {
                session_id,
                request_id,
                reply,
            } => EventWire::Replied {
                session_id,
                request_id,
                reply,
            },
        }
    }
}

impl From<EventWire> for PermissionEvent {
    fn from(wire: EventWire) -> Self {
        match wire {
            EventWire::Asked { request, .. } => PermissionEvent::Asked(request),
            EventWire::Replied {
                session_id,
                request_id,
                reply,
            } => PermissionEvent::Replied {
                session_id,
                request_id,
                reply,
            },
        }
    }
}

/// One pending request.
struct Pending {
    request: PermissionRequest,
    /// Distinguishes this entry from a later one reusing the same id.
    token: u64,
    /// Resolves the waiting `ask`.
    resolve: oneshot::Sender<Result<Allowed, PermissionError>>,
    /// The approver task deciding this request, if any.
    approver_task: Option<AbortHandle>,
    /// The asking check's span: who answered is noted there.
    span: tracing::Span,
}

impl Pending {
    /// Resolves the asker and cancels the approver task.
    fn finish(self, outcome: Result<Allowed, PermissionError>) {
        if let Some(task) = &self.approver_task {
            task.abort();
        }
        // The asker may be gone already; nothing to do then.
        let _ = self.resolve.send(outcome);
    }
}

/// Everything behind the mutex. Never held across an `.await`.
struct State {
    pending: IndexMap<String, Pending>,
    /// Asks set aside by [`PermissionGate::park`]: no longer pending, their
    /// askers left waiting (never answered) until their futures are dropped.
    parked: IndexMap<String, Pending>,
    /// The approvals as last read from the store, plus `unpersisted`.
    approved: Ruleset,
    /// Approvals the store failed to save: they hold until the service ends.
    unpersisted: Ruleset,
    /// Bumped on every change this service makes to `approved`, so a
    /// re-read that raced with a change does not undo it.
    generation: u64,
    approver: Option<Arc<dyn Approver>>,
    /// `None` once shut down.
    events: Option<broadcast::Sender<PermissionEvent>>,
    next_token: u64,
    /// Answers given ahead for a question about to be asked again
    /// ([`PermissionGate::answer_next`]).
    pre_answers: Vec<(PermissionRequest, Reply)>,
    /// Awaited right after an ask is raised, before its answer counts.
    on_asked: Option<AnsweredHook>,
    /// Awaited between an ask's answer and the asking call going on.
    on_answered: Option<AnsweredHook>,
}

/// What [`PermissionGate::on_asked`] and [`PermissionGate::on_answered`]
/// run: given the request, a future the asking call waits for. For
/// `on_answered`, `false` overrules an allowing answer: the call is
/// rejected (the ask was claimed elsewhere, see there); `on_asked`'s value
/// is ignored.
pub type AnsweredHook =
    Arc<dyn Fn(PermissionRequest) -> futures::future::BoxFuture<'static, bool> + Send + Sync>;

impl State {
    /// The hooks an ask of `request` runs, with it. An ask answered before
    /// it was raised (a resumed call's) runs neither: its answer was saved
    /// and claimed with the ask it repeats (the claim is the exactly-once
    /// point), so saving it again would list an ask nobody can answer, and
    /// claiming it would find nothing.
    fn hooks_for(
        &self,
        request: &PermissionRequest,
        pre_answered: bool,
    ) -> (
        Option<AnsweredHook>,
        Option<AnsweredHook>,
        PermissionRequest,
    ) {
        if pre_answered {
            return (None, None, request.clone());
        }
        (
            self.on_asked.clone(),
            self.on_answered.clone(),
            request.clone(),
        )
    }

    /// The answer held for `request`'s question, taken: the id of the ask
    /// it answered, and the answer.
    fn take_pre_answer(&mut self, request: &PermissionRequest) -> Option<(String, Reply)> {
        let at = self.pre_answers.iter().position(|(asked, _)| {
            asked.session_id == request.session_id
                && asked.tool == request.tool
                && asked.permission == request.permission
                && asked.patterns == request.patterns
                && asked.always == request.always
                && asked.metadata == request.metadata
        })?;
        let (asked, reply) = self.pre_answers.remove(at);
        Some((asked.id, reply))
    }

    fn publish(&self, event: PermissionEvent) {
        if let Some(events) = &self.events {
            // No subscriber is fine.
            let _ = events.send(event);
        }
    }

    fn is_shut_down(&self) -> bool {
        self.events.is_none()
    }

    /// Fails every pending request of `session` with `Rejected` (the
    /// cascade of a `reject`), each with a `reject` reply event.
    fn reject_session(&mut self, session: &str, cause: &str, audit: Option<&dyn AuditSink>) {
        let siblings: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.request.session_id == session)
            .map(|(id, _)| id.clone())
            .collect();
        for sibling in siblings {
            if let Some(pending) = self.pending.shift_remove(&sibling) {
                let by = Answerer::Cascade {
                    request_id: cause.to_string(),
                };
                ask_span::answered(&pending.span, &Reply::reject(), &by);
                if let Some(audit) = audit {
                    audit.record(AuditEntry::answered(
                        &pending.request,
                        &Reply::reject(),
                        Ruleset::new(),
                        by,
                    ));
                }
                self.publish(PermissionEvent::Replied {
                    session_id: session.to_string(),
                    request_id: sibling,
                    reply: Reply::reject(),
                });
                pending.finish(Err(PermissionError::Rejected));
            }
        }
    }

    /// Allows every pending request of `session` whose patterns the
    /// approvals alone now allow (the cascade of an `always`), each with an
    /// `always` reply event.
    fn allow_covered(&mut self, session: &str, cause: &str, audit: Option<&dyn AuditSink>) {
        let covered: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| {
                p.request.session_id == session
                    && p.request.patterns.iter().all(|pattern| {
                        decide(&p.request.permission, pattern, &[&self.approved]) == Action::Allow
                    })
            })
            .map(|(id, _)| id.clone())
            .collect();
        for sibling in covered {
            if let Some(pending) = self.pending.shift_remove(&sibling) {
                let by = Answerer::Cascade {
                    request_id: cause.to_string(),
                };
                ask_span::answered(&pending.span, &Reply::Always, &by);
                if let Some(audit) = audit {
                    audit.record(AuditEntry::answered(
                        &pending.request,
                        &Reply::Always,
                        Ruleset::new(),
                        by,
                    ));
                }
                self.publish(PermissionEvent::Replied {
                    session_id: session.to_string(),
                    request_id: sibling,
                    reply: Reply::Always,
                });
                pending.finish(Ok(Allowed::Always));
            }
        }
    }

    /// Removes and returns pending `id` if it is still the entry `token`.
    fn take(&mut self, id: &str, token: u64) -> Option<Pending> {
        if self.pending.get(id)?.token == token {
            self.pending.shift_remove(id)
        } else {
            None
        }
    }
}

/// The shared core. Asks and approver tasks hold it (approver tasks weakly);
/// the public handles hold it through [`Handle`], whose drop shuts it down.
struct Inner {
    state: Mutex<State>,
    store: Arc<dyn ApprovalStore>,
    project: String,
    /// Whether `audit` holds a sink: the one load the gate pays when none
    /// is installed.
    audited: AtomicBool,
    /// Where decisions are recorded, if anywhere.
    audit: RwLock<Option<Arc<dyn AuditSink>>>,
}

/// The owner of the service: dropping the last one shuts it down.
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.shutdown();
    }
}

/// The approval gate service (§6). Cheap to clone: clones share one state.
///
/// Dropping the last clone shuts the service down (see
/// [`shutdown`](Self::shutdown)).
///
/// - [`PermissionGate::ask`] evaluates every pattern against the caller's
///   ruleset followed by the approved rules (a `deny` of the caller's
///   ruleset wins over any approval); a `deny` fails at once with
///   [`PermissionError::Denied`], all-`allow` succeeds at once, anything
///   else publishes [`PermissionEvent::Asked`] and waits for an answer.
/// - [`PermissionGate::reply`] answers a pending request with the cascades of
///   §6.3: `reject` fails every other pending request of the same session;
///   `always` approves the request's `always` patterns for the whole project
///   and resolves the same session's pending requests that the approvals
///   alone now allow.
/// - Answers come from the host calling `reply` (following
///   [`PermissionGate::subscribe`]) or from an attached
///   [`Approver`].
///
/// Lifetimes: dropping an `ask` future (the session was cancelled) removes
/// its request silently; a later `reply` to it gets
/// [`PermissionError::NotFound`]. [`PermissionGate::shutdown`], or dropping the
/// last handle, fails every pending `ask` with [`PermissionError::Rejected`]
/// without publishing events; afterwards, requests that would prompt fail
/// with `Rejected` at once.
///
/// Beyond opencode: an [`AskRequest::timeout`](crate::AskRequest)
/// fails the ask with `Rejected` (publishing a plain `reject` reply event so
/// UIs can dismiss the prompt), and approvals can live in a persistent
/// [`ApprovalStore`] and be revoked.
///
/// # A complete host
///
/// The host plugs its UI in as an [`Approver`]; tools only `await`
/// [`PermissionGate::ask`] and turn an error into a tool result for the model.
///
/// ```
/// use std::sync::Arc;
///
/// use agentgate_permission::{
///     Action, Approver, AskRequest, PermissionError, PermissionRequest, PermissionGate, Reply, Rule,
///     Ruleset,
/// };
/// use async_trait::async_trait;
///
/// /// The host's approval UI. A real one would show the request and wait for
/// /// a click; this one approves git commands for good and refuses the rest
/// /// with advice for the model.
/// struct GitOnly;
///
/// #[async_trait]
/// impl Approver for GitOnly {
///     async fn approve(&self, request: &PermissionRequest) -> Reply {
///         if request.patterns.iter().all(|p| p.starts_with("git ")) {
///             Reply::Always
///         } else {
///             Reply::correct(format!("use git instead of {}", request.patterns.join(", ")))
///         }
///     }
/// }
///
/// /// A tool-like caller: asks before its side effect, and only then acts.
/// async fn bash(
///     permissions: &PermissionGate,
///     session: &str,
///     command: &str,
///     always: &str,
/// ) -> Result<String, PermissionError> {
///     let rules = Ruleset::from(vec![
///         Rule::new("bash", "*", Action::Ask),
///         Rule::new("bash", "rm *", Action::Deny),
///     ]);
///     let request = AskRequest::new(session, "bash", [command])
///         .always([always])
///         .ruleset(rules);
///     permissions.ask(request).await?;
///     Ok(format!("ran {command}"))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let permissions = PermissionGate::builder().approver(Arc::new(GitOnly)).build()?;
///
/// // The approver's `always` reaches the caller as success ...
/// assert_eq!(bash(&permissions, "s1", "git log -1", "git log *").await?, "ran git log -1");
/// // ... and is remembered for every session of the project.
/// assert_eq!(permissions.approved().rules(), [Rule::new("bash", "git log *", Action::Allow)]);
/// assert_eq!(bash(&permissions, "s2", "git log --stat", "git log *").await?, "ran git log --stat");
///
/// // A refusal with feedback reaches the caller as `Corrected`: the model
/// // sees the feedback and can try again.
/// let refused = bash(&permissions, "s1", "make clean", "make clean *").await.unwrap_err();
/// assert_eq!(refused, PermissionError::Corrected { feedback: "use git instead of make clean".into() });
///
/// // Deny rules never reach the approver.
/// let denied = bash(&permissions, "s1", "rm -rf /", "rm *").await.unwrap_err();
/// assert!(matches!(denied, PermissionError::Denied { .. }));
/// assert!(permissions.pending().is_empty());
/// # Ok(())
/// # }
/// ```
///
/// # Driving `reply` from events
///
/// Without an approver, follow the events and answer with `reply`:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use agentgate_permission::{AskRequest, PermissionError, PermissionEvent, PermissionGate, Reply};
///
/// let permissions = PermissionGate::new();
/// let mut events = permissions.subscribe();
/// let asking = tokio::spawn({
///     let permissions = permissions.clone();
///     async move { permissions.ask(AskRequest::new("s1", "bash", ["rm -rf build"])).await }
/// });
/// // A host UI follows the events and answers.
/// let Ok(PermissionEvent::Asked(request)) = events.recv().await else { panic!() };
/// assert_eq!(request.patterns, ["rm -rf build"]);
/// permissions.reply(&request.id, Reply::correct("use cargo clean")).unwrap();
/// assert_eq!(
///     asking.await.unwrap(),
///     Err(PermissionError::Corrected { feedback: "use cargo clean".into() })
/// );
/// # }
/// ```
#[derive(Clone)]
pub struct PermissionGate {
    handle: Arc<Handle>,
}

impl fmt::Debug for PermissionGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.handle.inner.lock();
        f.debug_struct("PermissionGate")
            .field("project", &self.handle.inner.project)
            .field("pending", &state.pending.len())
            .field("approved", &state.approved.len())
            .field("approver", &state.approver.is_some())
            .field("shut_down", &state.is_shut_down())
            .finish()
    }
}

impl Default for PermissionGate {
    fn default() -> Self {
        Self::new()
    }
}

/// Builds a [`PermissionGate`] service with a store, project, approver and
/// event capacity of your choice.
pub struct PermissionGateBuilder {
    store: Arc<dyn ApprovalStore>,
    project: String,
    approver: Option<Arc<dyn Approver>>,
    event_capacity: usize,
    audit: Option<Arc<dyn AuditSink>>,
}

impl fmt::Debug for PermissionGateBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermissionGateBuilder")
            .field("project", &self.project)
            .field("approver", &self.approver.is_some())
            .field("event_capacity", &self.event_capacity)
            .field("audit", &self.audit.is_some())
            .finish_non_exhaustive()
    }
}

impl PermissionGateBuilder {
    /// Keeps approvals in `store` under `project` (default: a fresh
    /// [`MemoryStore`], project [`DEFAULT_PROJECT`]).
    pub fn store(mut self, store: Arc<dyn ApprovalStore>, project: impl Into<String>) -> Self {
        self.store = store;
        self.project = project.into();
        self
    }

    /// Hands every request that needs a prompt to `approver`.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// How many events a subscriber may fall behind (default
    /// [`DEFAULT_EVENT_CAPACITY`], at least 1).
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity.max(1);
        self
    }

    /// Records every decision in `sink` (see [`PermissionGate::set_audit`]).
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Loads the project's approvals from the store and starts the service.
    pub fn build(self) -> Result<PermissionGate, StoreError> {
        let approved = self.store.load(&self.project)?;
        let gate = PermissionGate::from_parts(
            self.store,
            self.project,
            approved,
            self.approver,
            self.event_capacity,
        );
        if let Some(sink) = self.audit {
            gate.set_audit(sink);
        }
        Ok(gate)
    }
}

impl PermissionGate {
    /// A service with in-memory approvals (opencode's behaviour: they start
    /// empty and last as long as the service) under project
    /// [`DEFAULT_PROJECT`], and no approver.
    pub fn new() -> Self {
        Self::from_parts(
            Arc::new(MemoryStore::new()),
            DEFAULT_PROJECT.to_string(),
            Ruleset::new(),
            None,
            DEFAULT_EVENT_CAPACITY,
        )
    }

    fn from_parts(
        store: Arc<dyn ApprovalStore>,
        project: String,
        approved: Ruleset,
        approver: Option<Arc<dyn Approver>>,
        event_capacity: usize,
    ) -> Self {
        let (events, _) = broadcast::channel(event_capacity);
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                pending: IndexMap::new(),
                parked: IndexMap::new(),
                approved,
                unpersisted: Ruleset::new(),
                generation: 0,
                approver,
                events: Some(events),
                next_token: 0,
                pre_answers: Vec::new(),
                on_asked: None,
                on_answered: None,
            }),
            store,
            project,
            audited: AtomicBool::new(false),
            audit: RwLock::new(None),
        });
        PermissionGate {
            handle: Arc::new(Handle { inner }),
        }
    }

    /// A service keeping approvals in `store` under `project`; the
    /// project's existing approvals are loaded now.
    pub fn with_store(
        store: Arc<dyn ApprovalStore>,
        project: impl Into<String>,
    ) -> Result<Self, StoreError> {
        Self::builder().store(store, project).build()
    }

    /// A builder for a service with a custom store, approver or event
    /// capacity.
    pub fn builder() -> PermissionGateBuilder {
        PermissionGateBuilder {
            store: Arc::new(MemoryStore::new()),
            project: DEFAULT_PROJECT.to_string(),
            approver: None,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            audit: None,
        }
    }

    fn inner(&self) -> &Arc<Inner> {
        &self.handle.inner
    }

    /// The project whose approvals this service uses.
    pub fn project(&self) -> &str {
        &self.inner().project
    }

    /// Asks for permission (§6.2) and waits for the answer.
    ///
    /// Each of `request.patterns` is evaluated against `request.ruleset`
    /// alone first: a `deny` there is final, even when an approval would
    /// match (unlike opencode, where an approval beats a deny of the
    /// caller's ruleset; see `docs/deviations.md`). Patterns the ruleset
    /// leaves at `ask` are then evaluated against the ruleset followed by
    /// the approved rules, re-read from the store first so that approvals
    /// revoked or granted by another process count. The first `deny` fails with
    /// [`PermissionError::Denied`] listing every rule of the caller's
    /// ruleset whose permission matches; if every pattern is allowed (or
    /// there are none) this returns `Ok(())` at once. Otherwise a
    /// [`PermissionRequest`] (id as given, or a fresh ascending `per_…`
    /// id) is published as [`PermissionEvent::Asked`] and this waits for
    /// [`reply`](Self::reply), an approver, a timeout or a shutdown.
    ///
    /// The returned future does not borrow the service, so it can be
    /// spawned as is; it does not keep the service alive either: when the
    /// last [`PermissionGate`] handle is dropped, it fails with
    /// [`PermissionError::Rejected`]. Dropping the future withdraws the
    /// request silently (no event; a later `reply` gets `NotFound`).
    pub fn ask(
        &self,
        request: AskRequest,
    ) -> impl Future<Output = Result<(), PermissionError>> + Send + 'static {
        let inner = Arc::clone(self.inner());
        async move { Inner::ask(&inner, request).await.map(drop) }
    }

    /// [`ask`](Self::ask), saying how the request was allowed: by the rules
    /// (no prompt), by a `once` or `always` answer, or by a
    /// [`Reply::Grant`] — the one answer that lets a tool widen its OS
    /// sandbox for the call (only for requests that
    /// [offer it](PermissionRequest::offers_grant)).
    pub fn ask_answer(
        &self,
        request: AskRequest,
    ) -> impl Future<Output = Result<Allowed, PermissionError>> + Send + 'static {
        let inner = Arc::clone(self.inner());
        async move { Inner::ask(&inner, request).await }
    }

    /// Answers pending request `id` (§6.3).
    ///
    /// - `Once` resolves it.
    /// - `Reject` fails it with [`PermissionError::Corrected`] when the
    ///   feedback is non-empty, else [`PermissionError::Rejected`]; every
    ///   other pending request of the same session then fails with
    ///   `Rejected` (each gets a `reject` reply event).
    /// - `Always` resolves it, approves one `allow` rule per `always`
    ///   pattern under its permission (persisted to the store;
    ///   `AlwaysExact`: per asked pattern, see
    ///   [`PermissionRequest::exact_rules`]), then
    ///   resolves, in order, every other pending request of the same session
    ///   whose patterns the approved rules alone all allow (each gets an
    ///   `always` reply event).
    ///
    /// Fails with [`PermissionError::NotFound`] when `id` is not pending.
    /// A store failure while persisting an approval is logged; the approval
    /// still holds for this service's lifetime.
    pub fn reply(&self, id: &str, reply: Reply) -> Result<(), PermissionError> {
        self.inner().reply(id, None, reply, Answerer::Host)
    }

    /// [`reply`](Self::reply), naming who answered for the audit trail
    /// (an HTTP client and its address, an ACP client, the terminal).
    pub fn reply_as(
        &self,
        id: &str,
        reply: Reply,
        answered_by: Answerer,
    ) -> Result<(), PermissionError> {
        self.inner().reply(id, None, reply, answered_by)
    }

    /// Records every decision from now on in `sink`: each automatic allow
    /// or deny with the rule and layer that decided it, each ask raised,
    /// each answer with who gave it (see [`AuditEntry`]). Replaces an
    /// earlier sink. Without one (the default) no entry is built.
    pub fn set_audit(&self, sink: Arc<dyn AuditSink>) {
        let inner = self.inner();
        *inner.audit.write().unwrap_or_else(PoisonError::into_inner) = Some(sink);
        inner.audited.store(true, Ordering::Release);
    }

    /// Whether a sink records this gate's decisions.
    pub fn is_audited(&self) -> bool {
        self.inner().audited.load(Ordering::Acquire)
    }

    /// The pending requests, oldest first.
    pub fn pending(&self) -> Vec<PermissionRequest> {
        self.inner()
            .lock()
            .pending
            .values()
            .map(|p| p.request.clone())
            .collect()
    }

    /// The approved ("always") rules, oldest first.
    pub fn approved(&self) -> Ruleset {
        self.inner().lock().approved.clone()
    }

    /// Removes every approval equal to `rule`, from this service and from
    /// the store. Returns whether anything was removed. Pending requests are
    /// unaffected; later asks see the change.
    pub fn revoke(&self, rule: &Rule) -> Result<bool, StoreError> {
        let inner = self.inner();
        let mut state = inner.lock();
        let stored = inner.store.revoke(&inner.project, rule)?;
        state.generation += 1;
        let before = state.approved.len();
        state.approved.0.retain(|r| r != rule);
        state.unpersisted.0.retain(|r| r != rule);
        Ok(stored || state.approved.len() != before)
    }

    /// A receiver of every event published from now on. After a shutdown
    /// the receiver reports the channel closed.
    pub fn subscribe(&self) -> broadcast::Receiver<PermissionEvent> {
        let inner = self.inner();
        match &inner.lock().events {
            Some(events) => events.subscribe(),
            None => broadcast::channel(1).1,
        }
    }

    /// The events as a stream, ending at shutdown. Events a slow consumer
    /// missed (more than the event capacity behind) are skipped with a
    /// warning; use [`subscribe`](Self::subscribe) to handle that yourself.
    pub fn events(&self) -> impl futures::Stream<Item = PermissionEvent> + Send + 'static {
        futures::stream::unfold(self.subscribe(), |mut events| async move {
            loop {
                match events.recv().await {
                    Ok(event) => return Some((event, events)),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "permission event subscriber lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }

    /// Attaches `approver`: requests asked from now on, and pending ones not
    /// yet handed to an approver, are handed to it. Replaces any previous
    /// approver for new requests (requests it is deciding stay with it).
    ///
    /// Approvers run as tokio tasks, so this and `ask` must be called inside
    /// a tokio runtime for the approver to see requests.
    pub fn set_approver(&self, approver: Arc<dyn Approver>) {
        let inner = self.inner();
        let mut state = inner.lock();
        state.approver = Some(Arc::clone(&approver));
        let tokens: Vec<(String, u64)> = state
            .pending
            .iter()
            .filter(|(_, p)| p.approver_task.is_none())
            .map(|(id, p)| (id.clone(), p.token))
            .collect();
        for (id, token) in tokens {
            if let Some(entry) = state.pending.get_mut(&id) {
                entry.approver_task =
                    spawn_approver(inner, Arc::clone(&approver), entry.request.clone(), token);
            }
        }
    }

    /// Sets the pending ask `id` aside without answering it, for a host
    /// that drops the turn waiting at it from memory and resumes it later
    /// from the stored ask (`Engine::resume_ask` in `agentgate-core`):
    /// the ask is no longer [`pending`](Self::pending) here, so a reply to
    /// it finds nothing, and the asking call is never answered — it waits
    /// until its future is dropped, so nothing it would do after an answer
    /// (a rejection recorded, a command run) happens. The request, or
    /// `None` when `id` is not pending (answered meanwhile). The audit log
    /// records it as withdrawn, parked.
    pub fn park(&self, id: &str) -> Option<PermissionRequest> {
        let inner = self.inner();
        let request = {
            let mut state = inner.lock();
            let entry = state.pending.shift_remove(id)?;
            if let Some(task) = &entry.approver_task {
                task.abort();
            }
            let request = entry.request.clone();
            state.parked.insert(id.to_string(), entry);
            request
        };
        inner.record(|| withdrawn(&request, "parked"));
        Some(request)
    }

    /// Answers with `reply` the next ask that is the same question as
    /// `asked` — the same session, tool call, permission, patterns,
    /// `always` patterns and shown metadata — as soon as it is raised,
    /// before any approver sees it (as if a person answered at once). How a
    /// resumed turn's call gets the answer its ask received before the
    /// process that raised it stopped; a different question is asked as
    /// usual. Until [`forget_answer`](Self::forget_answer), the answer
    /// waits for its question. The ask it answers runs neither
    /// [`on_asked`](Self::on_asked) nor [`on_answered`](Self::on_answered):
    /// the host saved and claimed the ask it repeats.
    pub fn answer_next(&self, asked: PermissionRequest, reply: Reply) {
        self.inner().lock().pre_answers.push((asked, reply));
    }

    /// Drops the answer [`answer_next`](Self::answer_next) holds for the
    /// ask `request_id`, if it is still waiting.
    pub fn forget_answer(&self, request_id: &str) {
        self.inner()
            .lock()
            .pre_answers
            .retain(|(asked, _)| asked.id != request_id);
    }

    /// Runs `hook` for every ask raised (not for those the rules settle),
    /// and has the asking call wait for it before the answer counts: an
    /// answer given meanwhile is kept and applied once the hook is done, so
    /// the hook's effect (`agent serve` saving the ask where it outlives the
    /// process) always comes before [`on_answered`](Self::on_answered)'s.
    pub fn on_asked(&self, hook: AnsweredHook) {
        self.inner().lock().on_asked = Some(hook);
    }

    /// Runs `hook` for every ask a person (or an approver) answered —
    /// allowed, rejected or expired — and makes the asking call wait for
    /// it before it goes on, so the hook's effect happens before the call's
    /// side effect. `agent serve` removes the answered ask from its durable
    /// list here: a process that dies after that never resumes a call that
    /// may have started. Not run for asks the rules settled, nor for asks
    /// dropped by a shutdown (those stay pending where they are kept).
    ///
    /// A hook that returns `false` turns an allowing answer into
    /// [`PermissionError::Rejected`]: `agent serve` claims the saved ask
    /// here, and a claim another process won first (it resumed the call
    /// there) means this call must not run too.
    pub fn on_answered(&self, hook: AnsweredHook) {
        self.inner().lock().on_answered = Some(hook);
    }

    /// Detaches the approver; requests it is already deciding stay with it.
    pub fn clear_approver(&self) {
        self.inner().lock().approver = None;
    }

    /// Shuts the service down: every pending `ask` fails with
    /// [`PermissionError::Rejected`] (no reply events), approver tasks are
    /// cancelled, subscribers see the channel close, and later asks that
    /// would prompt fail with `Rejected` at once. Idempotent; also happens
    /// when the last handle is dropped.
    pub fn shutdown(&self) {
        self.inner().shutdown();
    }

    /// Whether [`shutdown`](Self::shutdown) happened.
    pub fn is_shut_down(&self) -> bool {
        self.inner().lock().is_shut_down()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The audit sink, if one is installed (one atomic load otherwise).
    fn sink(&self) -> Option<Arc<dyn AuditSink>> {
        if !self.audited.load(Ordering::Acquire) {
            return None;
        }
        self.audit
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records the entry `entry` builds, only when a sink is installed.
    /// Hands the entry to the audit sink and notes it on the current
    /// permission span; built only when one of them wants it.
    fn record(&self, entry: impl FnOnce() -> AuditEntry) {
        let span = tracing::Span::current();
        let traced = ask_span::wants(&span);
        let sink = self.sink();
        if sink.is_none() && !traced {
            return;
        }
        let entry = entry();
        if traced {
            ask_span::note(&span, &entry);
        }
        if let Some(sink) = sink {
            sink.record(entry);
        }
    }

    /// The answer of the caller's rules alone (bounded by its ceilings),
    /// recorded; `None` when they leave something to ask.
    fn settle(&self, req: &AskRequest) -> Option<Result<Allowed, PermissionError>> {
        match settled_by_rules(req) {
            Ok(true) => {
                self.record(|| decided(req, Action::Allow, None));
                Some(Ok(Allowed::ByRules))
            }
            Err(denied) => {
                self.record(|| decided(req, Action::Deny, None));
                Some(Err(denied))
            }
            Ok(false) => None,
        }
    }

    /// Whether some pattern of `req` is left to ask by its rules and the
    /// approved ones (a `deny` fails, recorded).
    fn needs_prompt(&self, req: &AskRequest, state: &State) -> Result<bool, PermissionError> {
        let mut needs_prompt = false;
        for pattern in &req.patterns {
            let action = bounded(req, |rules| {
                find_last(&req.permission, pattern, &[rules, &state.approved])
                    .map_or(Action::Ask, |rule| rule.action)
            })
            .inspect_err(|_| self.record(|| decided(req, Action::Deny, Some(&state.approved))))?;
            if action == Action::Ask {
                needs_prompt = true;
            }
        }
        Ok(needs_prompt)
    }

    /// [`ask_untraced`](Self::ask_untraced) inside the check's span.
    async fn ask(this: &Arc<Self>, req: AskRequest) -> Result<Allowed, PermissionError> {
        let span = ask_span::ask_span(&req);
        let start = tokio::time::Instant::now();
        let outcome = Self::ask_untraced(this, req).instrument(span.clone()).await;
        ask_span::ended(&span, &outcome, start);
        outcome
    }

    /// Decides `req` by the rules, or asks and waits for the answer.
    async fn ask_untraced(this: &Arc<Self>, req: AskRequest) -> Result<Allowed, PermissionError> {
        // The caller's ruleset first, alone: its `deny` is final, whatever
        // was approved (an approval never overrides a configured deny).
        // Ceilings (the rules of a task child's parents) bound it: the
        // stricter answer wins, so a parent's deny is as final as the
        // caller's own.
        if let Some(settled) = this.settle(&req) {
            return settled;
        }
        // Something would be asked: read the approvals again, so that one
        // revoked or granted elsewhere (another process sharing the store)
        // counts now.
        this.refresh_approved();
        let (id_of_entry, token, receiver, hook) = {
            let mut state = this.lock();
            if !this.needs_prompt(&req, &state)? {
                this.record(|| decided(&req, Action::Allow, Some(&state.approved)));
                return Ok(Allowed::ByRules);
            }
            if state.is_shut_down() {
                return Err(PermissionError::Rejected);
            }

            let request = request_of(&req);
            let token = state.next_token;
            state.next_token += 1;
            let (resolve, receiver) = oneshot::channel();
            let pre_answer = state.take_pre_answer(&request);
            let approver_task = match pre_answer {
                Some(_) => None,
                None => state
                    .approver
                    .clone()
                    .and_then(|approver| spawn_approver(this, approver, request.clone(), token)),
            };
            let id = request.id.clone();
            let id_of_entry = id.clone();
            let entry = Pending {
                request: request.clone(),
                token,
                resolve,
                approver_task,
                span: tracing::Span::current(),
            };
            // A caller reusing the id of a pending request replaces it (in
            // place, as opencode's map does); the replaced ask fails with
            // `Rejected` instead of hanging forever.
            if let Some(replaced) = state.pending.insert(id, entry) {
                replaced.finish(Err(PermissionError::Rejected));
            }
            this.record(|| AuditEntry::Asked {
                request: request.clone(),
            });
            let hooks = state.hooks_for(&request, pre_answer.is_some());
            state.publish(PermissionEvent::Asked(request));
            (id_of_entry, token, receiver, (hooks, pre_answer))
        };
        let (hook, pre_answer) = hook;
        if let Some((answered, reply)) = pre_answer {
            let by = Answerer::Resumed {
                request_id: answered,
            };
            // NotFound: the ask was replaced meanwhile.
            let _ = this.reply(&id_of_entry, Some(token), reply, by);
        }
        let guard = PendingGuard {
            inner: Arc::clone(this),
            id: id_of_entry,
            token,
        };
        Self::wait_with_hooks(this, &guard, receiver, req.timeout, hook).await
    }

    /// Waits for the answer to the ask `guard` stands for, with the gate's
    /// hooks around it: `on_asked` before the answer counts, `on_answered`
    /// after it and before the caller goes on (a `false` from it rejects an
    /// allowed call). A shutdown's rejection is nobody's answer: the ask
    /// stays wherever the hooks keep it.
    async fn wait_with_hooks(
        this: &Arc<Self>,
        guard: &PendingGuard,
        receiver: oneshot::Receiver<Result<Allowed, PermissionError>>,
        timeout: Option<std::time::Duration>,
        (on_asked, on_answered, request): (
            Option<AnsweredHook>,
            Option<AnsweredHook>,
            PermissionRequest,
        ),
    ) -> Result<Allowed, PermissionError> {
        if let Some(hook) = on_asked {
            hook(request.clone()).await;
        }
        let outcome = Self::answer(this, guard, receiver, timeout).await;
        let dropped = matches!(outcome, None | Some(Err(PermissionError::Rejected)))
            && this.lock().is_shut_down();
        if let (Some(hook), true) = (on_answered, outcome.is_some() && !dropped) {
            let id = request.id.clone();
            if !hook(request).await && matches!(outcome, Some(Ok(_))) {
                tracing::warn!(request = %id, "the answered ask was claimed elsewhere; this call does not run");
                return Err(PermissionError::Rejected);
            }
        }
        outcome.unwrap_or(Err(PermissionError::Rejected))
    }

    /// Waits for the answer to the pending ask `guard` stands for; after
    /// `timeout` (inside a tokio runtime) the ask expires, which answers it.
    /// `None` when no answer came: the ask was dropped by a shutdown or
    /// replaced (both mean "rejected" to the caller).
    async fn answer(
        this: &Arc<Self>,
        guard: &PendingGuard,
        mut receiver: oneshot::Receiver<Result<Allowed, PermissionError>>,
        timeout: Option<std::time::Duration>,
    ) -> Option<Result<Allowed, PermissionError>> {
        let outcome = match timeout {
            Some(timeout) if tokio::runtime::Handle::try_current().is_ok() => {
                match tokio::time::timeout(timeout, &mut receiver).await {
                    Ok(received) => received,
                    Err(_elapsed) => {
                        this.expire(&guard.id, guard.token, timeout);
                        receiver.await
                    }
                }
            }
            Some(_) => {
                tracing::warn!("AskRequest timeout ignored: not inside a tokio runtime");
                receiver.await
            }
            None => receiver.await,
        };
        // The sender is dropped without a value only by a shutdown or a
        // replacement.
        outcome.ok()
    }

    /// Replaces the approvals in memory with the store's current list (plus
    /// the approvals this service could not persist), unless this service
    /// changed its approvals while the store was being read. A store that
    /// cannot be read leaves the list in memory as it was.
    fn refresh_approved(&self) {
        let generation = self.lock().generation;
        match self.store.load(&self.project) {
            Ok(mut loaded) => {
                let mut state = self.lock();
                if state.generation == generation {
                    for rule in state.unpersisted.iter() {
                        if !loaded.contains(rule) {
                            loaded.push(rule.clone());
                        }
                    }
                    state.approved = loaded;
                }
            }
            Err(err) => tracing::warn!(
                %err,
                project = %self.project,
                "could not re-read the approvals; using the ones in memory"
            ),
        }
    }

    /// The timeout of the entry with `token` elapsed: fail it with
    /// `Expired` (a rejection saying why) and tell UIs, unless something
    /// resolved it meanwhile.
    fn expire(&self, id: &str, token: u64, after: std::time::Duration) {
        let mut state = self.lock();
        let Some(entry) = state.take(id, token) else {
            return;
        };
        self.record(|| {
            AuditEntry::answered(
                &entry.request,
                &Reply::reject(),
                Ruleset::new(),
                Answerer::Timeout,
            )
        });
        state.publish(PermissionEvent::Replied {
            session_id: entry.request.session_id.clone(),
            request_id: id.to_string(),
            reply: Reply::reject(),
        });
        entry.finish(Err(PermissionError::Expired {
            seconds: after.as_secs().max(1),
        }));
    }

    /// Applies `reply` to pending `id` (only to the entry with `token`, when
    /// given: an approver's answer never reaches a later request that
    /// reuses the id).
    fn reply(
        &self,
        id: &str,
        token: Option<u64>,
        reply: Reply,
        answered_by: Answerer,
    ) -> Result<(), PermissionError> {
        let mut state = self.lock();
        let ours = state
            .pending
            .get(id)
            .is_some_and(|p| token.is_none_or(|t| t == p.token));
        let Some(entry) = ours.then(|| state.pending.shift_remove(id)).flatten() else {
            return Err(PermissionError::NotFound { id: id.to_string() });
        };
        let session = entry.request.session_id.clone();
        ask_span::answered(&entry.span, &reply, &answered_by);
        let sink = self.sink();
        let audit = sink.as_deref();
        if let Some(audit) = audit {
            let stored = match reply {
                Reply::Always => entry.request.always_rules(),
                Reply::AlwaysExact => entry.request.exact_rules(),
                _ => Ruleset::new(),
            };
            audit.record(AuditEntry::answered(
                &entry.request,
                &reply,
                stored,
                answered_by,
            ));
        }
        state.publish(PermissionEvent::Replied {
            session_id: session.clone(),
            request_id: id.to_string(),
            reply: reply.clone(),
        });

        match reply {
            Reply::Once => entry.finish(Ok(Allowed::Once)),
            Reply::Grant => {
                // A grant counts only where the tool offered one.
                let allowed = if entry.request.offers_grant() {
                    Allowed::Grant
                } else {
                    Allowed::Once
                };
                entry.finish(Ok(allowed));
            }
            Reply::Reject { feedback } => {
                let error = match feedback {
                    Some(feedback) if !feedback.is_empty() => {
                        PermissionError::Corrected { feedback }
                    }
                    _ => PermissionError::Rejected,
                };
                entry.finish(Err(error));
                state.reject_session(&session, id, audit);
            }
            Reply::Always | Reply::AlwaysExact => {
                let (rules, allowed) = match reply {
                    Reply::Always => (entry.request.always_rules(), Allowed::Always),
                    _ => match entry.request.exact_rules() {
                        rules if rules.is_empty() => (rules, Allowed::Once),
                        rules => (rules, Allowed::Always),
                    },
                };
                entry.finish(Ok(allowed));
                self.remember(&mut state, rules);
                state.allow_covered(&session, id, audit);
            }
        }
        Ok(())
    }

    /// Adds `rules` to the approvals and persists them; a store failure
    /// keeps them for this service's lifetime.
    fn remember(&self, state: &mut State, rules: Ruleset) {
        if rules.is_empty() {
            return;
        }
        state.generation += 1;
        state.approved.extend(rules.iter().cloned());
        if let Err(err) = self.store.append(&self.project, &rules) {
            tracing::error!(
                %err,
                project = %self.project,
                "could not persist an \"always\" approval; it holds until the service ends"
            );
            state.unpersisted.extend(rules);
        }
    }

    /// Removes the entry with `token` without any event (its asker gave up).
    fn withdraw(&self, id: &str, token: u64) {
        let entry = {
            let mut state = self.lock();
            // A parked ask's asker is dropped: nothing more to record.
            if state.parked.get(id).is_some_and(|p| p.token == token) {
                state.parked.shift_remove(id);
                return;
            }
            state.take(id, token)
        };
        if let Some(entry) = &entry {
            self.record(|| withdrawn(&entry.request, "cancelled"));
        }
        if let Some(task) = entry.as_ref().and_then(|e| e.approver_task.as_ref()) {
            task.abort();
        }
    }

    fn shutdown(&self) {
        let drained: Vec<Pending> = {
            let mut state = self.lock();
            state.events = None;
            state.approver = None;
            state.parked.clear();
            state.pending.drain(..).map(|(_, p)| p).collect()
        };
        for entry in drained {
            self.record(|| withdrawn(&entry.request, "shutdown"));
            entry.finish(Err(PermissionError::Rejected));
        }
    }
}

/// The request `req` asks, with its id (or a fresh one).
fn request_of(req: &AskRequest) -> PermissionRequest {
    PermissionRequest {
        id: req.id.clone().unwrap_or_else(fresh_id),
        session_id: req.session_id.clone(),
        permission: req.permission.clone(),
        patterns: req.patterns.clone(),
        always: req.always.clone(),
        metadata: req.metadata.clone(),
        tool: req.tool.clone(),
    }
}

/// Withdraws the pending entry when the `ask` future ends, however it ends.
struct PendingGuard {
    inner: Arc<Inner>,
    id: String,
    token: u64,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        self.inner.withdraw(&self.id, self.token);
    }
}

/// Whether the caller's rules, bounded by its ceilings, decide every
/// pattern of `req` without an ask.
fn settled_by_rules(req: &AskRequest) -> Result<bool, PermissionError> {
    let mut settled = true;
    for pattern in &req.patterns {
        let action = bounded(req, |rules| decide(&req.permission, pattern, &[rules]))?;
        if action == Action::Ask {
            settled = false;
        }
    }
    Ok(settled)
}

/// The error for a denied request: every rule of the caller's ruleset whose
/// permission matches the requested one (approvals are never listed).
/// The answer `answer` gives for the caller's ruleset, bounded by each of
/// the request's ceilings: the stricter one wins, and a `deny` from any of
/// them fails at once with the rules of the ruleset that denied.
fn bounded(
    req: &AskRequest,
    answer: impl Fn(&Ruleset) -> Action,
) -> Result<Action, PermissionError> {
    let mut action = Action::Allow;
    for rules in std::iter::once(&req.ruleset).chain(&req.ceilings) {
        let bound = answer(rules);
        if bound == Action::Deny {
            return Err(denied(req, rules));
        }
        action = action.stricter(bound);
    }
    Ok(action)
}

/// `Denied`, listing the rules of `ruleset` (the caller's, or the ceiling
/// that denied) whose permission matches the request's.
fn denied(req: &AskRequest, ruleset: &Ruleset) -> PermissionError {
    let rules = ruleset
        .iter()
        .filter(|rule| wildcard::matches(&req.permission, &rule.permission))
        .cloned()
        .collect();
    PermissionError::Denied { rules }
}

/// Starts the approver task for `request`, if a tokio runtime is around.
fn spawn_approver(
    inner: &Arc<Inner>,
    approver: Arc<dyn Approver>,
    request: PermissionRequest,
    token: u64,
) -> Option<AbortHandle> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!(
            id = %request.id,
            "no tokio runtime: the approver cannot see this request; answer it with reply()"
        );
        return None;
    };
    let weak: Weak<Inner> = Arc::downgrade(inner);
    let task = runtime.spawn(async move {
        let (answer, answered_by) = std::panic::AssertUnwindSafe(approver.approve_as(&request))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                tracing::error!(id = %request.id, "approver panicked; rejecting the request");
                (Reply::reject(), approver.answerer())
            });
        if let Some(inner) = weak.upgrade() {
            // NotFound: the request was resolved meanwhile; the answer is moot.
            let _ = inner.reply(&request.id, Some(token), answer, answered_by);
        }
    });
    Some(task.abort_handle())
}

/// The entry of an ask that ended without an answer, for `reason`.
fn withdrawn(request: &PermissionRequest, reason: &str) -> AuditEntry {
    AuditEntry::Withdrawn {
        session_id: request.session_id.clone(),
        request_id: request.id.clone(),
        reason: reason.to_string(),
    }
}

/// A fresh request id: `per_`, 16 hex digits that grow with every call
/// (microseconds since the epoch, bumped when two calls share one), and a
/// random tag of this process in 8 more: servers sharing a database (the
/// ask relay, the saved asks) raise asks in the same microsecond, and ids
/// that were equal made one process's ask answer, or hide, the other's. A
/// process id would not do: servers in containers are all process 1.
fn fresh_id() -> String {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    let mut previous = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(previous.saturating_add(1));
        match LAST.compare_exchange_weak(previous, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return format!("per_{next:016x}{:08x}", crate::store::process_tag()),
            Err(actual) => previous = actual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_ascend() {
        let a = fresh_id();
        let b = fresh_id();
        assert!(a.starts_with("per_"));
        assert!(a < b, "{a} < {b}");
    }

    #[test]
    fn events_serialise_with_opencode_tags() {
        let request = PermissionRequest {
            id: "per_1".into(),
            session_id: "s".into(),
            permission: "bash".into(),
            patterns: vec!["git status".into()],
            always: vec!["git status *".into()],
            metadata: serde_json::json!({}),
            tool: None,
        };
        let asked = serde_json::to_value(PermissionEvent::Asked(request.clone())).unwrap();
        assert_eq!(asked["type"], "permission.asked");
        assert_eq!(asked["id"], "per_1");
        assert_eq!(
            asked["answers"],
            serde_json::json!(["once", "always", "always_exact", "reject"])
        );
        assert_eq!(
            asked["always_rules"],
            serde_json::json!([{"permission": "bash", "pattern": "git status *", "action": "allow"}])
        );
        let back: PermissionEvent = serde_json::from_value(asked).unwrap();
        assert_eq!(back, PermissionEvent::Asked(request));

        let replied = PermissionEvent::Replied {
            session_id: "s".into(),
            request_id: "per_1".into(),
            reply: Reply::correct("no"),
        };
        let json = serde_json::to_value(&replied).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "permission.replied", "session_id": "s", "request_id": "per_1", "reply": "reject", "feedback": "no"})
        );
        assert_eq!(
            serde_json::from_value::<PermissionEvent>(json).unwrap(),
            replied
        );
    }
}
