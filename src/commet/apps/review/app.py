"""The expert-review web app (paper, section 3.2.2 and Appendix B), server-rendered with FastAPI + Jinja2.

Reviewers sign in, read each StoryTurn turn by turn with its pictures, edit its text (every
edit kept with author and time), check each picture against the five criteria of Table 5
(a failed criterion files an error under the matching Table 6 category, and the reviewer
names the most prominent one), file text errors, mark pictures for regeneration, regenerate
them with the configured image model or upload a replacement, compare versions, and accept
or reject. Review runs in the paper's order (one expert corrects first, two more review
independently, blind to each other's verdicts until they gave theirs); every form carries the
revision it showed, and a write on a stale revision is refused with what changed (409).

Security (shared with the study app, :mod:`commet.apps.web`): server-side sessions revoked at
sign-out and password change, a CSRF token on every form, same-origin POSTs only, sign-in
throttled per (name, client) with a capped backoff, every route but sign-in (and static files)
behind a session, autoescaped templates, files served only through :mod:`commet.apps.files` (the
pictures the dataset references, the app's own static assets) or pictures from the store, uploads decoded under a pixel limit, bounded request sizes, and
per-reviewer rate limits.

``create_app`` assembles the app: the store, the pages shared by every router
(:mod:`~commet.apps.review.pages`), the services holding the review's rules
(:mod:`~commet.apps.review.services`), and one router per concern
(:mod:`~commet.apps.review.routes`: sign-in and account, items, pictures, decisions, statistics,
exports, and the calibration labels when started with a results store).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from commet.apps.guards import guarded_app
from commet.apps.review.db import ReviewDB
from commet.apps.review.pages import NotSignedIn, ReviewApp, ReviewPages, review_templates
from commet.apps.review.routes import auth, decisions, exports, items, pictures, statistics
from commet.apps.review.services import Accounts, Exports, ItemList, ItemView, Pictures, TextEdits
from commet.apps.signin import LoginThrottle, unknown_user_hash
from commet.apps.web import MAX_UPLOAD_PIXELS, Sessions
from commet.format.dataset import Dataset
from commet.generation.llm.images import ImageModel
from commet.sources.loading import load_dataset

__all__ = ["NotSignedIn", "create_app"]


def create_app(dataset: str | Path | Dataset, db: str | Path | ReviewDB, *,
               image_model: ImageModel | None = None, secure_cookies: bool = False,
               max_upload_bytes: int = 8 * 1024 * 1024, max_upload_pixels: int = MAX_UPLOAD_PIXELS,
               login_throttle: LoginThrottle | None = None, results: str | Path | None = None) -> FastAPI:
    """The review app over ``dataset`` (imported into ``db`` on start; existing reviews are kept; sessions live in
    ``db`` too); with ``results`` (a results store), also the pages that label its runs' calibration samples."""
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    store = db if isinstance(db, ReviewDB) else ReviewDB(db)
    store.import_dataset(data)
    unknown_user_hash()  # made now: the first unknown name at sign-in costs no more than a known one
    pages = ReviewPages(store, Sessions(store.path, secure=secure_cookies),
                        review_templates(calibration_pages=results is not None), max_upload_bytes=max_upload_bytes)
    app = guarded_app("CoMMET review", max_body_bytes=max_upload_bytes + 64 * 1024)
    app.state.review = ReviewApp(
        pages, Accounts(store, login_throttle or LoginThrottle()), ItemList(store), ItemView(store, image_model),
        TextEdits(store), Pictures(store, image_model, max_upload_bytes=max_upload_bytes,
                                   max_upload_pixels=max_upload_pixels),
        Exports(store), data, Path(results) if results is not None else None)
    pages.install(app)
    for module in (auth, items, pictures, decisions, statistics, exports):
        app.include_router(module.router)
    if results is not None:
        from commet.apps.review.routes import calibration

        app.include_router(calibration.router)
    return app
