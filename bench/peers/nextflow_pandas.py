#!/usr/bin/env python3
"""The notebook peer for Nextflow traces: what people do with a trace file
today -- pd.read_csv(sep="\\t"), the human units turned into numbers, then
per process the count and quantiles p0 p1 p5 p32 p50 p68 p95 p99 p100 of
wall time (realtime, s) and peak RSS (bytes).

  nextflow_pandas.py TRACE
Prints "<tasks> tasks <processes> processes" and the table to stdout.
"""
import sys

import pandas as pd

Q = [0, .01, .05, .32, .5, .68, .95, .99, 1]
TIME = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
MEM = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


def seconds(col):
    """'1h 2m 3s', '9.6s', '352ms' (or raw ms) -> seconds, vectorized."""
    raw = pd.to_numeric(col, errors="coerce") / 1000
    parts = col.str.extractall(r"([\d.]+)(ms|s|m|h|d)")
    val = parts[0].astype(float) * parts[1].map(TIME)
    return raw.fillna(val.groupby(level=0).sum())


def nbytes(col):
    raw = pd.to_numeric(col, errors="coerce")
    parts = col.str.extract(r"([\d.]+) (B|KB|MB|GB|TB)")
    return raw.fillna(parts[0].astype(float) * parts[1].map(MEM))


def main():
    df = pd.read_csv(sys.argv[1], sep="\t", na_values="-", dtype=str)
    df["process"] = df["name"].str.split(" (", n=1, regex=False).str[0]
    df["wall_s"] = seconds(df["realtime"].fillna(""))
    df["rss"] = nbytes(df["peak_rss"].fillna(""))
    out = df.groupby("process")[["wall_s", "rss"]].quantile(Q)
    print("%d tasks %d processes" % (len(df), df["process"].nunique()))
    print(out.to_string())


if __name__ == "__main__":
    main()
