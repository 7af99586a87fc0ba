"""Run analysis: tie prevalence, precision formats and sweeps, rank banding, system comparisons, cutoff
curves.  Numbers only: drawing and page layout live in [`tierank.report`][tierank.report]."""
