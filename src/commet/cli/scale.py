"""``commet merge``: join the stores of a run's shards (``commet eval --shard i/N``) into one."""

from pathlib import Path
from typing import Annotated

import typer

from commet.cli.common import echo


def register(app: typer.Typer) -> None:
    @app.command()
    def merge(out: Annotated[Path, typer.Argument(help="The merged store (created when missing).")],
              shards: Annotated[list[Path], typer.Argument(help="Shard stores to merge into OUT.")]) -> None:
        """Merge shard stores into one: run configurations must match and rows must not conflict.

        Any conflict refuses the whole merge (exit 2) and OUT is left as it was.
        """
        from commet.cli.common import fail
        from commet.store.merge import MergeError, describe, merge_stores

        try:
            report = merge_stores(out, list(shards))
        except MergeError as exc:
            fail(str(exc))
        for line in describe(report):
            echo(line)
