"""`inspector export --html` (issue 28.8): pages opened in a real headless Chromium render, raise no console error,
and make no request but their own file; hostile transcript text stays text."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import chromium
import pytest
from builders import assistant, tool_result, tool_use, user
from helpers import SAMPLES, tree_hashes, write_jsonl
from helpers import run_cli as run

from inspector.transcript.discovery import resolve_target, session_files
from inspector.view import build_rows

if chromium.find() is None:
    if os.environ.get("CI"):  # CI installs Debian's chromium (.ci/run): its absence there is a failure
        raise RuntimeError("no chromium on this CI machine: .ci/run should have installed it")
    pytest.skip("no chromium here (apt-get install chromium)", allow_module_level=True)

SHAPE = (
    "document.title",
    "document.querySelectorAll('section.rec').length",
    "document.querySelectorAll('svg polyline').length",
    "document.querySelectorAll('script').length",
    "document.querySelectorAll('img, iframe, object, embed, link[rel=stylesheet]').length",
    "document.body.innerText.length",
    "Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))",
    "document.querySelectorAll('details').length",
)


def page_checks(v: chromium.Visit, page: Path) -> None:
    assert v.requests == [page.as_uri()], v.requests  # its own file, nothing else
    assert v.errors() == [], v.errors()
    assert v.values["document.querySelectorAll('script').length"] == 0


def test_every_sample_page_renders_with_no_error_and_no_request(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    before = tree_hashes(root)
    out = tmp_path / "export"
    code, stdout, err = run("export", str(root), "--html", str(out))
    assert code == 0, err
    sessions = [p for p, _a in session_files(resolve_target(root))]
    assert f"{len(sessions)} session(s) in {len(sessions)} page(s)" in stdout
    index = out / "index.html"
    v = chromium.visit(index.as_uri(), SHAPE)
    page_checks(v, index)
    links = v.values[SHAPE[6]]
    assert len(links) == len(sessions)
    for href in links:  # every link of the index opens a page that renders
        page = (out / href).resolve()
        assert page.is_file(), href
        from inspector.transcript.session import Session

        src = next(p for p in sessions if p.stem == page.stem)
        s = Session.load(src)
        want = len(build_rows(s, scope="chain"))
        s.close()
        pv = chromium.visit(page.as_uri(), SHAPE)
        page_checks(pv, page)
        assert pv.values[SHAPE[1]] == want  # a section per record of the conversation
        assert pv.values[SHAPE[5]] > 200
        assert pv.values[SHAPE[6]][0] == "../index.html"
    assert tree_hashes(root) == before  # the transcripts are only read


def test_the_token_chart_and_the_compaction_are_on_the_page(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    out = tmp_path / "export"
    assert run("export", str(root), "--html", str(out))[0] == 0
    page = next(out.rglob("6513270e*.html"))  # the sample that auto-compacts
    v = chromium.visit(
        page.as_uri(),
        (
            "document.querySelector('svg').textContent",
            "document.body.innerText.includes('Auto-compaction fired because')",
            "document.querySelectorAll('svg polyline').length",
        ),
    )
    assert v.errors() == []
    assert "auto-compact 167,000" in v.values["document.querySelector('svg').textContent"]
    assert v.values["document.body.innerText.includes('Auto-compaction fired because')"] is True
    assert v.values["document.querySelectorAll('svg polyline').length"] == 2  # before and after the compaction


def test_persisted_outputs_are_embedded(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    out = tmp_path / "export"
    assert run("export", str(root), "--html", str(out))[0] == 0
    persisted = next(root.rglob("tool-results/*.txt"))
    session_id = persisted.parent.parent.name
    page = next(out.rglob(f"{session_id}.html"))
    head = persisted.read_text()[:200]
    v = chromium.visit(
        page.as_uri(),
        ("Array.from(document.querySelectorAll('details > pre')).map(p => p.textContent).join('\\n')",),
    )
    assert v.errors() == []
    shown = next(iter(v.values.values()))
    assert " ".join(head.split()) in " ".join(shown.split())


HOSTILE = (
    '<script>alert(1)</script><img src="http://example.com/x.png" onerror="alert(2)">'
    "</pre></details><iframe src='https://example.com'></iframe>\x1b[31mred\x1b[0m\x1b]8;;http://x\x07link"
    " <style>body{background:url(http://example.com/bg)}</style>"
)


def test_hostile_text_stays_text(tmp_path):
    proj = tmp_path / "root" / "-tmp-evil"
    tid = "toolu_evil"
    recs = [
        user("u1", None, HOSTILE, 0),
        assistant("a1", "u1", [tool_use(tid, "Bash", {"command": HOSTILE})], 1, usage=(10, 0, 0, 5)),
        tool_result("u2", "a1", tid, HOSTILE, 2),
        assistant("a2", "u2", [{"type": "text", "text": HOSTILE}], 3, usage=(20, 0, 0, 5)),
    ]
    write_jsonl(proj / "evil.jsonl", recs)
    out = tmp_path / "export"
    assert run("export", str(tmp_path / "root"), "--html", str(out))[0] == 0
    page = out / "-tmp-evil" / "evil.html"
    raw = page.read_text()
    assert "<script>" not in raw and "<iframe" not in raw and "\x1b" not in raw
    v = chromium.visit(page.as_uri(), SHAPE + ("document.body.innerText.split('<script>alert(1)</script>').length - 1",))
    page_checks(v, page)
    assert v.values[SHAPE[4]] == 0  # no image, frame or stylesheet was made from the text
    assert v.values["document.body.innerText.split('<script>alert(1)</script>').length - 1"] >= 3  # shown, as text


def test_the_check_can_fail(tmp_path):
    """The browser check sees a request and a console error when a page makes them (so the tests above mean it)."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><p>x</p><img src="http://example.com/x.png"><script>console.error("boom")</script>')
    v = chromium.visit(page.as_uri())
    assert "http://example.com/x.png" in v.requests and any("boom" in e for e in v.errors())


def test_an_export_never_replaces_a_file_it_did_not_write_and_stays_out_of_the_transcripts(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    out = tmp_path / "export"
    assert run("export", str(root), "--html", str(out))[0] == 0
    first = (out / "index.html").read_bytes()
    assert run("export", str(root), "--html", str(out))[0] == 0  # its own pages are replaced
    assert re.sub(rb"\s+", b"", (out / "index.html").read_bytes()) == re.sub(rb"\s+", b"", first)
    (out / "index.html").write_text("mine")
    code, _o, err = run("export", str(root), "--html", str(out))
    assert code == 1 and "not a page inspector exported" in err and (out / "index.html").read_text() == "mine"
    before = tree_hashes(root)
    code, _o, err = run("export", str(root), "--html", str(root / "inside"))
    assert code == 1 and "inside the transcripts" in err and not (root / "inside").exists()
    assert tree_hashes(root) == before


def test_a_long_session_is_cut_into_pages_that_link_each_other(tmp_path, monkeypatch):
    """A 200 MB session as one page does not open in a browser (it did not load in 60 s): the conversation is cut
    into pages of about PAGE_BUDGET bytes of transcript, the first with the token story; every record is on one
    page, each page opens clean, and a compaction's link goes to the page that holds its boundary."""
    import inspector.htmlexport as hx

    monkeypatch.setattr(hx, "PAGE_BUDGET", 200_000)
    root = tmp_path / "root"
    shutil.copytree(SAMPLES, root)
    out = tmp_path / "export"
    code, stdout, err = run("export", str(sample_session_path(root)), "--html", str(out))
    assert code == 0, err
    pages = sorted((out / "-home-ann-work-weatherly").glob("6513270e*.html"), key=lambda p: len(p.name))
    assert len(pages) > 3 and f"in {len(pages)} page(s)" in stdout
    from inspector.transcript.session import Session

    s = Session.load(sample_session_path(root))
    want = len(build_rows(s, scope="chain"))
    s.close()
    seen = 0
    links: set[str] = set()
    for page in pages:
        v = chromium.visit(page.as_uri(), SHAPE)
        page_checks(v, page)
        seen += v.values[SHAPE[1]]
        links |= {h for h in v.values[SHAPE[6]] if "#r" in h}
        assert any(h.endswith(".html") and "#" not in h for h in v.values[SHAPE[6]])  # the other pages
    assert seen == want  # every record once
    assert links  # the compaction's boundary, on the page that holds it
    for h in links:
        file, anchor = h.split("#")
        assert f'id="{anchor}"' in (pages[0].parent / file).read_text()


def sample_session_path(root: Path) -> Path:
    return next(p for p in root.rglob("6513270e*.jsonl") if "subagents" not in p.parts)
