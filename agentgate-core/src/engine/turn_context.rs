//! [`TurnContext`]: what every step and tool call of one turn needs,
//! built once when the prompt starts and passed down by reference, so the
//! turn driver, the stream processor and the tool calls read the same
//! values instead of each re-bundling their own copy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentgate_permission::{Ruleset, merge};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::model_family::retain_for_model;
use super::model_options::provider_options;
use super::state::EngineState;
use crate::agent_spec::AgentSpec;
use crate::model::{History, LanguageModel, ModelRequest, ToolChoice, ToolSpec};
use crate::sessions::Session;
use crate::tool::CallingAgent;

/// One turn's fixed inputs: the engine, the model, the agent and session
/// it runs for, the rules its calls are judged by, the tools it declares
/// and the request fields every step repeats.
pub(super) struct TurnContext<'a> {
    /// What every turn of the engine shares.
    pub engine: &'a EngineState,
    /// The model the session runs on.
    pub model: Arc<dyn LanguageModel>,
    /// The agent whose steps these are.
    pub agent: &'a AgentSpec,
    /// The session prompted.
    pub session: &'a Session,
    /// The agent's and the session's rules, merged.
    pub ruleset: Arc<Ruleset>,
    /// The session's ceilings (its parents' rules), shared by its calls.
    pub ceilings: Arc<Vec<Ruleset>>,
    /// The prompt's cancellation.
    pub cancel: &'a CancellationToken,
    /// The project root tools see (the session's directory without one).
    pub worktree: PathBuf,
    /// The tools declared to the model.
    pub tools: Arc<Vec<ToolSpec>>,
    /// The system prompt of every step.
    pub system: Vec<String>,
    /// The provider options of every step.
    pub options: Map<String, Value>,
    /// The agent's step limit (else the engine's).
    pub step_limit: Option<u32>,
}

impl<'a> TurnContext<'a> {
    /// The context of a turn of `agent` in `session`.
    pub(super) fn new(
        engine: &'a EngineState,
        model: Arc<dyn LanguageModel>,
        agent: &'a AgentSpec,
        session: &'a Session,
        cancel: &'a CancellationToken,
    ) -> Self {
        let ruleset = Arc::new(merge([&agent.permission, &session.permission]));
        let ceilings = Arc::new(session.ceilings.clone());
        let info = model.info();
        let mut specs = visible_tools(engine, agent, &ruleset, &ceilings);
        retain_for_model(&mut specs, &info.id);
        let tools = Arc::new(specs);
        let worktree = engine
            .worktree
            .clone()
            .unwrap_or_else(|| session.directory.clone());
        // Skills are listed only to an agent that has the tool to load them.
        let offers_skills = tools.iter().any(|spec| spec.name == crate::skills::SKILL);
        let system = engine.prompts.assemble(
            &agent.system,
            offers_skills.then_some(&agent.permission),
            info,
            &session.directory,
            &worktree,
        );
        let options = provider_options(info, &agent.options, agent.variant.as_deref());
        TurnContext {
            engine,
            ruleset,
            ceilings,
            cancel,
            worktree,
            tools,
            system,
            options,
            step_limit: agent.steps.or(engine.config.max_steps),
            model,
            agent,
            session,
        }
    }

    /// The context of a summary call under `agent` (the compaction agent)
    /// within this turn: its own rules and prompt, no ceilings, no provider
    /// options, and this turn's tools declared (providers reject tool calls
    /// in a history without tools) but not callable.
    pub(super) fn for_summary<'b>(&'b self, agent: &'b AgentSpec) -> TurnContext<'b> {
        TurnContext {
            engine: self.engine,
            model: Arc::clone(&self.model),
            agent,
            session: self.session,
            ruleset: Arc::new(agent.permission.clone()),
            ceilings: Arc::new(Vec::new()),
            cancel: self.cancel,
            worktree: self.worktree.clone(),
            tools: Arc::clone(&self.tools),
            system: agent.system.clone(),
            options: Map::new(),
            step_limit: Some(1),
        }
    }

    /// The session's id.
    pub(super) fn session_id(&self) -> &'a str {
        self.session.id.as_str()
    }

    /// The directory the session works in.
    pub(super) fn directory(&self) -> &'a Path {
        &self.session.directory
    }

    /// A request of this turn's fields over `messages`.
    pub(super) fn request(&self, messages: History) -> ModelRequest {
        ModelRequest {
            system: self.system.clone(),
            messages,
            tools: Arc::clone(&self.tools),
            tool_choice: ToolChoice::Auto,
            temperature: self.agent.temperature,
            top_p: self.agent.top_p,
            options: self.options.clone(),
            max_output_tokens: crate::compaction::request_output_cap(
                &self.model.info().limits,
                &self.engine.config.compaction,
            ),
            ..Default::default()
        }
    }
}

/// The tools `agent` may see under `ruleset`, less those a parent's rules
/// disable (a tool hidden from a parent is hidden from its sub-agents too),
/// each with the description it gives this agent.
fn visible_tools(
    engine: &EngineState,
    agent: &AgentSpec,
    ruleset: &Ruleset,
    ceilings: &[Ruleset],
) -> Vec<ToolSpec> {
    let mut specs = engine.tools.visible(ruleset);
    specs.retain(|spec| {
        ceilings
            .iter()
            .all(|ceiling| !agentgate_permission::is_disabled(&spec.name, ceiling))
    });
    let calling = CallingAgent::new(&agent.name, &agent.permission);
    for spec in &mut specs {
        if let Some(description) = engine
            .tools
            .get(&spec.name)
            .and_then(|tool| tool.description_for(&calling))
        {
            spec.description = description;
        }
    }
    specs
}
