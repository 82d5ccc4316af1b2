//! Columnar tables: the one shape in which results leave the engine (to Python as arrays, then
//! Parquet/CSV). A record type is declared once with `columnar!` and gets a struct of vectors,
//! a typed `push`, and a conversion to named columns.

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
}
impl IntoColumn for u8 {
    fn into_column(v: Vec<Self>) -> Column {
        Column::U8(v)
    }
}
impl IntoColumn for u32 {
    fn into_column(v: Vec<Self>) -> Column {
        Column::U32(v)
    }
}
impl IntoColumn for u64 {
    fn into_column(v: Vec<Self>) -> Column {
        Column::U64(v)
    }
}
impl IntoColumn for f64 {
    fn into_column(v: Vec<Self>) -> Column {
        Column::F64(v)
    }
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
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn push(&mut self, $($field: $ty),+) {
                $(self.$field.push($field);)+
            }
            pub fn len(&self) -> usize {
                columnar!(@first self; $($field),+).len()
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            pub fn into_table(self, table: &str) -> $crate::trace::table::Table {
                let mut t = $crate::trace::table::Table::new(table);
                $(t = t.with(stringify!($field), $crate::trace::table::IntoColumn::into_column(self.$field));)+
                t
            }
        }
    };
    (@first $s:ident; $f:ident $(, $rest:ident)*) => { $s.$f };
}
pub(crate) use columnar;
