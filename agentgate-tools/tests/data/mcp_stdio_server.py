"""A small MCP server over stdio for the lifecycle tests: newline-delimited
JSON-RPC, tools `echo` (answers "<pid>: <text>") and `exit` (the process
exits in the middle of the call, as a crash would).

With `--once MARKER`, a second start (MARKER exists) fails with a message
on stderr, so a restart can be made to fail.
"""

import json
import os
import sys

if len(sys.argv) == 3 and sys.argv[1] == "--once":
    if os.path.exists(sys.argv[2]):
        print("refusing a second start", file=sys.stderr, flush=True)
        sys.exit(3)
    open(sys.argv[2], "w").close()

TOOLS = [
    {
        "name": "echo",
        "description": "Repeats the text after the server's pid.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "exit",
        "description": "Exits the server during the call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def answer(request_id, result):
    reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    request_id = message.get("id")
    method = message.get("method")
    if request_id is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        answer(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "lifecycle", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(request_id, {"tools": TOOLS})
    elif method == "tools/call" and params.get("name") == "exit":
        print("exiting on request", file=sys.stderr, flush=True)
        os._exit(0)
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        answer(request_id, {"content": [{"type": "text", "text": f"{os.getpid()}: {text}"}]})
    else:
        answer(request_id, {})
