// opencode's official client (@opencode-ai/sdk, its v2 client) driving an
// HTTP server of opencode's API against a mock model it serves itself (an
// OpenAI-compatible chat completions endpoint on 127.0.0.1), so the same
// script runs against `agent serve` and `opencode serve`.
//
//   node sdk_client.mjs --project DIR [--lenient] -- SERVER_COMMAND [ARGS...]
//
// OPENCODE_SDK names the SDK's package folder. The script writes
// DIR/opencode.json (the mock model; edit and bash ask), starts the server
// (which must print its http:// URL on stdout), subscribes to the events,
// then:
//   1. creates a session; a prompt whose edit asks, answered `once`: the
//      streamed text deltas, the tool part, the file changed, the answer;
//   2. a prompt whose command asks, answered `reject` with a message: the
//      call fails with that message, the turn still answers;
//   3. a prompt with no tool, timed (the round trip through the server);
//   4. lists the messages;
//   5. lists the project's commands and runs one;
//   6. runs a shell command (answering its ask, if any) and compacts the
//      session by hand; stops the server with SIGINT.
// It prints one JSON object: every check, and metrics (events by type, the
// round-trip times). It exits 1 when a check failed (unless --lenient).

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const split = args.indexOf("--");
if (split < 0) {
  console.error("usage: sdk_client.mjs --project DIR [--lenient] -- COMMAND [ARGS...]");
  process.exit(2);
}
const own = args.slice(0, split);
const command = args.slice(split + 1);
const project = own[own.indexOf("--project") + 1];
const lenient = own.includes("--lenient");
const sdkDir = process.env.OPENCODE_SDK;
if (!sdkDir) {
  console.error("OPENCODE_SDK must name the @opencode-ai/sdk package folder");
  process.exit(2);
}
const { createOpencodeClient } = await import(pathToFileURL(join(sdkDir, "dist/v2/client.js")).href);

const checks = [];
function check(name, ok, detail) {
  checks.push(detail === undefined ? { name, ok: !!ok } : { name, ok: !!ok, detail });
}

// ---- the mock model -------------------------------------------------------

const notes = join(project, "notes.txt");
let requests = 0;
// The last user text of the request answered "Reviewed." (a custom
// command's expanded template).
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

function answer(words) {
  const out = [];
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
    if (!request.tools || request.tools.length === 0 || request.tool_choice === "none") {
      events = answer(["Notes"]); // a title or summary request
    } else if (last.role === "tool") {
      events = answer(["Done ", "with ", "that."]);
    } else if (said.includes("for bugs")) {
      reviewSaw = textOf(lastUser?.content);
      events = answer(["Reviewed."]);
    } else if (said.includes("edit")) {
      events = toolCall("edit", { filePath: notes, oldString: "1234", newString: "5678" });
    } else if (said.includes("command")) {
      events = toolCall("bash", { command: "echo hi", description: "Print hi" });
    } else {
      events = answer(["Hello ", "there."]);
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

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

// ---- the server -----------------------------------------------------------

const server = spawn(command[0], command.slice(1), {
  cwd: project,
  env: { ...process.env, PWD: project },
  stdio: ["ignore", "pipe", "inherit"],
});
const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
const baseUrl = await withTimeout(
  new Promise((resolve) => {
    let out = "";
    server.stdout.on("data", (data) => {
      out += data.toString("utf8");
      const match = out.match(/http:\/\/[^\s]+/);
      if (match) resolve(match[0]);
    });
  }),
  60000,
  "the server's URL on stdout",
);

const client = createOpencodeClient({ baseUrl });

// ---- events ---------------------------------------------------------------

const seen = [];
const waiters = [];
const byType = {};
const subscription = await client.event.subscribe();
(async () => {
  try {
    for await (const event of subscription.stream) {
      seen.push(event);
      byType[event.type] = (byType[event.type] ?? 0) + 1;
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    }
  } catch {}
})();

/** The first event since index `from` that `match` accepts. */
function eventAfter(from, match, what) {
  const earlier = seen.slice(from).find(match);
  if (earlier) return Promise.resolve(earlier);
  return withTimeout(new Promise((resolve) => waiters.push({ match, resolve })), 30000, what);
}

const report = { checks, metrics: {} };
try {
  const health = await client.global.health();
  check("health: healthy", health.data?.healthy === true, health.data);
  await eventAfter(0, (e) => e.type === "server.connected", "server.connected");
  check("events: server.connected first", seen[0]?.type === "server.connected", seen[0]?.type);

  // 1. an edit answered once
  const created = await client.session.create({ title: "sdk" });
  const session = created.data;
  check("session: created", session?.id?.startsWith("ses"), created.error);
  const sessionID = session.id;
  let from = seen.length;
  const editTurn = client.session.prompt({ sessionID, parts: [{ type: "text", text: "please edit the notes" }] });
  const asked = await eventAfter(from, (e) => e.type === "permission.asked" && e.properties.sessionID === sessionID, "permission.asked (edit)");
  check("edit: the ask names the permission", asked.properties.permission === "edit", asked.properties);
  check("edit: the ask names the tool call", typeof asked.properties.tool?.callID === "string", asked.properties.tool);
  const listed = await client.permission.list();
  check("permission.list: the ask is pending", (listed.data ?? []).some((p) => p.id === asked.properties.id), listed.data);
  const once = await client.permission.reply({ requestID: asked.properties.id, reply: "once" });
  check("edit: reply accepted", once.data === true, once.error);
  const replied = await eventAfter(from, (e) => e.type === "permission.replied" && e.properties.requestID === asked.properties.id, "permission.replied (edit)");
  check("edit: replied once", replied.properties.reply === "once", replied.properties);
  const edit = await withTimeout(editTurn, 30000, "the edit prompt's answer");
  check("edit: the answer is an assistant message", edit.data?.info?.role === "assistant", edit.error ?? edit.data?.info);
  const editText = (edit.data?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
  check("edit: the answer's text", editText === "Done with that.", editText);
  check("edit: the file changed", readFileSync(notes, "utf8").includes("5678"));
  await eventAfter(from, (e) => e.type === "session.idle" && e.properties.sessionID === sessionID, "session.idle (edit)");
  const editEvents = seen.slice(from);
  check("edit: streamed text deltas", editEvents.some((e) => e.type === "message.part.delta" && e.properties.field === "text" && e.properties.delta.length > 0));
  const toolDone = editEvents.find((e) => e.type === "message.part.updated" && e.properties.part.type === "tool" && e.properties.part.state.status === "completed");
  check("edit: the tool part completed", !!toolDone, editEvents.filter((e) => e.properties?.part?.type === "tool").map((e) => e.properties.part.state.status));
  check("edit: busy then idle", editEvents.some((e) => e.type === "session.status" && e.properties.status.type === "busy") && editEvents.some((e) => e.type === "session.status" && e.properties.status.type === "idle"));
  check("edit: message.updated for both roles", ["user", "assistant"].every((role) => editEvents.some((e) => e.type === "message.updated" && e.properties.info.role === role)));

  // 2. a command rejected with a message
  from = seen.length;
  const commandTurn = client.session.prompt({ sessionID, parts: [{ type: "text", text: "run a command" }] });
  const askedBash = await eventAfter(from, (e) => e.type === "permission.asked" && e.properties.permission === "bash", "permission.asked (bash)");
  check("command: the ask names the command", (askedBash.properties.patterns ?? []).includes("echo hi"), askedBash.properties);
  const rejected = await client.permission.reply({ requestID: askedBash.properties.id, reply: "reject", message: "not now, thanks" });
  check("command: reply accepted", rejected.data === true, rejected.error);
  const repliedBash = await eventAfter(from, (e) => e.type === "permission.replied" && e.properties.requestID === askedBash.properties.id, "permission.replied (bash)");
  check("command: replied reject", repliedBash.properties.reply === "reject", repliedBash.properties);
  const command = await withTimeout(commandTurn, 30000, "the command prompt's answer");
  check("command: the turn answered", command.data?.info?.role === "assistant", command.error ?? command.data);
  await eventAfter(from, (e) => e.type === "session.idle" && e.properties.sessionID === sessionID, "session.idle (command)");
  const failed = seen.slice(from).find((e) => e.type === "message.part.updated" && e.properties.part.type === "tool" && e.properties.part.state.status === "error");
  check("command: the call failed with the feedback", (failed?.properties.part.state.error ?? "").includes("not now, thanks"), failed?.properties.part.state);

  // 3. the round trip of a prompt without tools
  const times = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const hello = await client.session.prompt({ sessionID, parts: [{ type: "text", text: "say hello" }] });
    times.push(performance.now() - start);
    if (i === 0) check("hello: answered", (hello.data?.parts ?? []).some((p) => p.type === "text" && p.text === "Hello there."), hello.data?.parts);
  }
  times.sort((a, b) => a - b);
  report.metrics.prompt_round_trip_ms = { min: +times[0].toFixed(1), median: +times[2].toFixed(1), max: +times[4].toFixed(1) };

  // 4. the transcript
  const messages = await client.session.messages({ sessionID });
  const all = messages.data ?? [];
  check("messages: listed as {info, parts}", all.length >= 6 && all.every((m) => m.info && Array.isArray(m.parts)), all.length);
  const tools = all.flatMap((m) => m.parts).filter((p) => p.type === "tool");
  check("messages: the edit completed and the command failed", tools.some((p) => p.tool === "edit" && p.state.status === "completed") && tools.some((p) => p.tool === "bash" && p.state.status === "error"), tools.map((p) => [p.tool, p.state.status]));
  const sessions = await client.session.list();
  check("session.list: the session", (sessions.data ?? []).some((s) => s.id === sessionID), sessions.error);

  // 5. the project's custom commands: listed, and one run on the session
  const commands = await client.command.list();
  const review = (commands.data ?? []).find((c) => c.name === "review");
  check("command.list: review", review?.description === "Review a file" && (review?.hints ?? []).includes("$ARGUMENTS"), commands.data ?? commands.error);
  const reviewed = await withTimeout(client.session.command({ sessionID, command: "review", arguments: "calc.py" }), 30000, "the /review command's answer");
  check("session.command: an assistant message", reviewed.data?.info?.role === "assistant", reviewed.error ?? reviewed.data);
  const reviewText = (reviewed.data?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
  check("session.command: the answer's text", reviewText === "Reviewed.", reviewText);
  check("session.command: the model receives the expanded template", reviewSaw?.includes("Review calc.py for bugs.") && !reviewSaw.includes("$ARGUMENTS"), reviewSaw);

  // 6. a shell command run by the user (its bash ask answered once when the
  //    server asks, as agent serve does), then a compaction asked for by hand
  from = seen.length;
  const shellRun = client.session.shell({ sessionID, agent: "build", command: "echo from-shell" });
  const shellAsk = eventAfter(from, (e) => e.type === "permission.asked" && e.properties.sessionID === sessionID, "permission.asked (shell)").catch(() => null);
  const first = await Promise.race([shellRun.then(() => null), shellAsk]);
  if (first) {
    report.metrics.shell_asked = first.properties.permission;
    await client.permission.reply({ requestID: first.properties.id, reply: "once" });
  }
  const shelled = await withTimeout(shellRun, 30000, "the shell command's answer");
  const shellPart = (shelled.data?.parts ?? []).find((p) => p.type === "tool" && p.tool === "bash");
  check("session.shell: a completed bash part", shellPart?.state?.status === "completed" && (shellPart.state.output ?? "").includes("from-shell"), shelled.error ?? shellPart);
  const shellEvents = seen.slice(from);
  check("session.shell: the bash part was published", shellEvents.some((e) => e.type === "message.part.updated" && e.properties.part.tool === "bash"), shellEvents.map((e) => e.type));
  const before = requests;
  const summarized = await withTimeout(client.session.summarize({ sessionID, providerID: "mock", modelID: "mock" }), 30000, "the summarize answer");
  check("session.summarize: true", summarized.data === true, summarized.error ?? summarized.data);
  check("session.summarize: the model wrote the summary", requests > before, { before, after: requests });
} catch (error) {
  check("no exception", false, String(error?.stack ?? error));
}

report.metrics.events_by_type = byType;
report.metrics.model_requests = requests;
server.kill("SIGINT");
const status = await withTimeout(exited, 15000, "the server's exit after SIGINT").catch((e) => ({ error: String(e) }));
check("sigint: the server exits cleanly", status.code === 0, status);
if (status.error) server.kill("SIGKILL");
model.close();
console.log(JSON.stringify(report));
process.exit(!lenient && checks.some((c) => !c.ok) ? 1 : 0);
