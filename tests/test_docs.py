"""The documentation stands on its own: every link and every repository path that README.md
and docs/*.md name exists in the repository, and no file points at material outside it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Markdown links and images: [text](target) and ![alt](target).
LINK = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: Headings, for the anchors of links such as docs/olympia.md#one-strike.
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
#: Folders a generated cache lives in: named in the docs, absent from a fresh clone.
GENERATED = {"__pycache__"}
#: Where the rules' source texts and the original design live for the engineers only.
#: Spelt in pieces so that this file does not mention them itself.
OUTSIDE = re.compile(
    "|".join(
        [
            re.escape("../" + "shared"),
            r"(?<![\w-])" + "seeds" + "/",
            r"(?<![\w-])" + "spec" + "/",
            "DESIGN" + r"\.md",
        ]
    )
)
#: Not the project's files: caches, virtual environments, build output.
SKIPPED_DIRS = {
    ".git",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "build",
    "dist",
    ".ipynb_checkpoints",
    *GENERATED,
}


def top_level_folders(root: Path = ROOT) -> list[str]:
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir()
        and p.name not in SKIPPED_DIRS
        and not p.name.endswith(".egg-info")
        and not (p / "pyvenv.cfg").exists()
    )


def repository_paths(text: str, root: Path = ROOT) -> set[str]:
    """Paths from the repository root named anywhere in ``text`` (backticks, code blocks,
    prose): tokens that begin with a top-level folder, or climb out with ``../``."""
    folders = "|".join(re.escape(name) for name in top_level_folders(root))
    token = re.compile(rf"(?<![\w./-])((?:\.\./)+[^\s`)\]]*|(?:{folders})/[\w./-]*)")
    return {match.rstrip(".") for match in token.findall(text)}


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def inside_repository(path: Path, root: Path = ROOT) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def exists(path: Path) -> bool:
    return path.exists() or any(part in GENERATED for part in path.parts)


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    broken = []
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for _, target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part) if file_part else page
        if not inside_repository(linked, root):
            broken.append(f"{target}: outside the repository")
        elif not exists(linked):
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading '{anchor}' in {linked.name}")
    return broken


def missing_paths(page: Path, root: Path = ROOT) -> list[str]:
    missing = []
    # Link targets are relative to the page and checked by broken_links; prose, code and
    # link texts name paths from the repository root.
    text = LINK.sub(r"\1", page.read_text(encoding="utf-8"))
    for named in sorted(repository_paths(text, root)):
        path = root / named
        if not inside_repository(path, root):
            missing.append(f"{named}: outside the repository")
        elif not exists(path):
            missing.append(f"{named}: no such file or folder")
    return missing


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_named_paths_exist(page: Path) -> None:
    assert missing_paths(page) == []


#: docs/architecture.md is the page a newcomer reads in ten minutes (issue 49): at about
#: 230 words a minute of technical prose, 2,400 words at most; the deeper parts belong in
#: docs/internals.md.
ARCHITECTURE_WORDS = 2_400


def test_the_architecture_page_is_read_in_ten_minutes() -> None:
    words = len((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split())
    assert words <= ARCHITECTURE_WORDS, (
        f"docs/architecture.md has {words:,} words (at most {ARCHITECTURE_WORDS:,}):"
        " move the detail to docs/internals.md"
    )


def project_files() -> list[Path]:
    """Every file of the project: the top-level files and those under its folders, without
    caches, build output or virtual environments (their folders are never entered)."""
    files = [p for p in ROOT.iterdir() if p.is_file()]
    for folder in top_level_folders():
        for here, dirs, names in os.walk(ROOT / folder):
            dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
            files.extend(Path(here) / name for name in names)
    return sorted(files)


def test_nothing_points_outside_the_repository() -> None:
    found = []
    for path in project_files():
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary: images, compiled files
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert found == []


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """In a small repository, a dead link, a missing heading, a missing path and a path
    climbing out of the repository are each reported; what exists passes."""
    (tmp_path / "scenarios" / "olympia").mkdir(parents=True)
    (tmp_path / "scenarios" / "olympia" / "here.toml").write_text("", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    outside = "../" + "shared/notes.md"
    page.write_text(
        "# The rules, as implemented\n"
        "[gone](nothing.md) [up](../scenarios/olympia/here.toml) [here](#the-rules-as-implemented)"
        " [there](#elsewhere) [out](../../x.md)\n"
        f"See `scenarios/olympia/here.toml`, scenarios/olympia/no_such.toml and `{outside}`.\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "nothing.md: no such file",
        "#elsewhere: no heading 'elsewhere' in page.md",
        "../../x.md: outside the repository",
    ]
    assert missing_paths(page, tmp_path) == [
        f"{outside}: outside the repository",
        "scenarios/olympia/no_such.toml: no such file or folder",
    ]
    assert OUTSIDE.search(page.read_text(encoding="utf-8"))


def test_olympia_unit_table_is_the_package_table() -> None:
    """docs/olympia.md's unit table states the ratings the simulator uses."""
    from simulator.rulesets.olympia.model import standard_fighters

    text = (ROOT / "docs" / "olympia.md").read_text(encoding="utf-8")
    section = text.split("## Units", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ")]
    header, *body = ([cell.strip() for cell in row] for row in rows)
    assert header[:6] == ["type", "attack", "defense", "missile", "on a ship", "in a swamp"]

    def pair(ratings: dict[str, int] | None) -> str:
        return f"{ratings['attack']}/{ratings['defense']}" if ratings else ""

    documented = {row[0]: row[1:6] for row in body}
    package = {
        name: [
            str(f["attack"]),
            str(f["defense"]),
            str(f.get("missile", 0)),
            pair(f.get("ship")),
            pair(f.get("swamp")),
        ]
        for name, f in standard_fighters().items()
    }
    assert documented == package
