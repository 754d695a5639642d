"""The review app's routes, one router per concern (each module's ``router``), included by ``create_app``."""
