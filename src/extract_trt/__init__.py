"""extract-trt: main-content extraction from raw HTML.

Pipeline: decode → simplify (numbered blocks, MinerU-HTML v1.1 / Pulpie scheme) → label (a
:class:`~extract_trt.runtime.labelers.Labeler`) → reconstruct (main HTML) → convert (Markdown / text).
"""

from extract_trt.api import extract
from extract_trt.errors import ExtractError
from extract_trt.runtime.extractor import Extractor, Result
from extract_trt.runtime.html.metadata import PageMetadata
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.block_tokens import block_strings
from extract_trt.runtime.types import Block, Labels, PageBlocks

__version__ = "0.1.0"
__all__ = [
    "Block",
    "ExtractError",
    "Extractor",
    "Labels",
    "PageBlocks",
    "PageMetadata",
    "Result",
    "block_strings",
    "extract",
    "simplify",
]
