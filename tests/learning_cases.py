"""What tests/learning and tests/viz share: the tiny training configuration (a run of about a second), train-sweep rows."""
import dataclasses

import numpy as np

from kmt_ref.learning import CONFIGS

TINY = dataclasses.replace(CONFIGS["small"], n=24, d=2, k=3, batch=4, steps=30, eval_every=10, n_val=8,
                           checkpoint_every=10)


def sweep_rows(values, seeds=(0, 1, 2), steps=(0, 50, 100)):
    """Train-sweep rows of Figure 10b's kind: d in ``values``, both embeddings; the score of a seed is a known number."""
    rows = []
    for d in values:
        for e, base in (("onehot", 0.9), ("none", 1.1)):
            for seed in seeds:
                for step in steps:
                    rows.append(dict(n=512, d=d, k=6, loss_lambda=10.0, embedding=e, seed=seed, steps=steps[-1],
                                     step=step, train_loss=np.nan if step == 0 else 10.0 + seed + d,
                                     val_score=base + 0.01 * seed - 0.001 * step, lr=0.01, run_cpu_s=1.0))
    return rows
