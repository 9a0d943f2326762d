#!/usr/bin/env python3
"""Computes tests/data/expected.json from the recorded streams in this folder.

An independent reading of each recording (written for this project, in
Python, apart from the Rust decoders), so the replay tests compare the
clients against the data rather than against themselves. Rerun after adding
a recording:  python3 tests/data/expect.py
"""
import json, os, re

HERE = os.path.dirname(os.path.abspath(__file__))


def events(path):
    out = []
    for block in open(path).read().split("\n\n"):
        data = [l[5:].lstrip(" ") for l in block.splitlines() if l.startswith("data:")]
        if data:
            out.append("\n".join(data))
    return out


def args(text):
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def anthropic(path):
    s = dict(text="", reasoning="", calls=[], signatures=[], finish="unknown",
             usage=dict(input=0, output=0, reasoning=0, cache_read=0, cache_write=0, total=0))
    blocks, stop = {}, None

    def usage(u):
        for k, w in [("input_tokens", "input"), ("output_tokens", "output"),
                     ("cache_read_input_tokens", "cache_read"),
                     ("cache_creation_input_tokens", "cache_write")]:
            if u.get(k) is not None:
                s["usage"][w] = u[k]

    def close(b):
        if b["type"] == "text":
            s["text"] += b["text"]
        elif b["type"] == "thinking":
            s["reasoning"] += b["thinking"]
            if b["signature"]:
                s["signatures"].append(b["signature"])
        elif b["type"] == "tool_use":
            inp = args(b["json"]) if b["json"] else (b["input"] if isinstance(b["input"], dict) else {})
            s["calls"].append([b["id"], b["name"], inp])

    def start(cb):
        t = cb.get("type")
        if t == "text":
            return dict(type=t, text=cb.get("text", ""))
        if t == "thinking":
            return dict(type=t, thinking=cb.get("thinking", ""), signature=cb.get("signature", ""))
        if t == "tool_use":
            return dict(type=t, id=cb["id"], name=cb["name"], input=cb.get("input"), json="")
        return None

    for data in events(path):
        e = json.loads(data)
        t = e["type"]
        if t == "message_start":
            usage(e["message"].get("usage") or {})
            stop = e["message"].get("stop_reason") or stop
            for cb in e["message"].get("content") or []:
                b = start(cb)
                if b:
                    close(b)
        elif t == "content_block_start":
            b = start(e["content_block"])
            if b:
                blocks[e["index"]] = b
        elif t == "content_block_delta":
            b, d = blocks.get(e["index"]), e["delta"]
            if not b:
                continue
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] += d["signature"]
            elif d["type"] == "input_json_delta":
                b["json"] += d["partial_json"]
        elif t == "content_block_stop":
            b = blocks.pop(e["index"], None)
            if b:
                close(b)
        elif t == "message_delta":
            stop = e["delta"].get("stop_reason") or stop
            usage(e.get("usage") or {})
        elif t == "message_stop":
            s["finish"] = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                           "model_context_window_exceeded": "length", "tool_use": "tool-calls",
                           "pause_turn": "tool-calls", "refusal": "content-filter",
                           None: "unknown"}.get(stop, "other")
    return s


def responses(path):
    s = dict(text="", reasoning="", calls=[], signatures=[], finish="unknown",
             usage=dict(input=0, output=0, reasoning=0, cache_read=0, cache_write=0, total=0))
    items, summary_index = {}, {}
    for data in events(path):
        e = json.loads(data)
        t = e["type"]
        if t == "response.output_item.added":
            items[e["output_index"]] = dict(type=e["item"]["type"], args="")
        elif t == "response.output_text.delta":
            s["text"] += e["delta"]
        elif t == "response.reasoning_summary_text.delta":
            i = e["output_index"]
            if i in summary_index and summary_index[i] != e.get("summary_index"):
                s["reasoning"] += "\n\n"
            summary_index[i] = e.get("summary_index")
            s["reasoning"] += e["delta"]
        elif t == "response.function_call_arguments.delta":
            items[e["output_index"]]["args"] += e["delta"]
        elif t == "response.output_item.done":
            item = e["item"]
            if item["type"] == "reasoning" and item.get("encrypted_content"):
                s["signatures"].append(item["encrypted_content"])
            if item["type"] == "function_call":
                s["calls"].append([item["call_id"], item["name"],
                                   args(item.get("arguments") or items[e["output_index"]]["args"])])
        elif t in ("response.completed", "response.incomplete"):
            r = e["response"]
            reason = (r.get("incomplete_details") or {}).get("reason")
            if reason == "max_output_tokens":
                s["finish"] = "length"
            elif reason == "content_filter":
                s["finish"] = "content-filter"
            elif r["status"] == "completed":
                s["finish"] = "tool-calls" if s["calls"] else "stop"
            else:
                s["finish"] = "other"
            u = r.get("usage") or {}
            cached = (u.get("input_tokens_details") or {}).get("cached_tokens") or 0
            s["usage"] = dict(input=u.get("input_tokens", 0) - cached, output=u.get("output_tokens", 0),
                              reasoning=(u.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
                              cache_read=cached, cache_write=0, total=u.get("total_tokens", 0))
        elif t in ("error", "response.failed"):
            err = e.get("error") or e.get("response", {}).get("error") or e
            s["error"] = err.get("message")
            return s
    return s


def chat(path):
    s = dict(text="", reasoning="", calls=[], signatures=[], finish="unknown",
             usage=dict(input=0, output=0, reasoning=0, cache_read=0, cache_write=0, total=0))
    calls, finish = {}, None
    for data in events(path):
        if data.strip() == "[DONE]":
            break
        e = json.loads(data)
        if e.get("usage"):
            u = e["usage"]
            cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            s["usage"] = dict(input=u.get("prompt_tokens", 0) - cached, output=u.get("completion_tokens", 0),
                              reasoning=(u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0,
                              cache_read=cached, cache_write=0, total=u.get("total_tokens", 0))
        for ch in (e.get("choices") or [])[:1]:
            d = ch.get("delta") or {}
            s["reasoning"] += d.get("reasoning_content") or d.get("reasoning") or ""
            c = d.get("content")
            if isinstance(c, str):
                s["text"] += c
            elif isinstance(c, list):
                for p in c:
                    if p.get("type") == "text":
                        s["text"] += p["text"]
                    elif p.get("type") == "thinking":
                        s["reasoning"] += "".join(x.get("text", "") for x in p.get("thinking", []))
            for tc in d.get("tool_calls") or []:
                k = tc.get("index", 0)
                call = calls.setdefault(k, dict(id=None, name=None, args=""))
                if tc.get("id") and not call["id"]:
                    call["id"] = tc["id"]
                f = tc.get("function") or {}
                if f.get("name") and not call["name"]:
                    call["name"] = f["name"]
                a = f.get("arguments")
                call["args"] += a if isinstance(a, str) else (json.dumps(a) if a is not None else "")
            finish = ch.get("finish_reason") or finish
    for k in sorted(calls):
        c = calls[k]
        s["calls"].append([c["id"] or f"call-{k}", c["name"], args(c["args"])])
    f = {"stop": "stop", "length": "length", "tool_calls": "tool-calls", "content_filter": "content-filter",
         None: "unknown"}.get(finish, "other")
    if s["calls"] and f in ("stop", "unknown"):
        f = "tool-calls"
    s["finish"] = f
    return s


def set_path(root, path, value, append):
    keys = re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:])
    node = root
    for n, (name, idx) in enumerate(keys):
        last = n == len(keys) - 1
        nxt = keys[n + 1] if not last else None
        empty = ([] if nxt and nxt[1] else {})
        if name:
            if last:
                node[name] = (node.get(name, "") + value) if append else value
            else:
                node = node.setdefault(name, empty)
        else:
            i = int(idx)
            while len(node) <= i:
                node.append(None)
            if last:
                node[i] = ((node[i] or "") + value) if append else value
            else:
                if node[i] is None:
                    node[i] = empty
                node = node[i]


def gemini(path):
    s = dict(text="", reasoning="", calls=[], signatures=[], finish="unknown",
             usage=dict(input=0, output=0, reasoning=0, cache_read=0, cache_write=0, total=0))
    rid, pending, finish = "", None, None

    def emit(name, inp, sig, given_id=None):
        cid = given_id or (f"call_{rid}_{len(s['calls'])}" if rid else f"call_{len(s['calls'])}")
        s["calls"].append([cid, name, inp])
        if sig:
            s["signatures"].append(sig)

    for data in events(path):
        e = json.loads(data)
        rid = e.get("responseId") or rid
        if e.get("usageMetadata"):
            u = e["usageMetadata"]
            cached = u.get("cachedContentTokenCount") or 0
            th = u.get("thoughtsTokenCount") or 0
            s["usage"] = dict(input=(u.get("promptTokenCount") or 0) - cached,
                              output=(u.get("candidatesTokenCount") or 0) + th, reasoning=th,
                              cache_read=cached, cache_write=0, total=u.get("totalTokenCount") or 0)
        for cand in (e.get("candidates") or [])[:1]:
            for p in (cand.get("content") or {}).get("parts") or []:
                fc = p.get("functionCall")
                if fc is not None:
                    if "name" in fc:
                        if pending:
                            emit(*pending)
                            pending = None
                        if fc.get("willContinue"):
                            pending = [fc["name"], dict(fc.get("args") or {}), p.get("thoughtSignature")]
                        else:
                            emit(fc["name"], fc.get("args") or {}, p.get("thoughtSignature"), fc.get("id"))
                    elif pending is not None:
                        for pa in fc.get("partialArgs") or []:
                            if "stringValue" in pa:
                                set_path(pending[1], pa["jsonPath"], pa["stringValue"], True)
                            elif "numberValue" in pa:
                                set_path(pending[1], pa["jsonPath"], pa["numberValue"], False)
                            elif "boolValue" in pa:
                                set_path(pending[1], pa["jsonPath"], pa["boolValue"], False)
                            elif "nullValue" in pa:
                                set_path(pending[1], pa["jsonPath"], None, False)
                        if not fc.get("willContinue") and not fc.get("partialArgs"):
                            emit(*pending)
                            pending = None
                    continue
                if "text" in p:
                    if p.get("thoughtSignature"):
                        s["signatures"].append(p["thoughtSignature"])
                    if p.get("thought"):
                        s["reasoning"] += p["text"]
                    else:
                        s["text"] += p["text"]
            finish = cand.get("finishReason") or finish
    if pending:
        emit(*pending)
    f = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content-filter", None: "unknown"}.get(finish, "other")
    if f == "stop" and s["calls"]:
        f = "tool-calls"
    s["finish"] = f
    return s


KINDS = {"anthropic": anthropic, "responses": responses, "chat": chat, "gemini": gemini}
expected = {}
for name in sorted(os.listdir(HERE)):
    if name.endswith(".sse"):
        expected[name] = KINDS[name.split("-")[0]](os.path.join(HERE, name))
with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
print(len(expected), "recordings")
