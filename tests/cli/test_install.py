"""A fresh venv, `pip install .` without extras: `cylindre` works (the issue's first finding), and
the command table's one-line helps are the modules' own."""

import importlib
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_table_says_what_each_module_says():
    from host_tools.cli import COMMANDS
    for name, (module, summary) in COMMANDS.items():
        assert importlib.import_module(module).HELP == summary, name


def test_daemon_help_imports_no_simulator():
    code = ("import sys; from host_tools.cli import main\n"
            "try:\n    main(['daemon', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'host_tools.sim', 'matplotlib', 'fastapi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_a_fresh_install_without_extras_runs(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py, cyl = env_dir / "bin" / "python", env_dir / "bin" / "cylindre"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)],
                   check=True, cwd=tmp_path, timeout=900)
    v = subprocess.run([str(cyl), "--version"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("cylindre ")
    h = subprocess.run([str(cyl), "daemon", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert h.returncode == 0 and "--config" in h.stdout
    s = subprocess.run([str(cyl), "settle", str(ROOT / "examples" / "session.json")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert s.returncode == 0, s.stderr
    t = subprocess.run([str(cyl), "token", "--journal", str(tmp_path / "j.sqlite"), "add", "pit", "--role", "display", "--create"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert t.returncode == 0 and t.stdout.startswith("cyl_")
    st = subprocess.run([str(cyl), "stats", "--journal", str(tmp_path / "j.sqlite"), "--out", str(tmp_path / "stats"),
                         "--casino", "Casino d'essai", "--table", "Table 1"],
                        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert st.returncode == 0, st.stderr                    # the plots and the PDF: matplotlib is installed
    assert (tmp_path / "stats" / "report.pdf").stat().st_size > 1000
    imp = subprocess.run([str(py), "-c", "import host_tools.table.api.app, host_tools.sim.wheel"], cwd=tmp_path, timeout=60)
    assert imp.returncode == 0
