"""Joining a Ray cluster: the Ray module imported on first use, with the install line if it is missing."""

from __future__ import annotations

from ..errors import TierankInputError

__all__ = ["require_ray", "connect"]


def require_ray():
    """The ``ray`` module, or a one-line error with the install command."""
    try:
        import ray
    except ImportError:
        raise TierankInputError(
            "distributed evaluation needs Ray: pip install 'tierank[ray]'"
        ) from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Join the Ray cluster at ``address`` (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``), or
    start a local one with ``num_cpus`` CPUs; an existing connection is reused.  Returns ``ray``."""
    ray = require_ray()
    if not ray.is_initialized():
        kwargs = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=num_cpus, **kwargs)
    return ray
