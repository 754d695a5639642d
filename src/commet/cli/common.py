"""What every ``commet`` command shares: exit codes, one-line failures, dataset loading (the consoles:
:mod:`commet.cli.consoles`).

Its own module so that the command modules and the ``commet`` app (``commet.cli``) both build on
it without importing each other.
"""

from __future__ import annotations

import functools
import gc
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Annotated, NoReturn, ParamSpec, TypeVar

import typer

from commet.format.problems import EMPTY_DATASET, FormatError, Problem, printable
from commet.text import printable as visible

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from commet.engine.failures import FailureNotice
    from commet.engine.outcome import RunCounts
    from commet.engine.runner import RunResults, RunSummary
    from commet.format.dataset import Dataset
    from commet.models.base import SettingError


def say(text: str, *, err: bool = False, style: str | None = None) -> None:
    """A paragraph of prose: wrapped at spaces to the width of a terminal, a name longer than a line only after
    its punctuation, never inside a word or a hash; on stdout also to ``COLUMNS`` when piped (a report written
    to a file fits it). Elsewhere one line: a log of stderr keeps one line per message."""
    from commet.cli.consoles import console, err_console, sized
    from commet.reports.cells import wrap_words

    target = err_console if err else console
    wrapped = target.file.isatty() if err else sized(target.file)
    target.print(wrap_words(text, target.width) if wrapped else text, markup=False, highlight=False, style=style,
                 soft_wrap=True)

EXIT_USAGE = 2
#: the run ended with calls that failed for good (rerun to retry them)
EXIT_INCOMPLETE = 3
#: stopped by --max-cost before it was complete (rerun with a higher limit to resume)
EXIT_SPEND_LIMIT = 4
#: the results store (or an output file) could not be written: its disk is full (free space, rerun to resume)
EXIT_DISK_FULL = 5
#: stopped by Ctrl-C (rerun to resume): 128 + SIGINT, as shells report it
EXIT_INTERRUPTED = 130
#: stopped by SIGTERM (Slurm, Kubernetes, ``timeout``), as by Ctrl-C: 128 + SIGTERM
EXIT_TERMINATED = 143
RESUME_LINE = "interrupted; run the same command again to resume"
TERMINATED_LINE = "terminated (SIGTERM); run the same command again to resume"

P = ParamSpec("P")
R = TypeVar("R")


#: the program's young-generation collection threshold once it has started up (Python's default: 700)
YOUNG_OBJECTS_PER_COLLECTION = 5000


class Program:
    """This process as the ``commet`` program (``commet.cli.main``), not a test driving ``app`` in its own.

    Only the program leaves long-lived objects out of the garbage collector's passes: frozen
    objects are never collected, which a process that runs one command and exits can afford.
    """

    running = False
    #: a SIGTERM arrived: the program stops as on Ctrl-C, and exits 143
    terminated = False
    #: the collector is off until the command starts (:meth:`collect_from_the_command`)
    collection_held = False

    @staticmethod
    def one_blas_thread() -> None:
        """NumPy's OpenBLAS on one thread, unless the user chose otherwise (``OPENBLAS_NUM_THREADS``).

        The reports' matrix products are small (a resample's counts times a few figures): more threads
        do not make them faster, and after each one OpenBLAS's idle threads spin before they sleep,
        about 0.1 s of CPU after the report a run prints, on every report a web app serves. Set before
        NumPy is first imported (the program imports it only for a report).
        """
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    @classmethod
    def stop_on_sigterm(cls) -> None:
        """SIGTERM (what Slurm, Kubernetes and ``timeout`` send) stops the program as Ctrl-C does.

        The handler hands the signal to the SIGINT handler in place: inside ``asyncio.run`` that one
        cancels the main task, so a run commits what finished and is marked ``interrupted``;
        elsewhere it raises KeyboardInterrupt. :func:`resumable` then says how to resume, exit 143.
        """
        def terminate(signum: int, frame: FrameType | None) -> None:
            cls.terminated = True
            handler = signal.getsignal(signal.SIGINT)
            if callable(handler):
                handler(signal.SIGINT, frame)
            else:  # SIGINT ignored or default: still stop
                raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, terminate)

    @classmethod
    def hold_collection(cls) -> None:
        """No garbage collection while the program builds its command and reads the command line: what that
        makes (the modules imported, the command's click objects) lives until exit, and collecting among it
        took about 2 % of ``commet eval``'s start. :meth:`collect_from_the_command` turns it back on."""
        if gc.isenabled():
            gc.disable()
            cls.collection_held = True

    @classmethod
    def collect_from_the_command(cls) -> None:
        """The collector back on as a command starts, if :meth:`hold_collection` turned it off; what was made
        until then is left out of its collections (as :meth:`starting_up` does), or the first one would walk it
        all."""
        if cls.collection_held:
            cls.collection_held = False
            cls.freeze_objects()
            gc.enable()

    @classmethod
    @contextmanager
    def starting_up(cls) -> Iterator[None]:
        """Inside: no garbage collection while the program builds what lives until it exits (modules,
        clients, the validated dataset); after: all of it is left out of later collections.

        Those objects are never garbage, yet the collections their making sets off walk them again
        and again. Then the young generation is collected every ``YOUNG_OBJECTS_PER_COLLECTION``
        allocations instead of 700: a run's calls make short-lived objects by the thousand, nearly
        all freed by their last reference before any collection sees them (600 StoryTurns, 4,200
        calls: 7 collections and 5 ms of CPU instead of 75 and 50 ms; bench/bench_openai_server.py).
        A test driving ``app`` keeps its collector as it was.
        """
        if not cls.running:
            yield
            return
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            cls.freeze_objects()
            gc.set_threshold(YOUNG_OBJECTS_PER_COLLECTION, *gc.get_threshold()[1:])
            if enabled:
                gc.enable()

    @classmethod
    def freeze_objects(cls) -> None:
        """Leave every object alive now out of later collections (the program only, see above)."""
        if cls.running:
            gc.freeze()


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Plain output of a command (a line, a Markdown or CSV report) with control characters from data made
    visible (:func:`commet.text.printable`): every command writes through this or the consoles, never raw.
    A CSV's CRLF line ends are line ends, not carriage returns to show."""
    typer.echo(visible(text.replace("\r\n", "\n")), err=err, nl=nl)


def fail(message: str, *, lines: bool = False) -> NoReturn:
    """One line (never wrapped: a terminal folds it, a log or a test reads it whole), then exit 2. A line break or
    control character in it (a file name holds any but ``/``, a message quotes what it was given) is shown
    escaped: it neither splits the line nor drives the terminal. ``lines``: a message made of lines by design (a
    table of what differs), each line escaped on its own."""
    from commet.cli.consoles import err_console

    shown = "\n".join(map(printable, message.split("\n"))) if lines else printable(message)
    err_console.print(f"error: {shown}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def click_errors() -> ModuleType:
    """The exceptions module of the click that typer runs on: its own copy (``typer._click``) since typer 0.2x, click
    itself before (as ``typer.core`` names it)."""
    import typer.core

    click: ModuleType = getattr(typer.core, "_click", None) or typer.core.click  # type: ignore[attr-defined]
    exceptions: ModuleType = click.exceptions
    return exceptions


def usage_error_line(exc: Exception) -> str:
    """A usage error (an unknown option or command, an option's bad value, a missing argument) as one line, with the
    command whose ``--help`` says how: ``Invalid value for '--concurrency': ... (see commet eval --help)``."""
    message = printable(" ".join(getattr(exc, "format_message", lambda: str(exc))().split()))  # click's lists: one line
    context = getattr(exc, "ctx", None)
    if context is None or not isinstance(exc, click_errors().UsageError):
        return message
    return f"{message} (see {printable(context.command_path)} --help)"


def disk_full(message: str) -> NoReturn:
    """A write that found the disk full: one line, what to do, and its own exit code (nothing is lost: what
    was committed stays, and the same command resumes)."""
    from commet.cli.consoles import err_console

    err_console.print(f"error: {printable(message)}; what was saved before is kept: free some space and run the same command "
                      f"again to resume (exit code {EXIT_DISK_FULL})", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_DISK_FULL)


def resumable(command: Callable[P, R]) -> Callable[P, R]:
    """Ctrl-C (or SIGTERM) at any moment of a command that writes runs: the resume line and exit code 130
    (143).

    (The engine has already marked the run ``interrupted`` and committed what finished.)
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            if Program.terminated:
                sys.stderr.write(f"\n{TERMINATED_LINE}\n")
                raise typer.Exit(EXIT_TERMINATED) from None
            sys.stderr.write(f"\n{RESUME_LINE}\n")
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return wrapper


def cache_written_after(command: Callable[P, R]) -> Callable[P, R]:
    """The validated dataset's cache entry (:mod:`commet.sources.validation_cache`) written when the command has
    ended, however it ends (Ctrl-C, an error), not before its first model request: pickling 20,000 StoryTurns
    takes 0.35 s. (A child that loads a small dataset ahead writes its own at once: it is not this process's.)"""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from commet.sources.validation_cache import writes_deferred

        with writes_deferred():
            return command(*args, **kwargs)

    return wrapper


def _file_errors_as_failures(command: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from commet.store.errors import StoreError, StoreFullError, is_disk_full

        Program.collect_from_the_command()
        try:
            return command(*args, **kwargs)
        except StoreFullError as exc:
            disk_full(str(exc))
        except StoreError as exc:
            fail(str(exc))
        except FormatError as exc:  # an input file refused by its bounded reader (commet.sources.inputs)
            fail_problems(exc)
        except OSError as exc:
            if is_disk_full(exc):  # a write to an open file names no file: the command's output is the one
                from commet.store.errors import free_space

                written = exc.filename or kwargs.get("out")
                if isinstance(written, (str, Path)):
                    disk_full(f"{written}: cannot write: the disk is full ({free_space(Path(written))})")
                disk_full("cannot write: the disk is full")
            if exc.filename is None:
                written = kwargs.get("out")
                if isinstance(written, (str, Path)):  # a write to the open output failed (EIO, a device that refuses)
                    fail(f"{written}: cannot write: {exc.strerror or exc}")
                raise  # not a file (a socket, a process): not the user's path, so not hidden
            fail(_file_error(exc))

    wrapper.__dict__["refuses_bad_files"] = True
    return wrapper


def _file_error(exc: OSError) -> str:
    """What went wrong with a path, in words: "File exists" from making a folder means a file is in the way."""
    path = Path(exc.filename)
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        blocker = next((p for p in (path, *path.parents) if p.is_file()), None)
        if blocker is not None:
            return f"{path}: {'' if blocker == path else f'{blocker} '}is a file, where a folder is needed"
    return f"{path}: {exc.strerror or exc}"


#: The range every whole-number option of every command keeps to, by option name, unless it says narrower:
#: a seed is what numpy, SQLite and every provider take; resamples are what fits in memory (one bootstrap
#: array of resamples x StoryTurns); anything else is a count a run can hold. A value outside is click's
#: one-line usage error (exit 2), never an OverflowError or a MemoryError from deep inside.
NUMBER_RANGES: dict[str, tuple[int, int]] = {"seed": (0, 2**32 - 1), "resamples": (100, 20_000)}
DEFAULT_NUMBER_RANGE = (-(2**31), 2**31 - 1)


def bound_numbers(command: Callable[..., object]) -> None:
    """Give each whole-number option of ``command`` the bounds :data:`NUMBER_RANGES` sets (an option's own narrower
    ``min``/``max`` stay): done for every command at registration, so a new option is bounded too. (Decimal
    options are checked where they are used: a finite number, in the setting's range.)"""
    import inspect
    import typing

    from typer.models import OptionInfo

    for name, parameter in inspect.signature(inspect.unwrap(command), eval_str=True).parameters.items():
        kind, infos = parameter.annotation, []
        if typing.get_origin(kind) is typing.Annotated:
            kind, *metadata = typing.get_args(kind)
            infos = [m for m in metadata if isinstance(m, OptionInfo)]
        if isinstance(parameter.default, OptionInfo):
            infos.append(parameter.default)
        base = set(typing.get_args(kind) or (kind,)) - {type(None)}
        for info in infos:
            if base == {int}:
                low, high = NUMBER_RANGES.get(name, DEFAULT_NUMBER_RANGE)
                info.min = low if info.min is None else max(info.min, low)
                info.max = high if info.max is None else min(info.max, high)


def refuse_bad_files(app: typer.Typer) -> None:
    """Every command of ``app`` and its sub-apps: a file that is not a readable results store (not
    SQLite, another program's, a newer schema, a damaged run), or a path the system will not read or
    write (no such folder, no permission, a read-only disk), is one line and exit 2, not a traceback."""
    for info in app.registered_commands:
        if info.callback is not None:
            bound_numbers(info.callback)
        if info.callback is not None and not info.callback.__dict__.get("refuses_bad_files"):
            info.callback = _file_errors_as_failures(info.callback)
    group_callback = app.registered_callback  # a group's own callback runs a command too (commet label)
    if group_callback is not None and group_callback.callback is not None \
            and not group_callback.callback.__dict__.get("refuses_bad_files"):
        group_callback.callback = _file_errors_as_failures(group_callback.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            refuse_bad_files(group.typer_instance)


def secrets_of(judge: object) -> list[str | None]:
    """The API keys of a judge's models (an LLM judge's, a cascade's, a panel's members'), kept out of messages."""
    keys = [getattr(judge, "api_key", None)]
    for inner in (getattr(judge, "model", None), getattr(judge, "fallback", None), *getattr(judge, "members", ())):
        if inner is not None:
            keys += secrets_of(inner)
    return keys


def failure_printer(secrets: list[str | None]) -> Callable[[FailureNotice], None]:
    """What prints a call that failed for good at once, above the progress bar (stderr), keys redacted."""
    from commet.models.errors import redact
    from commet.text import printable as shown

    def said(notice: FailureNotice) -> None:
        say(shown(redact(notice.line(), [s for s in secrets if s]))[:600], err=True)

    return said


def print_failures(results: RunResults, counts: RunCounts, *, secrets: list[str | None],
                   stopped_by: FailureNotice | None = None) -> None:
    """What kept a run (eval's, finish's or rejudge's) from completing: how many StoryTurns are not scored (the
    run's :class:`~commet.engine.outcome.RunCounts`, as its report counts them), per failure kind how many turns
    and the first message (keys redacted), then what to do: for each kind no rerun fixes by itself, its own
    advice (and why the run stopped early, if it did); else run the same command again."""
    from commet.engine.failures import STOPPING_KINDS, CallSource, advice
    from commet.models.errors import redact

    write = functools.partial(say, err=True)
    write(f"incomplete: {counts.not_scored_words()}; calls that failed for good:")
    for failure in results.failures:
        message = redact(" ".join(failure.first_message.split()), [s for s in secrets if s])
        message = message if len(message) <= 300 else message[:299] + "…"
        write(f"  {failure.kind} ({failure.what}, {failure.turns} turn{'s' if failure.turns != 1 else ''}), "
              f"first at story {printable(failure.first_story)} turn {failure.first_turn}: {printable(message)}")
    if stopped_by is not None:
        write(f"stopped early: {stopped_by.source.value} calls kept failing the same way ({stopped_by.kind}), so no "
              "more StoryTurns were started; nothing done is lost")
    fixes: dict[tuple[CallSource, str], str] = {}
    if stopped_by is not None and stopped_by.kind in STOPPING_KINDS:
        # what stopped the run has its advice even when no turn that failed that way was kept (the stop
        # cancelled the stories in flight before their failed turns were written)
        fixes[(stopped_by.source, stopped_by.kind)] = advice(stopped_by.kind, stopped_by.source)
    for failure in results.failures:
        source = CallSource.judge if failure.what == "judge" else CallSource.model
        kind = failure.kind.removeprefix("judge_")
        if kind in STOPPING_KINDS:
            fixes.setdefault((source, kind), advice(kind, source))
    for fix in fixes.values():
        write(f"to do: {fix}")
    then = "once that is done, run the same command again to continue" if fixes else \
        "run the same command again to retry them"
    write(f"{then} (exit code {EXIT_INCOMPLETE})")


def run_line(summary: RunSummary, finishes: str | None = None) -> str:
    """What this call did to the run: all of it, resumed it (how much was kept), or nothing
    (already complete); ``finishes``: the short id of the run a finishing run continues."""
    done, run = summary.progress, summary.run
    named = f"run {printable(run.name)} (id {run.short_id})"
    if finishes is not None:
        named += f" finishes run {finishes}"
    failed = f"{done.errors} call{'' if done.errors == 1 else 's'} failed for good"
    this_time = (f"this time {done.model_calls} model calls, {done.cached_calls} answered from the store, "
                 f"{failed}")
    if done.repaired_replies:  # text that is not Unicode, made valid where it came in (warned per call)
        this_time += (f"; {done.repaired_replies} replies held {done.replaced_code_points} code point(s) that are "
                      "not Unicode text, replaced by U+FFFD")
    total = done.stories_total
    if done.stories_kept == total and not (done.model_calls or done.cached_calls or done.errors):
        return f"{named} is already complete: all {total} StoryTurns were scored earlier; nothing was run"
    if done.stories_kept:
        return f"{named} resumed: {done.stories_kept} of {total} StoryTurns kept from before; {this_time}"
    return f"{named}: {this_time}"


def fail_option(exc: SettingError) -> NoReturn:
    """A refused setting (``GenerationSettings.checked``), said as the option the user typed."""
    fail(f"--{exc.field.replace('_', '-')}: {exc.reason}")


def serve_web_app(web: ASGIApp, host: str, port: int, announce: Callable[[str], str], *,
                  allowed_hosts: str | None = None, forwarded_allow_ips: str | None = None, log_level: str = "warning",
                  access_log: bool = True, server_header: bool = True) -> None:
    """Serve a web app: the address is bound first, so a port in use (or out of reach) is one line and
    exit 2 before anything is announced, and ``--port 0`` announces the port it got.
    ``announce(base_url)`` is the line printed once listening.

    A request whose ``Host`` is not this server's (``host``, this machine's loopback names when listening on
    loopback or every interface, ``allowed_hosts``: comma-separated names, ``*.domain`` or ``*``) is refused
    (DNS rebinding). ``X-Forwarded-For`` is read only from the proxies ``forwarded_allow_ips`` names
    (comma-separated addresses or networks, ``*`` for any): uvicorn trusts it from 127.0.0.1 by default, so
    anyone reaching the app through ``ssh -L`` or a local proxy chose their own address, and rotating it
    defeated the sign-in throttle."""
    import errno
    import socket

    import uvicorn

    from commet.apps.guards import AllowedHosts, HostAllowList

    extra = [name for name in (allowed_hosts or "").split(",") if name.strip()]
    guarded = HostAllowList(web, AllowedHosts.for_server(host, extra))
    proxies = [ip.strip() for ip in (forwarded_allow_ips or "").split(",") if ip.strip()]

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        taken = " (another server is on it)" if exc.errno == errno.EADDRINUSE else ""
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}{taken}; choose another port with --port N "
             "(--port 0: any free one)")
    bound = listener.getsockname()[1]
    echo(announce(f"http://{f'[{host}]' if ':' in host else host}:{bound}"))
    server = uvicorn.Server(uvicorn.Config(guarded, host=host, port=bound, proxy_headers=bool(proxies),
                                           forwarded_allow_ips=",".join(proxies) or None, log_level=log_level,
                                           access_log=access_log, server_header=server_header))
    server.run(sockets=[listener])


def check_run_name(option: str, name: str | None) -> None:
    """A run name given on the command line: not blank, no control or invisible characters (a newline would
    split the lines of `commet runs` and the reports' tables; an escape sequence would drive the terminal),
    no leading or trailing blanks. Refused before anything is written."""
    if name is None:
        return
    if not name.strip():
        fail(f"{option}: a run name cannot be blank")
    if not name.isprintable():
        fail(f"{option}: a run name cannot hold control or invisible characters: {name!r}")
    if name != name.strip():
        fail(f"{option}: a run name cannot start or end with blanks: {name!r}")


def check_dataset_path(path: str) -> None:
    """A dataset that is not there: one line, with the closest name when there is one (a Hub dataset
    by name, ``hf:OWNER/NAME``, is looked for by the loader)."""
    from commet.sources.hub_names import is_hub_spec

    if path == "sample" or is_hub_spec(path) or Path(path).exists():
        return
    if re.match(r"\A[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*\Z", path) and not Path(path).parent.exists():
        fail(f"no dataset {path!r}: no such file or folder; a Hugging Face Hub dataset is written hf:{path}")
    import difflib

    given = Path(path)
    folder = given.parent if str(given.parent) not in ("", ".") else Path(".")
    try:
        nearby = [str(folder / entry.name) if folder != Path(".") else entry.name for entry in folder.iterdir()
                  if not entry.name.startswith(".")]
    except OSError:
        nearby = []
    close = difflib.get_close_matches(path, ["sample", *sorted(nearby)], n=1, cutoff=0.6)
    hint = (f"; did you mean {close[0]!r}?" if close else
            "; give a dataset folder, a JSONL/JSON file, a Hugging Face folder, or 'sample' (the bundled one)")
    fail(f"no dataset {path!r}: no such file or folder{hint}")


def fail_problems(exc: FormatError) -> NoReturn:
    """Each located problem on its own line on stderr, then exit 2 (a refused dataset adds its summary)."""
    from commet.cli.consoles import err_console
    from commet.format.validate import DatasetRefused

    for problem in exc.problems:
        err_console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if isinstance(exc, DatasetRefused) and exc.summary():
        err_console.print(f"error: {exc.summary()}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def _load(path: str, columns: str | None = None, adapter: str | None = None) -> Dataset:
    """A dataset read for a command that does not run it (stats, convert, audit, the reports' --dataset): not
    validated, but one with no StoryTurns is refused as `commet validate` refuses it, not counted, converted or
    audited as if it were data (zero rows that look like a result)."""
    from commet.sources import load_dataset

    check_dataset_path(path)
    try:
        dataset = load_dataset(path, columns=columns, adapter=adapter)
    except FormatError as exc:
        fail_problems(exc)
    except RuntimeError as exc:
        fail(str(exc))
    if not dataset.storyturns:
        fail_problems(FormatError([Problem(dataset.source_file, None, None, None, None, EMPTY_DATASET)]))
    return dataset


def load_or_fail(path: str, force: bool = False, columns: str | None = None, adapter: str | None = None) -> Dataset:
    """The dataset a command will run, checked exactly as `commet validate` checks it.

    Why one function: eval, sweep, study build and review serve must refuse the same datasets;
    errors always stop the command before anything is written, warnings unless ``force``.
    """
    from commet.sources.checked import load_checked

    check_dataset_path(path)
    try:
        with Program.starting_up():  # the dataset lives until the command ends: no collection walks its making
            dataset, warnings = load_checked(path, force=force, columns=columns, adapter=adapter)
    except FormatError as exc:
        fail_problems(exc)
    if dataset.origin is not None:  # a table read by its columns (a Hub dataset, JSON lines, CSV): say how
        say(f"read from {dataset.origin.location}: {dataset.origin.layout}", err=True)
    for warning in warnings:
        say(str(warning), err=True)
    if warnings:  # run despite them (--force), or possible answer leaks only: never a reason to refuse data
        from commet.cli.consoles import err_console

        err_console.print(f"running despite {len(warnings)} warning(s) (--force)" if any(w.gates for w in warnings)
                          else f"running with {len(warnings)} possible answer leak warning(s)",
                          markup=False, highlight=False)
    return dataset


AllowedHostsOption = Annotated[str | None, typer.Option(
    help="Host names the app also answers to, comma-separated (a name, *.domain, or * for any): requests naming "
         "another host are refused (DNS rebinding). Without it: the --host address, and localhost when listening "
         "on loopback or on every interface.")]
ForwardedAllowIpsOption = Annotated[str | None, typer.Option(
    help="Addresses of reverse proxies whose X-Forwarded-For header is believed, comma-separated (* for any). "
         "Without it the header is ignored: the client address is the connection's.")]
ForceOption = Annotated[bool, typer.Option(help="Run a dataset whose only problems are warnings "
                                                "(a dataset with errors is never run).")]
ColumnsOption = Annotated[str | None, typer.Option(
    "--columns", help="For a table whose column names do not say it (a Hub dataset, parquet, JSON lines, CSV): "
                      "which column is which part of a StoryTurn, ROLE=COLUMN,... (roles: turns, messages, id, turn, "
                      "story, feedback, question, answer, options, image, image_id, task, category, image_dependent, "
                      "mental_states, source; image=A,B,C or image=Pic* for several picture columns). Recorded with "
                      "the run; it changes the dataset's hash.")]
AdapterOption = Annotated[str | None, typer.Option(
    "--adapter", help="For a table no --columns mapping can express: FILE.py:FUNCTION, a Python function from a "
                      "record (first parameter record/row/doc/example/sample) or a whole split (rows/records/table/"
                      "docs/dataset) to StoryTurns (docs/official-data.md, Adapters). Its output is validated like "
                      "any dataset; its source is part of the dataset's hash and recorded with the run.")]
