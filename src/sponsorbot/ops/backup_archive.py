"""The backup file: one tar archive holding `manifest.json` and `database.dump` (pg_dump -Fc).

The manifest comes first in the archive, so a restore reads it (and refuses a backup it cannot
take) before touching the dump. The file is written under a temporary name and renamed into
place, so an interrupted backup never leaves a half-written file under the name asked for.
A restore copies out no more than the manifest's dump_bytes, of a plain member of that size:
a small crafted archive cannot fill a disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, TypeGuard

FORMAT = "sponsorbot-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
# A manifest is a few hundred bytes: anything much larger is not ours.
_MANIFEST_MAX = 64 * 1024
_CHUNK = 1024 * 1024
# Room left over beside the dump when unpacking it, for whatever else writes on that disk.
_SPARE = 64 * 1024 * 1024
# What `sponsorbot backup` writes the dump as (sparse and other kinds never).
_PLAIN = (tarfile.REGTYPE, tarfile.AREGTYPE)


class BackupError(Exception):
    """A backup or restore that cannot go on; the message is one line saying why or what to do."""


@dataclass(frozen=True)
class Manifest:
    """What a backup says about itself."""

    product_version: str
    migration: int  # the highest migration applied to the database dumped
    created_at: str  # UTC, ISO 8601
    server_version: str  # of the PostgreSQL server dumped
    database: str
    pg_dump_version: str  # of the pg_dump that wrote the dump: pg_restore must be as new
    dump_sha256: str
    dump_bytes: int

    def to_json(self) -> str:
        """The manifest as written into the archive."""
        fields = {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}
        return json.dumps(fields, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: bytes, name: str) -> Manifest:
        """Read a manifest back; anything else is a BackupError naming the file `name`."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise BackupError(
                f"{name} is not a Sponsorbot backup (its manifest is not JSON)"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BackupError(f"{name} is not a Sponsorbot backup (its manifest is someone else's)")
        version = data.get("format_version")
        if not _is_int(version):
            raise BackupError(f"{name} is damaged (its manifest has no format version)")
        if version > FORMAT_VERSION:
            raise BackupError(
                f"{name} was written by a newer version of Sponsorbot "
                f"({data.get('product_version')}) in a newer format: update Sponsorbot first"
            )
        values: dict[str, Any] = {}
        for key, kind in cls.__annotations__.items():
            value = data.get(key)
            if not (_is_int(value) if kind == "int" else isinstance(value, str)):
                raise BackupError(f"{name} is damaged (its manifest lacks {key!r})")
            values[key] = value
        return cls(**values)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _add(tar: tarfile.TarFile, name: str, size: int, source: IO[bytes]) -> None:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o600
    info.mtime = int(time.time())
    tar.addfile(info, source)


def write_archive(path: Path, manifest: Manifest, dump: Path) -> None:
    """Write the archive at `path` (mode 0600), atomically: a temporary file renamed over it."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # 0600 from the first byte: the dump holds every visitor's data and the sealed tokens.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
                text = manifest.to_json().encode()
                _add(tar, MANIFEST, len(text), io.BytesIO(text))
                with dump.open("rb") as source:
                    _add(tar, DUMP, manifest.dump_bytes, source)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    # The rename itself must survive a crash too.
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _open_tar(path: Path) -> tarfile.TarFile:
    if not path.exists():
        raise BackupError(f"{path} does not exist")
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    try:
        return tarfile.open(path, mode="r:")
    except (tarfile.TarError, EOFError):
        raise BackupError(
            f"{path} is not a Sponsorbot backup (not an archive written by sponsorbot backup)"
        ) from None
    except OSError as exc:
        raise BackupError(f"cannot read {path}: {exc.strerror or exc}") from None


def _member(tar: tarfile.TarFile, path: Path, name: str) -> tuple[tarfile.TarInfo, IO[bytes]]:
    try:
        info = tar.getmember(name)
    except KeyError:
        raise BackupError(f"{path} is not a Sponsorbot backup (it holds no {name})") from None
    source = tar.extractfile(info) if info.isfile() else None
    if source is None:
        raise BackupError(f"{path} is not a Sponsorbot backup ({name} is not a file)")
    return info, source


def _dump_member(tar: tarfile.TarFile, path: Path, manifest: Manifest) -> IO[bytes]:
    """The dump's member, if it is plain, of the manifest's size and wholly in the file."""
    info, source = _member(tar, path, DUMP)
    if info.type not in _PLAIN or info.issparse():
        raise BackupError(
            f"{path} is not a Sponsorbot backup ({DUMP} is a sparse or special member, which "
            "sponsorbot backup never writes)"
        )
    if info.size != manifest.dump_bytes:
        raise BackupError(
            f"{path} is damaged ({DUMP} holds {info.size} bytes, its manifest says "
            f"{manifest.dump_bytes})"
        )
    if info.offset_data + info.size > path.stat().st_size:
        raise BackupError(f"{path} is damaged (the archive is cut short)")
    return source


def read_manifest(path: Path) -> Manifest:
    """The manifest of the backup at `path`, checked with the dump's member it describes;
    BackupError if it is not our backup."""
    try:
        with _open_tar(path) as tar:
            info, source = _member(tar, path, MANIFEST)
            if info.size > _MANIFEST_MAX:
                raise BackupError(f"{path} is not a Sponsorbot backup (its manifest is too big)")
            manifest = Manifest.from_json(source.read(), str(path))
            _dump_member(tar, path, manifest)
    except (tarfile.TarError, EOFError):
        raise BackupError(f"{path} is damaged (the archive is cut short)") from None
    return manifest


def _mib(count: int) -> str:
    return f"{count / 1024 / 1024:.0f} MiB"


@contextlib.contextmanager
def work_dir(path: Path, manifest: Manifest) -> Iterator[Path]:
    """A private directory with room for the dump, removed afterwards: beside the backup file
    (its disk held the archive, about as big as the dump, and it is not a small /tmp), else in
    the system's temporary directory (TMPDIR)."""
    need = manifest.dump_bytes + _SPARE
    tried: list[str] = []
    for parent in dict.fromkeys([path.absolute().parent, Path(tempfile.gettempdir())]):
        try:
            free = shutil.disk_usage(parent).free
            if free < need:
                tried.append(f"{parent} has {_mib(free)} free")
                continue
            work = Path(tempfile.mkdtemp(prefix=".sponsorbot-restore-", dir=parent))
        except OSError as exc:
            tried.append(f"{parent}: {exc.strerror or exc}")
            continue
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    raise BackupError(
        f"no room to unpack the dump of {path} ({_mib(need)} needed; {'; '.join(tried)}): "
        "free some space, or set TMPDIR to a directory on a disk with room"
    )


def extract_dump(path: Path, manifest: Manifest, into: Path) -> Path:
    """Copy the dump out of the archive into the directory `into`, checking its checksum;
    never more than the manifest's dump_bytes."""
    target = into / DUMP
    digest = hashlib.sha256()
    left = manifest.dump_bytes
    try:
        with _open_tar(path) as tar:
            source = _dump_member(tar, path, manifest)
            with target.open("wb") as out:
                while left and (chunk := source.read(min(_CHUNK, left))):
                    digest.update(chunk)
                    out.write(chunk)
                    left -= len(chunk)
    except (tarfile.TarError, EOFError):
        raise BackupError(f"{path} is damaged (the archive is cut short)") from None
    except OSError as exc:
        raise BackupError(f"cannot unpack the dump into {into}: {exc.strerror or exc}") from None
    if left:
        raise BackupError(f"{path} is damaged (the archive is cut short)")
    if digest.hexdigest() != manifest.dump_sha256:
        raise BackupError(f"{path} is damaged (the dump does not match its checksum)")
    return target
