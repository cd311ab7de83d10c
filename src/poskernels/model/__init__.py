"""model layer: one causal attention head, its hand-written gradients, Adam, training and its cache."""

from .config import PRESETS, HeadConfig, TrainConfig, preset
from .head import Reading, accuracy, init_params, loss_and_grad, query_logits, token_table
from .reader import score_all
from .schemes import HEAD_SCHEMES

__all__ = [
    "HEAD_SCHEMES",
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
