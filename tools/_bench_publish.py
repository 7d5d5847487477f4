"""tools/bench --publish: puts one machine's table, written by tools/bench --markdown, into
docs/benchmarks.md's current figures, and moves the table it replaces to
docs/benchmarks-history.md (newest first, under the day it was superseded).

    python3 tools/_bench_publish.py NAME TABLE_FILE DOCS_DIR RECORDS

NAME names the machine's section ("1x H200, 16 cores"); a section of that name that tools/bench
published before is replaced in place, a new one goes first under "## Current figures". The
section sits between two comment lines that name it, so hand-written sections are never touched.
The same records published again (after a change of the table's format) replace the section and
leave the history as it is.
Both files are written whole to a temporary file beside them and renamed over the old one: a
failure leaves each file as it was. Exit codes: 0 published; 2 a NAME or folder that cannot be
used; 3 a file that cannot be read or does not have the shape described here.
"""
import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _checked_input import InputError, read_text  # noqa: E402

CURRENT = "## Current figures"
MAX_DOC = 16 << 20


def begin_marker(name):
    return f"<!-- tools/bench --publish: {name} (generated: re-run tools/bench --publish, do not edit) -->"


def end_marker(name):
    return f"<!-- tools/bench --publish end: {name} -->"


def check_name(name):
    if not name.strip() or len(name) > 100 or "\n" in name or "-->" in name or "<!--" in name:
        raise ValueError(f"the section name {name!r} must be one line of 1-100 characters without '<!--' or '-->'")


def measured_on(records, day):
    """The day the records were made: tools/bench names its folders bench-<UTC>; else the day given."""
    m = re.match(r"bench-(\d{4})(\d{2})(\d{2})T", records)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else day


def section(name, table, records, day):
    return (f"{begin_marker(name)}\n### {name}, {measured_on(records, day)} (`tools/bench`, records `{records}`)\n\n"
            f"{table.strip()}\n{end_marker(name)}\n")


def replace_section(doc, name, new):
    """doc with the section NAME replaced by new (or new put first under CURRENT); the old body or None."""
    begin, end = begin_marker(name), end_marker(name)
    if doc.count(begin) > 1 or doc.count(end) > 1:
        raise InputError(f"benchmarks.md holds the section {name!r} more than once")
    b = doc.find(begin)
    if b >= 0:
        e = doc.find(end, b)
        if e < 0:
            raise InputError(f"benchmarks.md: the section {name!r} has no end line ({end})")
        e += len(end)
        if e < len(doc) and doc[e] == "\n":
            e += 1
        old = doc[b + len(begin):e - len(end) - 1].strip("\n")
        return doc[:b] + new + doc[e:], old
    at = doc.find(CURRENT + "\n")
    if at < 0:
        raise InputError(f"benchmarks.md has no '{CURRENT}' heading to put the section under")
    at += len(CURRENT) + 1
    return doc[:at] + "\n" + new + doc[at:], None


def add_history(history, name, old, records, day):
    """history with the superseded section first, under the heading of the day."""
    body = re.sub(r"\A### [^\n]*\n", "", old.strip("\n") + "\n").strip("\n")
    entry = f"### {name}: superseded on {day} by records `{records}` (tools/bench --publish)\n\n{body}\n\n"
    first = re.search(r"^## ", history, re.M)
    if first is None:
        return history.rstrip("\n") + f"\n\n## {day}\n\n{entry}"
    at = first.start()
    if history.startswith(f"## {day}\n", at):
        at += len(f"## {day}\n")
        return history[:at] + "\n" + entry + history[at:].lstrip("\n")
    return history[:at] + f"## {day}\n\n{entry}" + history[at:]


def write_whole(path, text):
    tmp = f"{path}.publish-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def main(argv):
    if len(argv) != 5:
        print("usage: _bench_publish.py NAME TABLE_FILE DOCS_DIR RECORDS", file=sys.stderr)
        return 2
    name, table_file, docs, records = argv[1:]
    try:
        check_name(name)
    except ValueError as e:
        print(f"tools/bench: --publish: {e}", file=sys.stderr)
        return 2
    if not os.path.isdir(docs):
        print(f"tools/bench: --publish: {docs}: not a folder", file=sys.stderr)
        return 2
    cur_path, hist_path = os.path.join(docs, "benchmarks.md"), os.path.join(docs, "benchmarks-history.md")
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    try:
        table = read_text(table_file, "table", MAX_DOC)
        rows = [line for line in table.splitlines()
                if line.startswith("| ") and not line.startswith(("| figure |", "| --- |"))]
        if "| figure |" not in table or not rows:
            raise InputError(f"{table_file}: no table of figures (tools/bench --markdown found no record it knows)")
        doc = read_text(cur_path, "benchmarks.md", MAX_DOC)
        history = read_text(hist_path, "benchmarks history", MAX_DOC) if os.path.lexists(hist_path) else (
            "# Benchmarks: history\n")
        doc, old = replace_section(doc, name, section(name, table, records, day))
    except InputError as e:
        print(f"tools/bench: --publish: {e}", file=sys.stderr)
        return 3
    # The same records published again (the table's format changed): nothing is superseded.
    same = old is not None and f"records `{records}`)" in old.split("\n", 1)[0]
    if old is not None and not same:
        write_whole(hist_path, add_history(history, name, old, records, day))
    write_whole(cur_path, doc)
    print(f"tools/bench: published {name!r} in {cur_path}"
          + (" (the same records again: the history is unchanged)" if same else
             f"; the table it replaced is first in {hist_path}" if old is not None else " (a new section)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
