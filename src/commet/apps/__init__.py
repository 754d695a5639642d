"""Web apps for people: expert review of StoryTurns (review) and anonymous human studies (study)."""
