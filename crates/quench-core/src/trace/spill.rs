//! Streaming of recorded tables to disk while a run goes, so memory does not grow with its
//! duration. A table's rows are appended chunk by chunk: each column to its own file of raw
//! little-endian values (`<table>.<column>.bin`); string columns as `u32` codes into a
//! dictionary. `finish` writes `manifest.json`, which names every spilled table in the order it
//! first spilled with its row count and, per column, its file, numpy dtype and dictionary:
//!
//! `{"tables": [{"name": "queue", "rows": 70000, "columns": [{"name": "time_s", "dtype": "<f8",
//! "file": "queue.time_s.bin", "dictionary": null}, ...]}]}`
//!
//! A table whose rows are stored out of order carries `"order": [[start, end], ...]`, the
//! ranges of stored rows in the order they are read (`set_order`).
//!
//! Python (`python/quench/stream.py`) reads them back chunk by chunk into the Parquet/CSV files
//! a run saves. Works for any `Table`-shaped rows (`append`), not only the recorder's buffers.
//! An I/O error is kept (the first one) and later appends are dropped; `error` reports it.
//! Owns the spill folder's files and the manifest; it writes the rows it is handed and knows
//! nothing of what they mean.

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
    /// For a column stored as text (`dtype` "utf8"): the file of each row's end offset in
    /// `file` (`<u8`).
    #[serde(skip_serializing_if = "Option::is_none")]
    ends: Option<String>,
}

/// The manifest's `dtype` of a string column stored as its UTF-8 text.
const TEXT: &str = "utf8";

#[derive(Serialize)]
struct TableEntry {
    name: String,
    rows: u64,
    columns: Vec<ColumnEntry>,
    /// The table's rows as ranges [start, end) of the stored rows, in the order they are to
    /// be read; the stored order when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<Vec<[u64; 2]>>,
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

/// How a string column is stored: as codes into a dictionary when its first chunk repeats its
/// values (node names, kinds), else as its text, so that a column of mostly distinct values
/// (the flows table's names, one per arrival) costs no memory that grows with the run.
enum Strings {
    Coded(Dictionary),
    /// UTF-8 bytes appended to the column's file; `ends` gets each row's end offset.
    Text {
        ends: File,
        end: u64,
    },
}

impl Strings {
    /// Whether a column whose first chunk is `values` is stored as codes: when at most half
    /// of them are distinct.
    fn coded(values: &[String]) -> bool {
        let distinct: std::collections::HashSet<&str> = values.iter().map(String::as_str).collect();
        2 * distinct.len() <= values.len()
    }
}

struct OpenTable {
    entry: TableEntry,
    files: Vec<File>,
    /// Per column: how a string column is stored (None for numbers).
    strings: Vec<Option<Strings>>,
}

/// The chunk writer of one run: a folder of column files and the tables written so far.
pub struct Spill {
    dir: PathBuf,
    tables: Vec<OpenTable>,
    /// One chunk's bytes, reused for every column.
    scratch: Vec<u8>,
    error: Option<String>,
    /// Bytes written to the column files so far.
    written: u64,
    /// Past this many bytes written, further chunks are dropped (`full`): the caller's budget
    /// for the folder, so that it exceeds the budget by at most the chunk that passed it.
    limit: u64,
    full: bool,
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
        let (written, limit, full) = (0, u64::MAX, false);
        Ok(Spill { dir: dir.to_path_buf(), tables: Vec::new(), scratch: Vec::new(), error: None, written, limit, full })
    }

    /// Drop every chunk once `bytes` have been written (see `full`).
    pub fn with_limit(mut self, bytes: u64) -> Self {
        self.limit = bytes;
        self
    }

    /// Bytes written to the folder's column files so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Whether a chunk was dropped because the folder had reached its limit: the tables are
    /// incomplete, and the caller stops the run.
    pub fn full(&self) -> bool {
        self.full
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
        if self.written >= self.limit {
            self.full = true;
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
        let same_type = |e: &ColumnEntry, c: &ColumnRef| e.dtype == dtype(c) || e.dtype == TEXT && dtype(c) == "<u4";
        let same_shape = t.entry.columns.len() == columns.len()
            && t.entry.columns.iter().zip(columns).all(|(e, (n, c))| e.name == *n && same_type(e, c));
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
                ColumnRef::Str(v) => match t.strings[k].as_mut().expect("string columns have a storage") {
                    Strings::Coded(dict) => {
                        let codes: Vec<u32> = v.iter().map(|s| dict.encode(s)).collect();
                        extend_le(&mut self.scratch, &codes, u32::to_le_bytes);
                    }
                    Strings::Text { ends, end } => {
                        let mut offsets = Vec::with_capacity(v.len());
                        for s in v {
                            self.scratch.extend_from_slice(s.as_bytes());
                            *end += s.len() as u64;
                            offsets.push(*end);
                        }
                        let mut bytes = Vec::with_capacity(8 * offsets.len());
                        extend_le(&mut bytes, &offsets, u64::to_le_bytes);
                        let path = self.dir.join(t.entry.columns[k].ends.as_deref().unwrap_or_default());
                        ends.write_all(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
                        self.written += bytes.len() as u64;
                    }
                },
            }
            let path = self.dir.join(&t.entry.columns[k].file);
            t.files[k].write_all(&self.scratch).map_err(|e| format!("{}: {e}", path.display()))?;
            self.written += self.scratch.len() as u64;
        }
        t.entry.rows += rows as u64;
        Ok(())
    }

    /// Create the column files of a table seen for the first time; returns its index.
    fn open(&mut self, table: &str, columns: &[(&str, ColumnRef)]) -> Result<usize, String> {
        let mut entry = TableEntry { name: table.to_string(), rows: 0, columns: Vec::new(), order: None };
        let mut files = Vec::new();
        let mut strings = Vec::new();
        for (name, col) in columns {
            let file = format!("{table}.{name}.bin");
            files.push(self.create(&file)?);
            let mut column =
                ColumnEntry { name: name.to_string(), dtype: dtype(col), file, dictionary: None, ends: None };
            let storage = match col {
                ColumnRef::Str(v) if !Strings::coded(v) => {
                    let ends = format!("{table}.{name}.ends.bin");
                    let file = self.create(&ends)?;
                    (column.dtype, column.ends) = (TEXT, Some(ends));
                    Some(Strings::Text { ends: file, end: 0 })
                }
                ColumnRef::Str(_) => Some(Strings::Coded(Dictionary::default())),
                _ => None,
            };
            strings.push(storage);
            entry.columns.push(column);
        }
        self.tables.push(OpenTable { entry, files, strings });
        Ok(self.tables.len() - 1)
    }

    /// Create a new file in the folder.
    fn create(&self, file: &str) -> Result<File, String> {
        let path = self.dir.join(file);
        OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| format!("{}: {e}", path.display()))
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

    /// Rows stored so far for `table`.
    pub fn rows(&self, table: &str) -> u64 {
        self.tables.iter().find(|t| t.entry.name == table).map_or(0, |t| t.entry.rows)
    }

    /// Have `table` read as the given ranges [start, end) of its stored rows, in that order
    /// (the flows table stores its arrivals as they are released and its listed flows last,
    /// and is read listed flows first). The ranges must cover every stored row once.
    pub fn set_order(&mut self, table: &str, ranges: Vec<[u64; 2]>) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.entry.name == table) {
            debug_assert_eq!(ranges.iter().map(|[a, b]| b - a).sum::<u64>(), t.entry.rows, "ranges cover the rows");
            t.entry.order = Some(ranges);
        }
    }

    /// Close every file and write the manifest; the first error of the whole run, if any.
    pub fn finish(mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for t in &mut self.tables {
            for (c, dict) in t.entry.columns.iter_mut().zip(&t.strings) {
                if let Some(Strings::Coded(d)) = dict {
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
                "utf8" => {
                    let ends = std::fs::read(dir.join(c["ends"].as_str().unwrap())).unwrap();
                    let ends = read(&ends, u64::from_le_bytes);
                    let starts = std::iter::once(0).chain(ends.iter().copied());
                    let text =
                        |(a, b): (u64, &u64)| String::from_utf8(bytes[a as usize..*b as usize].to_vec()).unwrap();
                    Column::Str(starts.zip(&ends).map(text).collect())
                }
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
        match entry["order"].as_array() {
            Some(ranges) => reorder(&t, ranges),
            None => t,
        }
    }

    /// The rows of `t` in the order of `ranges` ([start, end) of its stored rows).
    fn reorder(t: &Table, ranges: &[serde_json::Value]) -> Table {
        let rows: Vec<usize> =
            ranges.iter().flat_map(|r| r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize).collect();
        let pick = |c: &Column| match c {
            Column::U8(v) => Column::U8(rows.iter().map(|&i| v[i]).collect()),
            Column::U32(v) => Column::U32(rows.iter().map(|&i| v[i]).collect()),
            Column::U64(v) => Column::U64(rows.iter().map(|&i| v[i]).collect()),
            Column::F64(v) => Column::F64(rows.iter().map(|&i| v[i]).collect()),
            Column::Str(v) => Column::Str(rows.iter().map(|&i| v[i].clone()).collect()),
        };
        t.columns.iter().fold(Table::new(&t.name), |acc, (n, c)| acc.with(n, pick(c)))
    }

    /// Arrivals' rows stream out as they are released, listed flows' at the end, and the
    /// flows table reads back exactly as the in-memory one: listed flows first, then every
    /// arrival in id order (NaN compared bitwise through the debug form).
    #[test]
    fn the_flows_table_streams_as_arrivals_are_released() {
        let json = r#"{"duration": "20s", "seed": 3, "hosts": ["a", "b"], "routers": ["r"],
            "links": [{"from": "a", "to": "r", "rate": "10Mbps", "delay": "5ms"},
                      {"from": "r", "to": "b", "rate": "10Mbps", "delay": "5ms"}],
            "flows": [{"kind": "tcp", "src": "a", "dst": "b", "name": "bulk"},
                      {"kind": "udp", "src": "b", "dst": "a", "rate": "100kbps", "name": "cbr"}],
            "workloads": [{"pairs": [["a", "b"], ["b", "a"]], "arrival_rate": 10, "size": "20KB",
                           "flow": {"kind": "tcp"}}],
            "record": {"queues": false, "cwnd": false, "rtt": false, "monitors": false}}"#;
        let expected = crate::Simulation::from_json(json).unwrap().run();
        let dir = scratch_dir("flows");
        let mut sim = crate::Simulation::from_json(json).unwrap();
        sim.world.rec.stream_to(Spill::new(&dir).unwrap(), TEST_CHUNK_ROWS);
        let streamed = sim.run();
        assert!(streamed.output_error.is_none());
        assert_eq!(streamed.table("flows").rows(), 0, "a placeholder in memory");
        let want = expected.table("flows");
        assert!(want.rows() > 150, "{} flows", want.rows());
        let got = reassemble(&dir, "flows");
        assert_eq!(format!("{:?}", got.columns), format!("{:?}", want.columns));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_spilled_and_reassembled_table_equals_the_in_memory_one() {
        let cfg = RecordConfig::default();
        let mut memory = Recorder::new(cfg.clone(), vec![true, true], 0);
        record(&mut memory);
        let (expected, written) = memory.into_tables();
        assert!(written.is_ok());

        let dir = scratch_dir("reassemble");
        let mut streamed = Recorder::new(cfg, vec![true, true], 0);
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
