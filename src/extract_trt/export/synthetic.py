"""Checkpoints with random weights for tests and benchmarks (there is no model hub here).

:func:`train_tokenizer` trains a byte-level BPE (Llama-3 style, like EuroBERT's) on block strings of real
pages and adds ``<|sep|>`` as a special token after the vocabulary, as Pulpie does.
:func:`write_checkpoint` writes a Hugging Face checkpoint directory — ``config.json``, safetensors
weights, ``tokenizer.json`` + ``tokenizer_config.json``, and for EuroBERT the remote code with an
``auto_map`` — that loads with ``from_pretrained`` exactly like a downloaded one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ARCHITECTURES", "EncoderShape", "train_tokenizer", "write_checkpoint"]

ARCHITECTURES = ("eurobert", "bert", "modernbert")
BOS, EOS, MASK, SEP = "<|begin_of_text|>", "<|end_of_text|>", "<|mask|>", "<|sep|>"
_CODE_DIR = Path(__file__).with_name("eurobert_code")


@dataclass(frozen=True, slots=True)
class EncoderShape:
    """Size of a synthetic encoder. ``vocab_size=None``: the tokenizer's size."""

    hidden: int = 32
    layers: int = 2
    heads: int = 2
    kv_heads: int | None = None
    intermediate: int = 64
    max_positions: int = 8192
    vocab_size: int | None = None
    # None: hidden**-0.5, large enough that attention mixes context into every <|sep|> state, so a
    # random model gives varied labels (with 0.02 every <|sep|> would get the same label).
    initializer_range: float | None = None


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1024):
    """A byte-level BPE tokenizer: BOS/EOS/mask at ids 0-2, ``<|sep|>`` added last (id = vocab)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BOS, EOS, MASK],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.add_special_tokens([SEP])
    return tokenizer


def write_checkpoint(
    out_dir: str | Path,
    architecture: str,
    tokenizer,
    shape: EncoderShape = EncoderShape(),
    *,
    seed: int = 0,
    calibration_texts: Sequence[str] = (),
) -> Path:
    """Write a randomly initialised token classifier (labels other/main) as a checkpoint directory.

    With ``calibration_texts`` (block strings), the head is set so that labels at ``<|sep|>`` split
    about evenly on such text: random hidden states share a large common component, so an untouched
    random head labels nearly every block the same, and tests comparing labels would prove little.
    """
    import torch

    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture {architecture!r} is not one of {ARCHITECTURES}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ids = {name: tokenizer.token_to_id(name) for name in (BOS, EOS, MASK, SEP)}
    vocab = shape.vocab_size or tokenizer.get_vocab_size()
    common = dict(
        vocab_size=vocab,
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=shape.intermediate,
        max_position_embeddings=shape.max_positions,
        initializer_range=shape.initializer_range or shape.hidden**-0.5,
        pad_token_id=ids[EOS],
        bos_token_id=ids[BOS],
        eos_token_id=ids[EOS],
        num_labels=2,
        id2label={0: "other", 1: "main"},
        label2id={"other": 0, "main": 1},
    )
    torch.manual_seed(seed)
    if architecture == "eurobert":
        from extract_trt.export.eurobert_code.configuration_eurobert import EuroBertConfig
        from extract_trt.export.eurobert_code.modeling_eurobert import EuroBertForTokenClassification

        config = EuroBertConfig(num_key_value_heads=shape.kv_heads, mask_token_id=ids[MASK], **common)
        model = EuroBertForTokenClassification(config)
    elif architecture == "bert":
        from transformers import BertConfig, BertForTokenClassification

        model = BertForTokenClassification(BertConfig(**common))
    else:
        from transformers import ModernBertConfig, ModernBertForTokenClassification

        config = ModernBertConfig(
            cls_token_id=ids[BOS], sep_token_id=ids[EOS], global_attn_every_n_layers=2, local_attention=64, **common
        )
        model = ModernBertForTokenClassification(config)
    if calibration_texts:
        _calibrate_head(model, tokenizer, calibration_texts, min(shape.max_positions, 512))
    model.save_pretrained(out, safe_serialization=True)
    if architecture == "eurobert":
        _add_remote_code(out)
    tokenizer.save(str(out / "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BOS,
        "eos_token": EOS,
        "pad_token": EOS,
        "mask_token": MASK,
        "additional_special_tokens": [SEP],
        "model_max_length": shape.max_positions,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
    return out


def _calibrate_head(model, tokenizer, texts: Sequence[str], max_len: int, n_chunks: int = 8) -> None:
    """Classifier = a random direction through the mean <|sep|> state, scaled to logit gaps of ~±2."""
    import torch

    sep = tokenizer.token_to_id(SEP)
    rows: list[list[int]] = [[]]
    for text in texts:  # up to n_chunks rows of ≤ max_len tokens: block prefixes, each + <|sep|>
        block = tokenizer.encode(text, add_special_tokens=False).ids[:64] + [sep]
        if len(rows[-1]) + len(block) > max_len:
            if len(rows) == n_chunks:
                break
            rows.append([])
        rows[-1] += block
    width = max(len(r) for r in rows)
    pad = tokenizer.token_to_id(EOS)
    x = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    seen: list[torch.Tensor] = []
    hook = model.classifier.register_forward_hook(lambda _m, args, _o: seen.append(args[0]))
    model.eval()
    with torch.no_grad():
        model(input_ids=x, attention_mask=mask)
    hook.remove()
    states = seen[0][(x == sep) & (mask == 1)]
    mean = states.mean(0)
    direction = torch.randn(states.shape[1])
    spread = ((states - mean) @ direction).std().clamp_min(1e-6)
    gap = 2 * direction / spread  # logit(main) - logit(other) ~ N(0, 2²) over the sample's blocks
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.weight[1] = gap
        model.classifier.bias.copy_(torch.stack([torch.tensor(0.0), -gap @ mean]))


def _add_remote_code(out: Path) -> None:
    """Ship the EuroBERT code with the checkpoint and point ``auto_map`` at it (trust_remote_code)."""
    for name in ("configuration_eurobert.py", "modeling_eurobert.py"):
        shutil.copy(_CODE_DIR / name, out / name)
    config_path = out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["auto_map"] = {
        "AutoConfig": "configuration_eurobert.EuroBertConfig",
        "AutoModel": "modeling_eurobert.EuroBertModel",
        "AutoModelForTokenClassification": "modeling_eurobert.EuroBertForTokenClassification",
    }
    config.pop("architectures", None)
    config["architectures"] = ["EuroBertForTokenClassification"]
    config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
