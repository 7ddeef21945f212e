#!/usr/bin/env python3
"""CPU time and peak memory of one-shot `trust get` beside curl's, for the same small HTTPS page.

Usage: Scripts/one-shot-cpu.py [--runs N] TRUST [TRUST …]

Starts `trust lab` (with the first TRUST) and fetches its `good` server's page with curl and with each TRUST
binary in turn, N rounds (default 21), alternating, after one unmeasured run of each. Each run is its own
process; its CPU is user + system time from wait4(2), as /usr/bin/time reports it, and its memory the peak
resident set. Prints the medians and each command's ratio to curl's. Both are given the lab's roots with
`--cacert`; `trust get --cacert` adds them to the system's roots (its help says so), so `trust` also reads the
system bundle, which curl does not.

Measure release builds (Scripts/release-build.sh), on a machine with nothing else running.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def start_lab(trust, folder):
    lab = subprocess.Popen([trust, "lab", "--dir", folder, "--duration", "3600"], stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = lab.stdout.readline()
        if not line:
            break
        match = re.match(r"^\s+good\s+(https://\S+)\s+--resolve (\S+)", line)
        if match:
            return lab, match.group(1), match.group(2)
    lab.terminate()
    sys.exit("one-shot-cpu: trust lab did not print its good server")


def measure(argv):
    """(CPU milliseconds, peak RSS MiB) of one run of argv, which must exit 0."""
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)  # never back into the parent's code (its lab and temporary folder) from the child
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"one-shot-cpu: {' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("trust", nargs="+", help="trust binaries to compare")
    options = parser.parse_args()
    curl = shutil.which("curl") or sys.exit("one-shot-cpu: curl is not on PATH")
    binaries = [os.path.abspath(path) for path in options.trust]

    with tempfile.TemporaryDirectory() as folder:
        lab, url, resolve = start_lab(binaries[0], os.path.join(folder, "lab"))
        try:
            roots = os.path.join(folder, "lab", "roots.pem")
            common = ["--cacert", roots, "--resolve", resolve, url, "-o", os.devnull, "-s"]
            commands = [("curl", [curl] + common)] + [(path, [path, "get"] + common) for path in binaries]
            for _, argv in commands:
                measure(argv)
            results = {name: [] for name, _ in commands}
            for _ in range(options.runs):
                for name, argv in commands:
                    results[name].append(measure(argv))
        finally:
            lab.terminate()
            lab.wait()

    baseline = statistics.median(cpu for cpu, _ in results["curl"])
    print(f"medians of {options.runs} alternating runs: CPU (user + system), peak RSS, CPU ratio to curl")
    for name, runs in results.items():
        cpu = statistics.median(value for value, _ in runs)
        rss = statistics.median(value for _, value in runs)
        print(f"{cpu:7.2f} ms  {rss:6.1f} MiB  {cpu / baseline:5.2f}×  {name}")


if __name__ == "__main__":
    main()
