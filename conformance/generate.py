"""Write the serving vectors (vectors/serving/*.json) from this project's core.

    python conformance/generate.py          # rewrite the files
    python conformance/generate.py --check  # exit 1 when a committed file differs

The vectors are committed data: tests/test_conformance_vectors.py holds that they equal
what this script writes, and checks their draft-level facts without the projection code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from a2a_interview.conformance.vectors import generate

HERE = Path(__file__).resolve().parent / "vectors" / "serving"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, data in generate().items():
        path = HERE / name
        if check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
        else:
            path.write_bytes(data)
    for name in stale:
        print(f"conformance/vectors/serving/{name} differs from the generator", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
