"""An Avro client independent of the worker (fastavro + the registry's REST API), for
tests/tests/registry.rs: writes records in the registry wire format as a Python producer would,
and reads back what the worker wrote.

  fastavro_client.py encode <registry url> <subject> <count>
      registers ROW_SCHEMA under <subject>, prints one hex-encoded record per line
      (magic byte 0, 4-byte schema id, Avro binary) for ids 0..count-1
  fastavro_client.py decode <registry url>    (hex-encoded records on stdin, one per line)
      prints each record as JSON (the schema fetched by id from the registry)
"""

import decimal
import io
import json
import struct
import sys
import urllib.request

import fastavro

ROW_SCHEMA = {
    "type": "record",
    "name": "Row",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "qty", "type": ["null", "int"], "default": None},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    ],
}

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def registry(url, path, body=None):
    req = urllib.request.Request(
        url.rstrip("/") + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def encode(url, subject, count):
    schema_id = registry(url, f"/subjects/{subject}/versions", {"schema": json.dumps(ROW_SCHEMA)})["id"]
    parsed = fastavro.parse_schema(ROW_SCHEMA)
    for i in range(count):
        row = {
            "id": i,
            "name": f"row-{i}",
            "price": decimal.Decimal(i * 125 - 300) / 100,
            "qty": None if i % 3 == 0 else i,
            "day": __import__("datetime").date(2024, 1, 1) + __import__("datetime").timedelta(days=i),
        }
        out = io.BytesIO()
        out.write(b"\x00" + struct.pack(">i", schema_id))
        fastavro.schemaless_writer(out, parsed, row)
        print(out.getvalue().hex())


def decode(url):
    schemas = {}
    for line in sys.stdin:
        data = bytes.fromhex(line.strip())
        if not data:
            continue
        assert data[0] == 0, "magic byte"
        (schema_id,) = struct.unpack(">i", data[1:5])
        if schema_id not in schemas:
            text = registry(url, f"/schemas/ids/{schema_id}")["schema"]
            schemas[schema_id] = fastavro.parse_schema(json.loads(text))
        record = fastavro.schemaless_reader(io.BytesIO(data[5:]), schemas[schema_id])
        print(json.dumps(record, default=str, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[1] == "encode":
        encode(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        decode(sys.argv[2])
