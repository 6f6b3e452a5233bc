"""Runs CPython's regression tests test by test and reports each result on
stdout, for `cargo xtask compat` (xtask/src/compat.rs), identically on
Veneer and on Linux.

    python3 run.py [--timeout SECONDS] MODULE[:PART]...

Each MODULE (`test_os`, ...) runs in a child interpreter (`run.py --child
MODULE SKIPFILE`) that loads the module's tests (those whose name holds
PART, if given) as regrtest does
(`unittest.TestLoader.loadTestsFromModule`, no optional resources
enabled, in a scratch working directory) and reports each test on one
line. The parent reads the child's output through a pipe: a test that
prints nothing for SECONDS is a hang, and a child that dies inside a test
is a crash; either way the child is killed, the test recorded, and a new
child runs the tests not yet done. Lines for the harness start with `@@`:

    @@MODULE name                   a module starts
    @@LOAD name error|skip reason   the module could not be loaded / is skipped
    @@TEST status id                one test: pass fail error skip hang crash
    @@| text                        output of a test that did not pass
    @@END name                      the module is done
    @@DONE                          every module is done
"""

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

# Lines of a failing test's output shown on the console.
TAIL = 40


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# ---- the child: one module's tests -------------------------------------


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


class Result(unittest.TestResult):
    """Reports each test's outcome on a line of its own as it ends."""

    def __init__(self, ids):
        super().__init__()
        self.ids = ids
        self.reported = set()
        self.failed_subtests = set()

    def report(self, status, test_id, err=None):
        if test_id in self.reported:
            return
        self.reported.add(test_id)
        if err is not None:
            sys.stdout.write("".join(traceback.format_exception(*err))[-4000:])
        say(f"@@TEST {status} {test_id}")

    def startTest(self, test):
        super().startTest(test)
        say(f"@@START {test.id()}")

    def addSuccess(self, test):
        if test.id() in self.failed_subtests:
            self.report("fail", test.id())
        else:
            self.report("pass", test.id())

    def addFailure(self, test, err):
        self.report("fail", test.id(), err)

    def addError(self, test, err):
        self.fixture("error", test, err)

    def addSkip(self, test, reason):
        if isinstance(test, unittest.TestCase) and not is_holder(test):
            self.report("skip", test.id())
        else:
            self.fixture("skip", test, None)

    def addExpectedFailure(self, test, err):
        self.report("pass", test.id())

    def addUnexpectedSuccess(self, test):
        self.report("fail", test.id())

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.failed_subtests.add(test.id())
            if not issubclass(err[0], unittest.SkipTest):
                sys.stdout.write("".join(traceback.format_exception(*err))[-2000:])

    def fixture(self, status, test, err):
        """An error or skip of a test, or of a class's or module's fixture
        (setUpClass, setUpModule: unittest's `_ErrorHolder`), which stands
        for every test of that class or module not yet reported."""
        if not is_holder(test):
            self.report(status, test.id(), err)
            return
        # "setUpClass (test.test_x.Case)", "setUpModule (test.test_x)"
        desc = test.description
        scope = desc[desc.find("(") + 1 : desc.rfind(")")] if "(" in desc else desc
        if err is not None:
            sys.stdout.write(f"{desc}:\n" + "".join(traceback.format_exception(*err))[-4000:])
        for i in self.ids:
            if i.startswith(scope + "."):
                self.report(status, i)


def is_holder(test):
    return type(test).__name__ == "_ErrorHolder"


def child(module, skipfile):
    module, _, only = module.partition(":")
    os.dup2(1, 2)
    sys.stderr = sys.stdout
    from test import support

    # As regrtest without -u: no optional resources.
    support.use_resources = []
    support.verbose = 0
    skip = set()
    if os.path.exists(skipfile):
        with open(skipfile) as f:
            skip = {line.strip() for line in f if line.strip()}
    os.chdir(tempfile.mkdtemp(prefix="compat-"))
    try:
        mod = __import__("test." + module, fromlist=["*"])
    except unittest.SkipTest as e:
        say(f"@@LOAD {module} skip {e}")
        return
    except BaseException:
        traceback.print_exc()
        say(f"@@LOAD {module} error {sys.exc_info()[0].__name__}")
        return
    loader = unittest.TestLoader()
    tests = list(flatten(loader.loadTestsFromModule(mod)))
    if loader.errors:
        for e in loader.errors:
            sys.stdout.write(e)
        say(f"@@LOAD {module} error the loader failed")
        return
    todo = [t for t in tests if t.id() not in skip and only in t.id()]
    result = Result([t.id() for t in todo])
    unittest.TestSuite(todo).run(result)
    for t in todo:
        if t.id() not in result.reported:
            say(f"@@TEST error {t.id()}")
    sys.stdout.flush()
    # Skip the interpreter's shutdown (threads left behind would hold it).
    os._exit(0)


# ---- the parent: children, timeouts, crashes ----------------------------


def run_module(arg, timeout):
    module = arg.partition(":")[0]
    say(f"@@MODULE {module}")
    skipfile = os.path.join(tempfile.gettempdir(), f"compat-skip-{module}")
    done = []
    with open(skipfile, "w"):
        pass
    while True:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", arg, skipfile],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        current, tail, buf = None, [], b""
        last = time.monotonic()
        outcome = None
        fd = proc.stdout.fileno()
        while True:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                data = os.read(fd, 65536)
                if not data:
                    break
                last = time.monotonic()
                buf += data
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    line = raw.decode("utf-8", "replace")
                    if line.startswith("@@START "):
                        current, tail = line[8:], []
                    elif line.startswith("@@TEST "):
                        status = line.split(" ", 2)[1]
                        if status in ("fail", "error"):
                            for t in tail[-TAIL:]:
                                say("@@| " + t)
                        say(line)
                        done.append(line.split(" ", 2)[2])
                        current, tail = None, []
                    elif line.startswith("@@"):
                        say(line)
                    else:
                        tail.append(line)
            elif proc.poll() is not None and time.monotonic() - last > 5:
                # Exited, but something it started still holds the pipe.
                break
            elif time.monotonic() - last > timeout:
                outcome = "hang"
                break
        if outcome is None:
            code = proc.wait()
            if code == 0 or current is None:
                if code != 0:
                    say(f"@@LOAD {module} error child exited with {code} between tests")
                    for t in tail[-TAIL:]:
                        say("@@| " + t)
                break
            outcome = "crash"
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        for t in tail[-TAIL:]:
            say("@@| " + t)
        if current is None:
            say(f"@@LOAD {module} error child {outcome} between tests")
            break
        say(f"@@TEST {outcome} {current}")
        done.append(current)
        with open(skipfile, "w") as f:
            f.write("\n".join(done) + "\n")
    say(f"@@END {module}")


def main(argv):
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2])
        return
    timeout = 60.0
    if argv[:1] == ["--timeout"]:
        timeout = float(argv[1])
        argv = argv[2:]
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for module in argv:
        run_module(module, timeout)
    say("@@DONE")


if __name__ == "__main__":
    main(sys.argv[1:])
