//! `agent run`: one prompt, non-interactive (§16). The answer streams to
//! stdout, tool activity to stderr; asks are rejected with opencode's
//! warning unless `--auto` (those of sub-agents too, so nothing hangs);
//! deny rules still deny. Sessions live in the file store under the data
//! directory, so `--continue` and `--session` pick them up. The config's
//! MCP servers (`mcp` key) add their tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentgate::{CodingAgent, Workspace};
use agentgate_core::{ConfigLoader, StreamExt, TurnEvent};
use agentgate_permission::{Action, AllowAll, Approver, RejectAll, Rule, Ruleset};
use agentgate_tools::mcp::{McpManager, McpStatus};
use agentgate_tools::{SandboxMode, SandboxPolicy};

use crate::interrupt::{INTERRUPTED, WIND_DOWN, cancel_on_signals};
use crate::model_choice::{DEMO_NOTICE, choose_model};
use crate::model_wait::{ModelWait, signal_of};
use crate::progress::{SlowTools, announce_if_slow};
use crate::render::{Format, Renderer, exit_status};
use crate::run_output::{Checked, check_answer, load_schema, write_last_message};
use crate::workspace::{latest_session, session_store};

/// What `agent run` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The agent to run (default: the configured default, else `build`).
    pub agent: Option<String>,
    /// `provider/model` to run on.
    pub model: Option<String>,
    /// Answer every ask "once" (deny rules still deny). Never widens the
    /// bash sandbox: an automatic "once" is not a grant.
    pub auto: bool,
    /// Continue the latest session of the directory.
    pub continue_last: bool,
    /// Continue this session.
    pub session: Option<String>,
    /// How to print.
    pub format: Format,
    /// `--verbose`: show command output and edit diffs too.
    pub verbose: bool,
    /// Run bash commands in this sandbox.
    pub sandbox: Option<SandboxMode>,
    /// The prompt.
    pub prompt: String,
    /// The project directory (default: the current directory).
    pub directory: Option<PathBuf>,
    /// `--max-time`: a deadline for the turn.
    pub max_time: Option<std::time::Duration>,
    /// `--max-retries`: replaces the retry policy's attempt limit.
    pub max_retries: Option<u32>,
    /// `--command`: the custom command to run, `prompt` its arguments.
    pub command: Option<String>,
    /// `--output-schema`: the JSON schema file the answer must match.
    pub output_schema: Option<PathBuf>,
    /// `-o/--output-last-message`: where to write the final message.
    pub output_last_message: Option<PathBuf>,
    /// `--title`: the new session's title (empty: the prompt's start).
    pub title: Option<String>,
    /// `-f/--file`: files attached to the prompt.
    pub files: Vec<PathBuf>,
}

/// The title `--title` gives a new session: the value, or with none the
/// prompt's first 50 characters (`...` when cut), as `opencode run` does.
fn given_title(title: &str, prompt: &str) -> String {
    if !title.is_empty() {
        return title.to_string();
    }
    let start: String = prompt.chars().take(50).collect();
    if prompt.chars().count() > 50 {
        format!("{start}...")
    } else {
        start
    }
}

/// How long a finished run waits for a session title still being written.
const TITLE_GRACE: Duration = Duration::from_secs(10);

/// The sandbox policy for bash: the config's `sandbox` key, as the library
/// reads it ([`Workspace::sandbox_policy_of`]: each field changes only what
/// it names, so the common credential folders stay unreadable unless the
/// key removes them with `default_deny_read: false` or `allow_read`), else
/// `workspace-write` with those folders unreadable; `--sandbox MODE`
/// replaces the mode.
pub fn sandbox_policy(
    flag: Option<SandboxMode>,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<SandboxPolicy, String> {
    let mut policy =
        Workspace::sandbox_policy_of(config.get("sandbox")).map_err(|e| e.to_string())?;
    if let Some(mode) = flag {
        policy.mode = mode;
    }
    Ok(policy)
}

/// An assembled agent (its MCP servers stop when it is dropped).
#[derive(Debug)]
pub struct Built {
    /// The agent.
    pub agent: CodingAgent,
    /// The directory's custom commands.
    pub commands: agentgate_core::Commands,
    /// The agents a user may choose (`/agent` in chat lists them).
    pub agents: Vec<String>,
}

/// After how long the servers still starting are named.
const MCP_NOTICE_AFTER: Duration = Duration::from_secs(1);

/// Starts the config's MCP servers, naming those still starting after a
/// second; a server that fails is reported on stderr (and left out).
async fn start_mcp(workspace: &Workspace) -> Option<McpManager> {
    let manager = workspace.mcp()?;
    announce_if_slow(manager.start(), MCP_NOTICE_AFTER, || {
        let starting = manager.starting();
        (!starting.is_empty()).then(|| format!("starting MCP servers: {} ...", starting.join(", ")))
    })
    .await;
    for server in manager.status().await {
        if let McpStatus::Failed(error) = &server.status {
            // The server's name is the project's, its error may quote it.
            eprintln!(
                "agent: MCP server {} failed: {}",
                crate::terminal_text::Untrusted::new(&server.name),
                crate::terminal_text::Untrusted::new(error)
            );
        }
    }
    Some(manager)
}

/// The engine settings `agent run` and `agent chat` take from their flags
/// (`--max-time`, `--max-retries`) and the environment (recording
/// contents on the trace spans).
fn engine_settings(
    max_time: Option<Duration>,
    retry: Option<agentgate_core::RetryPolicy>,
) -> impl FnOnce(agentgate_core::EngineBuilder) -> agentgate_core::EngineBuilder + Send + 'static {
    let contents = crate::telemetry_cli::capture_content();
    move |mut engine| {
        engine = engine.trace_contents(contents);
        if let Some(limit) = max_time {
            engine = engine.max_turn_time(limit);
        }
        if let Some(retry) = retry {
            engine = engine.retry(retry);
        }
        engine
    }
}

/// Assembles the agent for a command the way the library does
/// (`agentgate::CodingAgent::builder` over the directory's [`Workspace`]:
/// configuration, model through the config's providers, tools under the
/// sandbox policy, MCP servers), with what only the CLI adds: the offline
/// demo model when nothing is configured (announced on stderr), the
/// `--sandbox`, `--max-time` and `--max-retries` flags, the file session
/// store and the session to resume.
pub async fn build_agent(
    options: &RunOptions,
    approver: Arc<dyn Approver>,
    permissions: Option<agentgate_permission::PermissionGate>,
) -> Result<Built, String> {
    let directory = match &options.directory {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    // On a blocking thread, so a signal need not wait for a slow disk.
    let dir = directory.clone();
    let workspace = tokio::task::spawn_blocking(move || {
        let loader = ConfigLoader::new(&dir);
        Workspace::with_loader(&dir, loader)
    })
    .await
    .map_err(|e| format!("loading the configuration failed: {e}"))?
    .map_err(|e| e.to_string())?;
    // At a terminal, an untrusted project is asked about once.
    let workspace = crate::trust_cli::confirm(workspace).await?;
    for warning in &workspace.config().warnings {
        eprintln!(
            "agent: warning: {}",
            crate::terminal_text::Untrusted::new(warning)
        );
    }
    let chosen = match &options.agent {
        Some(name) => crate::agent_choice::choose(&workspace, name)?,
        None => None,
    };
    let choice = choose_model(options.model.as_deref(), &workspace, |v| {
        std::env::var(v).ok()
    })?;
    let demo = choice.demo;
    if demo {
        eprintln!("{DEMO_NOTICE}");
    }
    let store = session_store().await?;
    let resume = match (&options.session, options.continue_last) {
        (Some(id), _) => match agentgate_core::SessionStore::session(store.as_ref(), id).await {
            Ok(_) => Some(id.clone()),
            Err(agentgate_core::SessionStoreError::NotFound(_)) => {
                return Err(format!(
                    "--session {id}: no such session; `agent sessions list` shows this directory's sessions"
                ));
            }
            Err(error) => return Err(error.to_string()),
        },
        (None, true) => latest_session(store.as_ref(), &directory)
            .await?
            .map(|s| s.id)
            .or_else(|| {
                eprintln!("agent: no earlier session in this directory; starting a new one");
                None
            }),
        (None, false) => None,
    };
    let policy = sandbox_policy(options.sandbox, &workspace.config().value)?;
    let retry = match (options.max_retries, workspace.config().value.get("retry")) {
        (None, _) => None,
        (Some(max), value) => {
            let policy = match value {
                Some(value) => agentgate_core::RetryPolicy::from_config(value, "retry")
                    .map_err(|e| format!("config: {e}"))?,
                None => agentgate_core::RetryPolicy::default(),
            };
            Some(policy.with_max_retries(Some(max)))
        }
    };
    let commands = workspace.commands().clone();
    let agents = crate::agent_choice::choices(&workspace);
    let mcp = start_mcp(&workspace).await;
    let mut builder = CodingAgent::builder(&directory)
        .share_cli_store()
        .workspace(workspace)
        .model(choice.model)
        .sandbox(policy)
        .store(store)
        .approver(approver);
    if let Some(manager) = mcp {
        builder = builder.mcp(manager);
    }
    if demo {
        // The demo shows the gate: its session asks before any command.
        builder =
            builder.session_permission(Ruleset::from(vec![Rule::new("bash", "*", Action::Ask)]));
    }
    if let Some(permissions) = permissions {
        builder = builder.permissions(permissions);
    }
    if let Some(agent) = chosen {
        builder = builder.agent(agent);
    }
    if let Some(title) = &options.title {
        builder = builder.title(given_title(title, &options.prompt));
    }
    if let Some(id) = resume {
        builder = builder.resume(id);
    }
    builder = builder.engine(engine_settings(options.max_time, retry));
    let agent = builder.build().await.map_err(|e| e.to_string())?;
    Ok(Built {
        agent,
        commands,
        agents,
    })
}

/// Runs `agent run`; returns the exit status.
pub async fn run(options: RunOptions) -> Result<u8, String> {
    // First: from here on a signal at any stage ends the run with 130.
    let cancel = cancel_on_signals()?;
    // The renderer says what was asked (below), at a line start: the
    // approver printing it itself would cut into streamed text.
    let approver: Arc<dyn Approver> = if options.auto {
        Arc::new(AllowAll)
    } else {
        Arc::new(RejectAll::new(std::io::sink()))
    };
    // The "always" approvals `agent chat` remembered for this directory
    // count here too (read, never added to: `--auto` answers `once`).
    let directory = match &options.directory {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let permissions = crate::workspace::gate(&directory)?;
    let options = RunOptions {
        directory: Some(directory),
        ..options
    };
    let schema = match &options.output_schema {
        Some(path) => Some(load_schema(path)?),
        None => None,
    };
    let attached = attachments(&options.files)?;
    // Dropping the build on a signal stops the MCP servers it started.
    let built = tokio::select! {
        biased;
        () = cancel.cancelled() => return Ok(interrupted("before the prompt was sent")),
        built = build_agent(&options, approver, Some(permissions)) => built?,
    };
    if cancel.is_cancelled() {
        return Ok(interrupted("before the prompt was sent"));
    }
    let agent = &built.agent;
    let model = agent.engine().model_for(agent.session()).ok();
    if let Some(model) = &model {
        check_images(&attached, model.info(), &options.files)?;
    }
    // The model's configured prices, for the final line.
    let cost = model.and_then(|model| model.info().cost);
    // With a schema, stdout is the validated JSON alone: the streamed
    // answer is not printed (in text; JSON lines stay events).
    let out: Box<dyn std::io::Write> = if schema.is_some() && options.format == Format::Text {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stdout())
    };
    let mut renderer = Renderer::new(
        out,
        std::io::stderr(),
        options.format,
        agent.session().id.clone(),
    )
    .with_summary(cost)
    .verbose(options.verbose);
    // A custom command: its expansion (or its sub-agent) is the first turn.
    let mut command = None;
    if let Some(name) = &options.command {
        let prepared = crate::commands_cli::prepare(
            agent,
            &built.commands,
            name,
            &options.prompt,
            cancel.clone(),
        )
        .await;
        let mut prepared = match prepared {
            Ok(prepared) => prepared,
            Err(not_sent) => {
                eprintln!(
                    "agent: {}",
                    crate::terminal_text::Untrusted::new(&not_sent.message)
                );
                if not_sent.rejected && !options.auto {
                    eprintln!(
                        "agent: `agent run` cannot ask you; rerun with --auto to allow what the rules leave to ask"
                    );
                }
                return Ok(1);
            }
        };
        for note in &prepared.notes {
            renderer.note(&format!("agent: {note}"));
        }
        if let Some(plan) = &prepared.subtask {
            return Ok(run_subtask(agent, plan, &options, cancel.clone()).await);
        }
        if let Some(schema) = &schema {
            prepared
                .parts
                .push(agentgate_core::Part::text(schema.instruction()));
        }
        prepared.parts.extend(attached);
        command = Some((prepared.parts, prepared.options));
    } else if !attached.is_empty() {
        // The prompt and its attachments: the first turn's parts.
        let mut parts = vec![agentgate_core::Part::text(match &schema {
            Some(schema) => format!("{}\n\n{}", options.prompt, schema.instruction()),
            None => options.prompt.clone(),
        })];
        parts.extend(attached);
        command = Some((parts, agentgate_core::PromptOptions::default()));
    }
    let mut prompt = match &schema {
        Some(schema) => format!("{}\n\n{}", options.prompt, schema.instruction()),
        None => options.prompt.clone(),
    };
    let mut retries = 0;
    let status = loop {
        let (status, finished) = match one_turn(
            agent,
            command.take(),
            &prompt,
            &options,
            &mut renderer,
            &cancel,
        )
        .await
        {
            Ok(turn) => turn,
            Err(status) => return Ok(status),
        };
        let answer = finished.as_ref().map(|turn| turn.text());
        if let Some(path) = &options.output_last_message {
            write_last_message(path, answer.as_deref())?;
        }
        let (Some(schema), Some(answer), 0) = (&schema, answer, status) else {
            break status;
        };
        match check_answer(schema, &answer, retries, options.format) {
            Checked::Valid => break 0,
            Checked::Invalid(message) => {
                renderer.note(&format!("agent: {message}"));
                break 1;
            }
            Checked::Retry(problem) => {
                retries += 1;
                renderer.note(&format!(
                    "agent: the answer does not match the output schema ({problem}); asking again ({retries}/{})",
                    schema.retry_limit()
                ));
                prompt = schema.correction(&problem);
            }
        }
    };
    if cancel.is_cancelled() {
        return Ok(INTERRUPTED);
    }
    // A title still being written lands before the process ends (the
    // answer is already out; a title model that hangs is given up on).
    let _ = tokio::time::timeout(TITLE_GRACE, agent.engine().wait_for_titles()).await;
    Ok(status)
}

/// The parts of the `-f` files, in order; a file that cannot be attached
/// (missing, too large, neither text nor a supported image) is an error
/// naming it.
pub fn attachments(files: &[PathBuf]) -> Result<Vec<agentgate_core::Part>, String> {
    let mut parts = Vec::new();
    for file in files {
        let attached = agentgate_core::attach_file(file).map_err(|e| format!("--file {e}"))?;
        parts.extend(attached);
    }
    Ok(parts)
}

/// Refuses images for a model without image input, before anything is
/// sent, saying what to change.
pub fn check_images(
    parts: &[agentgate_core::Part],
    model: &agentgate_core::ModelInfo,
    files: &[PathBuf],
) -> Result<(), String> {
    if model.capabilities.images || !agentgate_core::has_images(parts) {
        return Ok(());
    }
    let images: Vec<String> = files
        .iter()
        .filter(|file| {
            std::fs::read(file)
                .ok()
                .and_then(|bytes| agentgate_core::image_mime(file, &bytes))
                .is_some()
        })
        .map(|file| file.display().to_string())
        .collect();
    Err(format!(
        "model {} does not accept images ({}); choose a model with image input with --model, \
         or, if this one does take images, say so in the config: \
         provider.{}.models.{}.modalities.input = [\"text\", \"image\"]",
        model.full_id(),
        images.join(", "),
        model.provider,
        model.id,
    ))
}

/// Says what becomes of an ask `agent run` cannot put to anyone:
/// opencode's auto-reject warning, or that `--auto` allows it once (in
/// JSON, the event says it already).
fn note_ask(
    renderer: &mut Renderer<Box<dyn std::io::Write>, std::io::Stderr>,
    options: &RunOptions,
    item: &TurnEvent,
) {
    if (!options.auto || options.format == Format::Text)
        && let TurnEvent::Event(agentgate_core::Event::PermissionAsked { request }) = item
    {
        renderer.note(&format!(
            "permission requested: {} ({}); {}",
            crate::terminal_text::terminal_safe(&request.permission),
            crate::terminal_text::terminal_safe(&request.patterns.join(", ")),
            if options.auto {
                "allowed once (--auto)"
            } else {
                "auto-rejecting"
            }
        ));
    }
}

/// The session's model as the wait line names it (`provider/model`).
fn model_name(agent: &CodingAgent) -> String {
    agent
        .engine()
        .model_for(agent.session())
        .map(|model| model.info().full_id())
        .unwrap_or_else(|_| "the model".to_string())
}

/// Streams one turn of `prompt` (or of a custom command's expansion)
/// through `renderer`: its exit status and
/// its result when it finished with one; `Err(status)` when the run was
/// interrupted and must end now.
async fn one_turn(
    agent: &CodingAgent,
    command: Option<(Vec<agentgate_core::Part>, agentgate_core::PromptOptions)>,
    prompt: &str,
    options: &RunOptions,
    renderer: &mut Renderer<Box<dyn std::io::Write>, std::io::Stderr>,
    cancel: &agentgate_core::CancellationToken,
) -> Result<(u8, Option<agentgate_core::TurnResult>), u8> {
    let mut stream = match command {
        // A command's expansion, with its agent and model.
        Some((parts, prompt_options)) => agent
            .stream_parts(parts, prompt_options, cancel.clone())
            .boxed(),
        None => agent
            .stream_with(prompt.to_string(), cancel.clone())
            .boxed(),
    };
    let mut status = 1;
    let mut finished = None;
    let mut slow = SlowTools::default();
    let root = agent.session().id.clone();
    let mut wait = ModelWait::new(model_name(agent));
    // A quarter second: the wait line comes when its 2 s are up.
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    // The turn gets a moment to close its calls once the token fired; a
    // run that is still waiting after it ends anyway.
    let wind_down = async {
        cancel.cancelled().await;
        tokio::time::sleep(WIND_DOWN).await;
    };
    tokio::pin!(wind_down);
    loop {
        let item = tokio::select! {
            item = stream.next() => match item {
                Some(item) => item,
                None => break,
            },
            _ = tick.tick() => {
                for line in slow.due() {
                    renderer.note(&format!("agent: {line}"));
                }
                if let Some(seconds) = wait.due() {
                    renderer.waiting(&wait, seconds);
                }
                continue;
            }
            () = &mut wind_down => return Err(interrupted("while the turn was winding down")),
        };
        slow.follow(&item);
        wait.follow(signal_of(&item, &root));
        note_ask(renderer, options, &item);
        renderer.event(&item);
        if let TurnEvent::Finished(result) = &item {
            status = exit_status(result);
            if let Ok(turn) = result
                && matches!(turn.stop, agentgate_core::StopReason::Rejected)
                && !options.auto
            {
                eprintln!(
                    "agent: `agent run` cannot ask you; rerun with --auto to allow what the rules leave to ask"
                );
            }
            if let Ok(turn) = result
                && matches!(turn.stop, agentgate_core::StopReason::Done { .. })
            {
                finished = Some(turn.clone());
            }
        }
    }
    if cancel.is_cancelled() {
        return Err(INTERRUPTED);
    }
    Ok((status, finished))
}

/// Runs a command's sub-agent (`subtask`) and prints its answer; the exit
/// status.
async fn run_subtask(
    agent: &CodingAgent,
    plan: &agentgate_core::SubtaskPlan,
    options: &RunOptions,
    cancel: agentgate_core::CancellationToken,
) -> u8 {
    eprintln!(
        "agent: running the command as sub-agent {}",
        crate::terminal_text::Untrusted::new(&plan.agent)
    );
    match agent
        .engine()
        .run_subtask(&agent.session().id, plan, cancel)
        .await
    {
        Ok(output) => {
            if options.format == Format::Json {
                let line = serde_json::json!({"type": "subtask.finished", "agent": plan.agent, "output": output.output});
                println!("{}", crate::terminal_text::json_safe(&line.to_string()));
            } else {
                println!("{}", crate::terminal_text::Untrusted::new(&output.output));
            }
            0
        }
        Err(error) => {
            eprintln!(
                "agent: the sub-agent {} did not run: {}",
                crate::terminal_text::Untrusted::new(&plan.agent),
                crate::terminal_text::Untrusted::new(error)
            );
            1
        }
    }
}

/// Says the run was interrupted; the exit status for it.
fn interrupted(when: &str) -> u8 {
    eprintln!("agent: interrupted {when}");
    INTERRUPTED
}

#[cfg(test)]
mod sandbox_config_tests {
    use super::*;

    fn config(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        json.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_config_key_sets_the_policy_and_the_flag_its_mode() {
        let none = sandbox_policy(None, &config(serde_json::json!({}))).unwrap();
        assert_eq!(none.mode, SandboxMode::WorkspaceWrite);
        assert!(
            none.denied_read().len() >= agentgate_tools::SECRET_PATHS.len(),
            "credential folders unreadable"
        );

        // A key naming only the network keeps the default denials.
        let network = config(serde_json::json!({"sandbox": {"network": false}}));
        let network = sandbox_policy(None, &network).unwrap();
        assert_eq!(network.network, Some(false));
        assert_eq!(network.denied_read(), none.denied_read());
        // Removing them is explicit.
        let removed = config(serde_json::json!({"sandbox": {"default_deny_read": false}}));
        assert!(
            sandbox_policy(None, &removed)
                .unwrap()
                .denied_read()
                .is_empty()
        );

        let cfg = config(serde_json::json!({"sandbox": {"mode": "read-only", "network": true}}));
        let from_config = sandbox_policy(None, &cfg).unwrap();
        assert_eq!(from_config.mode, SandboxMode::ReadOnly);
        assert_eq!(from_config.network, Some(true));

        let flagged = sandbox_policy(Some(SandboxMode::DangerFullAccess), &cfg).unwrap();
        assert_eq!(flagged.mode, SandboxMode::DangerFullAccess);
        assert_eq!(flagged.network, Some(true), "the rest of the key stays");

        let bad = config(serde_json::json!({"sandbox": {"mode": "yolo"}}));
        let error = sandbox_policy(None, &bad).unwrap_err();
        assert!(error.contains("\"sandbox\" key"), "{error}");
    }
}
