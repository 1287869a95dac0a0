#!/usr/bin/env python3
"""Writes a C++ header holding a text file as a raw string literal:
embed_text.py IN OUT NAME (used to compile bench/plot_bench.py into sluice)."""
import sys

src, out, name = sys.argv[1:4]
with open(src) as f:
    text = f.read()
if ")EMBED" in text:
    sys.exit("embed_text.py: %s contains the raw string's delimiter )EMBED" % src)
with open(out, "w") as f:
    f.write("// Generated from %s by embed_text.py.\n#pragma once\n" % src.split("/")[-1])
    f.write("inline constexpr char %s[] = R\"EMBED(%s)EMBED\";\n" % (name, text))
