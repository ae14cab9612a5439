"""The documentation site: `make docs` builds it with MkDocs in strict mode, so a broken link, a
missing anchor or a page left out of the navigation fails the build (and so this test). The
pages stay short, say nothing of the project's history, and the README's links lead somewhere."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LARGEST = 25 * 1024          # a page for one reader and one job


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the tree at `root` into `site` (what `make docs` runs). Never
    `--quiet`: it hides the warnings from the count strict mode fails on, and the build passes."""
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(root / "mkdocs.yml"), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_site_builds_in_strict_mode(tmp_path):
    done = build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    for page in DOCS.rglob("*.md"):                 # every page is on the site
        html = tmp_path / "site" / page.relative_to(DOCS).with_suffix(".html")
        assert html.is_file(), f"{page.relative_to(ROOT)} was not built"


def copy_of_the_docs(tmp_path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(DOCS, root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def test_a_broken_link_fails_the_build(tmp_path):
    root = copy_of_the_docs(tmp_path)
    page = root / "docs" / "operators" / "index.md"
    page.write_text(page.read_text() + "\nSee [the old page](../daemon.md).\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0 and "daemon.md" in done.stderr


def test_a_page_missing_from_the_navigation_fails_the_build(tmp_path):
    root = copy_of_the_docs(tmp_path)
    (root / "docs" / "operators" / "orphan.md").write_text("# A page no menu leads to\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0 and "orphan.md" in done.stderr


def test_every_page_is_short():
    big = {str(p.relative_to(ROOT)): p.stat().st_size for p in DOCS.rglob("*.md") if p.stat().st_size > LARGEST}
    assert not big, f"pages over {LARGEST} bytes: split them by job: {big}"


def test_the_docs_tell_no_history():
    """The docs describe the system as it is: no rounds, issues or commits of its making."""
    history = re.compile(r"round [0-9]+|issue [0-9]+|commit [0-9a-f]{7}", re.I)
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in [*DOCS.rglob("*.md"), ROOT / "README.md"]
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if history.search(line)]
    assert not found, "\n".join(found)


def test_the_readme_links_lead_to_files():
    """README.md is read on its own (a forge's front page), outside the site: its relative links
    must name files of the repository, and its docs/ links pages of the site."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert links
    missing = [link for link in links if not re.match(r"[a-z]+://", link) and not (ROOT / link).exists()]
    assert not missing, missing


@pytest.mark.parametrize("section", ["## Nothing lost, nothing invented", "## Commands", "## A five-minute tour"])
def test_the_readme_has_each_section_once(section):
    assert (ROOT / "README.md").read_text(encoding="utf-8").count(section + "\n") == 1


def test_the_readme_lists_every_command():
    """Every `cylindre` command and every make target of `make help` has its row in the README's table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Commands"):text.index("## Where to read more")]
    helptext = subprocess.run([sys.executable, "-m", "host_tools.cli", "--help"], capture_output=True, text=True,
                              cwd=ROOT).stdout
    commands = re.findall(r"^    ([a-z][a-z-]+)\s", helptext, re.M)
    assert "floor-creds" in commands and "daemon" in commands
    rows = "\n".join(line for line in table.splitlines() if line.startswith("|"))
    named = set(re.findall(r"`cylindre ([a-z][a-z-]+)", rows)) | set(re.findall(r"`([a-z][a-z-]+)`", rows))
    assert not set(commands) - named, f"cylindre commands missing from the README's table: {set(commands) - named}"
    targets = re.findall(r'@echo "make ([a-z0-9-]+)', (ROOT / "Makefile").read_text())
    assert "docs" in targets
    listed = set(re.findall(r"`make ([a-z0-9-]+)", rows))
    assert not set(targets) - listed, f"make targets missing from the README's table: {set(targets) - listed}"
