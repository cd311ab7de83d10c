"""Session-wide test setup."""

import signal

# A job started in the background of a non-interactive shell (as CI runners may start `.ci/run`) inherits
# SIGINT *ignored*, and Python then never installs its KeyboardInterrupt handler -- in this process or in
# the subprocesses the tests start.  The Ctrl-C tests (the lab server, an interrupted sweep) need the
# handler a user at a terminal has, so install it here; children then start with SIGINT at its default.
signal.signal(signal.SIGINT, signal.default_int_handler)
