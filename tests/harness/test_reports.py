"""Result files: written whole through a temporary file, except where the output is no
regular file (/dev/null, a pipe), which is written in place and stays what it was."""

from __future__ import annotations

import json
import os
import stat
import threading

from foresight.reports import write_json


def test_a_regular_file_is_replaced_whole(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    write_json(str(out), {"a": 1})
    assert json.loads(out.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["r.json"]


def test_a_pipe_is_written_in_place_and_stays_a_pipe(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_json(str(fifo), {"a": 2})
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(got[0]) == {"a": 2}
