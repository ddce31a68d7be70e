#!/usr/bin/env python
"""The model once per machine (issue 41): the memory gunicorn's workers keep with the default
semantic model, and what each way of keeping it adds to a save.

Set-ups (``--setups``):

- ``per-worker``: every worker loads its own copy of the model (``KIT_GUNICORN_PRELOAD=false``);
- ``preload``: the master loads the application, the checked files, the tokenizer and
  the weights before it forks, and each worker makes only its onnxruntime session, which
  reads the weights where the master put them (the default);
- ``preload-prepack``: the same, with ``{"prepack": true}``: each session lays the encoder's
  matrices out for this CPU's kernels, a copy per worker;
- ``service``: one local embedding service for the machine (``bench/embedding_service.py``,
  the model behind OpenAI's ``/v1/embeddings``) and Kit's workers embedding through the
  OpenAI-compatible provider.

For each worker count (``--workers``, 1, 4 and 8) and set-up it starts gunicorn (Kit's
``gunicorn.conf.py``) on a throwaway database, alone, waits until every worker has booted,
has every worker serve saves (as many clients at once as there are workers), and reads the
proportional set size (PSS, ``/proc/<pid>/smaps_rollup``: a page shared by n processes
counts 1/n in each) of the master, of each worker and of the service, and each worker's
unique pages (USS: what it alone keeps). Then it starts every set-up's server at once and
times saves one at a time over REST (each embeds its note within the request: no broker),
the servers taking turns save by save; and one note's embedding in one process, each kind
of session taking turns call by call. Each figure is the median of ``--runs`` rounds: the
machine (2 cores) is shared, and turns put its neighbours' load on every set-up alike.

``--before DIR`` adds the set-up ``before``: the servers of another checkout of Kit (the
commit before a change, from ``git worktree add``), each worker loading its own copy as
that commit does, measured with the others and taking turns with them; the latency added is
then counted from it.

Run: ``scripts/bench-model-memory`` or ``scripts/bench-model-memory --workers 1,4 --runs 1``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402
from bench.processes import children, cpu_ticks, memory  # noqa: E402
from tests.live import LiveServer, free_port  # noqa: E402

SETUPS = ("per-worker", "preload", "preload-prepack", "service")
#: The set-up of ``--before``: another checkout's servers, as that checkout configures them.
BEFORE = "before"
#: The model the service runs, as the OpenAI-compatible provider names it (its dimensions
#: and prefixes are the default model's; ``_embed_calls_here`` names the same).
SERVICE_OPTIONS: dict[str, str | int] = {
    "model": "multilingual-e5-small-q4",
    "dimensions": 384,
    "api_key": "none",
    "query_prefix": "query: ",
    "document_prefix": "passage: ",
}
BODY = (
    "{company} is hiring six account executives for the DACH region, reporting to the new "
    "VP Sales, who joined from Flexport in March. The roles are listed on the careers page "
    "with a quota of 800k EUR; reference {n}."
)


@dataclass
class Server:
    """A gunicorn of Kit (and, for ``service``, the embedding service beside it)."""

    setup: str
    workers: int
    database_url: str
    checkout: Path
    live: LiveServer | None = None
    service: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        assert self.live is not None
        return self.live.url

    def start(self) -> None:
        env: dict[str, str | None] = {
            "PYTHONPATH": str(self.checkout),
            "KIT_WRITES_PER_MINUTE_PER_CLIENT": "0",
            "LOG_LEVEL": "WARNING",
            "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "semantic",
            "PROSPECT_MEMORY_EMBEDDING_OPTIONS": None,
            "PROMETHEUS_MULTIPROC_DIR": None,
            "KIT_GUNICORN_PRELOAD": "false" if self.setup in {"per-worker", BEFORE} else "true",
        }
        if self.setup == "preload-prepack":
            env["PROSPECT_MEMORY_EMBEDDING_OPTIONS"] = json.dumps({"prepack": True})
        if self.setup == "service":
            service_port = free_port()
            self.service = subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "embedding_service.py"), str(service_port)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self.service.stdout is not None
            if self.service.stdout.readline().strip() != "ready":
                raise RuntimeError("the embedding service did not start")
            env["PROSPECT_MEMORY_EMBEDDING_PROVIDER"] = "openai-compatible"
            base_url = f"http://127.0.0.1:{service_port}/v1"
            env["PROSPECT_MEMORY_EMBEDDING_OPTIONS"] = json.dumps(
                {**SERVICE_OPTIONS, "base_url": base_url}
            )
        self.live = LiveServer(
            self.database_url,
            workers=self.workers,
            extra_env=env,
            gunicorn_args=(),
            checkout=self.checkout,
            timeout=120,
            boot_seconds=180,
        )
        self._wait_until_booted()

    def _wait_until_booted(self) -> None:
        """Every worker forked and done booting: as many as asked, and none of them spending
        CPU time for half a second."""
        assert self.live is not None
        process = self.live.process
        deadline = time.monotonic() + 180
        last = -1
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.live.log.read_text()[-3000:]}")
            pids = children(process.pid)
            ticks = sum(cpu_ticks(pid) for pid in pids)
            if len(pids) == self.workers and ticks == last:
                return
            last = ticks
            time.sleep(0.5)
        raise RuntimeError(f"gunicorn did not boot:\n{self.live.log.read_text()[-3000:]}")

    def memory(self) -> dict[str, float]:
        """Total PSS, and the mean PSS and USS of a worker, in MiB."""
        assert self.live is not None
        master = self.live.process.pid
        workers = [memory(pid) for pid in children(master)]
        others = [memory(master)]
        if self.service is not None:
            others.append(memory(self.service.pid))
        return {
            "total": sum(found["pss"] for found in workers + others),
            "worker_pss": statistics.mean(found["pss"] for found in workers),
            "worker_uss": statistics.mean(found["uss"] for found in workers),
        }

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop(grace=30)
        if self.service is not None and self.service.poll() is None:
            self.service.send_signal(signal.SIGTERM)
            try:
                self.service.wait(30)
            except subprocess.TimeoutExpired:
                self.service.kill()
                self.service.wait()


class Saver:
    """Saves over REST as one member of a fresh account, each a new note on a new domain."""

    def __init__(self, base_url: str, label: str) -> None:
        from outreach.services import access_token_issue, account_create, member_create

        account = account_create(slug=f"bench-{label}")
        member = member_create(
            account=account, email=f"{label}@bench.example", is_module_admin=True
        )
        self.token = access_token_issue(
            member=member,
            scopes=["outreach_read", "outreach_write"],
            client_name="Bench",
            expires_days=1,
            base_url=base_url,
        )
        self.base_url = base_url
        self.label = label
        self.count = 0

    def save(self) -> float:
        """One save's time, in milliseconds."""
        self.count += 1
        domain = f"n{self.count}-{self.label}.com"
        body = json.dumps(
            {
                "domain": domain,
                "title": "Hiring",
                "body": BODY.format(company=domain.split(".")[0].title(), n=self.count),
                "source_urls": [f"https://{domain}/jobs"],
                "observed_at": "2026-11-29",
            }
        ).encode()
        request = urllib.request.Request(  # noqa: S310  (the bench's own server on loopback)
            f"{self.base_url}/api/v1/notes",
            data=body,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
                answer.read()
                elapsed = (time.perf_counter() - started) * 1000
        except urllib.error.HTTPError as error:
            raise RuntimeError(
                f"a save was answered {error.code}: {error.read()[:300]!r}"
            ) from None
        if answer.status != 201:
            raise RuntimeError(f"a save was answered {answer.status}")
        return elapsed


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def served(server: Server, label: str) -> list[Saver]:
    """Every worker made to serve saves (as many clients at once as there are workers,
    three times over); one saver per worker, for the server's later saves."""
    from prospect_memory.notes.models import DailySaveCount

    DailySaveCount.objects.all().delete()  # the server keeps the real daily quota
    savers = [Saver(server.url, f"{label}-{k}") for k in range(server.workers)]
    with concurrent.futures.ThreadPoolExecutor(server.workers) as clients:
        for _ in range(3):
            list(clients.map(lambda saver: saver.save(), savers))
    return savers


def saves_in_turn(savers: list[Saver], saves: int) -> list[list[float]]:
    """``saves`` saves one at a time to each server, the servers taking turns save by save
    (the order rotating), so that what the machine's neighbours do weighs on all alike."""
    times: list[list[float]] = [[] for _ in savers]
    for i in range(saves):
        for shift in range(len(savers)):
            k = (i + shift) % len(savers)
            times[k].append(savers[k].save())
    return times


def embed_calls(calls: int) -> dict[str, list[float]]:
    """One note's embedding, in milliseconds, in one process: by a session reading the
    weights where they lie (``per-worker``, ``preload``), by one with its own prepacked
    matrices (``preload-prepack``; the kernels Kit ran before issue 41), and through the
    local service (``service``); taking turns call by call, so that the machine's neighbours
    weigh on all alike. In a process of its own: the harness keeps no page of onnxruntime or of
    the model's file, which would take its share of the servers' PSS."""
    done = subprocess.run(
        [sys.executable, __file__, "--embed-calls", str(calls)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def _embed_calls_here(calls: int) -> dict[str, list[float]]:
    import django

    django.setup()
    from prospect_memory.core.embeddings import EmbeddingProvider, SemanticProvider
    from prospect_memory.core.embeddings.remote import OpenAICompatibleProvider

    port = free_port()
    service = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "embedding_service.py"), str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert service.stdout is not None
        if service.stdout.readline().strip() != "ready":
            raise RuntimeError("the embedding service did not start")
        providers: dict[str, EmbeddingProvider] = {
            "preload": SemanticProvider(),
            "prepacked": SemanticProvider(prepack=True),
            "service": OpenAICompatibleProvider(
                model="multilingual-e5-small-q4",
                dimensions=384,
                api_key="none",
                query_prefix="query: ",
                document_prefix="passage: ",
                base_url=f"http://127.0.0.1:{port}/v1",
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in providers}
        names = list(providers)
        for i in range(calls + 5):
            for shift in range(len(names)):
                name = names[(i + shift) % len(names)]
                text = BODY.format(company="Brightwave", n=i)
                started = time.perf_counter()
                providers[name].embed_documents([text])
                if i >= 5:  # the first calls warm each up
                    times[name].append((time.perf_counter() - started) * 1000)
        return times
    finally:
        service.terminate()
        service.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,4,8", help="gunicorn worker counts")
    parser.add_argument("--setups", default=",".join(SETUPS), help=", ".join(SETUPS))
    parser.add_argument("--runs", type=int, default=3, help="rounds (the median is shown)")
    parser.add_argument("--saves", type=int, default=100, help="timed saves per server")
    parser.add_argument("--calls", type=int, default=300, help="timed embeddings per round")
    parser.add_argument("--before", type=Path, help="a checkout of Kit to compare with")
    parser.add_argument("--embed-calls", type=int, help=argparse.SUPPRESS)  # embed_calls' child
    args = parser.parse_args()
    if args.embed_calls:
        print(json.dumps(_embed_calls_here(args.embed_calls)))
        return
    setups = [name.strip() for name in args.setups.split(",")]
    for name in setups:
        if name not in SETUPS:
            parser.error(f"no set-up {name!r}: {', '.join(SETUPS)}")
    counts = [int(count) for count in args.workers.split(",")]
    checkouts = dict.fromkeys(setups, ROOT)
    if args.before is not None:
        if not (args.before / "gunicorn.conf.py").is_file():
            parser.error(f"{args.before} is not a checkout of Kit")
        checkouts = {BEFORE: args.before.resolve(), **checkouts}
        setups = list(checkouts)
    args.provider = "hashing"  # the harness's own saves: none; its database: migrated
    environment.setup(args)

    from django.conf import settings

    from kit.db import database_url

    url = database_url(settings.DATABASES["default"])
    found: dict[tuple[str, int], list[dict[str, float]]] = {}
    calls: dict[str, list[dict[str, float]]] = {}
    for run in range(args.runs):
        for name, taken in embed_calls(args.calls).items():
            call = {"p50": statistics.median(taken), "p99": percentile(taken, 0.99)}
            calls.setdefault(name, []).append(call)
            print(json.dumps({"run": run, "embed": name, **call}))
        for workers in counts:
            figures: dict[str, dict[str, float]] = {}
            for setup in setups:  # memory: each server alone on the machine
                server = Server(setup, workers, url, checkouts[setup])
                try:
                    server.start()
                    served(server, f"m{run}-{setup}-{workers}")
                    figures[setup] = server.memory()
                finally:
                    server.stop()
            # Latency: every set-up's server at once, taking turns.
            servers = [Server(setup, workers, url, checkouts[setup]) for setup in setups]
            try:
                for server in servers:
                    server.start()
                savers = [
                    served(server, f"l{run}-{server.setup}-{workers}")[0] for server in servers
                ]
                times = saves_in_turn(savers, args.saves)
            finally:
                for server in servers:
                    server.stop()
            for setup, samples in zip(setups, times, strict=True):
                figures[setup]["save_p50"] = statistics.median(samples)
                figures[setup]["save_p99"] = percentile(samples, 0.99)
                found.setdefault((setup, workers), []).append(figures[setup])
                print(
                    json.dumps({"run": run, "setup": setup, "workers": workers, **figures[setup]})
                )
    report(found, calls, setups, counts, args)


def report(
    found: dict[tuple[str, int], list[dict[str, float]]],
    calls: dict[str, list[dict[str, float]]],
    setups: list[str],
    counts: list[int],
    args: argparse.Namespace,
) -> None:
    def median(setup: str, workers: int, key: str) -> float:
        return statistics.median(figures[key] for figures in found[(setup, workers)])

    def call(name: str, key: str) -> float:
        return statistics.median(figures[key] for figures in calls[name])

    print(
        f"\nOne note's embedding in one process, {args.calls} calls taking turns, medians of "
        f"{args.runs} round(s):\n"
    )
    print("| session | p50 / p99 | p50 added |\n|---|---:|---:|")
    for name, what in (
        ("prepacked", "its own prepacked matrices (preload-prepack; before issue 41)"),
        ("preload", "the weights as they lie (per-worker, preload)"),
        ("service", "through the local service (service)"),
    ):
        added = call(name, "p50") - call("prepacked", "p50")
        print(
            f"| {what} | {call(name, 'p50'):.1f} / {call(name, 'p99'):.1f} ms | {added:+.1f} ms |"
        )

    where = f" ({BEFORE}: the servers of {args.before})" if args.before else ""
    print(
        f"\nMedians of {args.runs} round(s), {args.saves} saves one at a time per server"
        f"{where}. PSS in MiB: master, workers (and the service) together; a worker's mean "
        "PSS / USS (its own pages).\n"
    )
    print(
        "| set-up | workers | PSS, all processes | a worker: PSS / USS | save p50 / p99 "
        "| p50 added |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    base = setups[0]
    for setup in setups:
        for workers in counts:
            added = median(setup, workers, "save_p50") - median(base, workers, "save_p50")
            print(
                f"| {setup} | {workers} | {median(setup, workers, 'total'):.0f} | "
                f"{median(setup, workers, 'worker_pss'):.0f} / "
                f"{median(setup, workers, 'worker_uss'):.0f} | "
                f"{median(setup, workers, 'save_p50'):.1f} / "
                f"{median(setup, workers, 'save_p99'):.1f} ms | "
                f"{added:+.1f} ms |"
            )
    if len(counts) > 1:
        low, high = min(counts), max(counts)
        print(f"\n| set-up | one more worker (PSS, {low} to {high} workers) |\n|---|---:|")
        for setup in setups:
            slope = (median(setup, high, "total") - median(setup, low, "total")) / (high - low)
            print(f"| {setup} | {slope:.0f} MiB |")


if __name__ == "__main__":
    main()
