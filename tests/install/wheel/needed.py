"""Every shared library an ELF file of the repaired wheel needs is either in
the manylinux policy (auditwheel's own table) or bundled in the wheel's
sluice.libs, where the file's RPATH leads; and the bundled ones are
exactly the libraries the engine links beyond the policy. Run with the
wheel tools' venv (bindings/python/wheel-tools.txt: auditwheel, pyelftools).
usage: needed.py WHEEL POLICY (e.g. manylinux_2_35)"""
import io
import json
import os
import re
import sys
import zipfile

import auditwheel
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

wheel, policy_name = sys.argv[1], sys.argv[2]
with open(os.path.join(os.path.dirname(auditwheel.__file__), 'policy', 'manylinux-policy.json')) as f:
    policy = next(p for p in json.load(f) if p['name'] == policy_name)
# ...and glibc's dynamic loader itself, which every glibc system has (the
# engine needs it for thread-local storage).
allowed = set(policy['lib_whitelist']) | {'ld-linux-x86-64.so.2'}

with zipfile.ZipFile(wheel) as z:
    elves = {n: z.read(n) for n in z.namelist() if z.read(n)[:4] == b'\x7fELF'}
bundled = {n.split('/', 1)[1] for n in elves if n.startswith('sluice.libs/')}
# The engine, the CLI (auditwheel moves it to sluice.scripts/ and leaves a
# launcher in the scripts) and the bundled libraries, nothing else native.
others = sorted(n for n in elves if not n.startswith('sluice.libs/'))
assert others == ['sluice.scripts/sluice', 'sluice/libsluice.so'], others
# auditwheel names a bundled copy NAME-<hash>.so.VERSION.
stems = sorted(re.sub(r'-[0-9a-f]{8}\.so.*$', '', b) for b in bundled)
assert stems == ['libbrotlicommon', 'libbrotlidec', 'libbrotlienc', 'libbz2', 'libcrypto', 'liblz4',
                 'libsimdjson', 'libsnappy', 'libssl', 'liburing', 'libxxhash', 'libzstd'], stems

problems = []
for name, data in sorted(elves.items()):
    dynamic = next(s for s in ELFFile(io.BytesIO(data)).iter_sections() if isinstance(s, DynamicSection))
    needed = [t.needed for t in dynamic.iter_tags() if t.entry.d_tag == 'DT_NEEDED']
    # auditwheel writes DT_RPATH (patchelf --force-rpath).
    rpath = [t.rpath for t in dynamic.iter_tags() if t.entry.d_tag == 'DT_RPATH']
    for lib in needed:
        if lib in allowed:
            continue
        if lib not in bundled:
            problems.append(f'{name} needs {lib}: neither in {policy_name} nor in sluice.libs')
            continue
        # The loader must find the bundled copy from where the file lies.
        want = os.path.relpath('sluice.libs', os.path.dirname(name) or '.')
        if not name.startswith('sluice.libs/') and rpath != ['$ORIGIN/' + want]:
            problems.append(f'{name}: RPATH {rpath}, not $ORIGIN/{want}')
assert not problems, '\n'.join(problems)
print(f'needed.py: {len(elves)} ELF files; each library they need is in {policy_name} '
      f'or among the {len(bundled)} in sluice.libs')
