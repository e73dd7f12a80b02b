"""The shape of the package, as the architecture notes state it: no import circles, and no loose module at the root
that belongs in a wing. (The layer contracts themselves are import-linter's, run by `make check` and `.ci/run`.)"""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1] / "inspector"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
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
                        out.append(sorted(comp))
    return out


def test_no_module_imports_itself_back():
    """fts and search, textutil and records, calibrate and context, measured and versions, the CLI registry and its
    app module each imported the other (some inside functions, which grimp counts too)."""
    assert _cycles(grimp.build_graph("inspector")) == []


def test_the_cycle_finder_finds_a_cycle():
    g = grimp.ImportGraph()
    for m in ("a", "b", "c", "d"):
        g.add_module(m)
    g.add_import(importer="a", imported="b")
    g.add_import(importer="b", imported="c")
    g.add_import(importer="c", imported="a")
    g.add_import(importer="c", imported="d")
    assert _cycles(g) == [["a", "b", "c"]]


def test_the_package_root_keeps_only_the_shared_helpers():
    """The library wing holds the cache, search, stats, cost and retention; the root keeps only what every layer
    shares (text helpers), the record views both front ends print, and the sample generator."""
    loose = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert loose == ["samplegen", "textutil", "view"]
