"""An MCP server over stdio that exits after answering one tool call, as a crashing server
would: the agent's MCP client must start it again for the next call.

Its one tool, `count`, answers how many calls this process has answered (always 1) and its
process id, so a test can tell that a second call reached a new process.
"""

import json
import os
import sys

TOOL = {
    "name": "count",
    "description": "Answers the calls this process answered, and its process id.",
    "inputSchema": {"type": "object", "properties": {}},
}


def answer(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, message_id = message.get("method"), message.get("id")
    if message_id is None:
        continue
    if method == "initialize":
        answer(message_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "one-call", "version": "1"},
        })
    elif method == "tools/list":
        answer(message_id, {"tools": [TOOL]})
    elif method == "tools/call":
        answer(message_id, {"content": [{"type": "text", "text": f"calls=1 pid={os.getpid()}"}]})
        sys.exit(0)
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id,
                                     "error": {"code": -32601, "message": "not supported"}}) + "\n")
        sys.stdout.flush()
