#!/usr/bin/env python3
"""Checks the project's Markdown documentation (standard library only).

For README.md and every docs/**/*.md (and, with --all-tracked, every *.md file git tracks):

- every relative link `[text](path)`, `[text](path#anchor)`, `![alt](path)` and reference
  definition `[label]: path` points to an existing file or directory, relative to the linking
  file; paths that lead out of the repository (such as `../shared/...`) are not checked;
- every `#anchor`, in the same file or in another .md file, matches a heading of the target
  under GitHub's slug rules (lowercase; punctuation other than `-` and `_` removed; spaces
  become `-`; repeated headings get `-1`, `-2`, ...) or an explicit `<a name=...>`/`id=...`;
- README.md has at most 250 lines;
- every file under docs/ is linked from README.md, and every .md page in docs/ starts with a
  `# Title` line and links back to the README.

External links (http, https, mailto, ...) are not fetched. Links inside fenced code blocks and
inline code spans are ignored.

Prints each problem as `file:line: message` and exits 1 if there is any; otherwise prints a
one-line summary and exits 0.

    tests/check_docs.py                 # README.md and docs/
    tests/check_docs.py --all-tracked   # also every other tracked .md file
"""

import argparse
import os
import re
import subprocess
import sys
import urllib.parse

README_MAX_LINES = 250

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# [text](target "title") or ![alt](target); one level of nested brackets in the text.
LINK_RE = re.compile(
    r"(!?)\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\(\s*(<[^>\n]*>|[^)\s]*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
REFDEF_RE = re.compile(r"^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)")
HTML_ANCHOR_RE = re.compile(r"""<a\s[^>]*?(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def blank_code(lines):
    """The lines with fenced code blocks emptied (line numbers kept)."""
    out, fence = [], None
    for line in lines:
        m = FENCE_RE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                out.append("")
            else:
                out.append(line)
        else:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and line.strip() == m.group(1):
                fence = None
            out.append("")
    return out


def strip_code_spans(text):
    """Replaces inline code spans with spaces (newlines kept), paragraph by paragraph."""
    paragraphs = re.split(r"(\n[ \t]*\n)", text)
    result = []
    for para in paragraphs:
        out, i, n = [], 0, len(para)
        while i < n:
            if para[i] == "\\" and i + 1 < n:
                out.append(para[i:i + 2])
                i += 2
                continue
            if para[i] == "`":
                j = i
                while j < n and para[j] == "`":
                    j += 1
                ticks = para[i:j]
                close = re.compile(r"(?<!`)" + ticks + r"(?!`)")
                m = close.search(para, j)
                if m:
                    span = para[i:m.end()]
                    out.append(re.sub(r"[^\n]", " ", span))
                    i = m.end()
                    continue
                out.append(ticks)
                i = j
                continue
            out.append(para[i])
            i += 1
        result.append("".join(out))
    return "".join(result)


def heading_text(raw):
    """The rendered text of a heading's inline Markdown, as GitHub slugs it."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", raw)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = re.sub(r"\\(.)", r"\1", text)  # escapes
    return text.strip()


def slugify(text):
    """GitHub's heading anchor: lowercase, punctuation but `-` and `_` removed, spaces to `-`."""
    text = text.lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "-_ ")
    return text.replace(" ", "-")


def anchors_of(lines):
    """Every anchor a Markdown file defines: heading slugs (with GitHub's -1, -2) and HTML ids."""
    code_free = blank_code(lines)
    anchors, seen = set(), {}

    def add(slug):
        if slug in seen:
            seen[slug] += 1
            while f"{slug}-{seen[slug]}" in seen:
                seen[slug] += 1
            unique = f"{slug}-{seen[slug]}"
            seen[unique] = 0
        else:
            seen[slug] = 0
            unique = slug
        anchors.add(unique)

    prev = ""
    for idx, line in enumerate(code_free):
        m = ATX_RE.match(line)
        if m and lines[idx] == line:
            add(slugify(heading_text(m.group(2) or "")))
        elif SETEXT_RE.match(line) and prev.strip() and lines[idx] == line \
                and not ATX_RE.match(prev) and not prev.lstrip().startswith(("|", ">", "- ", "* ", "+ ")) \
                and not re.match(r"^ {0,3}(=+|-+)[ \t]*$", prev):
            add(slugify(heading_text(prev.strip())))
        for a in HTML_ANCHOR_RE.findall(line):
            anchors.add(a)
        prev = line
    return anchors


class Checker:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.problems = []
        self.anchor_cache = {}
        self.links = 0
        self.anchors_checked = 0

    def rel(self, path):
        return os.path.relpath(path, self.root)

    def problem(self, path, line, message):
        self.problems.append(f"{self.rel(path)}:{line}: {message}")

    def anchors(self, path):
        if path not in self.anchor_cache:
            with open(path, encoding="utf-8") as f:
                self.anchor_cache[path] = anchors_of(f.read().split("\n"))
        return self.anchor_cache[path]

    def links_of(self, path):
        """(line, target) of every link of the file outside code."""
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        code_free = blank_code(lines)
        text = strip_code_spans("\n".join(code_free))
        found = []
        for m in LINK_RE.finditer(text):
            target = m.group(3)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            line = text.count("\n", 0, m.start(3)) + 1
            found.append((line, target))
        for idx, line in enumerate(text.split("\n")):
            m = REFDEF_RE.match(line)
            if m:
                target = m.group(2)
                if target.startswith("<") and target.endswith(">"):
                    target = target[1:-1]
                found.append((idx + 1, target))
        return lines, found

    def check_file(self, path):
        """Checks the links of one file; returns the set of files and directories it links to."""
        lines, found = self.links_of(path)
        targets = set()
        for line, target in found:
            self.links += 1
            if not target:
                self.problem(path, line, "empty link target")
                continue
            if SCHEME_RE.match(target) or target.startswith("//"):
                continue  # external: not fetched
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            anchor = urllib.parse.unquote(anchor)
            if file_part:
                if file_part.startswith("/"):
                    resolved = os.path.normpath(os.path.join(self.root, file_part.lstrip("/")))
                else:
                    resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if os.path.commonpath([self.root, os.path.abspath(resolved)]) != self.root:
                    continue  # outside the repository (e.g. ../shared/...): not checked
                if not os.path.exists(resolved):
                    self.problem(path, line, f"broken link: {target} ({self.rel(resolved)} does not exist)")
                    continue
                targets.add(os.path.realpath(resolved))
            else:
                resolved = path
            if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
                self.anchors_checked += 1
                if anchor not in self.anchors(resolved):
                    where = "" if resolved == path else f" in {self.rel(resolved)}"
                    self.problem(path, line, f"no heading or anchor #{anchor}{where}")
        return lines, targets

    def run(self, files):
        readme = os.path.join(self.root, "README.md")
        docs = os.path.join(self.root, "docs")
        readme_targets = set()
        for path in files:
            lines, targets = self.check_file(path)
            if path == readme:
                readme_targets = targets
                count = len(lines) - (1 if lines and lines[-1] == "" else 0)
                if count > README_MAX_LINES:
                    self.problem(path, README_MAX_LINES + 1,
                                 f"README.md has {count} lines, at most {README_MAX_LINES} allowed: move detail into docs/")
            elif os.path.commonpath([docs, path]) == docs and path.endswith(".md"):
                first = lines[0] if lines else ""
                if not first.startswith("# "):
                    self.problem(path, 1, "a docs page starts with a `# Title` line")
                if os.path.realpath(readme) not in targets:
                    self.problem(path, 1, "a docs page links back to the README (../README.md)")
        if os.path.isdir(docs):
            for dirpath, dirnames, filenames in os.walk(docs):
                dirnames.sort()
                for name in sorted(filenames):
                    full = os.path.realpath(os.path.join(dirpath, name))
                    if full not in readme_targets:
                        self.problem(readme, 1, f"{self.rel(full)} is not linked from README.md")
        return self.problems


def doc_files(root, all_tracked):
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames.sort()
        files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".md")]
    if all_tracked:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.md"],
                             capture_output=True, text=True, check=True).stdout
        files += [os.path.join(root, p) for p in out.split("\0") if p]
    seen, unique = set(), []
    for f in files:
        f = os.path.realpath(f)
        if f not in seen and os.path.isfile(f):
            seen.add(f)
            unique.append(f)
    return unique


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                        help="the repository root (default: this script's parent directory's parent)")
    parser.add_argument("--all-tracked", action="store_true",
                        help="also check every *.md file git tracks")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    if not os.path.isfile(os.path.join(root, "README.md")):
        print(f"check_docs: no README.md in {root}", file=sys.stderr)
        return 1
    files = doc_files(root, args.all_tracked)
    checker = Checker(root)
    problems = checker.run(files)
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs: {len(problems)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"check_docs: OK: {len(files)} files, {checker.links} links, "
          f"{checker.anchors_checked} anchors checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
