"""The library's layers (docs/layout.md): no import cycle between modules, counting imports
inside functions too (a function-level import can hide a cycle that breaks the day someone
moves it to the top), and every subpackage imports only the layers below it."""

from __future__ import annotations

from benchbook.site.runner import _imported, _module_files

# Lowest first; a module may import its own package and any package before it.
LAYERS = ["benchbook", "cache", "ingest", "format", "study", "analysis", "ledger", "book", "page", "chapters",
          "site", "scaffold", "cli"]


def graph() -> dict[str, set[str]]:
    """benchbook module -> the benchbook modules it imports anywhere in its source."""
    files = _module_files()
    out = {}
    for name, path in files.items():
        here = f"{name}.__init__" if path.name == "__init__.py" else name
        out[name] = {m for m in _imported(path.read_text(encoding="utf-8"), "benchbook", here)
                     if m in files and m != name}
    return out


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back():
    g = graph()
    assert len(g) > 60
    assert cycles(g) == []


def test_every_package_imports_only_the_layers_below_it():
    g = graph()
    assert {layer(m) for m in g} == set(LAYERS), "a new subpackage: give it a place in LAYERS and docs/layout.md"
    upward = sorted(f"{a} -> {b}" for a, targets in g.items() for b in targets
                    if LAYERS.index(layer(b)) > LAYERS.index(layer(a)))
    assert upward == []


def test_no_module_imports_a_chapter_folder_but_its_own():
    """Chapters are found at run time (benchbook.book.registry); a module that imported one
    would make every page that imports it re-execute when that chapter changes."""
    g = graph()
    crossing = sorted(f"{a} -> {b}" for a, targets in g.items() for b in targets
                      if layer(b) == "chapters" and b.split(".")[:3] != a.split(".")[:3])
    assert crossing == []


def test_only_the_command_line_imports_inside_functions():
    """Every module imports what it uses at its top, where a reader sees its dependencies;
    cli.py alone imports per command, so a command loads only what it runs."""
    import ast

    from benchbook.site.runner import LIB_DIR

    inside = []
    for path in sorted(LIB_DIR.rglob("*.py")):
        if path == LIB_DIR / "cli.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            inside += [f"{path.relative_to(LIB_DIR)}:{n.lineno}" for n in ast.walk(fn)
                       if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("benchbook"))]
    assert inside == []
