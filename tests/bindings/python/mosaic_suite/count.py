"""Reads run.sh's JUnit reports and prints, per group of Mosaic's tests,
how many Mosaic passes here and how many of those Sluice passes, then the
most common causes of Sluice's failures (by first line of the error).

    count.py OUT_DIR    (OUT_DIR/mosaic/*.xml and OUT_DIR/sluice/*.xml)

Groups: what a drop-in must do (dataset and writer behaviour, public
helpers, downloads), and Mosaic's internals a successor need not have
(issue 23: get_partitions, Array, shared memory, codec and hash classes;
also get_shuffle_*, get_sampling and Spanner, the same kind of inner
algorithm), which are shown but not counted."""
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

DATASET_WRITER = {'test_streaming', 'test_stream', 'test_writer', 'test_reader', 'test_laziness',
                  'test_eviction', 'test_mixing', 'test_local', 'test_unsafe_types',
                  'test_streaming_remote', 'test_dataframe_to_mds'}
HELPERS = {'test_util', 'test_encodings', 'test_upload', 'test_registry', 'test_distributed'}
DOWNLOAD = {'test_download'}
# Tests of a dataset inside files that otherwise test codec/hash classes.
DATASET_IN_INTERNAL_FILES = {('test_compression', 'test_dataset_compression'),
                             ('test_hashing', 'test_validate_checksum')}


def group_of(module, name):
    base = name.split('[')[0]
    if module in DATASET_WRITER or (module, base) in DATASET_IN_INTERNAL_FILES:
        return 'dataset/writer'
    if module in HELPERS:
        return 'helpers'
    if module in DOWNLOAD:
        return 'download'
    return 'internals (not counted)'


def _cause(element):
    """The first line of a failure's error; for a collection error (whose
    message says only that), the last `E` line of its traceback."""
    message = element.get('message') or ''
    if message in ('', 'collection failure'):
        errors = [l[1:].strip() for l in (element.text or '').splitlines() if l.startswith('E ')]
        message = errors[-1] if errors else message
    return _normalize(message)


def _normalize(message):
    line = (message or '').strip().split('\n')[0]
    line = re.sub(r'/tmp/[^\s\'",)]*', '<tmp>', line)
    line = re.sub(r'0x[0-9a-f]+', '0x..', line)
    return line[:140]


def read(report_dir):
    """{(module, test id): (outcome, cause)}; a file that failed to import
    gives its error to every test id found in the other run's reports."""
    results, broken_files = {}, {}
    if not os.path.isdir(report_dir):
        return results, broken_files
    for xml_name in sorted(os.listdir(report_dir)):
        if not xml_name.endswith('.xml'):
            continue
        module = xml_name.split('.')[0]
        root = ET.parse(os.path.join(report_dir, xml_name)).getroot()
        for case in root.iter('testcase'):
            classname, name = case.get('classname', ''), case.get('name', '')
            bad = [c for c in case if c.tag in ('failure', 'error')]
            skipped = [c for c in case if c.tag == 'skipped']
            if not classname:  # collection error of a whole file
                broken_files[module] = _cause(bad[0]) if bad else 'collection'
                continue
            test_id = classname.split('.')[-1] + '::' + name if '.Test' in classname else name
            # Some parameters are fresh temporary folders: same test, other name.
            test_id = re.sub(r'/tmp/tmp[\w]+', '/tmp/<tmp>', test_id)
            if bad:
                outcome, cause = 'failed', _cause(bad[0])
            elif skipped:
                outcome, cause = 'skipped', _normalize(skipped[0].get('message'))
            else:
                outcome, cause = 'passed', ''
            # A teardown error after a pass makes a second entry: worst wins.
            if results.get((module, test_id), ('passed',))[0] != 'failed':
                results[(module, test_id)] = (outcome, cause)
        if not any(k[0] == module for k in results) and module not in broken_files:
            broken_files[module] = 'no test ran (timeout of the whole file?)'
    return results, broken_files


def main(out_dir):
    mosaic, _ = read(os.path.join(out_dir, 'mosaic'))
    sluice, sluice_broken = read(os.path.join(out_dir, 'sluice'))
    have_sluice = os.path.isdir(os.path.join(out_dir, 'sluice'))
    table = collections.OrderedDict()
    causes = collections.Counter()
    causes_by_group = collections.defaultdict(collections.Counter)
    failed_rows = []
    for key, (outcome, _) in sorted(mosaic.items()):
        group = group_of(*key)
        row = table.setdefault(group, [0, 0, 0])
        row[0] += 1
        if outcome != 'passed':
            continue
        row[1] += 1
        if not have_sluice:
            continue
        got, cause = sluice.get(key, ('failed', sluice_broken.get(key[0], 'not run')))
        if got == 'passed':
            row[2] += 1
        else:
            cause = cause if got == 'failed' else f'skipped: {cause}'
            failed_rows.append((group, key[0], key[1], cause))
            if not group.startswith('internals'):
                causes[cause] += 1
                causes_by_group[group][cause] += 1
    print(f'{"group":<26} {"tests":>6} {"Mosaic passes":>14} {"Sluice passes (of those)":>26}')
    for group, (total, base, ours) in table.items():
        rate = f'{ours} ({100.0 * ours / base:.0f}%)' if base and have_sluice else '-'
        print(f'{group:<26} {total:>6} {base:>14} {rate:>26}')
    if have_sluice:
        print('\nmost common causes of Sluice failures (counted groups):')
        for cause, n in causes.most_common(40):
            print(f'{n:>5}  {cause}')
        with open(os.path.join(out_dir, 'sluice_failures.tsv'), 'w') as f:
            for row in failed_rows:
                f.write('\t'.join(row) + '\n')
        print(f'\nevery failure: {os.path.join(out_dir, "sluice_failures.tsv")}')


if __name__ == '__main__':
    main(sys.argv[1])
