"""Count the hostile cases handled, per class, judged by behaviour only (not by the wording of messages).

``PYTHONPATH=src python benchmarks/hostile_count.py`` (``PYTHONPATH=OTHER_TREE/src`` counts another tree, such as
the code before the output writer); prints one line per class and the cases not handled.  Neither a benchmark of
speed (``make bench`` does not run it) nor a test (pytest does not collect it): the measure behind the counts
given for the hardening.  Handled: the exit status the rule asks for, one line on stderr without a traceback or
"internal error", and no data lost (the files are checked after).
"""
import contextlib
import io
import json
import os
import socket
import sqlite3
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test_exit_codes: the table, its helpers
import test_exit_codes as T  # noqa: E402
from poskernels import cli  # noqa: E402

results = {}


def record(cls, name, ok):
    results.setdefault(cls, []).append((name, bool(ok)))


def run(argv, env=None):
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main([str(a) for a in argv])
            except SystemExit as stop:
                status = stop.code
            except BaseException as e:  # noqa: BLE001
                status, err2 = "raised", f"Traceback {type(e).__name__}: {e}"
                err.write(err2)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return status, out.getvalue(), err.getvalue()


def one_line(err):
    lines = [x for x in err.splitlines() if x.strip()]
    return len(lines) == 1 and "Traceback" not in err and "internal error" not in err


def world():
    d = Path(tempfile.mkdtemp())
    os.chdir(d)
    (d / "g.toml").write_text("[fixed]\nsteps = 5\n[grid]\nseed = [0, 1]\n")
    for name, text in [("bad.toml", "[grid\nseed = 1\n"), ("type.toml", '[grid]\nseed = ["zero"]\n'),
                       ("range.toml", "[grid]\nd = [-4]\n"), ("huge.toml", f"[grid]\nseed = [{T.BIG}]\n"),
                       ("cfg.json", '{"head_dim": 64, "max_position_embeddings": 2048}'),
                       ("malformed.json", '{"head_dim": '),
                       ("type.json", '{"head_dim": "wide", "max_position_embeddings": 2048}'),
                       ("range.json", '{"head_dim": -64, "max_position_embeddings": 2048}'),
                       ("huge.json", '{"head_dim": 64, "max_position_embeddings": ' + T.BIG + "}")]:
        (d / name).write_text(text)
    (d / "empty.sqlite").write_bytes(b"")
    (d / "junk.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(4000))
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key
    from poskernels.sweep.store import Store
    with Store(d / "s.sqlite") as s:
        pairs = [(point_key(p), p) for p in parse_grid("[grid]\nseed = [0, 1]\n").points]
        s.add_points(pairs, "v1")
        s.finish({k: {"metrics": {"accuracy": {"32": 0.5}, "final_loss": 1.0}} for k, _ in pairs}, run_id=1)
    return d


# ------------------------------------------------------------------ exit codes: the table
import functools  # noqa: E402

from poskernels.cli import sweep as sweep_cli  # noqa: E402
from poskernels.sweep import backends, runner  # noqa: E402

sweep_cli.dask_backend = functools.partial(backends.dask_backend, timeout=2)
for command, category, argv, env, status, _words in T.TABLE:
    world()
    got, out, err = run(argv, env)
    record("exit codes", f"{command} {category} {argv[:4]}", got == status and one_line(err))

for column, value, _words in T.ROW_EDITS:
    d = world()
    db = sqlite3.connect(d / "s.sqlite")
    db.execute(f"UPDATE points SET {column} = {value} WHERE rowid = 1")
    db.commit()
    db.close()
    for argv in (["sweep", "export", "s.sqlite", "--out", "o.csv"], ["plot", "s.sqlite", "--out", "o.png"]):
        got, out, err = run(argv)
        record("damaged store rows", f"{column}={value[:20]} {argv[0]}", got == 2 and one_line(err))

# disk full: ENOSPC from the writer's rename step


def enospc(*a, **k):
    raise OSError(28, "No space left on device")


for argv in (["census", "llama-2-7b", "--json", "c.json"], ["sweep", "export", "s.sqlite", "--out", "o.csv"],
             ["plot", "s.sqlite", "--out", "o.png"], ["reproduce", "--only", "thm1", "--out", "res"]):
    world()
    real = os.replace
    os.replace = enospc
    try:
        got, out, err = run(argv)
    finally:
        os.replace = real
    lines = [x for x in err.splitlines() if x.strip()]
    record("disk full", argv[0], got == 1 and lines and "disk full" in lines[-1].lower() and "damaged" not in err)

# the sweep's store on a full disk: SQLite's error on finishing rows
d = world()
connect = sqlite3.connect
from poskernels.sweep import store as store_module  # noqa: E402

store_module.sqlite3.connect = lambda *a, **k: T._FullConnection(connect(*a, **k))
sweep_cli.local_backend = T._one_thread
real_run = sweep_cli.run_sweep
sweep_cli.run_sweep = functools.partial(runner.run_sweep, job=T._instant, every=0.01)
try:
    got, out, err = run(["sweep", "g.toml", "--store", "full.sqlite"])
finally:
    store_module.sqlite3.connect = connect
    sweep_cli.run_sweep = real_run
lines = [x for x in err.splitlines() if x.strip()]
record("disk full", "sweep store", got == 1 and "disk full" in lines[-1].lower() and "damaged" not in err)

# ------------------------------------------------------------------ data loss
PNG = b"\x89PNG"


def case(name, fn):
    try:
        ok = fn()
    except BaseException as e:  # noqa: BLE001
        ok = False
        print("  ", name, "raised", type(e).__name__, e, file=sys.stderr)
    record("data loss", name, ok)


def c_symlink():
    d = world()
    (d / "real.json").write_text("old")
    (d / "l.json").symlink_to(d / "real.json")
    got, _, _ = run(["census", "llama-2-7b", "--json", "l.json"])
    return got == 0 and (d / "l.json").is_symlink() and (d / "real.json").read_text() != "old"


def c_fifo():
    d = world()
    os.mkfifo(d / "p")
    got_data = []
    t = threading.Thread(target=lambda: got_data.append((d / "p").read_bytes()), daemon=True)
    t.start()
    got, _, _ = run(["census", "llama-2-7b", "--json", "p"])
    t.join(5)
    return got == 0 and stat.S_ISFIFO(os.lstat(d / "p").st_mode) and got_data and got_data[0].startswith(b"{")


def c_device(minor, status):
    def f():
        d = world()
        os.mknod(d / "dev", stat.S_IFCHR | 0o666, os.makedev(1, minor))
        got, _, err = run(["census", "llama-2-7b", "--json", "dev"])
        return got == status and stat.S_ISCHR(os.lstat(d / "dev").st_mode) and (status == 0 or one_line(err))
    return f


def c_plot_device():
    d = world()
    os.mknod(d / "dev", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    got, _, _ = run(["census", "llama-2-7b", "--plot", "dev"])
    return got == 0 and stat.S_ISCHR(os.lstat(d / "dev").st_mode)


def c_same(argv, victim):
    def f():
        d = world()
        before = (d / victim).read_bytes()
        got, _, err = run(argv)
        return got == 2 and one_line(err) and (d / victim).read_bytes() == before
    return f


def c_same_link():
    d = world()
    (d / "l.json").symlink_to(d / "cfg.json")
    before = (d / "cfg.json").read_bytes()
    got, _, err = run(["census", "cfg.json", "--json", "l.json"])
    return got == 2 and (d / "cfg.json").read_bytes() == before


def c_export_empty(cmd):
    def f():
        d = world()
        argv = ["sweep", "export", "empty.sqlite", "--out", "o.csv"] if cmd == "export" else ["plot", "empty.sqlite"]
        got, _, err = run(argv)
        return got == 2 and (d / "empty.sqlite").read_bytes() == b"" and not (d / "empty.sqlite-wal").exists()
    return f


def c_missing_parent(argv):
    def f():
        d = world()
        got, _, err = run(argv)
        return got == 2 and one_line(err) and not (d / "nodir").exists()
    return f


def c_before_first_byte():
    d = world()
    (d / "gemma.json").write_text(json.dumps(T_GEMMA))
    got, _, err = run(["census", "gemma.json", "--json", "a.json", "--plot", "b.png"])
    return got == 2 and not (d / "a.json").exists()


T_GEMMA = {"model_type": "gemma3_text", "head_dim": 256, "max_position_embeddings": 131072,
           "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
           "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                               "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}


def c_dash(argv):
    def f():
        d = world()
        buf = io.BytesIO()
        wrapper = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape")
        old = sys.stdout
        sys.stdout = wrapper
        try:
            got = cli.main(argv)
        except SystemExit as s:
            got = s.code
        finally:
            wrapper.flush()
            sys.stdout = old
        return got == 0 and not (d / "-").exists() and buf.getvalue()[:4] in (PNG, b"key,", b"{\n \"")
    return f


def c_readonly():
    d = world()
    (d / "ro.json").write_text("keep")
    (d / "ro.json").chmod(0o444)
    got, _, _ = run(["census", "llama-2-7b", "--json", "ro.json"])
    return got == 2 and (d / "ro.json").read_text() == "keep"


def c_two_outputs():
    d = world()
    got, _, _ = run(["census", "llama-2-7b", "--json", "a.png", "--plot", "a.png"])
    return got == 2 and not (d / "a.png").exists()


def c_socket():
    d = world()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "s.sock"))
    got, _, _ = run(["census", "llama-2-7b", "--json", "s.sock"])
    ok = got == 2 and stat.S_ISSOCK(os.lstat(d / "s.sock").st_mode)
    s.close()
    return ok


def c_reproduce_folder():
    d = world()
    (d / "res").mkdir()
    (d / "res" / "numbers.json").mkdir()
    got, out, err = run(["reproduce", "--only", "thm1", "--out", "res"])
    return got == 2 and "Theorem" not in out


case("symlink written through", c_symlink)
case("FIFO written through", c_fifo)
case("device written in place (null)", c_device(3, 0))
case("plot to a device in place", c_plot_device)
case("device full: disk full, exit 1", c_device(7, 1))
case("census cfg --json cfg", c_same(["census", "cfg.json", "--json", "cfg.json"], "cfg.json"))
case("census cfg --json link-to-cfg", c_same_link)
case("export S --out S", c_same(["sweep", "export", "s.sqlite", "--out", "s.sqlite"], "s.sqlite"))
case("sweep G --store G", c_same(["sweep", "g.toml", "--store", "g.toml"], "g.toml"))
case("export of an empty file writes nothing into it", c_export_empty("export"))
case("plot of an empty file writes nothing into it", c_export_empty("plot"))
for argv in (["census", "llama-2-7b", "--json", "nodir/x.json"], ["census", "llama-2-7b", "--plot", "nodir/x.png"],
             ["sweep", "export", "s.sqlite", "--out", "nodir/x.csv"], ["plot", "s.sqlite", "--out", "nodir/x.png"],
             ["sweep", "g.toml", "--store", "nodir/s.sqlite"]):
    case(f"missing parent {argv[0]} {argv[-2]}", c_missing_parent(argv))
case("census --json a --plot b on per-layer config", c_before_first_byte)
case("census --plot -", c_dash(["census", "llama-2-7b", "--plot", "-"]))
case("plot --out -", c_dash(["plot", "s.sqlite", "--out", "-"]))
case("census --json -", c_dash(["census", "llama-2-7b", "--json", "-"]))
case("export --out -", c_dash(["sweep", "export", "s.sqlite", "--out", "-"]))
case("read-only file kept", c_readonly)
case("--json X --plot X", c_two_outputs)
case("socket refused", c_socket)
case("reproduce numbers.json is a folder", c_reproduce_folder)


# ------------------------------------------------------------------ hangs / DoS
def h_fifo_input():
    d = world()
    os.mkfifo(d / "grid.toml")
    from poskernels.errors import read_text
    r = []
    t = threading.Thread(target=lambda: r.append(read_text(d / "grid.toml", "grid")), daemon=True)
    t.start()
    t.join(5)
    return not t.is_alive()


def h_lab():
    from poskernels.lab import server
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    port = s.server_address[1]
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
    for c in slow:
        c.sendall(b"GET / HTTP/1.1\r\n")
    stop = threading.Event()

    def trickle():
        while not stop.wait(0.2):
            for c in slow:
                try:
                    c.sendall(b"X-a: b\r\n")
                except OSError:
                    pass
    threading.Thread(target=trickle, daemon=True).start()
    time.sleep(0.5)
    import urllib.request
    t0 = time.monotonic()
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/payload.json", timeout=5).read()
        ok = time.monotonic() - t0 < 2
    except Exception:  # noqa: BLE001
        ok = False
    stop.set()
    for c in idle + slow:
        c.close()
    return ok


def h_trickle_deadline():
    from poskernels.lab import handler, server
    handler._Handler.timeout = 1.0
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    c = socket.create_connection(("127.0.0.1", s.server_address[1]))
    c.sendall(b"GET / HTTP/1.1\r\n")
    t0 = time.monotonic()
    closed = False
    c.settimeout(0.1)
    while time.monotonic() - t0 < 4:
        try:
            c.sendall(b"X-a: b\r\n")
            if c.recv(1) == b"":
                closed = True
                break
        except TimeoutError:
            pass
        except OSError:
            closed = True
            break
    handler._Handler.timeout = 10.0
    return closed


def h_unreachable_fast():
    world()
    t0 = time.monotonic()
    sweep_cli.dask_backend = backends.dask_backend  # the default timeout
    got, _, err = run(["sweep", "g.toml", "--store", "n.sqlite", "--scheduler", "tcp://127.0.0.1:9"])
    return time.monotonic() - t0 < 5 and got in (1, 2) and one_line(err)


for name, fn in [("FIFO input without writer", h_fifo_input), ("lab: 64 slow + 300 idle", h_lab),
                 ("lab: trickler cut at deadline", h_trickle_deadline),
                 ("refused scheduler answers at once", h_unreachable_fast)]:
    try:
        ok = fn()
    except BaseException as e:  # noqa: BLE001
        ok = False
        print("  ", name, "raised", type(e).__name__, e, file=sys.stderr)
    record("hangs and denial of service", name, ok)


# ------------------------------------------------------------------ papercuts
def p_broken_pipe(argv):
    def f():
        import subprocess
        d = world()
        p = subprocess.Popen([sys.executable, "-m", "poskernels", *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=d, env={**os.environ})
        p.stdout.read(10)
        p.stdout.close()
        err = p.stderr.read().decode()
        return p.wait(120) == 0 and "Traceback" not in err
    return f


def p_did_you_mean():
    world()
    got, _, err = run(["reproduce", "--only", "tournement"])
    return got == 2 and "did you mean" in err


def p_nothing():
    world()
    got, out, err = run(["reproduce", "--only", "tournament", "--no-train", "--out", "r"])
    return got != 0 and one_line(err)


def p_quiet():
    world()
    got, out, err = run(["--quiet", "census", "llama-2-7b", "--json", "c.json"])
    return got == 0 and err == ""


def p_lab_ctrl_c():
    import signal
    import subprocess
    p = subprocess.Popen([sys.executable, "-m", "poskernels", "lab", "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    p.send_signal(signal.SIGINT)
    return p.wait(30) == 130


for name, fn in [("census | head", p_broken_pipe(["census", "llama-3.1-8b"])),
                 ("census --json - | head", p_broken_pipe(["census", "llama-3.1-8b", "--json", "-"])),
                 ("reproduce | head", p_broken_pipe(["reproduce", "--only", "thm1", "--out", "r"])),
                 ("--only did you mean", p_did_you_mean), ("--only X --no-train computes nothing", p_nothing),
                 ("--quiet", p_quiet), ("lab Ctrl-C exits 130", p_lab_ctrl_c)]:
    try:
        ok = fn()
    except BaseException as e:  # noqa: BLE001
        ok = False
        print("  ", name, "raised", type(e).__name__, e, file=sys.stderr)
    record("CLI papercuts", name, ok)

for cls, rows in results.items():
    print(f"{cls}: {sum(ok for _, ok in rows)}/{len(rows)} handled")
    for name, ok in rows:
        if not ok:
            print("    not handled:", name)
