"""``commet review``: the expert-review web app (serve), its accounts (add-user) and its output (export)."""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from commet.cli.common import (
    AllowedHostsOption,
    ForceOption,
    ForwardedAllowIpsOption,
    fail,
    fail_problems,
    load_or_fail,
    serve_web_app,
)

app = typer.Typer(help="Expert review of StoryTurns and their pictures (paper, section 3.2.2).", no_args_is_help=True)

DbOption = Annotated[Path, typer.Option(help="The review store (SQLite).")]


@app.command()
def serve(
    dataset: Annotated[Path, typer.Option(help="Dataset folder to review (storyturns.jsonl and images/).")],
    db: DbOption = Path("review.sqlite"),
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    image_model: Annotated[str | None, typer.Option(help="Picture backend for regeneration, e.g. "
                                                         "google:gemini-2.5-flash-image.")] = None,
    secure_cookies: Annotated[bool, typer.Option(help="Mark the session cookie Secure (behind HTTPS).")] = False,
    max_upload_mb: Annotated[int, typer.Option(min=1, help="Largest picture upload, MiB.")] = 8,
    results: Annotated[Path | None, typer.Option(
        help="A results store (commet.sqlite): adds the pages that label its runs' calibration samples "
             "(commet calibrate).")] = None,
    force: ForceOption = False,
    allowed_hosts: AllowedHostsOption = None,
    forwarded_allow_ips: ForwardedAllowIpsOption = None,
) -> None:
    """Serve the review app; the dataset's StoryTurns are added to the store (existing reviews kept).

    The dataset is validated first, as by `commet validate`; one with errors is refused.
    """
    from commet.apps.review.app import create_app
    from commet.apps.review.db import ReviewError
    from commet.format.problems import FormatError
    from commet.models.base import ModelSpecError

    checked = load_or_fail(str(dataset), force)
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


def _with_password(use: Callable[[str], object], from_stdin: bool, prompt: str) -> None:
    """Read a password (one line of standard input, or a hidden prompt asked twice) and hand it to ``use``;
    a password the review store refuses is one line and exit code 2."""
    from commet.apps.review.db import ReviewError

    password = sys.stdin.readline().rstrip("\r\n") if from_stdin else typer.prompt(
        prompt, hide_input=True, confirmation_prompt=True)
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
    from commet.apps.review.db import ReviewDB

    _with_password(lambda password: ReviewDB(db).add_user(name, password), password_stdin, "Password")
    typer.echo(f"added reviewer {name}")


@app.command("set-password")
def set_password(
    name: Annotated[str, typer.Argument(help="The reviewer's user name.")],
    db: DbOption = Path("review.sqlite"),
    password_stdin: Annotated[bool, typer.Option(help="Read the new password from standard input.")] = False,
) -> None:
    """Give a reviewer a new password; every session of that reviewer is signed out at once."""
    from commet.apps.review.db import ReviewDB

    if not db.is_file():
        fail(f"no review store at {db}")
    _with_password(lambda password: ReviewDB(db).set_password(name, password), password_stdin, "New password")
    typer.echo(f"new password set for {name}; their sessions are signed out")


@app.command()
def export(
    out: Annotated[Path, typer.Option(help="Dataset folder to write.")],
    db: DbOption = Path("review.sqlite"),
    dataset: Annotated[Path | None, typer.Option(help="Where the reviewed dataset lives now "
                                                      "(default: where it was served from).")] = None,
) -> None:
    """Write the final items (three reviewers accepted them) as a validated dataset folder."""
    from commet.apps.review.db import ReviewDB, ReviewError
    from commet.format.pictures import PictureError
    from commet.format.problems import FormatError

    if not db.is_file():
        fail(f"no review store at {db}")
    try:
        exported, problems = ReviewDB(db).export(out, dataset_root=dataset)
    except ReviewError as exc:
        fail(str(exc))
    except FormatError as exc:  # the reviewed dataset, changed since it was served
        fail_problems(exc)
    except PictureError as exc:
        fail(f"a picture of the reviewed dataset cannot be read: it {exc}")
    for problem in problems:
        typer.echo(str(problem), err=True)
    errors = sum(p.severity == "error" for p in problems)
    typer.echo(f"exported {len(exported)} final StoryTurn(s) to {out}; validation: {errors} error(s)")
    if errors:
        raise typer.Exit(1)
