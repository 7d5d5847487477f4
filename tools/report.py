#!/usr/bin/env python3
"""One self-contained report.html for a contrast or a study folder (scalebench report DIR).

Reads what the drivers wrote — contrast.json, or summary.json and runs.jsonl — and the run
records they name, and writes DIR/report.html: what ran and where (machine: CPU, the GPUs used
with driver, CUDA and NCCL; versions, git hash, every command line), the table (it fits a 1300 px
window; on a phone each row is a card), and the figures as inline SVG (no network, no script):

  contrast: speed-up over single-core with the ideal (the cores), parallel efficiency, where the
            time goes (compute / communication / host<->device, stacked), rate per row
  study:    speed-up and efficiency with the ideal line (against the named baseline: the ratio
            against size, break-even line, crossover marked), where the time goes, rate against
            size (crossover marked), joules per verified result against size (against cores or
            GPUs when the size is not swept; each series' least-energy run starred, the crossover
            in energy marked)
  contrast: joules per verified result by mode
  both:     the energy figures only when the rows (or their records) carry joules per verified
            result; without, one sentence says no run's counters were read and why; each joule
            figure says its interval: the timed interval (the time column's), the whole repeat
            with its check (marked "rep": a timed interval too short for the counters), or not
            stated (marked "?": a record from before the records said so);
            predicted against measured, when the records carry a "prediction"

  scalebench report DIR [--out FILE]      (tools/report DIR runs this script the same way)
  report.py --check                        (exit 0 if matplotlib loads, else 3)
  report.py --compare FILE --out PAGE      the page of a comparison, FILE the --json of `scalebench
                                           compare` (its --report runs this): what was compared
                                           (inputs, hosts, versions), each matched run's phases A
                                           and B side by side (medians, ratio and interval, p,
                                           verdict; slower marked) with a bar figure, the unmatched
                                           runs; with --history each run's trend per phase and a
                                           line figure. Drawn without matplotlib.

Inputs: every file read (contrast.json, summary.json, runs.jsonl, each record they name, a
comparison) must be a regular file (or a link to one) of at most 256 MiB; its kind is checked on
the opened file without blocking, so a FIFO, a device (/dev/zero), a socket or a folder is refused
at once. Its shape is
checked before anything is drawn: invalid UTF-8, text that is not JSON (NaN and Infinity
included: the line names the field that holds it), JSON that breaks the rule every reader of
records applies (a byte-order mark, a key twice in one object, a number beyond a double's range,
more than 64 levels deep; loads_strict), a field of the wrong type, a negative or non-finite
number (an energy's per_result_j, mean_w, run_j, GFLOP/J alike), a record that breaks the record
rule (check_run_record: a time outside [1e-12, 3.2e9] s, a figure above 1e18, a command_line that
is not a list of strings) — each is one line naming the file and the field. Every figure is
printed legibly (fixed: four significant digits where fixed decimals would be a row of digits),
and a figure derived by division only where it is finite. A runs.jsonl line is used or left out by the drivers' rule
(runs_line below; docs/output.md, "Reading runs.jsonl"); one left out is named in a warning. A
record path outside the folder is not followed (the record of the same name inside the folder is
read instead). Every string is drawn as plain text (no TeX) and escaped in the page.

Output (--out, default DIR/report.html), the rule of every scalebench output file: a regular file
or a new path is replaced atomically (written beside it, then renamed; a link is followed); a
character device or a FIFO (/dev/null, /dev/stdout) is written in place, never replaced (a FIFO
nobody reads is refused, not waited on); a folder, a socket or a block device is refused before
any work. SIGINT, SIGTERM and SIGHUP stop the drawing: no partial page and no temporary file
stays, and the exit code is 128 + the signal.

Needs python3-matplotlib (but for --compare). Exit codes:
  0    the page is written (its path is printed, and written to --page-path-file when given)
  2    not a contrast or study folder (or nothing finished in it), an input that is not valid
       (not UTF-8, not JSON, a field of the wrong type), an empty --out
  3    matplotlib missing; an input that cannot be read (not a regular file, too large,
       unreadable); the page cannot be written; an internal error of this script
  128+n  stopped by signal n (130 SIGINT, 143 SIGTERM, 129 SIGHUP)
"""
import argparse
import datetime
import html
import io
import json
import math
import os
import re
import signal
import stat
import sys
import tempfile
import warnings

PHASES = (("compute", "compute", "#4c72b0"), ("communication", "communication", "#dd8452"),
          ("transfer", "host<->device", "#55a868"))
INPUT_LIMIT = 256 << 20  # bytes, as the binary's input files (include/scalebench/base/input_file.hpp)
HTML_TEXT_LIMIT = 4000  # characters of one string on the page
FIGURE_TEXT_LIMIT = 48  # characters of one label in a figure
STOP_SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class Bad(Exception):
    """Ends the script with one line and an exit code (2 bad input, 3 resource)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Stopped(BaseException):
    """A stop signal arrived (BaseException: no `except Exception` in a library swallows it)."""

    def __init__(self, sig):
        super().__init__(sig)
        self.sig = sig


STOP = []  # the stop signal that arrived, if any


def on_stop_signal(sig, _frame):
    # Raised wherever the interpreter is; where that is a callback whose exceptions Python ignores
    # (a weakref's or a __del__ inside matplotlib), the raise is lost, so the signal is also kept
    # here and stop_point() raises it again before anything is written.
    if not STOP:
        STOP.append(sig)
    raise Stopped(sig)


def stop_point():
    """Raises Stopped if a stop signal arrived, even one whose first raise a callback swallowed."""
    if STOP:
        raise Stopped(STOP[0])


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Bad(2, message)


def one_line(text, limit=600):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def esc(v):
    return html.escape(clip(v), quote=True)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def clean(s):
    """A string safe to draw and to encode: control characters and lone surrogates replaced."""
    return _CONTROL.sub("\ufffd", s)


def clip(v, limit=HTML_TEXT_LIMIT):
    s = clean(str(v))
    return s if len(s) <= limit else f"{s[:limit]}… ({len(s) - limit} more characters)"


def fig_text(v):
    """A label for a figure: short, and never read as TeX (see plt_module)."""
    s = clean(str(v))
    s = s if len(s) <= FIGURE_TEXT_LIMIT else s[:FIGURE_TEXT_LIMIT - 1] + "…"
    return s if PARSE_MATH_OFF else s.replace("$", r"\$")


PARSE_MATH_OFF = False  # set by plt_module where matplotlib has text.parse_math


def fmt_rate(v, unit):
    if not v:
        return "-"
    if unit == "samples/s":
        for div, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:.3g} {p}samples/s"
        return f"{v:.3g} samples/s"
    # GFLOP/s scaled so that four digits show without an exponent (23.14 TFLOP/s, not 2.314e+04).
    for div, p in ((1e6, "P"), (1e3, "T")):
        if v >= div:
            return f"{v / div:.4g} {p}FLOP/s"
    return f"{v:.4g} GFLOP/s"


# What a row's joules cover (energy "interval"): the timed interval (the time column's), the whole
# repeat with its check (a record whose timed interval is too short for the counters), or not
# stated (a record from before the records said so). Its words and the table's mark.
INTERVALS = {"timed": ("J of the timed interval", ""),
             "repeat": ("J of the whole repeat with its check", " rep"),
             "unstated": ("J per verified result, interval not stated", " ?")}


def joules(r):
    """A row's joules per verified result, None when not counted."""
    return (r.get("energy") or {}).get("j")


def interval_of(r):
    """The interval a row's joules cover (a key of INTERVALS)."""
    return (r.get("energy") or {}).get("interval") or "unstated"


def fmt_joules(r):
    j = joules(r)
    if j is None:
        return "-"
    return (fixed(j, 0) if j >= 100 else f"{j:.3g}") + INTERVALS[interval_of(r)][1]


def joules_label(rows):
    """The axis label of rows' joules: their interval's words, or the intervals they mix."""
    kinds = [k for k in INTERVALS if any(interval_of(r) == k for r in rows)]
    if len(kinds) == 1:
        return INTERVALS[kinds[0]][0]
    return "joules per verified result (" + ", ".join(INTERVALS[k][0] for k in kinds) + ")"


def marks_note(rows):
    """What the table's marks on joules mean, for the marks it shows ("" for none)."""
    kinds = {interval_of(r) for r in rows if r["status"] == "ok" and joules(r) is not None}
    marks = [f"{INTERVALS[k][1].strip()}: {INTERVALS[k][0]}" for k in ("repeat", "unstated") if k in kinds]
    if not marks:
        return ""
    return ('<p class="note" id="energy-intervals">J timed: the joules of each repeat\'s timed interval, the time '
            "column's; marked " + esc("; ".join(marks)) + ".</p>")


def fmt_num(v, digits=4):
    return "-" if v is None or not is_finite(v) else f"{v:.{digits}g}"


FIXED_LIMIT = 1e6  # beyond it a fixed-point figure is a long row of digits (figure_text.cpp)


def fixed(v, decimals):
    """A figure as the drivers' tables print it (fixed_text, src/drivers/report/figure_text.hpp):
    `decimals` after the point where that shows it (0, or 10^-decimals <= |v| < 1e6), else four
    significant digits ("3.2e+21"); "-" for None or a value that is not finite."""
    if v is None or not is_finite(v):
        return "-"
    if v == 0 or 10.0 ** -decimals <= abs(v) < FIXED_LIMIT:
        return f"{v:.{decimals}f}"
    return f"{v:.4g}"


def finite_ratio(a, b):
    """a / b where both are finite, b > 0 and the quotient finite; None otherwise (figure_text.hpp)."""
    if a is None or b is None or not is_finite(a) or not is_finite(b) or not b > 0:
        return None
    q = a / b
    return q if math.isfinite(q) else None


def finite_product(a, b):
    """a × b, None where it leaves a double's range."""
    q = a * b
    return q if math.isfinite(q) else None


# ---------------------------------------------------------------------------------------------
# Reading: the kind checked on the opened file, a bounded read, then the shape of every field.


def kind_of(mode):
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def read_input(path, origin=""):
    """The text of a regular file; None when nothing is there. Never blocks, never reads without end."""
    data = read_input_bytes(path, origin)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        named = f"{path}{f' (named by {origin})' if origin else ''}"
        raise Bad(2, f"{named} is not valid UTF-8 (byte {e.start}, line {line})") from None


def read_input_bytes(path, origin=""):
    """The bytes of a regular file; None when nothing is there (read_input's rules)."""
    named = f"{path}{f' (named by {origin})' if origin else ''}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        try:
            what = kind_of(os.stat(path).st_mode)  # a socket cannot be opened (ENXIO)
        except OSError:
            what = ""
        if what and e.errno != 13:
            raise Bad(3, f"cannot read {named}: it is {what}; give a regular file") from None
        raise Bad(3, f"cannot read {named}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Bad(3, f"cannot read {named}: it is {kind_of(st.st_mode)}; give a regular file")
        if st.st_size > INPUT_LIMIT:
            raise Bad(3, f"cannot read {named}: it is {st.st_size} bytes, more than the {INPUT_LIMIT >> 20} MiB "
                         "an input may hold")
        chunks, total = [], 0
        while total <= INPUT_LIMIT:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > INPUT_LIMIT:
            raise Bad(3, f"cannot read {named}: more than the {INPUT_LIMIT >> 20} MiB an input may hold")
    except OSError as e:
        raise Bad(3, f"cannot read {named}: {e.strerror}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


class NotJsonNumber:
    """NaN, Infinity or -Infinity where a JSON text holds it (found only to name its field)."""

    def __init__(self, name):
        self.name = name


def constant_path(value, path=""):
    """The field of the first NotJsonNumber in a parsed value ("runs[0].energy.per_result_j"), or None."""
    if isinstance(value, NotJsonNumber):
        return path or "the top level"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = constant_path(v, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else str(k))
        if found:
            return found
    return None


def loads_strict(text):
    """json.loads by the rule every reader of a record or a runs.jsonl line applies (json_text_problem
    in src/drivers/results/jsonl.hpp): no byte-order mark, no key twice in one object, no number
    beyond a double's range, no lone surrogate, at most MAX_JSON_DEPTH levels deep (JsonRuleError);
    no NaN or Infinity (ValueError naming the constant and its field)."""
    if text.startswith("\ufeff"):
        raise JsonRuleError("starts with a byte-order mark")

    def no_constant(name):
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        value = json.loads(text, parse_constant=no_constant, parse_float=finite_float, parse_int=bounded_int,
                           object_pairs_hook=unique_pairs)
    except (json.JSONDecodeError, LineProblem):
        raise
    except ValueError as e:
        try:
            field = constant_path(json.loads(text, parse_constant=NotJsonNumber))
        except (ValueError, RecursionError):
            field = None
        raise ValueError(f"{e}, at {clip(field, 200)}" if field else str(e)) from None
    depth = value_depth(value)
    if depth > MAX_JSON_DEPTH:
        raise JsonRuleError(f"is not valid JSON (nested too deeply: {depth} levels, more than {MAX_JSON_DEPTH})")
    no_lone_surrogate(value)
    return value


def parse_json(text, where):
    try:
        return loads_strict(text)
    except json.JSONDecodeError as e:
        raise Bad(2, f"{where} is not valid JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except LineProblem as e:
        raise Bad(2, f"{where} {e}") from None
    except ValueError as e:
        raise Bad(2, f"{where} is not valid JSON ({e})") from None
    except RecursionError:
        raise Bad(2, f"{where} is not valid JSON (nested too deeply)") from None


def read_json(path, origin=""):
    text = read_input(path, origin)
    return None if text is None else parse_json(text, f"{path}{f' (named by {origin})' if origin else ''}")


class Shape:
    """Typed access to one JSON object, each wrong field one line naming the file and the field."""

    def __init__(self, value, where):
        if not isinstance(value, dict):
            raise Bad(2, f"{where}: expected a JSON object, found {type_name(value)}")
        self.d = value
        self.where = where

    def bad(self, key, expected):
        return Bad(2, f"{self.where}: \"{clip(key, 80)}\" must be {expected}, found {type_name(self.d.get(key))}")

    def has(self, key):
        return self.d.get(key) is not None

    def text(self, key, default=None):
        """A string, or a number or boolean shown as text."""
        v = self.d.get(key)
        if v is None:
            return default
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return clean(v)
        if isinstance(v, (int, float)) and is_finite(v):
            return f"{v:g}" if isinstance(v, float) else str(v)
        raise self.bad(key, "a string")

    def string(self, key, default=None):
        v = self.d.get(key)
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.bad(key, "a string")
        return clean(v)

    def number(self, key, default=None):
        """A finite number >= 0."""
        v = self.d.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not is_finite(v) or v < 0:
            raise self.bad(key, "a finite number >= 0")
        return float(v)

    def figure(self, key, default=None):
        """A rate, a share, joules or watts read back from a record: a number in [0, MAX_FIGURE]
        (record_check.hpp's bound)."""
        v = self.number(key, default)
        if v is not None and v > MAX_FIGURE:
            raise self.bad(key, f"a number in [0, {MAX_FIGURE:g}]")
        return v

    def seconds(self, key, default=None):
        """A run's measured time read back from its record: 0 or seconds in [MIN_SECONDS,
        MAX_SECONDS] (record_check.hpp's bound)."""
        v = self.number(key, default)
        if v is not None and v != 0 and not MIN_SECONDS <= v <= MAX_SECONDS:
            raise self.bad(key, f"a measured time: 0 or seconds in [{MIN_SECONDS:g}, {MAX_SECONDS:g}]")
        return v

    def integer(self, key, default=None):
        v = self.d.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > 1 << 53:
            raise self.bad(key, "a whole number >= 0")
        return v

    def boolean(self, key, default=None):
        v = self.d.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.bad(key, "true or false")
        return v

    def obj(self, key):
        """The object under `key` (an empty one when absent)."""
        v = self.d.get(key)
        if v is None:
            return Shape({}, f"{self.where} {key}")
        if not isinstance(v, dict):
            raise self.bad(key, "an object")
        return Shape(v, f"{self.where} {key}")

    def objects(self, key):
        """The objects of the list under `key`."""
        v = self.d.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.bad(key, "a list")
        return [Shape(x, f"{self.where} {key}[{i}]") for i, x in enumerate(v)]

    def texts(self, key):
        """A list of strings, or one string, as one string (None when absent)."""
        v = self.d.get(key)
        if isinstance(v, list):
            for i, x in enumerate(v):
                if not isinstance(x, (str, int, float)) or isinstance(x, bool):
                    raise Bad(2, f"{self.where}: \"{key}\"[{i}] must be a string, found {type_name(x)}")
            return clean(" ".join(str(x) for x in v))
        return self.text(key)

    def text_map(self, key):
        """An object of strings (numbers shown as text), its keys and values cleaned."""
        o = self.obj(key)
        return {clean(k): o.text(k, "") for k in o.d}

    def number_map(self, key):
        """An object of figures (number in [0, MAX_FIGURE]) by name."""
        o = self.obj(key)
        return {k: o.figure(k, 0.0) for k in o.d}


def is_finite(v):
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


def type_name(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return clip(repr(v), 40)
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "nothing"}.get(type(v), type(v).__name__)


def inside(folder, path):
    """Whether `path` (links followed) lies inside `folder`."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip("/") + "/")


def record_of(folder, path, origin):
    """A run record's facts: the path as written when it lies inside the folder, else the same name
    inside the folder or its runs/ (a moved folder). None when no record is there. A record is read
    by the rule every reader applies (loads_strict, check_run_record): one that breaks it is Bad."""
    if not path:
        return None
    name = os.path.basename(path)
    candidates = [path] if inside(folder, path) else []
    if name not in ("", ".", ".."):
        candidates += [os.path.join(folder, name), os.path.join(folder, "runs", name)]
    for p in candidates:
        r = read_json(p, origin)
        if r is not None:
            where = f"{p} (named by {origin})"
            facts = record_facts(Shape(r, where))
            # The record rule every reader of a record applies (check_run_record, record_check.cpp).
            try:
                check_run_record(Field(r))
            except LineProblem as e:
                raise Bad(2, f"{where}: {e}") from None
            return facts
    return None


GIT_SOURCES = {"export": "exported tree", "none": "built from a tree without its own .git"}


def record_facts(rec):
    """What the page shows of a record, its shape checked."""
    versions = rec.obj("versions")
    ob = versions.d.get("openblas")
    cuda = versions.d.get("cuda")
    gpus = rec.obj("gpus")
    git, source = versions.text("git"), versions.text("git_source")
    return {
        "hosts": rec.texts("hosts"),
        "cpu": rec.text("cpu_model"),
        # Each GPU once: (host, UUID, model, driver release).
        "gpu_devices": [(d.text("host", ""), d.text("uuid", ""), d.text("name", "?"), d.text("driver_release", ""))
                        for d in gpus.objects("devices")],
        "gpu_none": gpus.text("reason") if gpus.boolean("used", True) is False else None,
        "scalebench": versions.text("scalebench"),
        "git": f"{git} ({GIT_SOURCES[source]})" if git and source in GIT_SOURCES else git,
        "mpi": versions.text("mpi_library"),
        "openblas": versions.obj("openblas").text("config") if isinstance(ob, dict) else versions.text("openblas"),
        "cuda": cuda_text(versions.obj("cuda")) if isinstance(cuda, dict)
        else clean(json.dumps(cuda, sort_keys=True)) if isinstance(cuda, list) else versions.text("cuda"),
        "nccl": versions.text("nccl"),
        "prediction": prediction_of(rec),
        "energy": record_energy(rec),
        "bound": rec.obj("comm_bound").number("moved_to_bound"),
    }


def cuda_text(c):
    """The CUDA line of a record's versions.cuda object: runtime, the driver's CUDA version, cuBLAS."""
    parts = [f"runtime {c.text('runtime')}" if c.has("runtime") else None,
             f"driver supports {c.text('driver')}" if c.has("driver") else None,
             f"cuBLAS {c.text('cublas')}" if c.has("cublas") else None]
    return ", ".join(p for p in parts if p) or None


def gpu_items(recs):
    """The page's GPU lines from its records: every GPU any run used, each once (host and UUID), as
    "count × model" per model, and the drivers; without any, why not (the records' reasons)."""
    devices, why = {}, []
    for r in recs:
        for host, uuid, name, release in r.get("gpu_devices") or []:
            devices.setdefault((host, uuid or f"{name} #{len(devices)}"), (name, release))
        if r.get("gpu_none") and r["gpu_none"] not in why:
            why.append(r["gpu_none"])
    if not devices:
        return [("GPUs", f"none used ({'; '.join(why)})" if why else None)]
    models, releases = {}, []
    for name, release in devices.values():
        models[name] = models.get(name, 0) + 1
        if release and release not in releases:
            releases.append(release)
    hosts = len({h for h, _ in devices})
    where = f" on {hosts} hosts" if hosts > 1 else ""
    return [("GPUs", ", ".join(f"{n} × {m}" for m, n in models.items()) + where),
            ("GPU driver", ", ".join(releases) or None)]


def record_energy(rec):
    """A record's "energy" section as the page uses it (energy_of), its numbers checked; None without one.
    The timed interval's joules where the record gives them (timed_j), else the whole repeat's
    (timed_j null: too short for the counters), else an older record's, their interval not stated."""
    if not rec.has("energy"):
        return None
    e = rec.obj("energy")
    for k in ("run_j", "mean_w", "gflop_per_j", "j_per_1e9_samples", "timed_mean_w"):
        e.number(k)
    reasons = [f"{name}: {e.obj(key).text('reason')}" for key, name in (("cpu", "CPU"), ("gpu", "GPU"))
               if e.obj(key).has("reason")]
    counted = "+".join(k for k in ("cpu", "gpu") if e.obj(k).boolean("counted", False))
    j, interval = e.number("per_result_j"), "unstated"
    if "timed_j" in e.d:
        timed = e.obj("timed_j").number("median")
        j, interval = (timed, "timed") if timed else (j, "repeat")
    return energy_figures(j, interval, "; ".join(reasons) or None, counted)


def energy_figures(j, interval, reason, counted):
    """{"j": joules per verified result (None: not counted), "interval" (INTERVALS), "reason", "counted"}."""
    return {"j": j if j else None, "interval": interval, "reason": None if j else (reason or "no counter"),
            "counted": counted or None}


def energy_of(row, rec):
    """A row's energy: the drivers' summary of it in the row ("energy": j and its interval, or an
    older summary's per_result_j, counted, or reason), else its record's; None when neither has one."""
    if row.has("energy"):
        e = row.obj("energy")
        for k in ("mean_w", "gflop_per_j", "j_per_1e9_samples", "timed_mean_w", "timed_j", "per_result_j"):
            e.number(k)
        interval = e.string("interval")
        if e.has("j") or interval is not None:
            j, interval = e.number("j"), interval if interval in INTERVALS else "unstated"
        else:  # a summary from before "j": its per_result_j, the interval not stated
            j, interval = e.number("per_result_j"), "unstated"
        return energy_figures(j, interval, e.text("reason"), e.text("counted"))
    return rec["energy"] if rec else None


def prediction_of(rec):
    """(predicted, measured) end-to-end seconds, from a record's "prediction" section, else None."""
    if not rec.has("prediction"):
        return None
    p = rec.obj("prediction")
    if not p.boolean("available", True):
        return None
    e = p.obj("end_to_end")
    pred, meas = e.number("predicted_s"), e.number("measured_s")
    return (pred, meas) if pred and meas else None


def command_line_of(doc):
    return doc.texts("command_line")


def load_contrast(folder):
    path = os.path.join(folder, "contrast.json")
    c = read_json(path)
    if c is None:
        return None
    doc = Shape(c, path)
    rows = []
    for i, r in enumerate(doc.objects("runs")):
        ok = r.string("status", "") == "ok"
        share = r.number_map("share")
        time = r.seconds("time_s") if ok else None
        rec = record_of(folder, r.string("record"), f"{path} runs[{i}] record")
        rows.append({
            "workload": r.text("workload", "?"),
            "mode": r.text("mode", "?"),
            "size": r.text("size", ""),
            "ranks": r.integer("ranks"),
            "threads": r.integer("threads_per_rank"),
            "gpus": r.integer("gpus", 0),
            "nodes": r.integer("nodes"),
            "time": time,
            "rate": r.figure("rate") if ok else None,
            "unit": r.text("rate_unit", ""),
            "speedup": r.number("speedup_vs_single_core"),
            "efficiency": r.number("parallel_efficiency"),
            "phases": {k: share.get(k, 0.0) * time for k, _, _ in PHASES} if ok and time else None,
            "status": r.text("status", ""),
            "reason": r.text("reason", ""),
            "command": r.texts("command") or "",
            "record": rec,
            "prediction": rec["prediction"] if rec else None,
            "energy": energy_of(r, rec) if ok else None,
            "bound": rec["bound"] if rec and ok else None,
        })
    context = [("host", doc.text("host")), ("launcher", doc.text("launcher")), ("nodes", doc.text("nodes")),
               ("results", doc.text("out_dir"))]
    return {"kind": "contrast", "title": f"contrast on {doc.text('host', '?')}", "rows": rows, "context": context,
            "command_line": command_line_of(doc), "finished": doc.text("finished_at"), "description": None}


# ---------------------------------------------------------------------------------------------
# The runs.jsonl rule, the same as the drivers' (src/drivers/results/jsonl.hpp, record_check.cpp;
# docs/output.md, "Reading runs.jsonl"): a line both use, or both leave out with a warning.

MAX_JSON_DEPTH = MAX_LINE_DEPTH = 64  # jsonl.hpp, kMaxJsonDepth
DOUBLE_MAX = sys.float_info.max
# The bounds of a record's figures (record_check.hpp; docs/output.md, "Reading runs.jsonl"): a
# measured time is 0 or in [MIN_SECONDS, MAX_SECONDS], a predicted one in [0, MAX_SECONDS], any
# other figure in [0, MAX_FIGURE].
MIN_SECONDS = 1e-12
MAX_SECONDS = 3.2e9
MAX_FIGURE = 1e18


class LineProblem(Exception):
    """What makes one runs.jsonl line unusable."""


def json_text_depth(text):
    """The deepest nesting of objects and lists in JSON text, strings skipped (never recursing)."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "}]":
            depth -= 1
    return deepest


def json_kind(v):
    if isinstance(v, bool):
        return "true or false"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            type(None): "null"}.get(type(v), "not a JSON value")


class JsonRuleError(LineProblem):
    """JSON text that breaks the rule every record and runs.jsonl line is read by, said as the
    drivers say it ("holds the key "n" twice in one object")."""


def unique_pairs(items):
    """An object's pairs as a dict; a key given twice breaks the rule (the drivers refuse it too)."""
    seen = set()
    for k, _ in items:
        if k in seen:
            raise JsonRuleError(f'holds the key "{clip(k, 80)}" twice in one object')
        seen.add(k)
    return dict(items)


BEYOND_DOUBLE = "is not valid JSON (a number beyond a double's range)"


def finite_float(s):
    v = float(s)
    if not math.isfinite(v):
        raise JsonRuleError(BEYOND_DOUBLE)
    return v


def bounded_int(s):
    if len(s.lstrip("-")) > 309:  # more digits than DOUBLE_MAX has (JSON has no leading zeros)
        raise JsonRuleError(BEYOND_DOUBLE)
    v = int(s)
    if abs(v) > DOUBLE_MAX:
        raise JsonRuleError(BEYOND_DOUBLE)
    return v


def value_depth(v):
    """The deepest nesting of objects and lists in a parsed value (json_text_depth of its text)."""
    deepest, todo = 0, [(v, 1)]
    while todo:
        x, d = todo.pop()
        if isinstance(x, (dict, list)):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in (x.values() if isinstance(x, dict) else x))
    return deepest


def strict_loads(text):
    """json.loads as the drivers' parser reads a line: no NaN or Infinity, no number beyond a double,
    no key twice in one object, no lone surrogate (LineProblem or ValueError)."""

    def no_constant(name):
        raise LineProblem("is not valid JSON (NaN or Infinity)")

    value = json.loads(text, parse_constant=no_constant, parse_float=finite_float, parse_int=bounded_int,
                       object_pairs_hook=unique_pairs)
    no_lone_surrogate(value)
    return value


def no_lone_surrogate(v):
    for s in ([v] if isinstance(v, str) else list(v) + list(v.values()) if isinstance(v, dict)
              else v if isinstance(v, list) else ()):
        if isinstance(s, str):
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                raise LineProblem("is not valid JSON (a lone UTF-16 surrogate)") from None
        else:
            no_lone_surrogate(s)


class Field:
    """JsonField's checks (include/scalebench/base/json_field.hpp), LineProblem naming the field."""

    def __init__(self, v, path=""):
        self.v, self.path = v, path

    def path_of(self, key):
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key, what):
        raise LineProblem(f"{self.path_of(key) if key else (self.path or 'the top level')} {what}")

    def has(self, key):
        return isinstance(self.v, dict) and self.v.get(key) is not None

    def at(self, key):
        if not isinstance(self.v, dict):
            self.fail("", f"must be an object (got {json_kind(self.v)})")
        if key not in self.v:
            self.fail(key, "is missing")
        return self.v[key]

    def sub(self, key):
        v = self.at(key)
        if not isinstance(v, dict):
            self.fail(key, f"must be an object (got {json_kind(v)})")
        return Field(v, self.path_of(key))

    def list(self, key):
        v = self.at(key)
        if not isinstance(v, list):
            self.fail(key, f"must be a list (got {json_kind(v)})")
        return [Field(x, f"{self.path_of(key)}[{i}]") for i, x in enumerate(v)]

    def text(self, key):
        v = self.at(key)
        if not isinstance(v, str):
            self.fail(key, f"must be a string (got {json_kind(v)})")
        return v

    def flag(self, key):
        v = self.at(key)
        if not isinstance(v, bool):
            self.fail(key, f"must be true or false (got {json_kind(v)})")
        return v

    def number(self, key):
        v = self.at(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"must be a number (got {json_kind(v)})")
        return float(v)

    def texts(self, key):
        for e in self.list(key):
            if not isinstance(e.v, str):
                e.fail("", f"must be a string (got {json_kind(e.v)})")

    def text_or(self, key):
        if self.has(key):
            self.text(key)

    def flag_or(self, key):
        return self.flag(key) if self.has(key) else False

    def nonnegative(self, key):
        """A rate, joules, watts or a ratio: a number in [0, MAX_FIGURE]."""
        if self.has(key):
            d = self.number(key)
            if not 0 <= d <= MAX_FIGURE:
                self.fail(key, f"must be a number in [0, {MAX_FIGURE:g}] (got {clip(repr(self.v[key]), 40)})")

    def predicted_seconds(self, key):
        """A model's time: seconds in [0, MAX_SECONDS]."""
        if self.has(key):
            d = self.number(key)
            if not 0 <= d <= MAX_SECONDS:
                self.fail(key, f"must be seconds in [0, {MAX_SECONDS:g}] (got {clip(repr(self.v[key]), 40)})")

    def measured_seconds(self, key):
        """A measured time: 0, or seconds in [MIN_SECONDS, MAX_SECONDS] (key None: this value)."""
        if key is not None and not self.has(key):
            return
        v = self.v if key is None else self.v[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"must be a number (got {json_kind(v)})")
        if not (v == 0 or MIN_SECONDS <= v <= MAX_SECONDS):
            self.fail(key, f"must be a measured time: 0 or seconds in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] "
                           f"(got {clip(repr(v), 40)})")

    def count(self, key):
        if self.has(key):
            d = self.number(key)
            if d != math.floor(d):
                self.fail(key, f"must be a whole number (got {clip(repr(self.v[key]), 40)})")
            if not 0 <= d <= 2**31 - 1:
                self.fail(key, f"must be a whole number in [0, {2**31 - 1}] (got {clip(repr(self.v[key]), 40)})")

    def text_or_texts(self, key):
        if self.has(key) and not isinstance(self.v[key], str):
            self.texts(key)


def check_run_record(r):
    """The fields of a run record the drivers and this script read back (record_check.cpp's list)."""
    if not isinstance(r.v, dict):
        r.fail("", f"must be an object (got {json_kind(r.v)})")
    r.text_or("subcommand")
    if r.has("command_line"):
        r.texts("command_line")
    r.count("ranks")
    r.flag_or("ok")
    if r.has("config"):
        c = r.sub("config")
        c.text_or("backend")
        c.count("threads_per_rank")
    if r.has("phases"):
        phases = r.sub("phases")
        for name in phases.v:
            p = phases.sub(name)
            p.measured_seconds("median_s")
            if p.has("per_repeat_max_s"):
                for t in p.list("per_repeat_max_s"):
                    t.measured_seconds(None)
    if r.has("rates"):
        rates = r.sub("rates")
        for k in ("compute_gflops", "end_to_end_gflops", "samples_per_s", "end_to_end_samples_per_s"):
            rates.nonnegative(k)
    check_record_prediction(r)
    check_record_energy(r)
    check_record_peers(r)
    check_record_context(r)


def check_record_prediction(r):
    if not r.has("prediction"):
        return
    p = r.sub("prediction")
    if not p.flag("available"):
        return
    e = p.sub("end_to_end")
    e.predicted_seconds("predicted_s")
    e.measured_seconds("measured_s")
    p.nonnegative("miss")
    p.flag_or("flagged")
    p.text_or("worst_phase")


def check_record_energy(r):
    if not r.has("energy"):
        return
    e = r.sub("energy")
    for k in ("run_j", "mean_w", "gflop_per_j", "j_per_1e9_samples", "per_result_j", "timed_mean_w"):
        e.nonnegative(k)
    if e.has("timed_j"):
        t = e.sub("timed_j")
        for k in ("median", "min", "max"):
            t.nonnegative(k)
    for side in ("cpu", "gpu"):
        if e.has(side):
            s = e.sub(side)
            s.flag_or("counted")
            s.text_or("reason")


def check_record_peers(r):
    if not r.has("peers") or not r.sub("peers").has("scalapack"):
        return
    p = r.sub("peers").sub("scalapack")
    p.text_or("call")
    p.count("block_width")
    variants = p.sub("variants")
    for name in ("tuned", "shipped"):
        v = variants.sub(name)
        v.count("k_step")
        v.sub("pre_distributed").measured_seconds("median_s")
        v.sub("end_to_end").measured_seconds("median_s")
        v.nonnegative("ratio_run_vs_peer")
        v.nonnegative("ratio_end_to_end_run_vs_peer")


def check_record_context(r):
    r.text_or_texts("hosts")
    r.text_or("cpu_model")
    if r.has("gpus"):
        g = r.sub("gpus")
        g.flag_or("used")
        g.text_or("reason")
        if g.has("devices"):
            for d in g.list("devices"):
                if not isinstance(d.v, dict):
                    d.fail("", f"must be an object (got {json_kind(d.v)})")
                for k in ("host", "uuid", "name", "driver_release"):
                    d.text_or(k)
    if r.has("versions"):
        v = r.sub("versions")
        for k in ("scalebench", "git", "git_source", "mpi_library", "nccl"):
            v.text_or(k)
        if v.has("cuda") and isinstance(v.v["cuda"], dict):
            for k in ("runtime", "driver", "cublas"):
                v.sub("cuda").text_or(k)
        if v.has("openblas") and not isinstance(v.v["openblas"], str):
            v.sub("openblas").text_or("config")
    if r.has("comm_bound"):
        r.sub("comm_bound").nonnegative("moved_to_bound")


def check_line_fields(value):
    f = Field(value)
    f.text("key")
    f.text("status")
    for k in ("reason", "record_path", "study"):
        f.text_or(k)
    f.flag_or("launch_failed")
    f.text_or_texts("command")
    if f.has("record"):
        check_run_record(f.sub("record"))
    # A finished run is one whose record was read back (jsonl.cpp, check_line_fields).
    if value["status"] == "ok" and not (f.has("record") and f.sub("record").has("phases")):
        f.fail("record", 'must be the run\'s record with its phases when status is "ok"')
    # A run whose check failed exits 4 and is written as failed: its times measure no correct result.
    if value["status"] == "ok" and f.sub("record").v.get("ok") is False:
        f.fail("record", 'is of a run that failed its check ("ok": false) while status is "ok"')


def runs_line(part):
    """(the line's value, None) when the line is used, else (None, what is wrong with it)."""
    if part.startswith(b"\xef\xbb\xbf"):
        return None, "starts with a byte-order mark"
    try:
        text = part.decode("utf-8")
    except UnicodeDecodeError:
        return None, "is not valid JSON (not UTF-8)"
    depth = json_text_depth(text)
    if depth > MAX_LINE_DEPTH:
        return None, f"nests {depth} levels deep, more than {MAX_LINE_DEPTH}"
    try:
        value = strict_loads(text)
        if not isinstance(value, dict):
            return None, f"is {json_kind(value)}, not a JSON object"
        check_line_fields(value)
    except LineProblem as e:
        return None, str(e)
    except (ValueError, RecursionError) as e:
        return None, f"is not valid JSON ({one_line(e, 120)})"
    return value, None


def load_runs_jsonl(folder):
    """runs.jsonl's usable lines by record path. A line the rule (runs_line) refuses is left out
    with a warning that names it, as the drivers leave it out; a blank line is skipped."""
    path = os.path.join(folder, "runs.jsonl")
    data = read_input_bytes(path)
    lines = {}
    if data is None:
        return lines
    for n, part in enumerate(data.split(b"\n"), 1):
        if not part.strip(b" \t\r"):
            continue
        value, why = runs_line(part)
        if why:
            print(f"scalebench report: warning: {path} line {n} is cut or garbled, or not a driver's line: "
                  f"{one_line(clip(why, 300))}; left in place and not used", file=sys.stderr)
            continue
        line = Shape(value, f"{path} line {n}")
        rec = line.d.get("record")
        lines[line.string("record_path")] = {
            "command": line.texts("command") or "",
            "record": record_facts(line.obj("record")) if rec is not None else None,
        }
    return lines


def crossover_of(group, key):
    """A group's crossover under `key` ({"kind", "size", "text"}), None when it has none."""
    if not group.has(key):
        return None
    c = group.obj(key)
    cross = {"kind": c.string("kind", ""), "size": c.number("size"), "text": c.text("text", "")}
    if cross["kind"] == "at" and cross["size"] is None:
        raise group.bad(key, "an object with the size it is at")
    return cross


def load_study(folder):
    path = os.path.join(folder, "summary.json")
    s = read_json(path)
    if s is None:
        return None
    doc = Shape(s, path)
    lines = load_runs_jsonl(folder)
    rows = []
    for i, r in enumerate(doc.objects("runs")):
        record_path = r.string("record_path")
        line = lines.get(record_path) if record_path else None
        rec = (line or {}).get("record") or record_of(folder, record_path, f"{path} runs[{i}] record_path")
        ok = r.string("status", "") == "ok"
        ph = r.number_map("phases_s")
        coords = r.text_map("options")
        coords["ranks"] = str(r.integer("ranks"))
        rows.append({
            "index": r.integer("index", 0),
            "options": coords,
            "ranks": r.integer("ranks"),
            "nodes": r.integer("nodes"),
            "resources": r.number("resources"),
            "gpu": r.boolean("gpu", False),
            "time": r.seconds("time_s") if ok else None,
            "rate": r.figure("rate") if ok else None,
            "unit": r.text("rate_unit", ""),
            "speedup": r.number("speedup"),
            "efficiency": r.number("efficiency"),
            "phases": {k: ph.get(k, 0.0) for k, _, _ in PHASES} if ok else None,
            "status": r.text("status", ""),
            "reason": r.text("reason", ""),
            "command": (line or {}).get("command", ""),
            "record": rec,
            "prediction": rec["prediction"] if rec else None,
            "energy": energy_of(r, rec) if ok else None,
            "bound": rec["bound"] if rec and ok else None,
            "time_optimal": r.boolean("time_optimal", False),
            "energy_optimal": r.boolean("energy_optimal", False),
        })
    baseline = None
    if doc.has("baseline"):
        b = doc.obj("baseline")
        groups = []
        for g in b.objects("groups"):
            cross = crossover_of(g, "crossover")
            energy_cross = crossover_of(g, "energy_crossover")
            if energy_cross:
                energy_cross["same_as_time"] = g.obj("energy_crossover").boolean("same_as_time", False)
                interval = g.obj("energy_crossover").string("interval")
                energy_cross["interval"] = interval if interval in INTERVALS else "unstated"
            groups.append({"group": g.text("group", "runs"), "crossover": cross, "energy_crossover": energy_cross,
                           "points": [{"size": p.number("size"), "ratio": p.number("ratio", 0.0),
                                       "energy_ratio": p.number("energy_ratio")} for p in g.objects("points")]})
        baseline = {"size_key": b.text("size_key") or None, "options": b.text_map("options"), "groups": groups}
    context = [("study", doc.text("study")), ("description", doc.text("description")), ("file", doc.text("file")),
               ("launcher", doc.text("launcher")), ("runs file", doc.text("runs_file"))]
    return {"kind": "study", "title": f"study {doc.text('study', '?')}", "rows": rows, "context": context,
            "command_line": command_line_of(doc), "finished": doc.text("finished_at"),
            "description": doc.text("description"), "name": doc.text("study", "study"),
            "workload": doc.text("workload"), "baseline": baseline}


# ---------------------------------------------------------------------------------------------
# Figures: matplotlib drawn to SVG, inlined. Every string is drawn as text: no TeX, no mathtext.


def plt_module():
    global PARSE_MATH_OFF
    import matplotlib

    matplotlib.use("Agg")
    settings = {"svg.fonttype": "none", "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                "svg.hashsalt": "scalebench", "text.usetex": False}
    if "text.parse_math" in matplotlib.rcParams:  # matplotlib >= 3.5; else fig_text escapes "$"
        settings["text.parse_math"] = False
        PARSE_MATH_OFF = True
    matplotlib.rcParams.update(settings)
    import matplotlib.pyplot as plt

    return plt


def plain_log_ticks(fig):
    """Log axes labelled "512", "1000", "1e+06" as plain text: matplotlib's default labels are
    mathtext, which is off here (every string is drawn as text) and would show as "$10^{3}$"."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())


class Figures:
    def __init__(self, plt):
        self.plt = plt
        self.items = []  # (id, caption, svg)
        self.count = 0

    def add(self, fig_id, caption, fig):
        stop_point()
        plain_log_ticks(fig)
        buf = io.StringIO()
        fig.tight_layout()
        fig.savefig(buf, format="svg")
        self.plt.close(fig)
        svg = buf.getvalue()
        svg = svg[svg.index("<svg"):]
        # Sized by the page (CSS), not by matplotlib: drop the fixed width and height.
        svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', svg, count=1)
        # Ids unique across the page (several SVGs share matplotlib's names).
        self.count += 1
        prefix = f"f{self.count}-"
        svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{prefix}{m.group(1)}"', svg)
        svg = svg.replace("<svg", f'<svg role="img" aria-label="{esc(caption)}"', 1)
        self.items.append((clip(fig_id, 120), caption, svg))


def width_for(count):
    return min(60.0, max(5.5, 0.55 * count + 2))


def bar_phases(plt, labels, phases, title, ylabel):
    fig, ax = plt.subplots(figsize=(width_for(len(labels)), 4))
    x = list(range(len(labels)))
    bottom = [0.0] * len(labels)
    for key, name, color in PHASES:
        vals = [p.get(key, 0.0) if p else 0.0 for p in phases]
        ax.bar(x, vals, bottom=bottom, label=name, color=color)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(x)
    ax.set_xticklabels([fig_text(s) for s in labels], rotation=40, ha="right", fontsize="small")
    ax.set_ylabel(ylabel)
    ax.set_title(fig_text(title))
    ax.legend(fontsize="small")
    return fig


def prediction_figure(figs, rows, title):
    pts = [(r["prediction"], r) for r in rows if r["prediction"]]
    if not pts:
        return
    plt = figs.plt
    fig, ax = plt.subplots(figsize=(5.5, 4.4))
    pred = [p[0] for p, _ in pts]
    meas = [p[1] for p, _ in pts]
    lo, hi = min(pred + meas) / 1.5, max(pred + meas) * 1.5
    ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="grey", alpha=0.15, label="±15%")
    ax.plot([lo, hi], [lo, hi], "--", color="grey", label="predicted = measured")
    ax.scatter(pred, meas, color="#c44e52", zorder=3, label="runs")
    for (p, r) in pts:
        ax.annotate(fig_text(r.get("label") or f"#{r.get('index')}"), (p[0], p[1]), fontsize="x-small",
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted end to end, s")
    ax.set_ylabel("measured end to end, s")
    ax.set_title(fig_text(title))
    ax.legend(fontsize="small")
    figs.add("fig-prediction", "Predicted against measured end-to-end time per run (the model's ±15% band).", fig)


def contrast_figures(figs, data):
    plt = figs.plt
    rows = data["rows"]
    for w in dict.fromkeys(r["workload"] for r in rows):
        ok = [r for r in rows if r["workload"] == w and r["status"] == "ok"]
        if not ok:
            continue
        wt = fig_text(w)
        labels = [r["mode"] for r in ok]
        x = list(range(len(ok)))
        # Speed-up over single-core, with the ideal (its cores) for the CPU rows.
        fig, ax = plt.subplots(figsize=(width_for(len(ok)), 4))
        sp = [r["speedup"] or 0 for r in ok]
        ax.bar(x, sp, color=["#8172b3" if r["gpus"] else "#4c72b0" for r in ok], label="measured")
        ideal = [(i, (r["ranks"] or 0) * (r["threads"] or 0)) for i, r in enumerate(ok)
                 if not r["gpus"] and r["mode"] != "naive" and r["ranks"]]
        if ideal:
            ax.scatter([i for i, _ in ideal], [c for _, c in ideal], marker="_", s=900, color="black", zorder=3,
                       label="ideal (cores)")
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(x)
        ax.set_xticklabels([fig_text(s) for s in labels], rotation=40, ha="right", fontsize="small")
        if max(sp) > 50:
            ax.set_yscale("log")
        ax.set_ylabel("speed-up over single-core (rate ratio)")
        ax.set_title(f"{wt}: speed-up")
        ax.legend(fontsize="small")
        figs.add(f"fig-speedup-{w}", f"{w}: speed-up over one core (rates: the naive rows run a smaller problem); "
                 "the bars' ideal is the cores they use.", fig)
        # Efficiency of the CPU rows.
        eff = [(r["mode"], r["efficiency"]) for r in ok if r["efficiency"]]
        if eff:
            fig, ax = plt.subplots(figsize=(width_for(len(eff)), 3.6))
            ax.bar(range(len(eff)), [100 * e for _, e in eff], color="#4c72b0")
            ax.axhline(100, color="grey", linestyle="--", label="ideal")
            ax.set_xticks(range(len(eff)))
            ax.set_xticklabels([fig_text(m) for m, _ in eff], rotation=40, ha="right", fontsize="small")
            ax.set_ylabel("parallel efficiency, %")
            ax.set_title(f"{wt}: efficiency per core")
            ax.legend(fontsize="small")
            figs.add(f"fig-efficiency-{w}", f"{w}: parallel efficiency = speed-up / cores.", fig)
        fig = bar_phases(plt, labels, [r["phases"] for r in ok], f"{w}: where the time goes",
                         "seconds per repeat (median)")
        figs.add(f"fig-phases-{w}", f"{w}: compute, communication and host<->device time per row.", fig)
        fig, ax = plt.subplots(figsize=(width_for(len(ok)), 4))
        ax.bar(x, [r["rate"] or 0 for r in ok], color=["#8172b3" if r["gpus"] else "#4c72b0" for r in ok])
        if any(r["rate"] for r in ok):
            ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([f"{fig_text(r['mode'])}\n{fig_text(r['size'])}" for r in ok], rotation=40, ha="right",
                           fontsize="small")
        ax.set_ylabel(f"rate, end to end ({fig_text(ok[0]['unit'])})")
        ax.set_title(f"{wt}: rate")
        figs.add(f"fig-rate-{w}", f"{w}: rate end to end per row (log scale).", fig)
        contrast_energy_figure(figs, w, ok)
    prediction_figure(figs, [dict(r, label=f"{r['workload']} {r['mode']}") for r in rows], "predicted against measured")


def counters_text(rows):
    counted = sorted({r["energy"]["counted"] for r in rows if r["energy"]["counted"]})
    return f"counted by {', '.join(counted)}" if counted else "counted"


def contrast_energy_figure(figs, w, ok):
    """Joules per verified result per row of one workload: only the rows whose counters counted."""
    rows = [r for r in ok if joules(r) is not None]
    if not rows:
        return
    plt = figs.plt
    fig, ax = plt.subplots(figsize=(width_for(len(rows)), 4))
    ys = [joules(r) for r in rows]
    ax.bar(range(len(rows)), ys, color=["#8172b3" if r["gpus"] else "#4c72b0" for r in rows])
    if max(ys) > 50 * min(ys):
        ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{fig_text(r['mode'])}\n{fig_text(r['size'])}" for r in rows], rotation=40, ha="right",
                       fontsize="small")
    ax.set_ylabel(fig_text(joules_label(rows)))
    ax.set_title(f"{fig_text(w)}: energy per result")
    figs.add(f"fig-energy-{w}", f"{w}, per row: {joules_label(rows)} ({counters_text(rows)}; fewer is better; the "
             "naive rows run a smaller problem).", fig)


def study_energy_figure(figs, data, ok, size_key, by_size):
    """Joules per verified result against size (a study that sweeps it), else against cores or GPUs,
    per series; each series' least-energy run starred, the crossover in energy marked."""
    swept = [k for k, _ in doc_sweep(data)]
    hidden = {"threads", size_key} if by_size else {"threads", "ranks", "nodes", "ranks_per_node"}
    series = {}
    for r in ok:
        x = num(r["options"].get(size_key)) if by_size else r["resources"]
        if joules(r) is None or not x:
            continue  # not counted, or not drawable on log axes
        key = " ".join(f"{k}={v}" for k, v in sorted(r["options"].items()) if k in swept and k not in hidden)
        series.setdefault(key, []).append((x, joules(r), r))
    if not series:
        return
    plt = figs.plt
    fig, ax = plt.subplots(figsize=(6.2, 4.4))
    for key, pts in series.items():
        pts.sort(key=lambda p: p[0])
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fig_text(key or "runs"))
        best = [p for p in pts if p[2].get("energy_optimal")]
        if best:
            ax.scatter([p[0] for p in best], [p[1] for p in best], marker="*", s=220, color=line.get_color(),
                       edgecolors="black", zorder=4)
    xs = {p[0] for pts in series.values() for p in pts}
    if len(xs) > 1:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    crossed = []
    if by_size and data["baseline"]:
        crossed = [dict(g, group=f"{g['group']} in energy", crossover=g["energy_crossover"])
                   for g in data["baseline"]["groups"] if g["energy_crossover"]]
        mark_crossovers(ax, crossed, size_key)
    what = size_key if by_size else "cores (CPU runs) or GPUs"
    ax.set_xlabel(fig_text(what))
    rows = [p[2] for pts in series.values() for p in pts]
    ax.set_ylabel(fig_text(joules_label(rows)))
    ax.set_title(fig_text(f"{data['name']}: energy per result"))
    ax.legend(fontsize="x-small")
    figs.add("fig-energy", f"Joules per verified result against {what} per series: {joules_label(rows)} "
             f"({counters_text(rows)}; fewer is better)" + ("; a star: the least energy of its series" if any(r.get("energy_optimal") for r in rows)
                          else "") + ("; the crossover in energy marked" if crossed else "") + ".", fig)


def study_size_key(data):
    base = data["baseline"]
    if base and base["size_key"]:
        return base["size_key"]
    return "samples" if data["workload"] == "montecarlo" else "n"


def num(v):
    """A size from an option's text (1_000_000, 1e6): a finite number > 0, else None."""
    try:
        x = float(str(v).replace("_", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) and x > 0 else None


def mark_crossovers(ax, groups, size_key):
    for g in groups:
        c = g["crossover"] or {}
        if c.get("kind") == "at" and c["size"]:
            ax.axvline(c["size"], color="#c44e52", linestyle=":", linewidth=1.5)
            ax.annotate(f"{fig_text(g['group'])}: {fig_text(size_key)} ≈ {fixed(c['size'], 0)}", (c["size"], 0.03),
                        xycoords=("data", "axes fraction"), fontsize="small", color="#c44e52", ha="center",
                        va="bottom", bbox={"boxstyle": "round", "fc": "white", "ec": "#c44e52", "alpha": 0.9})


def study_figures(figs, data):
    plt = figs.plt
    ok = [r for r in data["rows"] if r["status"] == "ok"]
    if not ok:
        return
    size_key = study_size_key(data)
    sizes = {num(r["options"].get(size_key)) for r in ok if size_key in r["options"]} - {None}
    base = data["baseline"]
    name = data["name"]
    swept = [k for k, _ in doc_sweep(data)]
    # Log axes only where there are values > 0 to draw (matplotlib refuses others).
    drawn = [(g, [(p["size"], p["ratio"]) for p in g["points"] if p["size"] and p["ratio"]])
             for g in (base["groups"] if base else [])]
    if base and any(pts for _, pts in drawn):
        groups = base["groups"]
        named = " ".join(f"{k}={v}" for k, v in base["options"].items())
        fig, ax = plt.subplots(figsize=(6.2, 4.4))
        for g, pts in drawn:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fig_text(g["group"]))
        ax.axhline(1.0, color="grey", linestyle="--", label=fig_text(f"break-even with {named}"))
        if len({p[0] for _, pts in drawn for p in pts}) > 1:
            ax.set_xscale("log", base=2)
            mark_crossovers(ax, groups, size_key)
        ax.set_yscale("log")
        ax.set_xlabel(fig_text(size_key))
        ax.set_ylabel(fig_text(f"speed-up over {named}"))
        ax.set_title(fig_text(f"{name}: speed-up over the baseline"))
        ax.legend(fontsize="small")
        texts = "; ".join(f"{g['group']}: crossover {g['crossover']['text']}" for g in groups if g["crossover"])
        figs.add("fig-speedup", f"Speed-up over the baseline ({named}) per group against {size_key}"
                 + (f"; {texts}" if texts else "") + ".", fig)
    elif not base:
        series = {}
        for r in ok:
            key = " ".join(f"{k}={v}" for k, v in sorted(r["options"].items()) if k not in ("threads", "ranks"))
            series.setdefault(key, []).append(r)
        multi = {k: v for k, v in series.items() if len(v) > 1}
        if multi:
            for fig_id, what in (("fig-speedup", "speedup"), ("fig-efficiency", "efficiency")):
                fig, ax = plt.subplots(figsize=(6.2, 4.4))
                most = 1
                for key, rs in multi.items():
                    rs = sorted((r for r in rs if r["resources"] is not None), key=lambda r: r["resources"])
                    xs = [r["resources"] for r in rs if r[what]]
                    ys = [r[what] * (100 if what == "efficiency" else 1) for r in rs if r[what]]
                    most = max([most] + xs)
                    ax.plot(xs, ys, marker="o", label=fig_text(key or "runs"))
                ideal = [1, most] if what == "speedup" else [100, 100]
                ax.plot([1, most], ideal, "--", color="grey", label="ideal")
                ax.set_xlabel("cores (CPU runs) or GPUs")
                ax.set_ylabel("speed-up (end to end)" if what == "speedup" else "efficiency, %")
                ax.set_title(fig_text(f"{name}: {'speed-up' if what == 'speedup' else 'efficiency'}"))
                ax.legend(fontsize="x-small")
                figs.add(fig_id, ("Speed-up" if what == "speedup" else "Parallel efficiency")
                         + " per series against cores or GPUs, with the ideal line.", fig)
    labels = [f"#{r['index']} " + " ".join(f"{v}" for k, v in r["options"].items() if k in swept) for r in ok]
    fig = bar_phases(plt, labels, [r["phases"] for r in ok], f"{name}: where the time goes",
                     "seconds (median, slowest rank)")
    figs.add("fig-phases", "Compute, communication and host<->device seconds per run.", fig)
    series = {}
    for r in ok:
        if num(r["options"].get(size_key)) is None or not r["rate"]:
            continue  # not drawable on log axes
        key = " ".join(f"{k}={v}" for k, v in sorted(r["options"].items()) if k in swept and k not in ("threads", size_key))
        series.setdefault(key, []).append(r)
    if len(sizes) > 1 and series:
        fig, ax = plt.subplots(figsize=(6.2, 4.4))
        for key, rs in series.items():
            rs = sorted(rs, key=lambda r: num(r["options"].get(size_key)))
            ax.plot([num(r["options"].get(size_key)) for r in rs], [r["rate"] for r in rs], marker="o",
                    label=fig_text(key or "runs"))
        if base:
            mark_crossovers(ax, base["groups"], size_key)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(fig_text(size_key))
        ax.set_ylabel(f"rate, end to end ({fig_text(ok[0]['unit'])})")
        ax.set_title(fig_text(f"{name}: rate against size"))
        ax.legend(fontsize="x-small")
        figs.add("fig-rate", f"Rate against {size_key} per series (log-log)"
                 + (", the crossover marked." if base else "."), fig)
    study_energy_figure(figs, data, ok, size_key, len(sizes) > 1)
    prediction_figure(figs, ok, f"{name}: predicted against measured")


def doc_sweep(data):
    """The swept keys, as the summary's runs show them (options that differ between runs)."""
    values = {}
    for r in data["rows"]:
        for k, v in r["options"].items():
            values.setdefault(k, set()).add(v)
    return [(k, vs) for k, vs in values.items() if len(vs) > 1]


# ---------------------------------------------------------------------------------------------
# The page.

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1400px;
       padding: 1rem; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5rem; margin: .2rem 0 .6rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; border-bottom: 1px solid #ddd; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: .84rem; min-width: 100%; }
th, td { padding: .3rem .4rem; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; }
th:first-child, td:first-child, td.l, th.l { text-align: left; }
th { background: #f5f5f7; position: sticky; top: 0; }
td.why { white-space: normal; min-width: 8rem; overflow-wrap: anywhere; }
tr.failed td, tr.timeout td { background: #fdecea; } tr.skipped td { color: #777; }
@media (max-width: 760px) {
  #results thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  #results, #results tbody { display: block; min-width: 0; }
  #results tr { display: grid; grid-template-columns: 1fr 1fr; column-gap: 1rem; border: 1px solid #ddd;
                border-radius: 6px; margin: .5rem 0; padding: .2rem .5rem; }
  #results td.wide, #results td.why { grid-column: 1 / -1; }
  #results td { display: flex; justify-content: space-between; gap: 1rem; border: 0; padding: .12rem 0;
                white-space: normal; text-align: right; overflow-wrap: anywhere; min-width: 0; }
  #results td::before { content: attr(data-label); font-weight: 600; text-align: left; flex: none; max-width: 45%; }
  #results td.key { font-weight: 600; }
}
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 460px), 1fr)); gap: 1rem; }
figure { margin: 0; border: 1px solid #eee; border-radius: 6px; padding: .4rem; background: #fff; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: .82rem; color: #444; padding: .3rem .2rem 0; }
dl.context { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; font-size: .9rem; }
dl.context dt { font-weight: 600; } dl.context dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font: .8rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f5f5f7; padding: .5rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.note { color: #555; font-size: .9rem; } .crossover { font-weight: 600; color: #a33; }
@media (max-width: 600px) { body { font-size: 14px; padding: .6rem; } dl.context { grid-template-columns: 1fr; } }
"""


def context_items(data):
    recs = [r["record"] for r in data["rows"] if r.get("record")]
    items = list(data["context"])
    items += [("driver command", data["command_line"]), ("finished", data["finished"])]

    def distinct(key):
        seen = []
        for r in recs:
            v = r.get(key)
            if v not in (None, "") and v not in seen:
                seen.append(v)
        return ", ".join(str(v) for v in seen) or None

    items += [("hosts", distinct("hosts")), ("CPU", distinct("cpu"))] + gpu_items(recs)
    items += [("scalebench", distinct("scalebench")), ("git", distinct("git")), ("MPI", distinct("mpi")),
              ("OpenBLAS", distinct("openblas")), ("CUDA", distinct("cuda")), ("NCCL", distinct("nccl"))]
    return [(k, v) for k, v in items if v not in (None, "")]


def td_class(i, count, kind):
    """A results cell's classes: text columns left-aligned (l), the row's name (key: workload and
    mode, or the run's number), the status with its reason wrapped (why), the phase shares (wide:
    a whole line of a phone's card)."""
    names = (0, 1) if kind == "contrast" else (0,)
    classes = (["l"] if i in (0, 1) or i == count - 1 else []) + (["key"] if i in names else []) \
        + (["why"] if i == count - 1 else []) + (["wide"] if i == count - 2 else [])
    return f' class="{" ".join(classes)}"' if classes else ""


def table_html(data):
    rows = data["rows"]
    has_pred = any(r["prediction"] for r in rows)
    if data["kind"] == "contrast":
        head = ["workload", "mode", "nodes", "size", "ranks × thr", "time s", "rate", "speed-up", "eff.",
                "J timed", "compute / comm / transfer", "status"]
    else:
        sweep = [k for k, _ in doc_sweep(data)]
        head = ["#", "nodes"] + sweep + ["cores or GPUs", "time s", "rate", "speed-up", "eff.", "J timed",
                                         "compute / comm / transfer s", "status"]
    if has_pred:
        head.insert(head.index("rate"), "predicted s")
    has_bound = any(r.get("bound") for r in rows)
    if has_bound:
        head.insert(head.index("J timed"), "× bound")
    out = ['<div class="scroll"><table id="results"><thead><tr>']
    out += [f'<th{" class=l" if h in ("workload", "mode", "status") else ""}>{esc(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        ok = r["status"] == "ok"
        ph = r["phases"] or {}
        if data["kind"] == "contrast":
            tot = sum(ph.values()) or 1
            cells = [r["workload"], r["mode"], r["nodes"] or "-", r["size"],
                     f"{r['ranks']}×{r['threads']}" + (f" {r['gpus']} GPU" if r["gpus"] else "") if r["ranks"] else "-"]
            where = " / ".join(fixed(finite_ratio(100 * ph.get(k, 0), tot), 0) + "%" for k, _, _ in PHASES) \
                if ok else "-"
        else:
            cells = [r["index"], r["nodes"] or "-"] + [r["options"].get(k, "-") for k in sweep]
            cells.append(f"{r['resources']}{' GPU' if r['gpu'] else ''}" if ok else "-")
            where = " / ".join(f"{ph.get(k, 0):.3g}" for k, _, _ in PHASES) if ok else "-"
        cells.append(fmt_num(r["time"]) + (" *" if r.get("time_optimal") else "") if ok else "-")
        if has_pred:
            cells.append(fmt_num(r["prediction"][0]) if r["prediction"] else "-")
        cells += [fmt_rate(r["rate"], r["unit"]) if ok else "-",
                  fixed(r["speedup"], 2) + "×" if ok and r["speedup"] else "-",
                  fixed(finite_product(100, r["efficiency"]), 0) + "%" if ok and r["efficiency"] else "-"]
        if has_bound:
            cells.append(fixed(r["bound"], 2) + "×" if r.get("bound") else "-")
        cells += [fmt_joules(r) + (" *" if r.get("energy_optimal") else ""), where,
                  r["status"] + (f": {r['reason']}" if r["reason"] and not ok else "")]
        # Each cell names its column (data-label): a phone shows a row as a card of label: value.
        tds = "".join(f'<td{td_class(i, len(cells), data["kind"])} data-label="{esc(h)}">{esc(c)}</td>'
                      for i, (h, c) in enumerate(zip(head, cells)))
        out.append(f'<tr class="{esc(r["status"])}">{tds}</tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def crossover_html(data):
    base = data["baseline"]
    if not base:
        return ""
    named = " ".join(f"{k}={v}" for k, v in base["options"].items())
    items = []
    for g in base["groups"]:
        ratios = ", ".join(f"{fixed(p['ratio'], 2)}× at {base['size_key'] or 'n'}={p['size']:g}" if p["size"]
                           else f"{fixed(p['ratio'], 2)}×" for p in g["points"])
        cross = (g["crossover"] or {}).get("text")
        energy = g["energy_crossover"]
        what = esc(INTERVALS[energy["interval"]][0]) if energy else ""
        in_energy = (f"; the same in energy ({what})" if energy["same_as_time"] else
                     f'; in energy ({what}) <span class="crossover">{esc(energy["text"])}</span>'
                     ) if energy and energy["text"] else ""
        items.append(f"<li>{esc(g['group'])}: {esc(ratios)}"
                     + (f'; crossover <span class="crossover">{esc(cross)}</span>' if cross else "") + in_energy
                     + "</li>")
    return (f'<section id="baseline"><h2>Against the baseline ({esc(named)})</h2>'
            f'<p class="note">speed-up = baseline time / time, the baseline being the run with {esc(named)} and the '
            f'same other values.</p><ul>{"".join(items)}</ul></section>')


def optima_note(data):
    if not any(r.get("time_optimal") for r in data["rows"]):
        return ""
    energy = any(r.get("energy_optimal") for r in data["rows"])
    return ('<p class="note" id="optima">* the fastest run of its series (time s)'
            + (" and the one with the least energy per verified result (J timed)" if energy else "")
            + "; a series: the runs alike in all but ranks, threads and nodes.</p>")


def energy_note(data):
    """One sentence where no finished run carries joules: why the page has no energy figure."""
    finished = [r for r in data["rows"] if r["status"] == "ok"]
    if any(joules(r) is not None for r in finished):
        return ""
    reason = next((r["energy"]["reason"] for r in finished if r["energy"] and r["energy"]["reason"]), None)
    return ('<p class="note" id="no-energy">No energy figure: no run\'s energy counters were read'
            + (f" ({esc(reason)})" if reason else " (its records carry no energy section)") + ".</p>")


def page(data, figs):
    description = data["description"]
    ctx = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in context_items(data))
    cmds = "\n".join(clip(f"{r['workload'] + ' ' + r['mode'] if data['kind'] == 'contrast' else '#' + str(r['index'])}: "
                          f"{r['command']}") for r in data["rows"] if r["command"])
    fig_html = "".join(f'<figure id="{esc(i)}">{svg}<figcaption>{esc(c)}</figcaption></figure>'
                       for i, c, svg in figs.items)
    ids = " ".join(i for i, _, _ in figs.items)
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scalebench {esc(data['title'])}</title>
<style>{CSS}</style></head>
<body data-kind="{esc(data['kind'])}" data-figures="{html.escape(ids, quote=True)}">
<h1>scalebench {esc(data['title'])}</h1>
<p class="note">{esc(description.rstrip('.') + '.' if description else '')} Report written {generated}; every figure is drawn from the
records in this folder.</p>
<section id="context"><h2>What ran, and where</h2><dl class="context">{ctx}</dl>
<details><summary>Every command line ({sum(1 for r in data['rows'] if r['command'])})</summary><pre id="commands">{html.escape(cmds)}</pre></details>
</section>
<section id="table"><h2>Results</h2>{table_html(data)}{optima_note(data)}{marks_note(data['rows'])}</section>
{crossover_html(data) if data['kind'] == 'study' else ''}
<section id="figures"><h2>Figures</h2>{energy_note(data)}<div class="figures">{fig_html}</div></section>
</body></html>
"""


# ---------------------------------------------------------------------------------------------
# The comparison page (scalebench compare --report; report.py --compare FILE --out PAGE): drawn
# from the document `scalebench compare --json` writes, its shape checked as every input's. It
# needs no matplotlib: its figures, a few bars and lines, are drawn here as SVG.

VERDICTS = {"slower": "▲ slower", "faster": "▼ faster", "same": "same", "too few repeats": "too few repeats"}
VERDICT_CLASSES = {"slower": "slower", "faster": "faster", "same": "same", "too few repeats": "too-few"}
VERDICT_COLOURS = {"slower": "#c44e52", "faster": "#55a868", "same": "#4c72b0", "too few repeats": "#8172b3"}
HISTORY_MARKS = {"slower": "+", "faster": "-", "too few repeats": "~", "same": ""}
A_COLOUR = "#a0a0a0"
# The trend's lines: no red or green, the colours of its slower and faster rings.
SERIES_COLOURS = ("#4c72b0", "#dd8452", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")
SIDE_FIELDS = (("hosts", "hosts"), ("cpu_model", "CPU"), ("gpu_models", "GPUs"), ("scalebench", "scalebench"),
               ("git", "git"), ("mpi_library", "MPI"))
RATIO_DRAW_LIMIT = 1e9  # a ratio drawn beyond it is drawn at it (the table says the number)

COMPARE_CSS = """
h3 { font-size: 1rem; margin: .4rem 0 .5rem; overflow-wrap: anywhere; }
section.run { border: 1px solid #ddd; border-radius: 6px; padding: .2rem .8rem .8rem; margin: 1rem 0; }
section.run.slower { border-left: 6px solid #c44e52; } section.run.faster { border-left: 6px solid #55a868; }
.run-body { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; align-items: start; }
.run-body.wide { grid-template-columns: minmax(0, 1fr); } .run-body.wide figure { max-width: 760px; }
@media (max-width: 1100px) { .run-body { grid-template-columns: minmax(0, 1fr); } .run-body figure { max-width: 760px; } }
span.verdict { font-weight: 600; padding: .05rem .4rem; border-radius: 4px; background: #eef1f7; white-space: nowrap; }
span.verdict.slower { background: #c44e52; color: #fff; } span.verdict.faster { background: #2f7d42; color: #fff; }
tr.slower td, td.slower { background: #fdecea; } tr.slower td.verdict, td.slower { color: #a3262a; font-weight: 600; }
tr.faster td, td.faster { background: #eaf5ec; } tr.faster td.verdict, td.faster { color: #2f7d42; }
tr.too-few td.verdict, td.too-few { color: #666; }
table.phases td.key { white-space: normal; overflow-wrap: anywhere; min-width: 6rem; }
p.alarm { background: #fdecea; border-left: 6px solid #c44e52; padding: .4rem .6rem; overflow-wrap: anywhere; }
table.sides td { white-space: normal; overflow-wrap: anywhere; text-align: left; min-width: 6rem; }
table.sides tr.differs td { background: #fff6e0; }
ul.differs, ul.keys { font-size: .85rem; overflow-wrap: anywhere; padding-left: 1.2rem; }
@media (max-width: 760px) {
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards, table.cards tbody { display: block; min-width: 0; }
  table.cards tr { display: grid; grid-template-columns: 1fr 1fr; column-gap: 1rem; border: 1px solid #ddd;
                   border-radius: 6px; margin: .5rem 0; padding: .2rem .5rem; }
  table.cards td { display: flex; justify-content: space-between; gap: 1rem; border: 0; padding: .12rem 0;
                   white-space: normal; text-align: right; overflow-wrap: anywhere; min-width: 0; }
  table.cards td::before { content: attr(data-label); font-weight: 600; text-align: left; flex: none; max-width: 45%; }
  table.cards td.key { font-weight: 600; } table.cards td.key, table.cards td.wide { grid-column: 1 / -1; }
}
"""


def svg_text(v, limit):
    """A figure's label: short, escaped."""
    s = clean(str(v))
    return esc(s if len(s) <= limit else s[:limit - 1] + "…")


def fmt_ratio(v):
    return fixed(v, 3)


def fmt_p(v):
    return "-" if v is None else f"{v:.2g}"


def strings_of(s, key):
    """The strings of the list under `key` ([] when absent)."""
    v = s.d.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise s.bad(key, "a list of strings")
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise Bad(2, f"{s.where}: \"{clip(key, 80)}\"[{i}] must be a string, found {type_name(x)}")
    return [clean(x) for x in v]


def number_or_none(v, where):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not is_finite(v) or v < 0:
        raise Bad(2, f"{where} must be a finite number >= 0 or null, found {type_name(v)}")
    return float(v)


def list_of(s, key, count):
    """The list under `key`, of `count` items."""
    v = s.d.get(key)
    if not isinstance(v, list) or len(v) != count:
        raise s.bad(key, f"a list of {count} items (one a folder)")
    return v


def verdict_of(s):
    v = s.d.get("verdict")
    if v not in VERDICTS:
        raise Bad(2, f"{s.where}: \"verdict\" must be one of {', '.join(VERDICTS)}, found "
                     f"{clip(repr(v), 40) if isinstance(v, str) else type_name(v)}")
    return v


def phase_of(p):
    """One phase of a run compared (to_json(PhaseComparison) in compare_runs.cpp)."""
    interval = p.d.get("interval")
    if interval is not None:
        if not isinstance(interval, list) or len(interval) != 2:
            raise p.bad("interval", "a list [low, high] or null")
        interval = [number_or_none(x, f"{p.where}: \"interval\"[{i}]") for i, x in enumerate(interval)]
    a, b = p.obj("a"), p.obj("b")
    return {"phase": p.text("phase", "?"), "a": a.number("median_s"), "b": b.number("median_s"),
            "na": a.integer("repeats"), "nb": b.integer("repeats"), "ratio": p.number("ratio"),
            "interval": interval, "p": p.number("p"), "verdict": verdict_of(p)}


def run_of(r):
    return {"key": r.text("key", "?"), "key_b": r.text("key_b"), "verdict": verdict_of(r),
            "phases": [phase_of(p) for p in r.objects("phases")],
            "context": [(c.text("what", "?"), c.text("a", ""), c.text("b", "")) for c in r.objects("context")],
            "predicted": r.number("predicted_ratio")}


def trend_of(r, folders):
    phases = []
    for t in r.objects("phases"):
        medians = [number_or_none(m, f"{t.where}: \"medians_s\"[{i}]")
                   for i, m in enumerate(list_of(t, "medians_s", folders))]
        against = [None if x is None else phase_of(Shape(x, f"{t.where} against_first[{i}]"))
                   for i, x in enumerate(list_of(t, "against_first", folders))]
        first = t.integer("first_change")
        if first is not None and (first >= folders or against[first] is None):
            raise t.bad("first_change", f"the index of a folder compared (0 to {folders - 1}) or null")
        phases.append({"phase": t.text("phase", "?"), "medians": medians, "against": against, "first_change": first,
                       "slower_at_last": t.boolean("slower_at_last", False)})
    return {"key": r.text("key", "?"), "phases": phases}


def side_of(s):
    ctx = s.obj("context")
    return {"path": s.text("path", "?"), "kind": s.text("kind", ""), "runs": s.integer("runs"),
            "no_ok_run": strings_of(s, "no_ok_run"),
            "context": [(label, ", ".join(strings_of(ctx, key))) for key, label in SIDE_FIELDS]}


def load_comparison(path):
    """The comparison in `path` (scalebench compare --json), its shape checked."""
    if path == "":
        raise Bad(2, "--compare needs a file name (got an empty string)")
    raw = read_json(path)
    if raw is None:
        raise Bad(3, f"cannot read {path}: it does not exist; give the --json of scalebench compare")
    doc = Shape(raw, path)
    if doc.d.get("subcommand") != "compare":
        raise Bad(2, f"{path}: \"subcommand\" must be \"compare\": give the --json of scalebench compare")
    o = doc.obj("options")
    data = {"command_line": doc.texts("command_line"), "exit_code": doc.integer("exit_code"),
            "options": {"min_change": o.number("min_change"), "p_max": o.number("p_max"),
                        "confidence": o.number("confidence"), "phases": strings_of(o, "phases")}}
    if doc.d.get("mode") == "history":
        folders = strings_of(doc, "folders")
        if len(folders) < 2:
            raise doc.bad("folders", "a list of at least two folders")
        sides = [side_of(s) for s in doc.objects("sides")]
        if sides and len(sides) != len(folders):
            raise doc.bad("sides", f"a list of {len(folders)} items (one a folder)")
        data.update(kind="history", folders=folders, sides=sides,
                    runs=[trend_of(r, len(folders)) for r in doc.objects("runs")])
    else:
        data.update(kind="sides", a=side_of(doc.obj("a")), b=side_of(doc.obj("b")),
                    runs=[run_of(r) for r in doc.objects("runs")], only_a=strings_of(doc, "only_in_a"),
                    only_b=strings_of(doc, "only_in_b"))
    if not data["runs"]:
        raise doc.bad("runs", "a list of the runs compared (at least one)")
    return data


def rule_html(o):
    parts = []
    if o["min_change"] is not None and o["p_max"] is not None:
        parts.append(f"slower or faster at a ratio of medians beyond {100 * o['min_change']:g}% and Mann–Whitney "
                     f"p &lt; {o['p_max']:g}")
    if o["confidence"] is not None:
        parts.append(f"intervals: {100 * o['confidence']:g}% Hodges–Lehmann of the ratio B/A")
    if o["phases"]:
        parts.append("phases compared: " + esc(", ".join(o["phases"])))
    return "; ".join(parts)


def svg_open(width, height, caption):
    return (f'<svg viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" role="img" '
            f'aria-label="{esc(caption)}" font-family="system-ui, sans-serif" font-size="11">')


def bars_svg(run, caption):
    """A and B side by side per phase: two bars of median seconds on one scale, B's coloured by its
    verdict and labelled with the ratio; a slower phase's name marked."""
    phases = run["phases"]
    if not phases:
        return ""
    top = max([v for p in phases for v in (p["a"], p["b"]) if v is not None], default=0.0) or 1.0
    label_w, bar_w, right, row, gap, head = 120, 240, 140, 14, 8, 26
    width, height = label_w + bar_w + right, head + len(phases) * (2 * row + gap) + 2
    out = [svg_open(width, height, caption),
           f'<rect x="{label_w}" y="6" width="12" height="10" fill="{A_COLOUR}"/>'
           f'<text x="{label_w + 16}" y="15">A</text>',
           f'<rect x="{label_w + 40}" y="6" width="12" height="10" fill="{VERDICT_COLOURS["same"]}"/>'
           f'<text x="{label_w + 56}" y="15">B (red: slower, green: faster)</text>']
    y = head
    for p in phases:
        slower = p["verdict"] == "slower"
        name = ("▲ " if slower else "") + clean(p["phase"])
        mark = ' fill="#a3262a" font-weight="bold"' if slower else ""
        out.append(f'<text x="{label_w - 6}" y="{y + row + 3}" text-anchor="end"{mark}>{svg_text(name, 20)}</text>')
        for side, v, fill in (("A", p["a"], A_COLOUR), ("B", p["b"], VERDICT_COLOURS[p["verdict"]])):
            w = bar_w * min(v or 0.0, top) / top
            label = f"{side} {fmt_num(v)} s" + (f" ×{fmt_ratio(p['ratio'])}" if side == "B" else "")
            out.append(f'<rect x="{label_w}" y="{y}" width="{w:.2f}" height="{row - 3}" fill="{fill}">'
                       f'<title>{esc(p["phase"])}: {esc(label)}</title></rect>'
                       f'<text x="{label_w + w + 4:.2f}" y="{y + row - 4}" font-size="10">{esc(label)}</text>')
            y += row
        y += gap
    out.append("</svg>")
    return "".join(out)


def trend_series(run):
    """Per phase: its name and points (folder index, median / the first folder's median, verdict
    against the first); a phase whose first median is 0 has no ratio and is left out."""
    series = []
    for t in run["phases"]:
        base = next((m for m in t["medians"] if m is not None), None)
        if not base:
            continue
        pts = [(i, min(m / base, RATIO_DRAW_LIMIT), t["against"][i]["verdict"] if t["against"][i] else None)
               for i, m in enumerate(t["medians"]) if m is not None]
        series.append((t["phase"], pts))
    return series


def tick_text(v, step):
    """A tick's label with as many decimals as the step between ticks needs."""
    if v >= 1e4 or step <= 0:
        return f"{v:.3g}"
    return f"{v:.{max(0, min(6, 1 - math.floor(math.log10(step))))}f}"


def trend_svg(run, folders, min_change, caption):
    """Each phase's median over the folders, as a ratio to the first folder holding it (1: no
    change, dashed; shaded: a change smaller than --min-change); a ring marks a folder slower (red)
    or faster (green) than the first by the rule."""
    series = trend_series(run)
    if not series:
        return ""
    left, plot_w, legend_w, top, plot_h, bottom = 56, 400, 150, 12, 200, 26
    width, height = left + plot_w + legend_w, top + plot_h + bottom
    band = (1 / (1 + min_change), 1 + min_change) if min_change else (1.0, 1.0)
    ratios = [r for _, pts in series for _, r, _ in pts] + list(band)
    lo, hi = min(ratios), max(ratios)
    pad = max((hi - lo) * 0.08, 0.01)
    lo, hi = max(lo - pad, 0.0), hi + pad

    def x(i):
        return left + plot_w * i / (folders - 1)

    def y(r):
        return top + plot_h * (hi - r) / (hi - lo)

    out = [svg_open(width, height, caption),
           f'<rect x="{left}" y="{y(band[1]):.2f}" width="{plot_w}" height="{y(band[0]) - y(band[1]):.2f}" '
           'fill="#f0f0f0"/>']
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.2f}" y2="{y(v):.2f}" stroke="#e4e4e4"/>'
                   f'<text x="{left - 4}" y="{y(v) + 4:.2f}" text-anchor="end" font-size="10">'
                   f'{tick_text(v, (hi - lo) / 4)}</text>')
    out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(1.0):.2f}" y2="{y(1.0):.2f}" stroke="#777" '
               'stroke-dasharray="4 3"/>')
    step = max(1, (folders + 11) // 12)
    for i in range(0, folders, step):
        out.append(f'<text x="{x(i):.2f}" y="{top + plot_h + 16}" text-anchor="middle" font-size="10">#{i + 1}</text>')
    for n, (phase, pts) in enumerate(series):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        segments, current = [], []
        for i, r, _ in pts:
            if current and i != current[-1][0] + 1:
                segments.append(current)
                current = []
            current.append((i, r))
        segments.append(current)
        for seg in segments:
            if len(seg) > 1:
                xy = " ".join(f"{x(i):.2f},{y(r):.2f}" for i, r in seg)
                out.append(f'<polyline points="{xy}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, r, verdict in pts:
            tip = f"{phase}: #{i + 1} ×{fmt_ratio(r)}" + (f" ({verdict})" if verdict else "")
            out.append(f'<circle cx="{x(i):.2f}" cy="{y(r):.2f}" r="3" fill="{colour}"><title>{esc(tip)}</title>'
                       '</circle>')
            if verdict in ("slower", "faster"):
                out.append(f'<circle cx="{x(i):.2f}" cy="{y(r):.2f}" r="6.5" fill="none" stroke-width="2" '
                           f'stroke="{VERDICT_COLOURS[verdict]}"/>')
        ly = top + 10 + 15 * n
        if ly < top + plot_h:
            out.append(f'<line x1="{left + plot_w + 12}" x2="{left + plot_w + 30}" y1="{ly - 4}" y2="{ly - 4}" '
                       f'stroke="{colour}" stroke-width="2"/><text x="{left + plot_w + 34}" y="{ly}">'
                       f'{svg_text(phase, 18)}</text>')
    out.append("</svg>")
    return "".join(out)


def figure_html(fig_id, svg, caption):
    return f'<figure id="{esc(fig_id)}">{svg}<figcaption>{esc(caption)}</figcaption></figure>' if svg else ""


def phase_row(p):
    cls = VERDICT_CLASSES[p["verdict"]]
    interval = p["interval"]
    cells = [(p["phase"], "l key"), (fmt_num(p["a"]), ""), (fmt_num(p["b"]), ""), (fmt_ratio(p["ratio"]), ""),
             (f"[{fmt_ratio(interval[0])}, {fmt_ratio(interval[1])}]" if interval else "-", ""), (fmt_p(p["p"]), ""),
             (f"{p['na'] if p['na'] is not None else '?'}/{p['nb'] if p['nb'] is not None else '?'}", ""),
             (VERDICTS[p["verdict"]], "l verdict")]
    heads = ("phase", "A median s", "B median s", "B/A", "interval", "p", "repeats A/B", "verdict")
    tds = "".join(f'<td class="{c}" data-label="{h}">{esc(v)}</td>' if c else f'<td data-label="{h}">{esc(v)}</td>'
                  for (v, c), h in zip(cells, heads))
    return f'<tr class="{cls}">{tds}</tr>'


def run_section(i, r, o):
    cls = VERDICT_CLASSES[r["verdict"]]
    moved = ", ".join(f"{p['phase']} ×{fmt_ratio(p['ratio'])}" for p in r["phases"]
                      if p["verdict"] == r["verdict"] and r["verdict"] in ("slower", "faster"))
    title = r["key"] + (f" / B: {r['key_b']}" if r["key_b"] and r["key_b"] != r["key"] else "")
    conf = f"{100 * o['confidence']:g}% interval" if o["confidence"] is not None else "interval"
    head = "".join(f"<th{' class=l' if h in ('phase', 'verdict') else ''}>{esc(h)}</th>"
                   for h in ("phase", "A median s", "B median s", "B/A", conf, "p", "repeats A/B", "verdict"))
    table = (f'<div class="scroll"><table class="phases cards"><thead><tr>{head}</tr></thead><tbody>'
             + "".join(phase_row(p) for p in r["phases"]) + "</tbody></table></div>") if r["phases"] else \
        '<p class="note">No phase of this run was compared (none timed by both, or none of --phases).</p>'
    notes = []
    if r["predicted"] is not None:
        notes.append(f'<p class="note">model: predicted end to end B/A {esc(fmt_ratio(r["predicted"]))}</p>')
    if r["context"]:
        notes.append('<ul class="differs">' + "".join(f"<li>differs: <code>{esc(w)}</code>: {esc(a)} → {esc(b)}</li>"
                                                      for w, a, b in r["context"]) + "</ul>")
    caption = f"Median seconds per phase, A and B on one scale ({title})."
    fig = figure_html(f"fig-run-{i}", bars_svg(r, caption), "Median seconds per phase: A grey, B coloured by its "
                      "verdict (red slower, green faster), with the ratio B/A.")
    return (f'<section class="run {cls}" id="run-{i}"><h3>{esc(title)} <span class="verdict {cls}">'
            f'{esc(VERDICTS[r["verdict"]])}</span>{esc(f" ({moved})" if moved else "")}</h3>'
            f'<div class="run-body"><div>{table}{"".join(notes)}</div>{fig}</div></section>')


def count_text(side):
    return "-" if side["runs"] is None else str(side["runs"])


def sides_table(a, b):
    rows = [("path", a["path"], b["path"]), ("kind", a["kind"], b["kind"]), ("runs", count_text(a), count_text(b))]
    rows += [(label, va or "-", vb or "-") for (label, va), (_, vb) in zip(a["context"], b["context"])]
    body = "".join(f'<tr{" class=differs" if va != vb and k not in ("path", "runs") else ""}>'
                   f'<th class="l">{esc(k)}</th><td>{esc(va)}</td><td>{esc(vb)}</td></tr>' for k, va, vb in rows)
    return (f'<div class="scroll"><table class="sides"><thead><tr><th class="l"></th><th class="l">A</th>'
            f'<th class="l">B</th></tr></thead><tbody>{body}</tbody></table></div>')


def keys_html(what, keys):
    if not keys:
        return ""
    shown = keys[:500]
    more = f"<li>… and {len(keys) - len(shown)} more</li>" if len(keys) > len(shown) else ""
    return (f"<h3>{esc(what)} ({len(keys)})</h3><ul class=\"keys\">"
            + "".join(f"<li>{esc(k)}</li>" for k in shown) + more + "</ul>")


def page_frame(title, kind, figure_ids, body):
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scalebench {esc(title)}</title>
<style>{CSS}{COMPARE_CSS}</style></head>
<body data-kind="{kind}" data-figures="{esc(" ".join(figure_ids))}">
<h1>scalebench {esc(title)}</h1>
{body}
<p class="note">Page written {generated} from the comparison's JSON (scalebench compare --json holds the same).</p>
</body></html>
"""


NONE_UNMATCHED = '<p class="note">None: every run of A and B was matched.</p>'


def sides_page(data):
    runs, o = data["runs"], data["options"]
    count = {v: sum(1 for r in runs if r["verdict"] == v) for v in VERDICTS}
    summary = (f"{count['slower']} slower, {count['faster']} faster, {count['same']} same, "
               f"{count['too few repeats']} too few repeats ({len(runs)} matched runs)")
    slower = [(i, r) for i, r in enumerate(runs, 1) if r["verdict"] == "slower"]
    alarm = ('<p class="alarm" id="slower">Slower in B: ' + "; ".join(
        f'<a href="#run-{i}">{esc(r["key"])}</a> ('
        + esc(", ".join(f"{p['phase']} ×{fmt_ratio(p['ratio'])}" for p in r["phases"] if p["verdict"] == "slower"))
        + ")" for i, r in slower) + "</p>") if slower else ""
    code = data["exit_code"]
    unmatched = (keys_html("only in A", data["only_a"]) + keys_html("only in B", data["only_b"])
                 + keys_html("no ok run in A", data["a"]["no_ok_run"])
                 + keys_html("no ok run in B", data["b"]["no_ok_run"]))
    body = (f'<p class="note" id="summary">B against A, per phase: the ratio of medians B/A (above 1: B is slower) '
            f'with its interval, the Mann–Whitney p of the repeats and the verdict; {rule_html(o)}. '
            f'{esc(summary)}{esc(f"; exit code {code}") if code is not None else ""}.</p>{alarm}'
            f'<section id="context"><h2>What was compared</h2>{sides_table(data["a"], data["b"])}'
            f'<details><summary>Command line</summary><pre>{esc(data["command_line"] or "-")}</pre></details></section>'
            f'<section id="runs"><h2>Matched runs ({len(runs)})</h2>'
            + "".join(run_section(i, r, o) for i, r in enumerate(runs, 1)) + "</section>"
            + f'<section id="unmatched"><h2>Unmatched runs</h2>{unmatched or NONE_UNMATCHED}</section>')
    ids = [f"fig-run-{i}" for i, r in enumerate(runs, 1) if r["phases"]]
    return page_frame("compare: B against A", "compare", ids, body)


def history_cell(t, i):
    m = t["medians"][i]
    if m is None:
        return '<td data-label="#{0}">-</td>'.format(i + 1)
    verdict = t["against"][i]["verdict"] if t["against"][i] else None
    cls = f' class="{VERDICT_CLASSES[verdict]}"' if verdict in ("slower", "faster", "too few repeats") else ""
    tip = f' title="{esc(VERDICTS[verdict])} ×{esc(fmt_ratio(t["against"][i]["ratio"]))}"' if verdict else ""
    return f'<td{cls}{tip} data-label="#{i + 1}">{esc(fmt_num(m))}{esc(HISTORY_MARKS.get(verdict, ""))}</td>'


def change_text(t):
    if t["first_change"] is None:
        return "no change"
    c = t["against"][t["first_change"]]
    return f"#{t['first_change'] + 1}: {VERDICTS[c['verdict']]} ×{fmt_ratio(c['ratio'])} (p {fmt_p(c['p'])})"


def trend_section(i, r, folders, min_change):
    slower = any(t["slower_at_last"] for t in r["phases"])
    changed = any(t["first_change"] is not None for t in r["phases"])
    cls, badge = ("slower", "▲ slower in its last folder") if slower else \
        ("same", "changed" if changed else "no change")
    head = "".join(f"<th>#{k + 1} s</th>" for k in range(folders))
    rows = "".join(f'<tr class="{"slower" if t["slower_at_last"] else ""}"><td class="l key" data-label="phase">'
                   f'{esc(t["phase"])}</td>' + "".join(history_cell(t, k) for k in range(folders))
                   + f'<td class="l wide" data-label="first change">{esc(change_text(t))}</td></tr>'
                   for t in r["phases"])
    table = (f'<div class="scroll"><table class="phases cards"><thead><tr><th class="l">phase</th>{head}'
             f'<th class="l">first change</th></tr></thead><tbody>{rows}</tbody></table></div>')
    caption = ("Each phase's median in each folder over its median in the first folder holding the run (1: no "
               "change, dashed; shaded: a change smaller than --min-change); a ring marks a folder slower (red) or "
               "faster (green) than that first one.")
    fig = figure_html(f"fig-trend-{i}", trend_svg(r, folders, min_change, f"Trend per phase of {r['key']}"), caption)
    return (f'<section class="run {cls}" id="run-{i}"><h3>{esc(r["key"])} <span class="verdict {cls}">{esc(badge)}'
            f'</span></h3><div class="run-body wide"><div>{table}</div>{fig}</div></section>')


FOLDER_COLUMNS = ["#", "folder", "runs"] + [label for _, label in SIDE_FIELDS]


def folder_row(k, folder, side):
    """A folder of a history: its number, path, runs and context (a phone's card: the number a
    heading, the path a whole line)."""
    values = [f"#{k + 1}", folder] + ([count_text(side)] + [v or "-" for _, v in side["context"]] if side
                                      else ["-"] * (len(FOLDER_COLUMNS) - 2))
    classes = ["l key", "l wide"] + ["l"] * (len(FOLDER_COLUMNS) - 2)
    return "<tr>" + "".join(f'<td class="{c}" data-label="{esc(h)}">{esc(v)}</td>'
                            for c, h, v in zip(classes, FOLDER_COLUMNS, values)) + "</tr>"


def history_page(data):
    folders, runs, o = data["folders"], data["runs"], data["options"]
    sides = data["sides"] or [None] * len(folders)
    slower = [(i, r) for i, r in enumerate(runs, 1) if any(t["slower_at_last"] for t in r["phases"])]
    alarm = ('<p class="alarm" id="slower">Slower in its last folder than in its first: '
             + "; ".join(f'<a href="#run-{i}">{esc(r["key"])}</a>' for i, r in slower) + "</p>") if slower else ""
    head = "".join(f"<th class=l>{esc(h)}</th>" for h in FOLDER_COLUMNS)
    rows = "".join(folder_row(k, folder, s) for k, (folder, s) in enumerate(zip(folders, sides)))
    code = data["exit_code"]
    body = (f'<p class="note" id="summary">Each run\'s median per phase over {len(folders)} folders, oldest first, each '
            f'folder against the first that holds the run (+ slower, - faster, ~ too few repeats); {rule_html(o)}. '
            f'{len(slower)} of {len(runs)} runs slower in their last folder than in their first'
            f'{esc(f"; exit code {code}") if code is not None else ""}.</p>{alarm}'
            f'<section id="context"><h2>What was compared</h2><div class="scroll"><table class="sides cards">'
            f'<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
            f'<details><summary>Command line</summary><pre>{esc(data["command_line"] or "-")}</pre></details></section>'
            f'<section id="runs"><h2>Runs ({len(runs)})</h2>'
            + "".join(trend_section(i, r, len(folders), o["min_change"]) for i, r in enumerate(runs, 1))
            + "</section>")
    ids = [f"fig-trend-{i}" for i, r in enumerate(runs, 1) if trend_series(r)]
    return page_frame(f"compare --history: {len(folders)} folders", "compare-history", ids, body)


def comparison_page(data):
    return history_page(data) if data["kind"] == "history" else sides_page(data)


# ---------------------------------------------------------------------------------------------
# Writing: the rule of every scalebench output file (include/scalebench/base/output_file.hpp).


class Output:
    """Where the page goes, checked before any work: `stream` (a character device or FIFO, written in
    place) or a regular file / new path (`real`, its links followed) replaced atomically. The page of
    a results folder (`in_folder`) follows the rule of every file the binary writes there
    (output_file.hpp, write_results_file): made in the folder itself, never through a link."""

    def __init__(self, path, option, in_folder=False):
        if path == "":
            raise Bad(2, f"{option} needs a file name (got an empty string)")
        self.path, self.shown = path, f"{option} {path}" if option else path
        self.stream, self.mode, self.tmp = False, None, None
        if path.endswith("/"):
            raise Bad(3, f"{self.shown} names a folder; give a file name")
        if in_folder:
            self.in_folder()
            return
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self.real = os.path.realpath(path)  # a dangling link: made where it leads
            self.check_folder()
            return
        except OSError as e:
            raise Bad(3, f"cannot write {self.shown}: {e.strerror}") from None
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            if not os.access(path, os.W_OK):
                raise Bad(3, f"cannot write {self.shown}: permission denied")
            self.stream, self.real = True, path
            return
        if not stat.S_ISREG(st.st_mode):
            raise Bad(3, f"cannot write {self.shown}: it is {kind_of(st.st_mode)}; give a regular file (or a "
                         "character device or pipe, written in place)")
        self.real, self.mode = os.path.realpath(path), stat.S_IMODE(st.st_mode)
        self.check_folder()

    def in_folder(self):
        """A results folder's page: the folder a real folder, the page missing or a regular file."""
        folder = os.path.dirname(self.path) or "."
        try:
            fst = os.lstat(folder)
        except OSError as e:
            raise Bad(3, f"cannot write {self.shown}: folder {folder}: {e.strerror}") from None
        if stat.S_ISLNK(fst.st_mode):
            raise Bad(3, f"cannot write {self.shown}: its folder {folder} is a symbolic link (to "
                         f"{os.path.realpath(folder)}); a results folder is written only where it is, never through "
                         "a link: give that folder itself")
        if not stat.S_ISDIR(fst.st_mode):
            raise Bad(3, f"cannot write {self.shown}: its folder {folder} is {kind_of(fst.st_mode)}; results are "
                         "written only in a real folder")
        self.real = self.path
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            self.check_folder()
            return
        except OSError as e:
            raise Bad(3, f"cannot write {self.shown}: {e.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else kind_of(st.st_mode)
            raise Bad(3, f"cannot write {self.shown}: it is {what}; a results folder's files are "
                         "written there, never through a link or into a device: remove it")
        self.mode = stat.S_IMODE(st.st_mode)
        self.check_folder()

    def check_folder(self):
        folder = os.path.dirname(self.real) or "."
        if not os.path.isdir(folder):
            raise Bad(3, f"cannot write {self.shown}: folder {folder} does not exist; create it or choose another path")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise Bad(3, f"cannot write {self.shown}: folder {folder} is not writable; choose another path")

    def write(self, text):
        stop_point()
        data = text.encode("utf-8")
        try:
            if self.stream:
                self.write_in_place(data)
            else:
                self.replace(data)
        except OSError as e:
            self.discard()
            raise Bad(3, f"cannot write {self.shown}: {e.strerror or e}") from None

    def write_in_place(self, data):
        # Non-blocking open: a FIFO nobody reads is an error (ENXIO), not a hang.
        try:
            fd = os.open(self.real, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError as e:
            if e.errno == 6:  # ENXIO
                raise Bad(3, f"cannot write {self.shown}: no process reads the pipe") from None
            raise
        try:
            os.set_blocking(fd, True)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def replace(self, data):
        fd, self.tmp = tempfile.mkstemp(prefix=".scalebench-report-", dir=os.path.dirname(self.real) or ".")
        try:
            if self.mode is None:
                umask = os.umask(0)
                os.umask(umask)
                self.mode = 0o666 & ~umask
            os.fchmod(fd, self.mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        # The page appears whole or not at all: stop signals held while it is renamed into place
        # (one that arrives after is left pending, and the run ends with the page written, 0).
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        stop_point()
        os.replace(self.tmp, self.real)
        self.tmp = None

    def discard(self):
        """Removes the half-written file beside the page, if any (errors, signals)."""
        if self.tmp:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def load_matplotlib():
    try:
        return plt_module()
    except ImportError:
        raise Bad(3, "matplotlib is missing: install python3-matplotlib (tools/setup does)") from None


def report(a, state):
    if a.out is not None:
        state["out"] = Output(a.out, a.out_option)  # before any work
    if a.check:
        load_matplotlib()
        return
    if a.compare is not None:
        compare_report(a, state)
        return
    if not a.folder:
        raise Bad(2, "give the folder of a contrast or a study, e.g. scalebench report results/smoke")
    if not os.path.isdir(a.folder):
        raise Bad(2, f"{a.folder} is not a folder: give the results folder of a contrast or a study")
    if a.out is None:
        state["out"] = Output(os.path.join(a.folder, "report.html"), "", in_folder=True)
    out = state["out"]
    data = load_contrast(a.folder) or load_study(a.folder)
    if data is None:
        raise Bad(2, f"{a.folder} holds neither contrast.json nor summary.json: give the results folder of a contrast "
                     "(scalebench contrast) or of a study (scalebench study)")
    if not any(r["status"] == "ok" for r in data["rows"]):
        raise Bad(2, f"no finished run in {a.folder}: nothing to draw")
    figs = Figures(load_matplotlib())
    # Figures of values far apart (a time of 1e-12 s beside one of 3e9 s on a log axis) are drawn
    # as they are; matplotlib's notes on them (overflow in its scales, a layout it cannot tighten)
    # are not the user's business.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (contrast_figures if data["kind"] == "contrast" else study_figures)(figs, data)
    stop_point()
    out.write(page(data, figs))
    written(a, out)


def compare_report(a, state):
    """The page of a comparison (--compare FILE): no folder, and --out required."""
    if a.folder:
        raise Bad(2, f"give a results folder or --compare FILE, not both (got {a.folder})")
    if a.out is None:
        raise Bad(2, "--compare needs --out FILE, the page to write")
    data = load_comparison(a.compare)
    stop_point()
    state["out"].write(comparison_page(data))
    written(a, state["out"])


def written(a, out):
    """Says where the page is: in --page-path-file for the binary, and on stdout."""
    if a.page_path_file:
        # The binary reads the page's path here, where nothing printed (a library's warning) can mix in.
        with open(a.page_path_file, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(out.path)
    try:
        print(out.path, flush=True)
    except (OSError, ValueError):
        pass  # stdout closed: the page is written all the same


def main():
    state = {}
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, on_stop_signal)
        ap = Parser(prog="scalebench report", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
        ap.add_argument("folder", nargs="?", help="a contrast's or a study's results folder")
        ap.add_argument("--out", help="the page to write [FOLDER/report.html]")
        ap.add_argument("--check", action="store_true", help="only check that matplotlib can be loaded (exit 0 or 3)")
        ap.add_argument("--compare", metavar="FILE", help="draw the page of a comparison instead: FILE is the --json of "
                        "scalebench compare (A against B, or --history); needs --out, not matplotlib")
        # For the binary: the option its user named the page with, as error lines name it.
        ap.add_argument("--out-option", default="--out", help=argparse.SUPPRESS)
        ap.add_argument("--page-path-file", help=argparse.SUPPRESS)  # for the binary: where to write the page's path
        report(ap.parse_args(), state)
        return 0
    except Stopped as s:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        code, message = 128 + s.sig, (f"stopped by {STOP_SIGNALS.get(s.sig, s.sig)} (exit code {128 + s.sig}); "
                                      "no page was written")
    except Bad as b:
        code, message = b.code, str(b)
    except MemoryError:
        code, message = 3, "out of memory while drawing the report"
    except RecursionError:
        code, message = 3, "internal error in the report script: input nested too deeply"
    except Exception as e:  # the last resort: one line, never a traceback
        code, message = 3, f"internal error in the report script: {type(e).__name__}: {e}"
    finally:
        if state.get("out"):
            state["out"].discard()
    try:
        print(f"scalebench report: error: {one_line(clip(message, 2000))}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    return code


if __name__ == "__main__":
    sys.exit(main())
