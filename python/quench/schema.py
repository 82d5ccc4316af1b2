"""The schema of every results table: its columns and their dtypes, the same whether the table
has rows or not, and a Parquet writer that needs no pandas.

The engine hands every table over with its columns typed (crates/quench-core/src/trace/table.rs,
`Column`: u8, u32, u64, f64 or text), rows or none; `table_schema` derives each table's pandas
dtypes from those and from the labels quench.results adds (a readable `link_name` / `flow_name`
beside integer ids, and the engine's codes as categories), so there is one declaration, not a
second list kept by hand. Text columns are always pandas' default string dtype: built from an
empty list without one, pandas would make them float64 and the Parquet schema of a run without
rows would differ from that of a run with some.

`write_parquet` writes a table still in the engine's form through the engine's Parquet writer,
the file pandas' `DataFrame.to_parquet` writes for the same table up to its bytes: read back,
the same schema, row groups and values (tests/test_schemas.py checks every table). Saving a
run's Parquet files so imports neither pandas nor pyarrow nor numpy.
"""

from __future__ import annotations

import array
import functools
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quench import _core

if TYPE_CHECKING:
    import pandas as pd

# A table as the engine hands it over: column name -> (dtype, data), data being little-endian
# bytes of the numpy dtype, or a list of strings for dtype "str" (crates/quench-py, column_to_py).
RawTable = dict[str, tuple[str, Any]]

# The pandas dtype of each of the engine's column types. "str" is pandas' default string dtype
# (pyarrow-backed since pandas 3).
ENGINE_DTYPES = {"<u1": "uint8", "<u4": "uint32", "<u8": "uint64", "<f8": "float64", "str": "str"}
# The dtype of the readable names added beside ids (nullable: an id without a name is <NA>).
LABEL_DTYPE = "string"
CATEGORY_DTYPE = "category"

# Tables whose `link` / `flow` ids get a readable `link_name` / `flow_name` column.
LINK_TABLES = ("queue", "sojourn", "drops", "monitors", "flow_links", "link_snapshots", "telemetry")
FLOW_TABLES = (
    "sojourn",
    "drops",
    "cwnd",
    "pcp_rate",
    "pacing",
    "rtt",
    "segments",
    "tcp_events",
    "flow_links",
    "flow_snapshots",
    "delay",
    "subflows",
    "telemetry",
)
# Columns holding codes of the engine's enumerations (qdisc::DropReason, trace::TcpEvent,
# cc::bbr::MODE_NAMES), shown as categories of those names, in code order, from the engine.
CATEGORIES: dict[tuple[str, str], list[str]] = {
    ("drops", "reason"): list(_core.DROP_REASONS),
    ("tcp_events", "event"): list(_core.TCP_EVENTS),
    ("pacing", "mode"): list(_core.PACING_MODES),
}


def table_schema(name: str, engine_columns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Table `name`'s columns and pandas dtypes (as `DataFrame.dtypes` names them), from the
    engine's columns and dtypes (`RawTable` order)."""
    cols = [
        (col, CATEGORY_DTYPE if (name, col) in CATEGORIES else ENGINE_DTYPES[dtype]) for col, dtype in engine_columns
    ]
    names = {col for col, _ in cols}
    if name in LINK_TABLES and "link" in names:
        cols.append(("link_name", LABEL_DTYPE))
    if name in FLOW_TABLES and "flow" in names:
        cols.append(("flow_name", LABEL_DTYPE))
    return cols


def raw_schema(name: str, raw: RawTable) -> list[tuple[str, str]]:
    """The schema of a table in the engine's form."""
    return table_schema(name, [(col, dtype) for col, (dtype, _) in raw.items()])


# The array module's code of each of the engine's numeric dtypes.
_ARRAY_CODES = {"<u1": "B", "<u4": "I", "<u8": "Q", "<f8": "d"}


def column_values(dtype: str, data: Any) -> list:
    """A column in the engine's form as a list of Python values, without numpy."""
    if dtype == "str":
        return list(data)
    values = array.array(_ARRAY_CODES[dtype], data)
    if sys.byteorder == "big" and values.itemsize > 1:
        values.byteswap()
    return values.tolist()


def frame(columns: dict[str, Any]) -> pd.DataFrame:
    """A DataFrame of the engine's column values (arrays, or lists of strings), text columns
    with pandas' default string dtype whatever their length."""
    import pandas as pd

    return pd.DataFrame({c: pd.Series(v, dtype="str") if isinstance(v, list) else v for c, v in columns.items()})


def engine_form(columns: dict[str, Any]) -> RawTable:
    """Columns read back from a spill (numpy arrays of the engine's dtypes, or lists of
    strings) in the form the engine hands tables over (`RawTable`)."""
    raw: RawTable = {}
    for c, v in columns.items():
        if isinstance(v, list):
            raw[c] = ("str", v)
        else:
            dtype = f"<{v.dtype.kind}{v.dtype.itemsize}"
            raw[c] = (dtype, v.astype(dtype, copy=False).tobytes())
    return raw


# Parquet: the entry pandas' metadata gives a column of each pandas dtype
# (pyarrow.pandas_compat writes "pandas_type" and "numpy_type"; a category column's are its
# codes' dtype, int8 for fewer than 128 categories, and its category count).
_PANDAS_TYPES = {"str": ("object", "str"), LABEL_DTYPE: ("object", "string")}
_MAX_INT8_CATEGORIES = 127
# The engine's column kind of each numeric pandas dtype (the inverse of ENGINE_DTYPES).
_ENGINE_KINDS = {v: k for k, v in ENGINE_DTYPES.items() if k != "str"}
# The pandas whose conversion write_parquet follows: text as the "str" dtype (large_string in
# Arrow) is pandas 3's default; with an older pandas a table is saved through its DataFrame.
_PANDAS_MAJOR = 3


def can_write_parquet() -> bool:
    """Whether write_parquet gives pandas' own file (up to its bytes) with the installed pandas."""
    try:
        return int(_pandas_version().split(".")[0]) >= _PANDAS_MAJOR
    except (ValueError, ImportError):
        return False


def write_parquet(
    path: Path,
    name: str,
    raw: RawTable,
    links: Callable[[], dict[Any, str]],
    flows: Callable[[], dict[Any, str]],
    row_group_size: int,
) -> None:
    """Write table `name`, in the engine's form, to `path` as pandas would write its labelled
    DataFrame (`to_parquet(index=False, row_group_size=...)`, snappy): the same Arrow types,
    pandas metadata and row groups, by the engine's writer (quench-py's parquet.rs) without
    pyarrow or numpy. `links` / `flows` give the names by id (read only when the table has
    rows)."""
    columns, meta = _parquet_columns(name, raw, links, flows)
    _core.write_parquet(str(path), columns, meta, row_group_size)


def write_parquet_chunks(
    path: Path,
    name: str,
    chunks: Iterable[RawTable],
    links: Callable[[], dict[Any, str]],
    flows: Callable[[], dict[Any, str]],
) -> None:
    """`write_parquet` of a table given chunk by chunk (at least one), one row group each."""
    writer = None
    try:
        for raw in chunks:
            columns, meta = _parquet_columns(name, raw, links, flows)
            writer = writer or _core.ParquetWriter(str(path), meta)
            writer.write_group(columns)
    finally:
        if writer is not None:
            writer.close()


def write_frame_parquet(path: Path, df: pd.DataFrame, row_group_size: int) -> bool:
    """Write a DataFrame of results (a table made a DataFrame before it was saved) by the
    engine's writer, the same file as `write_parquet` of its engine form, when every column has
    a dtype that writer takes (those of `table_schema`, unordered categories of text without
    missing values); False, writing nothing, for any other DataFrame."""
    columns: list[tuple[str, str, Any]] = []
    meta: list[dict[str, Any]] = []
    for col in df.columns:
        column = _frame_column(df[col]) if isinstance(col, str) else None
        if column is None:
            return False
        columns.append((col, *column))
        categories = len(column[1][1]) if column[0] == "category" else 0
        meta.append(_column_meta(col, str(df[col].dtype), categories))
    _core.write_parquet(str(path), columns, _pandas_metadata(meta), row_group_size)
    return True


def _frame_column(s: pd.Series) -> tuple[str, Any] | None:
    """A DataFrame column as the engine's writer takes it (kind, data), or None if it cannot."""
    dtype = str(s.dtype)
    if dtype in _ENGINE_KINDS:
        kind = _ENGINE_KINDS[dtype]
        return kind, s.to_numpy().astype(kind, copy=False).tobytes()
    if dtype in ("str", LABEL_DTYPE):
        return "str", [None if missing else v for v, missing in zip(s.tolist(), s.isna().tolist())]
    if dtype == CATEGORY_DTYPE and not s.cat.ordered and len(s.cat.categories) <= _MAX_INT8_CATEGORIES:
        codes = s.cat.codes.to_numpy()
        names = s.cat.categories.tolist()
        if (codes < 0).any() or not all(isinstance(n, str) for n in names):
            return None
        return "category", (codes.astype("<i1").tobytes(), names)
    return None


def _parquet_columns(
    name: str, raw: RawTable, links: Callable[[], dict[Any, str]], flows: Callable[[], dict[Any, str]]
) -> tuple[list[tuple[str, str, Any]], str]:
    """The columns of table `name` as the engine's writer takes them, with its pandas metadata."""
    rows = _rows(raw)
    columns: list[tuple[str, str, Any]] = []
    meta: list[dict[str, Any]] = []
    for col, dtype in raw_schema(name, raw):
        if col in raw:
            kind, data = raw[col]
            if dtype == CATEGORY_DTYPE:
                _check_int8_codes(name, col, kind)
                kind, data = "category", (data, CATEGORIES[(name, col)])
        else:  # a label: names by id
            ids, by_id = ("link", links) if col == "link_name" else ("flow", flows)
            kind, data = "str", _names(raw[ids], by_id, rows)
        columns.append((col, kind, data))
        meta.append(_column_meta(col, dtype, len(CATEGORIES.get((name, col), ()))))
    return columns, _pandas_metadata(meta)


def _rows(raw: RawTable) -> int:
    for dtype, data in raw.values():
        return len(data) if dtype == "str" else len(data) // int(dtype[2:])
    return 0


def _check_int8_codes(table: str, col: str, dtype: str) -> None:
    """Check that a category column's codes are pandas' int8 codes: the engine's u8 codes, all
    below 128, are the same bytes."""
    cats = CATEGORIES[(table, col)]
    if dtype != "<u1" or len(cats) > _MAX_INT8_CATEGORIES:
        raise ValueError(f"{table}.{col}: {dtype} codes of {len(cats)} categories are not pandas' int8 codes")


def _names(ids: tuple[str, Any], by_id: Callable[[], dict[Any, str]], rows: int) -> list[str | None]:
    """The names of ids (None where an id has none), as pandas' Series.map(...).astype("string")."""
    if rows == 0:
        return []
    names = by_id()
    return [names.get(i) for i in column_values(*ids)]


def _column_meta(col: str, dtype: str, categories: int) -> dict[str, Any]:
    """pandas' metadata entry of a column of `dtype` (with `categories` if a category)."""
    if dtype == CATEGORY_DTYPE:
        return {
            "name": col,
            "field_name": col,
            "pandas_type": "categorical",
            "numpy_type": "int8",
            "metadata": {"num_categories": categories, "ordered": False},
        }
    pandas_type, numpy_type = _PANDAS_TYPES.get(dtype, (dtype, dtype))
    return {"name": col, "field_name": col, "pandas_type": pandas_type, "numpy_type": numpy_type, "metadata": None}


def _pandas_metadata(columns: list[dict[str, Any]]) -> str:
    """The `pandas` schema metadata pyarrow's Table.from_pandas writes for a DataFrame without
    an index (pyarrow/pandas_compat.py, construct_metadata), as its JSON text; the creator is
    quench's writer."""
    return json.dumps(
        {
            "index_columns": [],
            "column_indexes": [],
            "columns": columns,
            "attributes": {},
            "creator": {"library": "quench", "version": _core.__version__},
            "pandas_version": _pandas_version(),
        }
    )


@functools.cache
def _pandas_version() -> str:
    """The installed pandas' version, read without importing pandas: from the name of its
    distribution's folder beside the package (pandas-X.Y.Z.dist-info, the wheel layout, PEP 427),
    else from importlib.metadata (which costs more start-up than the rest of a small save)."""
    from importlib.util import find_spec

    spec = find_spec("pandas")
    if spec is not None and spec.submodule_search_locations:
        site = Path(next(iter(spec.submodule_search_locations))).parent
        found = [p.name[len("pandas-") : -len(".dist-info")] for p in site.glob("pandas-*.dist-info")]
        if len(found) == 1:
            return found[0]
    from importlib.metadata import version

    return version("pandas")
