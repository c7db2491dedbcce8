"""Check that the package's rules have one home each: ``python scripts/check_one_home.py`` (exit 1 on a problem).

Read from the source (``ast``, nothing imported), so it runs before anything else can fail:

- the import graph (module-level imports, ``TYPE_CHECKING`` ones included) has no cycle;
- a format (a package under ``formats/`` or a ``formats/*.py`` that is not shared) imports no other format, not
  the registry, and nothing of ``training/``, ``loading/``, the engines (``builder``, ``cli``, ``spark/``) or
  ``hub``; ``training/`` reaches formats only through the registry (``pchronicle_datasets.formats``);
  ``spark/`` imports neither ``builder`` nor a format package;
- no module outside the registry (``formats/__init__.py``) uses ``getattr`` on a member of the format contract
  (callers ask ``formats.capability``);
- the tag templates (``<think>``, ``<tool_call>``, ``<tool_response>``, the scratchpad tags) are spelled only in
  ``markup_tags.py`` (docstrings aside);
- the loading rules are defined once: the split rule (``split_kind``, and ``starts_json_lines`` called only by
  the reader that streams and the split rule), the id scheme (``posixpath.commonpath``), the bad-record policy
  (``BadRecordError`` made, the quarantine file repaired, the policy names checked, the commands' policy object
  with its quarantine-path check), the files of a dataset folder (``atomic.DATASET_FILES``) and the blank-line test
  (``isspace`` on a line) each in their module.

``tests/test_architecture.py`` runs every check.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pchronicle_datasets"

#: Modules of formats/ every format may import (and which are no format themselves).
SHARED_FORMAT_MODULES = {"base", "residual", "source", "markup", "messages", "layout", "database", "moments"}
#: Members of the format contract and its optional capabilities (formats/base.py).
CONTRACT_MEMBERS = {
    "NAME",
    "ALIASES",
    "EXTENSION",
    "OUTPUT",
    "PER_DOCUMENT",
    "sniff",
    "iter_records",
    "decode",
    "encode",
    "SPLITTABLE",
    "read_line",
    "encode_folder",
    "ENCODE_IN_BATCHES",
    "encode_to",
    "HINTS",
    "group_of",
    "build_group",
    "byte_range",
    "KEYS",
    "SIDECAR",
    "sidecar_of",
    "DOCUMENT_SUFFIX",
}
TAG_SPELLINGS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
TAG_SPELLINGS += ("REASONING_SCRATCHPAD>",)

#: rule → (the one module that defines it, what marks a definition in the source).
ONE_HOME = {
    "the split rule": ("loading/split.py", "def split_kind"),
    "the id scheme": ("loading/ids.py", "commonpath("),
    "the bad-record refusal": ("loading/policy.py", "[{kind}]"),
    "the quarantine setup": ("loading/policy.py", "repair("),
    "the policy names": ("loading/policy.py", "must be 'error' or 'skip'"),
    # the commands' policy object (both engines of the command line): the quarantine file refused when it is an
    # input or the output, in one place
    "the commands' bad-record policy": ("loading/policy.py", "check_quarantine_path("),
    "the files of a dataset folder": ("atomic.py", "data-\\d{5}-of-\\d{5}"),
    "the line-range cut": ("loading/ranges.py", "def line_start"),
    "one value or JSON Lines": ("formats/base.py", "def starts_json_lines"),
    "the blank-line test": ("formats/source.py", "def is_blank_line"),
}


def modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for each module-level import of module ``name`` (resolved to a module of the
    package; a name imported from a package is that package, or its submodule when one has the name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if _is_package(path) else name.rpartition(".")[0]

    def top_level(body: list) -> Iterator[ast.stmt]:
        for node in body:
            yield node
            if isinstance(node, (ast.If, ast.Try)):
                yield from top_level(node.body)
                yield from top_level(getattr(node, "orelse", []))
                if isinstance(node, ast.Try):
                    for handler in node.handlers:
                        yield from top_level(handler.body)

    for node in top_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE and alias.name in known:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    yield sub, node.lineno
                elif target in known:
                    yield target, node.lineno


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {dep for dep, _ in imports(name, path, known)} - {name} for name, path in known.items()}


def check_no_cycle() -> list[str]:
    graph = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []
    problems: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycle = [*stack[stack.index(dep) :], dep]
                problems.append("import cycle: " + " → ".join(cycle))
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in state:
            visit(node)
    return problems


def format_of(name: str) -> str | None:
    """The format a module belongs to (``pchronicle_datasets.formats.chat`` for ``formats.chat.reader``), or None."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] != "formats" or parts[2] in SHARED_FORMAT_MODULES:
        return None
    return ".".join(parts[:3])


def check_layers() -> list[str]:
    known = modules()
    problems = []
    engines = (f"{PACKAGE}.builder", f"{PACKAGE}.cli", f"{PACKAGE}.spark", f"{PACKAGE}.hub")
    upper = (f"{PACKAGE}.training", f"{PACKAGE}.loading", *engines)
    for name, path in known.items():
        rel = path.relative_to(ROOT)
        mine = format_of(name)
        for dep, line in imports(name, path, known):
            where = f"{rel}:{line} imports {dep}"
            if mine is not None:
                other = format_of(dep)
                if other is not None and other != mine:
                    problems.append(f"{where}: a format never imports another format")
                if dep == f"{PACKAGE}.formats":
                    problems.append(f"{where}: a format never imports the registry")
                if dep.startswith(upper):
                    problems.append(f"{where}: a format never imports training/, loading/ or an engine")
            if name.startswith(f"{PACKAGE}.training") and format_of(dep) is not None:
                problems.append(f"{where}: training/ reaches formats only through the registry")
            if name.startswith(f"{PACKAGE}.spark") and (dep == f"{PACKAGE}.builder" or format_of(dep) is not None):
                problems.append(f"{where}: spark/ asks the registry and loading/, never builder or a format")
    return problems


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def check_getattr_on_formats() -> list[str]:
    problems = []
    for name, path in modules().items():
        if name == f"{PACKAGE}.formats":
            continue  # the one lookup (capability) and the check of what a format declares (register)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in CONTRACT_MEMBERS
            ):
                problems.append(
                    f"{path.relative_to(ROOT)}:{node.lineno}: {node.func.id}(…, {node.args[1].value!r}) on a format: "
                    "ask formats.capability"
                )
    return problems


def check_tags() -> list[str]:
    problems = []
    for name, path in modules().items():
        if name == f"{PACKAGE}.markup_tags":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                found = [t for t in TAG_SPELLINGS if t in node.value]
                if found:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: spells {found[0]!r} (markup_tags.py)")
    return problems


def _code_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a module outside its docstrings and comments."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) in docs:
            skip.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0] if "#" in line and '"' not in line and "'" not in line else line
        if number not in skip and code.strip() and not code.lstrip().startswith("#"):
            yield number, code


def check_one_home() -> list[str]:
    problems = []
    files = {path.relative_to(ROOT / PACKAGE).as_posix(): path for path in modules().values()}
    for rule, (home, mark) in ONE_HOME.items():
        if not any(mark in code for _, code in _code_lines(files[home])):
            problems.append(f"{rule}: its home {home} no longer has {mark!r}")
        for rel, path in files.items():
            if rel == home:
                continue
            for number, code in _code_lines(path):
                if mark in code and not code.lstrip().startswith(("def ", "class ")):  # a helper's own definition
                    problems.append(f"{PACKAGE}/{rel}:{number}: {rule} again ({mark!r}; its home is {home})")
    # The streaming decision is called by the reader that streams and by the split rule only.
    for rel, path in files.items():
        if rel in ("formats/base.py", "loading/split.py"):
            continue
        for number, code in _code_lines(path):
            if "starts_json_lines(" in code or "first_line_kind(" in code:
                problems.append(f"{PACKAGE}/{rel}:{number}: decides 'one value or JSON Lines' (formats/base.py)")
            if ".isspace()" in code and rel not in ("formats/source.py", "loading/ranges.py", "hub.py"):
                problems.append(f"{PACKAGE}/{rel}:{number}: a blank-line test of its own (source.is_blank_line)")
    return problems


CHECKS = {
    "no import cycle": check_no_cycle,
    "layers": check_layers,
    "no getattr on a format": check_getattr_on_formats,
    "tags in markup_tags.py": check_tags,
    "one home per loading rule": check_one_home,
}


def main() -> int:
    failed = 0
    for title, check in CHECKS.items():
        problems = check()
        print(f"{'ok  ' if not problems else 'FAIL'} {title}")
        for problem in problems:
            print(f"     {problem}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
