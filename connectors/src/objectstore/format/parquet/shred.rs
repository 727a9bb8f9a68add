//! Dremel's record shredding: a datum into definition and repetition levels and values of the
//! leaf columns.

use connect_api::error::{ConnectError, Result};
use parquet::basic::Repetition;

use super::columns::{Column, Node, Shape};
use super::datum::Datum;

/// Dremel's shredding of one datum into the columns under `node`.
pub(super) struct Shredder<'a> {
    pub(super) columns: &'a mut [Column],
    pub(super) bytes: usize,
}

impl Shredder<'_> {
    /// `def`: the definition level of `node`'s parent; `rep`: the repetition level this value
    /// starts with.
    pub(super) fn node(&mut self, node: &Node, datum: &Datum, def: i16, rep: i16) -> Result<()> {
        let datum = match (node.null_branch, datum) {
            (Some(null), Datum::Union(i, _)) if *i == null => &Datum::Null,
            (Some(_), Datum::Union(_, d)) if !matches!(node.shape, Shape::Union(_)) => &**d,
            _ => datum,
        };
        if matches!(datum, Datum::Null) {
            if node.repetition == Repetition::REQUIRED {
                return Err(ConnectError::data("parquet: null for a required field"));
            }
            self.nulls(node, def, rep);
            return Ok(());
        }
        let def = if node.repetition == Repetition::OPTIONAL {
            def + 1
        } else {
            def
        };
        self.shape(&node.shape, datum, def, rep)
    }

    pub(super) fn shape(&mut self, shape: &Shape, datum: &Datum, def: i16, rep: i16) -> Result<()> {
        match (shape, datum) {
            (Shape::Leaf { col }, d) => {
                self.bytes += self.columns[*col].push(d, rep)?;
                Ok(())
            }
            (Shape::Record(fields), Datum::Record(values)) => {
                for (f, v) in fields.iter().zip(values) {
                    self.node(f, v, def, rep)?;
                }
                Ok(())
            }
            (Shape::Wrap(inner), d) => self.node(inner, d, def, rep),
            (
                Shape::List {
                    item,
                    rep: item_rep,
                },
                Datum::Array(items),
            ) => {
                if items.is_empty() {
                    self.nulls_below(item, def, rep);
                    return Ok(());
                }
                for (i, d) in items.iter().enumerate() {
                    let r = if i == 0 { rep } else { *item_rep };
                    // The repeated field adds a definition level.
                    self.shape(&item.shape, d, def + 1, r)?;
                }
                Ok(())
            }
            (
                Shape::Map {
                    key_col,
                    value,
                    rep: entry_rep,
                },
                Datum::Map(entries),
            ) => {
                if entries.is_empty() {
                    self.columns[*key_col].push_null(def, rep);
                    self.nulls(value, def, rep);
                    return Ok(());
                }
                for (i, (k, v)) in entries.iter().enumerate() {
                    let r = if i == 0 { rep } else { *entry_rep };
                    self.bytes += self.columns[*key_col].push(&Datum::Bytes(k.clone()), r)?;
                    self.node(value, v, def + 1, r)?;
                }
                Ok(())
            }
            (Shape::Union(members), Datum::Union(branch, d)) => {
                for (i, m) in members.iter().enumerate() {
                    if let Some(m) = m {
                        if i == *branch {
                            self.node(m, d, def, rep)?;
                        } else {
                            self.nulls(m, def, rep);
                        }
                    }
                }
                Ok(())
            }
            (_, d) => Err(ConnectError::data(format!(
                "parquet: a {d:?} datum does not fit the schema"
            ))),
        }
    }

    /// Every leaf under `node` gets a null at definition level `def` (where the null is).
    pub(super) fn nulls(&mut self, node: &Node, def: i16, rep: i16) {
        self.nulls_below(node, def, rep);
    }

    pub(super) fn nulls_below(&mut self, node: &Node, def: i16, rep: i16) {
        match &node.shape {
            Shape::Leaf { col } => self.columns[*col].push_null(def, rep),
            Shape::Record(fields) => fields.iter().for_each(|f| self.nulls_below(f, def, rep)),
            Shape::Wrap(inner) => self.nulls_below(inner, def, rep),
            Shape::List { item, .. } => self.nulls_below(item, def, rep),
            Shape::Map { key_col, value, .. } => {
                self.columns[*key_col].push_null(def, rep);
                self.nulls_below(value, def, rep);
            }
            Shape::Union(members) => members
                .iter()
                .flatten()
                .for_each(|m| self.nulls_below(m, def, rep)),
        }
    }
}
