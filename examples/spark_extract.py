"""Spark: add extract-trt's main content to a DataFrame of pages with ``mapInPandas``.

    pip install 'extract-trt[spark]'          # on the driver and every executor (pyspark needs Java 17+)
    spark-submit examples/spark_extract.py pages.parquet out.parquet --html-column html --url-column url
    spark-submit examples/spark_extract.py 'crawl/*.jsonl.gz' out.parquet --input-format json

Each executor's Python worker builds one :class:`~extract_trt.Extractor` on its first batch and keeps it
for every later batch and task (Spark reuses Python workers: ``spark.python.worker.reuse``, on by
default), so the model loads once per worker process, not once per row or partition. Arrow moves the
rows in batches (``spark.sql.execution.arrow.maxRecordsPerBatch``, 10,000 by default; a few hundred keeps
a batch of HTML small). Every input row gives one output row, its columns unchanged, plus ``text`` (and
``markdown``/``main_html`` when asked for) and ``extract_error`` (``None``, or why the page failed).

In Python: ``add_extraction(df, html_column="html")`` returns the DataFrame with the new columns.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from functools import partial

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

COLUMN_NAMES = {"html": "main_html", "markdown": "markdown", "text": "text"}  # extract_trt.integrations.COLUMN_NAMES


def extract_partitions(
    frames: Iterator[pd.DataFrame], *, html_column: str, url_column: str | None, output: Sequence[str], labeler: str
) -> Iterator[pd.DataFrame]:
    """The ``mapInPandas`` function: each Arrow batch of rows → the same rows with the extraction columns."""
    from extract_trt.integrations import extract_columns, process_extractor

    extractor = process_extractor(labeler, output=tuple(output))  # built once per Python worker process
    for frame in frames:
        urls = frame[url_column].tolist() if url_column else None
        yield frame.assign(**extract_columns(extractor, frame[html_column].tolist(), urls))


def add_extraction(
    df: DataFrame,
    html_column: str = "html",
    url_column: str | None = None,
    output: Sequence[str] = ("text",),
    labeler: str = "default",
) -> DataFrame:
    """``df`` with one column per output format and ``extract_error`` added (same rows)."""
    added = [COLUMN_NAMES[fmt] for fmt in output] + ["extract_error"]
    schema = StructType([*df.schema.fields, *(StructField(name, StringType(), True) for name in added)])
    fn = partial(extract_partitions, html_column=html_column, url_column=url_column, output=tuple(output), labeler=labeler)
    return df.mapInPandas(fn, schema)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="file or folder of pages")
    parser.add_argument("--input-format", choices=("parquet", "json"), default="parquet", help="json: JSON lines")
    parser.add_argument("output", help="Parquet folder to write")
    parser.add_argument("--html-column", default="html")
    parser.add_argument("--url-column", default=None)
    parser.add_argument("--format", action="append", choices=sorted(COLUMN_NAMES), help="repeatable; default text")
    parser.add_argument("--labeler", default="default")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("extract-trt").getOrCreate()
    pages = spark.read.format(args.input_format).load(args.input)
    result = add_extraction(pages, args.html_column, args.url_column, args.format or ["text"], args.labeler)
    result.write.mode("overwrite").parquet(args.output)


if __name__ == "__main__":
    main()
