import pytest

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.study.folder import StudyError, content_hash, load_study, write_checksums

MANIFEST = projects.demo_manifest("raw/one.json")


def make(tmp_path, manifest=MANIFEST, files=("raw/one.json",)):
    for f in files:
        p = tmp_path / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('{"x": 1}\n')
    (tmp_path / "study.yml").write_text(manifest)
    write_checksums(tmp_path)
    return tmp_path


def test_valid_study_loads(tmp_path):
    s = load_study(make(tmp_path))
    assert s.id == "demo" and s.files[0].context == {"name": "one"} and s.configs["a"]["platform"] == "X"


def test_every_problem_is_reported_at_once(tmp_path):
    bad = MANIFEST.replace("label: demo data v1\n", "colour: blue\n") + (
        "  - {path: ../etc/passwd, config: a}\n"
        "  - {path: raw/missing.json, config: zz, name: one, speed: 3}\n"
    )
    root = make(tmp_path, bad, files=("raw/one.json", "raw/stray.json"))
    with pytest.raises(StudyError) as err:
        load_study(root)
    text = "\n".join(err.value.problems)
    assert "missing key 'label'" in text
    assert "unknown key 'colour'" in text
    assert "'../etc/passwd' escapes the data folder" in text
    assert "listed file 'raw/missing.json' does not exist" in text
    assert "config 'zz' is not defined" in text
    assert "unknown key 'speed'" in text
    assert "run name 'one' is used twice" in text
    assert "raw/stray.json: present in the data folder but not listed" in text
    assert len(err.value.problems) >= 8


def test_changed_raw_file_stops_with_what_changed(tmp_path):
    root = make(tmp_path)
    (root / "raw/one.json").write_text('{"x": 2}\n')
    with pytest.raises(StudyError, match="one.json: content changed since its checksum"):
        load_study(root)
    write_checksums(root)  # the deliberate way to accept it
    load_study(root)


def test_missing_checksums_file_says_how_to_make_one(tmp_path):
    root = make(tmp_path)
    (root / "SHA256SUMS").unlink()
    with pytest.raises(StudyError, match="--update-checksums"):
        load_study(root)


def test_broken_yaml_names_the_line(tmp_path):
    root = make(tmp_path, MANIFEST + "files: [\n")
    with pytest.raises(StudyError, match=r"study.yml:\d+: not valid YAML"):
        load_study(root)


def test_content_hash_changes_with_any_file(tmp_path):
    root = make(tmp_path)
    before = content_hash(root)
    assert content_hash(root) == before
    (root / "raw/one.json").write_text('{"x": 3}\n')
    assert content_hash(root) != before


def test_two_configurations_with_one_label_are_refused(tmp_path):
    """Pages and tables name configurations by their label; two alike would merge their rows."""
    manifest = MANIFEST.replace("  a: {platform: X}\n",
                                "  a: {platform: X, label: Same}\n  b: {label: Same}\n  c: {}\n")
    with pytest.raises(StudyError) as err:
        load_study(make(tmp_path, manifest))
    assert err.value.problems == [f"{tmp_path / 'study.yml'}: configs.b: label 'Same' is also configs.a's; "
                                  "give each configuration its own label (pages and tables name them by it)"]
