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


def count_in_background(path: str) -> Counting | None:
    """The child counting `path`, or None on a machine of one core (the two processes would only take turns) or when
    no process can be started."""
    if _cores() < 2:
        return None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "inspector.tokens.background", os.fspath(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never onto the app's screen
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


def main(argv: list[str]) -> int:
    from inspector.tokens.calibrate import kept_chain_counts
    from inspector.tokens.series import context_series, session_thresholds
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.session import Session

    if len(argv) != 1:
        print("usage: python -m inspector.tokens.background TRANSCRIPT", file=sys.stderr)
        return 2
    import gc

    gc.disable()  # a process that reads, counts and ends: its objects form no cycle worth a collection (0.2-0.4 s of them)
    settings = Settings()  # the chain counted does not depend on the settings
    s = Session.load(argv[0])
    kept_chain_counts(s, context_series(s, settings, session_thresholds(s, settings)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
