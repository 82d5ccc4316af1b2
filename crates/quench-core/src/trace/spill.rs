//! Streaming of recorded tables to disk while a run goes, so memory does not grow with its
//! duration. A table's rows are appended chunk by chunk: each column to its own file of raw
//! little-endian values (`<table>.<column>.bin`); string columns as `u32` codes into a
//! dictionary. `finish` writes `manifest.json`, which names every spilled table in the order it
//! first spilled with its row count and, per column, its file, numpy dtype and dictionary:
//!
//! `{"tables": [{"name": "queue", "rows": 70000, "columns": [{"name": "time_s", "dtype": "<f8",
//! "file": "queue.time_s.bin", "dictionary": null}, ...]}]}`
//!
//! Python (`python/quench/stream.py`) reads them back chunk by chunk into the Parquet/CSV files
//! a run saves. Works for any `Table`-shaped rows (`append`), not only the recorder's buffers.
//! An I/O error is kept (the first one) and later appends are dropped; `error` reports it.

use super::table::ColumnRef;
use serde::Serialize;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Rows a record buffer holds before it is written out. 64 Ki rows of the widest record
/// (flow_monitor, 61 bytes) is about 4 MB per table: large enough that a write is one cheap
/// system call per column, small enough that ten tables' buffers stay far below the engine's
/// own state in memory.
pub const CHUNK_ROWS: usize = 65_536;

/// The manifest's file name inside the spill folder.
pub const MANIFEST: &str = "manifest.json";

#[derive(Serialize)]
struct ColumnEntry {
    name: String,
    /// numpy's name of the stored values' type.
    dtype: &'static str,
    file: String,
    /// Strings the stored codes stand for; None when the values are the column itself.
    dictionary: Option<Vec<String>>,
}

#[derive(Serialize)]
struct TableEntry {
    name: String,
    rows: u64,
    columns: Vec<ColumnEntry>,
}

#[derive(Serialize)]
struct Manifest<'a> {
    tables: &'a [TableEntry],
}

/// Codes of a string column's values, in order of first appearance.
#[derive(Default)]
struct Dictionary {
    code: HashMap<String, u32>,
}

impl Dictionary {
    fn encode(&mut self, value: &str) -> u32 {
        if let Some(&c) = self.code.get(value) {
            return c;
        }
        let c = self.code.len() as u32;
        self.code.insert(value.to_string(), c);
        c
    }
    fn values(&self) -> Vec<String> {
        let mut v: Vec<(&String, &u32)> = self.code.iter().collect();
        v.sort_by_key(|(_, &c)| c);
        v.into_iter().map(|(s, _)| s.clone()).collect()
    }
}

struct OpenTable {
    entry: TableEntry,
    files: Vec<File>,
    /// Per column: the dictionary of a string column (None for numbers).
    strings: Vec<Option<Dictionary>>,
}

/// The chunk writer of one run: a folder of column files and the tables written so far.
pub struct Spill {
    dir: PathBuf,
    tables: Vec<OpenTable>,
    /// One chunk's bytes, reused for every column.
    scratch: Vec<u8>,
    error: Option<String>,
}

fn dtype(col: &ColumnRef) -> &'static str {
    match col {
        ColumnRef::U8(_) => "<u1",
        ColumnRef::U32(_) | ColumnRef::Str(_) => "<u4",
        ColumnRef::U64(_) => "<u8",
        ColumnRef::F64(_) => "<f8",
    }
}

/// Append `v`'s values as little-endian bytes.
fn extend_le<T: Copy, const N: usize>(out: &mut Vec<u8>, v: &[T], le: impl Fn(T) -> [u8; N]) {
    out.reserve(v.len() * N);
    for &x in v {
        out.extend_from_slice(&le(x));
    }
}

impl Spill {
    /// A writer into `dir` (created if absent; its files are created as tables spill).
    pub fn new(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Spill { dir: dir.to_path_buf(), tables: Vec::new(), scratch: Vec::new(), error: None })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The first I/O error, if any: nothing after it was written.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Whether `table` has rows on disk (its remaining rows must follow them there).
    pub fn holds(&self, table: &str) -> bool {
        self.tables.iter().any(|t| t.entry.name == table)
    }

    /// Append a chunk of rows of `table`: equally long named columns, the same names and types
    /// at every call.
    pub fn append(&mut self, table: &str, columns: &[(&str, ColumnRef)]) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.try_append(table, columns) {
            self.error = Some(e);
        }
    }

    fn try_append(&mut self, table: &str, columns: &[(&str, ColumnRef)]) -> Result<(), String> {
        let i = match self.tables.iter().position(|t| t.entry.name == table) {
            Some(i) => i,
            None => self.open(table, columns)?,
        };
        let t = &mut self.tables[i];
        let same_shape = t.entry.columns.len() == columns.len()
            && t.entry.columns.iter().zip(columns).all(|(e, (n, c))| e.name == *n && e.dtype == dtype(c));
        if !same_shape {
            return Err(format!("table {table}: a chunk's columns differ from the first chunk's"));
        }
        let rows = columns.first().map_or(0, |(_, c)| c.len());
        for (k, (_, col)) in columns.iter().enumerate() {
            self.scratch.clear();
            match *col {
                ColumnRef::U8(v) => self.scratch.extend_from_slice(v),
                ColumnRef::U32(v) => extend_le(&mut self.scratch, v, u32::to_le_bytes),
                ColumnRef::U64(v) => extend_le(&mut self.scratch, v, u64::to_le_bytes),
                ColumnRef::F64(v) => extend_le(&mut self.scratch, v, f64::to_le_bytes),
                ColumnRef::Str(v) => {
                    let dict = t.strings[k].get_or_insert_with(Dictionary::default);
                    let codes: Vec<u32> = v.iter().map(|s| dict.encode(s)).collect();
                    extend_le(&mut self.scratch, &codes, u32::to_le_bytes);
                }
            }
            let path = self.dir.join(&t.entry.columns[k].file);
            t.files[k].write_all(&self.scratch).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        t.entry.rows += rows as u64;
        Ok(())
    }

    /// Create the column files of a table seen for the first time; returns its index.
    fn open(&mut self, table: &str, columns: &[(&str, ColumnRef)]) -> Result<usize, String> {
        let mut entry = TableEntry { name: table.to_string(), rows: 0, columns: Vec::new() };
        let mut files = Vec::new();
        for (name, col) in columns {
            let file = format!("{table}.{name}.bin");
            let path = self.dir.join(&file);
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            files.push(f);
            entry.columns.push(ColumnEntry { name: name.to_string(), dtype: dtype(col), file, dictionary: None });
        }
        let strings = columns.iter().map(|_| None).collect();
        self.tables.push(OpenTable { entry, files, strings });
        Ok(self.tables.len() - 1)
    }

    /// Name the strings that the codes of `table`'s `column` stand for (a column the recorder
    /// stores as codes, such as monitors' `name`). No effect on a table that never spilled.
    pub fn set_dictionary(&mut self, table: &str, column: &str, values: Vec<String>) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.entry.name == table) {
            if let Some(c) = t.entry.columns.iter_mut().find(|c| c.name == column) {
                c.dictionary = Some(values);
            }
        }
    }

    /// Close every file and write the manifest; the first error of the whole run, if any.
    pub fn finish(mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for t in &mut self.tables {
            for (c, dict) in t.entry.columns.iter_mut().zip(&t.strings) {
                if let Some(d) = dict {
                    c.dictionary = Some(d.values());
                }
            }
        }
        let entries: Vec<TableEntry> = self.tables.into_iter().map(|t| t.entry).collect();
        let text = serde_json::to_string(&Manifest { tables: &entries }).map_err(|e| e.to_string())?;
        let path = self.dir.join(MANIFEST);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, LinkId};
    use crate::trace::table::{Column, Table};
    use crate::trace::{RecordConfig, Recorder, TcpEvent};
    use crate::units::{Dur, Time};

    /// A chunk far smaller than CHUNK_ROWS, so a short test spills many chunks and a remainder.
    const TEST_CHUNK_ROWS: usize = 7;
    const ROWS: u64 = 100;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("quench-spill-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The same records into `rec`: several tables, two links, a string-coded column.
    fn record(rec: &mut Recorder) {
        for i in 0..ROWS {
            let now = Time(i * 1_000_003);
            let (link, flow) = (LinkId((i % 2) as u32), FlowId((i % 3) as u32));
            rec.queue_len(now, link, i, i * 1500);
            rec.drop(now, link, flow, (i % 4) as u8, 1500);
            rec.cwnd(now, flow, 10 * i, u64::MAX - i);
            rec.rtt(now, flow, Dur(i), Dur(2 * i), Dur(3 * i));
            rec.monitor(now, link, if i % 5 == 0 { "max_p" } else { "avg" }, i as f64 / 3.0);
            if i % 10 == 0 {
                rec.event(now, flow, TcpEvent::Timeout);
            }
        }
    }

    fn read<T, const N: usize>(bytes: &[u8], from_le: fn([u8; N]) -> T) -> Vec<T> {
        bytes.chunks_exact(N).map(|c| from_le(c.try_into().expect("N bytes"))).collect()
    }

    /// A spilled table as the Python side reassembles it: the manifest's columns, codes
    /// replaced by their dictionary's strings.
    fn reassemble(dir: &Path, name: &str) -> Table {
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST)).unwrap()).unwrap();
        let entry = manifest["tables"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
        let mut t = Table::new(name);
        for c in entry["columns"].as_array().unwrap() {
            let bytes = std::fs::read(dir.join(c["file"].as_str().unwrap())).unwrap();
            let col = match c["dtype"].as_str().unwrap() {
                "<u1" => Column::U8(bytes),
                "<u4" => Column::U32(read(&bytes, u32::from_le_bytes)),
                "<u8" => Column::U64(read(&bytes, u64::from_le_bytes)),
                _ => Column::F64(read(&bytes, f64::from_le_bytes)),
            };
            let col = match (c["dictionary"].as_array(), col) {
                (Some(d), Column::U32(codes)) => {
                    Column::Str(codes.iter().map(|&k| d[k as usize].as_str().unwrap().to_string()).collect())
                }
                (_, col) => col,
            };
            t = t.with(c["name"].as_str().unwrap(), col);
        }
        assert_eq!(t.rows() as u64, entry["rows"].as_u64().unwrap());
        t
    }

    #[test]
    fn a_spilled_and_reassembled_table_equals_the_in_memory_one() {
        let cfg = RecordConfig::default();
        let mut memory = Recorder::new(cfg.clone(), vec![true, true]);
        record(&mut memory);
        let (expected, written) = memory.into_tables();
        assert!(written.is_ok());

        let dir = scratch_dir("reassemble");
        let mut streamed = Recorder::new(cfg, vec![true, true]);
        streamed.stream_to(Spill::new(&dir).unwrap(), TEST_CHUNK_ROWS);
        record(&mut streamed);
        assert!(streamed.queue.len() < TEST_CHUNK_ROWS, "full chunks left memory as they filled");
        let (placeholders, written) = streamed.into_tables();
        written.unwrap();
        for (want, got) in expected.iter().zip(&placeholders) {
            assert_eq!(want.name, got.name);
            if want.rows() == 0 {
                assert_eq!(want, got, "a table that never filled a chunk stays in memory");
            } else {
                assert!(got.columns.is_empty(), "{} comes back as a placeholder", got.name);
                assert_eq!(*want, reassemble(&dir, &want.name));
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn any_table_shaped_rows_can_be_appended_with_their_strings_coded() {
        let dir = scratch_dir("generic");
        let mut spill = Spill::new(&dir).unwrap();
        let chunk = |names: &[&str], sizes: Vec<u64>| {
            Table::new("flows")
                .with("name", Column::Str(names.iter().map(|n| n.to_string()).collect()))
                .with("bytes", Column::U64(sizes))
        };
        let (a, b) = (chunk(&["x", "y"], vec![1, 2]), chunk(&["y", "z", "x"], vec![3, 4, 5]));
        spill.append("flows", &a.column_refs());
        spill.append("flows", &b.column_refs());
        spill.finish().unwrap();
        let whole = chunk(&["x", "y", "y", "z", "x"], vec![1, 2, 3, 4, 5]);
        assert_eq!(reassemble(&dir, "flows"), whole);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_error_is_kept_reported_with_its_file_and_stops_the_writing() {
        let dir = scratch_dir("error");
        let mut spill = Spill::new(&dir).unwrap();
        // A column file that already exists cannot be created (create_new).
        std::fs::write(dir.join("t.v.bin"), b"not ours").unwrap();
        let t = Table::new("t").with("v", Column::F64(vec![1.0; 3]));
        spill.append("t", &t.column_refs());
        spill.append("u", &t.column_refs());
        assert!(!dir.join("u.v.bin").exists(), "nothing is written after the first error");
        let err = spill.finish().unwrap_err();
        assert!(err.contains("t.v.bin") && !err.contains('\n'), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_capture_on_a_full_disk_reports_the_file() {
        use crate::trace::pcap::PcapWriter;
        let full = Path::new("/dev/full"); // Linux's always-full device
        if !full.exists() {
            return;
        }
        let w = PcapWriter::to_file(full).unwrap();
        assert!(w.finish().unwrap_err().contains("/dev/full"));
    }
}
