#!/usr/bin/env python3
"""Every relative link of the user's pages resolves: README.md, docs/*.md and charts/liken-dra/README.md.

A link's file (or folder) must exist inside the repository, and its #anchor must name a heading of the target
page as GitHub renders it: the heading's text lowercased, every character other than a letter, digit, space,
`-` or `_` dropped, each space turned into `-`, and `-1`, `-2`, ... appended to repeats. Links in code blocks and
code spans are not links; absolute URLs (a scheme, or `//`) are not checked.

Usage: doc_links_test.py SOURCE_ROOT       check the pages, print each broken link, exit 1 when there is one
       doc_links_test.py --self-test       check a made-up tree whose broken links are known, exit 1 on a miss
"""
import pathlib
import re
import sys
import tempfile
import urllib.parse

import self_test_report

PAGES = ["README.md", "docs/*.md", "charts/liken-dra/README.md"]

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HREF = re.compile(r"<a\s[^>]*\bhref=\"([^\"]*)\"", re.I)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
NAMED = re.compile(r"<a\s[^>]*\b(?:name|id)=\"([^\"]*)\"", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
LINE_ANCHOR = re.compile(r"^L\d+(?:-L\d+)?$")


def outside_fences(text):
    """(line number, line) of the text outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match is not None:
            fence = match.group(1)
            continue
        if fence is not None:
            if match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        yield number, line


def prose_lines(text):
    """(line number, line) of the text outside fenced code blocks, with code spans blanked."""
    for number, line in outside_fences(text):
        yield number, CODE_SPAN.sub(lambda m: "code", line)


def slug(heading):
    """GitHub's anchor for a heading's markdown text."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # _emphasis_, not snake_case
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a page offers: its headings' slugs (repeats numbered) and named HTML anchors."""
    found = set()
    seen = {}
    text = path.read_text(errors="replace")
    for _, line in prose_lines(text):
        found.update(NAMED.findall(line))
    for _, line in outside_fences(text):
        match = HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path):
    """(line number, target) of every link in a page."""
    for number, line in prose_lines(path.read_text(errors="replace")):
        for match in INLINE.finditer(line):
            yield number, match.group(1).strip("<>")
        match = REFERENCE.match(line)
        if match is not None:
            yield number, match.group(1).strip("<>")
        for target in HREF.findall(line):
            yield number, target


def broken(root, page):
    """A message for each relative link of `page` that does not resolve."""
    root = root.resolve()
    cache = {}
    for number, target in links(page):
        if SCHEME.match(target):
            continue
        where = f"{page.relative_to(root)}:{number}: {target}"
        path_part, _, anchor = target.partition("#")
        path_part = urllib.parse.unquote(path_part)
        anchor = urllib.parse.unquote(anchor)
        if path_part == "":
            resolved = page
        elif path_part.startswith("/"):
            resolved = (root / path_part.lstrip("/")).resolve()
        else:
            resolved = (page.parent / path_part).resolve()
        if resolved != root and root not in resolved.parents:
            yield f"{where}: leaves the repository"
            continue
        if not resolved.exists():
            yield f"{where}: no such file or folder"
            continue
        if not anchor:
            continue
        if resolved.suffix != ".md":
            if not (resolved.is_file() and LINE_ANCHOR.match(anchor)):
                yield f"{where}: #{anchor} is not a line anchor of a file"
            continue
        if resolved not in cache:
            cache[resolved] = anchors(resolved)
        if anchor not in cache[resolved]:
            yield f"{where}: {resolved.relative_to(root)} has no heading #{anchor}"


def check(root):
    """Every broken link of the pages below `root`, and the number of pages and links read."""
    pages = []
    for pattern in PAGES:
        pages += sorted(p for p in root.glob(pattern) if p.is_file())
    found = []
    count = 0
    for page in pages:
        count += sum(1 for _ in links(page))
        found += broken(root, page)
    return found, len(pages), count


def self_test():
    """Runs the check on a made-up tree: each kind of broken link must be found, and nothing else."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "repo"
        (root / "docs").mkdir(parents=True)
        (root / "charts/liken-dra").mkdir(parents=True)
        (root / "src").mkdir()
        (root / "src/main.cc").write_text("int main() {}\n")
        (root / "charts/liken-dra/README.md").write_text("# Chart\n\n[up](../../README.md#the-api-client-v2)\n")
        (root / "docs/a.md").write_text(
            "# Page A\n\n## The API client (v2)\n\n## Ship it: `make` & *go*!\n\n## Repeat\n\n## Repeat\n\n"
            "## snake_case and _emphasis_\n\n"
            "[ok](../README.md) [ok](#repeat-1) [ok](#ship-it-make--go) [ok](#snake_case-and-emphasis)\n"
            "[ok](../src/main.cc#L1) [ok](../src) [ok](#page-a \"title\")\n"
            "[bad anchor](#repeat-2) [bad anchor](../src/main.cc#main)\n"
            "```\n[not a link](missing-in-fence.md)\n```\n"
            "`[not a link](missing-in-span.md)` [absolute](https://example.com/missing.md)\n"
            "[ref]: ./gone.md\n"
        )
        (root / "README.md").write_text(
            "# Top\n\n[ok](docs/a.md#the-api-client-v2) [bad file](docs/b.md) [outside](../shared/spec.md)\n"
            "[bad anchor](docs/a.md#repeat-3) [ok `code` text](docs/a.md) ![img](docs/missing.png)\n"
            '<a href="docs/a.md#nowhere">x</a>\n'
        )
        found, _, _ = check(root)
        expected = [
            "README.md:3: docs/b.md: no such file or folder",
            "README.md:3: ../shared/spec.md: leaves the repository",
            "README.md:4: docs/a.md#repeat-3: docs/a.md has no heading #repeat-3",
            "README.md:4: docs/missing.png: no such file or folder",
            "README.md:5: docs/a.md#nowhere: docs/a.md has no heading #nowhere",
            "docs/a.md:15: #repeat-2: docs/a.md has no heading #repeat-2",
            "docs/a.md:15: ../src/main.cc#main: #main is not a line anchor of a file",
            "docs/a.md:20: ./gone.md: no such file or folder",
            "charts/liken-dra/README.md:3: ../../README.md#the-api-client-v2: README.md has no heading "
            "#the-api-client-v2",
        ]
        return self_test_report.report(found, expected, "broken link")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found, pages, count = check(root)
    for f in found:
        print(f)
    print(f"{len(found)} broken of {count} links in {pages} pages")
    return 1 if found or pages == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
