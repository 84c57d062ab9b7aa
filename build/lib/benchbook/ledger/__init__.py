"""The write-up against the data: published cells and claims, their expressions, whether a
setup is comparable, the claims ledger, caveats and independent measurements."""
