"""Counting a large session's tokens in another process while the app reads and shows it (issue 29.3).

The report's token counts (`calibrate.chain_counts`) are most of the time a large session takes to load in the app.
`count_in_background(path)` starts `python -m inspector.tokens.background PATH`, which reads the session and keeps its
counts in inspector's cache (`calibrate.kept_chain_counts`); the app joins it before its report, which then finds the
counts kept. A plain child process, not multiprocessing's: it never imports the caller's main script again, and
starts the same under a terminal, a test's headless app or a script.

What the child keeps is used only while the transcript is the one it read (the cache's key: the file, its size and
time, the chain counted): a session that grew meanwhile is counted again by the app.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


COUNT_OVER = 8 << 20  # a transcript larger than this is counted in another process when the app opens it

_early: dict[str, Counting] = {}  # started before the app (count_early), by the path as given


def count_early(path: str) -> None:
    """Start counting a large transcript before the app is even imported (`inspector FILE`: Python and Textual take a
    third of a second to import, and the counts, not the reading, are what the full report waits for). The app's
    session screen adopts the child (`adopt`); a small file, one whose counts are kept, or a path that is not a regular
    file starts nothing."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) <= COUNT_OVER:
            return
    except OSError:
        return
    from inspector.tokens.calibrate import counts_kept

    if path not in _early and not counts_kept(path):
        child = count_in_background(path)
        if child is not None:
            _early[path] = child


def adopt(path: str) -> Counting | None:
    """The child `count_early` started for this path, once (the next opening starts its own if it needs one)."""
    return _early.pop(path, None)


def count_in_background(path: str) -> Counting | None:
    """The child counting `path`, or None on a machine of one core (the two processes would only take turns) or when
    no process can be started."""
    if _cores() < 2:
        return None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "inspector.tokens.background", os.fspath(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,  # never onto the app's screen: one line, "counting", once the session is read
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
    except OSError:
        return None
    return Counting(proc)


class Counting:
    """A child counting a session; `wait` for it, `stop` it (the app quits, another session is opened)."""

    def __init__(self, proc: subprocess.Popen[Any]) -> None:
        self.proc = proc
        self._counting = False  # it said it has read the session and counts it
        import atexit

        atexit.register(self.stop)

    def wait(self, timeout: float) -> bool:
        """True when it finished (its counts are kept unless it failed); a child still counting is stopped."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            return False
        self._done()
        return True

    def running(self) -> bool:
        return self.proc.poll() is None

    def still_reading(self) -> bool:
        """Whether the child is still reading the session (it says "counting" when it has read it): then its counts are
        a while away, and the app has time for something else first. False once it counts, or when this cannot be
        told (no line to poll)."""
        if self._counting or not self.running():
            return False
        import select

        out = self.proc.stdout
        try:
            if out is None or not select.select([out], [], [], 0)[0]:
                return out is not None
            self._counting = out.readline().startswith(b"counting")
        except (OSError, ValueError):
            return False
        return not self._counting

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self._done()

    def _done(self) -> None:
        import atexit

        atexit.unregister(self.stop)  # a long session of the app opens many: none is kept past its end
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def main(argv: list[str]) -> int:
    from inspector.tokens.calibrate import LogicalChain, kept_chain_counts
    from inspector.transcript.session import Session

    if len(argv) != 1:
        print("usage: python -m inspector.tokens.background TRANSCRIPT", file=sys.stderr)
        return 2
    import gc

    gc.disable()  # a process that reads, counts and ends: its objects form no cycle worth a collection (0.2-0.4 s of them)
    from inspector.tokens import estimate

    estimate.PARALLEL = False  # the app reads and draws the session on the other core meanwhile
    s = Session.load(argv[0])
    try:
        print("counting", flush=True)  # to the app (Counting.still_reading)
    except (OSError, ValueError):
        pass  # nobody reads it
    kept_chain_counts(s, LogicalChain.of(s))  # the chain counted does not depend on the settings
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
