// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk),
// driving an agent server over stdio against a mock model it serves itself
// (an OpenAI-compatible chat completions endpoint on 127.0.0.1), so the same
// script runs against `agent acp` and `opencode acp`.
//
//   node acp_client.mjs --project DIR [--lenient] -- AGENT_COMMAND [ARGS...]
//
// ACP_SDK names the SDK's package folder. The script writes DIR/opencode.json
// (the mock model, edit and bash asking), then:
//   1. initialize, session/new;
//   2. a prompt whose edit asks (answered allow once): streamed chunks, the
//      tool call with its diff, notes.txt changed;
//   3. a prompt whose command asks (answered reject once): the call fails;
//   4. a prompt whose answer stalls: cancelled after the first chunk, the
//      prompt answers `cancelled`; then a prompt cancelled while its ask
//      waits for the client;
//   5. in a new process: session/load replays the transcript.
// It checks that stdout carried JSON-RPC messages only, and prints one JSON
// object: every check, the updates sent by kind, the time to the first chunk
// and the agent's peak memory. It exits 1 when a check failed (unless
// --lenient, for comparisons).

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const split = args.indexOf("--");
if (split < 0) {
  console.error("usage: acp_client.mjs --project DIR [--lenient] -- COMMAND [ARGS...]");
  process.exit(2);
}
const own = args.slice(0, split);
const command = args.slice(split + 1);
const project = own[own.indexOf("--project") + 1];
const lenient = own.includes("--lenient");
const sdkDir = process.env.ACP_SDK;
if (!sdkDir) {
  console.error("ACP_SDK must name the @agentclientprotocol/sdk package folder");
  process.exit(2);
}
const acp = await import(pathToFileURL(join(sdkDir, "dist/v1/stable/acp.js")).href);

const checks = [];
function check(name, ok, detail) {
  checks.push(detail === undefined ? { name, ok: !!ok } : { name, ok: !!ok, detail });
}

// ---- the mock model -------------------------------------------------------

const notes = join(project, "notes.txt");
let requests = 0;
// The last user text of the model request that answered "Reviewed." (a
// custom command's expanded template).
let reviewSaw = null;

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join(" ");
  return "";
}

function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "mock", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function toolCall(name, input) {
  return [
    chunk({ role: "assistant", tool_calls: [{ index: 0, id: `call_${name}_${requests}`, type: "function", function: { name, arguments: JSON.stringify(input) } }] }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
}

function answer(words, reasoning) {
  const out = [];
  if (reasoning) out.push(chunk({ role: "assistant", reasoning_content: reasoning }));
  for (const word of words) out.push(chunk({ content: word }));
  out.push(chunk({}, "stop"), "data: [DONE]\n\n");
  return out;
}

const model = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    requests += 1;
    let request = {};
    try {
      request = JSON.parse(body);
    } catch {}
    const messages = request.messages ?? [];
    const last = messages[messages.length - 1] ?? {};
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const said = textOf(lastUser?.content).toLowerCase();
    res.socket?.setNoDelay(true);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let events;
    if (!request.tools || request.tools.length === 0) {
      events = answer(["Notes"]); // a title or summary request
    } else if (last.role === "tool") {
      events = answer(["The ", "file ", "now ", "says ", "5678."], "The edit went through.");
    } else if (said.includes("slow")) {
      // One chunk, then nothing until the client goes away.
      res.write(chunk({ role: "assistant", content: "Thinking " }));
      const keep = setInterval(() => res.write(": keep-alive\n\n"), 200);
      res.on("close", () => clearInterval(keep));
      return;
    } else if (said.includes("edit")) {
      events = toolCall("edit", { filePath: notes, oldString: "1234", newString: "5678" });
    } else if (said.includes("for bugs")) {
      reviewSaw = textOf(lastUser?.content);
      events = answer(["Reviewed."]);
    } else if (said.includes("command")) {
      events = toolCall("bash", { command: "echo hi", description: "Print hi" });
    } else {
      events = answer(["Hello."]);
    }
    res.end(events.join(""));
  });
});
await new Promise((resolve) => model.listen(0, "127.0.0.1", resolve));
const port = model.address().port;

writeFileSync(
  join(project, "opencode.json"),
  JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    snapshot: false,
    model: "mock/mock",
    small_model: "mock/mock",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock",
        options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "x" },
        models: { mock: { name: "Mock" } },
      },
    },
    permission: { edit: "ask", bash: "ask" },
  }),
);
writeFileSync(notes, "the launch code is 1234\n");
mkdirSync(join(project, ".opencode/command"), { recursive: true });
writeFileSync(
  join(project, ".opencode/command/review.md"),
  "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs.\n",
);

// ---- the agent process ----------------------------------------------------

let stdoutViolations = [];

function startAgent() {
  const child = spawn(command[0], command.slice(1), {
    cwd: project,
    env: { ...process.env, PWD: project },
    stdio: ["pipe", "pipe", "inherit"],
  });
  // Every line on stdout must be a JSON-RPC message.
  let pending = "";
  const tapped = new ReadableStream({
    start(controller) {
      child.stdout.on("data", (data) => {
        pending += data.toString("utf8");
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim() === "") continue;
          try {
            if (JSON.parse(line).jsonrpc !== "2.0") stdoutViolations.push(line);
          } catch {
            stdoutViolations.push(line);
          }
        }
        // The client may have closed its side already (the connection ended).
        try {
          controller.enqueue(new Uint8Array(data));
        } catch {}
      });
      child.stdout.on("end", () => {
        try {
          controller.close();
        } catch {}
      });
    },
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), tapped);
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, stream, exited };
}

function peakMemoryKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = status.match(/VmHWM:\s+(\d+) kB/);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// What the client saw, per session/update kind and in order.
const updates = [];
const asks = [];
let answers = [];
let onUpdate = () => {};

function clientApp() {
  return acp
    .client({ name: "agentgate-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push({ at: performance.now(), ...params.update, sessionId: params.sessionId });
      onUpdate(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asks.push(params);
      const kind = answers.shift() ?? "reject_once";
      if (kind === "hold") {
        // Unanswered until the turn is cancelled; then `cancelled`, as the
        // protocol asks of a client that cancels.
        heldAsk?.();
        return cancelSent.then(() => ({ outcome: { outcome: "cancelled" } }));
      }
      const option = params.options.find((o) => o.kind === kind);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
}

const since = (mark) => updates.slice(mark);
const ofKind = (list, kind) => list.filter((u) => u.sessionUpdate === kind);
const textOfChunks = (list, kind) => ofKind(list, kind).map((u) => u.content?.text ?? "").join("");

const metrics = {};
// Nothing of a turn may arrive after its prompt answered: a moment later
// there must be no new update.
async function nothingLate(name) {
  const count = updates.length;
  await new Promise((resolve) => setTimeout(resolve, 150));
  check(`${name}: nothing after the answer`, updates.length === count, updates.slice(count).map((u) => u.sessionUpdate));
}
let heldAsk;
let sendCancel;
const cancelSent = new Promise((resolve) => (sendCancel = resolve));
let sessionId;

// ---- first process: new session, asks, cancel ------------------------------

const first = startAgent();
try {
  await clientApp().connectWith(first.stream, async (ctx) => {
    const init = await withTimeout(
      ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
      30000,
      "initialize",
    );
    check("initialize: protocol 1", init.protocolVersion === 1, init.protocolVersion);
    check("initialize: loadSession", init.agentCapabilities?.loadSession === true);

    const session = await withTimeout(
      ctx.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] }),
      60000,
      "session/new",
    );
    sessionId = session.sessionId;
    check("session/new: an id", typeof sessionId === "string" && sessionId.length > 0);
    const modes = (session.modes?.availableModes ?? []).map((m) => m.id);
    check("session/new: modes are the primary agents", modes.includes("build") && modes.includes("plan"), modes);

    if (modes.includes("plan")) {
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: session.modes.currentModeId });
      check("session/set_mode: accepted", true);
    }

    // The project's custom commands, listed after session/new; a prompt
    // that starts with /review runs the expanded template.
    const listed = () => ofKind(updates, "available_commands_update").find((u) => u.sessionId === sessionId);
    for (let i = 0; i < 50 && !listed(); i++) await new Promise((r) => setTimeout(r, 100));
    const review = listed()?.availableCommands?.find((c) => c.name === "review");
    check("commands: review listed after session/new", review?.description === "Review a file", listed());
    check("commands: review takes input", review?.input?.hint === "$ARGUMENTS", review);
    const reviewed = await withTimeout(
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/review calc.py" }] }),
      60000,
      "the /review prompt",
    );
    check("commands: /review ends its turn", reviewed.stopReason === "end_turn", reviewed.stopReason);
    check(
      "commands: the model receives the expanded template",
      reviewSaw?.includes("Review calc.py for bugs.") && !reviewSaw.includes("/review"),
      reviewSaw,
    );

    // The edit: asked, allowed once.
    answers = ["allow_once"];
    let mark = updates.length;
    const sent = performance.now();
    let firstChunk = null;
    onUpdate = (u) => {
      if (firstChunk === null && u.sessionUpdate === "agent_message_chunk") firstChunk = performance.now();
    };
    const edit = await withTimeout(
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Please edit notes.txt: the code is 5678 now." }] }),
      60000,
      "the edit prompt",
    );
    metrics.first_chunk_ms = firstChunk === null ? null : Math.round(firstChunk - sent);
    metrics.edit_turn_ms = Math.round(performance.now() - sent);
    await nothingLate("edit");
    const editUpdates = since(mark);
    check("edit: end_turn", edit.stopReason === "end_turn", edit.stopReason);
    check("edit: one ask", asks.length === 1, asks.length);
    const ask = asks[0];
    const kinds = ask ? ask.options.map((o) => o.kind) : [];
    check("edit ask: allow once and reject once offered", kinds.includes("allow_once") && kinds.includes("reject_once"), kinds);
    const calls = ofKind(editUpdates, "tool_call");
    check("edit: a tool_call", calls.length >= 1, calls.length);
    check("edit: tool_call kind edit", calls[0]?.kind === "edit", calls[0]?.kind);
    check("edit: the ask names the call", ask && calls.some((c) => c.toolCallId === ask.toolCall.toolCallId));
    const callUpdates = [...calls, ...ofKind(editUpdates, "tool_call_update")];
    const diff = callUpdates.flatMap((u) => u.content ?? []).find((c) => c.type === "diff");
    check("edit: a diff", diff && diff.newText?.includes("5678") && diff.path?.endsWith("notes.txt"), diff);
    const located = callUpdates.flatMap((u) => u.locations ?? []).some((l) => l.path?.endsWith("notes.txt"));
    check("edit: location notes.txt", located);
    const statuses = callUpdates.map((u) => u.status).filter(Boolean);
    check("edit: status completed", statuses.includes("completed"), statuses);
    check("edit: the file changed", readFileSync(notes, "utf8").includes("5678"));
    const said = textOfChunks(editUpdates, "agent_message_chunk");
    check("edit: the answer streamed", said.includes("The file now says 5678."), said);
    check("edit: in several chunks", ofKind(editUpdates, "agent_message_chunk").length >= 2);
    check("edit: the reasoning as thought", textOfChunks(editUpdates, "agent_thought_chunk").includes("The edit went through."));

    // The command: asked, rejected.
    answers = ["reject_once"];
    mark = updates.length;
    const command = await withTimeout(
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run the command echo hi." }] }),
      60000,
      "the command prompt",
    );
    await nothingLate("command");
    const commandUpdates = since(mark);
    check("command: asked again", asks.length === 2, asks.length);
    check("command: the turn ends", command.stopReason === "end_turn", command.stopReason);
    const bash = [...ofKind(commandUpdates, "tool_call"), ...ofKind(commandUpdates, "tool_call_update")];
    check("command: tool_call kind execute", bash.some((u) => u.kind === "execute"), bash.map((u) => u.kind));
    check("command: status failed", bash.some((u) => u.status === "failed"), bash.map((u) => u.status));

    // A stalled answer: cancelled after its first chunk.
    mark = updates.length;
    let seen;
    const firstSeen = new Promise((resolve) => (seen = resolve));
    onUpdate = (u) => {
      if (u.sessionUpdate === "agent_message_chunk") seen();
    };
    const slow = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Think slowly about it." }] });
    await withTimeout(firstSeen, 30000, "the slow answer's first chunk");
    const cancelledAt = performance.now();
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    const cancelled = await withTimeout(slow, 30000, "the cancelled prompt");
    metrics.cancel_ms = Math.round(performance.now() - cancelledAt);
    await nothingLate("cancel");
    check("cancel: stopReason cancelled", cancelled.stopReason === "cancelled", cancelled.stopReason);
    check("cancel: the chunk before it", textOfChunks(since(mark), "agent_message_chunk").includes("Thinking"));

    // A turn waiting on an ask: cancelled, the ask is dropped and the
    // prompt answers `cancelled`.
    answers = ["hold"];
    const asked = new Promise((resolve) => (heldAsk = resolve));
    const waiting = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run the command echo hi, again." }] });
    await withTimeout(asked, 30000, "the held ask");
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    sendCancel();
    const dropped = await withTimeout(waiting, 30000, "the prompt cancelled during its ask");
    check("cancel during an ask: stopReason cancelled", dropped.stopReason === "cancelled", dropped.stopReason);
    check("cancel during an ask: the file is untouched by it", readFileSync(notes, "utf8").includes("5678"));
    metrics.peak_rss_kb = peakMemoryKb(first.child.pid);
  });
} catch (error) {
  check("first process", false, String(error?.stack ?? error));
}
metrics.updates_first_process = updates.length;
metrics.updates_by_kind = Object.fromEntries(
  [...new Set(updates.map((u) => u.sessionUpdate))].map((k) => [k, ofKind(updates, k).length]),
);
first.child.stdin.end();
const firstExit = await withTimeout(first.exited, 10000, "the first process to exit").catch((e) => {
  first.child.kill("SIGKILL");
  return { error: String(e) };
});
check("first process: exits when stdin closes", firstExit.code === 0, firstExit);

// ---- second process: load the session ---------------------------------------

const second = startAgent();
const loadMark = updates.length;
try {
  await clientApp().connectWith(second.stream, async (ctx) => {
    await withTimeout(
      ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
      30000,
      "initialize (second process)",
    );
    await withTimeout(
      ctx.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] }),
      60000,
      "session/load",
    );
    const replayed = since(loadMark);
    metrics.updates_replayed = replayed.length;
    check("load: the prompts replayed", textOfChunks(replayed, "user_message_chunk").includes("edit notes.txt"));
    check("load: the answers replayed", textOfChunks(replayed, "agent_message_chunk").includes("The file now says 5678."));
    const diff = ofKind(replayed, "tool_call").flatMap((u) => u.content ?? []).find((c) => c.type === "diff");
    check("load: the edit's diff replayed", diff && diff.newText?.includes("5678"), diff);
    check("load: updates name the session", replayed.every((u) => u.sessionId === sessionId));
  });
} catch (error) {
  check("second process", false, String(error?.stack ?? error));
}
second.child.stdin.end();
await withTimeout(second.exited, 10000, "the second process to exit").catch(() => second.child.kill("SIGKILL"));

check("stdout: JSON-RPC only", stdoutViolations.length === 0, stdoutViolations.slice(0, 3));
model.close();

const failed = checks.filter((c) => !c.ok);
console.log(JSON.stringify({ agent: command.join(" "), model_requests: requests, metrics, failed: failed.length, checks }, null, 2));
process.exit(failed.length > 0 && !lenient ? 1 : 0);
