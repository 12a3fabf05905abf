"""Set a disk's read_ahead_kb for one run, and always put it back.

A journal under /run/foresight/readahead records each device's original value
and the harness processes holding it.  A guardian process, started in its own
session, waits on a pipe from the harness: when the harness ends for any
reason (normal exit, exception, SIGKILL) the pipe closes and the guardian
restores the original value once no other live run holds the device.  Journals
left by a guardian that died too are recovered at the start of the next run.
Concurrent runs may share a device only when they want the same value.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

from foresight.errors import HarnessError
from foresight.harness.process import alive


def state_dir() -> Path:
    return Path(os.environ.get("FORESIGHT_STATE_DIR", "/run/foresight")) / "readahead"


def sys_block() -> Path:
    return Path(os.environ.get("FORESIGHT_SYS_BLOCK", "/sys/block"))


def _knob(device: str) -> Path:
    return sys_block() / device / "queue" / "read_ahead_kb"


@contextlib.contextmanager
def _locked():
    d = state_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        lock = open(d / ".lock", "w")
    except OSError as e:
        raise HarnessError(f"cannot keep the readahead journal in {d}: {e.strerror} "
                           "(setting readahead needs root)") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield d
        except OSError as e:  # the journal itself: a full or read-only /run
            raise HarnessError(f"cannot update the readahead journal in {d}: "
                               f"{e.strerror}") from None


def _load(path: Path) -> dict | None:
    """The journal at PATH, or None when there is none or it is not one of ours."""
    try:
        journal = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    shape = {"device": str, "original": int, "value": int, "holders": list}
    if not isinstance(journal, dict) or not all(
            isinstance(journal.get(k), t) for k, t in shape.items()) or not all(
            isinstance(h, int) for h in journal["holders"]):
        return None
    return journal


def _store(path: Path, journal: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(journal))
    os.replace(tmp, path)


def _write_knob(device: str, kb: int) -> None:
    try:
        _knob(device).write_text(str(kb))
    except OSError as e:
        hint = " (setting readahead needs root)" if e.errno in (errno.EACCES, errno.EPERM) \
            else ""
        raise HarnessError(f"cannot set {_knob(device)} to {kb}: {e.strerror}{hint}") from None


def _settle(d: Path, journal_path: Path, journal: dict) -> bool:
    """Drop dead holders; restore the original and delete the journal when none is left.
    True when this restored the device.  A journal whose device could not be restored is
    kept for the next run, unless the device is gone."""
    journal["holders"] = [p for p in journal["holders"] if alive(p)]
    if journal["holders"]:
        _store(journal_path, journal)
        return False
    try:
        _write_knob(journal["device"], journal["original"])
    except HarnessError:
        if _knob(journal["device"]).exists():
            _store(journal_path, journal)  # no holders: only the restoring is left to do
            return False
    journal_path.unlink(missing_ok=True)
    return True


def recover() -> list[str]:
    """Restore devices whose holders all died without restoring them; returns one line per
    device restored.  Done at the start of every `foresight run` and `foresight bench`, so a
    killed run's setting does not outlive it, whatever the next run asks for.  Without the
    rights to (not root), nothing is done."""
    if not state_dir().exists():
        return []
    restored = []
    try:
        with _locked() as d:
            for path in d.glob("*.json"):
                journal = _load(path)  # None: not a journal (ours are replaced whole)
                if journal is not None and _settle(d, path, journal):
                    restored.append(f"read_ahead_kb of {journal['device']} restored to "
                                    f"{journal['original']} (left at {journal['value']} by a "
                                    f"run that was killed)")
    except HarnessError:
        return []
    return restored


def acquire(device: str, kb: int, holder: int) -> int:
    """Set DEVICE's read_ahead_kb to KB on behalf of HOLDER; returns the original value."""
    with _locked() as d:
        path = d / f"{device}.json"
        journal = _load(path)
        if journal is None and path.exists():
            raise HarnessError(f"{path} is not a readahead journal; left alone (remove it to "
                               f"set readahead on {device})")
        if journal is not None:
            _settle(d, path, journal)
            journal = _load(path)
            if journal is not None and not journal["holders"]:
                raise HarnessError(f"cannot restore {_knob(device)} to {journal['original']} "
                                   f"after a killed run; its journal {path} is kept")
        if journal is None:
            try:
                original = int(_knob(device).read_text())
            except (OSError, ValueError):
                raise HarnessError(f"cannot read {_knob(device)}") from None
            journal = {"device": device, "original": original, "value": kb, "holders": []}
        elif journal["value"] != kb:
            raise HarnessError(
                f"{device}: read_ahead_kb is held at {journal['value']} by running "
                f"measurement(s) {journal['holders']}; cannot set {kb} concurrently")
        _write_knob(device, kb)
        journal["holders"].append(holder)
        _store(path, journal)
        return journal["original"]


def release(device: str, holder: int) -> None:
    with _locked() as d:
        path = d / f"{device}.json"
        journal = _load(path)
        if journal is None:
            return
        journal["holders"] = [p for p in journal["holders"] if p != holder]
        _settle(d, path, journal)


class Setting:
    """Context manager: DEVICES run with read_ahead_kb=KB, restored by a guardian."""

    def __init__(self, devices: list[str], kb: int):
        if kb < 0:
            raise HarnessError(f"--readahead-kb must be >= 0, not {kb}")
        self.devices = sorted(set(devices))
        self.kb = kb
        self.original: dict[str, int] = {}
        self.guardian: subprocess.Popen | None = None

    def __enter__(self) -> Setting:
        recover()
        me = os.getpid()
        # The guardian first: a harness killed between changing a device and starting
        # it would leave the device changed (releasing what was never acquired is a
        # no-op).
        self.guardian = subprocess.Popen(
            [sys.executable, "-m", "foresight.harness.readahead", str(me), *self.devices],
            stdin=subprocess.PIPE, start_new_session=True)
        try:
            for dev in self.devices:
                self.original[dev] = acquire(dev, self.kb, me)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        assert self.guardian is not None and self.guardian.stdin is not None
        self.guardian.stdin.close()  # the guardian restores and exits
        self.guardian.wait()


def _guard(argv: list[str]) -> None:
    """Guardian: block until the harness's pipe closes, then release its devices."""
    holder, devices = int(argv[0]), argv[1:]
    while sys.stdin.buffer.read(4096):
        pass
    for dev in devices:
        release(dev, holder)
    # The holder may still be alive (normal exit path): release() above removed it
    # by pid explicitly, so restoration does not depend on it being dead.


if __name__ == "__main__":
    _guard(sys.argv[1:])
