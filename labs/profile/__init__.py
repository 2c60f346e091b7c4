"""The profile lab: see README.md here."""
