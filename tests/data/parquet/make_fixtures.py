#!/usr/bin/env python3
"""Writes the Parquet fixtures of this folder with real writers, and their expected values.

    python3 make_fixtures.py [--venvs DIR] [--out DIR] [--python PYTHON]

Creates two virtual environments under DIR (--venvs, or $SLUICE_PARQUET_FIXTURE_VENVS, or a new
temporary folder): `main` from requirements.txt (pyarrow, DuckDB, Polars, pyspark, Pillow) and
`pyarrow12` from requirements-pyarrow12.txt (an older pyarrow, for its different defaults). A venv
whose stamp matches its requirements file is reused. The venvs use --python (default: the running
interpreter), which must be CPython 3.10 or 3.11: pyarrow 12.0.1 has no wheels for later ones.
Spark needs a Java 17+ `java` on PATH.
Each stage runs in its venv as `make_fixtures.py --stage NAME`; the gen/ modules do the work.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENVS = [("main", "requirements.txt"), ("pyarrow12", "requirements-pyarrow12.txt")]
GENERATED_DIRS = ("spark_out", "spark_legacy_zstd", "spark_v2_pages", "spark_lz4_hadoop")


def _venv_python(root, name):
    return os.path.join(root, name, "bin", "python")


def _ensure_venv(root, name, requirements, base_python):
    """Returns the venv's python, or None (after printing pip's own error) if it cannot be installed."""
    with open(os.path.join(HERE, requirements), encoding="utf-8") as f:
        wanted = f.read()
    stamp = os.path.join(root, name, "requirements.stamp")
    python = _venv_python(root, name)
    if os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == wanted:
        return python
    shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    subprocess.run([base_python, "-m", "venv", os.path.join(root, name)], check=True)
    pip = subprocess.run([python, "-m", "pip", "install", "--quiet", "-r", os.path.join(HERE, requirements)],
                         capture_output=True, text=True)
    if pip.returncode != 0:
        print("cannot install %s into venv %s:\n%s%s" % (requirements, name, pip.stdout, pip.stderr), file=sys.stderr)
        return None
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(wanted)
    return python


def _clean(out):
    for entry in os.listdir(out):
        path = os.path.join(out, entry)
        if entry.endswith(".parquet") or entry.endswith(".expected.json"):
            os.remove(path)
        elif entry in GENERATED_DIRS:
            shutil.rmtree(path)


def _run_stage(python, stage, out, manifest):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", TZ="UTC",
               SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=python)
    started = time.monotonic()
    subprocess.run([python, os.path.abspath(__file__), "--stage", stage, "--out", out, "--manifest", manifest],
                   check=True, env=env)
    print("stage %-10s %6.1f s" % (stage, time.monotonic() - started), flush=True)


def _stage(stage, out, manifest_path):
    from gen import bad_files, duckdb_files, expected, polars_files, pyarrow_files, spark_files
    manifest = {}
    if stage == "pyarrow":
        pyarrow_files.write_all(out, manifest)
    elif stage == "writers":
        pyarrow_files.write_all(out, manifest)
        pyarrow_files.write_hf_text(out, manifest)
        pyarrow_files.write_hf_image(out, manifest)
        pyarrow_files.write_snappy_random_pages(out, manifest)
        duckdb_files.write_all(out, manifest)
        polars_files.write_all(out, manifest)
    elif stage == "spark":
        spark_files.write_all(out, manifest)
    elif stage == "bad":
        bad_files.write_all(out, manifest)
    elif stage == "expected":
        with open(manifest_path, encoding="utf-8") as f:
            expected.write_all(out, json.load(f))
        return
    with open(manifest_path, "w", encoding="utf-8") as f:
        json.dump(manifest, f)


def _report(out, seconds):
    total, files, missing = 0, 0, []
    readme = open(os.path.join(out, "README.md"), encoding="utf-8").read() if os.path.exists(
        os.path.join(out, "README.md")) else ""
    for root, _, names in os.walk(out):
        for n in names:
            if n.endswith(".parquet") or n.endswith(".expected.json") or root != out:
                total += os.path.getsize(os.path.join(root, n))
                files += 1
                stem = os.path.relpath(os.path.join(root, n), out).split("/")[0].split(".")[0]
                if n.endswith(".parquet") and stem not in readme:
                    missing.append(stem)
    print("%d generated files, %d bytes, in %.0f s" % (files, total, seconds))
    if missing:
        print("README.md does not mention: %s" % ", ".join(sorted(set(missing))), file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venvs", default=os.environ.get("SLUICE_PARQUET_FIXTURE_VENVS"),
                        help="folder for the virtual environments (default: a new temporary folder)")
    parser.add_argument("--out", default=HERE, help="where the fixtures go (default: beside this script)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the venvs (CPython 3.10 or 3.11)")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    if args.stage:
        sys.path.insert(0, HERE)
        return _stage(args.stage, out, args.manifest)

    started = time.monotonic()
    venvs = os.path.abspath(args.venvs) if args.venvs else tempfile.mkdtemp(prefix="parquet-fixture-venvs-")
    os.makedirs(venvs, exist_ok=True)
    pythons = {name: _ensure_venv(venvs, name, req, args.python) for name, req in VENVS}
    print("venvs ready in %s (%.0f s)" % (venvs, time.monotonic() - started), flush=True)
    if not pythons["main"]:
        return 1
    os.makedirs(out, exist_ok=True)
    _clean(out)
    work = tempfile.mkdtemp(prefix="parquet-fixture-manifests-")
    try:
        manifests = []
        stages = [("pyarrow12", "pyarrow"), ("main", "writers"), ("main", "spark")]
        for venv, stage in stages:
            if not pythons[venv]:
                print("skipping stage %s: venv %s could not be installed" % (stage, venv), file=sys.stderr)
                continue
            manifests.append(os.path.join(work, "%s-%s.json" % (venv, stage)))
            _run_stage(pythons[venv], stage, out, manifests[-1])
        _run_stage(pythons["main"], "bad", out, os.path.join(work, "bad.json"))
        merged = {}
        for m in manifests:
            with open(m, encoding="utf-8") as f:
                merged.update(json.load(f))
        with open(os.path.join(work, "all.json"), "w", encoding="utf-8") as f:
            json.dump(merged, f)
        _run_stage(pythons["main"], "expected", out, os.path.join(work, "all.json"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _report(out, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
