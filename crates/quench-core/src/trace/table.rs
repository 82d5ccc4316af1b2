//! Columnar tables: the one shape in which results leave the engine (to Python as arrays, then
//! Parquet/CSV). A record type is declared once with `columnar!` and gets a struct of vectors,
//! a typed `push` that returns the rows buffered (a streaming recorder flushes a full chunk
//! to disk with `spill.rs`), and a
//! conversion to named columns.
//! It holds rows only: it reads no component and writes no file.

use crate::units::Time;
use serde::Serialize;

/// One column of a result table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Column builders for the summary tables.
pub(crate) fn f64s(it: impl Iterator<Item = f64>) -> Column {
    Column::F64(it.collect())
}
pub(crate) fn u64s(it: impl Iterator<Item = u64>) -> Column {
    Column::U64(it.collect())
}
pub(crate) fn strs(it: impl Iterator<Item = String>) -> Column {
    Column::Str(it.collect())
}
/// An instant in seconds, NaN for none.
pub(crate) fn secs(t: Option<Time>) -> f64 {
    t.map_or(f64::NAN, |t| t.as_secs_f64())
}

/// A borrowed column: what the chunk writer (`spill.rs`) appends to disk.
#[derive(Clone, Copy, Debug)]
pub enum ColumnRef<'a> {
    U8(&'a [u8]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F64(&'a [f64]),
    Str(&'a [String]),
}

impl<'a> ColumnRef<'a> {
    pub fn len(&self) -> usize {
        match self {
            ColumnRef::U8(v) => v.len(),
            ColumnRef::U32(v) => v.len(),
            ColumnRef::U64(v) => v.len(),
            ColumnRef::F64(v) => v.len(),
            ColumnRef::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Column {
    pub fn as_ref(&self) -> ColumnRef<'_> {
        match self {
            Column::U8(v) => ColumnRef::U8(v),
            Column::U32(v) => ColumnRef::U32(v),
            Column::U64(v) => ColumnRef::U64(v),
            Column::F64(v) => ColumnRef::F64(v),
            Column::Str(v) => ColumnRef::Str(v),
        }
    }
}

/// A named table of equally long columns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table { name: name.to_string(), columns: Vec::new() }
    }
    pub fn with(mut self, name: &str, col: Column) -> Self {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()), "ragged table {}", self.name);
        self.columns.push((name.to_string(), col));
        self
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    /// The columns borrowed, as the chunk writer takes them (`Spill::append`).
    pub fn column_refs(&self) -> Vec<(&str, ColumnRef<'_>)> {
        self.columns.iter().map(|(n, c)| (n.as_str(), c.as_ref())).collect()
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64s(&self, name: &str) -> Vec<f64> {
        match self.column(name) {
            Some(Column::F64(v)) => v.clone(),
            Some(Column::U64(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(Column::U32(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(Column::U8(v)) => v.iter().map(|&x| x as f64).collect(),
            _ => panic!("table {} has no numeric column {name}", self.name),
        }
    }
}

/// Conversion of a recorded field into a column (time becomes float seconds).
pub trait IntoColumn: Sized {
    fn into_column(v: Vec<Self>) -> Column;
    fn column_ref(v: &[Self]) -> ColumnRef<'_>;
}
macro_rules! into_column {
    ($ty:ty, $variant:ident) => {
        impl IntoColumn for $ty {
            fn into_column(v: Vec<Self>) -> Column {
                Column::$variant(v)
            }
            fn column_ref(v: &[Self]) -> ColumnRef<'_> {
                ColumnRef::$variant(v)
            }
        }
    };
}
into_column!(u8, U8);
into_column!(u32, U32);
into_column!(u64, U64);
into_column!(f64, F64);

/// A record buffer whose rows can be handed to the chunk writer and then dropped.
pub trait Chunked {
    fn column_refs(&self) -> Vec<(&'static str, ColumnRef<'_>)>;
    fn clear(&mut self);
}

/// Declare a record type stored column-wise.
macro_rules! columnar {
    ($(#[$m:meta])* $name:ident { $($field:ident: $ty:ty),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $(pub $field: Vec<$ty>,)+
        }
        impl $name {
            /// Append a row; returns the rows now buffered, which a recorder streaming to disk
            /// compares with its chunk size (so recording costs a push and a compare).
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn push(&mut self, $($field: $ty),+) -> usize {
                $(self.$field.push($field);)+
                self.len()
            }
            pub fn len(&self) -> usize {
                columnar!(@first self; $($field),+).len()
            }
            // Generated for every family; one that is only streamed is never collected whole.
            #[allow(dead_code)]
            pub fn into_table(self, table: &str) -> $crate::trace::table::Table {
                let mut t = $crate::trace::table::Table::new(table);
                $(t = t.with(stringify!($field), $crate::trace::table::IntoColumn::into_column(self.$field));)+
                t
            }
        }
        impl $crate::trace::table::Chunked for $name {
            fn column_refs(&self) -> Vec<(&'static str, $crate::trace::table::ColumnRef<'_>)> {
                vec![$((stringify!($field), $crate::trace::table::IntoColumn::column_ref(&self.$field)),)+]
            }
            fn clear(&mut self) {
                $(self.$field.clear();)+
            }
        }
    };
    (@first $s:ident; $f:ident $(, $rest:ident)*) => { $s.$f };
}
pub(crate) use columnar;
