#!/usr/bin/env python3
"""Regenerate the built-in profiles (profiles/*.json) from a BSData wh40k-10e folder and profiles-src/overlay.yaml.

    python scripts/build_profiles.py [--bsdata DIR] [--out DIR] [--overlay FILE] [--check]

``--bsdata`` defaults to the pinned snapshot ../shared/data/bsdata-wh40k-10e next to the
repository (the package itself assumes no folder). ``--check`` writes nothing: it compares
what would be written with the files in ``--out`` and exits 1 listing the files that differ,
are missing or are left over. Without it, the files are written and stale *.json in ``--out``
removed (every *.json there is generated).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mathhammer.bsdata.report import summary  # noqa: E402
from mathhammer.bsdata.write import build_files  # noqa: E402
from mathhammer.errors import MathhammerError  # noqa: E402

DEFAULT_BSDATA = ROOT.parent / "shared" / "data" / "bsdata-wh40k-10e"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bsdata", type=Path, default=DEFAULT_BSDATA, help="BSData folder (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=ROOT / "profiles", help="output folder (default: %(default)s)")
    parser.add_argument("--overlay", type=Path, default=ROOT / "profiles-src" / "overlay.yaml", help="overlay file")
    parser.add_argument("--check", action="store_true",
                        help="compare with --out instead of writing; exit 1 on any difference")
    args = parser.parse_args(argv)
    try:
        imported, files = build_files([args.bsdata], args.overlay)
    except MathhammerError as e:
        print(f"Error: {e.message()}", file=sys.stderr)
        return 1
    existing = {p.name: p for p in args.out.glob("*.json")} if args.out.is_dir() else {}
    if args.check:
        differ = sorted(n for n, data in files.items() if n not in existing or existing[n].read_bytes() != data)
        stale = sorted(set(existing) - set(files))
        for name in differ:
            print(f"{args.out / name}: differs from a fresh build" if name in existing else
                  f"{args.out / name}: missing")
        for name in stale:
            print(f"{args.out / name}: not produced by the build (stale)")
        if differ or stale:
            print("run scripts/build_profiles.py to regenerate", file=sys.stderr)
            return 1
        print(f"{len(files)} files in {args.out} match a fresh build")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in sorted(files.items()):
        path = args.out / name
        if not path.exists() or path.read_bytes() != data:
            tmp = path.with_name(f".{name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        written.append((path, data.count(b'\n  {"name": ')))
    for name in sorted(set(existing) - set(files)):
        existing[name].unlink()
    print(summary(imported, written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
