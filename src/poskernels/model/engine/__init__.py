"""The engine: the head of :mod:`poskernels.model.head`, computed fast, and tested equal to it.

* :mod:`~poskernels.model.engine.stack`: ``M`` heads trained as one stack, the score factored into tables over
  tokens and positions (forward, hand-written backward), joining, each a forward beside its backward:
  :mod:`~poskernels.model.engine.tables` (the content table), :mod:`~poskernels.model.engine.position_term` (an
  added code's share and the bias) and the score paths of :mod:`~poskernels.model.engine.paths`, one table of
  :mod:`~poskernels.model.engine.content_path`, :mod:`~poskernels.model.engine.rotary_path` and
  :mod:`~poskernels.model.engine.token_path`;
* :mod:`~poskernels.model.engine.reductions`: the per-model reductions that keep a head's bits the same alone
  and inside any stack, and each model's cross-entropy;
* :mod:`~poskernels.model.engine.one_head`: one head by the engine, the stack of one (``query_forward``,
  ``loss_and_grad``, ``accuracy``, ...), as the trainer, the tournament and the readers call it;
* :mod:`~poskernels.model.engine.scores`: the score in the forms readers ask for (pairs; a head without a bias,
  read without offsets);
* :mod:`~poskernels.model.engine.stream`: one query read over ``10^6`` keys in chunks with a running softmax
  (:mod:`~poskernels.model.engine.chunk_pass`: the pass over the chunks;
  :mod:`~poskernels.model.engine.key_chunks`: a chunk's keys grouped by token);
* :mod:`~poskernels.model.engine.cut`: Theorem 3's certified cut of a head whose bias is exactly ``-s r``.
* :mod:`~poskernels.model.engine.bands`: what a filing read in bands shares across the heads of one configuration.

Every one reads a scheme only through its hooks (:class:`poskernels.encodings.Scheme`); ``tests/test_engine.py``
checks each against the readable head for every registered scheme, one registered from outside included.
"""
