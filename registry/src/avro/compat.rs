//! Avro schema resolution (the spec's rules, as Java's `SchemaCompatibility` applies them):
//! whether data written with one schema can be read with another. `use.latest.version` with
//! `latest.compatibility.strict` asks it of the subject's latest schema and the record's own.

use super::schema::{AvroSchema, Kind};

/// `Ok` when `reader` can read what `writer` writes; else why not.
pub fn can_read(reader: &AvroSchema, writer: &AvroSchema) -> Result<(), String> {
    use Kind::*;
    match (&reader.kind, &writer.kind) {
        (_, Union(ws)) => {
            for w in ws {
                can_read(reader, w)?;
            }
            Ok(())
        }
        (Union(rs), _) => {
            if rs.iter().any(|r| can_read(r, writer).is_ok()) {
                Ok(())
            } else {
                Err(format!(
                    "no branch of the reader's union reads a {}",
                    writer.type_name()
                ))
            }
        }
        (Null, Null)
        | (Boolean, Boolean)
        | (Int, Int)
        | (Long, Long)
        | (Float, Float)
        | (Double, Double)
        | (Bytes, Bytes)
        | (String, String) => Ok(()),
        (Long, Int) | (Float, Int | Long) | (Double, Int | Long | Float) => Ok(()),
        (String, Bytes) | (Bytes, String) => Ok(()),
        (Array(r), Array(w)) | (Map(r), Map(w)) => can_read(r, w),
        (
            Fixed {
                name: rn, size: rs, ..
            },
            Fixed {
                name: wn, size: ws, ..
            },
        ) => {
            if rn.name != wn.name || rs != ws {
                Err(format!(
                    "fixed {} ({rs}) cannot read fixed {} ({ws})",
                    rn.full(),
                    wn.full()
                ))
            } else {
                Ok(())
            }
        }
        (
            Enum {
                name: rn,
                symbols: rsyms,
                default,
                ..
            },
            Enum {
                name: wn,
                symbols: wsyms,
                ..
            },
        ) => {
            if rn.name != wn.name {
                return Err(format!("enum {} cannot read enum {}", rn.full(), wn.full()));
            }
            match wsyms.iter().find(|s| !rsyms.contains(s)) {
                Some(s) if default.is_none() => {
                    Err(format!("enum {} has no symbol {s}", rn.full()))
                }
                _ => Ok(()),
            }
        }
        (
            Record {
                name: rn,
                fields: rf,
                ..
            },
            Record {
                name: wn,
                fields: wf,
                ..
            },
        ) => {
            if rn.name != wn.name {
                return Err(format!(
                    "record {} cannot read record {}",
                    rn.full(),
                    wn.full()
                ));
            }
            for f in rf {
                match wf.iter().find(|w| w.name == f.name) {
                    Some(w) => can_read(&f.schema, &w.schema)
                        .map_err(|e| format!("field {}: {e}", f.name))?,
                    None if f.default.is_some() => {}
                    None => {
                        return Err(format!(
                            "field {} is not written and has no default",
                            f.name
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Err(format!(
            "a {} cannot read a {}",
            reader.type_name(),
            writer.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> AvroSchema {
        AvroSchema::parse(s).unwrap()
    }

    #[test]
    fn resolution_rules() {
        let v1 = p(r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#);
        let v2 = p(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":["null","string"],"default":null}]}"#,
        );
        let v3 = p(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"c","type":"string"}]}"#,
        );
        assert!(can_read(&v2, &v1).is_ok());
        assert!(can_read(&v1, &v2).is_err());
        assert!(can_read(&v3, &v1).unwrap_err().contains("field c"));
    }
}
