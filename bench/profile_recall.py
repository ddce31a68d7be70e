#!/usr/bin/env python
"""Profile an agent's recall through the whole Django stack with pyinstrument.

Seeds the benchmark's ten full 50-note dossiers (and ``--fillers`` more notes) into a
throwaway embedded PostgreSQL, then serves ``--requests`` REST recalls (or MCP recalls with
``--mcp``) through Kit's WSGI application in this process, with a real bearer token, and
prints pyinstrument's call tree: where the time of a request goes, middleware to renderer.
``--html PATH`` writes the interactive report as well.

Run: ``scripts/profile-recall`` or ``scripts/profile-recall --mcp --requests 2000``.

``--no-profile`` only times the requests. ``--instructions`` counts the instructions the
web process spends per request under valgrind's callgrind (counting only while the
measured requests run, with a fixed hash seed): a figure that does not move with the
machine's speed, for comparing two versions of the code on a machine whose speed varies
(``scripts/profile-recall --instructions --provider hashing --requests 100 --fillers 200``;
about 1.5 minutes, two runs of one version agree within 0.2%).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402
from bench import memory_bench as mb  # noqa: E402

HOST, PORT = "127.0.0.1", "8000"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--fillers", type=int, default=1000, help="more stored notes")
    parser.add_argument("--mcp", action="store_true", help="profile MCP recall instead of REST")
    parser.add_argument("--html", help="also write pyinstrument's HTML report here")
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help="only time the requests: wall and CPU per request without the profiler's cost",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the instructions per request under callgrind (needs valgrind)",
    )
    environment.add_provider_argument(parser)
    args = parser.parse_args()
    counting = os.environ.get(_UNDER_CALLGRIND) == "1"
    if args.instructions and not counting:
        raise SystemExit(count_instructions(args.requests, args.mcp))
    environment.setup(args)

    from django.core.handlers.wsgi import WSGIHandler
    from pyinstrument import Profiler

    rng = random.Random(7)
    probes = mb.seed_probes(rng)
    mb.seed_fillers(rng, args.fillers)
    tokens = mb.probe_tokens(probes, base_url=f"http://{HOST}:{PORT}", client_name="Profile")
    app = WSGIHandler()

    def environ(i: int) -> dict:
        k = i % len(probes)
        domain = probes[k][1]
        common = {
            "SERVER_NAME": HOST,
            "SERVER_PORT": PORT,
            "HTTP_HOST": f"{HOST}:{PORT}",
            "HTTP_AUTHORIZATION": f"Bearer {tokens[k]}",
            "wsgi.url_scheme": "http",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
        }
        if not args.mcp:
            return {
                **common,
                "REQUEST_METHOD": "GET",
                "PATH_INFO": "/api/v1/recall",
                "QUERY_STRING": f"domain={domain}",
                "wsgi.input": io.BytesIO(b""),
            }
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "outreach_recall_prospect_context",
                    "arguments": {"domain": domain},
                },
            }
        ).encode()
        return {
            **common,
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/mcp",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_ACCEPT": "application/json, text/event-stream",
            "wsgi.input": io.BytesIO(body),
        }

    def call(i: int) -> None:
        statuses: list[str] = []
        b"".join(app(environ(i), lambda status, headers: statuses.append(status)))
        if not statuses[0].startswith("200"):
            raise SystemExit(f"recall answered {statuses[0]}")

    for i in range(50):  # warm connections, caches and prepared statements
        call(i)
    if counting:
        _callgrind("on")
        for i in range(args.requests):
            call(i)
        _callgrind("off")
        return
    started, cpu = time.perf_counter(), time.process_time()
    profiler = None if args.no_profile else Profiler(interval=0.0002)
    if profiler:
        profiler.start()
    for i in range(args.requests):
        call(i)
    if profiler:
        profiler.stop()
    wall = (time.perf_counter() - started) * 1000 / args.requests
    used = (time.process_time() - cpu) * 1000 / args.requests
    if profiler:
        print(profiler.output_text(unicode=True, color=False, show_all=False))
    print(f"{args.requests} {'MCP' if args.mcp else 'REST'} recalls: {wall:.2f} ms wall, "
          f"{used:.2f} ms CPU per request ({'under the profiler' if profiler else 'no profiler'})")  # fmt: skip
    if profiler and args.html:
        Path(args.html).write_text(profiler.output_html())
        print(f"HTML report: {args.html}")


_UNDER_CALLGRIND = "KIT_PROFILE_UNDER_CALLGRIND"


def _callgrind(state: str) -> None:
    """Turn callgrind's counting of this process on or off."""
    subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True,
                   capture_output=True)  # fmt: skip


def count_instructions(requests: int, mcp: bool) -> int:
    """Run this script again under callgrind, counting only its measured requests, and
    print the instructions per request."""
    if not shutil.which("valgrind"):
        print("--instructions needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={scratch}/callgrind.out",
            sys.executable, *[a for a in sys.argv if a != "--instructions"],
        ]  # fmt: skip
        env = {**os.environ, _UNDER_CALLGRIND: "1", "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, env=env, capture_output=True, text=True)
    counted = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not counted:
        print(done.stdout[-2000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
        return done.returncode or 1
    total = int(counted.group(1))
    print(f"{requests} {'MCP' if mcp else 'REST'} recalls: {total / requests / 1e6:.3f} "
          f"million instructions per request in the web process (callgrind)")  # fmt: skip
    return 0


if __name__ == "__main__":
    main()
