"""Output: a figure's PNG/SVG/PDF bytes without timestamps, written atomically."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ...errors import TierankInputError
from .style import DPI, _mpl


def figure_bytes(fig, fmt: str = "png", *, dpi: int = DPI) -> bytes:
    """The figure encoded as ``png`` or ``svg`` (no timestamps or software URLs in the metadata)."""
    import io

    matplotlib, _, _ = _mpl()
    if fmt not in ("png", "svg", "pdf"):
        raise TierankInputError(f"figure format must be png, svg or pdf, got {fmt!r}")
    meta = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None, "Format": None, "Type": None},
        "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    }[fmt]
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "tierank"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta, facecolor="white")
    return buf.getvalue()


def save_figure(
    fig,
    stem: str | os.PathLike,
    formats: Iterable[str] = ("png", "svg"),
    *,
    dpi: int = DPI,
    protect: Iterable = (),
) -> list[Path]:
    """Write ``stem.<fmt>`` for every format, each atomically with [`tierank.io.writers.write_atomic`][tierank.io.writers.write_atomic]
    (temporary file in the same folder, then `os.replace`), so a reader never sees a half-written figure.

    Every target is checked ([`tierank.io.writers.check_output`][tierank.io.writers.check_output]: not one of ``protect``, not a
    special file, a writable folder) before the first is written.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    stem : path without suffix, e.g. ``docs/figures/askubuntu-ndcg-cutoff``
    formats : iterable of {"png", "svg", "pdf"}
    dpi : int
    protect : iterable of paths
        Inputs that must not be overwritten.

    Returns
    -------
    list of Path, one per format, in the order asked for.
    """
    from ...io.writers import check_output, ensure_dir, write_atomic

    stem = Path(stem)
    folder = ensure_dir(stem.parent)
    targets = [(folder / f"{stem.name}.{fmt}", fmt) for fmt in formats]
    for target, _ in targets:
        check_output(target, protect)
    for target, fmt in targets:
        write_atomic(target, figure_bytes(fig, fmt, dpi=dpi), protect=protect)
    return [t for t, _ in targets]
