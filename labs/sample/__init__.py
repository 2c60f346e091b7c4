"""The sample lab: see README.md here."""
