"""The chapters of the book: the chapter interface (spec), the registry that finds chapter
folders, the pipeline every chapter runs, headlines and the key-figures table."""
