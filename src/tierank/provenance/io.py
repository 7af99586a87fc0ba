"""A manifest document, read and written as YAML: [`Manifest`][tierank.provenance.io.Manifest].

Reading checks that the file is a tierank manifest of this schema
([`tierank.provenance.schema`][tierank.provenance.schema]) with its sections; any other file is one
line naming it (and the line of a YAML error).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TierankInputError
from .schema import MARK, SCHEMA_VERSION

__all__ = ["Manifest"]


@dataclass(frozen=True)
class Manifest(Mapping[str, Any]):
    """A manifest document (a read-only mapping of its sections), written with `to_yaml`.

    Examples
    --------
    >>> import tierank
    >>> from tierank import examples
    >>> res = tierank.evaluate(examples.path("qrels"), examples.path("run"), ["nDCG@3", "AP"])
    >>> man = res.manifest
    >>> man["method"]["evaluation"]["measures"], man["data"]["runs"][0]["ties"]["tied share"]
    (['nDCG@3', 'AP'], 0.6)
    >>> [round(r["expected"], 4) for r in man["results"][0]["measures"]]
    [0.8231, 0.9074]
    """

    document: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.document[key]

    def __iter__(self):
        return iter(self.document)

    def __len__(self) -> int:
        return len(self.document)

    def to_yaml(self) -> str:
        """The manifest as YAML (block style, keys in the document's order), with a header comment."""
        import yaml

        head = (
            "# tierank manifest: what made these numbers (ir_metadata-compatible).\n"
            "# Check them with: tierank verify THIS_FILE\n"
        )
        body = yaml.safe_dump(
            self.document, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
        )
        return head + body

    def write(self, path: str | os.PathLike, protect: tuple = ()) -> None:
        """Write the manifest to ``path`` atomically."""
        from ..io.writers import write_atomic

        write_atomic(path, self.to_yaml(), protect=protect)

    @classmethod
    def read(cls, path: str | os.PathLike) -> Manifest:
        """Read a manifest; a file that is not one is an error naming the file (and the line)."""
        import yaml

        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            raise TierankInputError(f"{p}: cannot be read ({e.strerror or e})") from None
        except UnicodeDecodeError:
            raise TierankInputError(f"{p}: not a manifest (not UTF-8 text)") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            raise TierankInputError(f"{p}: {where}not YAML ({getattr(e, 'problem', e)})") from None
        if not isinstance(doc, dict) or MARK not in doc:
            raise TierankInputError(f"{p}: not a tierank manifest (no '{MARK}' key)")
        if doc[MARK] != SCHEMA_VERSION:
            raise TierankInputError(
                f"{p}: manifest schema {doc[MARK]!r}; this tierank reads schema {SCHEMA_VERSION}"
            )
        for key in ("method", "data", "results", "seal"):
            if not isinstance(doc.get(key), (dict, list)):
                raise TierankInputError(f"{p}: manifest without its '{key}' section")
        return cls(doc)
