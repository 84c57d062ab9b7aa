"""The reconstructed data folders and the generator key of each (tools.reconstruct.STUDIES)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {
    "h100-dense-vs-moe-mtp": "h100",
    "strix-halo-baseline": "strix",
    "3090-dense-vs-sparse": "dense-sparse",
    "power-sweep": "power-sweep",
    "gb10-mtp": "gb10",
}
