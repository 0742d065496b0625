"""A minimal EuroBERT-architecture remote-code module (transformers 4.57 has no EuroBERT).

The two files here are what a EuroBERT checkpoint directory ships for ``trust_remote_code=True``:
:func:`extract_trt.export.synthetic.write_checkpoint` copies them next to ``config.json`` with an
``auto_map``, so tests and benchmarks load EuroBERT-shaped models exactly like real Pulpie checkpoints
(which bring their own copy of this code). Parameter names follow EuroBERT's (``model.layers.N.self_attn
.q_proj`` …), so the export path sees the same module tree and the same non-persistent rotary buffer.
"""
