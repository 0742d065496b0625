"""examples/spark_extract.py on a local PySpark session (mapInPandas, one Extractor per Python worker)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="needs the spark extra (pip install 'extract-trt[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("PySpark needs Java (java not on PATH, JAVA_HOME unset)", allow_module_level=True)

from extract_trt import Extractor  # noqa: E402
from io_fixtures import real_pages  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "spark_extract.py"


def _example():
    spec = importlib.util.spec_from_file_location("spark_extract", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers run this interpreter (and see PYTHONPATH)
    session = (SparkSession.builder.master("local[1]").appName("extract-trt-test")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "2").getOrCreate())  # fmt: skip
    yield session
    session.stop()


def test_map_in_pandas_adds_the_extraction_to_every_row(spark):
    pages = real_pages(3)
    rows = [(f"https://example.org/{i}", p["html"]) for i, p in enumerate(pages)] + [("https://example.org/empty", "")]
    df = spark.createDataFrame(rows, "url string, html string")  # local[1]: one partition, no shuffle
    example = _example()
    out = example.add_extraction(df, url_column="url", output=("text", "markdown")).toPandas()

    assert list(out.columns) == ["url", "html", "text", "markdown", "extract_error"]
    assert sorted(out["url"]) == sorted(url for url, _ in rows)
    reference = Extractor(output=("text", "markdown"))
    for _, row in out.iterrows():
        want = reference.extract(row["html"], url=row["url"])
        error = None if pd.isna(row["extract_error"]) else row["extract_error"]  # toPandas: null -> NaN
        assert (row["text"], row["markdown"], error) == (want.text, want.markdown, want.error)
    assert out.set_index("url").loc["https://example.org/empty", "extract_error"].startswith("InputFormatError")

