"""``table``: the terminal table.  Drawn by :mod:`tierank.report.terminal` (rich), not rendered to text
here; registered so that it is one of the ``--format`` choices."""

from . import Format, register

FORMAT = register(Format("table", "the terminal table (the default)", order=0))
