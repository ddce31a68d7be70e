"""Every name the project's Python scripts and benchmarks import from the project exists:
a script is run by hand, rarely, and a module moved under it would fail only then."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.live import ROOT

PROJECT = ("bench", "kit", "outreach", "pgstatements", "prospect_memory")


def _python_files() -> list[Path]:
    scripts = [
        path
        for path in sorted((ROOT / "scripts").iterdir())
        if path.is_file() and path.read_text(errors="replace").startswith("#!/usr/bin/env python")
    ]
    return [*scripts, *sorted((ROOT / "bench").glob("*.py"))]


def _project_imports(path: Path) -> list[tuple[int, str, str | None]]:
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in PROJECT:
                found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name, None)
                for alias in node.names
                if alias.name.split(".")[0] in PROJECT
            ]
    return found


@pytest.mark.parametrize("path", _python_files(), ids=lambda path: path.name)
def test_what_a_script_imports_from_the_project_exists(path):
    missing = []
    for line, module, name in _project_imports(path):
        try:
            imported = importlib.import_module(module)
        except ImportError as error:
            missing.append(f"line {line}: {module} ({error})")
            continue
        if name is not None and not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: {module}.{name}")
    assert not missing, f"{path.relative_to(ROOT)} imports what does not exist: {missing}"
