"""Dripper-format decoders (Qwen3-style causal LMs exported with a KV cache) as a :class:`Labeler`, with a
constrained decoder that needs few forward passes.

Per page: blocks → prompt (:mod:`~extract_trt.runtime.labelers.prompts`, the model's profile) → token ids, and the
answer automaton built from the block ids (:mod:`~extract_trt.kernels.grammar`). Then, with the KV cache:

* ``naive`` — the reference: one token per forward pass, full-vocabulary logits masked to the tokens the
  grammar allows, argmax (what a vLLM logits processor does);
* ``jump`` — jump-forward: every forced token up to the next choice goes into one forward pass, and the
  choice compares only the two candidate logits (``choice_logits``, a graph output added at export that
  multiplies the final hidden state by just the two lm-head rows): one pass per block;
* ``speculative`` — labels drafted by a cheap labeler; one pass over the whole drafted answer checks every
  choice, accepts up to the first disagreement, fixes it, and continues from there (the rejected tail of
  the cache is masked out): ``1 + mistakes`` passes. The labels are exactly those of ``jump``/``naive``.

Pages are decoded in batches (sorted by prompt length, left-padded, explicit ``position_ids``); each row
feeds its own chunk per pass, left-padded to the longest, and masked cache columns (padding, rejected
drafts) stay masked. Long prompts are fed in chunks (``max_chunk`` tokens, less when the attention
matrix would exceed ``attention_budget`` bytes). The cache lives in ORT values bound with IO binding
(on the session's device; on CPU they are NumPy buffers without copies); only the two choice logits per
position come back to the host.

A page whose prompt plus longest possible answer exceeds the model context, or whose answer the
reference parser rejects (v1.0: no ``main`` at all), is labelled by the fallback labeler
(:func:`~extract_trt.runtime.labelers.default_labeler`) with ``Labels.fallback = True``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from extract_trt.errors import LabelerError
from extract_trt.kernels.grammar import AnswerAutomaton, build_automaton, choice_words, choose_main, masked_argmax
from extract_trt.runtime.labelers.prompts import AnswerParseError, ChatTemplate, decoder_profile, labels_from_answer, parse_answer
from extract_trt.runtime.types import Labels, PageBlocks

__all__ = ["DecodeStats", "DecoderLabeler", "DecoderSpec", "PageDecode"]

Mode = Literal["naive", "jump", "speculative"]
MODES = ("naive", "jump", "speculative")
CHOICE_OUTPUT = "choice_logits"


@dataclass(slots=True)
class DecoderSpec:
    """What the runtime needs to know about an exported decoder (the manifest's ``decoder`` section)."""

    profile: str  # dripper-v1 | mineru-v1.1 (runtime.prompts.DECODER_PROFILES)
    max_context: int  # prompt + answer tokens the model accepts
    eos_token_id: int | None
    pad_token_id: int = 0
    num_layers: int = 0
    num_attention_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    past_names: list[str] = field(default_factory=list)  # past_key_values.N.key/value, layer order
    present_names: list[str] = field(default_factory=list)  # present.N.key/value, same order
    choice_output: str | None = CHOICE_OUTPUT  # [batch, seq, 2] logits of the two choice tokens
    choice_token_ids: list[int] = field(default_factory=list)  # first tokens of "main", "other"
    chat_template: dict[str, str] | None = None  # ChatTemplate.to_dict(); None: Qwen3's
    grammar: str = ""  # answer format of the profile ("json" | "compact"), checked against it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecoderSpec:
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise LabelerError(f"unknown decoder manifest key(s) {sorted(unknown)}")
        return cls(**data)

    @classmethod
    def from_session(cls, session, *, profile: str, max_context: int, eos_token_id: int | None, pad_token_id: int = 0,
                     num_attention_heads: int = 0, chat_template: ChatTemplate | None = None) -> DecoderSpec:  # fmt: skip
        """Read layers, KV heads, head size and tensor names from a session's inputs/outputs."""
        inputs = {i.name: i for i in session.get_inputs()}
        outputs = [o.name for o in session.get_outputs()]
        past = sorted((n for n in inputs if n.startswith("past_key_values.")), key=_layer_order)
        if not past:
            raise LabelerError("the decoder graph has no past_key_values inputs (export with text-generation-with-past)")
        present = [n.replace("past_key_values.", "present.", 1) for n in past]
        missing = [n for n in present if n not in outputs]
        if missing:
            raise LabelerError(f"the decoder graph lacks outputs {missing}")
        shape = inputs[past[0]].shape  # [batch, kv_heads, past, head_dim]
        return cls(
            profile=profile,
            max_context=max_context,
            eos_token_id=eos_token_id,
            pad_token_id=pad_token_id,
            num_layers=len(past) // 2,
            num_attention_heads=num_attention_heads or int(shape[1]),
            num_kv_heads=int(shape[1]),
            head_dim=int(shape[3]),
            past_names=past,
            present_names=present,
            choice_output=CHOICE_OUTPUT if CHOICE_OUTPUT in outputs else None,
            chat_template=chat_template.to_dict() if chat_template else None,
        )


def _layer_order(name: str) -> tuple[int, int]:
    parts = name.split(".")
    return int(parts[1]), 0 if parts[2] == "key" else 1


@dataclass(slots=True)
class DecodeStats:
    """Work done for one page: forward passes it took part in, tokens it fed (padding excluded)."""

    passes: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    choices: int = 0
    seconds: float = 0.0  # wall time of the batch the page was in, divided by its pages


@dataclass(slots=True)
class PageDecode:
    """The decoder's result for one page."""

    labels: Labels
    answer: str = ""  # the decoded answer text ("" when the page did not fit the context)
    choices: np.ndarray | None = None  # the decoder's own main/other per block (also when rejected)
    stats: DecodeStats = field(default_factory=DecodeStats)
    fallback_reason: str | None = None


# ── KV cache and the session ───────────────────────────────────────────────────────


class _KVSession:
    """One batch's KV cache as ORT values bound with IO binding, plus its attention mask (NumPy)."""

    def __init__(self, session, spec: DecoderSpec, device: str) -> None:
        import onnxruntime as ort

        self._ort = ort
        self.session = session
        self.spec = spec
        self.device = device  # "cpu" | "cuda"
        past_type = next(i.type for i in session.get_inputs() if i.name == spec.past_names[0])
        self.kv_dtype = np.float16 if "float16" in past_type else np.float32
        self.past: list = []
        self._alive: list[np.ndarray] = []  # NumPy buffers behind CPU ORT values
        self.mask = np.zeros((0, 0), dtype=np.int64)

    def reset(self, batch: int) -> None:
        empty = np.zeros((batch, self.spec.num_kv_heads, 0, self.spec.head_dim), dtype=self.kv_dtype)
        self._alive = [empty]
        value = self._ortvalue(empty)
        self.past = [value] * len(self.spec.past_names)
        self.mask = np.zeros((batch, 0), dtype=np.int64)

    @property
    def length(self) -> int:
        return self.mask.shape[1]

    def step(self, ids: np.ndarray, new_mask: np.ndarray, positions: np.ndarray, output: str) -> np.ndarray:
        """Feed ``ids`` [batch, T]; return ``output`` ([batch, T, 2] choice logits or full logits)."""
        mask = np.concatenate([self.mask, new_mask], axis=1)
        binding = self.session.io_binding()
        binding.bind_cpu_input("input_ids", np.ascontiguousarray(ids, dtype=np.int64))
        binding.bind_cpu_input("attention_mask", mask)
        binding.bind_cpu_input("position_ids", np.ascontiguousarray(positions, dtype=np.int64))
        for name, value in zip(self.spec.past_names, self.past):
            binding.bind_ortvalue_input(name, value)
        binding.bind_output(output, "cpu")
        for name in self.spec.present_names:
            binding.bind_output(name, self.device)
        self.session.run_with_iobinding(binding)
        values = binding.get_outputs()
        self.past = values[1:]
        self._alive = []  # the new values own their buffers
        self.mask = mask
        return values[0].numpy()

    def mask_from(self, row: int, column: int) -> None:
        """Mask cache columns ``column…`` of ``row`` (a rejected draft)."""
        self.mask[row, column:] = 0

    def keep(self, rows: np.ndarray) -> None:
        """Keep only ``rows``, and drop cache columns that are masked in every kept row."""
        mask = self.mask[rows]
        used = np.flatnonzero(mask.any(axis=0))
        lo, hi = (int(used[0]), int(used[-1]) + 1) if used.size else (0, 0)
        if len(rows) == self.mask.shape[0] and lo == 0 and hi == self.length:
            return
        arrays = [np.ascontiguousarray(v.numpy()[rows, :, lo:hi]) for v in self.past]
        self._alive = arrays
        self.past = [self._ortvalue(a) for a in arrays]
        self.mask = np.ascontiguousarray(mask[:, lo:hi])

    def _ortvalue(self, array: np.ndarray):
        if self.device == "cpu":
            return self._ort.OrtValue.ortvalue_from_numpy(array)
        return self._ort.OrtValue.ortvalue_from_numpy(array, self.device, 0)


# ── per-page decoding state ──────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Job:
    """A page being decoded: its prompt + answer sequence under the current label assignment."""

    page: int
    prompt: np.ndarray
    automaton: AnswerAutomaton
    main: np.ndarray  # fixed labels for choices < decided, draft (or guess) for the rest
    seq: np.ndarray = field(init=False)  # prompt + answer tokens for `main`
    queries: np.ndarray = field(init=False)  # seq index whose logits pick choice k (= choice token - 1)
    p_main: np.ndarray = field(init=False)
    decided: int = 0
    fed: int = 0  # seq tokens in the cache (all valid)
    stats: DecodeStats = field(default_factory=DecodeStats)

    def __post_init__(self) -> None:
        self.p_main = np.full(self.automaton.n_choices, np.nan, dtype=np.float32)
        self.stats.prompt_tokens = len(self.prompt)
        self.stats.choices = self.automaton.n_choices
        self.relayout()

    def relayout(self) -> None:
        answer, starts = self.automaton.layout(self.main)
        self.seq = np.concatenate([self.prompt, answer])
        self.queries = starts + len(self.prompt) - 1

    def set_choice(self, k: int, is_main: bool) -> bool:
        """Fix choice k; True when that changed the sequence."""
        if bool(self.main[k]) == is_main:
            return False
        self.main[k] = is_main
        words = self.automaton.words
        if len(words[0]) == len(words[1]):
            self.seq[self.queries[k] + 1 : self.queries[k] + 1 + len(words[0])] = words[0 if is_main else 1]
        else:
            self.relayout()
        return True

    @property
    def done(self) -> bool:
        return self.decided >= self.automaton.n_choices


class DecoderLabeler:
    """Label blocks with an exported Dripper-format decoder (see the module docstring).

    Args:
        session: an ``onnxruntime.InferenceSession`` of a ``text-generation-with-past`` export.
        tokenizer_file: the model's ``tokenizer.json``.
        spec: :class:`DecoderSpec` (from the manifest, or :meth:`DecoderSpec.from_session`).
        mode: ``speculative`` (default), ``jump`` or ``naive``.
        draft_labeler: drafts labels for ``speculative`` (default: the default labeler).
        fallback_labeler: labels pages that do not fit the context or whose answer does not parse
            (default: the default labeler).
        lookahead: ``speculative`` checks at most this many drafted choices after the next one per pass
            (``None``: the whole rest of the answer — best where a pass costs about the same for any
            length, as on a GPU; on a CPU, cost grows with the tokens fed, so a window pays off when
            drafts are often wrong).
        batch_size: pages decoded together.
        max_chunk: tokens one row feeds per forward pass at most (long prompts take several passes).
        attention_budget: bytes the attention scores of one pass may take (shrinks the chunk).
    """

    def __init__(
        self,
        session,
        tokenizer_file: str | Path,
        spec: DecoderSpec,
        *,
        mode: Mode = "speculative",
        draft_labeler=None,
        fallback_labeler=None,
        lookahead: int | None = None,
        batch_size: int = 8,
        max_chunk: int = 1024,
        attention_budget: int = 1 << 30,
    ) -> None:
        from tokenizers import Tokenizer

        from extract_trt.runtime.html.simplify_v1 import simplify_profile

        if mode not in MODES:
            raise ValueError(f"unknown decoding mode {mode!r}; use one of {MODES}")
        self.session = session
        self.spec = spec
        self.profile = decoder_profile(spec.profile)
        if spec.grammar and spec.grammar != self.profile.answer.name:
            raise LabelerError(f"profile {spec.profile} answers in {self.profile.answer.name}, the manifest says {spec.grammar}")
        self.simplify_profile = simplify_profile(self.profile.simplifier)
        self.name = f"decoder:{spec.profile}"
        self.mode = mode
        self._draft_labeler = draft_labeler
        self._fallback_labeler = fallback_labeler
        self.lookahead = lookahead
        self.batch_size = max(1, batch_size)
        self.max_chunk = max(1, max_chunk)
        self.attention_budget = attention_budget
        self.template = ChatTemplate.from_dict(spec.chat_template) if spec.chat_template else None
        # Page text is tokenized with special-token strings as plain text: a page cannot close the
        # prompt or fake an answer. Template parts are tokenized normally.
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.text_tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.text_tokenizer.encode_special_tokens = True
        self.words = choice_words(self.text_tokenizer)
        choice_ids = [int(self.words[0][0]), int(self.words[1][0])]
        if spec.choice_token_ids and list(spec.choice_token_ids) != choice_ids:
            raise LabelerError(f"the graph's choice tokens {spec.choice_token_ids} are not the tokenizer's {choice_ids}")
        outputs = {o.name for o in session.get_outputs()}
        self.choice_output = spec.choice_output if spec.choice_output in outputs else None
        providers = session.get_providers()
        gpu = any(p in ("CUDAExecutionProvider", "TensorrtExecutionProvider") for p in providers)
        self.kv = _KVSession(session, spec, "cuda" if gpu else "cpu")
        self.last_decodes: list[PageDecode] = []

    @classmethod
    def from_model_dir(cls, model_dir: str | Path, *, variant: str | None = None, session_config=None, **kw) -> DecoderLabeler:
        """A labeler for a model directory written by ``extract-trt export onnx --task text-generation-with-past``."""
        from extract_trt.artifacts.manifest import ManifestError, load_manifest
        from extract_trt.runtime.labelers.session import create_session

        model_dir = Path(model_dir)
        manifest = load_manifest(model_dir)
        if manifest.task != "text-generation" or not manifest.decoder:
            raise ManifestError(f"{model_dir} holds a {manifest.task} model without a decoder section")
        name = variant or next(iter(manifest.variants))
        info = create_session(model_dir / manifest.variant(name).file, session_config)
        spec = DecoderSpec.from_dict(manifest.decoder)
        return cls(info.session, model_dir / manifest.tokenizer_file, spec, **kw)

    @property
    def draft_labeler(self):
        """Drafts labels for speculative decoding (the default labeler unless one was given)."""
        if self._draft_labeler is None:
            from extract_trt.runtime.labelers import default_labeler

            self._draft_labeler = default_labeler()
        return self._draft_labeler

    @property
    def fallback_labeler(self):
        """Labels pages the decoder cannot (the default labeler unless one was given)."""
        if self._fallback_labeler is None:
            from extract_trt.runtime.labelers import default_labeler

            self._fallback_labeler = default_labeler()
        return self._fallback_labeler

    # ── Labeler protocol ──────────────────────────────────────────────────────────

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        return [d.labels for d in self.decode(pages)]

    def decode(self, pages: Sequence[PageBlocks]) -> list[PageDecode]:
        """Decode ``pages``; :attr:`last_decodes` keeps the result (answers and per-page statistics)."""
        jobs: list[_Job | None] = []
        reasons: dict[int, str] = {}
        for i, page in enumerate(pages):
            job, reason = self._job(i, page)
            jobs.append(job)
            if reason:
                reasons[i] = reason
        ready = [j for j in jobs if j is not None]
        if self.mode == "speculative" and ready:
            drafts = self.draft_labeler.label([pages[j.page] for j in ready])
            for job, draft in zip(ready, drafts):
                if len(draft.main) == job.automaton.n_choices:
                    job.main = np.asarray(draft.main, dtype=bool).copy()
                    job.relayout()
        ready.sort(key=lambda j: len(j.prompt), reverse=True)
        for start in range(0, len(ready), self.batch_size):
            batch = ready[start : start + self.batch_size]
            t0 = time.perf_counter()
            if self.mode == "naive":
                for job in batch:
                    self._naive(job)
            else:
                self._batched(batch)
            per_page = (time.perf_counter() - t0) / len(batch)
            for job in batch:
                job.stats.seconds = per_page
        results = [self._finish(pages[i], job, reasons) if job else PageDecode(Labels(np.zeros(0, bool), self.name))
                   for i, job in enumerate(jobs)]  # fmt: skip
        fallback = [i for i in range(len(pages)) if i in reasons]
        if fallback:
            labels = self.fallback_labeler.label([pages[i] for i in fallback])
            for i, lab in zip(fallback, labels):
                lab.fallback = True
                results[i] = dataclasses.replace(results[i], labels=lab, fallback_reason=reasons[i])
        self.last_decodes = results
        return results

    # ── preparation ───────────────────────────────────────────────────────────────

    def _job(self, index: int, page: PageBlocks) -> tuple[_Job | None, str | None]:
        prefix, prompt, suffix = self.profile.prompt_text(page.simplified_html, self.template)
        ids = self.tokenizer.encode(prefix, add_special_tokens=False).ids if prefix else []
        ids += self.text_tokenizer.encode(prompt, add_special_tokens=False).ids
        ids += self.tokenizer.encode(suffix, add_special_tokens=False).ids if suffix else []
        ids = np.asarray(ids, dtype=np.int64)
        item_ids = [b.item_id for b in page.blocks]
        automaton = build_automaton(self.text_tokenizer, self.profile.answer.pieces(item_ids), self.spec.eos_token_id, self.words)
        needed = len(ids) + automaton.max_length()
        if needed > self.spec.max_context:
            return None, f"prompt {len(ids)} + answer {automaton.max_length()} tokens > context {self.spec.max_context}"
        return _Job(index, ids, automaton, np.zeros(automaton.n_choices, dtype=bool)), None

    def _finish(self, page: PageBlocks, job: _Job, reasons: dict[int, str]) -> PageDecode:
        answer_ids, _ = job.automaton.layout(job.main)
        job.stats.answer_tokens = len(answer_ids)
        answer = self.text_tokenizer.decode(answer_ids.tolist(), skip_special_tokens=False)
        try:
            parsed = parse_answer(answer, require_main=self.profile.require_main)
        except AnswerParseError as exc:
            reasons[job.page] = f"answer rejected: {exc}"
            return PageDecode(Labels(job.main, self.name), answer, job.main, job.stats)
        main = labels_from_answer(parsed, [b.item_id for b in page.blocks])
        return PageDecode(Labels(main, self.name, probability=job.p_main), answer, job.main, job.stats)

    # ── naive reference: one token per pass, full-vocabulary masked argmax ───────────────

    def _naive(self, job: _Job) -> None:
        auto = job.automaton
        kv = self.kv
        kv.reset(1)
        # The prompt (all but its last token) goes in as a prefill whose outputs are not read.
        head = len(job.prompt) - 1
        while job.fed < head:
            end = min(head, job.fed + self._chunk_size(1, kv.length))
            self._feed(job, job.prompt[job.fed : end], self.choice_output or "logits")
        state = auto.start()
        token = int(job.prompt[-1])
        k = 0
        while not auto.is_done(state):
            logits = self._feed(job, np.array([token], dtype=np.int64), "logits")[0, -1]
            allowed = auto.allowed(state)
            token = masked_argmax(logits, allowed)
            if auto.is_choice(state):
                job.main[k] = token == auto.choice_ids[0]
                job.p_main[k] = _sigmoid(float(logits[auto.choice_ids[0]]) - float(logits[auto.choice_ids[1]]))
                k += 1
            state = auto.advance(state, token)
        job.decided = k

    def _feed(self, job: _Job, tokens: np.ndarray, output: str) -> np.ndarray:
        n = len(tokens)
        positions = np.arange(job.fed, job.fed + n, dtype=np.int64)[None, :]
        out = self.kv.step(tokens[None, :], np.ones((1, n), dtype=np.int64), positions, output)
        job.fed += n
        job.stats.passes += 1
        job.stats.tokens += n
        return out

    # ── jump-forward and speculative, batched ─────────────────────────────────────────

    def _batched(self, jobs: list[_Job]) -> None:
        active = [j for j in jobs if not j.done]
        if not active:
            return
        kv = self.kv
        kv.reset(len(active))
        speculative = self.mode == "speculative"
        pad = self.spec.pad_token_id
        output = self.choice_output or "logits"
        while active:
            chunk = self._chunk_size(len(active), kv.length)
            plans = []
            for job in active:
                last = job.decided
                if speculative:
                    last = job.automaton.n_choices - 1
                    if self.lookahead is not None:
                        last = min(last, job.decided + self.lookahead)
                end = min(int(job.queries[last]) + 1, job.fed + chunk)
                plans.append((job.fed, end))
            width = max(end - start for start, end in plans)
            ids = np.full((len(active), width), pad, dtype=np.int64)
            new_mask = np.zeros((len(active), width), dtype=np.int64)
            positions = np.zeros((len(active), width), dtype=np.int64)
            for r, (job, (start, end)) in enumerate(zip(active, plans)):
                n = end - start
                ids[r, width - n :] = job.seq[start:end]
                new_mask[r, width - n :] = 1
                positions[r, width - n :] = np.arange(start, end)
            base = kv.length
            logits = kv.step(ids, new_mask, positions, output)
            for r, (job, (start, end)) in enumerate(zip(active, plans)):
                job.stats.passes += 1
                job.stats.tokens += end - start
                offset = base + width - (end - start) - start  # cache column of seq index i = offset + i
                self._read_choices(job, logits[r], offset - base, start, end, r, offset)
            keep = np.array([r for r, job in enumerate(active) if not job.done], dtype=np.int64)
            if len(keep) < len(active):
                active = [active[r] for r in keep]
                if active:
                    kv.keep(keep)

    def _read_choices(self, job: _Job, logits: np.ndarray, row_offset: int, start: int, end: int, row: int, column_offset: int) -> None:
        """Decide every choice whose query position was fed in this pass; on the first disagreement with
        the draft, fix it, mask the rest of the pass out of the cache, and resume from the choice token."""
        ids = job.automaton.choice_ids
        k = job.decided
        n = job.automaton.n_choices
        while k < n and job.queries[k] < end:
            q = int(job.queries[k])
            pair = logits[q + row_offset]
            if self.choice_output is None:
                pair = pair[ids]
            is_main = bool(choose_main(pair, ids))
            job.p_main[k] = _sigmoid(float(pair[0]) - float(pair[1]))
            job.decided = k = k + 1
            if job.set_choice(k - 1, is_main) and q + 1 < end:
                self.kv.mask_from(row, column_offset + q + 1)
                job.fed = q + 1
                return
        job.fed = end

    def _chunk_size(self, rows: int, cached: int) -> int:
        heads = max(1, self.spec.num_attention_heads)
        for size in (self.max_chunk, 512, 256, 128, 64):
            if size <= self.max_chunk and 4 * rows * heads * size * (cached + size) <= self.attention_budget:
                return size
        return 64


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))
