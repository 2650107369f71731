#!/usr/bin/env python3
"""Test helper: a real tokenizer's counts, over loopback HTTP in vLLM's /tokenize shape or on
stdout. The tokenizer is Hugging Face `tokenizers` with the vocabulary that ships inside the
PyPI package anthropic 0.37.1 (anthropic/tokenizer.json, its legacy Claude tokenizer); both are
installed by scripts/setup.sh into .deps/python-tokenizer (put it on PYTHONPATH). anthropic is
never imported (its own dependencies are not installed), only its data file is read.

  tokenize_server.py serve        prints "port N", then answers POST /tokenize
                                  {"model": M, "prompt": TEXT} with {"count", "tokens", ...}
  tokenize_server.py count FILE   prints the token count of FILE's UTF-8 text
"""
import importlib.util
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tokenizers


def load():
    spec = importlib.util.find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("anthropic (for its tokenizer.json) is not installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], "tokenizer.json")
    return tokenizers.Tokenizer.from_file(path)


TOKENIZER = load()


def ids(text):
    return TOKENIZER.encode(text).ids


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length))
            tokens = ids(request["prompt"])
            status, body = 200, {"count": len(tokens), "max_model_len": 100000, "tokens": tokens}
        except (ValueError, KeyError, TypeError) as error:
            status, body = 400, {"error": str(error)}
        if self.path.rstrip("/") != "/tokenize":
            status, body = 404, {"error": "not found"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "count":
        with open(sys.argv[2], encoding="utf-8") as f:
            print(len(ids(f.read())))
        return
    if len(sys.argv) != 2 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
