"""Issue 7, the command line: repeated options, numbers as people write them, bare commands,
completion, broken output streams, encodings, narrow terminals, Ctrl-C and tiny samples."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from mathhammer.cli import app
from mathhammer.limits import MAX_ATTACKING_MODELS, MAX_DAMAGE_MOD, MAX_ROLL_MOD, MAX_TARGET_MODELS

from .child_signals import sigint_as_ctrl_c

runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
PY = [sys.executable, "-m", "mathhammer"]
#: Both entry points: ``python -m mathhammer`` and the console script, when installed.
ENTRY_POINTS = [PY] + ([[shutil.which("mathhammer")]] if shutil.which("mathhammer") else [])
EXACT = ["shoot", "railgun", "-t", "knight", "--exact"]
MC = ["shoot", "railgun", "-t", "knight", "--trials", "1000"]


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env or ENV)


def proc(cmd: list[str], *args: str, env: dict[str, str] | None = None, **kw: Any) -> Any:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([*cmd, *args], env=full_env, timeout=300, **kw)


# --- 1. repeated single-value options -------------------------------------------------------

def _commands() -> list[tuple[list[str], Any]]:
    """Every leaf command, with its path."""
    out = []
    stack: list[tuple[list[str], Any]] = [([], get_command(app))]
    while stack:
        path, cmd = stack.pop()
        subs = getattr(cmd, "commands", None)
        if subs:
            stack += [([*path, name], sub) for name, sub in subs.items()]
        else:
            out.append((path, cmd))
    return out


def _two_values(param: Any) -> tuple[str, str]:
    choices = getattr(param.type, "choices", None)
    if choices:
        return str(choices[0]), str(choices[-1])
    if getattr(param.type, "name", "") == "integer":
        return "2", "3"
    return "knight", "rhino"


def _single_value_options() -> list[tuple[list[str], str, tuple[str, str]]]:
    cases = []
    for path, cmd in _commands():
        for param in cmd.params:
            if param.param_type_name == "option" and not (param.is_flag or param.multiple or param.count):
                if param.name in ("install_completion", "show_completion"):
                    continue
                cases.append((path, param.opts[0], _two_values(param)))
    return cases


REPEATABLE = _single_value_options()


def test_every_command_has_single_value_options_to_check() -> None:
    assert {tuple(p) for p, _, _ in REPEATABLE} >= {("shoot",), ("fight",), ("profiles", "show"), ("profiles", "import"),
                                                    ("roster", "show")}
    assert any(opt == "--target" for _, opt, _ in REPEATABLE)


@pytest.mark.parametrize(("path", "opt", "values"), REPEATABLE, ids=[f"{' '.join(p)} {o}" for p, o, _ in REPEATABLE])
def test_repeated_single_value_option_is_an_error(path: list[str], opt: str, values: tuple[str, str],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples"
    # the file arguments need not exist: the repeated option is refused while the command line is
    # parsed, before any file is read (and were it not, the run would fail on the missing file,
    # not with the repeated values); in tmp_path, so nothing is written beside the tests
    monkeypatch.chdir(tmp_path)
    positional = {("shoot",): ["railgun"], ("fight",): ["knight paladin/reaper chainsword - strike"],
                  ("profiles", "show"): ["railgun"], ("profiles", "list"): [], ("sweep",): ["railgun"],
                  ("compare",): [str(examples / "tau-anti-tank.csv")],
                  ("profiles", "import"): [str(tmp_path / "none.cat")],
                  ("roster", "show"): [str(tmp_path / "none.ros")],
                  ("tank-shock",): ["gunrig"], ("deadly-demise",): ["gunrig"]}[tuple(path)]
    takes_target = path[0] in ("shoot", "fight", "compare", "tank-shock")
    extra = ["-t", "knight"] if takes_target and opt not in ("--target", "-t") else []
    r = run(*path, *positional, *extra, opt, values[0], opt, values[1])
    assert r.exit_code == 1, r.output
    first = r.stderr.splitlines()[0]
    assert first.startswith("Error: ") and opt.lstrip("-") in first
    assert repr(values[0]) in first and repr(values[1]) in first
    assert r.stdout == ""


def test_target_given_twice_is_not_silently_the_last() -> None:
    r = run("shoot", "railgun", "-t", "knight", "-t", "rhino", "--exact")
    assert r.exit_code == 1 and "--target" in r.stderr and "'knight'" in r.stderr and "'rhino'" in r.stderr
    r = run("shoot", "railgun", "--target=knight", "-t", "rhino", "--exact")
    assert r.exit_code == 1


def test_repeatable_options_and_flags_stay_accepted(tmp_path: Any) -> None:
    r = run(*EXACT, "--profiles", str(tmp_path), "--profiles", str(tmp_path), "--cover", "--cover", "-f", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["context"]["cover"] is True


@pytest.mark.parametrize(("args", "path", "option"), [
    (["shoot", "railgun", "-t"], "mathhammer shoot", "-t"),
    (["--debug", "shoot", "railgun", "-t", "knight", "--trials"], "mathhammer shoot", "--trials"),
    (["profiles", "list", "--kind"], "mathhammer profiles list", "--kind"),
])
def test_an_option_without_its_value_names_the_command_it_belongs_to(args: list[str], path: str, option: str
                                                                      ) -> None:
    """click raises it without a context: the error named the application, and its hint the
    application's --help, not the command's."""
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [f"Error: {path}: Option '{option}' requires an argument.",
                                     f"  hint: {path} --help"]


@pytest.mark.parametrize("where", ["weapon", "target"])
def test_a_huge_offending_value_is_shown_cut_short(where: str) -> None:
    """A pasted file as an argument: the error stays a line, saying how long the value was."""
    huge = "Z" * 100_000
    r = run("shoot", huge, "-t", "knight", "--exact") if where == "weapon" else run("shoot", "railgun", "-t", huge)
    assert r.exit_code == 1, r.output
    first = r.stderr.splitlines()[0]
    assert first.endswith(f"(got '{'Z' * 199}…, 100,000 characters)") and len(first) < 400


@pytest.mark.parametrize("command", ["sweep", "compare"])
def test_sampling_options_with_exact_are_said_to_change_nothing(command: str, tmp_path: Any) -> None:
    """As shoot says it: --trials and --seed given with --exact were taken without a word."""
    said = "Warning: --trials, --seed have no effect with --exact: it samples nothing"
    csv = tmp_path / "rows.csv"
    csv.write_text("weapon\nA2 BS3+ S4 AP0 D1\n", "utf-8")
    head = ["sweep", "A2 BS3+ S4 AP0 D1", "--toughness", "4", "--save", "3"] if command == "sweep" else [
        "compare", str(csv), "-t", "T4 SV3+ W1"]
    r = run(*head, "--exact", "--trials", "1000", "--seed", "3")
    assert r.exit_code == 0, r.output
    assert said in r.stderr.splitlines()
    r = run(*head, "--trials", "1000", "--seed", "3")  # Monte Carlo: they are used
    assert r.exit_code == 0 and "no effect" not in r.stderr, r.output


# --- 2. whole numbers ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [("1e3", 1000), ("1_000", 1000), ("1,000", 1000), ("1.5e3", 1500),
                                             ("1000.0", 1000), ("+1000", 1000), (" 1000 ", 1000)])
def test_trials_written_like_people_write_them(text: str, value: int) -> None:
    r = run("shoot", "railgun", "-t", "knight", "--trials", text, "--seed", "1e2", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["trials"] == value and d["seed"] == 100


@pytest.mark.parametrize("text", ["1e-3", "2.5", "abc", "", "0x10", "nan", "inf", "1,00", "1__0", "١٢", "２"])
def test_not_a_whole_number_is_a_usage_error(text: str) -> None:
    r = run(*EXACT, "--trials", text)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("Error: ") and repr(text) in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(("opt", "value", "limit"), [
    ("--models", "99999999999999999999", f"{MAX_ATTACKING_MODELS:,}"),
    ("--models", str(MAX_ATTACKING_MODELS + 1), f"{MAX_ATTACKING_MODELS:,}"),
    ("--target-models", "0", f"{MAX_TARGET_MODELS:,}"),
    ("--target-models", "99999999999999999999", f"{MAX_TARGET_MODELS:,}"),
    ("--damage-mod", "9223372036854775807", str(MAX_DAMAGE_MOD)),
    ("--damage-mod", "-9223372036854775809", str(MAX_DAMAGE_MOD)),
    ("--hit-mod", str(MAX_ROLL_MOD + 1), str(MAX_ROLL_MOD)),
    ("--wound-mod", "-99999999999999999999", str(MAX_ROLL_MOD)),
    ("--save-mod", "1e30", str(MAX_ROLL_MOD)),
    ("--bs-improve", "99999999999999999999", str(MAX_ROLL_MOD)),
    ("--ap-improve", "99999999999999999999", str(MAX_ROLL_MOD)),
    ("--seed", str(2**64), f"{2**63 - 1:,}"),
    ("--seed", "-1", f"{2**63 - 1:,}"),
    ("--trials", "1e999", "1,000,000,000"),
    ("--trials", "1e999999999999", "1,000,000,000"),
    ("--threads", "0", "1"),
])
def test_out_of_range_names_option_value_and_limit(opt: str, value: str, limit: str) -> None:
    r = run(*EXACT, opt, value)
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {opt}: ")
    assert limit in lines[0] and (value.strip("+") in lines[0] or repr(value) in lines[0])


@pytest.mark.parametrize("args", [["--crit-hit", "99999999999999999999"], ["--models", "-99999999999999999999"],
                                  ["--threads", "99999999999999999999"],
                                  # beyond int()'s 4,300-digit limit, and far beyond: never expanded
                                  ["--crit-hit", "1e5000"], ["--crit-wound", "1e4400"], ["--threads", "1e5000"],
                                  ["--models", "-1e5000"], ["--crit-hit", "1e999999999"],
                                  ["--seed", "1e999999999"]])
def test_huge_values_checked_later_are_still_errors(args: list[str]) -> None:
    r = run("shoot", "railgun", "-t", "knight", "--trials", "10", *args)
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.stderr and args[0] in r.stderr


# --- 3. a bare command prints its help -------------------------------------------------------

@pytest.mark.parametrize("args", [[], ["shoot"], ["fight"], ["profiles"]])
def test_bare_command_prints_help_without_error(args: list[str]) -> None:
    r = proc(PY, *args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage:") and "Error" not in r.stdout and r.stderr == ""


# --- 4. shell completion ---------------------------------------------------------------------

def test_completion_options() -> None:
    r = run("--help")
    assert "--install-completion" in r.stdout and "--show-completion" in r.stdout
    r = proc(PY, "--show-completion", "bash", capture_output=True, text=True)
    assert r.returncode == 0 and "complete" in r.stdout


def test_completion_completes_commands_and_choices() -> None:
    env = {"_MATHHAMMER_COMPLETE": "complete_bash", "COMP_WORDS": "mathhammer shoot railgun --reroll-hits ",
           "COMP_CWORD": "4"}
    r = proc(ENTRY_POINTS[-1], env=env, capture_output=True, text=True)
    if ENTRY_POINTS[-1] is PY:
        pytest.skip("the console script is not installed")
    assert r.returncode == 0 and {"ones", "failed"} <= set(r.stdout.split())


def test_help_imports_neither_numpy_nor_numba() -> None:
    code = ("import sys\nsys.argv = ['mathhammer', 'shoot', '--help']\nfrom mathhammer.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr([m for m in ('numpy', 'numba') if m in sys.modules]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stderr.strip() == "[]"


# --- 5. broken output ------------------------------------------------------------------------

@pytest.mark.parametrize("cmd", ENTRY_POINTS)
@pytest.mark.parametrize("args", [EXACT, ["shoot", "railgun", "-t", "knight", "--trials", "1000"], ["--help"]])
def test_closed_stdout_is_one_line_and_exit_1(cmd: list[str], args: list[str]) -> None:
    r = proc(cmd, *args, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("Error: stdout")


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
@pytest.mark.parametrize("args", [EXACT, ["shoot", "railgun", "-t", "knight", "--trials", "1000", "-f", "json"]])
def test_closed_stderr_does_not_fail_a_success(cmd: list[str], args: list[str]) -> None:
    r = proc(cmd, *args, stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2))
    assert r.returncode == 0 and b"railgun" in r.stdout.lower()


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
@pytest.mark.parametrize("args", [EXACT, [*EXACT, "-f", "json"], MC, ["--help"], ["--version"], ["profiles", "list"],
                                  [], ["shoot"], ["profiles"]])
def test_full_disk_is_one_line_and_exit_1(cmd: list[str], args: list[str]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        r = proc(cmd, *args, stdout=full, stderr=subprocess.PIPE)
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err and "internal error" not in err
    assert err.strip().splitlines() == ["Error: stdout: cannot write the output: No space left on device"]


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
@pytest.mark.parametrize("args", [EXACT, [*EXACT, "-f", "json"], MC, ["--help"], ["profiles", "list"]])
def test_reader_gone_is_a_quiet_exit_1(cmd: list[str], args: list[str]) -> None:
    """EPIPE (``| head -1`` once head has exited): no message, exit 1 (Python's and click's
    convention), never a traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        r = proc(cmd, *args, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert r.returncode == 1 and r.stderr == b""


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
def test_reader_gone_part_way_is_a_quiet_exit_1(cmd: list[str]) -> None:
    """A reader that goes away in the middle of a long output (``profiles list | head -1``:
    over 2 MB, far more than a pipe holds) ends the run with exit 1, not 0: CPython's buffered
    stdout wrote part of the text and dropped the rest without an error (mathhammer.cli._WholeWrites)."""
    with subprocess.Popen([*cmd, "profiles", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        assert p.wait(timeout=120) == 1 and err == b""
    assert first.startswith(b"Units")


@pytest.mark.skipif(os.name != "posix", reason="stdout is left as it is elsewhere")
@pytest.mark.parametrize("flags", [[], ["-u"]])
def test_whole_writes_keep_what_stdout_was(flags: list[str]) -> None:
    """The stdout that writes whole keeps the original's name, encoding, error handler, line
    buffering, write-through and buffering (none under ``python -u``)."""
    code = ("import sys\nfrom mathhammer.cli import _stdout_written_whole\n"
            "def props():\n    o = sys.stdout\n"
            "    return (o.name, o.encoding, o.errors, o.line_buffering, o.write_through,\n"
            "            hasattr(o.buffer, 'raw'))\n"
            "before = props()\n_stdout_written_whole()\n"
            "assert type(getattr(sys.stdout.buffer, 'raw', sys.stdout.buffer)).__name__ == '_WholeWrites'\n"
            "print(before == props(), before, props(), file=sys.stderr)")
    r = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONIOENCODING": "latin-1:backslashreplace"})
    assert r.returncode == 0 and r.stderr.startswith("True"), r.stderr


# --- 6. encodings ----------------------------------------------------------------------------

@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"PYTHONIOENCODING": "latin-1"},
                                 {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": ""}])
@pytest.mark.parametrize("args", [["shoot", "railgun", "-t", "knight", "--trials", "1000", "--explain"],
                                  ["fight", "A4 WS3+ S6 AP-1 D2 [LANCE]", "-t", "T6 SV3+ W3 MODELS5", "--charged",
                                   "--exact"],
                                  ["profiles", "show", "crisis fireknife"], ["profiles", "list"]])
def test_ascii_terminal_gets_ascii(env: dict[str, str], args: list[str]) -> None:
    r = proc(PY, *args, env=env, capture_output=True)
    assert r.returncode == 0, r.stderr
    encoding = env.get("PYTHONIOENCODING") or "utf-8"
    r.stdout.decode(encoding)  # strict: every byte is valid in the stream's encoding
    assert b"Traceback" not in r.stderr


def test_ascii_table_spells_symbols() -> None:
    r = proc(PY, "shoot", "railgun", "-t", "knight", "--trials", "1000", env={"PYTHONIOENCODING": "ascii"},
             capture_output=True, text=True)
    assert r.returncode == 0
    assert " x1 " in r.stdout and "+/-" in r.stdout and "P(>=k)" in r.stdout and "5-95%" in r.stdout


def test_ascii_json_escapes_instead_of_changing_data() -> None:
    r = proc(PY, "profiles", "show", "crisis fireknife", "-f", "json", env={"PYTHONIOENCODING": "ascii"},
             capture_output=True)
    assert r.returncode == 0
    data = json.loads(r.stdout.decode("ascii"))
    assert "Crisis Fireknife Shas\u2019ui" in json.dumps(data, ensure_ascii=False)


def test_ascii_stderr_error_shows_the_value_exactly() -> None:
    r = proc(PY, "shoot", "A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS \u00d7]", "-t", "knight", "--exact",
             env={"PYTHONIOENCODING": "ascii"}, capture_output=True)
    assert r.returncode == 1
    err = r.stderr.decode("ascii")
    assert len(err.strip().splitlines()) <= 2 and "\\xd7" in err and "Traceback" not in err


# --- 7. narrow terminals ---------------------------------------------------------------------

def _pct(p: float) -> str:
    return "0%" if p == 0 else f"{100 * p:.1f}%"


WIDE_ARGS = ["shoot", "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "-t", "T4 SV3+ W2 MODELS4", "--exact"]


@pytest.mark.parametrize("columns", ["0", "1", "10", "20", "30", "40", "60", "80", "200", "abc", "-5", ""])
def test_table_never_hides_a_number(columns: str) -> None:
    d = json.loads(run(*WIDE_ARGS, "-f", "json").stdout)
    r = run(*WIDE_ARGS, env={"NO_COLOR": "1", "COLUMNS": columns})
    assert r.exit_code == 0 and r.stdout.strip(), r.output
    text = r.stdout
    assert "…" not in text
    for block in (d["damage"], d["models_destroyed"]):
        assert f"{block['mean']:.3f}" in text
        assert f"median {block['median']}" in text
        assert f"{block['p05']}–{block['p95']}" in text
    assert f"P(destroy unit): {_pct(d['p_destroy_unit'])}" in text
    for stage in ("hits", "wounds", "unsaved"):
        assert f"{d['stages'][stage]['mean']:.3f}" in text


@pytest.mark.parametrize("columns", ["0", "10", "30", "60"])
def test_profile_tables_never_hide_a_number(columns: str) -> None:
    r = run("profiles", "list", "--kind", "unit", "knight", env={"NO_COLOR": "1", "COLUMNS": columns})
    # 'knight' lists the Knight Paladin (and every unit with Knight in its name): a word of it, whole
    assert r.exit_code == 0 and "…" not in r.stdout and "Paladin" in r.stdout


# --- 8. Ctrl-C -------------------------------------------------------------------------------

@pytest.mark.parametrize("after", ["typer", "mathhammer.cli.root", "numpy", "mathhammer.engine", "mathhammer.profiles",
                                   1.5])
def test_ctrl_c_is_one_line_and_exit_130(after: str | float) -> None:
    """SIGINT while a module is being imported (``-X importtime`` reports each import as it
    finishes, so the signal lands at a known point), or 1.5 s into a long run."""
    p = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "mathhammer", "shoot", "railgun", "-t", "knight",
                          "--trials", "1000000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "NO_COLOR": "1"}, preexec_fn=sigint_as_ctrl_c)
    assert p.stderr is not None
    if isinstance(after, str):
        for line in p.stderr:
            if line.decode().rsplit("|", 1)[-1].strip() == after:
                break
    else:
        time.sleep(after)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 130, err[-2000:]
    assert err.decode().strip().splitlines()[-1] == "Interrupted" and b"Traceback" not in err


def test_keyboard_interrupt_inside_a_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer import engine

    def interrupted(*args: Any, **kw: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "analyse", interrupted)
    r = run(*EXACT)
    assert r.exit_code == 130 and r.stderr.strip() == "Interrupted"


# --- 9. one or two trials --------------------------------------------------------------------

def _stat(args: list[str]) -> dict[str, Any]:
    r = run("shoot", "A3 BS4+ S4 AP0 D1", "-t", "T4 SV7+ W1 MODELS10", *args, "-f", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["damage"]


def test_one_trial_has_no_standard_error() -> None:
    d = _stat(["--trials", "1", "--seed", "3"])
    assert d["sem"] is None and d["sd_sample"] is None and d["sd"] == 0
    r = run("shoot", "A3 BS4+ S4 AP0 D1", "-t", "T4 SV7+ W1 MODELS10", "--trials", "1", "--seed", "3")
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("Damage"))
    assert "±" not in line and "sd n/a" in line and "1 trial," in r.stdout


@pytest.mark.parametrize("seed", range(6))
def test_two_trials_use_the_sample_sd(seed: int) -> None:
    d = _stat(["--trials", "2", "--seed", str(seed)])
    values = [row["value"] for row in d["distribution"] for _ in range(round(row["p"] * 2))]
    x1, x2 = values
    mean = (x1 + x2) / 2
    assert math.isclose(d["sd"], abs(x1 - x2) / 2, abs_tol=1e-12)  # population: divide by n
    assert math.isclose(d["sd_sample"], math.sqrt(((x1 - mean) ** 2 + (x2 - mean) ** 2) / 1), abs_tol=1e-12)
    assert math.isclose(d["sem"], d["sd_sample"] / math.sqrt(2), abs_tol=1e-12)


def test_exact_has_zero_sem_and_no_sample_sd() -> None:
    d = _stat(["--exact"])
    assert d["sem"] == 0 and d["sd_sample"] is None
    # 3 attacks, each a hit (BS4+: 1/2) and a wound (S4 vs T4: 1/2), no save: Binomial(3, 1/4)
    assert math.isclose(d["sd"], math.sqrt(3 * 0.25 * 0.75), rel_tol=1e-9)


# --- 10/11. help examples and other hostile input --------------------------------------------

def test_fight_help_example_is_a_melee_weapon() -> None:
    text = " ".join(run("fight", "--help").stdout.split())
    inline = text.split("inline like '")[1].split("'")[0]
    named = text.split("(e.g. '")[1].split("'")[0]
    assert "WS" in inline and "BS" not in inline
    for weapon in (inline, named):
        r = run("fight", weapon, "-t", "knight", "--exact", "-f", "json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["attacker"]["weapon"]["type"] == "melee" and "Warning" not in r.stderr


@pytest.mark.parametrize(("args", "value"), [
    (["--format", "JSON"], "json"), (["--reroll-hits", "ONES"], "ones"), (["--method", "Exact"], "exact"),
    (["--rules", "CURRENT"], "current"),
])
def test_choices_ignore_case(args: list[str], value: str) -> None:
    r = run("shoot", "railgun", "-t", "knight", "--trials", "10", *args)
    assert r.exit_code == 0, r.output
    if args[0] == "--format":
        assert json.loads(r.stdout)["schema"] == "mathhammer.result/1"


@pytest.mark.parametrize(("args", "code"), [
    (["shoot", "railgun", "-t", "", "--exact"], 1),
    (["shoot", "", "-t", "knight", "--exact"], 1),
    (["shoot", "railgun", "-t", "knight", "--exact", "--profiles", ""], 1),
    (["shoot", "railgun", "-t", "knight", "-f", ""], 2),
    (["shoot", "railgun", "-t", "knight", "--method", ""], 2),
    (["shoot", "-t", "knight", "--", "-t"], 1),
    (["shoot", "--", "railgun", "-t", "knight"], 2),
    (["shoot", "railgun", "-t", "knight", "--exact", "--", "extra"], 1),  # a second WEAPON (issue 9): unknown
    (["fire", "railgun"], 2),
    (["profiles", "fire"], 2),
    (["profiles", "show", ""], 1),
    (["--debug"], 2),
])
def test_hostile_input_never_a_traceback(args: list[str], code: int) -> None:
    r = run(*args)
    assert r.exit_code == code, r.output
    assert r.stderr.startswith("Error: ") and "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize(("args", "shown"), [
    (["--trials", "\uff11\uff10"], "'\\uff11\\uff10'"),             # fullwidth digits are not 10
    (["--trials", "\u22125"], "'\\u22125'"),                          # a minus sign is not '-'
    (["-t", "T4 SV3+ W2 [CAF\u00c9]"], "CAF\\xc9"),                   # a repeated option's value
])
def test_ascii_stderr_never_folds_what_was_typed(args: list[str], shown: str) -> None:
    r = proc(PY, "shoot", "railgun", "-t", "knight", "--exact", *args, capture_output=True, text=True,
             env={**os.environ, "PYTHONIOENCODING": "ascii", "NO_COLOR": "1"})
    assert r.returncode in (1, 2), r.stderr
    assert shown in r.stderr and "Traceback" not in r.stderr


# 'lascannon' is in no unit's name and is the weapon of many units, in five distinct profiles (BS3+ on a
# Predator, BS4+ on a Leman Russ, BS5+ HEAVY in a Heavy Weapons Squad, ...); 'missile' would now find
# the one unit with it in its name (Vortex Missile Strongpoint [Legends])
@pytest.mark.parametrize(("name", "kind"), [("crisis", "unit"), ("lascannon", "weapon")])
def test_profiles_show_says_ambiguous_not_unknown(name: str, kind: str) -> None:
    r = run("profiles", "show", name)
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith(f"Error: {kind}: ambiguous {kind} name") and "unknown" not in r.stderr


# --- errors that name the option the user typed ------------------------------------------------

@pytest.mark.parametrize(("args", "code", "first"), [
    (["sweep", "railgun", "-n", "0", "--exact"], 1, "Error: --firing-models: must be a whole number from 1 to 1,000 (got 0)"),
    (["compare", "-t", "knight"], 2,
     "Error: mathhammer compare: Invalid value for FILE: give a CSV file, or --roster to rank the units of a roster"),
    (["shoot", "railgun", "-t", "0", "--exact"], 1, "Error: --target: unknown unit (got '0')"),
])
def test_an_error_names_what_was_typed(args: list[str], code: int, first: str) -> None:
    """sweep's firing models are -n/--firing-models (not shoot's --models), a missing FILE is a
    usage error, and a number is no part of a unit's name."""
    r = run(*args)
    assert r.exit_code == code and r.stderr.splitlines()[0] == first and "Traceback" not in r.stderr
