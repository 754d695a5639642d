"""Picture files, read from inside a dataset's folder only and within the picture size limit: the reading half of
a dataset's pictures (the checks of their bytes are :mod:`commet.format.pictures`').

:class:`FolderReader` is the :class:`~commet.format.dataset.PictureFolder` every dataset read from files gets;
importing this module installs it for the datasets made in the process.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from commet.format.dataset import IMAGES_DIR, Signature, image_file_candidates, install_folder_reader
from commet.format.pictures import MAX_IMAGE_BYTES, PictureError
from commet.sources.bounded import InputFileError, file_signature, read_regular_file


def read_picture_file(path: str | Path) -> bytes:
    """The bytes of a picture file: a regular file of at most :data:`~commet.format.pictures.MAX_IMAGE_BYTES`,
    checked before reading."""
    try:
        return read_regular_file(path, max_bytes=MAX_IMAGE_BYTES, what="picture")
    except FileNotFoundError:
        raise PictureError(f"not found ({path})") from None
    except InputFileError as exc:
        raise PictureError(f"{exc} ({path})") from None


def read_picture_inside(root: Path, path: str, folders: tuple[Path, ...]) -> bytes:
    """The picture file ``path`` names, looked for in each of ``folders`` (inside ``root``), read only if it stays
    inside ``root``: an absolute path, ``..`` climbing out or a symbolic link pointing out is refused
    (:class:`PictureError`) and never read, so a dataset cannot make CoMMET copy or send a file from elsewhere."""
    from commet.format.problems import printable

    shown = printable(path if len(path) <= 120 else path[:100] + "...")
    if Path(path).is_absolute() or Path(path).drive:
        raise PictureError(f"path {shown!r} is absolute: pictures are read only from inside the dataset folder "
                           "(refused, not read)")
    top = root.resolve()
    for candidate in dict.fromkeys(folder / path for folder in folders):
        try:
            if not os.path.lexists(candidate):
                continue
            if not candidate.resolve().is_relative_to(top):
                what = "is a symbolic link pointing" if candidate.is_symlink() else "leads"
                raise PictureError(f"path {shown!r} {what} out of the dataset folder (refused, not read)")
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Python < 3.13)
            raise PictureError(f"path {shown!r} cannot be looked at: {getattr(exc, 'strerror', None) or exc}") from None
        return read_picture_file(candidate)
    if ".." in Path(path).parts:
        raise PictureError(f"path {shown!r} leads out of the dataset folder (refused, not read)")
    raise PictureError(f"path {shown!r} not found in the dataset folder (and the cell holds no bytes)")


def _plainly_inside(top: Path, folders: tuple[str, ...], name: str, last: os.stat_result) -> bool:
    """Whether ``top`` (a resolved folder) joined with ``folders`` and the relative path ``name`` is its own resolved
    path, so inside ``top``, seen without resolving it: no part is ``..`` or a symbolic link (``last``: the last
    part's ``lstat``). False where it cannot be said this way (then the path is resolved, as a link must be)."""
    if stat.S_ISLNK(last.st_mode) or (os.altsep and os.altsep in name) or os.path.splitdrive(name)[0]:
        return False
    parts = (*folders, *name.split(os.sep))
    if any(part in ("..", ".", "") for part in parts):  # (an absolute name starts with "")
        return False
    path = str(top)
    for part in parts[:-1]:
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return False
        except (OSError, ValueError):
            return False
    return True


class FolderReader:
    """The dataset folders' picture reader (:class:`~commet.format.dataset.PictureFolder`): a picture is a regular
    file inside the folder, in ``images/`` or at its top, looked at before it is read and read within the size limit."""

    def locate(self, root: Path, image_id: str, *, top: Path | None = None) -> tuple[Path | None, str | None]:
        """The regular file an image id refers to, or None and why not (``top``: ``root`` resolved, where the caller
        resolved it once for many pictures).

        Why: a picture must be a regular file inside the dataset folder; a path that leaves it
        (``..``, an absolute path, a symbolic link pointing out) is refused, never read.
        """
        if not image_id.isprintable() or image_id != image_id.strip():
            return None, "has control characters or surrounding blanks in its id"
        top = root.resolve() if top is None else top
        for folder, within in ((root / IMAGES_DIR, (IMAGES_DIR,)), (root, ())):
            for name in image_file_candidates(image_id):
                candidate = folder / name
                try:
                    found = os.lstat(candidate)
                except (OSError, ValueError):  # as os.path.lexists: nothing there (or nothing that can be looked at)
                    continue
                try:
                    if _plainly_inside(top, within, name, found):
                        mode = found.st_mode
                    elif not candidate.resolve().is_relative_to(top):
                        what = "is a symbolic link pointing" if candidate.is_symlink() else "leads"
                        return None, f"{what} out of the dataset folder (refused, not read)"
                    else:
                        mode = candidate.stat().st_mode
                except FileNotFoundError:
                    return None, f"is a broken symbolic link ({candidate})"
                except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Python < 3.13)
                    return None, f"cannot be looked at ({candidate}: {getattr(exc, 'strerror', None) or exc})"
                if stat.S_ISDIR(mode):
                    return None, f"is a folder, not a picture file ({candidate})"
                if not stat.S_ISREG(mode):
                    return None, f"is not a regular file ({candidate})"
                return candidate, None
        parts = Path(image_id).parts
        if Path(image_id).is_absolute() or ".." in parts:
            return None, "leads out of the dataset folder (refused, not read)"
        return None, "not found"

    def read(self, path: Path) -> bytes:
        return read_picture_file(path)

    def signature(self, path: Path) -> Signature | None:
        return file_signature(path)


#: the one reader (it holds nothing): every dataset read from files gets it, and :mod:`commet.sources` installs it
FOLDER_READER = FolderReader()
install_folder_reader(FOLDER_READER)
