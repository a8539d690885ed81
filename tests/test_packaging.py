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
