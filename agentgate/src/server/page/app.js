// The approval page of `agent serve`: sessions, a live transcript and the
// asks waiting for an answer. Plain DOM, no build step, no dependencies.
// Everything the agent, the model or the project produced is hostile text:
// it is only ever put into the page with textContent, never as HTML.
"use strict";

const state = {
  sessions: new Map(), // id -> Session
  current: null, // selected session id
  messages: new Map(), // message id -> { info, parts: Map(part id -> part) }
  asks: new Map(), // request id -> PermissionRequest
  status: new Map(), // session id -> status type
};

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const detail = data && typeof data === "object"
      ? (data.message || (data.data && data.data.message) || data.error || JSON.stringify(data))
      : text;
    throw new Error(`${method} ${path}: HTTP ${response.status} ${detail || ""}`.trim());
  }
  return data;
}

// A session without a title yet (titles come after the first answer, and
// only with a title model) is named by when it started, not by its raw id.
function sessionLabel(session, id) {
  if (session && session.title) return session.title;
  const created = session && session.time && session.time.created;
  return created ? `Untitled session, ${when(created)}` : "Untitled session";
}

function when(ms) {
  if (!ms) return "";
  try {
    return new Date(ms).toLocaleString();
  } catch {
    return "";
  }
}

// ---- sessions ------------------------------------------------------------

function renderSessions() {
  const list = $("sessions");
  list.replaceChildren();
  const sessions = [...state.sessions.values()].sort(
    (a, b) => ((b.time && b.time.updated) || 0) - ((a.time && a.time.updated) || 0),
  );
  for (const session of sessions) {
    const item = el("li");
    const button = el("button", "session");
    button.type = "button";
    button.dataset.sessionId = session.id;
    button.append(el("span", "title", sessionLabel(session, session.id)));
    button.title = session.id;
    button.append(el("span", "when", when(session.time && session.time.updated)));
    const waiting = [...state.asks.values()].filter((a) => a.sessionID === session.id).length;
    if (waiting) button.append(el("span", "status", `${waiting} ask${waiting > 1 ? "s" : ""}`));
    if (session.id === state.current) button.setAttribute("aria-current", "true");
    button.addEventListener("click", () => selectSession(session.id));
    item.append(button);
    list.append(item);
  }
}

async function loadSessions() {
  const sessions = await api("GET", "/session");
  state.sessions.clear();
  for (const session of sessions || []) state.sessions.set(session.id, session);
  renderSessions();
}

async function selectSession(id) {
  state.current = id;
  state.messages.clear();
  const session = state.sessions.get(id);
  $("session-title").textContent = sessionLabel(session, id);
  $("prompt-form").hidden = false;
  renderSessions();
  renderStatus();
  renderAsks();
  try {
    const messages = await api("GET", `/session/${encodeURIComponent(id)}/message`);
    if (state.current !== id) return;
    for (const { info, parts } of messages || []) {
      const entry = { info, parts: new Map() };
      for (const part of parts || []) entry.parts.set(part.id, part);
      state.messages.set(info.id, entry);
    }
  } catch (error) {
    showError(error);
  }
  renderTranscript();
}

function renderStatus() {
  const badge = $("session-status");
  const status = state.current ? state.status.get(state.current) || "idle" : "";
  badge.textContent = status;
  badge.dataset.state = status;
  $("abort").hidden = status !== "busy";
}

// ---- transcript ----------------------------------------------------------

function toolSummary(part) {
  const input = (part.state && part.state.input) || {};
  return input.command || input.filePath || input.filepath || input.path || input.pattern || input.url || "";
}

function renderPart(part) {
  switch (part.type) {
    case "text": {
      if (part.synthetic || part.ignored) return null;
      return el("div", "part-text", part.text);
    }
    case "reasoning":
      return el("div", "part-reasoning", part.text);
    case "tool": {
      const status = (part.state && part.state.status) || "pending";
      const node = el("div", "part-tool");
      node.dataset.status = status;
      node.dataset.callId = part.callID || "";
      node.append(el("span", "tool-name", `${part.tool} `));
      node.append(el("span", "tool-summary", toolSummary(part)));
      node.append(el("span", "tool-status", ` · ${status}`));
      const metadata = (part.state && part.state.metadata) || {};
      // A finished edit, write or apply_patch shows what it changed.
      if (status === "completed" && metadata.diff) node.append(diffNode(metadata.diff, "tool-diff"));
      if (status === "completed" && part.state.output) node.append(el("pre", "tool-output", part.state.output));
      if (status === "error" && part.state.error) node.append(el("pre", "tool-error", part.state.error));
      return node;
    }
    case "patch": {
      // What the step changed in the project's files (its checkpoint).
      const files = (part.files || []).map((f) => String(f));
      if (!files.length) return null;
      return el("div", "part-patch", `changed ${files.length} file${files.length === 1 ? "" : "s"}: ${files.join(", ")}`);
    }
    default:
      return null;
  }
}

// ---- revert ----------------------------------------------------------------

// Where the selected session is reverted to: the index of its revert
// message in the sorted transcript, or -1.
function revertIndex(entries) {
  const session = state.sessions.get(state.current);
  const point = session && session.revert;
  if (!point) return -1;
  return entries.findIndex(({ info }) => info.id === point.messageID);
}

// Reverts to before `messageID` (its changes and everything after); a
// conflict (files changed since) is confirmed before it is forced.
async function revertTo(messageID, force = false) {
  const id = state.current;
  try {
    const session = await api("POST", `/session/${encodeURIComponent(id)}/revert`, { messageID, force });
    state.sessions.set(session.id, session);
    renderTranscript();
  } catch (error) {
    if (!force && /FileConflictError|changed since/.test(error.message)
      && window.confirm(`${error.message}\n\nOverwrite those files?`)) {
      return revertTo(messageID, true);
    }
    showError(error);
  }
}

async function unrevert(force = false) {
  const id = state.current;
  try {
    const session = await api("POST", `/session/${encodeURIComponent(id)}/unrevert`, { force });
    state.sessions.set(session.id, session);
    renderTranscript();
  } catch (error) {
    if (!force && /FileConflictError|changed since/.test(error.message)
      && window.confirm(`${error.message}\n\nOverwrite those files?`)) {
      return unrevert(true);
    }
    showError(error);
  }
}

// The files a prompt's answer changed, with their diffs, under `item`.
async function showChanges(item, messageID) {
  const id = state.current;
  const old = item.querySelector(".changes");
  if (old) {
    old.remove();
    return;
  }
  try {
    const diffs = await api("GET", `/session/${encodeURIComponent(id)}/diff?messageID=${encodeURIComponent(messageID)}`);
    const box = el("div", "changes");
    if (!diffs || !diffs.length) box.append(el("div", "", "no file changes"));
    for (const d of diffs || []) {
      box.append(el("div", "change-file", `${d.status} ${d.file} (+${d.additions} -${d.deletions})`));
      if (d.patch) box.append(diffNode(d.patch, "change-diff"));
    }
    item.append(box);
  } catch (error) {
    showError(error);
  }
}

// A user message's actions: see what its answer changed; take it back.
function messageActions(info, reverted) {
  const bar = el("div", "message-actions");
  const changes = el("button", "show-changes", "Changes");
  changes.type = "button";
  changes.addEventListener("click", (e) => showChanges(e.target.closest("li"), info.id));
  bar.append(changes);
  if (!reverted) {
    const undo = el("button", "revert-here", "Undo from here");
    undo.type = "button";
    undo.title = "Restore the files as they were before this prompt and hide what followed";
    undo.addEventListener("click", () => revertTo(info.id));
    bar.append(undo);
  }
  return bar;
}

// An answer's tokens and cost ("1200 in · 30 out · 200 cached · $0.0035");
// nothing for an answer the model reported no tokens for.
function usageText(info) {
  const t = info.role === "assistant" && info.tokens;
  if (!t) return "";
  const cached = ((t.cache && t.cache.read) || 0) + ((t.cache && t.cache.write) || 0);
  if (!t.input && !t.output && !cached) return "";
  const parts = [`${t.input || 0} in`, `${t.output || 0} out`];
  if (cached) parts.push(`${cached} cached`);
  if (info.cost > 0) parts.push(`$${info.cost.toFixed(4)}`);
  return parts.join(" · ");
}

function errorText(error) {
  if (!error) return "";
  if (typeof error === "string") return error;
  return (error.data && error.data.message) || error.message || error.name || JSON.stringify(error);
}

function renderTranscript() {
  const list = $("transcript");
  list.replaceChildren();
  const entries = [...state.messages.values()]
    .filter((m) => m.info.sessionID === state.current)
    .sort((a, b) => ((a.info.time && a.info.time.created) || 0) - ((b.info.time && b.info.time.created) || 0)
      || (a.info.id < b.info.id ? -1 : 1));
  const cut = revertIndex(entries);
  const idle = (state.status.get(state.current) || "idle") !== "busy";
  for (const [index, { info, parts }] of entries.entries()) {
    const reverted = cut >= 0 && index >= cut;
    if (index === cut) {
      const bar = el("li", "reverted-bar");
      bar.append(el("span", "", `${entries.length - cut} message${entries.length - cut === 1 ? "" : "s"} taken back (their file changes undone); the next prompt drops them `));
      const redo = el("button", "unrevert", "Restore them");
      redo.type = "button";
      redo.addEventListener("click", () => unrevert());
      bar.append(redo);
      list.append(bar);
    }
    const item = el("li", `message ${info.role}${reverted ? " reverted" : ""}`);
    item.dataset.messageId = info.id;
    const role = info.role === "assistant" && info.agent ? `${info.role} · ${info.agent}` : info.role;
    item.append(el("div", "role", role));
    for (const part of parts.values()) {
      const node = renderPart(part);
      if (node) item.append(node);
    }
    const spent = usageText(info);
    if (spent) item.append(el("div", "message-usage", spent));
    if (info.error) item.append(el("div", "message-error", errorText(info.error)));
    if (info.role === "user" && idle) item.append(messageActions(info, reverted));
    list.append(item);
  }
  list.lastElementChild && list.lastElementChild.scrollIntoView({ block: "end" });
}

let renderQueued = false;
function scheduleTranscript() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderTranscript();
  });
}

function upsertMessage(info) {
  const entry = state.messages.get(info.id) || { info, parts: new Map() };
  entry.info = info;
  state.messages.set(info.id, entry);
}

function upsertPart(part) {
  let entry = state.messages.get(part.messageID);
  if (!entry) {
    entry = { info: { id: part.messageID, sessionID: part.sessionID, role: "assistant", time: { created: Date.now() } }, parts: new Map() };
    state.messages.set(part.messageID, entry);
  }
  entry.parts.set(part.id, part);
}

function applyDelta({ messageID, partID, field, delta }) {
  const entry = state.messages.get(messageID);
  const part = entry && entry.parts.get(partID);
  if (!part) return;
  if (field === "text" || field === "reasoning") part.text = (part.text || "") + delta;
}

// ---- asks ----------------------------------------------------------------

function diffNode(diff, className = "ask-diff") {
  const pre = el("pre", `${className} diff`);
  for (const line of String(diff).split("\n")) {
    let cls = "";
    if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    pre.append(el("span", cls, line), "\n");
  }
  return pre;
}

function renderAsks() {
  const box = $("asks");
  box.replaceChildren();
  const template = $("ask-template");
  const asks = [...state.asks.values()].filter((a) => !state.current || a.sessionID === state.current);
  for (const ask of asks) {
    const card = template.content.firstElementChild.cloneNode(true);
    card.dataset.requestId = ask.id;
    card.dataset.permission = ask.permission;
    card.querySelector(".ask-permission").textContent = ask.permission;
    const session = state.sessions.get(ask.sessionID);
    card.querySelector(".ask-session").textContent = `in ${sessionLabel(session, ask.sessionID)}`;
    const patterns = card.querySelector(".ask-patterns");
    for (const pattern of ask.patterns || []) patterns.append(el("li", null, pattern));
    const metadata = ask.metadata || {};
    if (metadata.command) {
      const command = card.querySelector(".ask-command");
      command.textContent = metadata.command;
      command.hidden = false;
    }
    if (metadata.diff) {
      card.querySelector(".ask-diff").replaceWith(diffNode(metadata.diff));
    }
    // One button per "always" answer, named by the rules it stores, and
    // what those rules cover in words (the server says both).
    const buttons = card.querySelector(".ask-buttons");
    const rejectButton = buttons.querySelector('[data-reply="reject"]');
    const meanings = card.querySelector(".ask-always");
    for (const choice of ask.alwaysChoices || []) {
      const button = el("button", null, choice.label);
      button.type = "button";
      button.dataset.reply = choice.reply;
      buttons.insertBefore(button, rejectButton);
      meanings.append(el("li", null, `${choice.label}: ${choice.meaning}`));
      meanings.hidden = false;
    }
    for (const button of card.querySelectorAll("[data-reply]")) {
      button.addEventListener("click", () => reply(card, ask.id, button.dataset.reply));
    }
    card.querySelector(".ask-feedback").addEventListener("submit", (event) => {
      event.preventDefault();
      const message = card.querySelector(".ask-feedback input").value.trim();
      if (message) reply(card, ask.id, "reject", message);
    });
    box.append(card);
  }
}

async function reply(card, requestID, kind, message) {
  for (const button of card.querySelectorAll("button")) button.disabled = true;
  const body = message ? { reply: kind, message } : { reply: kind };
  try {
    await api("POST", `/permission/${encodeURIComponent(requestID)}/reply`, body);
    state.asks.delete(requestID);
    renderAsks();
    renderSessions();
  } catch (error) {
    const note = card.querySelector(".ask-error");
    note.textContent = error.message;
    note.hidden = false;
    for (const button of card.querySelectorAll("button")) button.disabled = false;
  }
}

async function loadAsks() {
  const pending = await api("GET", "/permission");
  state.asks.clear();
  for (const ask of pending || []) state.asks.set(ask.id, ask);
  renderAsks();
  renderSessions();
}

// ---- events --------------------------------------------------------------

function onEvent(event) {
  const p = event.properties || {};
  switch (event.type) {
    case "session.created":
    case "session.updated": {
      const before = p.info && state.sessions.get(p.info.id);
      if (p.info) state.sessions.set(p.info.id, p.info);
      // A revert point gone (unreverted, or dropped by a new prompt along
      // with the messages it hid): the server's transcript is the truth.
      if (p.info && p.info.id === state.current && before && before.revert && !p.info.revert) {
        selectSession(p.info.id);
      }
      renderSessions();
      if (p.info && p.info.id === state.current) {
        $("session-title").textContent = sessionLabel(p.info, p.info.id);
        scheduleTranscript();
      }
      break;
    }
    case "session.deleted":
      if (p.info) state.sessions.delete(p.info.id);
      renderSessions();
      break;
    case "session.status":
      state.status.set(p.sessionID, (p.status && p.status.type) || "idle");
      if (p.sessionID === state.current) {
        renderStatus();
        scheduleTranscript();
      }
      break;
    case "session.idle":
      state.status.set(p.sessionID, "idle");
      if (p.sessionID === state.current) renderStatus();
      break;
    case "message.updated":
      if (p.info && p.info.sessionID === state.current) {
        upsertMessage(p.info);
        scheduleTranscript();
      }
      break;
    case "message.part.updated":
      if (p.part && p.part.sessionID === state.current) {
        upsertPart(p.part);
        scheduleTranscript();
      }
      break;
    case "message.part.delta":
      if (p.sessionID === state.current) {
        applyDelta(p);
        scheduleTranscript();
      }
      break;
    case "permission.asked":
      state.asks.set(p.id, p);
      renderAsks();
      renderSessions();
      break;
    case "permission.replied":
      state.asks.delete(p.requestID);
      renderAsks();
      renderSessions();
      break;
    case "session.error":
      if (p.sessionID === state.current && p.error) showError(new Error(errorText(p.error)));
      break;
    default:
      break;
  }
}

// The project's trust state: an untrusted project's configuration was
// loaded without what could start a process, redirect a provider or
// allow what the user's rules ask; the page says so, with each line.
async function loadTrust() {
  const trust = await api("GET", "/project/trust");
  const box = $("trust");
  const list = $("trust-lines");
  list.replaceChildren();
  if (!trust || trust.trusted) {
    box.hidden = true;
    return;
  }
  for (const line of trust.lines || []) list.append(el("li", "", line));
  box.hidden = false;
}

function connect() {
  const badge = $("connection");
  const source = new EventSource("/event");
  source.onopen = async () => {
    badge.textContent = "connected";
    badge.dataset.state = "connected";
    // Catch up on whatever happened while disconnected.
    try {
      await loadSessions();
      await loadAsks();
      await loadTrust();
      if (state.current) await selectSession(state.current);
    } catch (error) {
      showError(error);
    }
  };
  source.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    onEvent(event);
  };
  source.onerror = () => {
    badge.textContent = "disconnected, retrying…";
    badge.dataset.state = "disconnected";
  };
}

function showError(error) {
  const badge = $("session-status");
  badge.textContent = error.message;
  badge.dataset.state = "error";
}

// ---- actions -------------------------------------------------------------

async function newSession() {
  try {
    const session = await api("POST", "/session", {});
    state.sessions.set(session.id, session);
    await selectSession(session.id);
  } catch (error) {
    showError(error);
  }
}

async function sendPrompt(event) {
  event.preventDefault();
  const input = $("prompt");
  const text = input.value.trim();
  if (!text || !state.current) return;
  try {
    await api("POST", `/session/${encodeURIComponent(state.current)}/prompt_async`, {
      parts: [{ type: "text", text }],
    });
    input.value = "";
    state.status.set(state.current, "busy");
    renderStatus();
  } catch (error) {
    showError(error);
  }
}

async function abort() {
  if (!state.current) return;
  try {
    await api("POST", `/session/${encodeURIComponent(state.current)}/abort`);
  } catch (error) {
    showError(error);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("new-session").addEventListener("click", newSession);
  $("prompt-form").addEventListener("submit", sendPrompt);
  $("abort").addEventListener("click", abort);
  const wanted = new URLSearchParams(location.search).get("session");
  if (wanted) state.current = wanted;
  connect();
});
