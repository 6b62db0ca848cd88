#!/usr/bin/env python3
"""Checks every internal link of the built book (docs/book) and of README.md.

A link to a page that does not exist, or to an anchor a page does not have,
is an error: the book is read offline and on GitHub, and a dead link is a
newcomer's dead end. External links (http, https, mailto) are not fetched:
CI has no internet. Run after `mdbook build docs`.
"""
import html.parser
import pathlib
import re
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs" / "book"


class Page(html.parser.HTMLParser):
    """The ids a page defines and the links it holds."""

    def __init__(self):
        super().__init__()
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if "name" in attrs and tag == "a":
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def parse(path, cache={}):
    if path not in cache:
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        cache[path] = page
    return cache[path]


def external(link):
    return re.match(r"^[a-z][a-z0-9+.-]*:", link) is not None


def check_book():
    errors = []
    pages = sorted(BOOK.rglob("*.html"))
    if not pages:
        return [f"{BOOK} has no pages: run `mdbook build docs` first"]
    for path in pages:
        for link in parse(path).links:
            # "/" is the site root of the 404 page, wherever the book is served.
            if external(link) or link.startswith("/"):
                continue
            target, _, fragment = link.partition("#")
            target = urllib.parse.unquote(target)
            file = (path.parent / target).resolve() if target else path
            if file.is_dir():
                file = file / "index.html"
            where = path.relative_to(BOOK)
            if not file.exists():
                errors.append(f"{where}: link to a missing page: {link}")
            elif fragment and file.suffix == ".html" and fragment not in parse(file).ids:
                errors.append(f"{where}: link to a missing anchor: {link}")
    return errors


def check_readme():
    errors = []
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        target = link.partition("#")[0]
        if external(link) or not target:
            continue
        if not (ROOT / target).exists():
            errors.append(f"README.md: link to a missing file: {link}")
    return errors


def main():
    errors = check_book() + check_readme()
    for error in errors:
        print(f"check-book-links: {error}", file=sys.stderr)
    pages = len(list(BOOK.rglob("*.html")))
    print(f"check-book-links: {pages} pages, {len(errors)} broken links")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
