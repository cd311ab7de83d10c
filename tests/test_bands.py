"""The band layout of a filing reading (:mod:`poskernels.model.engine.bands`): the turns every head of one
configuration shares, the same bits as turning each head by its angles."""

import numpy as np
import pytest

from poskernels.encodings import default_positions, rotate
from poskernels.model.engine.bands import band_turns, turn


def _bands():
    theta = np.array([[1.0, 0.1], [0.5, 0.05], [0.25, 0.02]])  # (bands, P)
    return theta, ((1.0, 0, 3), (1.5, 3, 5), (2.0, 5, 6)), 6


def test_the_shared_turns_are_rotates_bits_at_every_key_query_and_own_key():
    theta, bands, n = _bands()
    layout = band_turns(theta, bands, n)
    rng = np.random.default_rng(0)
    pos = default_positions(n + 1)
    keys = np.concatenate([np.arange(b) for _, _, b in bands]).astype(float)  # each band's prefix, in turn
    K = rng.normal(size=(keys.size, 6))  # (sum of the prefixes, d) with one plane past P
    Q = rng.normal(size=(n, 6))
    key_theta = np.repeat(theta, layout.stops, axis=0)
    assert np.array_equal(turn(K, layout.key), rotate(K, keys[:, None] * key_theta))
    assert np.array_equal(turn(Q, layout.query), rotate(Q, pos[1:, None] * theta[layout.band]))
    assert np.array_equal(turn(Q, layout.own), Q)  # by offset 0: the query's own key is as it came
    assert layout.band.tolist() == [0, 0, 0, 1, 1, 2]
    assert np.array_equal(layout.hidden, np.triu(np.ones((n, n), bool), 1))


def test_a_rates_table_is_kept_grown_and_read_only():
    from poskernels.model.engine.bands import _rate_turns

    theta_k = np.array([0.3, 0.07])
    small = _rate_turns(theta_k, 5)
    assert _rate_turns(theta_k.copy(), 3) is small  # fewer rows: the same table, read from its first rows
    big = _rate_turns(theta_k, 50)  # more rows: a larger table, the same turns where both have them
    assert big[0].shape[0] >= 50 and np.array_equal(big[0][: small[0].shape[0]], small[0])
    with pytest.raises(ValueError):
        big[0][0, 0] = 1.0  # shared by every head and filing that follows: never written
