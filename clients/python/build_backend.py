"""The build backend of logbook-client (PEP 517), standard library only.

`pip install --no-build-isolation <repo>/clients/python` must work in a
fresh `python3 -m venv` that reaches no package index. Such a venv holds
pip and, up to Python 3.11, an old setuptools without the wheel package,
which cannot build a wheel (`invalid command 'bdist_wheel'`); from Python
3.12 it holds no setuptools at all. So the package builds itself: this
module reads [project] from pyproject.toml (tomllib) and writes a pure
Python wheel of the logbook_client package (py3-none-any) or an sdist,
byte for byte the same on every build. It builds no editable install."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
# Every archive member gets this time, so a build is reproducible.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_KNOWN = {"name", "version", "description", "readme", "license", "requires-python", "dependencies", "classifiers"}


def _project() -> dict:
    with open(os.path.join(_HERE, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    unknown = sorted(set(project) - _KNOWN)
    if unknown:
        raise ValueError(f"build_backend.py: pyproject.toml [project] has {unknown}, which this backend does not write; it knows {sorted(_KNOWN)}")
    if project.get("dependencies"):
        raise ValueError("build_backend.py: logbook-client is standard library only; pyproject.toml [project] dependencies must stay empty")
    if not isinstance(project.get("license"), str):
        raise ValueError('build_backend.py: pyproject.toml [project] license must be an SPDX expression such as "Apache-2.0"')
    return project


def _stem(project: dict) -> str:
    """The distribution's name and version as wheel and sdist file names spell them."""
    return f"{project['name'].replace('-', '_')}-{project['version']}"


def _metadata(project: dict) -> bytes:
    """The core metadata (METADATA in a wheel, PKG-INFO in an sdist)."""
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License-Expression: {project['license']}",
        *(f"Classifier: {c}" for c in project.get("classifiers", [])),
        f"Requires-Python: {project['requires-python']}",
        "Description-Content-Type: text/markdown",
    ]
    with open(os.path.join(_HERE, project["readme"]), encoding="utf-8") as f:
        readme = f.read()
    return ("\n".join(lines) + "\n\n" + readme).encode("utf-8")


def _package_files(package: str) -> list[str]:
    """The package's files, relative to this directory, sorted (no bytecode)."""
    out = []
    for root, dirs, files in os.walk(os.path.join(_HERE, package)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.relpath(os.path.join(root, f), _HERE) for f in files if not f.endswith((".pyc", ".pyo"))]
    return sorted(p.replace(os.sep, "/") for p in out)


def _read(rel: str) -> bytes:
    with open(os.path.join(_HERE, rel), "rb") as f:
        return f.read()


def build_wheel(wheel_directory: str, config_settings: dict | None = None, metadata_directory: str | None = None) -> str:
    """PEP 517: write the wheel into wheel_directory and return its file name."""
    project = _project()
    stem = _stem(project)
    dist_info = f"{stem}.dist-info"
    members = [(p, _read(p)) for p in _package_files(project["name"].replace("-", "_"))]
    members.append((f"{dist_info}/METADATA", _metadata(project)))
    members.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: logbook-client build_backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = []
    for path, data in members:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    members.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in members:
            info = zipfile.ZipInfo(path, _EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    """PEP 517: write the sdist (the sources this backend builds a wheel from) into sdist_directory and return its file name."""
    project = _project()
    stem = _stem(project)
    files = ["build_backend.py", "pyproject.toml", project["readme"], *_package_files(project["name"].replace("-", "_"))]
    members = [(f, _read(f)) for f in files] + [("PKG-INFO", _metadata(project))]
    name = f"{stem}.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for path, data in sorted(members):
            info = tarfile.TarInfo(f"{stem}/{path}")
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800  # 1980-01-01, as in the wheel
            t.addfile(info, io.BytesIO(data))
    with open(os.path.join(sdist_directory, name), "wb") as f:
        f.write(gzip.compress(buf.getvalue(), mtime=0))  # the gzip header's time is fixed too
    return name
