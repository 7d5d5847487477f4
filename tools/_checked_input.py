"""The rules the Python tools (tools/misses, tools/auto-check, tools/energy-check) share with the
binary for what they read and what they run: one place, imported by each tool from its own folder.

Input: a file is checked by kind on the opened file before a byte is read (a FIFO, a device such
as /dev/zero, a socket or a folder is refused at once: opened without blocking, never read), its
read is bounded, its text must be UTF-8, JSON is strict (no NaN or Infinity, no number outside a
double's range, no key twice in one object, no byte-order mark) and nested at most MAX_DEPTH levels, and a field is read through `number()` or a
type check, never trusted. Every refusal is an InputError whose text is the one line to print.

Children: every command runs in its own process group with a time limit; a limit reached, or a
SIGINT, SIGTERM or SIGHUP to the tool, ends the whole group (SIGTERM, then SIGKILL after a grace
period), so nothing it started is left behind. A child ended by signal n is reported as 128+n,
as shells do (`exit_code`).
"""
import json
import math
import os
import signal
import stat
import subprocess

MAX_DEPTH = 64  # no record, runs.jsonl line or study file of ours nests deeper
GRACE_S = 5.0  # between SIGTERM and SIGKILL to a process group being stopped
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class InputError(Exception):
    """A refusal: its text is the one line the tool prints."""


class Interrupted(Exception):
    """The tool itself got SIGINT, SIGTERM or SIGHUP: cleanup runs, then exit 128+signum."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def kind_of(mode):
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path, what, limit):
    """A regular file's bytes, at most `limit`; checked by kind before and after opening (without
    blocking: O_NONBLOCK), so a FIFO or device is refused, never read."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {path} is {kind_of(st.st_mode)}, not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)  # the file opened, not the one looked at: it may have been replaced since
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} {path} is {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise InputError(f"{what} {path} is {st.st_size} bytes, more than the {limit} a {what} may have")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise InputError(f"cannot read {what} {path}: {e.strerror}") from None
    if len(data) > limit:
        raise InputError(f"{what} {path} is more than the {limit} bytes a {what} may have")
    return data


def read_text(path, what, limit):
    """read_bytes, decoded as UTF-8 (an undecodable byte is named by its offset)."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} {path} is not UTF-8 text (byte {e.start})") from None


def check_depth(value, where, max_nodes=None):
    """Refuses data nested deeper than MAX_DEPTH (walked without recursion) or, with `max_nodes`,
    holding more values than that (YAML's aliases can make a small file a billion values)."""
    stack, nodes = [(value, 1)], 0
    while stack:
        v, depth = stack.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            raise InputError(f"{where} holds more than {max_nodes} values (aliases repeated?)")
        if isinstance(v, (dict, list)):
            if depth > MAX_DEPTH:
                raise InputError(f"{where} nests deeper than {MAX_DEPTH} levels")
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return value


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text} is outside a double's range")
    return v


def _unique_pairs(pairs):
    """An object's pairs as a dict, refusing a key given twice (which json.loads would let the
    last one win, where the binary's readers refuse it)."""
    value = {}
    for key, v in pairs:
        if key in value:
            raise ValueError(f'holds the key "{key[:80]}" twice in one object')
        value[key] = v
    return value


def parse_json(text, where):
    """Strict JSON, by the rule of the binary's readers of records and runs.jsonl lines: NaN,
    Infinity, numbers beyond a double, a key twice in one object and a byte-order mark refused,
    depth bounded."""
    if text.startswith("\ufeff"):
        raise InputError(f"{where} is not JSON (it starts with a byte-order mark)")
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                           object_pairs_hook=_unique_pairs)
    except RecursionError:
        raise InputError(f"{where} nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise InputError(f"{where} is not JSON ({str(e).splitlines()[0][:120]})") from None
    return check_depth(value, where)


def number(value):
    """A JSON number as a finite float, else None (a bool, a string, an integer beyond a double)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def strict_json(value, **kw):
    """JSON text that any parser reads: a float that is not finite is written as null."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v
    return json.dumps(clean(value), allow_nan=False, **kw)


def _raise_interrupted(signum, _frame):
    ignore_signals()  # the cleanup that follows is not interrupted again; it is bounded
    raise Interrupted(signum)


def ignore_signals():
    """SIGINT, SIGTERM and SIGHUP ignored from now on: the last cleanup is not cut short."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def on_signals_raise():
    """SIGINT, SIGTERM and SIGHUP raise Interrupted, so that `finally` blocks stop children and
    remove temporary files."""
    for s in SIGNALS:
        signal.signal(s, _raise_interrupted)


def stop_group(proc, first=signal.SIGTERM):
    """Ends `proc`'s process group: `first`, then SIGKILL after GRACE_S; waits for `proc`."""
    for sig in (first, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def start(argv, **kw):
    """Popen in a new process group, stdin from /dev/null; InputError when it cannot start."""
    try:
        return subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, **kw)
    except OSError as e:
        raise InputError(f"cannot run {argv[0]}: {e.strerror}") from None


def wait_bounded(proc, timeout_s, first=signal.SIGTERM):
    """The exit code of `proc` (negative: ended by that signal), or None when it ran past
    `timeout_s` (its group is then stopped). Interrupted (or any error) stops the group too."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_group(proc, first)
        return None
    except BaseException as e:
        stop_group(proc, e.signum if isinstance(e, Interrupted) else signal.SIGTERM)
        raise


def run_bounded(argv, timeout_s, **kw):
    """start() then wait_bounded()."""
    return wait_bounded(start(argv, **kw), timeout_s)


def exit_code(returncode):
    """A child's exit as a shell gives it: 128+n when ended by signal n."""
    return 128 - returncode if returncode < 0 else returncode


def how_it_ended(returncode):
    """'exit 5' or 'ended by signal 9 (SIGKILL)'."""
    if returncode >= 0:
        return f"exit {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "?"
    return f"ended by signal {-returncode} ({name}, shown by shells as {128 - returncode})"


def create_for_writing(path, what):
    """A file opened for writing, created or truncated; never through a symbolic link, never a
    FIFO or device (O_NOFOLLOW, O_NONBLOCK, then the kind of the opened file)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as e:
        why = "a symbolic link" if os.path.islink(path) else e.strerror
        raise InputError(f"cannot write {what} {path}: {why}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(f"cannot write {what} {path}: it is {kind_of(st.st_mode)}")
    os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8")
