"""Time the reading side of a cold ``reproduce`` part by part, in one process, and fingerprint every reading.

Usage: ``PYTHONPATH=TREE/src python benchmarks/bench_reading.py --cache CACHE [--seeds 10] [--parts ...]``

Reads the trained heads cached in ``CACHE`` (a ``reproduce`` run's cache, seeds ``0 .. seeds - 1``; a head that is
not there is trained first, outside the timing) the way a cold run reads them, one BLAS thread:

* ``filings``: the case study's seven readers (:data:`~poskernels.experiments.filing_maps.FILING_READERS`) on the
  100 held-out filings, every logit of :func:`~poskernels.experiments.filing_maps.read_filing_as`;
* ``beyond``: every scheme beyond the article read as trained on the same filings (FIRE's bias among them);
* ``randomized``: the tournament's heads trained at randomized positions, each read at the four test lengths as
  Ruoss et al. read them (:func:`~poskernels.experiments.held_out.head_hits`, each sequence at its own positions).

Each row is the CPU seconds of one reader or scheme (``time.process_time``: another job on the cores does not count)
and a SHA-256 of what it read (the logits' bytes, or the hits').  Run it in the tree before a change and in the tree
after, one after the other, with the same cache: the digests must agree (the readings bit for bit) and the CPU
seconds are the figures to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import os


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="the cache holding the trained heads")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. seeds - 1 (default 10)")
    parts = ["filings", "beyond", "randomized"]
    parser.add_argument("--parts", nargs="+", default=parts, choices=parts, help="what to read (default: all three)")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = _parse(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # before NumPy loads its BLAS
    import time

    import numpy as np

    from poskernels.experiments.filing_heads import train_filing_heads
    from poskernels.experiments.filing_maps import FILING_READERS, read_filing_as
    from poskernels.experiments.filings_beyond import train_beyond_heads
    from poskernels.experiments.held_out import head_hits
    from poskernels.experiments.tournament import TEST_LENGTHS, tournament_jobs
    from poskernels.model.train import train_many
    from poskernels.tasks.filings import case_corpus, encode_filing

    seeds = range(args.seeds)
    rows = []

    def timed(name, heads, read):
        digest = hashlib.sha256()
        start = time.process_time()
        for head in heads:
            for out in read(head):
                digest.update(np.ascontiguousarray(out).tobytes())
        rows.append((name, len(heads), time.process_time() - start, digest.hexdigest()[:16]))
        print(f"{name:<20} {len(heads):>5} {rows[-1][2]:>8.2f}  {rows[-1][3]}", flush=True)

    print(f"{'reader':<20} {'heads':>5} {'CPU s':>8}  sha256 of the readings")
    if {"filings", "beyond"} & set(args.parts):
        docs = [encode_filing(f) for f in case_corpus().test]  # (100 filings)
        on_filings = lambda reader: lambda h: [read_filing_as(h.params, h.head, d.ids, reader) for d in docs]  # noqa: E731
    if "filings" in args.parts:
        heads = train_filing_heads(args.cache, workers=1, seeds=seeds)
        for reader, (scheme, _) in FILING_READERS.items():
            timed(reader, heads[scheme], on_filings(reader))
    if "beyond" in args.parts:
        for scheme, heads in train_beyond_heads(args.cache, workers=1, seeds=seeds).items():
            timed(scheme, heads, on_filings(scheme))
    if "randomized" in args.parts:
        jobs = [(c, s) for c, s in tournament_jobs(seeds=seeds) if getattr(c.head, "random_positions", 0)]
        heads = train_many(jobs, cache_dir=args.cache, workers=1)
        for scheme in dict.fromkeys(h.head.scheme for h in heads):
            timed(scheme, [h for h in heads if h.head.scheme == scheme],
                  lambda h: [head_hits(h, n) for n in TEST_LENGTHS])  # fmt: skip
    total = sum(r[2] for r in rows)
    everything = hashlib.sha256("".join(r[3] for r in rows).encode()).hexdigest()[:16]
    print(f"{'total':<20} {sum(r[1] for r in rows):>5} {total:>8.2f}  {everything}")


if __name__ == "__main__":
    main()
