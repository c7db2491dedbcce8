"""The house rules that keep each rule in one home (``scripts/check_one_home.py`` holds the checks; run it
alone to see every problem at once)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_one_home", ROOT / "scripts" / "check_one_home.py")
check_one_home = importlib.util.module_from_spec(_spec)
sys.modules["check_one_home"] = check_one_home
_spec.loader.exec_module(check_one_home)


@pytest.mark.parametrize("title", list(check_one_home.CHECKS))
def test_the_rule_has_one_home(title):
    assert check_one_home.CHECKS[title]() == []


def test_the_checks_see_what_they_check():
    """Not a check that cannot fail: the graph holds the package's modules and their imports, the checks find
    the homes they name, and a made-up violation is found."""
    graph = check_one_home.import_graph()
    assert "pchronicle_datasets.formats.sharegpt.reader" in graph
    assert "pchronicle_datasets.markup_tags" in graph["pchronicle_datasets.formats.sharegpt.reader"]
    assert "pchronicle_datasets.loading.split" in graph["pchronicle_datasets.builder"]
    assert check_one_home.format_of("pchronicle_datasets.formats.chat.reader") == "pchronicle_datasets.formats.chat"
    assert check_one_home.format_of("pchronicle_datasets.formats.base") is None


def test_a_violation_is_found(tmp_path, monkeypatch):
    package = tmp_path / "pchronicle_datasets"
    (package / "formats" / "alpha").mkdir(parents=True)
    (package / "formats" / "beta").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "formats" / "__init__.py").write_text("from . import alpha, beta\n")
    (package / "formats" / "alpha" / "__init__.py").write_text(
        "from ..beta import x\nTAG = '<think>'\nname = getattr(object, 'SPLITTABLE', None)\n"
    )
    (package / "formats" / "beta" / "__init__.py").write_text("from .. import get_format\nx = 1\n")
    monkeypatch.setattr(check_one_home, "ROOT", tmp_path)
    layers = check_one_home.check_layers()
    assert any("never imports another format" in p for p in layers)
    assert any("never imports the registry" in p for p in layers)
    assert check_one_home.check_no_cycle()  # alpha → beta → formats → alpha
    assert check_one_home.check_tags() and check_one_home.check_getattr_on_formats()
