"""``table``: the terminal table.  Drawn by `tierank.report.terminal` (rich), not rendered to text
here; registered so that it is one of the ``--format`` choices."""

from . import register

FORMAT = register("table")
