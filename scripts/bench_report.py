"""What the benchmark scripts' reports share (imported from their heredocs, run from the repository's
root): the runs' rows grouped by name (or by name and round), the heading that dates a result and names the machine, and the
table of what `bench_measure` (scripts/bench-rig.sh) prints for each run."""
import datetime
import statistics
import subprocess


def grouped(rows, columns=None):
    """`NAME v1 v2 ...` rows as {name: [[v1, v2, ...], ...]} (the first `columns` values only, when given)."""
    by = {}
    for row in rows:
        name, *values = row.split()
        by.setdefault(name, []).append([float(v) for v in values[:columns]])
    return by


def median(by, name, column):
    return statistics.median(v[column] for v in by[name])


def heading(title, seconds, rounds):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    when = datetime.datetime.now(datetime.timezone.utc)
    return f"\n### {title}, {when:%Y-%m-%d %H:%M} UTC — {seconds} s per run, {rounds} round(s), {cpu}, {subprocess.getoutput('nproc')} cores\n"


def measure_table(by, threads):
    """The table of `bench_measure`'s rows: whole CPU, the `threads` group's CPU, peak RSS, the program's
    late ticks and frames."""
    print(f"| run | CPU s/s (median) | {threads} threads CPU s/s (median) | peak RSS MiB (max) | program late ticks (max) | program frames (min) |")
    print("|---|---|---|---|---|---|")
    for name, values in by.items():
        med = lambda i: statistics.median(v[i] for v in values)
        print(f"| {name} | {med(0):.3f} | {med(1):.3f} | {max(v[2] for v in values):.1f} | {max(v[3] for v in values):.0f} | {min(v[4] for v in values):.0f} |")


def by_round(rows):
    """`ROUND NAME v1 v2 ...` rows (a latency run's: frames first) as {name: {round: [v1, v2, ...]}}; a
    run that read nothing is said and left out."""
    runs = {}
    for row in rows:
        round_, name, *values = row.split()
        if values[0] in ("0", "nan"):
            print(f"round {round_} {name}: measured nothing")
            continue
        runs.setdefault(name, {})[round_] = [float(x) for x in values]
    return runs
