"""Work across machines with Ray: the one place tierank talks to a Ray cluster.

Nothing here imports Ray until it is used (``pip install 'tierank[ray]'``).

* `tierank.cluster.runtime`: joining (or starting) a cluster ([`connect`][tierank.cluster.connect], [`require_ray`][tierank.cluster.require_ray]).
* `tierank.cluster.evaluation`: run files evaluated in query-aligned blocks through Ray Data
  ([`evaluate_files`][tierank.cluster.evaluate_files]), equal to [`tierank.evaluate`][tierank.evaluate] on the concatenated run, bit for bit.
* `tierank.cluster.scoring`: a rerank's queries scored by one model actor per worker
  ([`RayScoring`][tierank.cluster.RayScoring]).

Files may be local paths or URIs of any filesystem pyarrow supports (``s3://``, ``gs://``,
``hdfs://``, ...), read by the workers themselves.  On a cluster, start Ray on the nodes
(``ray start --head`` on one, ``ray start --address HEAD:6379`` on the others) and pass
``address="HEAD:6379"`` (or ``"auto"`` on a node of the cluster); without an address a local
Ray is started with ``num_cpus`` workers.
"""

from __future__ import annotations

from .evaluation import RUN_SUFFIXES, evaluate_files, list_sources
from .runtime import connect, require_ray
from .scoring import RayScoring

__all__ = ["RUN_SUFFIXES", "RayScoring", "connect", "evaluate_files", "list_sources", "require_ray"]
