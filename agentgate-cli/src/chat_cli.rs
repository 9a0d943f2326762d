//! `agent chat`: an interactive session. Lines are read with a line
//! editor; each prompt's turn streams like `agent run`, with a progress
//! line while the model thinks or a tool runs; asks are shown (request,
//! patterns, the diff or command) and answered once / always (showing the
//! rules it adds, kept in the approval store) / reject / reject with
//! feedback. Ctrl-C cancels the running turn, not the program (local MCP
//! servers run in process groups of their own, so they keep running);
//! during start-up it ends the chat, and SIGTERM ends it at any time.
//! Commands:
//! `/agent NAME`, `/model PROVIDER/MODEL`, `/sessions`, `/undo`, `/redo`, `/help`, `/exit`,
//! and the custom commands as `/NAME ARGS` (see `commands_cli`); an
//! unknown `/x` is answered here, not sent.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use agentgate::CodingAgent;
use agentgate_core::{CancellationToken, Event, Part, StreamExt, ToolState, TurnEvent};
use agentgate_permission::{Answerer, ApprovalRequest, ChannelApprover, Reply, ReplyKind};
use tokio::sync::mpsc;

use crate::interrupt::INTERRUPTED;
use crate::line_reader::{Line, LineReader};
use crate::render::{Format, Renderer, input_summary};
use crate::run_cli::{RunOptions, build_agent};
use crate::spinner::Spinner;
use crate::terminal_text::Untrusted;
use crate::workspace::session_store;

/// How an ask is shown: the request, its patterns, the diff or command,
/// and the answers on offer.
pub fn describe_ask(request: &agentgate_permission::PermissionRequest) -> String {
    use crate::terminal_text::terminal_safe as safe;
    let mut text = format!(
        "permission requested: {}\n  patterns: {}\n",
        safe(&request.permission),
        safe(&request.patterns.join(", "))
    );
    let meta = &request.metadata;
    if let Some(command) = meta.get("command").and_then(|v| v.as_str()) {
        text.push_str(&format!("  command: {}\n", safe(command)));
    }
    if let Some(path) = meta.get("filepath").and_then(|v| v.as_str()) {
        text.push_str(&format!("  file: {}\n", safe(path)));
    }
    if let Some(diff) = meta.get("diff").and_then(|v| v.as_str()) {
        text.push_str(&safe(diff.trim_end()));
        text.push('\n');
    }
    text.push_str("  [o] once");
    if request.answers().contains(&ReplyKind::Grant) {
        text.push_str("  [g] once and let the command write there (sandbox)");
    }
    text.push_str("  [r] reject  [f] reject with feedback");
    // What each "always" stores, named by its rules and said in words (the
    // same text as ACP's options and the server's page).
    for choice in request.always_choices() {
        let key = match choice.kind {
            ReplyKind::AlwaysExact => "x",
            _ => "a",
        };
        text.push_str(&format!(
            "\n  [{key}] {}: {}",
            safe(&choice.label),
            safe(&choice.meaning)
        ));
    }
    text
}

/// Reads the answer to `request` at the terminal (`agent chat`, and the
/// asks `agent attach` answers).
pub async fn answer(
    reader: &LineReader,
    request: &agentgate_permission::PermissionRequest,
) -> Reply {
    loop {
        match reader.read_answer("choice> ").await {
            Line::Text(t) => match t.trim() {
                "o" | "once" | "y" => return Reply::Once,
                "g" | "grant" if request.offers_grant() => return Reply::Grant,
                "a" | "always" if !request.always.is_empty() => return Reply::Always,
                "x" | "exact" if request.offers_exact() => return Reply::AlwaysExact,
                "r" | "reject" | "n" => return Reply::reject(),
                "f" | "feedback" => {
                    return match reader.read("feedback> ", false).await {
                        Line::Text(f) if !f.trim().is_empty() => Reply::correct(f.trim()),
                        _ => Reply::reject(),
                    };
                }
                _ => eprintln!("answer o, g or x (where offered), a, r or f"),
            },
            Line::Interrupted | Line::Eof => return Reply::reject(),
        }
    }
}

/// What a turn sends: a typed line, or a prepared custom command.
enum Prompt {
    Text(String),
    Command(Box<agentgate_core::PreparedCommand>),
}

/// Runs `work` (a command's preparation or sub-agent) while answering the
/// asks it makes; Ctrl-C or SIGTERM cancel it (`None`).
async fn with_asks<T>(
    work: impl std::future::Future<Output = T>,
    cancel: &CancellationToken,
    reader: &LineReader,
    asks: &mut mpsc::Receiver<ApprovalRequest>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
    tty: bool,
) -> Option<T> {
    while interrupts.try_recv().is_ok() {}
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return Some(done),
            Some(request) = asks.recv() => {
                eprintln!("{}", crate::ask_frame::framed(&describe_ask(&request.request), tty));
                let reply = answer(reader, &request.request).await;
                request.respond(reply);
            }
            Some(()) = interrupts.recv() => {
                eprintln!("^C: cancelling the command");
                cancel.cancel();
            }
            () = cancel.cancelled() => return None,
        }
    }
}

/// Runs custom command `name` with `arguments`: prepares it (its shell
/// lines and file reads ask here), then runs its turn or its sub-agent.
#[allow(clippy::too_many_arguments)]
async fn run_command(
    built: &crate::run_cli::Built,
    name: &str,
    arguments: &str,
    reader: &LineReader,
    asks: &mut mpsc::Receiver<ApprovalRequest>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
    terminate: &CancellationToken,
    tty: bool,
) {
    let cancel = terminate.child_token();
    let prepared = with_asks(
        crate::commands_cli::prepare(
            &built.agent,
            &built.commands,
            name,
            arguments,
            cancel.clone(),
        ),
        &cancel,
        reader,
        asks,
        interrupts,
        tty,
    )
    .await;
    let prepared = match prepared {
        None => return,
        Some(Err(not_sent)) => {
            eprintln!("agent: {}", Untrusted::new(&not_sent.message));
            return;
        }
        Some(Ok(prepared)) => prepared,
    };
    for note in &prepared.notes {
        eprintln!("agent: {}", Untrusted::new(note));
    }
    if let Some(plan) = &prepared.subtask {
        eprintln!(
            "agent: running /{} as sub-agent {}",
            Untrusted::new(name),
            Untrusted::new(&plan.agent)
        );
        let session = built.agent.session().id.clone();
        let work = built
            .agent
            .engine()
            .run_subtask(&session, plan, cancel.clone());
        match with_asks(work, &cancel, reader, asks, interrupts, tty).await {
            None => {}
            Some(Ok(output)) => println!("{}", Untrusted::new(&output.output)),
            Some(Err(error)) => eprintln!(
                "agent: the sub-agent {} did not run: {}",
                Untrusted::new(&plan.agent),
                Untrusted::new(error)
            ),
        }
        return;
    }
    turn(
        &built.agent,
        Prompt::Command(Box::new(prepared)),
        reader,
        asks,
        interrupts,
        terminate,
        tty,
    )
    .await;
}

/// `/help`: the chat's own commands, then the custom ones.
fn help(commands: &agentgate_core::Commands) -> String {
    let mut text = String::from(
        "commands:\n  /agent NAME  switch agent (new session)\n  /model PROVIDER/MODEL  switch model\n  \
         /sessions  this directory's sessions\n  /undo  take back the last prompt and its file changes\n  \
         /redo  put back what /undo took\n  /help  this list\n  /exit  leave\n",
    );
    let custom = crate::commands_cli::help_lines(commands);
    if custom.is_empty() {
        text.push_str(
            "no custom commands (.opencode/commands/NAME.md, or \"command\" in opencode.json)\n",
        );
    } else {
        text.push_str("custom commands (/NAME ARGS):\n");
        for line in custom {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text.push_str("a prompt that starts with / is read as a command: start it with a space to send it as text\n");
    text
}

/// Runs one prompt's turn; Ctrl-C (on `interrupts`) cancels it, and so
/// does `terminate` (SIGTERM, which also ends the chat).
async fn turn(
    agent: &CodingAgent,
    prompt: Prompt,
    reader: &LineReader,
    asks: &mut mpsc::Receiver<ApprovalRequest>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
    terminate: &CancellationToken,
    tty: bool,
) {
    while interrupts.try_recv().is_ok() {}
    let cancel = terminate.child_token();
    let mut stream = match prompt {
        Prompt::Text(text) => agent.stream_with(text, cancel.clone()).boxed(),
        Prompt::Command(prepared) => agent
            .stream_parts(prepared.parts, prepared.options, cancel.clone())
            .boxed(),
    };
    // Each turn ends with its status line (steps, tokens and, with the
    // model's configured prices, cost), as in `agent run`.
    let cost = agent
        .engine()
        .model_for(agent.session())
        .ok()
        .and_then(|model| model.info().cost);
    let mut renderer = Renderer::new(
        std::io::stdout(),
        std::io::stderr(),
        Format::Text,
        agent.session().id.clone(),
    )
    .with_summary(cost)
    .styled(tty);
    let mut spinner = Spinner::new(tty);
    spinner.set(Some("thinking".into()));
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        // Biased: what the stream already holds (the model's text before
        // an ask) is printed before the ask is drawn, so the ask comes
        // after everything the model said before it.
        tokio::select! {
            biased;
            Some(()) = interrupts.recv() => {
                spinner.clear();
                renderer.note("^C: cancelling the turn");
                cancel.cancel();
            }
            item = stream.next() => {
                let Some(item) = item else { break };
                spinner.clear();
                renderer.event(&item);
                match &item {
                    TurnEvent::Event(Event::PartDelta { .. }) => spinner.set(None),
                    TurnEvent::Event(Event::PartUpdated { part: Part::Tool(tool), .. }) => {
                        spinner.set(Some(match &tool.state {
                            ToolState::Running { input, .. } => format!("running {} {}", tool.tool, input_summary(input)),
                            _ => "thinking".into(),
                        }));
                    }
                    TurnEvent::Finished(_) => break,
                    _ => {}
                }
            }
            Some(request) = asks.recv() => {
                spinner.clear();
                let finished = catch_up(&mut stream, &mut renderer, &request.request.id).await;
                renderer.ask(&describe_ask(&request.request));
                let reply = answer(reader, &request.request).await;
                request.respond(reply);
                if finished {
                    break;
                }
            }
            _ = tick.tick() => spinner.tick(),
        }
    }
    spinner.set(None);
}

/// How long the turn's stream may stay silent before an ask is drawn
/// without its `permission.asked` event.
const CATCH_UP: Duration = Duration::from_secs(1);

/// Prints what the turn's stream still holds from before the ask `id`
/// (the engine relays its events through a task of its own, so the
/// model's last words may arrive after the ask itself), up to the stream's
/// `permission.asked` event for it: the ask is then drawn after everything
/// the model said before it. Whether the turn finished meanwhile.
async fn catch_up<R: std::io::Write>(
    stream: &mut (impl futures::Stream<Item = TurnEvent> + Unpin),
    renderer: &mut Renderer<std::io::Stdout, R>,
    id: &str,
) -> bool {
    while let Ok(Some(item)) = tokio::time::timeout(CATCH_UP, stream.next()).await {
        renderer.event(&item);
        match &item {
            TurnEvent::Event(Event::PermissionAsked { request }) if request.id == id => {
                return false;
            }
            TurnEvent::Finished(_) => return true,
            _ => {}
        }
    }
    false
}

/// Runs `agent chat`.
pub async fn chat(mut options: RunOptions) -> Result<u8, String> {
    let tty = std::io::stderr().is_terminal() && std::io::stdin().is_terminal();
    // The editor first: it installs a SIGINT handler of its own, which
    // tokio's (registered after it) chains to instead of being replaced.
    let reader = LineReader::start()?;
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;
    let (interrupt_tx, mut interrupts) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while sigint.recv().await.is_some() {
            if interrupt_tx.send(()).is_err() {
                break;
            }
        }
    });
    let directory = match &options.directory {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    options.directory = Some(directory.clone());
    let permissions = crate::workspace::gate(&directory)?;
    let (approver, mut asks) = ChannelApprover::new(8);
    let approver = Arc::new(approver.answered_by(Answerer::Terminal));
    let terminate = terminate_token()?;
    // Ctrl-C while the agent is assembled (MCP servers starting) ends the
    // chat: there is no turn to cancel yet.
    let built = interruptible(
        build_agent(&options, approver.clone(), Some(permissions.clone())),
        &mut interrupts,
        &terminate,
    )
    .await;
    let Some(built) = built else {
        eprintln!("agent: interrupted before the chat started");
        return Ok(INTERRUPTED);
    };
    let mut built = built?;
    eprintln!(
        "agent chat: session {} (agent {}); /help lists the commands",
        Untrusted::new(&built.agent.session().id),
        Untrusted::new(&built.agent.session().agent)
    );
    loop {
        let line = tokio::select! {
            line = reader.read("> ", true) => line,
            () = terminate.cancelled() => return Ok(INTERRUPTED),
        };
        let line = match line {
            Line::Text(line) => line,
            Line::Interrupted => continue,
            Line::Eof => break,
        };
        let raw = line.clone();
        let line = if line.starts_with(' ') {
            // A leading space sends a line that starts with / as text.
            String::new()
        } else {
            line.trim().to_string()
        };
        if line.is_empty() && !raw.trim().is_empty() {
            turn(
                &built.agent,
                Prompt::Text(raw.trim().to_string()),
                &reader,
                &mut asks,
                &mut interrupts,
                &terminate,
                tty,
            )
            .await;
            if terminate.is_cancelled() {
                return Ok(INTERRUPTED);
            }
            continue;
        }
        let raw = line.clone();
        let (command, argument) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        let argument = argument.trim().to_string();
        match command {
            "" => continue,
            "/exit" | "/quit" => break,
            "/sessions" => {
                print_sessions(&built.agent, &directory).await?;
                continue;
            }
            "/model" if argument.is_empty() => {
                match built.agent.engine().model_for(built.agent.session()) {
                    Ok(model) => {
                        let info = model.info();
                        eprintln!(
                            "model {}/{} (/model PROVIDER/MODEL switches)",
                            Untrusted::new(&info.provider),
                            Untrusted::new(&info.id)
                        );
                    }
                    Err(e) => eprintln!("agent: no model: {}", Untrusted::new(e)),
                }
                continue;
            }
            "/agent" if argument.is_empty() => {
                eprintln!(
                    "agent {} (/agent NAME switches to one of {})",
                    Untrusted::new(&built.agent.session().agent),
                    Untrusted::new(built.agents.join(", "))
                );
                continue;
            }
            "/agent" | "/model" => {
                let mut next = options.clone();
                if command == "/agent" {
                    next.agent = Some(argument);
                    next.session = None;
                } else {
                    next.model = Some(argument);
                    next.session = Some(built.agent.session().id.clone());
                }
                next.continue_last = false;
                let rebuilt = interruptible(
                    build_agent(&next, approver.clone(), Some(permissions.clone())),
                    &mut interrupts,
                    &terminate,
                )
                .await;
                let Some(rebuilt) = rebuilt else {
                    eprintln!(
                        "agent: interrupted; keeping session {}",
                        Untrusted::new(&built.agent.session().id)
                    );
                    continue;
                };
                match rebuilt {
                    Ok(next_built) => {
                        built = next_built;
                        options = next;
                        eprintln!(
                            "session {} (agent {})",
                            Untrusted::new(&built.agent.session().id),
                            Untrusted::new(&built.agent.session().agent)
                        );
                    }
                    Err(e) => eprintln!("agent: {}", Untrusted::new(e)),
                }
                continue;
            }
            "/undo" | "/redo" => {
                let said = crate::undo_cli::slash(&built.agent, command, &argument).await;
                eprint!("{}", crate::terminal_text::terminal_safe(&said));
                continue;
            }
            "/help" => {
                // Custom commands' descriptions are the project's text.
                eprint!("{}", Untrusted::new(help(&built.commands)));
                continue;
            }
            _ if command.starts_with('/') => {
                let name = &command[1..];
                if built.commands.get(name).is_none() {
                    eprintln!(
                        "agent: unknown command {}; /help lists the commands",
                        Untrusted::new(command)
                    );
                    continue;
                }
                run_command(
                    &built,
                    name,
                    &argument,
                    &reader,
                    &mut asks,
                    &mut interrupts,
                    &terminate,
                    tty,
                )
                .await;
                if terminate.is_cancelled() {
                    return Ok(INTERRUPTED);
                }
                continue;
            }
            _ => {}
        }
        turn(
            &built.agent,
            Prompt::Text(raw),
            &reader,
            &mut asks,
            &mut interrupts,
            &terminate,
            tty,
        )
        .await;
        if terminate.is_cancelled() {
            return Ok(INTERRUPTED);
        }
    }
    // A session title still being written lands before the chat ends.
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        built.agent.engine().wait_for_titles(),
    )
    .await;
    Ok(0)
}

/// `/sessions`: the directory's sessions, the current one starred.
async fn print_sessions(agent: &CodingAgent, directory: &std::path::Path) -> Result<(), String> {
    let store = session_store().await?;
    for session in crate::workspace::sessions_of(store.as_ref(), directory).await? {
        let here = if session.id == agent.session().id {
            "*"
        } else {
            " "
        };
        // Titles are written by a model: shown terminal-safe.
        println!(
            "{here} {}  {}  {}",
            Untrusted::new(&session.id),
            Untrusted::new(&session.agent),
            Untrusted::new(&session.title)
        );
    }
    Ok(())
}

/// A token cancelled by SIGTERM (Ctrl-C has its own channel: it cancels a
/// turn, not the chat).
fn terminate_token() -> Result<CancellationToken, String> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    let token = CancellationToken::new();
    let fired = token.clone();
    tokio::spawn(async move {
        if terminate.recv().await.is_some() {
            fired.cancel();
        }
    });
    Ok(token)
}

/// Runs `work` unless Ctrl-C or SIGTERM comes first (`None`: it was
/// dropped, which stops the MCP servers it was starting).
async fn interruptible<T>(
    work: impl std::future::Future<Output = T>,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
    terminate: &CancellationToken,
) -> Option<T> {
    while interrupts.try_recv().is_ok() {}
    tokio::select! {
        done = work => Some(done),
        Some(()) = interrupts.recv() => None,
        () = terminate.cancelled() => None,
    }
}
