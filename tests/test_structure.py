"""The code's layering, as a reader relies on it: no module reaches into another's private
names, and the backend-agnostic model package imports nothing of TensorFlow's."""

from __future__ import annotations

import ast

from conftest import REPO

SOURCES = sorted(
    path for folder in ("bert_tf", "scripts") for path in (REPO / folder).rglob("*.py")
) + sorted(REPO.glob("*.py"))


def test_no_module_imports_another_modules_private_names():
    found = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bert_tf"):
                found += [
                    f"{path.relative_to(REPO)}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert found == []
