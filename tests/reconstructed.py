"""What the tests of the reconstructed data folders share: a generator run twice, and the
check that the two runs agree and write the committed bookkeeping files."""

from __future__ import annotations

from pathlib import Path

from files import tree_bytes
from locked import drift

# The files every generator writes beside raw/ (tools/reconstruct/docs.py).
GENERATED = ("study.yml", "PROVENANCE.md", "SHA256SUMS", "assumptions.yml")


def generate_twice(tmp_path_factory, module, published: Path, stem: str) -> tuple[Path, Path]:
    """The study generated twice, with the module's seed, into fresh folders `<stem>0` and `<stem>1`."""
    dirs = []
    for k in range(2):
        d = tmp_path_factory.mktemp(f"{stem}{k}")
        module.generate(d, published, seed=module.SEED)
        dirs.append(d)
    return tuple(dirs)


def assert_deterministic(built: tuple[Path, Path], committed: Path) -> None:
    """Both runs wrote the same bytes, and their bookkeeping files are the committed ones."""
    first, second = built
    assert tree_bytes(first) == tree_bytes(second)
    for name in GENERATED:
        assert (first / name).read_bytes() == (committed / name).read_bytes(), (
            f"{committed / name} differs from what the generator writes; " + (
                f"this environment is not the locked one ({'; '.join(drift())}): `make test` installs it"
                if drift() else "the generator changed: regenerate the folder (make data)"))
