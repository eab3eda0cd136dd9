"""The documentation stands alone (issue 7): it never points outside the repository, every
relative link resolves to a file in it, and docs/rules.md states every rule and ruling that the
code and the tests cite by id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = ROOT / "docs" / "rules.md"
FORBIDDEN = ("../shared", "RULES.md", "/work/")

# [text](target "title") and ![alt](target); [id]: target (reference definitions).
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _doc_files() -> list[Path]:
    """Every file under docs/, and the README."""
    return sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file()) + [ROOT / "README.md"]


def _markdown_files() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _relative_links(text: str) -> list[str]:
    """Link targets that name a file (no URL scheme, not a bare #anchor); code is not markdown,
    so fenced blocks and code spans are dropped first."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    targets = _INLINE_LINK.findall(text) + _REFERENCE_LINK.findall(text)
    return [t for t in targets if not _SCHEME.match(t) and not t.startswith("#")]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", _doc_files(), ids=_rel)
def test_docs_never_point_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    found = [s for s in FORBIDDEN if s in text]
    assert not found, f"{_rel(path)} mentions {found}"


@pytest.mark.parametrize("path", _markdown_files(), ids=_rel)
def test_relative_links_point_to_files_in_the_repository(path: Path) -> None:
    for target in _relative_links(path.read_text(encoding="utf-8")):
        resolved = (path.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{_rel(path)}: {target} leaves the repository"
        assert resolved.exists(), f"{_rel(path)}: {target} does not exist"


def test_link_parser_sees_links_and_skips_code() -> None:
    text = ("See [a](docs/a.md#x), ![b](img.png \"t\") and [web](https://x.org), [top](#top).\n"
            "`[no](code.md)`\n```\n[no](fenced.md)\n```\n[ref]: ../seeds/s.txt\n")
    assert _relative_links(text) == ["docs/a.md#x", "img.png", "../seeds/s.txt"]


def _stated_rules(text: str) -> set[str]:
    """Rule ids stated as an entry: ``- **R-x.y Title.** text``."""
    return set(re.findall(r"^- \*\*(R-\d+\.\d+) ", text, re.MULTILINE))


def _not_modelled(text: str) -> set[str]:
    """Rule ids listed as not modelled: ``- R-x.y ...`` or ``- R-x ...``."""
    return set(re.findall(r"^- (R-\d+(?:\.\d+)?) ", text, re.MULTILINE))


def test_rules_doc_states_every_rule_the_code_cites() -> None:
    # The ids in --explain lines and docstrings must be explained to the player.
    cited = set()
    for source in (ROOT / "mathhammer").rglob("*.py"):
        cited |= set(re.findall(r"R-\d+\.\d+", source.read_text(encoding="utf-8")))
    missing = cited - _stated_rules(RULES_DOC.read_text(encoding="utf-8"))
    assert not missing, f"docs/rules.md does not state {sorted(missing)}"


def test_rules_doc_names_every_rule_a_test_is_named_after() -> None:
    named = set()
    for source in (ROOT / "tests").glob("test_*.py"):
        for major, minor in re.findall(r"def test_R_(\d+)_(\d+)", source.read_text(encoding="utf-8")):
            named.add(f"R-{major}.{minor}")
    text = RULES_DOC.read_text(encoding="utf-8")
    missing = named - _stated_rules(text) - _not_modelled(text)
    assert not missing, f"docs/rules.md neither states nor lists {sorted(missing)}"


def test_rules_doc_states_each_ruling_once() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    specification = re.findall(r"^- \*\*(A\d+)\*\* \S", text, re.MULTILINE)
    ours = re.findall(r"^\| (M\d+) \| [^|]*\S[^|]* \| [^|]*\S[^|]* \|$", text, re.MULTILINE)
    assert specification == [f"A{i}" for i in range(1, 20)]
    assert ours[:23] == [f"M{i}" for i in range(1, 24)]
    assert len(ours) == len(set(ours))


def test_rules_doc_states_the_seven_plus_save() -> None:
    # Issue 7: Sv7+ is an ordinary armour save that passes on 6+ with a net +1 (R-7.2, M23).
    text = RULES_DOC.read_text(encoding="utf-8")
    r72 = re.search(r"^- \*\*R-7\.2 .*?(?=^- \*\*)", text, re.MULTILINE | re.DOTALL)
    assert r72 is not None and "Sv7+" in r72.group(0) and "6+" in r72.group(0)
    assert re.search(r"^\| M23 \| `SV -` / `SV N/A`.*Sv7\+", text, re.MULTILINE)
    assert "## Rulings added by issue 7" in text
