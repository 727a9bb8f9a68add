#!/usr/bin/env python3
"""Runs the workspace's tests in parallel, one process per test, against the shared services.

`tests/run.sh` calls it after starting Kafka, PostgreSQL and S3. It builds every test binary once
(`cargo test --no-run`), lists each binary's tests, and runs them as separate processes
(`<binary> --exact <test>`, as cargo-nextest does), so a slow binary's tests spread over the
slots instead of running one after another. Every test uses its own group, topics and ids, so
tests share the services; what they cannot share is CPU, which the slots ration:

- a test costs the slots `tests/weights.tsv` gives it (heavier for tests that run three workers,
  start brokers or drive load), 1 otherwise; at most `--slots` (default 6) are taken at once;
- tests in a named group of weights.tsv run one at a time (the broker-failure test and the
  transactions-v1 cluster's test start extra brokers; two of them at once would starve both);
- the slowest tests (weights.tsv's seconds, else the last run's in .local/test-times.tsv) start
  first, so the run ends with short tests.

Unit-test binaries (no services) run whole, with their own threads. Doc tests run as one job.
Tests marked `#[ignore = "long: ..."]` run only with `--long`.

Prints each test's result and time as it finishes, then the time per binary, and each failed
test's output. Exits 1 if any test failed or timed out.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "tests" / "weights.tsv"
LAST_TIMES = ROOT / ".local" / "test-times.tsv"
# Binaries whose tests start no service: run whole, with libtest's own threads.
SERVICE_PACKAGES = {"connect-tests"}


def log(msg):
    print(f"runner: {msg}", flush=True)


def build(cargo_args):
    """Builds every test binary and the worker binary; returns [(package, target, kind, exe)]."""
    cmd = ["cargo", "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"]
    cmd += cargo_args
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    binaries = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            sys.stdout.write(line)
            continue
        if msg.get("reason") == "compiler-message" and msg.get("message", {}).get("rendered"):
            sys.stdout.write(msg["message"]["rendered"])
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        package = msg["package_id"]
        # package_id: "path+file:///.../tests#connect-tests@0.1.0" or "... #0.1.0"
        frag = package.split("#")[-1]
        name = frag.split("@")[0] if "@" in frag else package.split("#")[0].rsplit("/", 1)[-1]
        manifest = Path(msg["manifest_path"]).parent
        binaries.append((name, target["name"], target["kind"][0], msg["executable"], manifest))
    if proc.wait() != 0:
        log("cargo test --no-run failed")
        sys.exit(101)
    # The worker binary the black-box tests start: the one this build made for the worker's own
    # integration tests. (`cargo build -p connect-worker`, which the harness runs when this is
    # unset, unifies the dependencies' features differently and would rebuild the worker and
    # then the tests again.)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    os.environ.setdefault("CONNECT_WORKER_BIN", str(target / "debug" / "connect-worker"))
    log(f"build: {time.monotonic() - started:.0f}s, {len(binaries)} test binaries")
    return binaries


def read_weights():
    """{(binary, test or '*'): (weight, group, seconds)} from tests/weights.tsv."""
    table = {}
    if not WEIGHTS.exists():
        return table
    for raw in WEIGHTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        name, weight = fields[0], int(fields[1])
        group = fields[2] if len(fields) > 2 and fields[2] != "-" else None
        seconds = float(fields[3]) if len(fields) > 3 else 0.0
        binary, _, test = name.partition("::")
        table[(binary, test or "*")] = (weight, group, seconds)
    return table


def read_last_times():
    times = {}
    if LAST_TIMES.exists():
        for line in LAST_TIMES.read_text().splitlines():
            name, _, secs = line.rpartition("\t")
            try:
                times[name] = float(secs)
            except ValueError:
                pass
    return times


def list_tests(exe, cwd, long):
    """The test names of a libtest binary (ignored ones only with `long`)."""
    def names(extra):
        out = subprocess.run([exe, "--list", "--format", "terse"] + extra, cwd=cwd,
                             capture_output=True, text=True, check=True).stdout
        return [l[: -len(": test")] for l in out.splitlines() if l.endswith(": test")]

    every = names([])
    if long:
        return every
    ignored = set(names(["--ignored"]))
    return [t for t in every if t not in ignored]


class Job:
    def __init__(self, binary, test, argv, cwd, weight, group, expected):
        self.binary, self.test, self.argv, self.cwd = binary, test, argv, cwd
        self.weight, self.group, self.expected = weight, group, expected
        self.proc = self.out = self.started = None
        self.elapsed = 0.0
        self.status = None
        self.counts = [0, 0, 0]

    @property
    def name(self):
        return f"{self.binary}::{self.test}" if self.test else self.binary


def plan(binaries, long, doc):
    weights = read_weights()
    last = read_last_times()
    jobs = []
    for package, target, kind, exe, manifest in binaries:
        binary = target if kind != "lib" else f"{package}(lib)"
        if package not in SERVICE_PACKAGES or kind == "lib":
            argv = [exe] + (["--include-ignored"] if long else [])
            w = weights.get((binary, "*"), (1, None, 0.0))
            jobs.append(Job(binary, None, argv, manifest, w[0], w[1],
                            w[2] or last.get(binary, 1.0)))
            continue
        for full in list_tests(exe, manifest, long):
            # The black-box binary's modules (one per area) are reported as binaries were.
            module, _, test = full.rpartition("::")
            area = module or binary
            w = weights.get((area, test)) or weights.get((area, "*")) or (1, None, 0.0)
            argv = [exe, "--exact", full, "--test-threads=1"]
            if long:
                argv.append("--include-ignored")
            name = f"{area}::{test}"
            jobs.append(Job(area, test, argv, manifest, w[0], w[1], w[2] or last.get(name, 5.0)))
    if doc:
        jobs.append(Job("doctests", None, ["cargo", "test", "--workspace", "--doc", "-q"], ROOT,
                        1, None, last.get("doctests", 60.0)))
    # Longest first; a group's members keep that order among themselves.
    jobs.sort(key=lambda j: -j.expected)
    return jobs


RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


def echo_libtest(job):
    """Repeat the libtest lines of a finished job as `cargo test` prints them (`test x ... ok`,
    `test result: ...`), and count its tests by what libtest itself reported."""
    job.out.seek(0)
    job.counts = [0, 0, 0]
    for line in job.out:
        line = line.rstrip("\n")
        m = RESULT.match(line)
        if m:
            for i in range(3):
                job.counts[i] += int(m.group(i + 1))
        if m or (line.startswith("test ") and " ... " in line):
            print(line, flush=True)
    if job.status != "ok" and job.counts[1] == 0:
        job.counts[1] = 1  # a crash or timeout before libtest could say so


def run(jobs, slots, timeout, scratch):
    pending = list(jobs)
    running = []
    done = []
    busy_groups = set()
    used = 0
    started_all = time.monotonic()
    while pending or running:
        # Start what fits: the first pending job (longest first) whose weight fits and whose
        # group is idle; a job heavier than every slot runs alone.
        i = 0
        while i < len(pending):
            j = pending[i]
            fits = used + j.weight <= slots or (used == 0)
            if fits and (j.group is None or j.group not in busy_groups):
                pending.pop(i)
                j.out = open(scratch / (j.name.replace("/", "_").replace(":", "_") + ".log"), "w+")
                env = dict(os.environ)
                env.setdefault("RUST_BACKTRACE", "1")
                j.started = time.monotonic()
                j.proc = subprocess.Popen(j.argv, cwd=j.cwd, stdout=j.out, stderr=subprocess.STDOUT,
                                          env=env, start_new_session=True)
                running.append(j)
                used += j.weight
                if j.group:
                    busy_groups.add(j.group)
                continue
            i += 1
        time.sleep(0.2)
        for j in list(running):
            rc = j.proc.poll()
            now = time.monotonic()
            if rc is None and now - j.started > timeout:
                os.killpg(j.proc.pid, 9)
                j.proc.wait()
                rc = "timeout"
            if rc is None:
                continue
            j.elapsed = now - j.started
            j.status = "ok" if rc == 0 else ("TIMEOUT" if rc == "timeout" else f"FAILED ({rc})")
            running.remove(j)
            done.append(j)
            used -= j.weight
            if j.group:
                busy_groups.discard(j.group)
            log(f"{j.status:>10} {j.elapsed:7.1f}s  {j.name}   [{len(done)}/{len(jobs)}, "
                f"{now - started_all:.0f}s]")
            echo_libtest(j)
    return done, time.monotonic() - started_all


def panic_lines(text, most=12):
    """The panic messages in a failed test's output (each `panicked at` line and the message
    after it, without the backtrace), so the summary at the very end says why it failed even
    when a log viewer keeps only the last lines."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "panicked at" not in line:
            continue
        out.append(line.strip())
        for follow in lines[i + 1:i + 6]:
            if follow.startswith(("stack backtrace:", "note: ")) or "panicked at" in follow:
                break
            out.append(follow.rstrip()[:400])
        if len(out) >= most:
            break
    return out[:most] or ["(no panic message in its output)"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=int(os.environ.get("TEST_SLOTS", "6")))
    p.add_argument("--long", action="store_true", help="also run the tests marked long (ignored)")
    p.add_argument("--timeout", type=float, default=900, help="seconds a test may take")
    p.add_argument("--no-doc", action="store_true", help="skip the doc tests")
    p.add_argument("--filter", default="", help="run only the tests whose name contains one of these (comma-separated)")
    args = p.parse_args()

    binaries = build([])
    jobs = plan(binaries, args.long, not args.no_doc)
    if args.filter:
        wanted = args.filter.split(",")
        jobs = [j for j in jobs if any(w in j.name for w in wanted)]
    scratch = Path(tempfile.mkdtemp(prefix="connect-tests-"))
    log(f"{len(jobs)} jobs on {args.slots} slots; outputs in {scratch}")
    done, wall = run(jobs, args.slots, args.timeout, scratch)

    per_binary = {}
    for j in done:
        t = per_binary.setdefault(j.binary, [0, 0.0, 0])
        t[0] += 1
        t[1] += j.elapsed
        t[2] += j.status != "ok"
    log("time per binary (sum of its tests' times; tests ran in parallel):")
    for b, (n, secs, failed) in sorted(per_binary.items(), key=lambda kv: -kv[1][1]):
        log(f"  {secs:7.1f}s  {b} ({n} tests{', %d failed' % failed if failed else ''})")
    LAST_TIMES.parent.mkdir(parents=True, exist_ok=True)
    LAST_TIMES.write_text("".join(f"{j.name}\t{j.elapsed:.1f}\n" for j in done))

    failed = [j for j in done if j.status != "ok"]
    reasons = {}
    for j in failed:
        j.out.seek(0)
        text = j.out.read()
        reasons[j.name] = panic_lines(text)
        print(f"\n===== {j.status}: {j.name} ({j.elapsed:.0f}s) =====")
        print(text[-60000:])
    log(f"{len(done) - len(failed)} passed, {len(failed)} failed, in {wall:.0f}s")
    total = [sum(j.counts[i] for j in done) for i in range(3)]
    print(f"\ntest result: {'FAILED' if failed else 'ok'}. {total[0]} passed; {total[1]} failed; "
          f"{total[2]} ignored; 0 measured; 0 filtered out; finished in {wall:.2f}s", flush=True)
    for j in failed:
        log(f"failed: {j.name}")
        for line in reasons[j.name]:
            print(f"    {line}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
