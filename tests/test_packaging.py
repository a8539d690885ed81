"""The package metadata PyPI shows: valid classifiers, the README as the description, its images."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import trove_classifiers

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_classifiers_are_known_to_pypi() -> None:
    classifiers = PROJECT["classifiers"]
    assert [c for c in classifiers if c not in trove_classifiers.classifiers] == []
    assert classifiers == sorted(classifiers)
    # a license expression (PEP 639) and a License classifier together are refused by PyPI
    assert "license" in PROJECT and not [c for c in classifiers if c.startswith("License ::")]
    tested = f"Programming Language :: Python :: {PROJECT['requires-python'].removeprefix('>=')}"
    assert tested in classifiers


def test_readme_images_exist_where_they_point() -> None:
    readme = (ROOT / PROJECT["readme"]).read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert images
    for target in images:
        assert target.startswith("https://") or (ROOT / target).is_file(), target


def test_readme_links_exist_where_they_point() -> None:
    """The README's relative links (the documentation pages) name files of the repository (anchors included)."""
    readme = (ROOT / PROJECT["readme"]).read_text()
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert links
    for target in links:
        if target.startswith(("https://", "http://")):
            continue
        path, _, anchor = target.partition("#")
        assert (ROOT / path).is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, target


def test_readme_is_short_and_points_to_the_docs() -> None:
    """The README says what streamkit is and points to the site; the details live on the pages."""
    readme = (ROOT / PROJECT["readme"]).read_text()
    assert len(readme.splitlines()) <= 200
    for page in ("docs/quickstart.md", "docs/protocols/aisdk.md", "docs/protocols/agui.md", "docs/production.md"):
        assert f"]({page}" in readme, page
