//! Parquet files of results tables, written here so that saving a run needs neither pyarrow nor
//! numpy in the Python process (their import costs a small run more than the run itself).
//!
//! The file is the one pandas' `DataFrame.to_parquet(index=False, row_group_size=N)` writes for
//! the same table through pyarrow, up to its bytes: the same Arrow schema (stored under the
//! `ARROW:schema` key, as pyarrow stores it, so readers restore unsigned integers, large strings
//! and categoricals), the `pandas` metadata that quench.schema builds, snappy compression (the
//! codec pandas asks for), a row group every N rows, and every category in each dictionary.
//! tests/test_schemas.py reads both back and compares them.
//!
//! Columns come from Python in the engine's form (quench.schema.write_parquet):
//! - `("<u1" | "<u4" | "<u8" | "<f8", bytes)`: little-endian values; a float NaN is a null, as
//!   pyarrow's conversion from pandas makes it;
//! - `("str", [str | None, ...])`: text as `large_string`, pandas 3's string dtype in Arrow;
//! - `("category", (bytes, [str, ...]))`: int8 codes into the category names, a
//!   `dictionary<int8, large_string>` column (pandas' categorical with fewer than 128 categories).
//!
//! Owns the file's encoding and its I/O only: it imports neither the engine nor pyo3 (`lib.rs`
//! converts Python's columns into [`ColumnData`]).

use arrow_array::types::Int8Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float64Array, Int8Array, LargeStringArray, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{ColumnChunkMetaData, KeyValue};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, SerializedRowGroupWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, SchemaDescPtr};
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// The metadata key pandas reads its column types and index from.
const PANDAS_KEY: &str = "pandas";

/// One column as Python hands it over.
pub enum ColumnData {
    U8(Vec<u8>),
    U32(Vec<u8>),
    U64(Vec<u8>),
    F64(Vec<u8>),
    Text(Vec<Option<String>>),
    Category { codes: Vec<u8>, names: Vec<String> },
}

/// Why a table could not be written: its data (a caller's mistake) or the file.
#[derive(Debug)]
pub enum WriteError {
    Data(String),
    Io(String),
}

impl From<parquet::errors::ParquetError> for WriteError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        WriteError::Io(e.to_string())
    }
}

/// Write `columns` (name, data) to `path` with the `pandas` schema metadata `pandas_metadata`,
/// a row group every `row_group_rows` rows (one, empty, for a table without rows, as pyarrow).
pub fn write(
    path: &Path,
    columns: Vec<(String, ColumnData)>,
    pandas_metadata: String,
    row_group_rows: usize,
) -> Result<(), WriteError> {
    let (fields, arrays, rows) = to_arrays(columns)?;
    let mut file = TableWriter::create(path, fields, pandas_metadata)?;
    let step = row_group_rows.max(1);
    let starts: Vec<usize> = if rows == 0 { vec![0] } else { (0..rows).step_by(step).collect() };
    for start in starts {
        file.write_group(&arrays, start, step.min(rows - start))?;
    }
    file.close()
}

/// The columns as Arrow arrays, their fields, and their common length.
pub fn to_arrays(columns: Vec<(String, ColumnData)>) -> Result<(Vec<Field>, Vec<ArrayRef>, usize), WriteError> {
    let mut fields = Vec::with_capacity(columns.len());
    let mut arrays = Vec::with_capacity(columns.len());
    for (name, data) in columns {
        let array = to_arrow(&name, data)?;
        // pyarrow's schema from pandas: every field nullable.
        fields.push(Field::new(name, array.data_type().clone(), true));
        arrays.push(array);
    }
    let rows = arrays.first().map_or(0, |a| a.len());
    if let Some((f, a)) = fields.iter().zip(&arrays).find(|(_, a)| a.len() != rows) {
        return Err(WriteError::Data(format!("column {}: {} rows where the first has {rows}", f.name(), a.len())));
    }
    Ok((fields, arrays, rows))
}

/// A table's Parquet file, written a row group at a time (a table streamed to disk is saved
/// chunk by chunk, in the same row groups as the one-shot `write`).
pub struct TableWriter {
    writer: SerializedFileWriter<File>,
    columns: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    parquet_schema: SchemaDescPtr,
    groups: usize,
}

impl TableWriter {
    /// Create `path` for a table of `fields` with the `pandas` schema metadata.
    pub fn create(path: &Path, fields: Vec<Field>, pandas_metadata: String) -> Result<Self, WriteError> {
        // The pandas metadata goes in the file's key-value metadata and in the stored Arrow
        // schema's own, as pyarrow stores it (its readers take the latter).
        let metadata = HashMap::from([(PANDAS_KEY.to_string(), pandas_metadata.clone())]);
        let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
        let parquet_schema =
            Arc::new(ArrowSchemaConverter::new().convert(&schema).map_err(|e| WriteError::Data(e.to_string()))?);
        let mut props = WriterProperties::builder()
            // pyarrow's default format version (2.6), and the codec pandas passes.
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(vec![KeyValue::new(PANDAS_KEY.to_string(), pandas_metadata)]))
            .build();
        add_encoded_arrow_schema_to_metadata(&schema, &mut props);
        let file = File::create(path).map_err(|e| WriteError::Io(e.to_string()))?;
        let writer = SerializedFileWriter::new(file, parquet_schema.root_schema_ptr(), Arc::new(props))?;
        let columns = ArrowRowGroupWriterFactory::new(&writer, schema.clone());
        Ok(TableWriter { writer, columns, schema, parquet_schema, groups: 0 })
    }

    /// Rows [start, start + len) of `arrays` (the table's columns, in order) as one row group.
    pub fn write_group(&mut self, arrays: &[ArrayRef], start: usize, len: usize) -> Result<(), WriteError> {
        let fields = self.schema.fields();
        if let Some((f, a)) = fields.iter().zip(arrays).find(|(f, a)| f.data_type() != a.data_type()) {
            return Err(WriteError::Data(format!(
                "column {}: {} where the table has {}",
                f.name(),
                a.data_type(),
                f.data_type()
            )));
        }
        if arrays.len() != fields.len() {
            return Err(WriteError::Data(format!("{} columns where the table has {}", arrays.len(), fields.len())));
        }
        let column_writers = self.columns.create_column_writers(self.groups)?;
        let mut row_group = self.writer.next_row_group()?;
        for (i, (array, mut column_writer)) in arrays.iter().zip(column_writers).enumerate() {
            let part = array.slice(start, len);
            if let Some(dict) = part.as_any().downcast_ref::<DictionaryArray<Int8Type>>() {
                append_dictionary_chunk(&mut row_group, self.parquet_schema.column(i), dict)?;
                continue;
            }
            for leaf in compute_leaves(&fields[i], &part)? {
                column_writer.write(&leaf)?;
            }
            column_writer.close()?.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        self.groups += 1;
        Ok(())
    }

    /// Write the footer and close the file.
    pub fn close(self) -> Result<(), WriteError> {
        self.writer.close()?;
        Ok(())
    }
}

/// A category column's chunk as pyarrow writes it: a dictionary page holding every category in
/// code order, used or not, and one data page of codes. (The Arrow writer keeps only the
/// categories a chunk uses, in the order they appear, so pandas would read other categories
/// back.) Layout, Apache Parquet format specification, "Encodings": the dictionary page is
/// PLAIN (each value a 4-byte little-endian length and its bytes); a data page (v1) holds the
/// definition levels, RLE-encoded behind a 4-byte length, then the codes as RLE_DICTIONARY: a
/// bit-width byte and runs of the RLE / bit-packing hybrid. Codes are never null, so every
/// definition level is 1.
fn append_dictionary_chunk(
    row_group: &mut SerializedRowGroupWriter<'_, File>,
    descr: ColumnDescPtr,
    dict: &DictionaryArray<Int8Type>,
) -> Result<(), WriteError> {
    let names = dict.values().as_any().downcast_ref::<LargeStringArray>().expect("category names are large strings");
    let mut dictionary = Vec::new();
    for name in names.iter() {
        let name = name.unwrap_or_default().as_bytes();
        dictionary.extend_from_slice(&(name.len() as u32).to_le_bytes());
        dictionary.extend_from_slice(name);
    }
    let codes: Vec<u32> = dict.keys().values().iter().map(|&c| c as u32).collect();
    let rows = codes.len();
    let mut levels = Vec::new();
    rle_runs(&mut levels, std::iter::repeat_n(1u32, rows), 1);
    let bit_width = bits_for(names.len().saturating_sub(1) as u32);
    let mut data = Vec::with_capacity(4 + levels.len() + 1 + rows);
    data.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    data.extend_from_slice(&levels);
    data.push(bit_width);
    rle_runs(&mut data, codes.into_iter(), bit_width);
    let dictionary_page = Page::DictionaryPage {
        buf: snappy(&dictionary)?,
        num_values: names.len() as u32,
        encoding: Encoding::PLAIN,
        is_sorted: false,
    };
    let data_page = Page::DataPage {
        buf: snappy(&data)?,
        num_values: rows as u32,
        encoding: Encoding::RLE_DICTIONARY,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    let mut sink = TrackedWrite::new(Vec::new());
    let mut pages = SerializedPageWriter::new(&mut sink);
    let dict_spec = pages.write_page(CompressedPage::new(dictionary_page, dictionary.len()))?;
    let data_spec = pages.write_page(CompressedPage::new(data_page, data.len()))?;
    pages.close()?;
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_compression(Compression::SNAPPY)
        .set_encodings(vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY])
        .set_num_values(rows as i64)
        .set_total_compressed_size((dict_spec.compressed_size + data_spec.compressed_size) as i64)
        .set_total_uncompressed_size((dict_spec.uncompressed_size + data_spec.uncompressed_size) as i64)
        .set_dictionary_page_offset(Some(dict_spec.offset as i64))
        .set_data_page_offset(data_spec.offset as i64)
        .build()?;
    let bytes = Bytes::from(sink.into_inner()?);
    let close = ColumnCloseResult {
        bytes_written: bytes.len() as u64,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: None,
    };
    row_group.append_column(&bytes, close)?;
    Ok(())
}

/// Bits to write values up to `max` (at least one).
fn bits_for(max: u32) -> u8 {
    (u32::BITS - max.leading_zeros()).max(1) as u8
}

/// `values` as RLE runs of the Parquet RLE / bit-packing hybrid: each run a ULEB128 header
/// (its length shifted left once; the low bit 0 marks a run) and its value in
/// ceil(bit_width / 8) little-endian bytes.
fn rle_runs(out: &mut Vec<u8>, values: impl Iterator<Item = u32>, bit_width: u8) {
    let value_bytes = (bit_width as usize).div_ceil(8);
    let mut emit = |value: u32, run: u64| {
        let mut header = run << 1;
        while header >= 0x80 {
            out.push((header as u8) | 0x80);
            header >>= 7;
        }
        out.push(header as u8);
        out.extend_from_slice(&value.to_le_bytes()[..value_bytes]);
    };
    let mut current: Option<(u32, u64)> = None;
    for v in values {
        current = match current {
            Some((value, run)) if value == v => Some((value, run + 1)),
            Some((value, run)) => {
                emit(value, run);
                Some((v, 1))
            }
            None => Some((v, 1)),
        };
    }
    if let Some((value, run)) = current {
        emit(value, run);
    }
}

/// A page's bytes compressed as Parquet's SNAPPY codec stores them: raw Snappy, no framing.
fn snappy(raw: &[u8]) -> Result<Bytes, WriteError> {
    let compressed = snap::raw::Encoder::new().compress_vec(raw).map_err(|e| WriteError::Io(e.to_string()))?;
    Ok(Bytes::from(compressed))
}

fn to_arrow(name: &str, data: ColumnData) -> Result<ArrayRef, WriteError> {
    Ok(match data {
        ColumnData::U8(bytes) => Arc::new(UInt8Array::from(bytes)),
        ColumnData::U32(bytes) => Arc::new(UInt32Array::from(le_values(name, &bytes, u32::from_le_bytes)?)),
        ColumnData::U64(bytes) => Arc::new(UInt64Array::from(le_values(name, &bytes, u64::from_le_bytes)?)),
        ColumnData::F64(bytes) => {
            let values = le_values(name, &bytes, f64::from_le_bytes)?;
            let present: Vec<bool> = values.iter().map(|v| !v.is_nan()).collect();
            let nulls = present.contains(&false).then(|| NullBuffer::from(present));
            Arc::new(Float64Array::new(ScalarBuffer::from(values), nulls))
        }
        ColumnData::Text(values) => Arc::new(LargeStringArray::from(values)),
        ColumnData::Category { codes, names } => {
            // Codes index the names (checked by try_new); the engine's are below 128.
            let keys = Int8Array::from(codes.iter().map(|&c| c as i8).collect::<Vec<_>>());
            let values = Arc::new(LargeStringArray::from(names));
            let dict = DictionaryArray::<Int8Type>::try_new(keys, values)
                .map_err(|e| WriteError::Data(format!("column {name}: {e}")))?;
            Arc::new(dict)
        }
    })
}

/// Little-endian values of `N` bytes each.
fn le_values<T, const N: usize>(name: &str, bytes: &[u8], from_le: fn([u8; N]) -> T) -> Result<Vec<T>, WriteError> {
    if !bytes.len().is_multiple_of(N) {
        return Err(WriteError::Data(format!("column {name}: {} bytes are not whole {N}-byte values", bytes.len())));
    }
    Ok(bytes.chunks_exact(N).map(|c| from_le(c.try_into().expect("chunks of N bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    /// The file's row groups follow the requested size, and its Arrow schema is stored.
    #[test]
    fn row_groups_and_arrow_schema() {
        let dir = std::env::temp_dir().join(format!("quench-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        let ids: Vec<u8> = (0..10u32).flat_map(|i| i.to_le_bytes()).collect();
        let cols = vec![
            ("id".to_string(), ColumnData::U32(ids)),
            (
                "code".to_string(),
                ColumnData::Category { codes: vec![0, 1, 0, 1, 0, 1, 0, 1, 0, 1], names: vec!["a".into(), "b".into()] },
            ),
        ];
        write(&path, cols, "{}".into(), 4).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        let rows: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(rows, vec![4, 4, 2]);
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        let keys: Vec<&str> = kv.iter().map(|k| k.key.as_str()).collect();
        assert!(keys.contains(&"pandas") && keys.contains(&"ARROW:schema"), "{keys:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// RLE runs by hand (Parquet's hybrid encoding): a run's header is its length shifted
    /// left once, as ULEB128, then the value in whole bytes of the bit width.
    #[test]
    fn rle_runs_by_hand() {
        let mut out = Vec::new();
        rle_runs(&mut out, [0, 0, 0, 1].into_iter(), 1);
        assert_eq!(out, [6, 0, 2, 1]);
        let mut long = Vec::new();
        rle_runs(&mut long, std::iter::repeat_n(300u32, 200), 9);
        // 200 << 1 = 400 = 0x190: ULEB128 0x90 0x03; 300 in two bytes, little-endian.
        assert_eq!(long, [0x90, 0x03, 0x2c, 0x01]);
        assert_eq!((bits_for(0), bits_for(1), bits_for(4), bits_for(255)), (1, 1, 3, 8));
    }

    #[test]
    fn a_code_outside_the_categories_is_refused() {
        let cols = vec![("c".to_string(), ColumnData::Category { codes: vec![2], names: vec!["a".into()] })];
        let dir = std::env::temp_dir();
        let err = write(&dir.join("never.parquet"), cols, "{}".into(), 4).unwrap_err();
        assert!(matches!(err, WriteError::Data(m) if m.contains("column c")));
    }
}
