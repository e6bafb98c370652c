r"""Learning the algorithm (SPEC §6): the trainable one-layer transformer.

The experiment (the paper's, reported from a summary; the authors' code runs it
with ``train.py``): take the encoder-decoder layer of Theorem 2.1, forget
the hand-set weights, learn all twelve Q, K, V (with biases) by gradient
descent on random clustering tasks, and apply the trained layer T = 20 times
(the authors' ``expts.md``: ``--niters 20``). Trained at d = 32, k = 10,
n = 512 (their ``expts.md``), the committed model ends below Lloyd's algorithm
and the d-only ablation (no one-hot rows) above it, as the paper reports (from
a summary); the numbers: ``python -m kmt_ref report evaluation`` (docs/RESULTS.md).

The modules, from the bottom up (each imports only those above it and the
rest of kmt_ref; none draws: the pictures are in :mod:`kmt_ref.viz.learning_figures`):

- :mod:`~kmt_ref.learning.tasks` — the task distribution (Gaussian mixtures and four other families);
- :mod:`~kmt_ref.learning.model` — parameters, the layer description, the embedding, one
  application of the layer; the autograd rules;
- :mod:`~kmt_ref.learning.config` — :class:`TrainConfig`, every hyperparameter (defaults: the authors' main setting);
- :mod:`~kmt_ref.learning.loss` — the smoothed k-means loss and the hard objectives;
- :mod:`~kmt_ref.learning.optim` — Adam and the plateau schedule;
- :mod:`~kmt_ref.learning.checkpoint` — checkpoints and stored evaluation results on disk;
- :mod:`~kmt_ref.learning.evaluation` — T re-embedded steps against Lloyd (in distribution, other n, k-means++ starts, other families);
- :mod:`~kmt_ref.learning.training` — the training loop, its validation, malloc tuning;
- :mod:`~kmt_ref.learning.cli` — the ``train`` and ``evaluate`` commands (not imported here).

One training step: :func:`~kmt_ref.learning.tasks.sample_tasks` draws 32 tasks;
:func:`~kmt_ref.learning.loss.batch_loss` embeds them and applies the layer
(:func:`~kmt_ref.learning.model.model_step`, i.e. :func:`kmt_ref.layer_forward`)
and scores the new centers with the smoothed loss; autograd's ``value_and_grad``
differentiates it; :class:`~kmt_ref.learning.optim.Adam` updates the weights.

Everything public is importable from here: ``from kmt_ref.learning import train, evaluate``.
"""
from .tasks import FAMILIES, INITS, sample_task, sample_tasks, kmeans_plus_plus
from .model import EMBEDDINGS, BLOCKS, d_emb_of, init_params, model_layer, embed_batch, model_step, attention_maps
from .config import TrainConfig, CONFIGS
from .loss import soft_kmeans_loss, batch_loss, batch_objective, lloyd_batch
from .optim import Adam, Plateau
from .checkpoint import (MODELS_DIR, CheckpointError, Checkpoint, HISTORY_KEYS, CHECKPOINT_FORMAT, save_checkpoint,
                         load_checkpoint, save_evaluation, load_evaluation)
from .evaluation import run_model, evaluate, PAPER_SUITE, EVAL_SEED, setting_label
from .training import TrainingDiverged, validation_tasks, validation_score, train, tune_malloc

__all__ = [
    "FAMILIES", "INITS", "sample_task", "sample_tasks", "kmeans_plus_plus",
    "EMBEDDINGS", "BLOCKS", "d_emb_of", "init_params", "model_layer", "embed_batch", "model_step", "attention_maps",
    "TrainConfig", "CONFIGS",
    "soft_kmeans_loss", "batch_loss", "batch_objective", "lloyd_batch",
    "Adam", "Plateau",
    "MODELS_DIR", "CheckpointError", "Checkpoint", "HISTORY_KEYS", "CHECKPOINT_FORMAT", "save_checkpoint",
    "load_checkpoint", "save_evaluation", "load_evaluation",
    "run_model", "evaluate", "PAPER_SUITE", "EVAL_SEED", "setting_label",
    "TrainingDiverged", "validation_tasks", "validation_score", "train", "tune_malloc",
]
