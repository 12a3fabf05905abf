"""SIGINT, SIGTERM and SIGHUP while `foresight cc` runs: passed on, waited for, cleaned up.

`timeout`, make's Ctrl-C and a closed terminal signal the driver; the underlying
compiler must stop too (else it writes its output after the driver is gone), and the
driver must remove its temporary directory and any output the interrupted command
left half-written.  While a child runs, a signal is forwarded to it and recorded; the
driver waits for the child, cleans up, and raises Interrupted once outside every
`deferred()` section, so no cleanup is cut short.  The command then exits 128 + signal.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Iterator

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A forwarded signal ended the command (BaseException: no `except Exception` eats it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.received: int | None = None
        self.raised = False
        self.depth = 0
        self.children: list[subprocess.Popen] = []


_state = _State()


def pending() -> bool:
    """A signal came (the command is being interrupted)."""
    return _state.received is not None


def _raise_pending() -> None:
    if _state.depth == 0 and _state.received is not None and not _state.raised:
        _state.raised = True
        raise Interrupted(_state.received)


def _on_signal(signum: int, frame: object) -> None:
    if _state.received is None:
        _state.received = signum
    for child in list(_state.children):
        with contextlib.suppress(OSError):
            child.send_signal(signum)
    _raise_pending()


@contextlib.contextmanager
def forwarding() -> Iterator[_State]:
    """Handlers for the forwarded signals (those not ignored at start, as gcc does);
    yields the state, whose `received` is the first signal that came, if any."""
    global _state
    state = _state = _State()
    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in FORWARDED:
            handler = signal.getsignal(sig)
            if handler != signal.SIG_IGN:
                old[sig] = handler
                signal.signal(sig, _on_signal)
    try:
        yield state
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        _state = _State()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A section a signal must not cut short: it is recorded and raised at the end."""
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
    _raise_pending()


@contextlib.contextmanager
def child(process: subprocess.Popen) -> Iterator[None]:
    """While `process` runs (inside deferred()), signals are forwarded to it."""
    _state.children.append(process)
    try:
        if _state.received is not None:  # arrived while it was being started
            with contextlib.suppress(OSError):
                process.send_signal(_state.received)
        yield
    finally:
        _state.children.remove(process)
