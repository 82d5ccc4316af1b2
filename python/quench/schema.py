"""The schema of every results table: its columns and their dtypes, the same whether the table
has rows or not, and a Parquet writer that needs no pandas.

The engine hands every table over with its columns typed (crates/quench-core/src/trace/table.rs,
`Column`: u8, u32, u64, f64 or text), rows or none; `table_schema` derives each table's pandas
dtypes from those and from the labels quench.results adds (a readable `link_name` / `flow_name`
beside integer ids, and the engine's codes as categories), so there is one declaration, not a
second list kept by hand. Text columns are always pandas' default string dtype: built from an
empty list without one, pandas would make them float64 and the Parquet schema of a run without
rows would differ from that of a run with some.

`write_parquet` writes a table still in the engine's form with pyarrow alone, byte for byte the
file pandas' `DataFrame.to_parquet` writes for the same table (tests/test_schemas.py checks
both on every table), so saving a run's Parquet files does not import pandas.
"""

from __future__ import annotations

import array
import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quench import _core

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

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
LINK_TABLES = ("queue", "sojourn", "drops", "monitors", "link_snapshots")
FLOW_TABLES = ("sojourn", "drops", "cwnd", "pcp_rate", "pacing", "rtt", "segments", "tcp_events", "flow_snapshots")
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


# Parquet: the Arrow type of each engine dtype, and the entry pandas' metadata gives a column of
# each pandas dtype (pyarrow.pandas_compat writes "pandas_type" and "numpy_type"; a category
# column's are its codes' dtype, int8 for fewer than 128 categories, and its category count).
_NUMERIC = {"<u1": "uint8", "<u4": "uint32", "<u8": "uint64", "<f8": "float64"}
_PANDAS_TYPES = {"str": ("object", "str"), LABEL_DTYPE: ("object", "string")}
_MAX_INT8_CATEGORIES = 127
# The pandas whose conversion write_parquet follows: text as the "str" dtype (large_string in
# Arrow) is pandas 3's default; with an older pandas a table is saved through its DataFrame.
_PANDAS_MAJOR = 3


def can_write_parquet() -> bool:
    """Whether write_parquet gives pandas' own file with the installed pandas."""
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
    pandas metadata and row groups. `links` / `flows` give the names by id (read only when the
    table has rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(raw)
    arrays: list[pa.Array] = []
    meta: list[dict[str, Any]] = []
    for col, dtype in raw_schema(name, raw):
        if col in raw:
            arr = _arrow_column(pa, name, col, *raw[col], rows)
        else:  # a label: names by id
            ids, by_id = ("link", links) if col == "link_name" else ("flow", flows)
            arr = _names(pa, raw[ids], by_id, rows)
        arrays.append(arr)
        meta.append(_column_meta(col, dtype, (name, col)))
    table = pa.Table.from_arrays(arrays, names=[m["name"] for m in meta])
    table = table.replace_schema_metadata({b"pandas": _pandas_metadata(pa, meta).encode()})
    pq.write_table(table, path, compression="snappy", row_group_size=row_group_size)


def _rows(raw: RawTable) -> int:
    for dtype, data in raw.values():
        return len(data) if dtype == "str" else len(data) // int(dtype[2:])
    return 0


def _arrow_column(pa: Any, table: str, col: str, dtype: str, data: Any, rows: int) -> pa.Array:
    if dtype == "str":
        return _strings(pa, data)
    if dtype == "<f8":
        return _floats(pa, data, rows)
    cats = CATEGORIES.get((table, col))
    if cats is None:
        return pa.Array.from_buffers(getattr(pa, _NUMERIC[dtype])(), rows, [None, pa.py_buffer(data)])
    if dtype != "<u1" or len(cats) > _MAX_INT8_CATEGORIES:
        raise ValueError(f"{table}.{col}: {dtype} codes of {len(cats)} categories are not pandas' int8 codes")
    # The engine's u8 codes, all below 128, are the same bytes as int8 ones.
    codes = pa.Array.from_buffers(pa.int8(), rows, [None, pa.py_buffer(data)])
    return pa.DictionaryArray.from_arrays(codes, _strings(pa, cats))


# Arrays are built from buffers: pa.array() on a Python list or a numpy array imports pandas
# (to tell whether it was handed a pandas object).
def _strings(pa: Any, values: Sequence[str | None]) -> pa.Array:
    """A large_string array of `values` (None: null)."""
    encoded = [b"" if v is None else v.encode() for v in values]
    ends = array.array("q", [0])
    total = 0
    for e in encoded:
        total += len(e)
        ends.append(total)
    nulls = [v is None for v in values]
    validity = _bitmap(pa, nulls) if any(nulls) else None
    buffers = [validity, pa.py_buffer(ends.tobytes()), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.large_string(), len(values), buffers, null_count=sum(nulls))


def _floats(pa: Any, data: bytes, rows: int) -> pa.Array:
    """A float64 array of little-endian doubles, NaN as null (pandas' conversion to Arrow);
    numpy is loaded with pyarrow anyway."""
    import numpy as np

    nan = np.isnan(np.frombuffer(data, dtype="<f8"))
    validity = pa.py_buffer(np.packbits(~nan, bitorder="little").tobytes()) if nan.any() else None
    return pa.Array.from_buffers(pa.float64(), rows, [validity, pa.py_buffer(data)], null_count=int(nan.sum()))


def _bitmap(pa: Any, nulls: list[bool]) -> pa.Buffer:
    """Arrow's validity bitmap (bit i set: value i present, least significant bit first)."""
    bits = bytearray((len(nulls) + 7) // 8)
    for i, null in enumerate(nulls):
        if not null:
            bits[i // 8] |= 1 << (i % 8)
    return pa.py_buffer(bytes(bits))


def _names(pa: Any, ids: tuple[str, Any], by_id: Callable[[], dict[Any, str]], rows: int) -> pa.Array:
    """The names of ids (null where an id has none), as pandas' Series.map(...).astype("string")."""
    if rows == 0:
        return _strings(pa, [])
    names = by_id()
    return _strings(pa, [names.get(i) for i in column_values(*ids)])


def _column_meta(col: str, dtype: str, key: tuple[str, str]) -> dict[str, Any]:
    if dtype == CATEGORY_DTYPE:
        cats = CATEGORIES[key]
        return {
            "name": col,
            "field_name": col,
            "pandas_type": "categorical",
            "numpy_type": "int8",
            "metadata": {"num_categories": len(cats), "ordered": False},
        }
    pandas_type, numpy_type = _PANDAS_TYPES.get(dtype, (dtype, dtype))
    return {"name": col, "field_name": col, "pandas_type": pandas_type, "numpy_type": numpy_type, "metadata": None}


def _pandas_metadata(pa: Any, columns: list[dict[str, Any]]) -> str:
    """The `pandas` schema metadata pyarrow's Table.from_pandas writes for a DataFrame without
    an index (pyarrow/pandas_compat.py, construct_metadata), as its JSON text."""
    return json.dumps(
        {
            "index_columns": [],
            "column_indexes": [],
            "columns": columns,
            "attributes": {},
            "creator": {"library": "pyarrow", "version": pa.__version__},
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
