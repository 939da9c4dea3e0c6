"""The ORM recipes as docs/applications.md gives them: the ```python blocks of its "## ORMs"
section, run as they are, so that the documented code is the code under test."""
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HEADING = "## ORMs"


def section():
    """(file name, line number of the heading, text of the section up to the next heading
    of level 1 to 3)."""
    name = "docs/applications.md"
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        lines = f.read().split("\n")
    if HEADING not in lines:
        raise AssertionError(f"no '{HEADING}' section in {name}")
    start = lines.index(HEADING)
    end = start + 1
    while end < len(lines) and not re.match(r"#{1,3} ", lines[end]):
        end += 1
    return name, start + 1, "\n".join(lines[start:end])


def blocks():
    """Every ```python block of the section: (file name, first line number, source)."""
    name, first, text = section()
    found = []
    for m in re.finditer(r"^```python\n(.*?)^```$", text, re.M | re.S):
        found.append((name, first + text.count("\n", 0, m.start(1)), m.group(1)))
    return found


def block(marker):
    """The one block whose source contains marker."""
    hits = [b for b in blocks() if marker in b[2]]
    assert len(hits) == 1, f"{len(hits)} python blocks of '{HEADING}' hold {marker!r}, not one"
    return hits[0]


def run(found, namespace):
    """Runs a block in namespace; a traceback names the page's own lines."""
    name, line, source = found
    code = compile("\n" * (line - 1) + source, os.path.join(ROOT, name), "exec")
    exec(code, namespace)  # the page's code, as a reader would paste it
    return namespace
