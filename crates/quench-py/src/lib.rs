//! The `quench._core` extension: a scenario goes in as JSON, columnar results come out as
//! little-endian byte buffers that Python wraps with numpy without copying element by element.
//! Configuration errors become `quench.ScenarioError` naming the offending key; a Rust panic
//! never crosses the boundary (it becomes `quench.InternalError`).
//! It owns the Python-facing classes and conversions only: it reaches the engine through
//! `quench_core`'s public facade, and simulates nothing itself.

// pyo3 0.22 macros test a `gil-refs` cfg that newer rustc reports as unknown, and wrap every
// PyResult in a conversion that newer clippy calls useless.
#![allow(unexpected_cfgs, clippy::useless_conversion)]
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use quench_core::table::{Column, Table};
use quench_core::units::{parse_quantity, Quantity};
use quench_core::{ConfigError, RunResult, Time};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

mod parquet;

create_exception!(quench._core, ScenarioError, PyValueError, "A scenario is invalid; the message names the key.");
create_exception!(quench._core, InternalError, PyRuntimeError, "A bug in quench (please report it).");

fn scenario_error(e: ConfigError) -> PyErr {
    let (path, reason) = (one_line(&e.path), one_line(&e.message));
    let err = ScenarioError::new_err(if path.is_empty() { reason.clone() } else { format!("{path}: {reason}") });
    Python::with_gil(|py| {
        let value = err.value_bound(py);
        let _ = value.setattr("path", path);
        let _ = value.setattr("reason", reason);
    });
    err
}

/// An error is one line: a key or value of the user's that holds a line break or another
/// control character (a TOML key may be "\n") is shown escaped.
fn one_line(text: &str) -> String {
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(breaks) {
        return text.to_string();
    }
    text.chars().map(|c| if breaks(c) { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// Run `f`, turning a panic into InternalError.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        InternalError::new_err(format!("internal error in {what}: {msg}"))
    })
}

/// Parse a quantity such as "10Mbps": returns (dimension, value in base units), with
/// dimension one of "time" (ns), "rate" (bit/s), "size" (bytes), "packets".
#[pyfunction]
fn parse_unit(text: &str) -> PyResult<(&'static str, u64)> {
    match parse_quantity(text).map_err(|e| PyValueError::new_err(e.0))? {
        Quantity::Time(d) => Ok(("time", d.0)),
        Quantity::Rate(r) => Ok(("rate", r.0)),
        Quantity::Size(b) => Ok(("size", b.0)),
        Quantity::Packets(p) => Ok(("packets", p)),
    }
}

/// Validate a scenario without running it; returns the resolved scenario as JSON (defaults
/// filled in).
#[pyfunction]
fn validate(spec_json: &str) -> PyResult<String> {
    let sc = quench_core::Scenario::from_json(spec_json).map_err(scenario_error)?;
    guarded("validation", || quench_core::Simulation::new(&sc).map(|_| sc.to_json()))?.map_err(scenario_error)
}

fn column_to_py(py: Python<'_>, col: &Column) -> PyResult<PyObject> {
    /// The column as little-endian bytes, in one buffer sized up front.
    fn raw<T: Copy, const N: usize>(py: Python<'_>, dtype: &str, v: &[T], to_le: impl Fn(T) -> [u8; N]) -> PyObject {
        let mut bytes = Vec::with_capacity(v.len() * N);
        for &x in v {
            bytes.extend_from_slice(&to_le(x));
        }
        (dtype, PyBytes::new_bound(py, &bytes)).into_py(py)
    }
    Ok(match col {
        Column::U8(v) => raw(py, "<u1", v, |x| [x]),
        Column::U32(v) => raw(py, "<u4", v, u32::to_le_bytes),
        Column::U64(v) => raw(py, "<u8", v, u64::to_le_bytes),
        Column::F64(v) => raw(py, "<f8", v, f64::to_le_bytes),
        Column::Str(v) => ("str", PyList::new_bound(py, v)).into_py(py),
    })
}

fn table_to_py<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    for (name, col) in &t.columns {
        d.set_item(name, column_to_py(py, col)?)?;
    }
    Ok(d)
}

fn result_to_py(py: Python<'_>, r: &RunResult) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    let tables = PyDict::new_bound(py);
    for t in &r.tables {
        tables.set_item(&t.name, table_to_py(py, t)?)?;
    }
    let pcaps = PyDict::new_bound(py);
    for (link, bytes) in &r.pcaps {
        pcaps.set_item(link, PyBytes::new_bound(py, bytes))?;
    }
    out.set_item("tables", tables)?;
    out.set_item("pcaps", pcaps)?;
    out.set_item("events_executed", r.events_executed)?;
    out.set_item("end_time_s", r.end_time.as_secs_f64())?;
    out.set_item("seed", r.seed)?;
    Ok(out.into_py(py))
}

/// A built scenario. Run it in steps with `run_until` (for progress bars), then `finish`.
#[pyclass(module = "quench._core")]
struct Simulation {
    inner: Option<quench_core::Simulation>,
    /// The scenario as built, defaults filled in: what `validate` returns for the same input.
    resolved: String,
}

impl Simulation {
    fn sim(&mut self) -> PyResult<&mut quench_core::Simulation> {
        self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this simulation has already finished"))
    }
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(spec_json: &str) -> PyResult<Self> {
        let sc = quench_core::Scenario::from_json(spec_json).map_err(scenario_error)?;
        let sim = guarded("building the scenario", || quench_core::Simulation::new(&sc))?.map_err(scenario_error)?;
        Ok(Simulation { inner: Some(sim), resolved: sc.to_json() })
    }

    /// The resolved scenario as JSON (every default filled in), the text `validate` returns;
    /// readable after `finish` too.
    #[getter]
    fn scenario(&self) -> &str {
        &self.resolved
    }

    /// Stream the recorded tables into the folder `spill_dir` (rows on disk in chunks, see
    /// quench.stream) and each captured link's pcap into `pcap_files[link]`, instead of memory.
    /// Call before running; OSError names the file that could not be created.
    fn stream_to(&mut self, spill_dir: PathBuf, pcap_files: Vec<(String, PathBuf)>) -> PyResult<()> {
        self.sim()?.stream_to(&spill_dir, &pcap_files).map_err(|e| PyOSError::new_err(one_line(&e)))
    }

    /// Advance to `t` seconds of simulated time (capped at the scenario's duration). The GIL
    /// is released while the engine runs. OSError when writing streamed records failed;
    /// ScenarioError (`budget.active_flows`) when more workload arrivals were in progress at once
    /// than the budget allows (the simulation is then over).
    fn run_until(&mut self, py: Python<'_>, t: f64) -> PyResult<()> {
        if !t.is_finite() || t < 0.0 {
            return Err(PyValueError::new_err(format!("run_until: time {t} must be finite and non-negative")));
        }
        let sim = self.sim()?;
        let horizon = Time((t * 1e9).round() as u64);
        let ran = py.allow_threads(|| guarded("the simulation", || sim.run_until(horizon)));
        if ran.is_err() {
            // A panic may have left the world half-way through an event: never run it again.
            self.inner = None;
            return ran;
        }
        if let Some(e) = self.sim()?.budget_exceeded() {
            let e = e.clone();
            self.inner = None;
            return Err(scenario_error(e));
        }
        match self.sim()?.output_error() {
            Some(e) => Err(PyOSError::new_err(one_line(&e))),
            None => Ok(()),
        }
    }

    #[getter]
    fn now(&mut self) -> PyResult<f64> {
        Ok(self.sim()?.now().as_secs_f64())
    }

    #[getter]
    fn end(&mut self) -> PyResult<f64> {
        Ok(self.sim()?.end().as_secs_f64())
    }

    #[getter]
    fn events_executed(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.events_executed())
    }

    /// The summary tables (links, flows, nodes) as they stand now, in `finish`'s form; the
    /// simulation goes on.
    fn snapshot(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let sim = self.sim()?;
        let tables = guarded("taking a snapshot", || sim.snapshot())?;
        let out = PyDict::new_bound(py);
        let named = PyDict::new_bound(py);
        for t in &tables {
            named.set_item(&t.name, table_to_py(py, t)?)?;
        }
        out.set_item("tables", named)?;
        out.set_item("pcaps", PyDict::new_bound(py))?;
        out.set_item("events_executed", sim.events_executed())?;
        out.set_item("end_time_s", sim.now().as_secs_f64())?;
        out.set_item("seed", sim.seed())?;
        Ok(out.into_py(py))
    }

    /// Collect the results at the current time; the simulation cannot be used afterwards. When
    /// streaming, a table with rows on disk comes back without columns (the spill folder's
    /// manifest.json describes it) and OSError reports a failed write.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let sim = self.inner.take().ok_or_else(|| PyRuntimeError::new_err("this simulation has already finished"))?;
        let result = py.allow_threads(|| guarded("collecting results", || sim.finish()))?;
        if let Some(e) = &result.output_error {
            return Err(PyOSError::new_err(one_line(e)));
        }
        result_to_py(py, &result)
    }
}

/// Write a results table to a Parquet file, as pandas' `to_parquet` would (`parquet.rs`):
/// `columns` is a list of (name, kind, data) with kind one of the engine's dtypes ("<u1",
/// "<u4", "<u8", "<f8": little-endian bytes), "str" (a list of str or None) or "category"
/// ((int8 codes as bytes, category names)). The GIL is released while the file is written.
#[pyfunction]
fn write_parquet(
    py: Python<'_>,
    path: PathBuf,
    columns: Vec<(String, String, Bound<'_, PyAny>)>,
    pandas_metadata: String,
    row_group_rows: usize,
) -> PyResult<()> {
    let data = column_data(columns)?;
    let written = py.allow_threads(|| {
        guarded("writing Parquet", || parquet::write(&path, data, pandas_metadata, row_group_rows))
    })?;
    written.map_err(|e| parquet_error(&path, e))
}

/// A table's Parquet file written one row group at a time (`write_group`, columns as
/// `write_parquet` takes them), for a table saved chunk by chunk; `close` completes the file.
#[pyclass(unsendable)]
struct ParquetWriter {
    path: PathBuf,
    pandas_metadata: String,
    file: Option<parquet::TableWriter>,
}

#[pymethods]
impl ParquetWriter {
    #[new]
    fn new(path: PathBuf, pandas_metadata: String) -> Self {
        ParquetWriter { path, pandas_metadata, file: None }
    }

    /// One row group of every row of `columns`; the first call creates the file, with the
    /// columns' types as the table's.
    fn write_group(&mut self, columns: Vec<(String, String, Bound<'_, PyAny>)>) -> PyResult<()> {
        let (fields, arrays, rows) =
            parquet::to_arrays(column_data(columns)?).map_err(|e| parquet_error(&self.path, e))?;
        let file = match self.file.as_mut() {
            Some(file) => file,
            None => {
                let created = parquet::TableWriter::create(&self.path, fields, self.pandas_metadata.clone());
                self.file.insert(created.map_err(|e| parquet_error(&self.path, e))?)
            }
        };
        file.write_group(&arrays, 0, rows).map_err(|e| parquet_error(&self.path, e))
    }

    /// Write the footer and close the file (nothing when no group was written).
    fn close(&mut self) -> PyResult<()> {
        match self.file.take() {
            Some(file) => file.close().map_err(|e| parquet_error(&self.path, e)),
            None => Ok(()),
        }
    }
}

/// Columns as Python hands them over: (name, kind, data).
fn column_data(columns: Vec<(String, String, Bound<'_, PyAny>)>) -> PyResult<Vec<(String, parquet::ColumnData)>> {
    let mut data = Vec::with_capacity(columns.len());
    for (name, kind, value) in columns {
        let column = match kind.as_str() {
            "<u1" => parquet::ColumnData::U8(bytes_of(&value)?),
            "<u4" => parquet::ColumnData::U32(bytes_of(&value)?),
            "<u8" => parquet::ColumnData::U64(bytes_of(&value)?),
            "<f8" => parquet::ColumnData::F64(bytes_of(&value)?),
            "str" => parquet::ColumnData::Text(value.extract()?),
            "category" => {
                let (codes, names): (Bound<'_, PyAny>, Vec<String>) = value.extract()?;
                parquet::ColumnData::Category { codes: bytes_of(&codes)?, names }
            }
            other => return Err(PyValueError::new_err(format!("column {name}: unknown kind {other:?}"))),
        };
        data.push((name, column));
    }
    Ok(data)
}

fn parquet_error(path: &std::path::Path, e: parquet::WriteError) -> PyErr {
    match e {
        parquet::WriteError::Data(m) => PyValueError::new_err(one_line(&m)),
        parquet::WriteError::Io(m) => PyOSError::new_err(format!("{}: {}", path.display(), one_line(&m))),
    }
}

/// The contents of a `bytes` object, copied at once (a `Vec<u8>` extraction would go byte by
/// byte through the sequence protocol).
fn bytes_of(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(value.downcast::<PyBytes>()?.as_bytes().to_vec())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("InternalError", m.py().get_type_bound::<InternalError>())?;
    m.add_function(wrap_pyfunction!(parse_unit, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    m.add_class::<ParquetWriter>()?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The engine's codes of the drops and tcp_events tables, in code order.
    m.add("DROP_REASONS", quench_core::names::drop_reasons())?;
    m.add("TCP_EVENTS", quench_core::names::TCP_EVENTS.to_vec())?;
    m.add("PACING_MODES", quench_core::names::PACING_MODES.to_vec())?;
    Ok(())
}
