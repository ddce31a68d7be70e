#!/usr/bin/env python
"""Count the instructions a gunicorn worker spends per recall over HTTP, under callgrind.

Seeds the benchmark's ten full 50-note dossiers (and ``--fillers`` more notes) into a
throwaway embedded PostgreSQL, starts gunicorn with one sync worker under valgrind's
callgrind, as ``gunicorn.conf.py`` of ``--checkout`` sets it up (this checkout by default;
a ``git worktree`` of another commit to compare), warms it, then counts only the worker's
instructions while it serves ``--requests`` REST recalls (``--mcp``: MCP recalls) one
after another: its HTTP parsing and writing, Django, Kit and the database driver, not the
database's. A count does not move with the machine's speed; two runs of one version agree
within 0.1%. Recalls need no model, so the hashing provider serves.

Run: ``.venv/bin/python bench/http_instructions.py --requests 600`` (about 8 minutes), and
again with ``--checkout ../kit-before`` for the version to compare with.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402
from bench import memory_bench as mb  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--fillers", type=int, default=200, help="more stored notes")
    parser.add_argument("--mcp", action="store_true", help="count MCP recalls instead of REST")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the Kit that serves")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("counting instructions needs valgrind (apt-get install valgrind)")
    args.provider = "hashing"
    environment.setup(args)

    from tests.live import LiveServer, free_port

    rng = random.Random(7)
    probes = mb.seed_probes(rng)
    mb.seed_fillers(rng, args.fillers)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    tokens = mb.probe_tokens(probes, base_url=url, client_name="Instructions")

    def recall(i: int) -> None:
        k = i % len(probes)
        headers = {"Authorization": f"Bearer {tokens[k]}"}
        address, body = f"{url}/api/v1/recall?domain={probes[k][1]}", None
        if args.mcp:
            call = {
                "name": "outreach_recall_prospect_context",
                "arguments": {"domain": probes[k][1]},
            }
            rpc = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}
            address, body = f"{url}/mcp", json.dumps(rpc).encode()
            headers |= {"Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}  # fmt: skip
        request = urllib.request.Request(address, body, headers)  # noqa: S310  (loopback)
        with urllib.request.urlopen(request, timeout=600) as answer:  # noqa: S310
            answer.read()
            if answer.status != 200:
                raise SystemExit(f"recall answered {answer.status}")

    with tempfile.TemporaryDirectory() as scratch:
        server = LiveServer(
            os.environ["DATABASE_URL"],
            workers=1,
            port=port,
            checkout=args.checkout.resolve(),
            timeout=600,
            boot_seconds=600,
            extra_env={"PROSPECT_MEMORY_EMBEDDING_PROVIDER": "hashing", "PYTHONHASHSEED": "0"},
            gunicorn_args=(),
            wrapper=("valgrind", "--tool=callgrind", "--trace-children=yes",
                     "--instr-atstart=no", f"--callgrind-out-file={scratch}/callgrind.%p"),
        )  # fmt: skip
        try:
            found = subprocess.run(["pgrep", "-P", str(server.process.pid)],
                                   capture_output=True, text=True, check=True)  # fmt: skip
            (worker,) = found.stdout.split()
            for i in range(60):  # warm its connection, caches and prepared statements
                recall(i)
            subprocess.run(["callgrind_control", "-i", "on", worker], check=True,
                           capture_output=True)  # fmt: skip
            for i in range(args.requests):
                recall(i)
            subprocess.run(["callgrind_control", "-i", "off", worker], check=True,
                           capture_output=True)  # fmt: skip
        finally:
            server.stop(grace=300)
        total = 0
        for dump in Path(scratch).glob(f"callgrind.{worker}*"):
            for line in dump.read_text().splitlines():
                if line.startswith(("summary:", "totals:")):
                    total = max(total, int(line.split()[1]))
    kind = "MCP" if args.mcp else "REST"
    print(f"{args.requests} {kind} recalls over HTTP served by {args.checkout}: "
          f"{total / args.requests / 1e6:.3f} million instructions per request in the "
          "gunicorn worker (callgrind)")  # fmt: skip


if __name__ == "__main__":
    main()
