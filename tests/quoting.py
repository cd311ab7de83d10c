"""A check shared by the bad-input tests: the error message quotes the offending value."""

import re


def assert_quotes(message: str, quoted: str) -> None:
    """Assert that ``message`` quotes ``quoted`` as a whole token, after its last ``got`` when it has one.

    A bare substring test passes by accident ("0" is in "got 10", "1" in "b > 1"); this one needs the
    value itself, not part of a longer number or name, where the message reports what it received.
    """
    if " " in quoted:  # a phrase ("...; got 'x'") is specific enough as it stands
        assert quoted in message, f"{quoted!r} is not in: {message}"
        return
    tail = message.rsplit("got", 1)[-1] if "got" in message else message
    pattern = r"(?<![\w.])" + re.escape(quoted) + r"(?!\w|\.\d)"
    assert re.search(pattern, tail), f"{quoted!r} is not quoted in: {message}"
