"""Failures said at once, and a run stopped early when its calls keep failing in a way no retry fixes.

The engine tells :class:`FailureWatch` of every call that failed for good and every call that
worked; the retry policy (:data:`commet.models.retry.RETRY_OBSERVER`) tells it of every attempt
that failed and will be tried again. The first failure of each kind is passed on at once (the
command prints it above its progress bar), so a closed port or a bad key is seen within a second,
not after the last retry of the last story.

A kind of failure that a rerun cannot fix by itself (the key refused, no such model or endpoint, a
server that cannot be reached even after retries, an untrusted certificate) stops the run once it
repeats with no call of the same source working in between: :data:`STOP_AFTER` times, or once for
an unreachable server before any call ever worked (every attempt of that call already failed).
The run stays resumable: nothing done is lost, and the same command continues it once the cause
is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from commet.models.retry import RetryNotice


class CallSource(str, Enum):
    """Whose call failed: the model under evaluation or the judge."""

    model = "model"
    judge = "judge"


#: failure kinds (labels as stored, judge kinds without their ``judge_`` prefix) that no rerun fixes by itself
STOPPING_KINDS = frozenset({"auth", "http_404", "tls", "connection"})
#: calls of one source failing the same stopping way in a row, none working in between, that stop the run
STOP_AFTER = 3


@dataclass(frozen=True)
class FailureNotice:
    """One failure as the command shows it: whose, which kind, the message, where, and whether it is retried."""

    source: CallSource
    spec: str
    kind: str
    message: str
    story_id: str | None = None
    turn: int | None = None
    #: "attempt 1 of 6" when the call is being tried again; None when it failed for good
    retrying: str | None = None

    def line(self) -> str:
        """The notice as one line (the message as the provider gave it, keys already redacted)."""
        where = f" at story {self.story_id} turn {self.turn}" if self.story_id is not None else ""
        what = f"{self.source.value} {self.spec}"
        if self.retrying is not None:
            return f"retrying {what} ({self.kind}, {self.retrying}): {self.message}"
        return f"failed for good: {what} ({self.kind}){where}: {self.message}"


def advice(kind: str, source: CallSource) -> str:
    """What to do about a kind of failure that stopped a run (or ended it incomplete)."""
    who = "the judge's" if source is CallSource.judge else "the model's"
    return {
        "auth": f"the server refused {who} API key (HTTP 401/403): set the right key (the provider's usual "
                "environment variable, or api_key_env=NAME in the spec) or give it the permissions it lacks; "
                "running again with the same key cannot help",
        "http_404": f"the server has no such model or endpoint (HTTP 404): check {who} name and its base_url "
                    "(an OpenAI-compatible server's usually ends in /v1)",
        "connection": f"{who} server cannot be reached: check that it is running and that base_url (host and "
                      "port) is right",
        "tls": f"{who} server's TLS certificate is not trusted: for a private CA set SSL_CERT_FILE",
    }.get(kind, "run the same command again to retry the calls that failed")


@dataclass
class _Streak:
    kind: str = ""
    count: int = 0


@dataclass
class FailureWatch:
    """Sees every call's end; says the first failure of each kind, and stops the run where failures repeat.

    ``notify`` gets each first notice (per source, spec and kind, retried attempts apart from final
    failures); ``stop`` is called once, when a stopping kind repeats (see the module's docstring).
    """

    #: the spec of the model under evaluation (retried calls of any other spec are the judge's)
    model_spec: str = ""
    notify: Callable[[FailureNotice], None] | None = None
    stop: Callable[[], None] | None = None
    #: the failure that stopped the run (None: it was not stopped)
    stopped_by: FailureNotice | None = None
    _said: set[tuple[CallSource, str, str, bool]] = field(default_factory=set)
    _streaks: dict[CallSource, _Streak] = field(default_factory=dict)
    _worked: set[CallSource] = field(default_factory=set)

    def retrying(self, notice: RetryNotice) -> None:
        """A call's attempt failed and will be tried again (from the retry policy)."""
        source = CallSource.model if notice.what == self.model_spec else CallSource.judge
        self._say(FailureNotice(source, notice.what, notice.error.kind, str(notice.error),
                                retrying=f"attempt {notice.attempt} of {notice.max_attempts}, next in "
                                         f"{notice.delay:.1f} s"))

    def failed(self, source: CallSource, spec: str, kind: str, message: str, story_id: str, turn: int) -> None:
        """A call failed for good (after its retries)."""
        notice = FailureNotice(source, spec, kind, message, story_id, turn)
        self._say(notice)
        if kind not in STOPPING_KINDS or self.stopped_by is not None:
            self._streaks.pop(source, None)
            return
        streak = self._streaks.setdefault(source, _Streak())
        streak.count = streak.count + 1 if streak.kind == kind else 1
        streak.kind = kind
        unreachable_from_the_start = kind == "connection" and source not in self._worked
        if streak.count >= STOP_AFTER or unreachable_from_the_start:
            self.stopped_by = notice
            if self.stop is not None:
                self.stop()

    def worked(self, source: CallSource) -> None:
        """A call of ``source`` worked: a streak of failures of that source is broken."""
        self._worked.add(source)
        self._streaks.pop(source, None)

    def _say(self, notice: FailureNotice) -> None:
        key = (notice.source, notice.spec, notice.kind, notice.retrying is not None)
        if key in self._said:
            return
        self._said.add(key)
        if self.notify is not None:
            self.notify(notice)
