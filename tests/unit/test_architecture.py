"""The shape of the package, as the architecture notes state it: no import circles, and no loose module at the root
that belongs in a wing. (The layer contracts themselves are import-linter's, run by `make check` and `.ci/run`.)"""

from __future__ import annotations

import re
from pathlib import Path

import grimp
from helpers import ROOT as REPO

ROOT = REPO / "inspector"


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
    shares (text helpers; inspector's folders and the small state files kept in them, which the token layer keeps its
    counts in and may not reach in the library), the record views both front ends print or write (view, htmlexport),
    and the sample generator."""
    loose = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert loose == ["htmlexport", "samplegen", "statefiles", "textutil", "view"]


DOCS = ROOT.parent / "docs"
_REF = re.compile(r"§(\d+(?:\.\d+)?)[a-z]?(?:\s*[-–]\s*(\d+(?:\.\d+)?))?")
_NEWER = "format-2.1.3xx"


def _headings(doc: Path) -> set[str]:
    """The section numbers of a reference page: `## 4.` and `### 4.3 …` give "4" and "4.3"."""
    out = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{2,3} (\d+(?:\.\d+)?)[. ]", line)
        if m:
            out.add(m.group(1))
        m = re.match(r"## Appendix ([A-Z])\.", line)
        if m:
            out.add(m.group(1))
    return out


def _refs(text: str) -> list[tuple[str, str]]:
    """(page, section) for every § reference in a text: `format-2.1.3xx.md §N` (the page's name right before it; or
    "Appendix X" on a line that names it) is a section of today's releases; a bare §N one of the 2.1.88 reference
    (docs/format.md). A range names both ends."""
    out = []
    for line in text.splitlines():
        for m in _REF.finditer(line):
            page = "format-2.1.3xx.md" if line[: m.start()].endswith(_NEWER + ".md ") else "format.md"
            out += [(page, n) for n in m.groups() if n]
        for m in re.finditer(r"Appendix ([A-Z])", line):
            if _NEWER in line:
                out.append(("format-2.1.3xx.md", m.group(1)))
    return out


def test_every_section_reference_in_the_code_resolves_inside_the_repository():
    """129 § references pointed to documents that were not in the repository; each now names a section of
    docs/format.md (the 2.1.88 reference) or docs/format-2.1.3xx.md (today's releases)."""
    headings = {name: _headings(DOCS / name) for name in ("format.md", "format-2.1.3xx.md")}
    sources = [p for d in ("inspector", "conformance", "bench") for p in (ROOT.parent / d).rglob("*.py")]
    sources = [p for p in sources if "work" not in p.relative_to(ROOT.parent).parts[:2]]  # bench/work: the peers' code
    sources += list((ROOT / "claude").glob("*.json"))
    found, missing = 0, []
    for p in sources:
        text = p.read_text(encoding="utf-8")
        assert "claude-code-2.1.328.md" not in text and "claude-code-format.md" not in text, p
        for page, n in _refs(text):
            found += 1
            if n not in headings[page]:
                missing.append(f"{p.relative_to(ROOT.parent)}: {page} §{n}")
    assert found > 100 and missing == []


def test_the_reference_resolver_tells_the_two_pages_apart():
    assert _refs("the leaf (§2.7–2.9); format-2.1.3xx.md §3.6, §13.5a") == [
        ("format.md", "2.7"),
        ("format.md", "2.9"),
        ("format-2.1.3xx.md", "3.6"),
        ("format.md", "13.5"),
    ]
    assert "4.3" in _headings(DOCS / "format.md") and "A" in _headings(DOCS / "format-2.1.3xx.md")


def test_the_architecture_page_names_every_module():
    """docs/architecture.md is kept as built: a module it does not name is one a newcomer cannot find from it."""
    doc = (DOCS / "architecture.md").read_text(encoding="utf-8")
    unnamed = [
        str(p.relative_to(ROOT))
        for p in sorted(ROOT.rglob("*.py"))
        if p.stem not in ("__init__", "__main__") and p.name not in doc
    ]
    assert unnamed == []
