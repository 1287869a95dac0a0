import on_bench_path  # noqa: F401

import perf_thread_split

# `perf script -F comm,pid,tid,ip,sym,dso` with call chains: a header line
# per sample, its frames leaf first, a blank line after each.
SCRIPT = '''\
python 100/100 
\t    7f01 _PyEval_EvalFrameDefault (/usr/bin/python3.11)
\t    7f02 [unknown] (/usr/bin/python3.11)

python 100/100 
\t    7f03 __memmove_avx512_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)

python 200/201 
\tffffffff82239937 clear_page_erms ([kernel.kallsyms])
\tffffffff81608326 folio_zero_user ([kernel.kallsyms])
\t          2b85ad sluice::parquet::DictionaryFixedValues::Next (/w/libsluice.so.4)

python 200/201 
\t          2b85ad sluice::parquet::DictionaryFixedValues::Next+0x1d (/w/libsluice.so.4)

python 200/201 
\t          2b85ae sluice::parquet::DictionaryFixedValues::Next (/w/libsluice.so.4)

python 200/200 
\t    7f04 [unknown] (/usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.so)
'''


def test_samples_split_by_process_thread_and_leaf(tmp_path, capsys):
    # A leaf's offset (+0x1d) is dropped, so one function's samples count
    # together; a leaf is shown to 70 characters.
    path = tmp_path / 'pass.txt'
    path.write_text(SCRIPT)
    perf_thread_split.main(str(path))
    assert capsys.readouterr().out == '''\
6 samples
process 200: 4 (66.7%)
  thread 201: 3
    parquet decode 67%, kernel page zeroing 33%
    top: sluice::parquet::DictionaryFixedValues::Next (/w/libsluice.so.4) 2; clear_page_erms ([kernel.kallsyms]) 1
  thread 200 (main thread): 1
    numpy 100%
    top: [unknown] (/usr/lib/python3/dist-packages/numpy/core/_multiarray_umath 1
process 100: 2 (33.3%)
  thread 100 (main thread): 2
    python 50%, memcpy 50%
    top: _PyEval_EvalFrameDefault (/usr/bin/python3.11) 1; __memmove_avx512_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6) 1
'''
