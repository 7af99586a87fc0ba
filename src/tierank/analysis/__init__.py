"""Run analysis: tie prevalence, precision sweeps, rank banding, system comparisons."""
