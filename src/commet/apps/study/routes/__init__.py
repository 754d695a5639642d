"""The study app's routes: the participants' pages and the organiser's (each module's ``router``)."""
