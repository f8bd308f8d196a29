"""One file per schema version, oldest first; never edit one that has shipped."""
