"""Regenerate the paper's numerical-validation draw: ``kmt_ref/datasets/paper_validation.npy``.

Usage (torch is NOT a dependency of kmt_ref; use a throwaway environment)::

    python -m venv /tmp/venv_torch && /tmp/venv_torch/bin/pip install torch==2.13.0 numpy
    /tmp/venv_torch/bin/python tools/make_paper_validation_data.py            # writes the file
    /tmp/venv_torch/bin/python tools/make_paper_validation_data.py --check    # compares with it

The recipe is the one the authors' ``numerical_validation.ipynb`` (GitHub
``rithram/kmeans-trf``) runs before its Lloyd and transformer runs, step by step
in the same order, because every step draws from torch's global generator:

1. ``torch.manual_seed(5487)``;
2. the 5 true means: ``torch.rand(5, 2)`` (uniform in [0, 1)^2);
3. for each mean in turn, 10,000 // 5 = 2,000 points, each from its own
   ``MultivariateNormal(loc=mean, covariance_matrix=0.01 * I_2).sample()`` call
   (std 0.1 per coordinate), stacked into rows (10000, 2) in draw order;
4. min-max scaling per dimension: subtract the column minimum, then divide by
   the column maximum of the shifted points (two float32 operations, in that
   order, as the notebook does);
5. a shuffle of the rows by ``torch.randperm(10000)``;
6. the initial centers are the first 5 rows (``kmt_ref.data.paper_validation_data``
   takes them; they are not stored separately).

The file holds the float32 rows (10000, 2) exactly as torch computes them. Its
fingerprint (pinned in tests/test_data.py): the float32 sum of all entries is
9847.1943359375. The draw depends on torch's generator, which PyTorch keeps
stable across versions on CPU; this file was made with torch 2.13.0 (CPU).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

SEED = 5487
N_CLUSTERS = 5
N_DIMS = 2
N_POINTS = 10_000
VARIANCE = 0.01  # the covariance is VARIANCE * I: std 0.1 per coordinate
FINGERPRINT_SUM = 9847.1943359375
OUT = Path(__file__).resolve().parent.parent / "kmt_ref" / "datasets" / "paper_validation.npy"


def draw():
    """The authors' validation points as a float32 array of rows, shape (10000, 2)."""
    torch.manual_seed(SEED)
    means = torch.rand(N_CLUSTERS, N_DIMS)  # (5, 2)
    rows = []
    for mean in means:
        dist = torch.distributions.MultivariateNormal(loc=mean, covariance_matrix=VARIANCE * torch.eye(N_DIMS))
        rows.extend(dist.sample() for _ in range(N_POINTS // N_CLUSTERS))  # one call per point
    X = torch.stack(rows)  # (10000, 2), cluster by cluster
    X = X - X.min(dim=0).values  # min-max scaling, in the notebook's order: shift ...
    X = X / X.max(dim=0).values  # ... then divide by the shifted maximum
    X = X[torch.randperm(X.shape[0])]  # the shuffle; the first 5 rows are the initial centers
    return X.numpy().astype(np.float32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default: {OUT})")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    X = draw()
    total = float(X.sum(dtype=np.float32))
    print(f"torch {torch.__version__}: shape {X.shape}, dtype {X.dtype}, float32 sum {total!r}")
    if total != FINGERPRINT_SUM:
        print(f"fingerprint mismatch: expected sum {FINGERPRINT_SUM!r}", file=sys.stderr)
        return 1
    if args.check:
        same = np.array_equal(np.load(args.out), X)
        print(f"{args.out}: {'identical' if same else 'DIFFERENT'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, X, allow_pickle=False)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
