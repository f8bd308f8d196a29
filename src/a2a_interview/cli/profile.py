"""``profile [N]``: the implementation profile, shipped with the package.

Help texts cite ``docs/profile.md §N``; an installed wheel holds no ``docs/``, so the
profile travels as package data (``src/a2a_interview/profile.md``, a copy of
``docs/profile.md`` that ``tests/test_profile_command.py`` holds identical) and this
command prints it: the whole, one section (``7``, ``3b``) or one numbered rule of a
section (``3.10``). An unknown section is a usage error naming those there are.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import resources
from typing import Any, Final

from .usage import EXIT_OK, UsageError

__all__ = ["profile_text", "register", "section"]

_HEADING: Final = re.compile(r"^## (\w+)\. ", re.M)


def profile_text() -> str:
    """The profile as shipped (docs/profile.md)."""
    return resources.files("a2a_interview").joinpath("profile.md").read_text("utf-8")


def _sections(text: str) -> dict[str, str]:
    marks = list(_HEADING.finditer(text))
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return {m[1]: text[m.start() : end].rstrip() + "\n" for m, end in zip(marks, ends, strict=True)}


def section(text: str, wanted: str) -> str:
    """Section ``wanted`` of ``text`` (``7``, ``3b``), or rule ``S.R`` of section ``S``
    (a numbered item at the line's start: ``10. ``). Raises ``UsageError``."""
    sections = _sections(text)
    name, _, rule = wanted.partition(".")
    if name not in sections:
        known = ", ".join(sections)
        raise UsageError(f"docs/profile.md has no section {wanted!r} (sections: {known})")
    body = sections[name]
    if not rule:
        return body
    items = list(re.finditer(r"^(\d+)\. ", body, re.M))
    for i, item in enumerate(items):
        if item[1] == rule:
            end = items[i + 1].start() if i + 1 < len(items) else len(body)
            heading = body.splitlines()[0]
            return f"{heading}\n\n{body[item.start() : end].rstrip()}\n"
    raise UsageError(f"docs/profile.md §{name} has no rule {rule!r}")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "profile",
        help="print the implementation profile (docs/profile.md), or one section of it",
        description="Print docs/profile.md, the implementation profile the help texts "
        "cite as 'docs/profile.md §N', as shipped with this installation.",
        epilog="examples:\n  a2a-interview profile        # all of it\n"
        "  a2a-interview profile 7      # §7, the verifier\n"
        "  a2a-interview profile 3.10   # §3 rule 10",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("section", nargs="?", metavar="N",
                        help="a section (7, 3b) or a rule of one (3.10); default: all")  # fmt: skip
    parser.set_defaults(run=_profile)


def _profile(args: argparse.Namespace) -> int:
    text = profile_text()
    sys.stdout.write(section(text, args.section) if args.section else text)
    return EXIT_OK
