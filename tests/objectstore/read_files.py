#!/usr/bin/env python3
"""Reads files the S3 sink wrote with independent readers and prints their records.

usage: read_files.py FORMAT FILE...   (FORMAT: avro | parquet | jsongz)

One JSON line per file: {"file": FILE, "records": [...], "schema": "..."}, records as the
reader returns them (fastavro's dicts for Avro, pyarrow's to_pylist() for Parquet, Python's gzip and json for
gzipped JSON lines); bytes are
written as lists of ints. Used by tests/tests/sink_s3.rs.
"""
import json
import sys


def plain(v):
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if type(v).__name__ == "Decimal":
        return str(v)
    return v


def main():
    fmt, files = sys.argv[1], sys.argv[2:]
    for path in files:
        if fmt == "avro":
            import fastavro

            with open(path, "rb") as f:
                reader = fastavro.reader(f)
                schema = json.dumps(reader.writer_schema)
                codec = reader.codec
                records = [plain(r) for r in reader]
            out = {"file": path, "records": records, "schema": schema, "codec": codec}
        elif fmt == "parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(path)
            table = pf.read()
            codec = pf.metadata.row_group(0).column(0).compression if pf.metadata.num_row_groups else None
            out = {
                "file": path,
                "records": [plain(r) for r in table.to_pylist()],
                "schema": str(table.schema),
                "codec": codec,
            }
        elif fmt == "jsongz":
            import gzip

            with gzip.open(path, "rt", encoding="utf-8") as f:
                records = [json.loads(line) for line in f]
            out = {"file": path, "records": records, "schema": None, "codec": "gzip"}
        else:
            raise SystemExit("unknown format " + fmt)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
