"""The repository's layering, read from the source with `ast` (no imports, no model): no import cycle among the
project's own modules, and no Dagster in the `curation` library.

Function-level (lazy) imports count: a lazy import that closes a circle only hides it until the function runs.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def project_files() -> dict[str, Path]:
    """Module name -> file of every .py file in the repository (dot-folders such as .venv and .git left out)."""
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if any(part.startswith(".") for part in relative.parts):
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            modules[".".join(parts)] = path
    return modules


def imports(module: str, path: Path) -> Iterator[tuple[tuple[str, ...], int]]:
    """Every import in the file, at any depth, as (the absolute names it may refer to, most specific first;
    its line): ``from X import n`` is the submodule ``X.n`` when there is one, else module ``X``."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.name,), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield (f"{base}.{alias.name}", base), node.lineno


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {project module it imports: line of its first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for names, line in imports(module, path):
            target = next((name for name in names if name in modules), None)
            if target is not None and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def shortest_cycle(graph: dict[str, dict[str, int]], component: list[str], start: str) -> list[str]:
    """A shortest circle through ``start`` within its component, as a path that ends where it starts."""
    members = set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def describe(graph: dict[str, dict[str, int]], modules: dict[str, Path], component: list[str]) -> str:
    """The component's circles (the shortest through each of its modules), each import with its file and line."""
    cycles: list[list[str]] = []
    for member in component:
        cycle = shortest_cycle(graph, component, member)
        first = cycle.index(min(cycle[:-1]))
        rotated = [*cycle[first:-1], *cycle[:first], cycle[first]]
        if rotated not in cycles:
            cycles.append(rotated)
    lines = [f"  component {', '.join(component)}:"]
    for cycle in cycles:
        lines.append(f"    {' -> '.join(cycle)}")
        for a, b in itertools.pairwise(cycle):
            lines.append(f"      {a} imports {b} at {modules[a].relative_to(ROOT)}:{graph[a][b]}")
    return "\n".join(lines)


def test_no_import_cycles() -> None:
    """Every module depends only downward: a circle (even through a function-level import) is reported with
    the file and line of each import in it, for every circle in the tree."""
    modules = project_files()
    graph = import_graph(modules)
    components = strongly_connected(graph)
    report = "\n".join(describe(graph, modules, component) for component in components)
    assert not components, f"{len(components)} group(s) of modules import each other in a circle:\n{report}"


def test_curation_is_a_library_without_dagster() -> None:
    """`curation/` is the pure library; Dagster lives in assets/, checks/, resources/, automation/."""
    offenders = []
    for module, path in project_files().items():
        if module.split(".")[0] != "curation":
            continue
        for names, line in imports(module, path):
            top = names[-1].split(".")[0]
            if top == "dagster" or top.startswith("dagster_"):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {names[-1]}")
    assert not offenders, "the curation library imports Dagster:\n" + "\n".join(sorted(set(offenders)))


MAX_LIBRARY_MODULE_LINES = 800


def test_no_library_module_above_800_lines() -> None:
    """A module past ~800 lines holds several things: split it along its seams (the stages, the detector
    families, the surrogate engine and the generators were each one file of 1,100-2,600 lines)."""
    too_long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "curation").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LIBRARY_MODULE_LINES
    }
    assert not too_long, f"library modules above {MAX_LIBRARY_MODULE_LINES} lines: {too_long}"


def test_every_library_package_is_installed() -> None:
    """setuptools installs only the packages pyproject.toml lists: a new subpackage of `curation` must be
    listed, or a built wheel lacks it (the editable install used here would not notice)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(project["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "curation").rglob("__init__.py")}
    found |= {"curation.data", "curation.data.public"}  # data folders, installed as namespace packages
    assert found == listed, f"[tool.setuptools] packages: missing {found - listed}, extra {listed - found}"


MAX_TOP_LEVEL_MODULES = 12


def test_library_is_packages_by_concept() -> None:
    """`curation/` holds packages by concept (core, ingest, score, detect, tagger, labels, policy, views,
    gates, delivery, evaluation) and at most a dozen modules of its own (the CLI, the batch registry...)."""
    top = sorted(p.name for p in (ROOT / "curation").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} modules directly in curation/: {top}"


def is_stage_entry(module: str) -> bool:
    """A stage entry is the module a Dagster asset calls: ``<package>.stage`` or ``<package>.<name>_stage``."""
    leaf = module.rsplit(".", 1)[-1]
    return module.startswith("curation.") and (leaf == "stage" or leaf.endswith("_stage"))


def test_stage_entries_are_the_top_of_the_library() -> None:
    """Stages are a layer: only the Dagster layer, the CLI and the benchmarks call a stage entry; no library
    module (another stage entry included) imports one, so a stage's helpers live in its package's plain
    modules where anything below can use them."""
    graph = import_graph(project_files())
    offenders = [
        f"{module} imports {target} (line {line})"
        for module, edges in graph.items()
        if module.startswith("curation") and module != "curation.cli"
        for target, line in edges.items()
        if is_stage_entry(target)
    ]
    assert not offenders, "library modules import stage entries:\n" + "\n".join(sorted(offenders))


DAGSTER_LAYER = ("definitions", "resources", "assets", "checks", "automation")


def test_only_the_cli_imports_the_dagster_layer() -> None:
    """The CLI is the library's top: it alone loads the Dagster layer (lazily, from the project folder)."""
    offenders = []
    for module, path in project_files().items():
        if module.split(".")[0] != "curation" or module == "curation.cli":
            continue
        for names, line in imports(module, path):
            if names[-1].split(".")[0] in DAGSTER_LAYER:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {names[-1]}")
    assert not offenders, "library modules import the Dagster layer:\n" + "\n".join(sorted(offenders))


MAX_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 3
PRODUCT_FOLDERS = ("curation", "assets", "checks", "resources", "automation")


def long_functions() -> dict[str, int]:
    """Every function or method of the product code (library and Dagster layer) over 80 lines."""
    found = {}
    paths = [p for folder in PRODUCT_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
    for path in [*paths, ROOT / "definitions.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = length
    return found


def test_few_long_functions() -> None:
    """A function past 80 lines does several things; at most three may (each says why in its docstring)."""
    found = long_functions()
    assert len(found) <= MAX_LONG_FUNCTIONS, f"{len(found)} functions over {MAX_FUNCTION_LINES} lines: {found}"
