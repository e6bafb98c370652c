"""The tiny training configuration shared by tests/learning and tests/viz (a run of about a second)."""
import dataclasses

from kmt_ref.learning import CONFIGS

TINY = dataclasses.replace(CONFIGS["small"], n=24, d=2, k=3, batch=4, steps=30, eval_every=10, n_val=8,
                           checkpoint_every=10)
