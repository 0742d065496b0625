"""Small numeric pieces with NumPy reference versions: block packing, <|sep|> gathers, graph surgery."""
