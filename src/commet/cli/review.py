"""``commet review``: the expert-review web app (serve), its accounts (add-user) and its output (export)."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.cli.common import (
    AdapterOption,
    AllowedHostsOption,
    ColumnsOption,
    ForceOption,
    ForwardedAllowIpsOption,
    echo,
    fail,
    fail_problems,
    load_or_fail,
    serve_web_app,
)

if TYPE_CHECKING:
    from commet.format.dataset import Dataset

app = typer.Typer(help="Expert review of StoryTurns and their pictures (paper, section 3.2.2).", no_args_is_help=True)

DbOption = Annotated[Path, typer.Option(help="The review store (SQLite).")]


@app.command()
def serve(
    dataset: Annotated[str, typer.Option(help="Dataset to review: a dataset folder (storyturns.jsonl and images/); "
                                              "anything else (hf:OWNER/NAME, a file, a table) is reviewed as a "
                                              "dataset folder written beside the store, DB-dataset/.")],
    db: DbOption = Path("review.sqlite"),
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    image_model: Annotated[str | None, typer.Option(help="Picture backend for regeneration, e.g. "
                                                         "google:gemini-2.5-flash-image.")] = None,
    secure_cookies: Annotated[bool, typer.Option(help="Mark the session and device cookies Secure (behind HTTPS).")] = False,
    max_upload_mb: Annotated[int, typer.Option(min=1, help="Largest picture upload, MiB.")] = 8,
    results: Annotated[Path | None, typer.Option(
        help="A results store (commet.sqlite): adds the pages that label its runs' calibration samples "
             "(commet calibrate).")] = None,
    force: ForceOption = False,
    allowed_hosts: AllowedHostsOption = None,
    forwarded_allow_ips: ForwardedAllowIpsOption = None,
    columns: ColumnsOption = None,
    adapter: AdapterOption = None,
) -> None:
    """Serve the review app; the dataset's StoryTurns are added to the store (existing reviews kept).

    The dataset is validated first, as by `commet validate`; one with errors is refused.
    """
    from commet.apps.review.app import create_app
    from commet.apps.review.db import ReviewError
    from commet.format.problems import FormatError
    from commet.models.base import ModelSpecError

    checked = load_or_fail(dataset, force, columns, adapter)
    if checked.root is None:  # the app reviews a dataset folder, whose files it serves and exports from
        checked = _as_folder(checked, db.with_name(f"{db.stem}-dataset"))
    painter = None
    if image_model:
        from commet.generation.llm.images import create_image_model

        try:
            painter = create_image_model(image_model)
        except ModelSpecError as exc:
            fail(str(exc))
    if results is not None:
        from commet.store import Store, StoreError

        if not results.is_file():
            fail(f"--results {results}: no results store there")
        try:
            Store(results).close()
        except StoreError as exc:
            fail(f"--results: {exc}")
    try:
        web = create_app(checked, db, image_model=painter, secure_cookies=secure_cookies,
                         max_upload_bytes=max_upload_mb * 1024 * 1024, results=results)
    except (FormatError, ReviewError) as exc:
        fail(str(exc))
    serve_web_app(web, host, port, lambda base: f"reviewing {dataset} at {base}/ (store {db})", log_level="warning",
                  allowed_hosts=allowed_hosts, forwarded_allow_ips=forwarded_allow_ips)


def _as_folder(dataset: "Dataset", folder: Path) -> "Dataset":
    """``dataset`` written as a dataset folder (kept when it already holds exactly this dataset)."""
    from commet.format.problems import FormatError
    from commet.sources import load_dataset
    from commet.sources.convert import ConvertError, convert, picture_ids
    from commet.sources.targets import ConvertTarget

    if folder.exists():
        try:
            kept = load_dataset(folder)
        except FormatError:
            kept = None
        if kept is None or [st.model_dump() for st in kept] != [st.model_dump() for st in dataset] or any(
                kept.image_bytes(i) != dataset.image_bytes(i) for i in picture_ids(dataset) if dataset.has_image(i)):
            fail(f"{folder} holds another dataset; remove it, or give another --db")
        return kept
    try:
        convert(dataset, ConvertTarget.jsonl, folder)
    except ConvertError as exc:
        fail(str(exc))
    echo(f"wrote the dataset as a folder for review: {folder}")
    return load_dataset(folder)


def _typed_password(prompt: str) -> str:
    """A password typed at a hidden prompt: one too short is refused as soon as it is typed (not after it
    was typed twice) and asked for again; then it is asked a second time, to catch a typing slip."""
    from commet.apps.review.db import ReviewError, check_password

    while True:
        password = str(typer.prompt(prompt, hide_input=True))
        try:
            check_password(password)
        except ReviewError as exc:
            echo(f"error: {exc}; type another", err=True)
            continue
        if typer.prompt("Repeat for confirmation", hide_input=True) == password:
            return password
        echo("error: the two entries differ; type it again", err=True)


def _with_password(use: Callable[[str], object], from_stdin: bool, prompt: str) -> None:
    """Read a password (one line of standard input, or a hidden prompt asked twice) and hand it to ``use``;
    a password the review store refuses is one line and exit code 2."""
    from commet.apps.review.db import ReviewError

    password = sys.stdin.readline().rstrip("\r\n") if from_stdin else _typed_password(prompt)
    try:
        use(password)
    except ReviewError as exc:
        fail(str(exc))


@app.command("add-user")
def add_user(
    name: Annotated[str, typer.Argument(help="The reviewer's user name.")],
    db: DbOption = Path("review.sqlite"),
    password_stdin: Annotated[bool, typer.Option(help="Read the password from standard input.")] = False,
) -> None:
    """Create a reviewer account (the password is prompted for, or read with --password-stdin)."""
    from commet.apps.review.db import ReviewDB, ReviewError, check_user_name

    try:
        check_user_name(name)
        store = ReviewDB(db)
    except ReviewError as exc:
        fail(str(exc))
    if store.user_id(name) is not None:  # said before the password is typed, not after
        fail(f"user {name!r} already exists")
    _with_password(lambda password: store.add_user(name, password), password_stdin, "Password")
    echo(f"added reviewer {name}")


@app.command("set-password")
def set_password(
    name: Annotated[str, typer.Argument(help="The reviewer's user name.")],
    db: DbOption = Path("review.sqlite"),
    password_stdin: Annotated[bool, typer.Option(help="Read the new password from standard input.")] = False,
) -> None:
    """Give a reviewer a new password; every session of that reviewer is signed out at once."""
    from commet.apps.review.db import ReviewDB, ReviewError

    if not db.is_file():
        fail(f"no review store at {db}")
    try:
        store = ReviewDB(db)
    except ReviewError as exc:
        fail(str(exc))
    if store.user_id(name) is None:
        fail(f"no user {name!r}")
    _with_password(lambda password: store.set_password(name, password), password_stdin, "New password")
    echo(f"new password set for {name}; their sessions are signed out")


@app.command()
def export(
    out: Annotated[Path, typer.Option(help="Dataset folder to write.")],
    db: DbOption = Path("review.sqlite"),
    dataset: Annotated[Path | None, typer.Option(help="Where the reviewed dataset lives now "
                                                      "(default: where it was served from).")] = None,
) -> None:
    """Write the final items (three reviewers accepted them) as a validated dataset folder.

    Exit codes: 0 written and valid; 1 written, but the folder does not validate (the problems are printed);
    2 nothing written (no review store, no item final yet, an unreadable dataset or picture)."""
    from commet.apps.review.db import ReviewDB, ReviewError
    from commet.apps.review.db.records import REVIEWERS_FOR_CONSENSUS
    from commet.format.pictures import PictureError
    from commet.format.problems import FormatError

    if not db.is_file():
        fail(f"no review store at {db}")
    try:
        store = ReviewDB(db)
        statuses = store.statuses().values()
        if not any(status.final for status in statuses):
            if dataset is not None:  # a reviewed dataset broken since it was served is said first (export reads it)
                from commet.sources import load_dataset

                load_dataset(dataset)
            accepted = sum(bool(status.accepts) for status in statuses)
            fail(f"no item is final yet, so nothing was written: an item is final once {REVIEWERS_FOR_CONSENSUS} "
                 f"reviewers accept its current revision ({len(statuses)} items, {accepted} with an accept)")
        exported, problems = store.export(out, dataset_root=dataset)
    except ReviewError as exc:
        fail(str(exc))
    except FormatError as exc:  # the reviewed dataset, changed since it was served
        fail_problems(exc)
    except PictureError as exc:
        fail(f"a picture of the reviewed dataset cannot be read: it {exc}")
    for problem in problems:
        echo(str(problem), err=True)
    errors = sum(p.severity == "error" for p in problems)
    echo(f"exported {len(exported)} final StoryTurn(s) to {out}; validation: {errors} error(s)")
    if errors:
        raise typer.Exit(1)
