"""The built-in block model in PyTorch: hashed bags + layout numbers -> a small Transformer over blocks.

One forward pass labels one window of a page (all its blocks at once, no batch axis): every block's three
feature bags (words, character trigrams, markup — see :mod:`extract_trt.runtime.labelers.features`; the markup
bag's three kinds are summed once per distinct string of the page, then gathered and added per block)
are pooled from one shared hashed embedding table (sum / sqrt(count), the scales given by the features),
joined with a projection of the dense layout numbers, mixed with the neighbours by a 1-D convolution (local
order: the attention layers have no position encoding of their own) and by ``layers`` pre-norm Transformer
encoder layers (the whole page), and read out as one main/other logit per block.

The exported graph is :meth:`BlockModel.from_sums`: at run time the bag sums come from the features
(:meth:`BlockFeatures.bag_sums`, the same sums as :meth:`BlockModel.bag_sums`), and the graph is plain
Gather, Slice, ReduceSum, MatMul, Conv, Softmax and LayerNormalization — fast on ORT CPU and accepted by
TensorRT's ONNX parser.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from extract_trt.runtime.labelers.features import BUCKETS, MARKUP_KINDS, N_DENSE, N_FIELDS, TEXT_FIELDS

__all__ = ["BlockModel", "BlockModelEnsemble", "ModelConfig"]


@dataclass(frozen=True)
class ModelConfig:
    buckets: int = BUCKETS  # a power of two: an id's row is its low bits
    n_dense: int = N_DENSE
    embed_dim: int = 32
    width: int = 64
    layers: int = 3
    heads: int = 2
    conv_kernel: int = 5
    dropout: float = 0.1

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


class _EncoderLayer(nn.Module):
    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = width // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.attn_out = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.ff = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).reshape(-1, 3, self.heads, self.head_dim).permute(1, 2, 0, 3).unbind(0)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale  # [heads, n, n]
        mixed = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(0, 1).reshape(-1, self.heads * self.head_dim)
        x = x + self.drop(self.attn_out(mixed))
        return x + self.drop(self.ff(self.norm2(x)))


class BlockModel(nn.Module):
    """``forward(ids [T], bags [T], dense [n, N_DENSE], markup [n, MARKUP_KINDS], norms [n, TEXT_FIELDS + 1])
    -> logits [n]`` (p(main) = sigmoid; ``norms``: :meth:`BlockFeatures.norms`)."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__()
        cfg = config or ModelConfig()
        self.config = cfg
        self.table = nn.Embedding(cfg.buckets, cfg.embed_dim)
        self.bag_proj = nn.Linear(N_FIELDS * cfg.embed_dim, cfg.width)
        self.dense_proj = nn.Linear(cfg.n_dense, cfg.width)
        self.conv = nn.Conv1d(cfg.width, cfg.width, cfg.conv_kernel, padding=cfg.conv_kernel // 2)
        self.layers = nn.ModuleList(_EncoderLayer(cfg.width, cfg.heads, cfg.dropout) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.width)
        self.head = nn.Linear(cfg.width, 1)
        self.drop = nn.Dropout(cfg.dropout)
        nn.init.normal_(self.table.weight, std=0.1)

    def forward(
        self, ids: torch.Tensor, bags: torch.Tensor, dense: torch.Tensor, markup: torch.Tensor, norms: torch.Tensor
    ) -> torch.Tensor:
        return self.from_sums(self.bag_sums(ids, bags, dense.shape[0]), dense, markup, norms)

    def bag_sums(self, ids: torch.Tensor, bags: torch.Tensor, n: int) -> torch.Tensor:
        """The embedding sum of every bag, ``[(TEXT_FIELDS + MARKUP_KINDS) * n, embed_dim]``: the text bags,
        then each kind's distinct markup strings (:meth:`BlockFeatures.bag_sums` at run time)."""
        rows = (TEXT_FIELDS + MARKUP_KINDS) * n
        return torch.zeros(rows, self.config.embed_dim, dtype=self.table.weight.dtype).index_put(
            (bags,), self.table(ids & (self.config.buckets - 1)), accumulate=True
        )

    def from_sums(
        self, sums: torch.Tensor, dense: torch.Tensor, markup: torch.Tensor, norms: torch.Tensor
    ) -> torch.Tensor:
        """Logits from the bag sums: the exported graph (the lookup itself runs in the features' C loop)."""
        n = dense.shape[0]
        dim = self.config.embed_dim
        text_rows = TEXT_FIELDS * n
        text = sums[:text_rows].reshape(n, TEXT_FIELDS, dim) * norms[:, :TEXT_FIELDS].unsqueeze(2)
        markup_pooled = sums[markup + text_rows].sum(1) * norms[:, TEXT_FIELDS:]  # its kinds' strings together
        x = torch.cat([text.reshape(n, TEXT_FIELDS * dim), markup_pooled], dim=1)
        x = nn.functional.gelu(self.bag_proj(self.drop(x)) + self.dense_proj(dense))
        x = x + nn.functional.gelu(self.conv(x.t().unsqueeze(0))).squeeze(0).t()
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)).squeeze(1)

    def embedding_table(self) -> torch.Tensor:
        """The table the run-time bag sums are taken from, ``[buckets, embed_dim]``."""
        return self.table.weight


class BlockModelEnsemble(nn.Module):
    """Models of one recipe trained with different seeds, as one model: the mean of their logits.

    A single model's seed decides a good part of its score (four seeds of the shipped recipe spread 0.009 word
    F1 on the tune pages); the mean of several is steadier and gains on the news pages. The members' tables
    sit side by side in one wider table, so the run-time sums every bag once (:meth:`BlockFeatures.bag_sums`)
    and the graph hands each member its columns.
    """

    def __init__(self, members: list[BlockModel]) -> None:
        super().__init__()
        if not members or len({m.config for m in members}) != 1:
            raise ValueError("an ensemble needs one or more members of one ModelConfig")
        self.members = nn.ModuleList(members)
        self.config = members[0].config

    def forward(
        self, ids: torch.Tensor, bags: torch.Tensor, dense: torch.Tensor, markup: torch.Tensor, norms: torch.Tensor
    ) -> torch.Tensor:
        return torch.stack([m(ids, bags, dense, markup, norms) for m in self.members]).mean(0)

    def from_sums(
        self, sums: torch.Tensor, dense: torch.Tensor, markup: torch.Tensor, norms: torch.Tensor
    ) -> torch.Tensor:
        """Logits from the sums over :meth:`embedding_table` (member ``k``'s columns ``k * embed_dim`` on)."""
        dim = self.config.embed_dim
        return torch.stack(
            [m.from_sums(sums[:, k * dim : (k + 1) * dim], dense, markup, norms) for k, m in enumerate(self.members)]
        ).mean(0)

    def embedding_table(self) -> torch.Tensor:
        """The members' tables side by side, ``[buckets, members * embed_dim]``."""
        return torch.cat([m.embedding_table() for m in self.members], dim=1)
