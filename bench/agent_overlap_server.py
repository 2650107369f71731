#!/usr/bin/env python3
"""A slow OpenAI-compatible chat server on loopback for bench/agent_overlap.sh (issue 18).

Every POST .../chat/completions is answered after DELAY seconds with the next of the replay
file's replies (in a cycle, all callers sharing one counter), as a model that takes DELAY to
answer would. Each request runs on its own thread, so DELAY does not add up across callers.

  agent_overlap_server.py PORT_FILE REPLAY_JSONL DELAY_S [LINE ...]

Binds 127.0.0.1 on a free port and writes it to PORT_FILE. LINE (1-based) picks the replies
of the replay file to cycle through (default: all of them).
"""
import http.server
import itertools
import json
import sys
import threading
import time


def main():
    port_file, replay, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    lines = [json.loads(line) for line in open(replay, encoding="utf-8") if line.strip()]
    picked = [lines[int(n) - 1] for n in sys.argv[4:]] or lines
    replies = itertools.cycle(picked)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # one line per request on stderr, with a timestamp
            sys.stderr.write("%.3f %s\n" % (time.time(), fmt % args))

        def answer(self, body):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer({"object": "list", "data": [{"id": "slow-replay", "object": "model"}]})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            with lock:
                reply = next(replies)
            time.sleep(delay)
            usage = reply.get("usage", {})
            self.answer({
                "id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
                "model": "slow-replay",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply["text"]}}],
                "usage": {"prompt_tokens": usage.get("input_tokens", 0),
                          "completion_tokens": usage.get("output_tokens", 0)},
            })

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file, "w", encoding="utf-8") as out:
        out.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
