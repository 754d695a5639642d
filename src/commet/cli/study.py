"""``commet study``: build questionnaires, hand out links, serve the study, export the human run."""

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commet.apps.study.panel import JOINS_PER_ADDRESS, MAX_PANEL_PARTICIPANTS, Ending, PanelKind
from commet.cli.common import (
    AdapterOption,
    AllowedHostsOption,
    ColumnsOption,
    ForceOption,
    ForwardedAllowIpsOption,
    check_run_name,
    echo,
    fail,
    fail_problems,
    load_or_fail,
    serve_web_app,
)
from commet.conditions import UndecidedFeedback

if TYPE_CHECKING:
    from commet.apps.study.build import Panel, Study
    from commet.apps.study.db import StudyDB
    from commet.format.dataset import Dataset

app = typer.Typer(help="Anonymous human studies in the StoryTurn format (the human baseline).", no_args_is_help=True)

StudyFile = Annotated[Path, typer.Argument(help="The study file written by `commet study build`.")]
StudyDb = Annotated[Path, typer.Option("--study-db", "--db", help="The study's participant database (SQLite).")]


class PolicyChoice(str, Enum):
    each = "each"
    both = "both"
    all = "all"
    needed = "needed"


def _open(study_file: Path, db: Path, check: Callable[["Study"], None] | None = None
          ) -> "tuple[Study, Dataset, StudyDB]":
    """(Study, Dataset, StudyDB); ``check`` sees the study before the database is opened (or made)."""
    from commet.apps.study.build import StudyError, load_study
    from commet.apps.study.db import StudyDatabaseError, StudyDB
    from commet.format.problems import FormatError

    try:
        study, dataset = load_study(study_file)
        if check is not None:
            check(study)
        return study, dataset, StudyDB(db, study.digest())
    except FormatError as exc:  # the study file (or its dataset) refused by its reader: located lines
        fail_problems(exc)
    except (StudyError, StudyDatabaseError) as exc:
        fail(str(exc))


class GroupingChoice(str, Enum):
    paper = "paper"
    task = "task"


def _check_judge_spec(spec: str) -> None:
    """A judge spec the study's server could not build is refused now, before the study file is written; a
    missing API key is not (the server may run where the key is)."""
    import asyncio

    from commet.judges.base import UnknownJudgeError
    from commet.judges.registry import create_judge
    from commet.models.base import MissingKeyError

    try:
        judge = create_judge(spec)
    except UnknownJudgeError as exc:
        if not isinstance(exc.__cause__, MissingKeyError):
            fail(f"--judge: {exc}")
    else:
        asyncio.run(judge.aclose())


@app.command()
def build(
    dataset: Annotated[str, typer.Option(help="Dataset folder, file, hf:OWNER/NAME or 'sample'.")],
    out: Annotated[Path, typer.Option(help="Study file to write.")] = Path("study.json"),
    questionnaires: Annotated[int, typer.Option(help="Number of questionnaires; they alternate image policies.")] = 8,
    seed: Annotated[int, typer.Option(help="Seed of the selection; the same seed gives the same study.")] = 0,
    judge: Annotated[str, typer.Option(help="Judge spec for answers: 'rules' or a model spec.")] = "rules",
    grouping: Annotated[GroupingChoice, typer.Option(
        help="paper: Figure 3 task groups (text-complete) and Table 2 categories (image-dependent), 20 "
             "combinations; task: the 18 booklet tasks with and without pictures.")] = GroupingChoice.paper,
    title: Annotated[str | None, typer.Option(help="Title participants see.")] = None,
    contact: Annotated[str | None, typer.Option(help="How participants reach the researchers.")] = None,
    guidance: Annotated[str | None, typer.Option(help="How full an answer should be.")] = None,
    adult_confirmation: Annotated[str | None, typer.Option(
        help="Statement participants tick before starting; '' for none.")] = None,
    minutes: Annotated[int | None, typer.Option(
        help="Duration told on the consent page (default: estimated from each questionnaire).")] = None,
    undecided_feedback: Annotated[UndecidedFeedback, typer.Option(
        help="When a turn's feedback rests on an answer the judge left undecided: stop the story there, as `commet "
             "eval` does by default (stop); show only its unconditional part (skip); or the 'wrong' text (wrong). "
             "Match the models' runs.")] = UndecidedFeedback.STOP,
    panel: Annotated[PanelKind | None, typer.Option(
        help="The panel that recruits participants: its name goes on the last page, and prolific fills in its "
             "return links from the codes.")] = None,
    completion_code: Annotated[str | None, typer.Option(help="Panel code for participants who complete the study.")
                               ] = None,
    withdrew_code: Annotated[str | None, typer.Option(
        help="Panel code for participants who decline or stop part way.")] = None,
    screened_out_code: Annotated[str | None, typer.Option(
        help="Panel code for participants who cannot confirm the consent statement (e.g. not adult).")] = None,
    return_url: Annotated[str | None, typer.Option(
        help="Panel page the last page links to, '{code}' replaced by the ending's code (prolific: "
             "https://app.prolific.com/submissions/complete?cc={code}).")] = None,
    force: ForceOption = False,
    columns: ColumnsOption = None,
    adapter: AdapterOption = None,
) -> None:
    """Select questionnaires as in the paper's Appendix D: per group and image requirement, 1 or 2 StoryTurns.

    The dataset is validated first, as by `commet validate`; one with errors is refused.
    """
    from commet.apps.study.build import (
        DEFAULT_TITLE,
        ParticipantTexts,
        StudyError,
        adjacent_pairs,
        build_study,
    )

    if minutes is not None and minutes < 1:
        fail("--minutes must be at least 1")
    texts = ParticipantTexts.model_validate({key: value for key, value in {
        "contact": contact, "guidance": guidance, "adult_confirmation": adult_confirmation, "minutes": minutes,
    }.items() if value is not None})
    panel_texts = _panel(panel, return_url, {Ending.completed: completion_code, Ending.withdrew: withdrew_code,
                                             Ending.screened_out: screened_out_code})
    _check_judge_spec(judge)
    checked = load_or_fail(dataset, force, columns, adapter)
    try:
        study = build_study(dataset, out, questionnaires=questionnaires, seed=seed, judge=judge,
                            grouping=grouping.value, participant=texts, title=title or DEFAULT_TITLE, loaded=checked,
                            undecided=undecided_feedback, panel=panel_texts)
    except StudyError as exc:
        fail(str(exc))
    for line in study.design():
        echo(line)
    storyturns = {storyturn.id: storyturn for storyturn in checked}
    for questionnaire in study.questionnaires:
        echo(f"questionnaire {questionnaire.index}: {len(questionnaire.storyturns)} StoryTurns, "
                   f"pictures: {questionnaire.image_policy}")
        for first, second in adjacent_pairs(questionnaire, storyturns):
            echo(f"  {first} and {second} share a task group and stand next to each other: the questionnaire "
                       "holds too many of that group to keep them apart", err=True)
    for shortfall in study.shortfalls:
        echo(f"too few StoryTurns: {shortfall}", err=True)
    for field in study.placeholders():
        echo(f"warning: {field} is a placeholder an ethics board would refuse: set it with --contact "
                   "(`study serve` refuses it unless --allow-placeholder-texts)", err=True)
    echo(f"wrote {out}")


def _panel(kind: "PanelKind | None", return_url: str | None, codes: "dict[Ending, str | None]") -> "Panel":
    """The study's panel section from build's options (a Prolific panel gets Prolific's return link)."""
    from pydantic import ValidationError

    from commet.apps.study.build import PANEL_RETURN_URLS, Panel, PanelEnd

    name = {"prolific": "Prolific", "mturk": "MTurk", "generic": ""}[kind.value] if kind is not None else ""
    template = return_url if return_url is not None else PANEL_RETURN_URLS.get(name, "")
    if template and "{code}" not in template and any(codes.values()):
        fail("--return-url: put {code} where the ending's code goes (one link serves every ending)")
    try:
        ends = {ending.value: PanelEnd(code=code or "", url=template.replace("{code}", code) if code and template
                                       else "") for ending, code in codes.items()}
        return Panel(name=name, **ends)
    except ValidationError as exc:
        fail(f"--return-url: {exc.errors()[0]['msg']}")


@app.command()
def links(
    study_file: StudyFile,
    db: StudyDb = Path("study.sqlite"),
    count: Annotated[int, typer.Option(help="Number of links to create.")] = 1,
    questionnaire: Annotated[int | None, typer.Option(help="Questionnaire (default: balanced).")] = None,
    base_url: Annotated[str, typer.Option(help="Prefix printed before each /p/<token> path.")] = "",
    panel: Annotated[PanelKind | None, typer.Option(
        help="Print the study's one link for this panel instead: each participant it sends (by the panel's id in "
             "the link) gets a questionnaire, balanced, and comes back to it.")] = None,
) -> None:
    """Create anonymous participant links, one per line (or, with --panel, the one link to give a panel)."""
    if panel is not None:
        from commet.apps.study.panel import entry_link

        study, _, store = _open(study_file, db)
        echo(entry_link(base_url, store.entry_key(), panel))
        store.close()
        if not study.panel.completed.given:
            echo(f"warning: {study_file} has no completion code, so participants finish without one: build it "
                       "with --panel and --completion-code (or set panel.completed in the file)", err=True)
        return
    if count < 1:
        fail("--count must be at least 1")

    def check(study: "Study") -> None:  # before the participant database is made or opened
        if questionnaire is not None and not 0 <= questionnaire < len(study.questionnaires):
            fail(f"no questionnaire {questionnaire}; the study has {len(study.questionnaires)}")

    study, _, store = _open(study_file, db, check)
    chosen = ([questionnaire] * count if questionnaire is not None
              else store.balanced_questionnaires(count, len(study.questionnaires)))
    for token in store.create_participants(chosen):
        echo(f"{base_url.rstrip('/')}/p/{token}")
    store.close()


@app.command()
def serve(
    study_file: StudyFile,
    db: StudyDb = Path("study.sqlite"),
    judge: Annotated[str | None, typer.Option(help="Judge spec (default: the study's).")] = None,
    organiser_password_file: Annotated[Path | None, typer.Option(
        help="File holding the organiser password; without it the organiser page is off.")] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free one; the review app takes 8000).")] = 8001,
    secure_cookies: Annotated[bool, typer.Option(help="Mark cookies Secure (serving behind HTTPS).")] = False,
    allowed_hosts: AllowedHostsOption = None,
    forwarded_allow_ips: ForwardedAllowIpsOption = None,
    allow_placeholder_texts: Annotated[bool, typer.Option(
        help="Serve even though a participant text is still the built-in placeholder (a trial run).")] = False,
    joins_per_address: Annotated[int, typer.Option(
        min=1, help="New participants a minute through the panel link from one client address (a lab session or "
                    "a university NAT sending many at once: raise it).")] = JOINS_PER_ADDRESS,
    max_panel_participants: Annotated[int, typer.Option(
        min=0, help="Participants with panel ids the study takes (0: no limit); past it the panel link says the "
                    "study is full.")] = MAX_PANEL_PARTICIPANTS,
) -> None:
    """Serve the study: participants at /p/<token> (a panel's at /join/<key>), the organiser at /organiser. No
    access log is written."""
    from commet.apps.study.app import create_app
    from commet.apps.study.build import StudyError
    from commet.apps.study.db import StudyDatabaseError
    from commet.apps.study.panel import entry_link, kind_of
    from commet.format.problems import FormatError
    from commet.judges.base import UnknownJudgeError

    password = None
    if organiser_password_file is not None:
        from commet.sources.inputs import read_text

        # bounded, and a pipe is read too (a secret passed as <(pass show study)); a FIFO nobody writes is empty
        password = read_text(organiser_password_file, what="password file", max_bytes=64 * 1024,
                             allow_pipe=True).strip()
        if not password:
            fail(f"{organiser_password_file} is empty")
    try:
        web = create_app(study_file, db, judge=judge, organiser_password=password, secure_cookies=secure_cookies,
                         joins_per_address=joins_per_address, max_panel_participants=max_panel_participants or None)
    except FormatError as exc:  # the study file (or its dataset) refused by its reader: located lines
        fail_problems(exc)
    except (StudyError, StudyDatabaseError, UnknownJudgeError) as exc:
        fail(str(exc))
    site = web.state.study
    placeholders = site.pages.study.placeholders()
    if placeholders and not allow_placeholder_texts:
        fail(f"{study_file}: {', '.join(placeholders)} is still the built-in placeholder, which an ethics board would "
             "refuse: say who runs the study and how to reach them (study build --contact, or edit the study file); "
             "--allow-placeholder-texts serves it anyway (a trial run)")
    organiser = "at /organiser" if password else "off (no --organiser-password-file)"
    panel = site.pages.study.panel
    key = site.participation.db.entry_key()

    def announce(base: str) -> str:
        joins = f"; the panel's link: {entry_link(base, key, kind_of(panel.name))}" if panel.enabled else ""
        return f"study at {base}/p/<token>{joins}; organiser page {organiser}"

    serve_web_app(web, host, port, announce,
                  access_log=False, server_header=False, log_level="warning", allowed_hosts=allowed_hosts,
                  forwarded_allow_ips=forwarded_allow_ips)


@app.command()
def export(
    study_file: StudyFile,
    out: Annotated[Path, typer.Option(help="Output file: .csv or .jsonl.")],
    db: StudyDb = Path("study.sqlite"),
) -> None:
    """Write every answered turn (participants by number, never by link) as CSV or JSONL."""
    from commet.apps.study.export import response_records, to_csv, to_jsonl

    if out.suffix.lower() not in (".csv", ".jsonl"):
        fail(f"--out {out}: write the answers to a .csv or a .jsonl file")
    study, dataset, store = _open(study_file, db)
    records = response_records(study, {st.id: st for st in dataset}, store)
    store.close()
    out.write_text(to_csv(records) if out.suffix.lower() == ".csv" else to_jsonl(records), encoding="utf-8")
    echo(f"wrote {len(records)} answers to {out}")


@app.command("export-run")
def export_run(
    study_file: StudyFile,
    study_db: Annotated[Path, typer.Option("--study-db", help="The study's participant database (SQLite).")] = Path(
        "study.sqlite"),
    db: Annotated[Path | None, typer.Option(
        "--db", help="SQLite results file to write the run into (as in eval and report).  [default: commet.sqlite]")
    ] = None,
    store_alias: Annotated[Path | None, typer.Option("--store", hidden=True)] = None,
    run: Annotated[str, typer.Option(
        help="Run name. By default (--policy each) it names two runs, NAME:images=on and NAME:images=needed (the "
             "paper's Human Yes and No rows); with --policy all, needed or both, the one run NAME.")] = "human",
    policy: Annotated[PolicyChoice, typer.Option(
        help="each: one run per picture policy (the paper's Human Yes/No rows); all (pictures everywhere), "
             "needed (only where needed) or both (the two pooled into one run).")
    ] = PolicyChoice.each,
) -> None:
    """Write the answers as runs with model 'human' so that `commet report` shows people beside models."""
    from commet.apps.study.build import dataset_location
    from commet.apps.study.export import HumanRunConflictError, check_human_run, export_human_run, human_runs
    from commet.store import Store

    if db is not None and store_alias is not None:
        fail("give the results file once, with --db (--store is its old name); the participant database is "
             "--study-db")
    check_run_name("--run", run)
    store_path = db or store_alias or Path("commet.sqlite")
    study, dataset, participants = _open(study_file, study_db)
    planned = human_runs(run, policy.value)
    with Store(store_path) as store:
        try:
            for name, chosen in planned:
                check_human_run(study, store, name, chosen)
        except HumanRunConflictError as exc:
            fail(str(exc))
        for name, chosen in planned:
            summary = export_human_run(study, dataset, participants, store, name=name, policy=chosen,
                                       dataset_path=dataset_location(study, study_file))
            echo(f"run {name!r} (model human, pictures: {chosen}): {summary.stories} StoryTurns from "
                       f"{summary.participants} participants in {store_path}; {summary.incomplete} unfinished "
                       "StoryTurns left out")
    participants.close()
