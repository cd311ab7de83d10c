"""model layer: the article's head (:mod:`~poskernels.model.head`), its engine, Adam, training and its cache."""

from .all_positions import score_all
from .config import PRESETS, HeadConfig, TrainConfig, preset
from .embedding import token_table
from .engine.one_head import accuracy, loss_and_grad, query_logits
from .head import init_params
from .reading import Reading

__all__ = [
    "PRESETS",
    "HeadConfig",
    "Reading",
    "TrainConfig",
    "accuracy",
    "init_params",
    "loss_and_grad",
    "preset",
    "query_logits",
    "score_all",
    "token_table",
]
