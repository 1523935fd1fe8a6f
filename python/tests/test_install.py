"""`pip install ./python` (maturin, bindings = "bin"): the wheel puts the `tilelab` binary beside
the environment's Python and the package finds it there, with no TILELAB_BIN and no repository
build. Run by .ci/run in a virtual environment it installed the package into (then
TILELAB_REQUIRE names "wheel" and a skip fails); skipped where the package is not installed.
"""
import importlib.metadata
import os
import subprocess
import sys
import sysconfig

import pytest

REQUIRED = "wheel" in os.environ.get("TILELAB_REQUIRE", "").split(",")

try:
    VERSION = importlib.metadata.version("tilelab")
except importlib.metadata.PackageNotFoundError:
    VERSION = None

if VERSION is None:
    if REQUIRED:
        raise RuntimeError("TILELAB_REQUIRE names wheel but the tilelab package is not installed: pip install ./python")
    pytest.skip("SKIPPED: the tilelab package is not installed (pip install ./python)", allow_module_level=True)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def installed_env():
    """The environment without TILELAB_BIN, run from outside the repository."""
    env = {k: v for k, v in os.environ.items() if k != "TILELAB_BIN"}
    return env


def test_the_wheel_installs_the_binary_beside_python():
    exe = os.path.join(sysconfig.get_path("scripts"), "tilelab")
    assert os.path.isfile(exe) and os.access(exe, os.X_OK), exe
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    # The binary's version is the crate's (Cargo.toml), which maturin gives the package too.
    assert out.startswith(f"tilelab {VERSION} (commit "), out


def test_the_installed_package_finds_its_binary_without_the_repository(tmp_path):
    # From a folder outside the repository, with the installed package only (not python/ on
    # sys.path): binary() is the wheel's executable, and a built-in example runs through it.
    code = (
        "import tilelab, sys; b = tilelab.binary(); print(b); "
        "import tilelab._binary as B; print(B.run(['sim', 'bank-conflicts', '--json']).strip()[:1])"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=installed_env())
    assert p.returncode == 0, p.stderr
    b, first = p.stdout.split()
    assert b == os.path.join(sysconfig.get_path("scripts"), "tilelab"), b
    # Not a cargo build of the repository (the environment itself may sit inside it, as CI's
    # target/ci-venv does).
    for build in ("debug", "release"):
        assert not b.startswith(os.path.join(REPO, "target", build) + os.sep), b
    assert first == "{", p.stdout


def test_the_installed_package_is_not_the_source_folder(tmp_path):
    p = subprocess.run([sys.executable, "-c", "import tilelab; print(tilelab.__file__)"], capture_output=True,
                       text=True, cwd=tmp_path, env=installed_env(), check=True)
    assert p.stdout.strip().startswith(sysconfig.get_path("purelib")), p.stdout
