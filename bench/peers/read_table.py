#!/usr/bin/env python3
"""A notebook's next step after `tasklens records`: the table into a DataFrame
in one call. Prints rows and columns.

  read_table.py pandas|polars FILE.csv
"""
import sys

if sys.argv[1] == "pandas":
    import pandas as pd
    df = pd.read_csv(sys.argv[2])
    print(len(df), len(df.columns))
else:
    import polars as pl
    df = pl.read_csv(sys.argv[2], infer_schema_length=None)
    print(df.height, df.width)
