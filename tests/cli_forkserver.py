"""A fork server for CLI tests: one interpreter imports strata once, then forks a
fresh process per request that becomes `strata ARGS` (the console script's entry
point, `strata.cli.main:main`) with its own cwd, environment, stdout/stderr files,
exit status and a hard timeout. Spares each call the ~0.35 s of imports and the
~0.1 s grammar build a new interpreter costs, and a Spark Connect call the ~0.55 s of
its client's imports. (gRPC's fork support is off in the tests, conftest.py: the
client's threads start in the child, on its first call.)

Protocol, one JSON object per line: request on stdin
`{"args", "cwd", "env", "out", "err", "timeout"}`, reply on stdout `{"code", "cpu"}`
(the exit status, -N when killed by signal N; the child's user + system CPU seconds,
what a test's time bound reads: unlike the wall clock, a busy machine does not
inflate it).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import signal
import sys


def _child(req: dict) -> None:
    signal.alarm(max(1, int(req["timeout"])))  # SIGALRM ends a hung child
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path in ((1, req["out"]), (2, req["err"])):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    sys.stdin = open(os.devnull)  # noqa: SIM115  (lives as long as the process)
    sys.argv = ["strata", *req["args"]]
    code = 0
    try:
        from strata.cli.main import main

        main()
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001  what the script would show: a traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    import strata.cli
    import strata.cli.main

    for info in pkgutil.iter_modules(strata.cli.__path__):
        importlib.import_module(f"strata.cli.{info.name}")
    try:  # the grammar's LALR tables, built once (cached per process by the parser)
        from strata.syntax import parser

        parser._lark()
    except Exception:  # noqa: BLE001, S110  a warm-up only: the child builds it if needed
        pass
    try:  # Spark Connect's client (pyspark, pandas, pyarrow, grpc): ~0.55 s a call
        import pyspark.sql.connect.session  # noqa: F401

        import strata.engine.adapters.spark
    except Exception:  # noqa: BLE001, S110  a warm-up only, as above
        pass
    channel = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        channel.flush()
        pid = os.fork()
        if pid == 0:
            _child(req)
        _, status, usage = os.wait4(pid, 0)
        channel.write(json.dumps({"code": os.waitstatus_to_exitcode(status),
                                  "cpu": usage.ru_utime + usage.ru_stime}) + "\n")
        channel.flush()


if __name__ == "__main__":
    serve()
