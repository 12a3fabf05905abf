"""Writing result files: complete or not at all."""

from __future__ import annotations

import json
import os

from foresight.errors import UsageError


def write_json(path: str, data: dict) -> None:
    """Write DATA as JSON to PATH atomically (temporary file, then rename)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
