"""Everything on the hot path: decoding, simplification, labelers, reconstruction, conversion, I/O."""
