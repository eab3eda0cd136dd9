"""Bad BSData input: unsafe XML, corrupt zips, files that are not BattleScribe data, a missing game
system. Each is one ProfileError naming the file; through the CLI, one stderr line and exit 1."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mathhammer.bsdata.build import import_files
from mathhammer.bsdata.xmlsafe import parse_xml, read_bsdata_file
from mathhammer.cli.importer import import_
from mathhammer.errors import ProfileError
from mathhammer.profiles import load_file

GST = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
       b'<gameSystem xmlns="http://www.battlescribe.net/schema/gameSystemSchema" id="sys-1" name="Test System"'
       b' revision="1"><costTypes><costType id="pts-id" name="pts"/></costTypes></gameSystem>\n')
CAT = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
       b'<catalogue xmlns="http://www.battlescribe.net/schema/catalogueSchema" id="cat-1" name="Xenos - Testers"'
       b' revision="3" library="false" gameSystemId="sys-1"><selectionEntries>'
       b'<selectionEntry type="model" name="Tester" id="u-1"><profiles>'
       b'<profile name="Tester" typeName="Unit" id="p-1"><characteristics>'
       b'<characteristic name="M">6"</characteristic><characteristic name="T">4</characteristic>'
       b'<characteristic name="SV">3+</characteristic><characteristic name="W">2</characteristic>'
       b'<characteristic name="LD">6+</characteristic><characteristic name="OC">1</characteristic>'
       b'</characteristics></profile></profiles></selectionEntry></selectionEntries></catalogue>\n')

app = typer.Typer()
app.command()(import_)
runner = CliRunner()


def run_cli(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def test_doctype_is_refused() -> None:
    raw = b'<?xml version="1.0"?><!DOCTYPE catalogue SYSTEM "http://example.invalid/x.dtd"><catalogue/>'
    with pytest.raises(ProfileError, match="DOCTYPE or ENTITY") as e:
        parse_xml(raw, "x.cat")
    assert e.value.where == "x.cat:1"


def test_external_entity_is_refused() -> None:
    raw = (b'<?xml version="1.0"?>\n<!DOCTYPE c [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
           b'<catalogue name="&xxe;"/>')
    with pytest.raises(ProfileError, match="DOCTYPE or ENTITY"):
        parse_xml(raw, "x.cat")


def test_billion_laughs_is_refused_before_expansion() -> None:
    lol = [b'<!ENTITY lol0 "lollollollollollollollollollol">']
    lol += [b'<!ENTITY lol%d "%s">' % (i, b"".join(b"&lol%d;" % (i - 1) for _ in range(10))) for i in range(1, 10)]
    raw = b'<?xml version="1.0"?>\n<!DOCTYPE lolz [' + b"".join(lol) + b']>\n<catalogue>&lol9;</catalogue>'
    # 10**9 * 30 bytes if expanded: refusing it at all (without running out of memory) is the test
    with pytest.raises(ProfileError, match="DOCTYPE or ENTITY"):
        parse_xml(raw, "bomb.cat")


def test_undeclared_entity_and_broken_xml_name_the_line() -> None:
    with pytest.raises(ProfileError, match="undefined entity") as e:
        parse_xml(b"<catalogue>\n<a>&nope;</a></catalogue>", "x.cat")
    assert e.value.where == "x.cat:2"
    with pytest.raises(ProfileError, match="not well-formed"):
        parse_xml(b"<catalogue><a></catalogue>", "x.cat")


def test_namespaces_are_stripped() -> None:
    root = parse_xml(CAT, "t.cat")
    assert root.tag == "catalogue"
    assert [e.tag for e in root.iter()][:3] == ["catalogue", "selectionEntries", "selectionEntry"]


def test_corrupt_zip(tmp_path: Path) -> None:
    bad = tmp_path / "broken.catz"
    bad.write_bytes(b"PK\x03\x04 this is not really a zip file")
    with pytest.raises(ProfileError, match="corrupt or unreadable zip") as e:
        read_bsdata_file(bad)
    assert e.value.where == str(bad)


def test_zip_with_two_members_and_a_good_one(tmp_path: Path) -> None:
    two = tmp_path / "two.catz"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.cat", CAT)
        zf.writestr("b.cat", CAT)
    with pytest.raises(ProfileError, match="holds 2"):
        read_bsdata_file(two)
    one = tmp_path / "one.catz"
    with zipfile.ZipFile(one, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Xenos - Testers.cat", CAT)
    assert read_bsdata_file(one) == (CAT, str(one))


def test_zip_member_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.bsdata import xmlsafe

    monkeypatch.setattr(xmlsafe, "MAX_XML_BYTES", 1000)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.cat", b"<catalogue>" + b" " * 100_000 + b"</catalogue>")
    big = tmp_path / "big.catz"
    big.write_bytes(buf.getvalue())
    with pytest.raises(ProfileError, match="larger than"):
        read_bsdata_file(big)


def test_xml_that_is_not_battlescribe(tmp_path: Path) -> None:
    f = tmp_path / "feed.cat"
    f.write_bytes(b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>')
    with pytest.raises(ProfileError, match="not a BattleScribe catalogue") as e:
        import_files([f])
    assert e.value.where == str(f)


def test_missing_game_system(tmp_path: Path) -> None:
    f = tmp_path / "testers.cat"
    f.write_bytes(CAT)
    with pytest.raises(ProfileError, match=r"game system \(id sys-1\) is missing") as e:
        import_files([f])
    assert e.value.where == str(f)


def test_game_system_found_by_id_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "whatever-name.gst").write_bytes(GST)
    f = tmp_path / "testers.cat"
    f.write_bytes(CAT)
    imported = import_files([f])
    assert [(fa.name, [u["name"] for u in fa.units]) for fa in imported.factions] == [("Testers", ["Tester"])]


def test_cli_missing_game_system_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "testers.cat"
    f.write_bytes(CAT)
    r = run_cli(str(f), "--out", str(tmp_path / "out"))
    assert r.exit_code == 1
    lines = [ln for ln in r.output.strip().splitlines() if not ln.startswith("  hint:")]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {f}: ") and "game system" in lines[0]
    assert "Traceback" not in r.output


def test_cli_corrupt_zip_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.catz"
    bad.write_bytes(b"PK\x03\x04garbage")
    r = run_cli(str(bad), "--out", str(tmp_path / "out"))
    assert r.exit_code == 1
    lines = [ln for ln in r.output.strip().splitlines() if not ln.startswith("  hint:")]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {bad}: corrupt")


def test_cli_writes_one_file_per_faction(tmp_path: Path) -> None:
    (tmp_path / "sys.gst").write_bytes(GST)
    (tmp_path / "testers.cat").write_bytes(CAT)
    out = tmp_path / "out"
    r = run_cli(str(tmp_path), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert f"Wrote {out / 'testers.json'}: 1 units" in r.output
    assert "Not imported: 0" in r.output
    assert [p.name for p in out.iterdir()] == ["testers.json"]
    [unit] = load_file(out / "testers.json")  # JSON syntax, read as a profile file
    assert (unit.name, unit.faction, unit.model_count) == ("Tester", "Testers", 1)


def test_cli_unknown_faction(tmp_path: Path) -> None:
    (tmp_path / "sys.gst").write_bytes(GST)
    (tmp_path / "testers.cat").write_bytes(CAT)
    r = run_cli(str(tmp_path), "--faction", "orks", "--out", str(tmp_path / "out"))
    assert r.exit_code == 1 and "no such faction" in r.output and "Testers" in r.output
