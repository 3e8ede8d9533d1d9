"""A class graded in shares (``grade --shard K/N``) and joined (``merge``): equal to one run, row for row.

The class is a Canvas export (so that the merge writes an import file too) of
honest, partial and empty work; one ``grade`` of the whole class is the
yardstick for three shares merged. Every way shares cannot be joined is
refused in one line, exit 2, with nothing written.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import exports
from grader.commands import merge
from grader.reports import gradebook, integrity, shards
from helpers import ENV

OPTIONS = [f"--exercise={name}" for name in exports.EXERCISES]


def softlookup(*args):
    return subprocess.run([sys.executable, "-m", "grader.cli", *map(str, args)], capture_output=True, text=True,
                          env=ENV, timeout=600)


def grade(submissions, out, *extra):
    done = softlookup("grade", submissions, "--out", out, "--allow-unconfined", *OPTIONS, *extra)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_every_student_is_in_one_share_whatever_the_order():
    ids = [f"student-{number}" for number in range(2000)]
    for count in (1, 3, 20):
        found = [shards.share_of(student, count) for student in ids]
        assert found == [shards.share_of(student, count) for student in reversed(ids)][::-1]
        assert set(found) == set(range(1, count + 1))  # 2,000 ids reach every share
    assert shards.share_of("alice", 20) == 1 + int.from_bytes(__import__("hashlib").sha256(b"alice").digest()[:8],
                                                              "big") % 20  # the digest of the id, not Python's hash


@pytest.mark.parametrize("text", ["0/3", "4/3", "x", "1/0", "2", "-1/3", "1/3/4", ""])
def test_a_bad_share_is_one_line(tmp_path, text):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    done = softlookup("grade", tmp_path / "class", "--out", tmp_path / "out", "--shard", text, *OPTIONS)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--shard" in done.stderr and not (tmp_path / "out").exists()  # -1/3: argparse takes it for an option


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One run of the whole class, three shares run apart, and their merge."""
    root = tmp_path_factory.mktemp("shards")
    submissions = root / "canvas"
    exports.canvas(submissions)
    whole = root / "whole"
    grade(submissions, whole)
    parts = [root / f"part-{number}" for number in (1, 2, 3)]
    for number, part in enumerate(parts, 1):
        grade(submissions, part, "--shard", f"{number}/3")
    merged = root / "merged"
    done = softlookup("merge", *parts, "--out", merged)
    assert done.returncode == 0, done.stderr
    compared = root / "compared"  # given the class, the merge compares everyone's code as the whole run does
    done = softlookup("merge", *parts, "--out", compared, "--class", submissions)
    assert done.returncode == 0, done.stderr
    return submissions, whole, parts, merged, compared



def untimed(results: Path) -> dict:
    """Gradescope's results.json without the seconds it took, which differ between any two runs."""
    plain = json.loads(results.read_text())
    plain.pop("execution_time", None)
    return plain


@pytest.mark.slow
def test_the_merged_class_equals_one_run(graded):
    _, whole, parts, merged, compared = graded
    shares = [shards.Shard.read(part) for part in parts]
    everyone = shards.Shard.read(whole).everyone
    assert sorted(s for shard in shares for s in shard.share) == sorted(everyone) and len(everyone) >= 4
    assert all(shard.share for shard in shares)  # this class reaches each of the three shares
    for name in ("grades.csv", "canvas-gradebook.csv"):
        assert (merged / name).read_text() == (whole / name).read_text(), name
    for student in everyone:
        mine, theirs = (gradebook.student_folder(out, student) for out in (merged, whole))
        assert (mine / "feedback.md").read_text() == (theirs / "feedback.md").read_text(), student
        assert untimed(mine / "results.json") == untimed(theirs / "results.json"), student
    summary = (merged / "summary.md").read_text()
    # Not given the class, the merge reads no student's work and compares none: the whole run's pairs are its own.
    graded_lines = (whole / "summary.md").read_text().split(f"## {integrity.SIMILAR}")[0].splitlines()
    assert all(line in summary for line in graded_lines if "second" not in line and " s " not in line)
    assert merge.NOT_COMPARED in summary
    # Given it (--class), the merge's summary is the whole run's, pairs across shares included (issue 46).
    whole_lines, compared_lines = ([line for line in (out / "summary.md").read_text().splitlines()
                                    if "second" not in line and " s " not in line] for out in (whole, compared))
    assert compared_lines == whole_lines
    pairs = (whole / "summary.md").read_text().split(f"## {integrity.SIMILAR}")[1]
    assert any(shards.share_of(first, 3) != shards.share_of(second, 3)
               for first, second in re.findall(r"^- \*\*\w+\.py\*\*: (\S+) and (\S+), score", pairs, flags=re.M)), pairs
    for name in ("grades.csv", "canvas-gradebook.csv"):
        assert (compared / name).read_text() == (whole / name).read_text(), name


@pytest.mark.slow
def test_shares_that_cannot_be_joined_are_refused(graded, tmp_path):
    submissions, whole, parts, merged, _ = graded
    refused = {
        "a share missing": [parts[0], parts[1]],
        "a whole run beside shares": [whole, parts[0]],
        "the output is a share": None,
    }
    for why, given in refused.items():
        out = tmp_path / why.replace(" ", "-")
        done = softlookup("merge", *(given or parts), "--out", parts[0] if given is None else out)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (why, done.stderr)
        assert not out.exists(), why
    assert "no folder holds share 3/3" in softlookup("merge", parts[0], parts[1], "--out", tmp_path / "x").stderr
    # a share whose grading was stopped before one of its students: named, and how to finish it
    unfinished = tmp_path / "unfinished"
    __import__("shutil").copytree(parts[1], unfinished)
    student = shards.Shard.read(unfinished).share[0]
    (gradebook.student_folder(unfinished, student) / gradebook.RESULT_FILE).unlink()
    done = softlookup("merge", parts[0], unfinished, parts[2], "--out", tmp_path / "y")
    assert done.returncode == 2 and student in done.stderr and "run its grade again" in done.stderr
    # another share into a share's folder
    done = softlookup("grade", submissions, "--out", parts[0], "--shard", "2/3", "--allow-unconfined", *OPTIONS)
    assert done.returncode == 2 and "holds share 1/3" in done.stderr
    # graded with other exercises
    other = tmp_path / "other"
    done = softlookup("grade", submissions, "--out", other, "--shard", "3/3", "--allow-unconfined",
                      "--exercise=lookup")
    assert (other / shards.MARKER).is_file(), done.stderr  # graded (nobody handed in lookup.py: exit 1)
    done = softlookup("merge", parts[0], parts[1], other, "--out", tmp_path / "z")
    assert done.returncode == 2 and "differ in their exercises" in done.stderr
    # --class naming another class than the shares graded
    other_class = tmp_path / "other-class"
    (other_class / "someone").mkdir(parents=True)
    done = softlookup("merge", *parts, "--out", tmp_path / "w", "--class", other_class)
    assert done.returncode == 2 and "not the class the shares graded" in done.stderr and not (tmp_path / "w").exists()
    # the merge may be run again into its own output: the same files
    before = (merged / "grades.csv").read_text()
    assert softlookup("merge", *parts, "--out", merged).returncode == 0
    assert (merged / "grades.csv").read_text() == before


# -- the three engines' files in docs/instructors.md ------------------------------------------------

INSTRUCTORS = Path(__file__).resolve().parents[2] / "docs" / "instructors.md"


def engine_file(name: str) -> str:
    """The code block that follows ``<!-- engine: NAME -->`` in the instructors' guide."""
    text = INSTRUCTORS.read_text()
    after = text.split(f"<!-- engine: {name} -->\n", 1)[1]
    return after.split("```", 2)[1].split("\n", 1)[1]


@pytest.fixture(scope="module")
def share_one(tmp_path_factory):
    """A class of two honest students whose ids put them both in share 1 of 10 and of 20, with every exercise."""
    from helpers import SOLUTIONS

    root = tmp_path_factory.mktemp("engines")
    ids = [f"student-{n}" for n in range(1000) if shards.share_of(f"student-{n}", 20) == 1][:2]
    for student in ids:
        __import__("shutil").copytree(SOLUTIONS, root / "submissions" / student, ignore=lambda *_: ["__pycache__"])
    return root, ids


def graded_share(out: Path, ids: list[str]):
    import csv

    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [row["student"] for row in rows] == sorted(ids) or {row["student"] for row in rows} == set(ids)
    assert all(row["status"] == "ok" and float(row["score"]) == float(row["max_score"]) for row in rows), rows
    assert shards.Shard.read(out).name.startswith("1/")


def run_here(command: list[str], cwd: Path, **env):
    bin_folder = str(Path(sys.executable).parent)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900,
                          env={**ENV, "PATH": f"{bin_folder}:{ENV.get('PATH', '')}", **env})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_the_github_actions_matrix_grades_its_share(share_one):
    import yaml

    workflow = yaml.safe_load(engine_file("github-actions"))
    share, merge = workflow["jobs"]["share"], workflow["jobs"]["merge"]
    grading = next(step["run"] for step in share["steps"] if "softlookup grade" in step.get("run", ""))
    count = int(grading.split("--shard ${{ matrix.shard }}/")[1].split()[0])
    assert share["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert merge["needs"] == "share" and any("softlookup merge share-*/" in step.get("run", "") for step in merge["steps"])
    root, ids = share_one
    run_here(["bash", "-c", grading.replace("${{ matrix.shard }}", "1")], root)
    graded_share(root / "share-1", ids)


@pytest.mark.slow
def test_the_slurm_array_grades_its_share(share_one, tmp_path):
    script = tmp_path / "grade.sbatch"
    script.write_text(engine_file("slurm"))
    assert subprocess.run(["bash", "-n", script]).returncode == 0
    array = next(line for line in script.read_text().splitlines() if line.startswith("#SBATCH --array="))
    assert array == "#SBATCH --array=1-20" and '--shard "$SLURM_ARRAY_TASK_ID/20"' in script.read_text()
    kit = tmp_path / "kit" / ".venv" / "bin"
    kit.mkdir(parents=True)
    (kit / "softlookup").symlink_to(Path(sys.executable).parent / "softlookup")
    root, ids = share_one
    run_here(["bash", script], tmp_path, SLURM_ARRAY_TASK_ID="1", KIT=str(tmp_path / "kit"),
             CLASS=str(root / "submissions"), OUT=str(tmp_path / "graded"))
    graded_share(tmp_path / "graded" / "share-1", ids)


@pytest.mark.slow
def test_the_kubernetes_indexed_job_grades_its_share(share_one, tmp_path):
    import yaml

    job = yaml.safe_load(engine_file("kubernetes"))
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    command = container["command"][2]
    assert f"--shard $((JOB_COMPLETION_INDEX + 1))/{spec['completions']}" in command
    # a default non-root pod: nothing privileged, no capability, the runtime's seccomp profile
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    root, ids = share_one
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "submissions").symlink_to(root / "submissions")
    run_here(["sh", "-c", command.replace("/class/", f"{tmp_path}/class/")], tmp_path, JOB_COMPLETION_INDEX="0")
    graded_share(tmp_path / "class" / "graded" / "share-1", ids)
