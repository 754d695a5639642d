"""Dataset generators: ways to produce new StoryTurns (procedural, from a world model)."""
