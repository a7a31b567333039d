"""README.md is a user's page: short, no overlong lines, and every local link it makes goes somewhere.

Dated measurement history belongs in docs/benchmarks.md; these limits keep the README from growing back into
a lab notebook."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\]\((?P<path>[^)#\s]+)?(?:#(?P<anchor>[^)\s]+))?\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m[1]) for m in re.finditer(r"^#+\s+(.*)$", path.read_text(), re.M)}


def test_readme_is_short() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines (limit 250): move detail to docs/"
    long = [(n, len(line)) for n, line in enumerate(lines, 1) if len(line) > 200]
    assert not long, f"lines over 200 characters (line, length): {long}"


def test_readme_keeps_the_two_commands_and_one_results_table() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert text.count("## Results") == 1
    assert (ROOT / "docs" / "benchmarks.md").exists()


def test_local_links_resolve() -> None:
    for doc in (README, ROOT / "docs" / "README.md", ROOT / "docs" / "benchmarks.md"):
        for m in LINK.finditer(doc.read_text()):
            path, anchor = m["path"], m["anchor"]
            if path and re.match(r"[a-z]+:", path):
                continue  # a URL
            target = (doc.parent / path).resolve() if path else doc
            assert target.exists(), f"{doc.name}: link to missing {path}"
            if anchor and target.suffix == ".md":
                assert anchor in anchors(target), f"{doc.name}: no heading #{anchor} in {target.name}"
