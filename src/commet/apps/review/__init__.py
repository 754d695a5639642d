"""Expert review of StoryTurns: ``create_app`` (web), ``ReviewDB`` (SQLite store, export)."""

from commet.apps.review.app import create_app
from commet.apps.review.db import ReviewDB, ReviewError

__all__ = ["ReviewDB", "ReviewError", "create_app"]
