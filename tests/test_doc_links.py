"""Every relative link in README.md and docs/ leads somewhere: the file exists, and an anchor
names a heading of the page it points into (as GitHub makes a heading's anchor)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# [text](target), not an image's URL inside code; a target up to a space or the closing paren.
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page) -> set[str]:
    found, seen = set(), {}
    for line in FENCE.sub("", page.read_text()).splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            name = anchor(match.group(1))
            count = seen.get(name, 0)
            seen[name] = count + 1
            found.add(name if count == 0 else f"{name}-{count}")
    found |= set(re.findall(r'<a (?:name|id)="([^"]+)"', page.read_text()))
    return found


def links(page) -> list[str]:
    text = CODE.sub("", FENCE.sub("", page.read_text()))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def broken_links(page) -> list[str]:
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        into = (page.parent / path).resolve() if path else page
        if not into.exists():
            broken.append(f"{target}: no such file")
        elif fragment and into.suffix == ".md" and fragment not in anchors(into):
            broken.append(f"{target}: no heading #{fragment} in {into.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page):
    assert broken_links(page) == []


def test_a_moved_page_or_renamed_heading_is_a_broken_link(tmp_path):
    (tmp_path / "table5.md").write_text("# Table 5: ablations\n\n## Verdicts\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](table5.md#verdicts), [here](#start), `[code](gone.md)`, [web](https://x.org/a)\n"
        "[moved](table6.md) [renamed](table5.md#verdict)\n\n# Start\n"
    )
    assert broken_links(page) == [
        "table6.md: no such file",
        "table5.md#verdict: no heading #verdict in table5.md",
    ]


def test_the_anchor_rule_is_githubs():
    assert anchor("Table 5: ablations (long40k)") == "table-5-ablations-long40k"
    assert anchor("What `from_pretrained` reads") == "what-from_pretrained-reads"
