"""What ``docs/profile.md`` defines, read the one way both citation tests read it."""

from __future__ import annotations

import re


def profile_sections(text: str) -> set[str]:
    """``"3"``, ``"3.9"``, ``"3b"``: every section and numbered item of ``text``, the
    project's docs/profile.md."""
    found: set[str] = set()
    section = None
    for line in text.splitlines():
        head = re.match(r"## (\d+b?)\. ", line)
        if head:
            section = head.group(1)
            found.add(section)
            continue
        item = re.match(r"(\d+)\. ", line)
        if item and section:
            found.add(f"{section}.{item.group(1)}")
    return found
