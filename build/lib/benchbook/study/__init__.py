"""A study's data folder: its manifest and checksums, its contract, the tables read from it,
and what a generator assumed in it (the layer every chapter stands on, above the readers)."""
