"""A live Kit server process (gunicorn on loopback) against the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    def __init__(
        self,
        database_url: str,
        *,
        workers: int = 2,
        extra_env: dict | None = None,
        gunicorn_args: tuple[str, ...] = ("--access-logfile", "-"),
        port: int | None = None,
        checkout: Path = ROOT,
        timeout: int = 60,
        boot_seconds: float = 60,
        app: str = "kit.wsgi",
        wrapper: tuple[str, ...] = (),
    ):
        """gunicorn of the Kit in ``checkout`` (this one by default) serving ``app`` (the WSGI
        application; ``kit.asgi`` with an ASGI worker class), ``workers`` workers
        (each given ``timeout`` seconds per request), answering ``/healthz`` within
        ``boot_seconds``. ``extra_env`` adds to this process's environment; a name given
        None is left out. ``wrapper`` runs gunicorn under another program (valgrind)."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.log = Path(tempfile.mkstemp(prefix="kit-live-", suffix=".log")[1])
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "kit.settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": "",
            "CONN_MAX_AGE": "60",
            **(extra_env or {}),
        }
        env = {name: value for name, value in env.items() if value is not None}
        self.process = subprocess.Popen(
            [
                *wrapper,
                sys.executable,
                "-m",
                "gunicorn",
                app,
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--timeout",
                str(timeout),
                *gunicorn_args,
            ],
            cwd=checkout,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
        )
        self._wait(boot_seconds)

    def _wait(self, boot_seconds: float) -> None:
        deadline = time.monotonic() + boot_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the live server exited:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:  # noqa: S310
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()  # not left holding its port for the next server
        raise RuntimeError(f"the live server did not start:\n{self.log.read_text()[-3000:]}")

    def stop(self, grace: float = 10) -> None:
        """Stop gunicorn (its workers finish what they serve), killed after ``grace``."""
        self.process.terminate()
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
