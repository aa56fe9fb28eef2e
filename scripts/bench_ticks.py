"""Shared by the benchmark scripts' inline Python: reading the "name:ticks" lists that bench-rig.sh's
cpu_ticks and thread_ticks (and the scripts' own /proc readers) print."""
import collections


def parse(text):
    """"name:ticks name:ticks ..." into a Counter by name, ticks of the same name summed."""
    d = collections.Counter()
    for x in text.split():
        k, v = x.rsplit(":", 1); d[k] += int(v)
    return d
