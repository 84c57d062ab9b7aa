"""What a page shows: tables, figures, notes, glue and downloads, over a chapter's results."""
