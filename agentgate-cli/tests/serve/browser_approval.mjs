// The approval page of `agent serve` in a real browser: headless Chromium
// (driven with playwright-core) loads the page of a server running against
// a mock model this script serves itself, sends prompts from the page, sees
// each ask appear with its command or diff, rejects one with the button and
// one with feedback, and checks that the transcript shows the rejections and
// that nothing the asks were about happened; then allows an edit once and
// checks that the finished call shows its diff.
//
//   node browser_approval.mjs --project DIR --screenshots DIR -- AGENT_COMMAND [ARGS...]
//
// PLAYWRIGHT_CORE names the playwright-core package folder and CHROMIUM the
// browser executable. The agent command must start `agent serve` on a free
// loopback port and print its URL. Prints one JSON object with every check;
// exits 1 when one failed.

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const split = args.indexOf("--");
if (split < 0) {
  console.error("usage: browser_approval.mjs --project DIR --screenshots DIR -- COMMAND [ARGS...]");
  process.exit(2);
}
const own = args.slice(0, split);
const command = args.slice(split + 1);
const project = own[own.indexOf("--project") + 1];
const shots = own[own.indexOf("--screenshots") + 1];
mkdirSync(shots, { recursive: true });
const playwrightDir = process.env.PLAYWRIGHT_CORE;
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!playwrightDir) {
  console.error("PLAYWRIGHT_CORE must name the playwright-core package folder");
  process.exit(2);
}
const { chromium } = await import(pathToFileURL(join(playwrightDir, "index.mjs")).href);

const checks = [];
function check(name, ok, detail) {
  checks.push(detail === undefined ? { name, ok: !!ok } : { name, ok: !!ok, detail });
}

// ---- the mock model (OpenAI-compatible chat completions) -------------------

const notes = join(project, "notes.txt");
const forbidden = join(project, "created-by-agent.txt");
const modelRequests = [];

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join(" ");
  return "";
}
function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "mock", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}
function toolCall(id, name, input) {
  return [
    chunk({ role: "assistant", tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(input) } }] }),
    chunk({}, "tool_calls"),
    usage,
    "data: [DONE]\n\n",
  ];
}
// The last chunk of every reply reports its tokens, as OpenAI's
// stream_options.include_usage does.
const usage = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "mock", choices: [], usage: { prompt_tokens: 1200, completion_tokens: 30 } })}\n\n`;
function answer(words) {
  return [...words.map((w) => chunk({ content: w })), chunk({}, "stop"), usage, "data: [DONE]\n\n"];
}

const model = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    let request = {};
    try {
      request = JSON.parse(body);
    } catch {}
    modelRequests.push(request);
    const messages = request.messages ?? [];
    const last = messages[messages.length - 1] ?? {};
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const said = textOf(lastUser?.content).toLowerCase();
    res.socket?.setNoDelay(true);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let events;
    if (!request.tools || request.tools.length === 0) {
      events = answer(["Notes"]); // a title request
    } else if (last.role === "tool") {
      // Say back what the tool answered, so the page shows the feedback arrived.
      events = answer(["I ", "was ", "told: ", textOf(last.content).slice(0, 400)]);
    } else if (said.includes("edit")) {
      events = toolCall("call_edit", "edit", { filePath: notes, oldString: "1234", newString: "5678" });
    } else if (said.includes("command")) {
      events = toolCall("call_bash", "bash", { command: `touch ${forbidden}`, description: "Create a file" });
    } else {
      events = answer(["Hello."]);
    }
    res.end(events.join(""));
  });
});
await new Promise((resolve) => model.listen(0, "127.0.0.1", resolve));
const modelPort = model.address().port;

writeFileSync(
  join(project, "opencode.json"),
  JSON.stringify({
    model: "mock/mock",
    small_model: "mock/mock",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock",
        options: { baseURL: `http://127.0.0.1:${modelPort}/v1`, apiKey: "x" },
        models: { mock: { name: "Mock" } },
      },
    },
    permission: { edit: "ask", bash: "ask" },
  }),
);
writeFileSync(notes, "the launch code is 1234\n");

// ---- the server ------------------------------------------------------------

const server = spawn(command[0], command.slice(1), {
  cwd: project,
  env: { ...process.env, PWD: project },
  stdio: ["ignore", "pipe", "pipe"],
});
let serverLog = "";
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`agent serve printed no URL within 30 s:\n${serverLog}`)), 30000);
  const scan = (data) => {
    serverLog += data.toString("utf8");
    const match = serverLog.match(/http:\/\/127\.0\.0\.1:\d+/);
    if (match) {
      clearTimeout(timer);
      resolve(match[0]);
    }
  };
  server.stdout.on("data", scan);
  server.stderr.on("data", scan);
  server.on("exit", (code) => {
    clearTimeout(timer);
    reject(new Error(`agent serve exited (${code}) before listening:\n${serverLog}`));
  });
});

// ---- the browser -----------------------------------------------------------

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const consoleErrors = [];
page.on("console", (msg) => {
  if (msg.type() === "error") consoleErrors.push(msg.text());
});
page.on("pageerror", (error) => consoleErrors.push(String(error)));

let failure = null;
try {
  await page.goto(url + "/", { waitUntil: "domcontentloaded" });
  await page.waitForSelector('#connection[data-state="connected"]', { timeout: 15000 });
  check("the page connects to the event stream", true);

  // A session made from the page.
  await page.click("#new-session");
  await page.waitForSelector("#prompt-form:not([hidden])", { timeout: 10000 });
  check("a new session opens", true);
  const sessionId = await page.$eval('.session[aria-current="true"]', (n) => n.dataset.sessionId);
  const heading = await page.$eval("#session-title", (n) => n.textContent);
  check("an untitled session is not named by its raw id", heading.startsWith("Untitled session") && !heading.includes(sessionId), heading);

  // 1. A command ask, rejected with the button.
  await page.fill("#prompt", "run a command please");
  await page.click('#prompt-form button[type="submit"]');
  const ask = await page.waitForSelector('.ask[data-permission="bash"]', { timeout: 20000 });
  const commandShown = await ask.$eval(".ask-command", (n) => (n.hidden ? "" : n.textContent));
  check("the ask shows the command", commandShown.includes("touch"), commandShown);
  const patterns = await ask.$$eval(".ask-patterns li", (ns) => ns.map((n) => n.textContent));
  check("the ask lists its patterns", patterns.some((p) => p.includes("touch")), patterns);
  await page.screenshot({ path: join(shots, "approval-page-ask.png"), fullPage: true });
  await ask.$eval('[data-reply="reject"]', (b) => b.click());
  await page.waitForSelector('.ask[data-permission="bash"]', { state: "detached", timeout: 10000 });
  const rejected = await page.waitForSelector('.part-tool[data-call-id="call_bash"][data-status="error"]', { timeout: 15000 });
  const rejection = await rejected.textContent();
  check("the transcript shows the call rejected", /reject/i.test(rejection), rejection.slice(0, 300));
  check("the rejected command did not run", !existsSync(forbidden));
  await page.waitForSelector('#session-status[data-state="idle"]', { timeout: 15000 });
  check("the session goes idle after the rejection", true);
  // The title written after the first answer reaches the page by itself.
  await page.waitForFunction(() => document.querySelector("#session-title").textContent === "Notes", null, { timeout: 15000 });
  check("the session's title arrives without a reload", true);
  const spent = await page.$$eval(".message.assistant .message-usage", (ns) => ns.map((n) => n.textContent));
  check("an answer shows its tokens", spent.some((t) => t.includes("1200 in") && t.includes("30 out")), spent);

  // 2. An edit ask showing its diff, rejected with feedback.
  await page.fill("#prompt", "edit the notes");
  await page.click('#prompt-form button[type="submit"]');
  const editAsk = await page.waitForSelector('.ask[data-permission="edit"]', { timeout: 20000 });
  const diff = await editAsk.$eval(".ask-diff", (n) => n.textContent);
  check("the edit ask shows the diff", diff.includes("-the launch code is 1234") && diff.includes("+the launch code is 5678"), diff.slice(0, 400));
  await editAsk.$eval(".ask-feedback input", (n) => (n.value = "keep the old code"));
  await editAsk.$eval(".ask-feedback", (f) => f.requestSubmit());
  await page.waitForFunction(
    () => [...document.querySelectorAll(".message.assistant .part-text")].some((n) => n.textContent.includes("keep the old code")),
    null,
    { timeout: 15000 },
  );
  check("the feedback reaches the model and the transcript", true);
  check("the rejected edit did not happen", readFileSync(notes, "utf8").includes("1234"));
  await page.screenshot({ path: join(shots, "approval-page-rejected.png"), fullPage: true });
  await page.waitForSelector('#session-status[data-state="idle"]', { timeout: 15000 });

  // 3. The same edit allowed once: the finished call shows what it changed.
  await page.fill("#prompt", "edit the notes, it is fine now");
  await page.click('#prompt-form button[type="submit"]');
  const allowAsk = await page.waitForSelector('.ask[data-permission="edit"]', { timeout: 20000 });
  await allowAsk.$eval('[data-reply="once"]', (b) => b.click());
  const done = await page.waitForSelector('.part-tool[data-status="completed"] .tool-diff', { timeout: 15000 });
  const shown = await done.textContent();
  check("a finished edit shows its diff", shown.includes("-the launch code is 1234") && shown.includes("+the launch code is 5678"), shown.slice(0, 400));
  check("the allowed edit happened", readFileSync(notes, "utf8").includes("5678"));
  await page.screenshot({ path: join(shots, "approval-page-finished-edit.png"), fullPage: true });

  // 4. Taken back from the page: the last prompt's edit is undone on disk,
  // the taken-back messages are marked, and "Restore them" puts it back.
  await page.waitForSelector('#session-status[data-state="idle"]', { timeout: 15000 });
  await page.locator(".message.user").last().locator(".revert-here").click({ timeout: 10000 });
  await page.waitForSelector(".reverted-bar", { timeout: 10000 });
  await page.waitForFunction(() => document.querySelectorAll(".message.reverted").length > 0, null, { timeout: 10000 });
  check("undo from the page restores the file", readFileSync(notes, "utf8").includes("1234") && !readFileSync(notes, "utf8").includes("5678"));
  await page.screenshot({ path: join(shots, "approval-page-reverted.png"), fullPage: true });
  await page.click(".reverted-bar .unrevert");
  await page.waitForSelector(".reverted-bar", { state: "detached", timeout: 10000 });
  check("restore from the page puts the edit back", readFileSync(notes, "utf8").includes("5678"));
} catch (error) {
  failure = String(error && error.stack ? error.stack : error);
  try {
    await page.screenshot({ path: join(shots, "approval-page-failure.png"), fullPage: true });
  } catch {}
}
check("no error in the page's console", consoleErrors.length === 0, consoleErrors);
if (failure) check("the browser session ran to the end", false, failure);

await browser.close();
server.kill("SIGTERM");
model.close();
const ok = checks.every((c) => c.ok);
console.log(JSON.stringify({ ok, checks, modelRequests: modelRequests.length, serverLog: ok ? undefined : serverLog.slice(-4000) }, null, 2));
process.exit(ok ? 0 : 1);
