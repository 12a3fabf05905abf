"""`foresight swap`: enable and disable a (small) swap file; status without root."""

from foresight.cli import main
from foresight.harness.environment import swap_summary


def test_enable_then_disable(root, disk_tmp, capsys):
    path = disk_tmp / "swapfile"
    assert main(["swap", "enable", "--size", "64M", "--path", str(path)]) == 0
    assert any(a["path"] == str(path) for a in swap_summary()["areas"])
    assert main(["swap", "status"]) == 0
    assert str(path) in capsys.readouterr().out
    assert main(["swap", "disable", "--path", str(path)]) == 0
    assert not any(a["path"] == str(path) for a in swap_summary()["areas"])
    assert not path.exists()


def test_bad_size_is_a_clear_error(capsys):
    assert main(["swap", "enable", "--size", "huge", "--path", "/nonexistent/x"]) == 2
    assert "not a size" in capsys.readouterr().err
