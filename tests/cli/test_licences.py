"""The project's licence is Apache-2.0 (LICENSE, pyproject.toml), and docs/licences.md lists a
licence, read from the installed metadata, for every dependency pyproject.toml names."""

from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

from host_tools.docs import licences

ROOT = Path(__file__).resolve().parents[2]


def test_the_project_is_apache_2():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "Apache" in (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ")[-1]


def test_the_licence_is_the_one_the_metadata_declares():
    runtime, dev = licences.project_requirements()
    found = {canonicalize_name(n): (v, lic, why) for n, v, lic, why in licences.rows(runtime, dev)}
    for req in runtime + dev:
        if licences._applies(req):
            assert canonicalize_name(req.name) in found, req.name
    v, lic, why = found["fastapi"]
    assert v == metadata.version("fastapi") and why == "runtime"
    assert lic == (metadata.metadata("fastapi").get("License-Expression") or lic)
    assert found["starlette"][2].startswith("runtime (via")            # what a dependency brings is listed
    assert found["pytest"][2] == "dev"


def test_a_package_not_installed_is_said_so():
    from packaging.requirements import Requirement
    [(name, version, lic, why)] = licences.rows([Requirement("no-such-package-cylindre")], [])
    assert version == "not installed" and "not installed" in lic


def test_the_page_lists_every_dependency_of_pyproject(tmp_path):
    doc = (ROOT / "docs" / "licences.md").read_text(encoding="utf-8")
    table = doc.split(licences.BEGIN)[1].split(licences.END)[0]
    listed = {canonicalize_name(line.split("|")[1].strip()) for line in table.splitlines()[2:] if line.startswith("|")}
    runtime, dev = licences.project_requirements()
    missing = [r.name for r in runtime + dev if licences._applies(r) and canonicalize_name(r.name) not in listed]
    assert not missing, f"run python -m host_tools.docs.licences --write: {missing}"
    page = tmp_path / "l.md"
    page.write_text(f"a\n{licences.BEGIN}\nold\n{licences.END}\nz\n")
    assert licences.rewrite(page, "| t |\n") == f"a\n{licences.BEGIN}\n| t |\n{licences.END}\nz\n"
