# Sphinx configuration of Sluice's documentation (`./dev test` builds it
# with -W: a warning fails the build). No extension that reaches the
# network (intersphinx): the build runs offline in seconds.
import pathlib
import re

project = 'Sluice'
author = 'the Sluice authors'
# The project version has one owner: meson.build.
_meson = (pathlib.Path(__file__).resolve().parent.parent / 'meson.build').read_text()
release = version = re.search(r"^\s*version:\s*'([^']+)'", _meson, re.M).group(1)

extensions = []
exclude_patterns = ['_build']
html_theme = 'alabaster'
html_static_path = []
highlight_language = 'none'
