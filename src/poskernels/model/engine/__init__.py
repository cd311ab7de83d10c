"""The engine: the head of :mod:`poskernels.model.head`, computed fast, and tested equal to it.

* :mod:`~poskernels.model.engine.stack`: ``M`` heads trained as one stack, the score factored into tables over
  tokens and positions (forward, hand-written backward);
* :mod:`~poskernels.model.engine.reductions`: the per-model reductions that keep a head's bits the same alone
  and inside any stack, and each model's cross-entropy;
* :mod:`~poskernels.model.engine.stream`: one query read over ``10^6`` keys in chunks with a running softmax
  (:mod:`~poskernels.model.engine.key_chunks`: a chunk's keys grouped by token);
* :mod:`~poskernels.model.engine.cut`: Theorem 3's certified cut of a head whose bias is exactly ``-s r``.

Every one reads a scheme only through its hooks (:class:`poskernels.encodings.Scheme`); ``tests/test_engine.py``
checks each against the readable head for every registered scheme, one registered from outside included.
"""
