"""What an input was: its SHA-256 and size (read at disk speed), and a run file's own ir_metadata header.

ir_metadata (Breuer, Keller and Schaer, SIGIR 2022) writes a run's metadata as YAML in ``#`` comment
lines at the head of the run file, between ``# ir_metadata.start`` and ``# ir_metadata.end``;
trec_eval skips such lines, and so does tierank's reader.

Examples
--------
>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "a.run")
>>> _ = open(p, "w").write("# ir_metadata.start\\n# tag: bm25\\n# method:\\n#   automatic: true\\n"
...                        "# ir_metadata.end\\nq Q0 d 1 1.0 bm25\\n")
>>> ir_metadata(p)
{'tag': 'bm25', 'method': {'automatic': True}}
>>> rec = file_record(p)
>>> rec["size"], len(rec["sha256"])
(98, 64)
"""

from __future__ import annotations

import gzip
import hashlib
import os
from typing import Any

from ..errors import TierankInputError

#: the bytes hashed at a time (large reads keep hashing at disk speed)
CHUNK = 1 << 20
#: the lines that open and close an ir_metadata header
START, END = "ir_metadata.start", "ir_metadata.end"
#: the longest header read (lines), so that a file of comments is not read whole
MAX_HEADER_LINES = 10_000


def sha256_of(path: str | os.PathLike) -> tuple[str, int]:
    """The SHA-256 (hex) of the file's bytes as stored (a .gz file's compressed bytes) and its size."""
    h = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb", buffering=0) as f:
            buf = bytearray(CHUNK)
            view = memoryview(buf)
            while n := f.readinto(buf):
                h.update(view[:n])
                size += n
    except OSError as e:
        raise TierankInputError(f"{os.fspath(path)}: cannot be read ({e.strerror or e})") from None
    return h.hexdigest(), size


def file_record(path: str | os.PathLike) -> dict[str, Any]:
    """``{"path", "sha256", "size"}`` of a file; of a folder, its files' records under ``files``
    (sorted by name) and one ``sha256`` over their names and hashes."""
    p = os.fspath(path)
    if os.path.isdir(p):
        files = []
        for root, dirs, names in os.walk(p):
            dirs.sort()
            for name in sorted(names):
                full = os.path.join(root, name)
                digest, size = sha256_of(full)
                files.append({"path": os.path.relpath(full, p), "sha256": digest, "size": size})
        h = hashlib.sha256()
        for f in files:
            h.update(f"{f['path']}\0{f['sha256']}\n".encode())
        return {
            "path": p,
            "sha256": h.hexdigest(),
            "size": sum(f["size"] for f in files),
            "files": files,
        }
    digest, size = sha256_of(p)
    return {"path": p, "sha256": digest, "size": size}


def _head_lines(path: str) -> list[str]:
    """The leading ``#`` lines of a text file (gzip or plain), without their ``#``."""
    with open(path, "rb") as raw:
        magic = raw.read(2)
    opener: Any = gzip.open if magic == b"\x1f\x8b" else open
    out = []
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f):
                if i >= MAX_HEADER_LINES or not line.startswith("#"):
                    break
                out.append(line[1:].rstrip("\r\n"))
    except (OSError, EOFError):  # not gzip after all, or cut short: no header to read
        return []
    return out


def ir_metadata(path: str | os.PathLike) -> dict[str, Any] | None:
    """The ir_metadata header of a run file, parsed as YAML; None when the file has none (or is a folder).

    A header that is not valid YAML is an error naming the file and the line.
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        return None
    lines = _head_lines(p)
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    if not starts:
        return None
    first = starts[0] + 1
    ends = [i for i, line in enumerate(lines) if line.strip() == END and i >= first]
    if not ends:
        raise TierankInputError(f"{p}: line {starts[0] + 1}: '# {START}' without '# {END}'")
    body = lines[first : ends[0]]
    # one space after '#' is the comment's, the rest is YAML's indentation
    text = "\n".join(line[1:] if line.startswith(" ") else line for line in body)
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {first + 1 + mark.line}: " if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise TierankInputError(f"{p}: {where}ir_metadata header is not YAML ({problem})") from None
    return data if isinstance(data, dict) else {"value": data}
