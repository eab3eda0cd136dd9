"""``--svg FILE`` / ``--html FILE`` on ``shoot`` and ``fight`` (issue 10, item 8): the table view
saved as a self-contained picture, whatever ``--format`` is; a file that cannot be written is one
line and exit 1, found before the work.

The numbers looked for in a picture come from the JSON document of the same request and seed,
never from the picture writer.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from mathhammer.cli import app

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
SVG_NS = "{http://www.w3.org/2000/svg}"
SHOOT = ["shoot", "railgun", "-t", "knight", "--trials", "4000", "--seed", "21"]
FIGHT = ["fight", "A4 WS3+ S6 AP-1 D2 [LANCE]", "-t", "T6 SV3+ W3 MODELS5", "--charged", "--exact"]
#: A reference to anything outside the file: a URL in an attribute or in CSS, an import.
_EXTERNAL = re.compile(r"url\(\s*['\"]?(?!#)|@import|^(https?:|//)", re.IGNORECASE)


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=ENV)


def _mean(args: list[str]) -> str:
    """The damage mean as the table prints it, from the JSON of the same request."""
    r = run(*args, "-f", "json")
    assert r.exit_code == 0, r.output
    return f"{json.loads(r.stdout)['damage']['mean']:.3f}"


def _svg_text(path: Path) -> str:
    """The SVG's text as a viewer shows it (rich writes spaces as no-break spaces), after
    checking that it is well-formed SVG referring to nothing outside itself."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    for element in root.iter():
        for name, value in element.attrib.items():
            assert not _EXTERNAL.search(value), (name, value)
        if element.tag in (f"{SVG_NS}style", f"{SVG_NS}script"):
            assert element.tag != f"{SVG_NS}script" and not _EXTERNAL.search(element.text or "")
        assert element.tag not in (f"{SVG_NS}image", f"{SVG_NS}use") or not element.get("href")
    return "".join(root.itertext()).replace("\xa0", " ")


class _Page(HTMLParser):
    """An HTML page's text and its references to other files."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.external: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._style = tag == "style"
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.external.append(tag)
        for name, value in attrs:
            if name in ("src", "href") or (value and _EXTERNAL.search(value)):
                self.external.append(f"{name}={value}")

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if self._style and _EXTERNAL.search(data):
            self.external.append(data)
        self.text.append(data)


def _html_text(path: Path) -> str:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    assert not page.external
    return "".join(page.text)


@pytest.mark.parametrize("args", [SHOOT, FIGHT], ids=["shoot", "fight"])
def test_the_table_saved_as_svg_and_html(args: list[str], tmp_path: Path) -> None:
    svg, html = tmp_path / "view.svg", tmp_path / "view.html"
    r = run(*args, "--svg", str(svg), "--html", str(html))
    assert r.exit_code == 0, r.output
    mean = _mean(args)
    assert mean in r.stdout
    for text in (_svg_text(svg), _html_text(html)):
        assert mean in text and "P(destroy unit)" in text
        assert "Damage (wounds lost)" in text
    # what the terminal shows: every line of the table is in the page
    page = _html_text(html)
    for line in r.stdout.splitlines():
        assert line.rstrip() in page


@pytest.mark.parametrize("fmt", ["json", "ndjson", "csv"])
def test_a_machine_format_still_saves_the_table_picture(fmt: str, tmp_path: Path) -> None:
    svg = tmp_path / "view.svg"
    r = run(*SHOOT, "-f", fmt, "--svg", str(svg))
    assert r.exit_code == 0, r.output
    assert "<svg" not in r.stdout and "P(destroy unit)" not in r.stdout  # stdout is the data alone
    mean = _mean(SHOOT)
    assert mean in _svg_text(svg)
    if fmt != "csv":
        assert f"{json.loads(r.stdout.splitlines()[0] if fmt == 'ndjson' else r.stdout)['damage']['mean']:.3f}" == mean


def test_the_svg_needs_no_web_font(tmp_path: Path) -> None:
    svg = tmp_path / "view.svg"
    assert run(*SHOOT, "--svg", str(svg)).exit_code == 0
    text = svg.read_text(encoding="utf-8")
    assert "@font-face" not in text and "cdnjs" not in text
    assert "monospace" in text


def _one_line_error(r: Result, option: str) -> str:
    assert r.exit_code == 1, r.output
    assert r.stdout == ""  # found before the work: nothing was computed or printed
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {option}: cannot write the file"), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


@pytest.mark.parametrize("option", ["--svg", "--html"])
def test_a_missing_folder_is_one_line_and_exit_1(option: str, tmp_path: Path) -> None:
    path = tmp_path / "no such folder" / "view.svg"
    line = _one_line_error(run(*SHOOT, option, str(path)), option)
    assert str(path) in line and "no folder" in line
    assert not path.parent.exists()


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_a_folder_given_as_the_file_is_a_usage_error(fmt: str, tmp_path: Path) -> None:
    r = run(*FIGHT, "-f", fmt, "--html", str(tmp_path))
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert "Invalid value for '--html'" in r.stderr.splitlines()[0] and "is a directory" in r.stderr


@pytest.mark.parametrize("option", ["--svg", "--html"])
def test_an_empty_file_name_is_named_as_typed(option: str) -> None:
    """Path('') is the current folder: the error named '.', not the empty name given."""
    r = run(*SHOOT, option, "")
    assert r.exit_code == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"Error: {option}: empty file name (got '')",
                                     f"  hint: give a file to write, e.g. out.{option[2:]}"]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root may write anywhere")
def test_a_read_only_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        line = _one_line_error(run(*SHOOT, "--svg", str(folder / "view.svg")), "--svg")
        assert "not writable" in line
    finally:
        folder.chmod(0o700)


def test_a_write_that_fails_after_the_work_is_one_line_and_exit_1() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    r = run(*SHOOT, "--svg", "/dev/full")  # passes the checks, fails when written
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines() == ["Error: --svg: cannot write the file: No space left on device "
                                             "(got '/dev/full')"]


def test_one_file_for_both_pictures_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "view"
    r = run(*SHOOT, "--svg", str(path), "--html", str(path))
    assert r.exit_code == 1 and "--svg and --html name the same file" in r.stderr and not path.exists()
