"""Imports run one way (docs/architecture.md, "Import rules"): every module's imports, read
with `ast` (those inside functions too, relative or absolute), form no cycle and follow
the rules' table.

A room is a top-level package (with all its modules) or a top-level module; tests/,
bench/ and docs/ are not part of the graph. A failure names each offending import with
its file and line.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_IN_THE_GRAPH = {"tests", "bench", "docs"}
# The machinery around a run holds several concerns, each a room with its own rule.
SPLIT_PACKAGE = "engine"
COMMANDS = (
    "train",
    "evaluate",
    "predict",
    "pretrain",
    "compress",
    "export",
    "upgrade_run",
    "serve",
)
ABOVE_THE_COMMANDS = {
    "config",
    "runtime",
    "data",
    "tokenization",
    "models",
    "layers",
    "inspection",
    "engine.cli",
    "run_folder",
    "engine.reports",
    "engine.label_sets",
    "engine.calibration",
    "engine.training",
    "engine.evaluation",
}

# Each room and the rooms it may import: the table of docs/architecture.md's "Import
# rules" (test_the_architecture_page_states_these_rules keeps the two the same).
RULES = {
    "layers": set(),
    "config": set(),
    "runtime": set(),
    "engine": set(),  # the package's docstring: its parts are the rooms below
    "tokenization": {"config", "runtime"},
    "data": {"config", "runtime", "tokenization"},
    # models holds what a saved model is made of: never the run folder, data or training.
    "models": {"config", "layers", "tokenization"},
    # run_folder: the run folder's files and the one reader of a finished run, below
    # inspection (whose `show` loads a run given by its path) and engine.
    "run_folder": {"config", "data", "models"},
    # inspection takes models, texts and arrays; what writes reports into run folders is
    # engine.evaluation's, above it.
    "inspection": {"config", "run_folder", "layers", "models", "tokenization"},
    "engine.cli": {"runtime"},
    "engine.reports": {"config", "engine.calibration", "run_folder"},
    "engine.label_sets": {"engine.calibration", "engine.reports", "run_folder"},
    "engine.calibration": set(),
    "engine.evaluation": {
        "data",
        "engine.calibration",
        "engine.label_sets",
        "engine.reports",
        "run_folder",
        "inspection",
        "models",
        "tokenization",
    },
    "engine.training": {
        "config",
        "engine.calibration",
        "data",
        "engine.label_sets",
        "engine.reports",
        "run_folder",
        "inspection",
        "models",
        "runtime",
        "tokenization",
    },
    **{command: ABOVE_THE_COMMANDS for command in COMMANDS},  # never another command
}


def project_modules() -> dict:
    """{dotted module name: path}: the top-level modules, and every module of each
    top-level package (a package's `__init__.py` is the package's name)."""
    found = {}
    for path in sorted(ROOT.iterdir()):
        if path.suffix == ".py":
            found[path.stem] = path
        elif (path / "__init__.py").is_file() and path.name not in NOT_IN_THE_GRAPH:
            for module in sorted(path.rglob("*.py")):
                parts = module.relative_to(ROOT).with_suffix("").parts
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = module
    return found


def room(module: str) -> str:
    """A top-level package or module; `engine`'s parts are rooms of their own."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == SPLIT_PACKAGE else parts[0]


def ours(name: str, modules) -> str | None:
    """The project module `name` is (or lies in), or None for a library."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, modules) -> list:
    """[(imported module, line)]: the project modules `module` imports, anywhere in it."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..a import x
                parents = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parents, base] if base else parents)
            # `from a import b` imports the module a.b when there is one, else from a.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            target = ours(name, modules)
            if target is not None and target != module:
                found.append((target, node.lineno))
    return list(dict.fromkeys(found))  # `from a.b import x, y` is one edge


@functools.cache
def import_edges() -> list:
    """[(importer, imported, 'path:line')] over the whole project."""
    modules = project_modules()
    return [
        (module, target, f"{path.relative_to(ROOT)}:{line}")
        for module, path in modules.items()
        for target, line in imports(module, path, modules)
    ]


def cycles(graph: dict) -> list:
    """The strongly connected sets of more than one node of {node: set of nodes} (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while not component or node not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def cycle_report(edges, name) -> list:
    """Every cycle of the graph whose nodes are `name(module)`, as its imports' lines."""
    graph = {}
    for importer, imported, _ in edges:
        if name(importer) != name(imported):
            graph.setdefault(name(importer), set()).add(name(imported))
    lines = []
    for component in cycles(graph):
        lines.append("cycle: " + " <-> ".join(component))
        lines += [
            f"    {where}: {importer} -> {imported}"
            for importer, imported, where in edges
            if name(importer) in component
            and name(imported) in component
            and name(importer) != name(imported)
        ]
    return lines


def test_no_cycle_between_modules():
    problems = cycle_report(import_edges(), lambda module: module)
    assert not problems, "\n" + "\n".join(problems)


def test_no_cycle_between_rooms():
    problems = cycle_report(import_edges(), room)
    assert not problems, "\n" + "\n".join(problems)


def test_every_room_has_a_rule():
    unknown = sorted({room(module) for module in project_modules()} - set(RULES))
    assert not unknown, (
        f"{unknown}: add a row to the Import rules of docs/architecture.md "
        "and to RULES in tests/test_imports.py"
    )


@pytest.mark.parametrize("importer", sorted(RULES))
def test_imports_follow_the_rules(importer):
    broken = [
        f"{where}: {module} -> {imported} ({importer} may import "
        f"{', '.join(sorted(RULES[importer])) or 'nothing of ours'})"
        for module, imported, where in import_edges()
        if room(module) == importer
        and room(imported) != importer
        and room(imported) not in RULES[importer]
    ]
    assert not broken, "\n" + "\n".join(broken)


def test_the_rules_form_no_cycle():
    assert cycles(RULES) == []


def documented_rules() -> dict:
    """The Import rules table of docs/architecture.md as {room: set of rooms}."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Import rules", 1)[1].split("\n## ", 1)[0]
    rules = {}
    for importers, allowed in re.findall(r"^\|(.+)\|(.+)\|$", section, flags=re.MULTILINE):
        allowed = allowed.split("never")[0]  # "(never `cli`, ...)" names what it may not
        for importer in re.findall(r"`([\w.]+)`", importers):
            rules[importer] = set(re.findall(r"`([\w.]+)`", allowed))
    return rules


def test_the_architecture_page_states_these_rules():
    assert documented_rules() == RULES


def test_a_function_level_import_and_a_relative_one_are_edges(tmp_path):
    # The reader itself, on a made-up package: both imports below close a circle.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from . import a\n")
    modules = {"pkg": package / "__init__.py", "pkg.a": package / "a.py", "pkg.b": package / "b.py"}
    assert imports("pkg.a", modules["pkg.a"], modules) == [("pkg.b", 2)]
    assert imports("pkg.b", modules["pkg.b"], modules) == [("pkg.a", 1)]
    assert cycles({"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}) == [["pkg.a", "pkg.b"]]
