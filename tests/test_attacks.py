"""The attack corpus (tests/attacks.py): every attack earns nothing and leaves everything as it found it."""

import pytest

from attacks import ATTACKS, BOUND, SECRET, kit_copy, run_attack
from conftest import SOLUTIONS
from grader.engine import registry


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return kit_copy(tmp_path_factory.mktemp("attacked"), registry.KIT_ROOT)


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_every_attack_aims_at_what_the_kit_has(attack):
    """An attack on a file that moved would pass while testing nothing: its targets must exist."""
    assert not attack.missing_targets(registry.KIT_ROOT)


def test_an_attack_on_a_moved_file_fails(kit, tmp_path):
    from attacks import Attack

    stale = Attack("stale", "change", "", targets=("grader/registry.py",))
    with pytest.raises(AssertionError, match="no longer has"):
        run_attack(stale, kit, tmp_path)


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_attack_achieves_nothing(attack, kit, tmp_path):
    outcome = run_attack(attack, kit, tmp_path)
    assert outcome.exit_code == 1, f"the judge did not finish normally within {BOUND} s:\n{outcome.output[-3000:]}"
    assert outcome.score == 0, f"{attack.name} earned {outcome.score} points:\n{outcome.output[-3000:]}"
    assert outcome.results_intact, "the results file changed after the judge wrote it"
    assert outcome.kit_intact, "the attack changed the kit"
    assert outcome.site_packages_intact, "the attack wrote into site-packages"
    assert outcome.neighbour_alive, "the attack killed an unrelated process"
    assert not outcome.leftovers, f"left behind: {outcome.leftovers}"
    assert outcome.connections == 0, "the attack reached a socket on 127.0.0.1"
    assert not outcome.leaked and SECRET not in outcome.output
    assert "\x1b" not in outcome.output, "control characters reached the terminal"


def test_an_honest_submission_after_the_attacks_keeps_full_marks(kit, tmp_path):
    """The kit copy that every attack above aimed at still grades the reference at full marks."""
    from attacks import Attack

    softmax = (SOLUTIONS / "softmax.py").read_text()
    lookup = (SOLUTIONS / "lookup.py").read_text().replace("from softmax import softmax\n", softmax)
    honest = Attack("honest", "none", lookup)
    outcome = run_attack(honest, kit, tmp_path)
    assert outcome.exit_code == 0 and outcome.score == registry.exercise("lookup").max_points, outcome.output[-3000:]
