//! The one way the store speaks SQL, whichever database holds it: statements with `?N`
//! placeholders, arguments as [`Val`]s, rows as [`Row`]s, through a [`Conn`] that SQLite
//! (store/sqlite.rs) and PostgreSQL (store/postgres.rs) each implement. Every store
//! method is written once against it; the few places the two dialects differ (full-text
//! search) ask `Conn::dialect` (store/conn.rs).

use super::StoreError;

/// One SQL value, owned so it can cross to a PostgreSQL connection's thread. Integers
/// cover booleans (0/1) and Discord ids (63 bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    /// SQL NULL.
    Null,
    /// An integer (SQLite INTEGER, PostgreSQL BIGINT).
    Int(i64),
    /// Text.
    Text(String),
    /// Bytes (SQLite BLOB, PostgreSQL BYTEA).
    Blob(Vec<u8>),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(v)
    }
}

impl From<u32> for Val {
    fn from(v: u32) -> Val {
        Val::Int(i64::from(v))
    }
}

impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Int(i64::from(v))
    }
}

impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_owned())
    }
}

impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(v.clone())
    }
}

impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}

impl From<Vec<u8>> for Val {
    fn from(v: Vec<u8>) -> Val {
        Val::Blob(v)
    }
}

impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        v.map_or(Val::Null, Into::into)
    }
}

/// The arguments of one statement, in placeholder order: `args![session, id]`.
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        &[$($crate::db::Val::from($v)),*][..]
    };
}
pub(crate) use args;

/// One result row, its columns in SELECT order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row(pub(super) Vec<Val>);

impl Row {
    fn at(&self, i: usize) -> Result<&Val, StoreError> {
        self.0.get(i).ok_or(StoreError::Column {
            index: i,
            wanted: "a column",
        })
    }

    /// Column `i` as an integer.
    pub fn int(&self, i: usize) -> Result<i64, StoreError> {
        match self.at(i)? {
            Val::Int(v) => Ok(*v),
            _ => Err(StoreError::Column {
                index: i,
                wanted: "an integer",
            }),
        }
    }

    /// Column `i` as an integer that may be NULL.
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.at(i)? {
            Val::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// Column `i` as a boolean stored as 0/1.
    pub fn flag(&self, i: usize) -> Result<bool, StoreError> {
        self.int(i).map(|v| v != 0)
    }

    /// Column `i` as text.
    pub fn text(&self, i: usize) -> Result<String, StoreError> {
        match self.at(i)? {
            Val::Text(v) => Ok(v.clone()),
            _ => Err(StoreError::Column {
                index: i,
                wanted: "text",
            }),
        }
    }

    /// Column `i` as text that may be NULL.
    pub fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.at(i)? {
            Val::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    /// Column `i` as bytes.
    pub fn blob(&self, i: usize) -> Result<Vec<u8>, StoreError> {
        match self.at(i)? {
            Val::Blob(v) => Ok(v.clone()),
            _ => Err(StoreError::Column {
                index: i,
                wanted: "bytes",
            }),
        }
    }
}

/// Which SQL a connection speaks, for the statements that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server (`KOTOBA_DATABASE_URL`).
    Postgres,
}
