"""Positive controls: every attack of the corpus does harm where the protection it aims at is absent.

tests/adversarial/test_attacks.py holds each attack, graded confined, to 0
points and to the refusal it declares; here the same code runs where nothing
confines it (tests/attack_controls.py), in a disposable copy of the kit, and
must show the effect it declares. An attack that breaks silently (a typo, a
moved path, an API that changed) fails here instead of earning 0 for the
wrong reason there.
"""

import re

import pytest

from attack_controls import EFFECTS, TORCH_EFFECTS, forged, namespace_prefix, unconfined
from attacks import ATTACKS, Attack
from environments import ENVIRONMENTS
from grader.engine import registry

# The hoarders write a gigabyte each, to memory and to a scratch disk: the slow tier's.
PLAIN = [pytest.param(attack, id=attack.name, marks=[pytest.mark.slow] if "HOARD_GOAL" in attack.code else [])
         for attack in ATTACKS if attack.effect not in TORCH_EFFECTS]
GPT2 = [attack for attack in ATTACKS if attack.effect in TORCH_EFFECTS]


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_every_attack_declares_its_refusal_and_its_effect(attack):
    assert attack.effect in EFFECTS, f"{attack.name}: no effect its positive control can show"
    assert attack.refused and re.compile(attack.refusal(registry.KIT_ROOT)), f"{attack.name}: no refusal declared"
    assert set(attack.refused_elsewhere) <= {environment.name for environment in ENVIRONMENTS if environment.grades}
    for environment in attack.refused_elsewhere:
        re.compile(attack.refusal(registry.KIT_ROOT, environment))


@pytest.mark.parametrize("attack", PLAIN)
def test_the_attack_does_harm_where_nothing_stops_it(attack, tmp_path):
    if attack.harmful and namespace_prefix() is None:
        pytest.skip("a harmful attack runs unconfined only in a PID and mount namespace, which this machine refuses")
    control = unconfined(attack, tmp_path, registry.KIT_ROOT)
    assert control.effect_seen, f"{attack.name}: {EFFECTS[attack.effect].words} did not happen:\n{control.evidence}"


@pytest.mark.slow  # the tiny GPT-2 built in a process of its own, for each
@pytest.mark.parametrize("attack", GPT2, ids=[attack.name for attack in GPT2])
def test_the_gpt2_attack_does_harm_where_nothing_stops_it(attack, tmp_path):
    control = forged(attack, tmp_path, registry.KIT_ROOT)
    assert control.effect_seen, f"{attack.name}: {EFFECTS[attack.effect].words} did not happen:\n{control.evidence}"


def test_an_attack_with_a_typo_fails_its_positive_control(tmp_path):
    """The control can fail: the reference by its path, aimed one letter off, reads nothing and answers nothing."""
    attack = next(attack for attack in ATTACKS if attack.name == "reference by its path")
    broken = Attack(**{**vars(attack), "code": attack.code.replace("TARGETS[0]", "TARGETS[0] + 'x'")})
    assert not unconfined(broken, tmp_path, registry.KIT_ROOT).effect_seen


def test_the_kernel_keeps_a_timers_signal_to_the_callers_own_process(tmp_path):
    """Why the filter has no row for timer_create or mq_notify: even unconfined, neither reaches another process
    (the attack's effect is the queue it made, memory outside its address space, which the filter refuses)."""
    attack = next(attack for attack in ATTACKS if attack.name == "a timer and a message queue that signal the judge")
    control = unconfined(attack, tmp_path, registry.KIT_ROOT)
    assert control.evidence["judge status"] == 0 and control.evidence["neighbour alive"], control.evidence
