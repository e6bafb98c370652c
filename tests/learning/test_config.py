"""Tests for kmt_ref.learning.config: every hyperparameter is checked and named (SPEC §6)."""
import dataclasses
import math

import pytest

from kmt_ref.learning.training import train
from learning_cases import TINY


@pytest.mark.parametrize("field,value,err", [
    ("lr", -1.0, ValueError), ("dropout", 1.0, ValueError), ("embedding", "flag", ValueError),
    ("steps", 0, ValueError), ("batch", 2.5, TypeError), ("k", 100, ValueError), ("loss_lambda", math.inf, ValueError),
])
def test_invalid_hyperparameters_name_the_argument(field, value, err):
    with pytest.raises(err, match=field):
        train(dataclasses.replace(TINY, **{field: value}), log=lambda s: None)
