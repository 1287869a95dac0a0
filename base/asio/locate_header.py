"""Prints the path at which a C++ compiler finds `#include <NAME>`.

Usage: locate_header.py NAME COMPILER [ARGS...]

The build patches one system header (see meson.build here) and must read the
copy the compiler would include, wherever Boost is installed.
"""

import os
import subprocess
import sys


def main() -> int:
    name, compiler = sys.argv[1], sys.argv[2:]
    listed = subprocess.run(compiler + ['-x', 'c++', '-E', '-M', '-'],
                            input=f'#include <{name}>\n', capture_output=True,
                            text=True, check=True).stdout
    for path in listed.replace('\\\n', ' ').split():
        if path.endswith('/' + name):
            print(os.path.realpath(path))
            return 0
    print(f'{name}: not among the headers {" ".join(compiler)} includes', file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
