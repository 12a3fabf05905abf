"""The cgroup v2 path, exercised against a fake cgroup tree (this machine has v1 only)."""

import subprocess
import time
from pathlib import Path

from foresight.harness import cgroup


def fake_tree(tmp_path: Path, controllers: str):
    root = tmp_path / "unified"
    own = root / "user.slice" / "me"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text(controllers + "\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        f"30 23 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        f"35 31 0:32 / {tmp_path / 'v1mem'} rw - cgroup cgroup rw,memory\n")
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text("4:memory:/v1path\n0::/user.slice/me\n")
    return root, own, mountinfo, proc_cgroup


def test_v2_is_preferred_when_it_has_the_memory_controller(tmp_path):
    root, own, mountinfo, proc_cgroup = fake_tree(tmp_path, "cpu io memory pids")
    m = cgroup.find_memory_hierarchy(mountinfo, proc_cgroup)
    assert (m.version, m.root, m.own) == (2, root, "/user.slice/me")

    cg = cgroup.Cgroup(m, 256 << 20)
    assert cg.path.parent == own
    assert (cg.path / "memory.max").read_text() == str(256 << 20)
    (cg.path / "memory.peak").write_text("12345\n")
    (cg.path / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    assert cg.peak() == 12345 and cg.oom_kills() == 1
    for f in cg.path.iterdir():  # a real cgroupfs removes these with the directory
        f.unlink()
    cg.remove()
    assert not cg.path.exists()


def test_v1_is_used_when_v2_lacks_memory(tmp_path):
    _, _, mountinfo, proc_cgroup = fake_tree(tmp_path, "cpu io pids")
    m = cgroup.find_memory_hierarchy(mountinfo, proc_cgroup)
    assert (m.version, m.root, m.own) == (1, tmp_path / "v1mem", "/v1path")


def test_nothing_found_without_memory_anywhere(tmp_path):
    _, _, mountinfo, proc_cgroup = fake_tree(tmp_path, "cpu")
    mountinfo.write_text(mountinfo.read_text().splitlines()[0] + "\n")
    assert cgroup.find_memory_hierarchy(mountinfo, proc_cgroup) is None


def test_systemd_scope_prefix_caps_memory():
    prefix = cgroup.systemd_scope_prefix(1 << 30)
    assert prefix[:3] == ["systemd-run", "--user", "--scope"]
    assert f"MemoryMax={1 << 30}" in prefix


def test_leftover_processes_are_killed_and_named(tmp_path):
    root, own, mountinfo, proc_cgroup = fake_tree(tmp_path, "memory")
    cg = cgroup.Cgroup(cgroup.find_memory_hierarchy(mountinfo, proc_cgroup), 64 << 20)
    left = subprocess.Popen(["sleep", "30"])
    comm = Path(f"/proc/{left.pid}/comm")
    while comm.read_text().strip() != "sleep":   # exec may still be under way
        time.sleep(0.01)
    try:
        # What the kernel lists once the measured program exited and its child stayed.
        (cg.path / "cgroup.procs").write_text(f"{left.pid}\n")
        found = cg.kill_leftovers(grace=0.3)
        assert found == [{"pid": left.pid, "command": "sleep"}]
        assert left.wait(timeout=5) == -9
    finally:
        left.kill()
    for f in cg.path.iterdir():
        f.unlink()
    assert cg.close() == ([], None) and not cg.path.exists()
